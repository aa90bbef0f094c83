"""`appsdk preview`'s capability: one tool call shown in the local host (host/), drivable without the CLI.

    from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare
    session = prepare(target, "list-books", ["month=June"])
    with PreviewServer(session, PreviewOptions(theme="dark")) as server:
        print(server.url)

prepare.py calls the tool and fetches what the host shows (its result, its widget template, the tools a
widget may call); server.py puts that one run on the host; shot.py (`--screenshot`) does both while
Chromium starts, and shoots the widget with browser/'s shoot(). The host itself (both origins, its
routes, CSP, files, profiles, the widget document) is host/'s.
static/ holds the host page and the bootstrap injected into the widget (package data, read by host/).
"""

from __future__ import annotations

from appsdk_cli.host.run import LogEntry
from appsdk_cli.host.session import PreviewOptions, PreviewSession
from appsdk_cli.preview.prepare import prepare
from appsdk_cli.preview.server import PreviewServer

__all__ = ["LogEntry", "PreviewOptions", "PreviewServer", "PreviewSession", "prepare"]
