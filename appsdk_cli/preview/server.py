"""The preview's HTTP side: the host page on one loopback origin, the widget document on another.

ChatGPT serves a widget from its own sandbox origin, never from the chat's. The preview does the same
with two listening sockets on 127.0.0.1: the host page (http://127.0.0.1:P) and the widget
(http://127.0.0.1:W, a different port and so a different origin). The widget frame can reach the host
only through postMessage, cannot read the host's storage or DOM, and gets the Content-Security-Policy
its resource declares as a response header, like a real host sends it.

The stdlib server is enough: a handful of local requests per page load, one process, no extra imports
(`appsdk preview` should start in a blink, and uvicorn/starlette cost a few hundred ms to import).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from appsdk_cli import __version__
from appsdk_cli.appmeta import Bridge, crash_hint, error_text, tool_crash, without_tool_crash
from appsdk_cli.errors import AppsdkError
from appsdk_cli.preview import hostroutes
from appsdk_cli.preview.devwidget import vite_page
from appsdk_cli.preview.files import FileStore
from appsdk_cli.preview.session import (
    DISPLAY_MODES,
    THEMES,
    USER_AGENT,
    PreviewOptions,
    PreviewSession,
    WidgetTemplate,
    call_from_widget,
    forward_from_widget,
    read_from_widget,
    read_template,
)

STATIC = Path(__file__).parent / "static"
_STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css"}
MAX_BODY = 8 * 1024 * 1024
SANDBOX = "allow-scripts allow-same-origin allow-forms"
PROTOCOL_VERSION = "2026-01-26"  # the MCP Apps extension version the bridge speaks


@dataclass(frozen=True)
class LogEntry:
    """One line of the host log: what the widget did or what went wrong inside it."""

    kind: str  # console, error, csp, openai, bridge, host
    level: str  # info, warn, error
    message: str
    run: str = ""  # the run it belongs to ("" : the single session of `appsdk preview TOOL`)


DEFAULT_RUN = ""


@dataclass
class Run:
    """One tool call the host renders: its session (call, result, tools), the template last served for
    it, and whether the widget document has been served yet (the first load uses the template read
    with the call; later loads re-read it)."""

    id: str
    session: PreviewSession
    template: WidgetTemplate
    widget_served: int = 0


class UnknownRun(KeyError):
    """A request named a run this server does not hold."""


# A route added by a server built on this one (the workbench): handler, path, query, body (None for a GET).
Route = Callable[["_HostHandler", str, dict[str, str], "dict[str, Any] | None"], bool]


class PreviewServer:
    """Serves preview runs; use as a context manager (or start()/close()).

    `appsdk preview TOOL` gives it one session, the default run (requests that name no run). The
    workbench gives it none and adds a run per tool call (`add_run`); every /api/* request and the
    widget document then name theirs with `?run=ID`. `routes` are tried first for every request to
    the host origin: the workbench serves its own page and API on the same origin as the host pages.
    """

    def __init__(
        self,
        preview: PreviewSession | None = None,
        options: PreviewOptions | None = None,
        *,
        port: int = 0,
        on_log: Callable[[LogEntry], None] | None = None,
        routes: Route | None = None,
    ) -> None:
        self.options = options or PreviewOptions()
        self.requested_port = port
        self.on_log = on_log
        self.routes = routes
        self.log: list[LogEntry] = []
        self._lock = threading.Lock()
        self._widget_states: dict[tuple[str, str], Any] = {}
        self._runs: dict[str, Run] = {}
        if preview is not None:
            self._runs[DEFAULT_RUN] = Run(DEFAULT_RUN, preview, preview.template)
        self.files = FileStore()  # window.openai's uploads (hostroutes.py serves them)
        self._servers: list[_Server] = []
        self._threads: list[threading.Thread] = []

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> PreviewServer:
        try:
            host = _Server(("127.0.0.1", self.requested_port), _HostHandler, self)
        except OSError as problem:
            raise AppsdkError(
                f"cannot listen on 127.0.0.1:{self.requested_port}: {problem.strerror or problem};"
                " pick another --port, or leave it out for a free one"
            ) from None
        widget = _Server(("127.0.0.1", 0), _WidgetHandler, self)
        self._servers = [host, widget]
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

    def __enter__(self) -> PreviewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- addresses -----------------------------------------------------------------------------------

    @property
    def host_origin(self) -> str:
        return f"http://127.0.0.1:{self._servers[0].server_address[1]}"

    @property
    def widget_origin(self) -> str:
        return f"http://127.0.0.1:{self._servers[1].server_address[1]}"

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

    # --- runs ----------------------------------------------------------------------------------------

    @property
    def preview(self) -> PreviewSession:
        """The default run's session (`appsdk preview TOOL`)."""
        return self.run(DEFAULT_RUN).session

    def run(self, run_id: str = DEFAULT_RUN) -> Run:
        with self._lock:
            found = self._runs.get(run_id)
        if found is None:
            raise UnknownRun(run_id)
        return found

    def runs(self) -> list[Run]:
        with self._lock:
            return list(self._runs.values())

    def add_run(self, preview: PreviewSession, run_id: str | None = None) -> Run:
        """Hold another session under a fresh id (or replace the one under `run_id`: a re-run, which keeps
        the run's widget state, as ChatGPT keeps it for a widget instance)."""
        import secrets

        new_id = run_id if run_id is not None else secrets.token_hex(6)
        with self._lock:
            run = self._runs[new_id] = Run(new_id, preview, preview.template)
        return run

    def complete_run(self, run_id: str, result: dict[str, Any]) -> None:
        """The answer to a pending run's call: the same view (template, served count, state) gets it."""
        from dataclasses import replace

        with self._lock:
            run = self._runs.get(run_id)
            if run is not None:
                run.session = replace(run.session, result=result, pending=False)

    def drop_run(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)
            for key in [key for key in self._widget_states if key[0] == run_id]:
                del self._widget_states[key]

    # --- state shared by the handlers ----------------------------------------------------------------

    def record(self, entry: LogEntry) -> None:
        with self._lock:
            self.log.append(entry)
        if self.on_log:
            self.on_log(entry)

    def widget_state(self, run_id: str = DEFAULT_RUN) -> Any:
        key = (run_id, self.run(run_id).session.state_key)
        with self._lock:
            return self._widget_states.get(key)

    def set_widget_state(self, state: Any, run_id: str = DEFAULT_RUN) -> None:
        # Kept by the preview server, not in the frame: a page reload (or a new tab) gets it back,
        # as ChatGPT gives a widget its state back when the conversation is reopened.
        key = (run_id, self.run(run_id).session.state_key)
        with self._lock:
            self._widget_states[key] = state

    def template(self, run_id: str = DEFAULT_RUN) -> WidgetTemplate:
        """The first load uses the template read with the call; later loads re-read it, so an edited widget
        shows up on reload without restarting the preview (the server's own caching permitting)."""
        run = self.run(run_id)
        with self._lock:
            first = run.widget_served == 0
            run.widget_served += 1
            current = run.template
        if first:
            return current
        try:
            fresh = read_template(run.session.target, current.uri, current.meta)
        except AppsdkError as problem:
            self.record(
                LogEntry("host", "warn", f"re-reading {current.uri} failed, showing the last copy: {problem}", run_id)
            )
            return current
        with self._lock:
            run.template = fresh
        return fresh

    def session_json(self, run_id: str = DEFAULT_RUN) -> dict[str, Any]:
        """What the host page needs to play the host: the call, the result, and the widget's origin."""
        run = self.run(run_id)
        preview = run.session
        template = run.template
        return {
            "run": run_id or None,
            "appsdkVersion": __version__,
            "protocolVersion": PROTOCOL_VERSION,
            "server": preview.target.description,
            "tool": {"name": preview.tool.name, "title": preview.tool.title, "description": preview.tool.description},
            "toolDefinition": preview.tool_definition,
            "invoking": preview.tool.invoking,
            "invoked": preview.tool.invoked,
            "arguments": preview.arguments,
            "result": preview.result,
            "pending": preview.pending,
            "template": {
                "uri": template.uri,
                "mimeType": template.mime_type,
                "csp": template.csp.header(),
                "declaredCsp": template.csp.approved(),
                "prefersBorder": prefers_border(template.meta),
            },
            "widgetOrigin": self.widget_origin,
            "sandbox": SANDBOX,
            "widgetTools": {bridge.value: sorted(names) for bridge, names in preview.widget_tools.items()},
            "userAgent": USER_AGENT,
            "defaults": asdict(self.options),
            "widgetState": self.widget_state(run_id),
            "warnings": preview.warnings,
        }

    def widget_document(self, query: dict[str, str]) -> tuple[str, str]:
        """The widget's HTML with the host bootstrap injected first, and its CSP header value."""
        run_id = query.get("run", DEFAULT_RUN)
        template = self.template(run_id)
        preview = self.run(run_id).session
        theme = query.get("theme") if query.get("theme") in THEMES else self.options.theme
        mode = query.get("displayMode") if query.get("displayMode") in DISPLAY_MODES else self.options.display_mode
        max_height = int(query["maxHeight"]) if query.get("maxHeight", "").isdigit() else 640
        with_openai = query.get("openai", "1" if not self.options.bridge_only else "0") != "0"
        config = {
            "hostOrigin": self.host_origin,
            "openai": with_openai,
            "globals": {
                "toolInput": preview.arguments,
                "toolOutput": preview.result.get("structuredContent"),
                "toolResponseMetadata": preview.result.get("_meta"),
                "widgetState": self.widget_state(run_id),
                "theme": theme,
                "displayMode": mode,
                "maxHeight": max_height,
                "locale": query.get("locale") or self.options.locale,
                "safeArea": {"insets": {"top": 0, "bottom": 0, "left": 0, "right": 0}},
                "userAgent": USER_AGENT,
            },
        }
        vite = vite_page(self, preview, template)  # `appsdk dev`'s Vite, for hot module replacement
        csp = hostroutes.widget_extras(self, query, config, vite.csp(template.csp) if vite else template.csp)
        return (vite.document(config) if vite else inject_bootstrap(template.html, config)), csp


def _host_module(path: str) -> bool:
    """The host page's ES modules, /host/NAME.js (static/host/)."""
    name = path.removeprefix("/host/")
    return name != path and re.fullmatch(r"[a-z]+\.js", name) is not None and (STATIC / "host" / name).is_file()


def prefers_border(meta: dict[str, Any]) -> bool:
    ui = meta.get("ui") if isinstance(meta.get("ui"), dict) else {}
    return ui.get("prefersBorder") is True or meta.get("openai/widgetPrefersBorder") is True


def inject_bootstrap(html: str, config: dict[str, Any]) -> str:
    """Put the host bootstrap before anything of the widget's own, so window.openai exists when its scripts run."""
    # "<" escaped inside the JSON so no value can close the script element early.
    data = json.dumps(config, ensure_ascii=False).replace("<", "\\u003c").replace("\u2028", "\\u2028")
    script = (STATIC / "bootstrap.js").read_text(encoding="utf-8").replace("__APPSDK_CONFIG__", data)
    tag = f'<script data-appsdk-preview="bootstrap">\n{script}</script>\n'
    # After <head> (or <html>, or the doctype): a script ahead of the doctype would put the page in quirks mode.
    for pattern in (r"<head\b[^>]*>", r"<html\b[^>]*>", r"<!doctype[^>]*>"):
        found = re.search(pattern, html, flags=re.IGNORECASE)
        if found:
            return html[: found.end()] + "\n" + tag + html[found.end() :]
    return tag + html


# --- HTTP ----------------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False  # a busy --port must fail, not share

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], preview: PreviewServer):
        super().__init__(address, handler)
        self.preview = preview

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that drops its connection (a reload, a closed tab) is normal: no traceback for it.
        Anything else is one line on stderr; the preview keeps serving."""
        import sys

        problem = sys.exc_info()[1]
        if isinstance(problem, ConnectionError | TimeoutError):
            return
        sys.stderr.write(f"appsdk preview: a request failed: {type(problem).__name__}: {problem}\n")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = f"appsdk-preview/{__version__}"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the terminal shows the widget's log, not an access log

    def _own_host(self) -> bool:
        # DNS-rebinding protection: only our own loopback names may address us.
        port = self.server.server_address[1]
        return self.headers.get("Host", "") in (f"127.0.0.1:{port}", f"localhost:{port}")

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value, ensure_ascii=False).encode(), "application/json")

    def _text(self, status: int, text: str) -> None:
        self._send(status, text.encode(), "text/plain; charset=utf-8")


class _HostHandler(_Handler):
    def _query(self) -> dict[str, str]:
        return {key: values[-1] for key, values in parse_qs(urlsplit(self.path).query).items()}

    def host_page_csp(self) -> str:
        return (
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self';"
            f" connect-src 'self'; frame-src {self.server.preview.widget_origin}"
        )

    def do_GET(self) -> None:
        if not self._own_host():
            return self._text(HTTPStatus.MISDIRECTED_REQUEST, "unknown Host")
        path = urlsplit(self.path).path
        preview = self.server.preview
        query = self._query()
        if preview.routes is not None and preview.routes(self, path, query, None):
            return None
        if path == "/":
            return self._static("host.html", {"Content-Security-Policy": self.host_page_csp()})
        if path == "/host.css" or _host_module(path):
            return self._static(path[1:])
        if path == "/api/session":
            try:
                return self._json(HTTPStatus.OK, preview.session_json(query.get("run", DEFAULT_RUN)))
            except UnknownRun:
                return self._unknown_run(query.get("run", DEFAULT_RUN))
        if hostroutes.handle_get(self, path, query):
            return None
        if path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        return self._text(HTTPStatus.NOT_FOUND, "not found")

    do_HEAD = do_GET

    def _unknown_run(self, run_id: str) -> None:
        what = f"no run {run_id!r} here" if run_id else "this server holds no default run; name one with ?run="
        return self._json(HTTPStatus.NOT_FOUND, {"error": {"message": what}})

    def _static(self, name: str, headers: dict[str, str] | None = None, folder: Path = STATIC) -> None:
        body = (folder / name).read_bytes()
        self._send(HTTPStatus.OK, body, _STATIC_TYPES[Path(name).suffix], headers)

    def do_POST(self) -> None:
        if not self._own_host():
            return self._text(HTTPStatus.MISDIRECTED_REQUEST, "unknown Host")
        preview = self.server.preview
        # Only the host page may post: a page elsewhere in the user's browser must not call tools through us.
        # The page may be opened as localhost as well as 127.0.0.1 (both are our own names, see _own_host).
        own_origins = (preview.host_origin, f"http://localhost:{self.server.server_address[1]}")
        if self.headers.get("Origin") not in own_origins:
            return self._json(HTTPStatus.FORBIDDEN, {"error": {"message": "foreign Origin"}})
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            return self._json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": {"message": "send application/json"}})
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": {"message": "body too large"}})
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": {"message": "body is not JSON"}})
        if not isinstance(body, dict):
            return self._json(HTTPStatus.BAD_REQUEST, {"error": {"message": "body must be a JSON object"}})
        path = urlsplit(self.path).path
        query = self._query()
        if preview.routes is not None and preview.routes(self, path, query, body):
            return None
        if hostroutes.handle_post(self, path, query, body):
            return None
        # The run: in the query string (host.js adds its own), or in the body.
        run_id = query.get("run") or (body.get("run") if isinstance(body.get("run"), str) else DEFAULT_RUN)
        try:
            run = preview.run(run_id)
        except UnknownRun:
            if path in ("/api/call", "/api/read", "/api/forward", "/api/widget-state", "/api/log"):
                return self._unknown_run(run_id)
            return self._json(HTTPStatus.NOT_FOUND, {"error": {"message": "not found"}})
        if path == "/api/call":
            return self._call(run, body)
        if path == "/api/read":
            return self._read(run, body)
        if path == "/api/forward":
            return self._forward(run, body)
        if path == "/api/widget-state":
            preview.set_widget_state(body.get("state"), run.id)
            return self._json(HTTPStatus.OK, {})
        if path == "/api/log":
            level = body.get("level") if body.get("level") in ("info", "warn", "error") else "info"
            kind = str(body.get("kind", "host"))[:20]
            preview.record(LogEntry(kind, level, str(body.get("message", ""))[:4000], run.id))
            return self._json(HTTPStatus.OK, {})
        return self._json(HTTPStatus.NOT_FOUND, {"error": {"message": "not found"}})

    def _call(self, run: Run, body: dict[str, Any]) -> None:
        name = body.get("name")
        arguments = body.get("arguments") if isinstance(body.get("arguments"), dict) else {}
        if not isinstance(name, str):
            return self._json(HTTPStatus.BAD_REQUEST, {"error": {"message": "name must be a string"}})
        if body.get("bridge") not in tuple(Bridge):
            bridges = " or ".join(repr(b.value) for b in Bridge)
            return self._json(HTTPStatus.BAD_REQUEST, {"error": {"message": f"bridge must be {bridges}"}})
        try:
            arguments = hostroutes.call_arguments(self.server.preview, run.session, name, arguments)
        except ValueError as problem:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": {"message": str(problem)}})
        try:
            result = call_from_widget(run.session, name, arguments, Bridge(body["bridge"]))
        except PermissionError as refused:
            return self._json(HTTPStatus.FORBIDDEN, {"error": {"message": str(refused)}})
        except AppsdkError as problem:
            return self._json(HTTPStatus.BAD_GATEWAY, {"error": {"message": problem.message}})
        if result.get("isError") is True:
            hint = crash_hint(error_text(result), tool_crash(result))
            if hint:
                self.server.preview.record(LogEntry("host", "warn", f"{name} failed: {hint}", run.id))
        # The widget gets what production would send it, without appsdk dev's crash report.
        return self._json(HTTPStatus.OK, {"result": without_tool_crash(result)})

    def _read(self, run: Run, body: dict[str, Any]) -> None:
        uri = body.get("uri")
        if not isinstance(uri, str):
            return self._json(HTTPStatus.BAD_REQUEST, {"error": {"message": "uri must be a string"}})
        try:
            result = read_from_widget(run.session, uri)
        except AppsdkError as problem:
            return self._json(HTTPStatus.BAD_GATEWAY, {"error": {"message": problem.message}})
        return self._json(HTTPStatus.OK, {"result": result})

    def _forward(self, run: Run, body: dict[str, Any]) -> None:
        method = body.get("method")
        params = body.get("params") if isinstance(body.get("params"), dict) else None
        if not isinstance(method, str):
            return self._json(HTTPStatus.BAD_REQUEST, {"error": {"message": "method must be a string"}})
        try:
            result = forward_from_widget(run.session, method, params)
        except PermissionError as refused:
            return self._json(HTTPStatus.FORBIDDEN, {"error": {"message": str(refused)}})
        except AppsdkError as problem:
            return self._json(HTTPStatus.BAD_GATEWAY, {"error": {"message": problem.message}})
        return self._json(HTTPStatus.OK, {"result": result})


class _WidgetHandler(_Handler):
    """The widget's origin serves the widget document and nothing else."""

    def do_GET(self) -> None:
        if not self._own_host():
            return self._text(HTTPStatus.MISDIRECTED_REQUEST, "unknown Host")
        parts = urlsplit(self.path)
        if parts.path != "/widget":
            return self._text(HTTPStatus.NOT_FOUND, "not found")
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        try:
            html, csp = self.server.preview.widget_document(query)
        except UnknownRun:
            return self._text(HTTPStatus.NOT_FOUND, "no such run")
        self._send(HTTPStatus.OK, html.encode(), "text/html; charset=utf-8", {"Content-Security-Policy": csp})

    do_HEAD = do_GET
