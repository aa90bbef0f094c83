from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from appsdk_cli.commands.tunnel import AUTHTOKEN_OPTION_HELP
from appsdk_cli.devserver.transport import Transport
from appsdk_cli.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from appsdk_cli.devserver.events import DevEvent
    from appsdk_cli.devserver.supervisor import DevConfig, Supervisor
    from appsdk_cli.devserver.widget import WidgetDev
    from appsdk_cli.tunnel import Tunnel, TunnelEndpoints, TunnelSettings
    from appsdk_cli.workbench.dev import DevWorkbench


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
    from appsdk_cli.render.dev import dev_event

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

    from appsdk_cli.devserver.supervisor import DevConfig

    widget = _start_widget(project)
    config = DevConfig(
        state_extra=(("vite_url", widget.vite.url),) if widget and widget.vite.url else (),
        project=project,
        host=host,
        port=port,
        reload=not no_reload,
        allowed_hosts=extra,
        transport=transport,
        auth=auth,
        behind_tunnel=tunnel,
    )
    observer = widget.observe(dev_event) if widget else dev_event
    bench = None
    if not no_workbench:
        from appsdk_cli.workbench.dev import DevWorkbench

        bench = observer = DevWorkbench(observer, open_browser=open_workbench)
    try:
        _serve(config, observer, bench, tunnel=tunnel, domain=domain, authtoken=authtoken)
    finally:
        if bench is not None:
            bench.close()
        if widget:
            widget.close()


def _serve(
    config: DevConfig,
    observer: Callable[[DevEvent], None],
    bench: DevWorkbench | None,
    *,
    tunnel: bool,
    domain: str | None,
    authtoken: str | None,
) -> None:
    """Run the supervisor (with the workbench listening before the first worker forks, and a tunnel)."""
    from appsdk_cli.devserver.supervisor import Supervisor
    from appsdk_cli.project import read_config

    project = config.project

    if not tunnel:
        supervisor = Supervisor(config, observer=observer)
        if bench is not None:
            bench.start(supervisor)
        supervisor.run()
        return

    from appsdk_cli.tunnel import TunnelSettings, configured_domain, read_authtoken

    attachment = _TunnelAttachment(
        TunnelSettings(
            local_url="",  # known once the socket is bound
            authtoken=read_authtoken(authtoken),
            domain=domain or configured_domain(read_config(project)),
        )
    )
    try:
        supervisor = Supervisor(config, observer=observer, on_bound=attachment)
        if bench is not None:
            bench.start(supervisor)
        supervisor.run()
    finally:
        attachment.close()


def _start_widget(project: Path) -> WidgetDev | None:
    """A project with web/: Vite and the widget's watching build, beside the server (or a warning why not)."""
    from appsdk_cli.web.node import web_dir

    web = web_dir(project)
    if web is None:
        return None
    from appsdk_cli.devserver.widget import WidgetDev
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.render.console import spinner, warning

    try:
        with spinner("Starting Vite for the widget"):
            return WidgetDev.start(project, web)
    except AppsdkError as problem:
        warning(f"{problem.message}; serving the last built widget (web/dist/) without hot reload")
        return None


class _TunnelAttachment:
    """Opens the tunnel once the first worker serves, and keeps it for the whole session.

    The tunnel lives in the supervisor, not in a worker, so reloads never touch it and the public URL
    stays the same. The agent is started on the supervisor's own thread (no worker is forked while
    the agent's stderr is being redirected); a thread then watches it and restarts it if it dies.
    """

    def __init__(self, settings: TunnelSettings) -> None:
        self.settings = settings
        self.tunnel: Tunnel | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def __call__(self, supervisor: Supervisor) -> None:
        from appsdk_cli.render.console import spinner
        from appsdk_cli.render.tunnel import tunnel_check, tunnel_opened
        from appsdk_cli.tunnel import Tunnel, check_mcp

        self.tunnel = Tunnel(replace(self.settings, local_url=supervisor.url))
        with spinner("Starting the ngrok agent"):
            endpoints = self.tunnel.open()
        supervisor.record_public_url(endpoints.public_url)
        verified = tunnel_check(lambda: check_mcp(endpoints.mcp_url), endpoints)
        tunnel_opened(endpoints, verified=verified, as_json=False)
        self._watcher = threading.Thread(target=self._watch, args=(supervisor,), name="tunnel-watch", daemon=True)
        self._watcher.start()

    def _watch(self, supervisor: Supervisor) -> None:
        from appsdk_cli.errors import AppsdkError
        from appsdk_cli.render.console import error
        from appsdk_cli.render.tunnel import tunnel_restarted
        from appsdk_cli.tunnel import watch

        def restarted(endpoints: TunnelEndpoints, changed: bool) -> None:
            supervisor.record_public_url(endpoints.public_url)
            tunnel_restarted(endpoints, changed, as_json=False)

        assert self.tunnel is not None
        try:
            watch(self.tunnel, restarted, stop=self._stop)
        except AppsdkError as problem:
            # The agent died and could not come back: say so, and keep serving locally.
            error(problem)
            supervisor.record_public_url(None)

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10)
        if self.tunnel is not None:
            self.tunnel.close()
