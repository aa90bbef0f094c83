from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from appsdk_cli.devserver.events import Transport


def dev(
    path: Annotated[
        Path, typer.Argument(help="The app's project folder (server.py, or [tool.appsdk] app).", show_default=False)
    ] = Path("."),
    port: Annotated[int, typer.Option("--port", "-p", min=0, max=65535, help="The port to listen on.")] = 8000,
    host: Annotated[
        str, typer.Option("--host", help="The address to listen on; 0.0.0.0 exposes the app to your network.")
    ] = "127.0.0.1",
    no_reload: Annotated[bool, typer.Option("--no-reload", help="Serve without watching files.")] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Also accept this Host header (a tunnel's hostname); NAME means any port or none. Repeatable.",
            show_default=False,
        ),
    ] = None,
    transport: Annotated[
        Transport,
        typer.Option("--transport", help="streamable-http at /mcp, or the older sse at /sse.", case_sensitive=False),
    ] = Transport.STREAMABLE_HTTP,
) -> None:
    """Serve the app at http://HOST:PORT/mcp and reload it on every save."""
    from appsdk_cli import render
    from appsdk_cli.devserver.hosts import is_loopback, security_lists
    from appsdk_cli.project import app_target

    project = path.resolve()
    app_target(project)  # a missing folder or a malformed target fails before anything starts
    extra = tuple(allow_host or ())
    security_lists(host, extra)  # a malformed --allow-host is a usage error (exit 2)
    if not is_loopback(host):
        render.warning(
            f"serving on {host}: other machines on your network can reach the app; "
            "DNS-rebinding protection stays on, so add the names they use with --allow-host"
        )

    from appsdk_cli.devserver.supervisor import DevConfig, Supervisor

    config = DevConfig(
        project=project, host=host, port=port, reload=not no_reload, allowed_hosts=extra, transport=transport
    )
    Supervisor(config, observer=render.dev_event).run()
