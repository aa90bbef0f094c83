"""`appsdk preview`'s capability: a local ChatGPT-like host for one tool call, drivable without the CLI.

    from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare
    session = prepare(target, "list-books", ["month=June"])
    with PreviewServer(session, PreviewOptions(theme="dark")) as server:
        print(server.url)

session.py fetches what the host shows (the tool's result, its widget template, the tools a widget
may call); csp.py turns the resource's declared domains into the widget's Content-Security-Policy;
server.py serves the host page and the widget on two loopback origins; screenshot.py renders it
headless. static/ holds the host page and the bootstrap injected into the widget: package data.
"""

from __future__ import annotations

from appsdk_cli.preview.server import LogEntry, PreviewServer
from appsdk_cli.preview.session import PreviewOptions, PreviewSession, prepare

__all__ = ["LogEntry", "PreviewOptions", "PreviewServer", "PreviewSession", "prepare"]
