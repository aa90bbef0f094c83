"""The host's two loopback origins: the host page and its API on one, the widget document on another.

ChatGPT serves a widget from its own sandbox origin, never from the chat's. The host does the same with
two listening sockets on 127.0.0.1: the host page (http://127.0.0.1:P) and the widget (http://127.0.0.1:W,
a different port and so a different origin). Each origin is a route table under the one base handler
(handler.py): the host origin's is the host's own (api.py) after whatever a server built on the host
registers first (the workbench's page and runs API); the widget origin's is the widget document alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from appsdk_cli.errors import AppsdkError
from appsdk_cli.host import api, widget
from appsdk_cli.host.handler import HttpServer, Route, RouteTable
from appsdk_cli.host.run import LogEntry
from appsdk_cli.host.session import PreviewOptions
from appsdk_cli.host.state import HostState


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
    ) -> None:
        super().__init__(options, on_log=on_log)
        self.requested_port = port
        self.host_routes = RouteTable(routes, api.ROUTES)
        self.widget_routes = RouteTable(widget.ROUTES)
        self._servers: list[HttpServer] = []
        self._threads: list[threading.Thread] = []

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> HostServer:
        try:
            host = HttpServer(("127.0.0.1", self.requested_port), self.host_routes, self)
        except OSError as problem:
            raise AppsdkError(
                f"cannot listen on 127.0.0.1:{self.requested_port}: {problem.strerror or problem};"
                " pick another --port, or leave it out for a free one"
            ) from None
        widget_origin = HttpServer(("127.0.0.1", 0), self.widget_routes, self)
        self._servers = [host, widget_origin]
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
        self.files.close()

    def __enter__(self) -> HostServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sockets(self) -> list[Any]:
        """The listening sockets (a forking parent closes them in its children)."""
        return [server.socket for server in self._servers]

    # --- addresses -----------------------------------------------------------------------------------

    @property
    def host_origin(self) -> str:
        return f"http://127.0.0.1:{self._servers[0].port}"

    @property
    def widget_origin(self) -> str:
        return f"http://127.0.0.1:{self._servers[1].port}"

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
