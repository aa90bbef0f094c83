"""The client proper: era negotiation, requests in either era, and what a server may send mid-call.

Negotiation (`--protocol auto`), as the 2026-07-28 spec describes a dual-era client:
1. an era remembered for this URL (see eras.py) is used as is, and forgotten if it stops working;
2. else a modern `server/discover`: an answer listing 2026-07-28 settles it; a modern error says what to
   fix (another version, base64 headers) and the probe is retried once;
3. anything else (an unrecognised 4xx, a JSON-RPC error no modern server would send) means a 2025
   server: the `initialize` handshake;
4. a 4xx on that POST means the deprecated HTTP+SSE transport: GET the URL, read its `endpoint` event.

In the modern era an `input_required` result (MRTR) is answered and the request retried with the
responses; in the handshake era the same questions arrive as `elicitation/create` requests on the
call's stream. Both go to one `on_elicit` callback. Progress and log notifications go to `on_notification`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from appsdk_cli.appmeta import ui_client_capability
from appsdk_cli.client import modern
from appsdk_cli.client.eras import (
    AUTO,
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LEGACY_SSE_VERSION,
    SSE,
    STDIO,
    STREAMABLE_HTTP,
    Era,
    EraCache,
)
from appsdk_cli.client.http import (
    CLIENT_INFO,
    DEFAULT_TIMEOUT,
    METHOD_NOT_FOUND,
    AuthRequired,
    ConnectError,
    HttpTransport,
    Message,
    ProtocolError,
    Transport,
)
from appsdk_cli.client.legacy_sse import SseTransport
from appsdk_cli.errors import AppsdkError
from appsdk_cli.mcpskills import SKILLS_EXTENSION

# Sees every JSON-RPC message: ("send" | "receive", message); appsdk_cli.trace.Tracer is one (it also has
# `failed(message, problem)`, told when a message got no JSON-RPC answer). Tests use it to check wire shapes.
Tracer = Callable[[str, Message], None]
# Answers one elicitation (the params of elicitation/create) with an ElicitResult: {action, content}.
Elicitor = Callable[[dict[str, Any]], dict[str, Any]]
# Sees notifications/progress and notifications/message of a request, as they arrive.
NotificationSink = Callable[[Message], None]

MAX_INPUT_ROUNDS = 10
# A cancellation is a courtesy to the server: it must not hold up whoever cancels for a whole --timeout.
CANCEL_SECONDS = 5.0
SHOWN_NOTIFICATIONS = ("notifications/progress", "notifications/message")
# How long a server keeps a task's result once it is done (ms): ample for the `tasks/result` that follows at once.
TASK_TTL_MS = 300_000


@dataclass
class ServerInfo:
    protocol_version: str
    name: str
    version: str
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None


class McpClient:
    """Requests in whichever era the server speaks, over any Transport.

    Use as a context manager: the era is settled on enter (a handshake, or nothing at all for a
    remembered modern server), the session ends on exit.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        trace: Tracer | None = None,
        protocol: str = AUTO,
        eras: EraCache | None = None,
        on_elicit: Elicitor | None = None,
        on_notification: NotificationSink | None = None,
        on_unauthorized: Callable[[AuthRequired], str] | None = None,
        ui: bool = True,
    ) -> None:
        self.transport = transport
        # Offer the MCP Apps extension, as a host that renders widgets does (False: play a text-only host).
        self.ui = ui
        # Given a 401 mid-session, returns a new bearer token (after a sign-in) or raises.
        self.on_unauthorized = on_unauthorized
        self.trace = trace
        self.protocol = protocol
        self.eras = eras
        self.on_elicit = on_elicit
        self.on_notification = on_notification
        self.era: Era | None = None
        # Raw answers kept for `appsdk check`: what discover and initialize said, and what was odd.
        self.discovered: dict[str, Any] | None = None
        self.initialized: dict[str, Any] | None = None
        self.without_result_type: set[str] = set()
        # Tools left out of tools/list because their x-mcp-header annotations break the rules (modern only).
        self.dropped_tools: dict[str, str] = {}
        # A notifications/tools/list_changed arrived since the last tools/list: a remembered list is stale.
        self.tools_changed = False
        self._server: ServerInfo | None = None
        self._era_from_cache = False
        self._encode_all_headers = False
        self._header_maps: dict[str, dict[tuple[str, ...], str]] = {}
        # The streamable-HTTP transport we came from, when negotiation went down to HTTP+SSE.
        self._http_origin: HttpTransport | None = None
        self._next_id = 0
        self._next_progress = 0
        # The id of the request waiting for its answer, for cancel_in_flight from another thread.
        self._in_flight: int | None = None
        # The MCP task whose result that request waits for: a cancel cancels the task too (tasks/cancel).
        self._task_awaited: str | None = None

    # --- lifecycle -----------------------------------------------------------------------------------

    def __enter__(self) -> McpClient:
        try:
            self.negotiate()
        except BaseException:
            self.transport.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.transport.close()

    @property
    def modern(self) -> bool:
        return self.era is not None and self.era.modern

    @property
    def _kind(self) -> str:
        if isinstance(self.transport, HttpTransport):
            return STREAMABLE_HTTP
        return SSE if isinstance(self.transport, SseTransport) else STDIO

    @property
    def _cache_key(self) -> str | None:
        url = getattr(self.transport, "url", None)
        return url if self.eras is not None and isinstance(url, str) else None

    @property
    def server(self) -> ServerInfo | None:
        """Who the server is; in the modern era asked of `server/discover` the first time it is needed."""
        if self._server is None and self.modern:
            try:
                self._server = self._info_from_discover(self.discover())
            except ProtocolError as problem:
                if not self._remembered_era_refused(problem):
                    raise
                # Another server on the same URL (a port reused): found out again, which names it too.
                self._forget_era()
                self.negotiate()
                return self.server
            self._era_from_cache = False
        return self._server

    @property
    def authorization(self) -> str | None:
        """The Authorization header this connection sends: what is cached for it belongs to that principal."""
        side = self.transport._stream_side if isinstance(self.transport, SseTransport) else self.transport
        headers = getattr(side, "extra_headers", None)
        return headers.get("Authorization") if isinstance(headers, dict) else None

    def negotiate(self) -> Era:
        """Settle the era as --protocol says: forced, or remembered, or found out."""
        if self.protocol == modern.MODERN_VERSION:
            self.era = Era(modern.MODERN_VERSION, self._kind)
        elif self.protocol == LEGACY_SSE_VERSION and self._kind == STREAMABLE_HTTP:
            self._switch_to_sse()
            try:
                self.initialize(LEGACY_SSE_VERSION)
            except ProtocolError as problem:
                # A 404 has its own hint (the path); another refusal means this URL serves something else.
                if isinstance(problem, AuthRequired) or problem.status in (None, 404) or problem.status >= 500:
                    raise
                problem.message += "; it does not seem to serve HTTP+SSE here (--protocol auto finds what it speaks)"
                raise
        elif self.protocol in HANDSHAKE_PROTOCOL_VERSIONS:
            self.initialize(self.protocol)
        elif self.protocol != AUTO:
            raise ProtocolError(f"appsdk does not speak MCP protocol version {self.protocol!r}")
        else:
            remembered = self.eras.get(self._cache_key) if self._cache_key and self.eras else None
            if remembered is not None and self._resume(remembered):
                return remembered
            self._find_era()
            if self._cache_key and self.eras and self.era:
                self.eras.remember(self._cache_key, self.era)
        assert self.era is not None
        return self.era

    def _resume(self, era: Era) -> bool:
        """Go straight to a remembered era; False (and forgotten) if it no longer answers."""
        self._era_from_cache = True
        if era.modern:
            self.era = era  # nothing to send: the first real request proves it
            return True
        try:
            if era.transport == SSE and self._kind == STREAMABLE_HTTP:
                self._switch_to_sse()
            self.initialize(LATEST_HANDSHAKE_VERSION)
            return True
        except AuthRequired:
            raise
        except AppsdkError as problem:
            if _unreachable(problem):
                raise
            self._forget_era()
            return False

    def _forget_era(self) -> None:
        if self._cache_key and self.eras:
            self.eras.forget(self._cache_key)
        self._era_from_cache = False
        self.era = None
        self._server = None
        if self._http_origin is not None and self._kind == SSE:
            self.transport.close()
            self.transport = self._http_origin

    def _find_era(self) -> None:
        try:
            answer = self.discover()
        except AuthRequired:
            raise
        except ProtocolError as problem:
            if problem.code == modern.UNSUPPORTED_PROTOCOL_VERSION:
                supported = _supported_versions(problem)
                if supported and not any(v in HANDSHAKE_PROTOCOL_VERSIONS for v in supported):
                    raise ProtocolError(
                        f"{self.transport.description} speaks only MCP {', '.join(supported)}; appsdk speaks "
                        f"{modern.MODERN_VERSION} and {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}",
                        detail=problem.detail,
                    ) from None
            self._handshake_or_sse()
            return
        supported = answer.get("supportedVersions")
        if isinstance(supported, list) and modern.MODERN_VERSION in supported:
            self.era = Era(modern.MODERN_VERSION, self._kind)
            self._server = self._info_from_discover(answer)
        else:
            self._handshake_or_sse()

    def _handshake_or_sse(self) -> None:
        try:
            self.initialize(LATEST_HANDSHAKE_VERSION)
            return
        except AuthRequired:
            raise
        except ProtocolError as refused:
            if self._kind != STREAMABLE_HTTP or refused.status is None or not 400 <= refused.status < 500:
                raise
            handshake_problem = refused
        try:
            self._switch_to_sse()
            self.initialize(LATEST_HANDSHAKE_VERSION)
        except AuthRequired:
            raise
        except ProtocolError as sse_problem:
            # Say what the handshake heard, unless it was a bare "no such thing here" (then the GET's answer
            # carries the hint, e.g. the 404 one when nothing MCP answers at this URL at all).
            bare = handshake_problem.error is None and handshake_problem.status in (404, 405)
            raise (sse_problem if bare else handshake_problem) from None

    def _switch_to_sse(self) -> None:
        http = self.transport
        assert isinstance(http, HttpTransport)
        http.close()
        self._http_origin = http
        self.transport = SseTransport(http.url, timeout=http.timeout, headers=http.extra_headers)

    # --- sending -------------------------------------------------------------------------------------

    def _capabilities(self, version: str) -> dict[str, Any]:
        """What appsdk offers: in `initialize` (2025 eras), in every request's `_meta` (2026-07-28).

        MCP Apps is offered under `capabilities.extensions` in both: the 2026-07-28 schema defines that
        field, and the MCP Apps spec (2026-01-26) has 2025-era hosts send it in `initialize` too, which
        is where the SDKs' `getUiCapability` / `client_supports_apps` read it."""
        capabilities: dict[str, Any] = {}
        if self.on_elicit is not None:
            # Form elicitation became its own mode in 2025-11-25; before that the capability was an empty object.
            newer = version == modern.MODERN_VERSION or version >= "2025-11-25"
            capabilities["elicitation"] = {"form": {}} if newer else {}
        if self.ui:
            capabilities["extensions"] = ui_client_capability()
        return capabilities

    def _send(self, message: Message, headers: dict[str, str] | None = None) -> Message | None:
        if self.trace:
            self.trace("send", message)
        try:
            answer = self.transport.exchange(message, on_other=self._on_server_message, headers=headers)
        except AppsdkError as problem:
            # No answer came, or a JSON-RPC error came as an HTTP error: a trace.Tracer records that too.
            failed = getattr(self.trace, "failed", None)
            if failed is not None:
                failed(message, problem)
            raise
        if answer is not None and self.trace:
            self.trace("receive", answer)
        return answer

    def _on_server_message(self, message: Message) -> Message | None:
        """Notifications go to on_notification; elicitation to on_elicit; other requests are declined."""
        if self.trace:
            self.trace("receive", message)
        if not isinstance(message, dict) or "method" not in message:
            return None
        if "id" not in message:
            if message["method"] == "notifications/tools/list_changed":
                self.tools_changed = True
            if message["method"] in SHOWN_NOTIFICATIONS and self.on_notification is not None:
                self.on_notification(message)
            return None
        if message["method"] == "ping":
            reply: Message = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        elif message["method"] == "elicitation/create" and self.on_elicit is not None:
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": self.on_elicit(params)}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": METHOD_NOT_FOUND, "message": f"appsdk does not support {message['method']}"},
            }
        if self.trace:
            self.trace("send", reply)
        return reply

    def _exchange(self, method: str, params: dict[str, Any] | None, *, modern_era: bool) -> dict[str, Any]:
        self._next_id += 1
        message: Message = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        headers: dict[str, str] | None = None
        if modern_era:
            params = dict(params or {})
            user_meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            params["_meta"] = {
                **user_meta,
                **modern.envelope(self._capabilities(modern.MODERN_VERSION), CLIENT_INFO),
            }
            extra: dict[str, str] = {}
            if method == "tools/call" and params.get("name") in self._header_maps:
                arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
                extra = modern.param_headers(
                    self._header_maps[params["name"]], arguments, encode_all=self._encode_all_headers
                )
            headers = modern.routing_headers(method, params, param_headers=extra, encode_all=self._encode_all_headers)
        if params is not None:
            message["params"] = params
        self._in_flight = self._next_id
        try:
            answer = self._send(message, headers)
        except KeyboardInterrupt:
            # Ctrl-C: the server is told, so a long tool stops working for nobody (2025 eras; see below).
            self.cancel_in_flight("the user interrupted appsdk (Ctrl-C)")
            raise
        except ProtocolError as problem:
            if problem.error is None or isinstance(problem, AuthRequired):
                raise
            # A JSON-RPC error carried by an HTTP error status (the 2026-07-28 way): the error is the answer.
            answer = {"jsonrpc": "2.0", "id": message["id"], "error": problem.error, "_status": problem.status}
        finally:
            self._in_flight = None
        if not isinstance(answer, dict):
            raise ProtocolError(f"{self.transport.description} sent no answer to {method}")
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            code = error.get("code")
            status = answer.pop("_status", None)
            raise ProtocolError(
                f"{method} failed: {error.get('message', 'unknown error')} (JSON-RPC error {code})",
                code=code if isinstance(code, int) else None,
                detail=json.dumps(answer, indent=2),
                status=status,
                error=error,
            )
        result = answer.get("result")
        if not isinstance(result, dict):
            raise ProtocolError(
                f"{self.transport.description} answered {method} without a result object", detail=json.dumps(answer)
            )
        if modern_era:
            if "resultType" not in result:
                self.without_result_type.add(method)
            info = (
                (result.get("_meta") or {}).get(modern.SERVER_INFO_META)
                if isinstance(result.get("_meta"), dict)
                else None
            )
            if self._server is None and isinstance(info, dict) and method != "server/discover":
                self._server = ServerInfo(
                    modern.MODERN_VERSION, str(info.get("name", "")), str(info.get("version", ""))
                )
        return result

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request in the negotiated era; return its (final) result, or raise ProtocolError."""
        try:
            return self._request_in_era(method, params)
        except AuthRequired as challenge:
            if self.on_unauthorized is None or not self.modern:
                raise
            # Only a stateless request can simply be sent again; a handshake session would need a new one.
            self.transport.set_token(self.on_unauthorized(challenge))
            return self._request_in_era(method, params)

    def _request_in_era(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        if not self.modern:
            return self._exchange(method, params, modern_era=False)
        try:
            result = self._modern_request(method, params)
        except ProtocolError as problem:
            refused = problem.error is None and problem.status is not None and 400 <= problem.status < 500
            if refused and self.protocol == modern.MODERN_VERSION and not isinstance(problem, AuthRequired):
                problem.message += "; it does not seem to speak 2026-07-28 (--protocol auto finds what it speaks)"
                raise
            if not self._remembered_era_refused(problem):
                raise
            # The remembered era was wrong (the server changed): find out again, then resend once.
            self._forget_era()
            self.negotiate()
            return self._request_in_era(method, params)
        self._era_from_cache = False
        return result

    def _remembered_era_refused(self, problem: ProtocolError) -> bool:
        """A remembered modern era's first request was refused as such: the URL may now be another server.

        Any 4xx counts, with or without a JSON-RPC body (the TypeScript SDK's 2025 servers answer a
        2026-07-28 request with HTTP 400 and code -32000); a JSON-RPC error in a 200 is about the request.
        Finding out again costs one exchange, once, and a modern server's own refusal then stands."""
        if not self._era_from_cache or _unreachable(problem) or isinstance(problem, AuthRequired):
            return False
        refused = problem.status is not None and 400 <= problem.status < 500
        return refused or problem.code == modern.UNSUPPORTED_PROTOCOL_VERSION

    def _modern_request(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        try:
            result = self._exchange(method, params, modern_era=True)
        except ProtocolError as problem:
            if problem.code == modern.HEADER_MISMATCH and not self._encode_all_headers:
                # Something on the way mangled a header value; the sentinel survives any proxy.
                self._encode_all_headers = True
                result = self._exchange(method, params, modern_era=True)
            elif problem.code == modern.MISSING_CLIENT_CAPABILITY:
                raise ProtocolError(
                    f"{method} needs a client capability appsdk did not offer: {problem.message}"
                    + ("" if self.on_elicit else "; this command cannot answer questions from the server"),
                    code=problem.code,
                    detail=problem.detail,
                    status=problem.status,
                    error=problem.error,
                ) from None
            else:
                raise
        return self._resolve_input(method, params, result)

    def _resolve_input(self, method: str, params: dict[str, Any] | None, result: dict[str, Any]) -> dict[str, Any]:
        """MRTR: answer each `input_required` round and retry the request with the answers."""
        delay = 0.05
        for _ in range(MAX_INPUT_ROUNDS):
            if result.get("resultType") != "input_required":
                return result
            asked = result.get("inputRequests") if isinstance(result.get("inputRequests"), dict) else {}
            retry = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
            if asked:
                retry["inputResponses"] = {key: self._answer_input(request) for key, request in asked.items()}
                delay = 0.05
            else:
                time.sleep(delay)  # the server is still working: it sent only state to come back with
                delay = min(delay * 2, 0.25)
            if isinstance(result.get("requestState"), str):
                retry["requestState"] = result["requestState"]
            result = self._exchange(method, retry, modern_era=True)
        raise ProtocolError(f"{method} still wanted more input after {MAX_INPUT_ROUNDS} rounds of answers")

    def _answer_input(self, request: Any) -> dict[str, Any]:
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) and isinstance(request.get("params"), dict) else {}
        if method == "elicitation/create" and self.on_elicit is not None:
            return self.on_elicit(params)
        if method == "roots/list":
            return {"roots": []}
        what = {"sampling/createMessage": "an LLM completion (sampling)", "elicitation/create": "answers from you"}
        raise ProtocolError(
            f"the server asks for {what.get(str(method), repr(method))}, which this command cannot give",
            detail=json.dumps(request),
        )

    def cancel_in_flight(self, reason: str) -> bool:
        """Tell the server that the request now waiting for its answer is cancelled; True if it was told.

        In the handshake eras that is `notifications/cancelled` naming the request, sent on a connection
        of its own (or a line on stdin) while the request's thread still waits; whoever cancels then
        drops that wait. A wait on an MCP task's result (call_tool's `as_task`) sends `tasks/cancel` for the
        task first. In 2026-07-28 closing the request's stream is the cancellation: nothing to send.
        Never raises: a server that cannot be told still loses the connection."""
        request_id, task_id = self._in_flight, self._task_awaited
        if request_id is None or self.era is None or self.era.modern:
            return False
        messages: list[Message] = []
        if task_id is not None:
            # Waiting on tasks/result: cancelling that wait would leave the task working for nobody, and a
            # task is cancelled only by tasks/cancel (2025-11-25). Its id is a string, never one of ours.
            cancel_id = f"appsdk-cancel-{request_id}"
            messages.append(
                {"jsonrpc": "2.0", "id": cancel_id, "method": "tasks/cancel", "params": {"taskId": task_id}}
            )
        messages.append(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id, "reason": reason},
            }
        )
        told = False
        for message in messages:
            if self.trace:
                self.trace("send", message)
            try:
                self.transport.send_aside(message, timeout=CANCEL_SECONDS)
            except (AppsdkError, OSError):
                continue
            told = True
        return told

    def cancel(self, reason: str) -> bool:
        """Cancel the request now in flight, from another thread: the server is told where the era has a
        message for it, and the waiting thread gives up at once (a ConnectError). True if it was told."""
        told = self.cancel_in_flight(reason)
        self.transport.abandon()
        return told

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    # --- the handshake and discover ------------------------------------------------------------------

    def initialize(self, offer: str = LATEST_HANDSHAKE_VERSION) -> ServerInfo:
        result = self._exchange(
            "initialize",
            {"protocolVersion": offer, "capabilities": self._capabilities(offer), "clientInfo": CLIENT_INFO},
            modern_era=False,
        )
        version = result.get("protocolVersion")
        if version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"{self.transport.description} wants MCP protocol version {version!r}; appsdk speaks "
                + ", ".join((*HANDSHAKE_PROTOCOL_VERSIONS, modern.MODERN_VERSION)),
                detail=json.dumps(result),
            )
        if self.protocol != AUTO and version != self.protocol and self.protocol != LEGACY_SSE_VERSION:
            raise ProtocolError(
                f"--protocol {self.protocol}: {self.transport.description} answered the handshake with {version}",
                detail=json.dumps(result),
            )
        self.transport.set_protocol_version(version)
        self.initialized = result
        info = result.get("serverInfo") or {}
        self._server = ServerInfo(
            protocol_version=version,
            name=str(info.get("name", "")),
            version=str(info.get("version", "")),
            capabilities=result.get("capabilities") or {},
            instructions=result.get("instructions"),
        )
        self.era = Era(version, self._kind)
        self.notify("notifications/initialized")
        return self._server

    def discover(self) -> dict[str, Any]:
        """`server/discover`, sent in the modern era whatever the connection speaks."""
        try:
            result = self._exchange("server/discover", None, modern_era=True)
        except ProtocolError as problem:
            if problem.code != modern.HEADER_MISMATCH or self._encode_all_headers:
                raise
            self._encode_all_headers = True
            result = self._exchange("server/discover", None, modern_era=True)
        self.discovered = result
        return result

    @staticmethod
    def _info_from_discover(result: dict[str, Any]) -> ServerInfo:
        meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
        info = meta.get(modern.SERVER_INFO_META) if isinstance(meta.get(modern.SERVER_INFO_META), dict) else {}
        return ServerInfo(
            protocol_version=modern.MODERN_VERSION,
            name=str(info.get("name", "")),
            version=str(info.get("version", "")),
            capabilities=result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {},
            instructions=result.get("instructions") if isinstance(result.get("instructions"), str) else None,
        )

    # --- what appsdk asks ----------------------------------------------------------------------------

    def _paginated(self, method: str, key: str) -> dict[str, Any]:
        """All pages of a list method, as one result: {key: [...every item...]}."""
        items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = self.request(method, {"cursor": cursor} if cursor else None)
            items.extend(result.get(key) or [])
            cursor = result.get("nextCursor")
            if not cursor or cursor in seen:
                return {key: items}
            seen.add(cursor)

    def list_tools(self) -> list[dict[str, Any]]:
        self.tools_changed = False  # this list is the news
        return self.admit_tools(self._paginated("tools/list", "tools")["tools"])

    def admit_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tools a client may use (and their Mcp-Param-* headers learnt), from a list fetched or remembered."""
        if not self.modern:
            return tools
        # 2026-07-28: a client must leave out a tool whose x-mcp-header annotations break the rules.
        kept = []
        for tool in tools:
            schema = tool.get("inputSchema") if isinstance(tool, dict) else None
            reason = modern.invalid_header_annotation(schema)
            name = str(tool.get("name")) if isinstance(tool, dict) else "?"
            if reason is not None:
                self.dropped_tools[name] = reason
                self._header_maps.pop(name, None)
                continue
            self._header_maps[name] = modern.header_map(schema)
            kept.append(tool)
        return kept

    def list_resources(self) -> list[dict[str, Any]]:
        return self._paginated("resources/list", "resources")["resources"]

    def list_resource_templates(self) -> list[dict[str, Any]]:
        return self._paginated("resources/templates/list", "resourceTemplates")["resourceTemplates"]

    def offers_tool_tasks(self) -> bool:
        """Whether the server runs tools/call as a task (2025-11-25 `tasks.requests.tools.call`)."""
        tasks = self.server.capabilities.get("tasks") if self.server else None
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        return isinstance(tools, dict) and "call" in tools

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        meta: dict[str, Any] | None = None,
        *,
        as_task: bool = False,
        on_task: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """The CallToolResult as the server sent it; `isError` results are returned, not raised.

        `as_task`: send it as an MCP task (2025-11-25) and wait for its result with `tasks/result`, which
        answers once the task is done (a tool whose execution.taskSupport is "required" runs no other way).
        `on_task` hears the task the server created (its id and status) before that wait."""
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if as_task:
            params["task"] = {"ttl": TASK_TTL_MS}
        meta = dict(meta or {})
        if self.on_notification is not None:
            self._next_progress += 1
            meta.setdefault("progressToken", f"appsdk-{self._next_progress}")
            if self.modern:
                meta.setdefault(modern.LOG_LEVEL_META, "info")  # 2026-07-28 logs are opted into per request
        if meta:
            params["_meta"] = meta
        answer = self.request("tools/call", params)
        task = answer.get("task") if as_task else None
        if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
            return answer  # a plain call, or a server that ran it at once after all
        if on_task is not None:
            on_task(task)
        self._task_awaited = task["taskId"]
        try:
            return self.request("tasks/result", {"taskId": task["taskId"]})
        finally:
            self._task_awaited = None

    def read_resource(self, uri: str) -> dict[str, Any]:
        return self.request("resources/read", {"uri": uri})

    # --- Skills over MCP (SEP-2640): methods of an extension, asked only of a server that declares it ------

    @property
    def declares_skills(self) -> bool:
        extensions = self.server_capabilities().get("extensions")
        return isinstance(extensions, dict) and SKILLS_EXTENSION in extensions

    def server_capabilities(self) -> dict[str, Any]:
        """The server's capabilities ({} when it will not say). In 2026-07-28 a result's serverInfo stamp names
        the server but not its capabilities, and a cached era skips discovery: server/discover is asked once."""
        if self.modern and self.discovered is None:
            try:
                self._server = self._info_from_discover(self.discover())
            except AuthRequired:
                raise
            except ProtocolError:
                return {}
        return self.server.capabilities if self.server else {}

    def list_skills(self) -> list[dict[str, Any]]:
        """Every page of `skills/list`: each skill's entry (uri, frontmatter, resources with digests)."""
        return self._paginated("skills/list", "skills")["skills"]

    def get_skill(self, uri: str) -> dict[str, Any]:
        """The `skills/get` result for the skill whose SKILL.md is at `uri` (its entry under "skill")."""
        return self.request("skills/get", {"uri": uri})


def _unreachable(problem: AppsdkError) -> bool:
    """A failure that says nothing about eras: nothing answered at all, or it answered too slowly."""
    return isinstance(problem, ConnectError)


def _supported_versions(problem: ProtocolError) -> list[str]:
    data = (problem.error or {}).get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def connect(
    url: str | None = None,
    *,
    stdio: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    trace: Tracer | None = None,
    cwd: str | None = None,
    token: str | None = None,
    protocol: str = AUTO,
    eras: EraCache | None = None,
    on_elicit: Elicitor | None = None,
    on_notification: NotificationSink | None = None,
    on_unauthorized: Callable[[AuthRequired], str] | None = None,
    ui: bool = True,
) -> McpClient:
    """A client for the server at `url` (with a bearer `token` if given), or for the stdio server that
    `stdio` starts (a shell-style command). `eras` remembers what each URL spoke (None: a fresh cache
    backed by APPSDK_HOME). `ui`: offer the MCP Apps extension (a host that renders widgets)."""
    if stdio is not None:
        from appsdk_cli.client.stdio import StdioTransport

        transport: Transport = StdioTransport(stdio, timeout=timeout, cwd=cwd)
    elif url is not None:
        transport = HttpTransport(url, timeout=timeout, token=token)
    else:
        raise ValueError("connect() needs a url or a stdio command")
    return McpClient(
        transport,
        trace=trace,
        protocol=protocol,
        eras=eras if eras is not None else EraCache(),
        on_elicit=on_elicit,
        on_notification=on_notification,
        on_unauthorized=on_unauthorized,
        ui=ui,
    )
