"""The host listening: the host page's socket and the sandbox's, with a route table per origin.

ChatGPT serves a widget from its own sandbox site, never from the chat's. The host does the same
(origins.py has the model): the host page and its API on http://127.0.0.1:P, and on a second socket the
sandbox proxy, the view and the file downloads, each under its own `*.localhost` name. Each origin is a
route table under the one base handler (handler.py): the host origin's is the host's own (api.py) after
whatever a server built on the host registers first (the workbench's page and runs API).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterable

from appsdk_cli.errors import AppsdkError
from appsdk_cli.host import api, noui, sandbox, widget
from appsdk_cli.host.handler import HttpServer, Route, RouteTable
from appsdk_cli.host.origins import FILES, PROXY, VIEW, Origins
from appsdk_cli.host.run import LogEntry
from appsdk_cli.host.session import PreviewOptions
from appsdk_cli.host.state import HostState
from appsdk_cli.netloc import allowed_host_header, sandbox_site_id


class HostServer(HostState):
    """The host, listening; use as a context manager (or start()/close()).

    `appsdk preview TOOL` gives it one run, the default run (requests that name no run). The workbench
    adds a run per tool call (`add_run`); every /api/* request and the widget document then name theirs
    with `?run=ID`. `routes` go before the host's own on the host origin: the workbench serves its page
    and API on the same origin as the host pages, under the same base handler.
    """

    def __init__(
        self,
        options: PreviewOptions | None = None,
        *,
        port: int = 0,
        on_log: Callable[[LogEntry], None] | None = None,
        routes: Iterable[Route] = (),
        server: str | None = None,
    ) -> None:
        super().__init__(options, on_log=on_log)
        self.requested_port = port
        # The sandbox's names are the server's: each server's widgets are a site of their own. Without
        # one (a host not yet bound to a server), a random id still keeps them apart from everything else.
        self.site_id = sandbox_site_id(server) if server else secrets.token_hex(6)
        self.host_routes = RouteTable(routes, noui.ROUTES, api.ROUTES)
        self.sandbox_routes = {
            PROXY: RouteTable(sandbox.PROXY_ROUTES),
            VIEW: RouteTable(widget.ROUTES),
            FILES: RouteTable(sandbox.FILE_ROUTES),
        }
        self._origins: Origins | None = None
        self._servers: list[HttpServer] = []
        self._threads: list[threading.Thread] = []

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> HostServer:
        try:
            host = HttpServer(("127.0.0.1", self.requested_port), self._host_routes_for, self)
        except OSError as problem:
            raise AppsdkError(
                f"cannot listen on 127.0.0.1:{self.requested_port}: {problem.strerror or problem};"
                " pick another --port, or leave it out for a free one"
            ) from None
        sandbox_socket = HttpServer(("127.0.0.1", 0), self._sandbox_routes_for, self)
        self._origins = Origins(host.port, sandbox_socket.port, self.site_id)
        self._servers = [host, sandbox_socket]
        for server in self._servers:
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def close(self) -> None:
        # Both loops are told to stop before waiting on either, so closing costs one poll interval, not two.
        stoppers = [threading.Thread(target=server.shutdown) for server in self._servers]
        for stopper in stoppers:
            stopper.start()
        for stopper in stoppers:
            stopper.join(timeout=5)
        for server in self._servers:
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._servers, self._threads = [], []
        self._origins = None
        self.files.close()

    def __enter__(self) -> HostServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def serve_for(self, server: str) -> None:
        """Name the server whose widgets this host shows, before start(), when it was not known at
        construction (`appsdk dev`'s workbench learns the app's URL once the socket is bound)."""
        if self._origins is not None:
            raise RuntimeError("the host's origins are fixed once it listens")
        self.site_id = sandbox_site_id(server)

    def _host_routes_for(self, host_header: str, port: int) -> RouteTable | None:
        return self.host_routes if allowed_host_header(host_header, port) else None

    def _sandbox_routes_for(self, host_header: str, port: int) -> RouteTable | None:
        kind = self.origins.sandbox_kind(host_header)
        return self.sandbox_routes[kind] if kind else None

    # --- addresses -----------------------------------------------------------------------------------

    @property
    def origins(self) -> Origins:
        if self._origins is None:
            raise RuntimeError("the host has no origins until it listens (start())")
        return self._origins

    @property
    def url(self) -> str:
        return self.host_origin + "/"

    def page_url(self, *, screenshot: bool = False, **query: str) -> str:
        """The host page; `screenshot` hides the panels' chrome and `openai="0"` withholds window.openai."""
        from urllib.parse import urlencode

        params = dict(query)
        if screenshot:
            params["screenshot"] = "1"
        return self.url + (f"?{urlencode(params)}" if params else "")

    def widget_document(self, query: dict[str, str]) -> tuple[str, str]:
        """The widget's HTML with the host bootstrap injected first, and its CSP header value."""
        return widget.widget_document(self, query)
