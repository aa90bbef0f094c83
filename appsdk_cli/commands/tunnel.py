from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

AUTHTOKEN_OPTION_HELP = (
    "ngrok authtoken; - reads it from stdin. A token typed here is visible to other users in `ps` while "
    "appsdk runs: prefer $NGROK_AUTHTOKEN or `ngrok config add-authtoken` (the defaults, in that order)."
)


def tunnel(
    port: Annotated[int | None, typer.Option("--port", help="Local port of the MCP server (path /mcp).")] = None,
    url: Annotated[str | None, typer.Option("--url", help="Local MCP URL, e.g. http://127.0.0.1:8000/mcp.")] = None,
    authtoken: Annotated[
        str | None,
        typer.Option("--authtoken", help=AUTHTOKEN_OPTION_HELP, show_default=False),
    ] = None,
    domain: Annotated[
        str | None, typer.Option("--domain", help="A reserved ngrok domain, stable across sessions.")
    ] = None,
    region: Annotated[str | None, typer.Option("--region", help="ngrok region, e.g. us, eu, ap.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per line, nothing else.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show details of failures.")] = False,
) -> None:
    """Open an ngrok HTTPS tunnel to the local server and print the public /mcp URL for ChatGPT."""
    from appsdk_cli.connection import locate_server
    from appsdk_cli.errors import AppsdkError, UsageError
    from appsdk_cli.project import read_config
    from appsdk_cli.render.console import spinner, stopping_on_sigterm
    from appsdk_cli.render.tunnel import tunnel_closed, tunnel_opened, tunnel_restarted, tunnel_unverified
    from appsdk_cli.tunnel import (
        Tunnel,
        TunnelError,
        TunnelSettings,
        check_mcp,
        configured_domain,
        read_authtoken,
        watch,
    )

    if port is not None and url is not None:
        raise UsageError("give --port or --url, not both")
    authtoken = read_authtoken(authtoken)
    if port is not None and not 0 < port < 65536:
        raise UsageError(f"--port {port} is not a TCP port (1-65535)")
    local_url = f"http://127.0.0.1:{port}/mcp" if port is not None else locate_server(url).url
    domain = domain or configured_domain(read_config(Path.cwd()))

    try:
        check_mcp(local_url, timeout=5)
    except TunnelError:
        raise TunnelError(
            f"nothing answers MCP at {local_url}; start the app with `appsdk dev` (or pass --port / --url)"
        ) from None

    settings = TunnelSettings(local_url=local_url, authtoken=authtoken, domain=domain, region=region)
    with stopping_on_sigterm(), Tunnel(settings) as opened:
        with spinner("Starting the ngrok agent"):
            endpoints = opened.open()
        # Once the tunnel is up, Ctrl-C or SIGTERM is the normal way to stop it: exit 0, whenever it comes.
        with contextlib.suppress(KeyboardInterrupt):
            problem = None
            try:
                with spinner("Checking the public /mcp URL"):
                    check_mcp(endpoints.mcp_url)
            except AppsdkError as failure:  # said plainly; the tunnel stays open
                problem = failure.message
                tunnel_unverified(endpoints, problem)
            tunnel_opened(endpoints, verified=problem is None, as_json=as_json)
            watch(opened, lambda new, changed: tunnel_restarted(new, changed, as_json=as_json))
    tunnel_closed(as_json=as_json)
