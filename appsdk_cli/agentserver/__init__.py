"""`appsdk mcp`'s capability: appsdk itself as an MCP server for a coding agent working in an app's folder.

Drivable without the CLI:

    from appsdk_cli.agentserver import build_server, serve_stdio
    server = build_server(Path("book-club"))     # the SDK's low-level Server, tools and all
    serve_stdio(Path("book-club"))               # what `appsdk mcp` runs

tools.py holds each tool (schemas, honest annotations, the capability it runs; no MCP SDK), confine.py the
rule that keeps every path argument inside the project, untrusted.py the fence around a server's text,
server.py the MCP wiring on stdio or loopback HTTP, front.py the stdio handshake answered before the SDK
has loaded.
Importing this package loads no MCP SDK: server.py does, when a server is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def build_server(root: Path, *, timeout: float = 30.0) -> Any:
    from appsdk_cli.agentserver.server import build_server as build

    return build(root, timeout=timeout)


def serve_stdio(root: Path, *, timeout: float = 30.0) -> None:
    from appsdk_cli.agentserver.front import serve

    serve(root, timeout=timeout)


def serve_http(root: Path, *, host: str, port: int, token: str, timeout: float = 30.0) -> None:
    from appsdk_cli.agentserver.server import serve_http as serve

    serve(root, host=host, port=port, token=token, timeout=timeout)


__all__ = ["build_server", "serve_http", "serve_stdio"]
