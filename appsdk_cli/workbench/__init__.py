"""The workbench: an interactive host in the browser for any MCP Apps server, drivable without the CLI.

    from appsdk_cli.connection import Target
    from appsdk_cli.workbench import Workbench
    with Workbench(Target(url="http://127.0.0.1:8000/mcp")) as bench:
        print(bench.url)          # the page: tools, a form per tool, runs, widgets, panels
        bench.reloaded(("widgets/book-list.html",), None)   # what `appsdk dev` does after each reload

server.py makes the runs (one tool call each, kept as the host's runs) and registers the page, its JSON
API and the push channel on the host's route table (host/), so every widget is rendered by the host's
own page (`/host?run=ID`), never a copy of it. events.py is the push channel (Server-Sent Events).
static/ is the page: plain ES modules, no build step.
"""

from __future__ import annotations

from appsdk_cli.workbench.server import Workbench

__all__ = ["Workbench"]
