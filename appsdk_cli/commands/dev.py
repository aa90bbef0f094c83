from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from appsdk_cli.commands.tunnel import AUTHTOKEN_OPTION_HELP
from appsdk_cli.devserver.transport import Transport
from appsdk_cli.errors import UsageError


def dev(
    path: Annotated[
        Path,
        typer.Argument(
            help="The app's project folder (server.py, or [tool.appsdk] app).", show_default=False, metavar="PATH"
        ),
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
    tunnel: Annotated[
        bool, typer.Option("--tunnel", help="Also open an ngrok HTTPS tunnel; its URL stays the same across reloads.")
    ] = False,
    domain: Annotated[
        str | None,
        typer.Option("--domain", help="With --tunnel: a reserved ngrok domain (default: [tool.appsdk.tunnel] domain)."),
    ] = None,
    authtoken: Annotated[
        str | None,
        typer.Option("--authtoken", help="With --tunnel: the " + AUTHTOKEN_OPTION_HELP, show_default=False),
    ] = None,
    auth_user: Annotated[
        str | None,
        typer.Option(
            "--auth-user",
            help="Sign-in approves at once as this test user: /authorize redirects straight back (scripts, tests).",
            show_default=False,
        ),
    ] = None,
    open_workbench: Annotated[
        bool, typer.Option("--open", help="Open the workbench (the interactive host page) in a browser.")
    ] = False,
    no_workbench: Annotated[
        bool, typer.Option("--no-workbench", help="Serve only the app: no workbench page beside it.")
    ] = False,
) -> None:
    """Serve the app at http://HOST:PORT/mcp and reload it on every save; the workbench (a local host
    page on 127.0.0.1 that follows every save) shows its tools and widgets."""
    from appsdk_cli.auth.server import auth_config, refuse_exposed
    from appsdk_cli.devserver.hosts import security_lists
    from appsdk_cli.netloc import is_loopback_host
    from appsdk_cli.project import app_target, find_project, read_config
    from appsdk_cli.render.console import warning

    project = find_project(path)
    app_target(project)  # a missing folder or a malformed target fails before anything starts
    auth = auth_config(read_config(project), auth_user)
    extra = tuple(allow_host or ())
    security_lists(host, extra)  # a malformed --allow-host is a usage error (exit 2)
    if auth is not None:
        refuse_exposed(host, behind_tunnel=tunnel)
    if not is_loopback_host(host):
        warning(
            f"serving on {host}: other machines on your network can reach the app; "
            "DNS-rebinding protection stays on, so add the names they use with --allow-host"
        )

    if (domain or authtoken) and not tunnel:
        raise UsageError("--domain and --authtoken go with --tunnel")
    if open_workbench and no_workbench:
        raise UsageError("--open opens the workbench, which --no-workbench turns off; pick one")

    from appsdk_cli.devserver.session import SessionConfig, run
    from appsdk_cli.devserver.supervisor import DevConfig
    from appsdk_cli.render.dev import DevRenderer

    tunnel_settings = None
    if tunnel:
        from appsdk_cli.tunnel import TunnelSettings, configured_domain, read_authtoken

        tunnel_settings = TunnelSettings(
            local_url="",  # known once the socket is bound
            authtoken=read_authtoken(authtoken),
            domain=domain or configured_domain(read_config(project)),
        )
    config = SessionConfig(
        server=DevConfig(
            project=project,
            host=host,
            port=port,
            reload=not no_reload,
            allowed_hosts=extra,
            transport=transport,
            auth=auth,
            behind_tunnel=tunnel,
        ),
        workbench=not no_workbench,
        open_browser=open_workbench,
        tunnel=tunnel_settings,
    )
    run(config, DevRenderer())
