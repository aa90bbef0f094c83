"""The local ChatGPT-like host that `appsdk preview TOOL` and the workbench both run on.

    from appsdk_cli.host import HostServer
    with HostServer(options=PreviewOptions()) as host:   # the workbench adds its runs and routes
        print(host.url, host.origins.view_origin)

Like ChatGPT's chat and its widget sandbox: the host page and its API on one origin, and on a site of the
server's own the spec's sandbox proxy, the widget (under the resource's CSP) and its files (origins.py).

    handler.py   the route table (method + path pattern → function) and the one base handler every
                 request of both origins goes through: Host and Origin checks, JSON bodies, JSON errors
    origins.py   the origin model: what each page is served from, and what may reach what
    server.py    HostServer: the two sockets and each origin's route table, over state.py's HostState
    state.py     what the host holds: the runs (run.py: what a run is, once), log, widget state, files
    api.py       the host origin's routes: the host page, /api/*, the static files
    widget.py    the widget document (bootstrap injected), served on the view origin under its CSP
    sandbox.py   the sandbox proxy's page and the files origin's downloads
    place.py     a line of the widget's document as its template's line (ui://…:12), for its errors
    session.py   what a run shows, and how a widget's requests reach the real server
    csp.py, profiles.py, files.py, devwidget.py   the widget's CSP, the hosts it can play,
                 window.openai's file store, the widget from `appsdk dev`'s Vite
    static.py    where the page's files are (STATIC), served by path and never outside it

A server built on the host (the workbench) passes its own routes to HostServer; they go before the
host's own on the host origin and are under the same base handler, so a rule written there holds for
every route.
"""

from __future__ import annotations

from appsdk_cli.host.run import LogEntry, Run, UnknownRun
from appsdk_cli.host.server import HostServer

__all__ = ["HostServer", "LogEntry", "Run", "UnknownRun"]
