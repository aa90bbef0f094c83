"""`appsdk mcp`: appsdk itself as an MCP server for a coding agent (stdio, or loopback HTTP with --port)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def mcp(
    path: Annotated[
        Path,
        typer.Argument(
            help="The project the agent works in; every path a tool is given must stay inside it.",
            show_default="current folder",
            metavar="PATH",
        ),
    ] = Path("."),
    port: Annotated[
        int | None,
        typer.Option(
            "--port", "-p", min=1, max=65535, help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio."
        ),
    ] = None,
    host: Annotated[
        str, typer.Option("--host", help="With --port: the loopback address to listen on (never another).")
    ] = "127.0.0.1",
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds each step of a tool may take.", min=0.1, max=86400.0)
    ] = 30.0,
    print_config: Annotated[
        str | None,
        typer.Option(
            "--print-config",
            help="Print the lines that register this server with codex or claude (Claude Code), and exit; with "
            "--port, the HTTP server's, its bearer token included.",
            metavar="codex|claude",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve appsdk's own tools over MCP to a coding agent working in PATH: scaffold_app, dev_status,
    list_tools, call_tool, check, screenshot (the widget as an image), contract_snapshot and
    contract_compare, which talk to the running `appsdk dev` only; and check_code,
    contract_snapshot_code and contract_compare_code, which import and run the project's server.py (and
    are annotated so). A server's text reaches the agent fenced as untrusted data. Stdio by default (the
    agent starts it); --port serves streamable HTTP on loopback,
    to requests that carry the bearer token kept in APPSDK_HOME/mcp-http-token (0600; made on first use).

    Register it with `appsdk mcp --print-config codex` (or claude); `appsdk skill install` teaches the
    agent the loop.

    Exit codes: 0 the client closed the session; 1 the server could not start; 2 the command line is wrong.
    """
    from appsdk_cli.errors import UsageError

    if print_config is not None:
        from appsdk_cli.agentsetup import Agent, registration
        from appsdk_cli.render.agent import config_lines

        if print_config not in tuple(Agent):
            raise UsageError(f"--print-config {print_config!r}: choose codex or claude")
        if port is None:
            config_lines(registration(Agent(print_config)))
            return
        from appsdk_cli.agentsetup import http_registration
        from appsdk_cli.netloc import is_loopback_host

        if not is_loopback_host(host):
            raise UsageError(f"--host {host!r} is not a loopback address: appsdk mcp serves this machine only")
        config_lines(http_registration(Agent(print_config), _url(host, port), _token()))
        return
    from appsdk_cli.netloc import is_loopback_host

    if port is None and host != "127.0.0.1":
        raise UsageError("--host goes with --port (stdio listens on nothing)")
    if not is_loopback_host(host):
        raise UsageError(f"--host {host!r} is not a loopback address: appsdk mcp serves this machine only")
    root = path.expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"{path} is not a folder; give the project folder the agent works in")
    if port is None:
        from appsdk_cli.agentserver import serve_stdio

        serve_stdio(root, timeout=timeout)
        return
    from appsdk_cli.agentserver import serve_http
    from appsdk_cli.render.agent import serving

    token = _token()
    serving(_url(host, port), root, print_config=f"appsdk mcp --print-config codex --port {port}")
    serve_http(root, host=host, port=port, token=token, timeout=timeout)


def _url(host: str, port: int) -> str:
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/mcp"


def _token() -> str:
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.home import HOME_ENV, mcp_http_token

    try:
        return mcp_http_token()
    except OSError as problem:
        raise AppsdkError(
            f"cannot keep the bearer token in the appsdk home: {problem.strerror or problem}; set {HOME_ENV} "
            "to a folder you can write"
        ) from None
