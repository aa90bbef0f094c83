"""The host's HTTP floor: a route table (method + path pattern → function) and the one base handler.

Every request to either origin goes through `BaseHandler._dispatch`, which is where a rule about who may
talk to the host is written, once, for every route: the Host header must name our own loopback address
(DNS rebinding), a POST must come from our own origin with a JSON object body, and a failure is answered
the same way everywhere (`HttpError`; an AppsdkError is the server's failure: 502 with its one line).
The routes themselves only read a `Request` and answer it.

The stdlib server is enough: a handful of local requests per page load, one process, no extra imports
(`appsdk preview` should start in a blink, and uvicorn/starlette cost a few hundred ms to import).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from appsdk_cli import __version__
from appsdk_cli.errors import AppsdkError
from appsdk_cli.netloc import allowed_origin

if TYPE_CHECKING:
    from appsdk_cli.host.state import HostState

MAX_BODY = 8 * 1024 * 1024
# RFC 9110 field values: visible ASCII, spaces and tabs; no CR, LF or NUL, so nothing can start a header.
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*\Z")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


class HttpError(Exception):
    """A route's (or the base handler's) refusal: its status and one line, as JSON unless `plain`."""

    def __init__(self, status: int, message: str, *, plain: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.plain = plain


@dataclass(frozen=True)
class Request:
    """One request as a route sees it: already checked by the base handler."""

    handler: BaseHandler
    host: HostState
    method: str  # GET (HEAD is answered as GET without the body) or POST
    path: str
    query: dict[str, str]
    params: dict[str, str]  # the pattern's {names}
    body: dict[str, Any] | None  # a POST's JSON object; None for a GET

    def json(self, status: int, value: Any) -> None:
        self.handler.send_body(status, json.dumps(value, ensure_ascii=False).encode(), "application/json")

    def text(self, status: int, text: str) -> None:
        self.handler.send_body(status, text.encode(), "text/plain; charset=utf-8")

    def send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.handler.send_body(status, body, content_type, headers)


Endpoint = Callable[[Request], None]


def _compile(pattern: str) -> re.Pattern[str]:
    """`/files/{file_id}` matches one path segment; `{name:path}` matches the rest of the path."""
    regex = ""
    for literal, name, kind in re.findall(r"([^{]*)(?:\{(\w+)(?::(path))?\})?", pattern):
        regex += re.escape(literal)
        if name:
            regex += f"(?P<{name}>.+)" if kind == "path" else f"(?P<{name}>[^/]+)"
    return re.compile(regex + r"\Z")


@dataclass(frozen=True)
class Route:
    method: str  # GET or POST
    pattern: str
    endpoint: Endpoint
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", _compile(self.pattern))


class RouteTable:
    """Routes tried in order, the first whose method and pattern match answers. A server built on the
    host puts its own routes before the host's (`RouteTable(mine, host_routes)`)."""

    def __init__(self, *groups: Iterable[Route]) -> None:
        self.routes: list[Route] = [route for group in groups for route in group]

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            if route.method == method:
                found = route.regex.match(path)
                if found:
                    return route, found.groupdict()
        return None

    def allows(self, method: str) -> bool:
        return any(route.method == method for route in self.routes)


def get(pattern: str, endpoint: Endpoint) -> Route:
    return Route("GET", pattern, endpoint)


def post(pattern: str, endpoint: Endpoint) -> Route:
    return Route("POST", pattern, endpoint)


class HttpServer(ThreadingHTTPServer):
    """One of the host's sockets: the route table for each name it answers to, and the host it serves.

    `routes_for(host_header, port)` picks the table by the request's Host header, or None when this socket
    does not answer to that name (421): the host page's socket answers any loopback name on its port (DNS
    rebinding), the sandbox's only its own three names (origins.py)."""

    daemon_threads = True
    # SO_REUSEADDR: a port whose last server closed connections (an open tab's stream) sits in TIME_WAIT
    # for a minute, and without it `appsdk dev`'s fixed workbench port moved on every restart. On Linux
    # and macOS it still refuses a port another socket listens on. Never SO_REUSEPORT, which would share it.
    allow_reuse_address = True
    allow_reuse_port = False

    def __init__(
        self,
        address: tuple[str, int],
        routes_for: Callable[[str, int], RouteTable | None],
        host: HostState,
    ) -> None:
        super().__init__(address, BaseHandler)
        self.routes_for = routes_for
        self.host = host

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that drops its connection (a reload, a closed tab) is normal: no traceback for it.
        Anything else is one line on stderr; the host keeps serving."""
        import sys

        problem = sys.exc_info()[1]
        if isinstance(problem, ConnectionError | TimeoutError):
            return
        sys.stderr.write(f"appsdk preview: a request failed: {type(problem).__name__}: {problem}\n")


class BaseHandler(BaseHTTPRequestHandler):
    server: HttpServer
    server_version = f"appsdk-preview/{__version__}"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the terminal shows the widget's log, not an access log

    def do_GET(self) -> None:
        self._dispatch("GET")

    do_HEAD = do_GET

    def do_POST(self) -> None:
        self._dispatch("POST")

    # --- the rules every route is under ------------------------------------------------------------------

    def own_origin(self) -> bool:
        # Only our own page may post: a page elsewhere in the user's browser must not call tools through us.
        # The page may be opened as localhost as well as 127.0.0.1 (netloc.allowed_origin: no other name).
        return allowed_origin(self.headers.get("Origin"), self.server.port)

    def _json_body(self) -> dict[str, Any]:
        if not self.own_origin():
            raise HttpError(HTTPStatus.FORBIDDEN, "foreign Origin")
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            raise HttpError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send application/json")
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise HttpError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body too large")
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST, "body is not JSON") from None
        if not isinstance(body, dict):
            raise HttpError(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
        return body

    def _dispatch(self, method: str) -> None:
        self.answered = False  # a kept-alive connection brings several requests to one handler
        parts = urlsplit(self.path)
        try:
            # DNS-rebinding protection, and which origin is asked: only our own names address us.
            routes = self.server.routes_for(self.headers.get("Host", ""), self.server.port)
            if routes is None:
                raise HttpError(HTTPStatus.MISDIRECTED_REQUEST, "unknown Host", plain=True)
            if not routes.allows(method):
                raise HttpError(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} is not served here", plain=True)
            body = self._json_body() if method == "POST" else None
            found = routes.match(method, parts.path)
            if found is None:
                # A page's GET gets a line of text, the API's POST its JSON error.
                raise HttpError(HTTPStatus.NOT_FOUND, "not found", plain=method == "GET")
            route, params = found
            query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
            route.endpoint(Request(self, self.server.host, method, parts.path, query, params, body))
        except HttpError as refused:
            self._refuse(refused)
        except AppsdkError as problem:
            self._refuse(HttpError(HTTPStatus.BAD_GATEWAY, problem.message))
        except Exception as problem:
            # A bug, or appsdk reinstalled under a running host (a lazy import fails): the page gets an
            # answer with one line instead of a dropped connection, and the terminal the same line.
            if self.answered:
                raise
            line = f"the host failed: {type(problem).__name__}: {problem}"[:500]
            self._refuse(HttpError(HTTPStatus.INTERNAL_SERVER_ERROR, line, plain=method == "GET"))
            import sys

            sys.stderr.write(f"appsdk preview: {line}\n")
        return None

    def _refuse(self, refused: HttpError) -> None:
        if refused.plain:
            self.send_body(refused.status, refused.message.encode(), "text/plain; charset=utf-8")
        else:
            body = json.dumps({"error": {"message": refused.message}}, ensure_ascii=False).encode()
            self.send_body(refused.status, body, "application/json")

    # --- answering ---------------------------------------------------------------------------------------

    answered = False  # set once a response has begun: a failure after it cannot be answered again

    def send_body(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        fields = {"Content-Type": content_type, **(headers or {})}
        # Nothing is cached unless its sender says how (host/static.py's versioned files are, for good).
        cache_control = fields.pop("Cache-Control", "no-store")
        for name, value in fields.items():
            if not _HEADER_VALUE.match(value) or not _HEADER_NAME.match(name):
                # A value a server or a widget chose (a file name, a type) must not end the header early.
                raise ValueError(f"refusing to send header {name!r}: control characters in its value")
        self.answered = True
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache_control)
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in fields.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
