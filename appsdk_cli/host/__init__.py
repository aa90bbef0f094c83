"""The local ChatGPT-like host that `appsdk preview TOOL` and the workbench both run on.

    from appsdk_cli.host import HostServer
    with HostServer(options=PreviewOptions()) as host:   # the workbench adds its runs and routes
        print(host.url, host.widget_origin)

Two loopback origins, like ChatGPT's chat and its widget sandbox: the host page and its API on one, the
widget document (under the resource's CSP) on the other. server.py holds the servers and the runs;
session.py what a run shows and how a widget's requests reach the real server; csp.py, profiles.py
and files.py the widget's CSP, the hosts it can play and window.openai's file store; devwidget.py the
widget from `appsdk dev`'s Vite. The page's files come from static.STATIC.
"""

from __future__ import annotations

from appsdk_cli.host.run import LogEntry, Run, UnknownRun
from appsdk_cli.host.server import HostServer

__all__ = ["HostServer", "LogEntry", "Run", "UnknownRun"]
