"""HTTP plumbing shared by both protocol eras: errors, the event-stream parser, streamable HTTP.

Streamable HTTP carries both eras on one kept-alive `http.client` connection. In the 2025 handshake era
requests carry `Mcp-Session-Id` (when the server gave one) and `MCP-Protocol-Version`, and a session is
DELETEd on close; in the 2026-07-28 era every POST is self-describing (the session layer passes the
`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers with each request) and there
is no session. Answers come as JSON or as a `text/event-stream` in both.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from appsdk_cli import __version__, httpguard
from appsdk_cli.errors import AppsdkError

if TYPE_CHECKING:
    import http.client

CLIENT_INFO = {"name": "appsdk", "version": __version__}
DEFAULT_TIMEOUT = 30.0
METHOD_NOT_FOUND = -32601
PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"

Message = dict[str, Any]
# Sees every JSON-RPC message: ("send" | "receive", message). Tests use it to check the wire shapes.
Tracer = Callable[[str, Message], None]


class ConnectError(AppsdkError):
    """The server could not be reached or started (exit 1)."""


class ServerDropped(ConnectError):
    """The server took the request and closed the connection without answering: it crashed (or was
    stopped) while handling it. Not sent again: the request may have done its work."""


class ProtocolError(AppsdkError):
    """The server answered, but not as MCP allows, or with a JSON-RPC error (exit 1).

    `status` is the HTTP status when the answer was an HTTP error; `error` the JSON-RPC error object
    when there was one (in a body or a response). The era negotiation reads both.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        detail: str | None = None,
        status: int | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, detail=detail)
        self.code = code
        self.status = status
        self.error = error


class AuthRequired(ProtocolError):
    """The server answered 401: it wants a bearer token (exit 1 unless appsdk can sign in).

    `resource_metadata` and `scope` come from the `WWW-Authenticate: Bearer` challenge (RFC 9728 / 6750).
    """

    def __init__(
        self, message: str, *, resource_metadata: str | None, scope: str | None, error: str | None, detail: str | None
    ) -> None:
        super().__init__(message, detail=detail)
        self.resource_metadata = resource_metadata
        self.scope = scope
        self.error = error


def parse_bearer_challenge(header: str) -> dict[str, str] | None:
    """The auth-params of a `Bearer` challenge in a WWW-Authenticate header, or None if there is none."""
    import re

    match = re.search(r"(?:^|,\s*)Bearer\b(.*)", header or "", re.IGNORECASE)
    if match is None:
        return None
    params: dict[str, str] = {}
    for name, quoted, bare in re.findall(r'([A-Za-z_][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))', match.group(1)):
        params[name.lower()] = quoted.replace('\\"', '"') if quoted or not bare else bare
    return params


class Transport(Protocol):
    """Carries JSON-RPC messages; `exchange` returns the response to a request (None for a notification)."""

    description: str

    def exchange(
        self,
        message: Message,
        *,
        on_other: Callable[[Message], Message | None],
        headers: dict[str, str] | None = None,
    ) -> Message | None: ...

    def set_protocol_version(self, version: str) -> None: ...

    def set_token(self, token: str) -> None: ...

    def close(self) -> None: ...

    def send_aside(self, message: Message, *, timeout: float | None = None) -> None:
        """Send a notification while another thread waits on this transport's answer (a cancellation)."""
        ...

    def abandon(self) -> None:
        """Make the thread waiting on this transport's answer give up now (it gets a ConnectError)."""
        ...


# --- server-sent events ------------------------------------------------------------------------------


@dataclass
class SseEvent:
    data: str
    event: str = "message"
    id: str | None = None


def parse_sse(lines: Iterable[bytes]) -> Iterator[SseEvent]:
    """Events from a text/event-stream, per the HTML standard: `data:` lines join with newlines,
    a blank line dispatches, `:` lines are comments, one space after the colon is dropped."""
    data: list[str] = []
    event = ""
    last_id: str | None = None
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield SseEvent("\n".join(data), event or "message", last_id)
            data, event = [], ""
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
    # A stream that ends without a blank line still delivers its last event.
    if data:
        yield SseEvent("\n".join(data), event or "message", last_id)


# --- streamable HTTP ---------------------------------------------------------------------------------


class HttpTransport:
    """Streamable HTTP on one kept-alive `http.client` connection."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        headers: dict[str, str] | None = None,
        token: str | None = None,
    ) -> None:
        self.url = url
        self.description = url
        self.timeout = timeout
        self.extra_headers = dict(headers or {})
        if token:
            # Never shown: --verbose details and errors are built from the server's answers, not our headers.
            self.extra_headers["Authorization"] = f"Bearer {token}"
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._connection: http.client.HTTPConnection | None = None
        self._socket: Any = None
        # Set by abandon(), from another thread, for the request in flight: its dropped connection must
        # end that request, not look like a stale kept-alive one that is sent again.
        self._abandoned = False
        self._target = self._split(url)
        # Every body and event is read up to this many bytes: a server's endless answer ends there.
        self.max_message_bytes = httpguard.message_limit()

    @staticmethod
    def _split(url: str) -> tuple[str, str, int | None, str]:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConnectError(f"{url!r} is not an http(s) URL of an MCP server, e.g. http://127.0.0.1:8000/mcp")
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return parts.scheme, parts.hostname, parts.port, path

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            import http.client

            scheme, host, port, _ = self._target
            if scheme == "https":
                self._connection = http.client.HTTPSConnection(host, port, timeout=self.timeout)
            else:
                self._connection = http.client.HTTPConnection(host, port, timeout=self.timeout)
        return self._connection

    def _drop_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _headers(self, per_request: dict[str, str] | None = None) -> dict[str, str]:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "User-Agent": f"appsdk/{__version__}",
            **self.extra_headers,
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers[PROTOCOL_VERSION_HEADER] = self.protocol_version
        # Per-request headers win, whatever their case: a routing header sent twice is a -32020 error.
        for name, value in (per_request or {}).items():
            for existing in [k for k in headers if k.lower() == name.lower()]:
                del headers[existing]
            headers[name] = value
        return headers

    def set_protocol_version(self, version: str) -> None:
        self.protocol_version = version

    def set_token(self, token: str) -> None:
        self.extra_headers["Authorization"] = f"Bearer {token}"

    def _request(
        self, method: str, body: bytes | None, headers: dict[str, str] | None = None
    ) -> http.client.HTTPResponse:
        """Send one HTTP request, following 307/308 redirects (e.g. /mcp -> /mcp/)."""
        import http.client

        self._abandoned = False
        for _ in range(4):
            # A connection the last answer closed (`Connection: close`) has no socket: the next request
            # opens a fresh one, so a drop on it means the server got the request, not a stale socket.
            reused = self._connection is not None and self._connection.sock is not None
            if reused and _closed_while_idle(self._connection.sock):  # type: ignore[union-attr]
                # The server ended the kept-alive connection since the last answer: start a fresh one now
                # rather than send into it, since a drop after sending is not something to send again.
                self._drop_connection()
                reused = False
            connection = self._connect()
            path = self._target[3]
            try:
                connection.request(method, path, body=body, headers=self._headers(headers))
                # Kept for the deadline's watchdog: a response that will close holds the socket alone.
                self._socket = connection.sock
                response = connection.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as problem:
                self._drop_connection()
                if self._abandoned:
                    self._abandoned = False
                    raise ConnectError(
                        f"the request to {self.description} was abandoned before its answer came"
                    ) from None
                # The write failed on a kept-alive connection the server had just closed: the request
                # never arrived. A drop after it went (the connection was open just before) means the
                # server may have run it: a crash mid-call, not to be sent twice.
                if reused and isinstance(problem, BrokenPipeError):
                    continue
                if isinstance(problem, BrokenPipeError):
                    raise self._unreachable(problem) from problem
                raise ServerDropped(
                    f"the MCP server at {self.description} closed the connection without answering",
                    detail=repr(problem),
                ) from problem
            except OSError as problem:
                self._drop_connection()
                raise self._unreachable(problem) from problem
            if response.status in (307, 308) and response.getheader("Location"):
                self.read_body(response)
                # A token goes only to the origin it was given for; https -> http is refused (httpguard).
                self.url, self.extra_headers = httpguard.redirect(
                    self.url, response.getheader("Location") or "", self.extra_headers
                )
                new_target = self._split(self.url)
                if new_target[:3] != self._target[:3]:
                    self._drop_connection()
                self._target = new_target
                continue
            return response
        raise ConnectError(f"{self.description} redirects too often")

    def _unreachable(self, problem: BaseException) -> ConnectError:
        if _plain_http_answered_tls(problem) and self.url.lower().startswith("https://"):
            plain = "http://" + self.url[len("https://") :]
            origin = self.url[len("https://") :].split("/", 1)[0]
            return ConnectError(
                f"the server at {origin} speaks plain http, not https; use {plain}", detail=repr(problem)
            )
        reason = getattr(problem, "strerror", None) or str(problem) or type(problem).__name__
        return ConnectError(f"cannot reach the MCP server at {self.description}: {reason}", detail=repr(problem))

    def read_body(self, response: http.client.HTTPResponse) -> bytes:
        """The answer's body, bounded (httpguard.TooLarge past the limit)."""
        return httpguard.read_body(response, self.max_message_bytes)

    def events(self, response: http.client.HTTPResponse) -> Iterator[SseEvent]:
        """The answer's events, each bounded (httpguard.TooLarge past the limit)."""
        return parse_sse(httpguard.event_lines(response.readline, self.max_message_bytes))

    def too_large(self) -> ProtocolError:
        return ProtocolError(httpguard.too_large_message(self.description, self.max_message_bytes))

    def exchange(
        self,
        message: Message,
        *,
        on_other: Callable[[Message], Message | None],
        headers: dict[str, str] | None = None,
    ) -> Message | None:
        # --timeout bounds the whole answer: a server dripping bytes must not hold us (see httpguard).
        import http.client

        deadline = httpguard.Deadline(self.timeout)
        with httpguard.watchdog(deadline, self._abort):
            try:
                return self._exchange(message, on_other, headers)
            except KeyboardInterrupt:
                # Half an exchange: the connection cannot carry another (the session's DELETE among them).
                self._drop_connection()
                raise
            except (
                AppsdkError,
                OSError,
                ValueError,
                RecursionError,
                http.client.HTTPException,
                httpguard.TooLarge,
            ) as problem:
                self._drop_connection()
                if deadline.expired:
                    raise ConnectError(f"{self.description} did not answer within {self.timeout:g} s") from problem
                if isinstance(problem, httpguard.TooLarge):
                    raise self.too_large() from None
                if isinstance(problem, AppsdkError):
                    raise
                if isinstance(problem, RecursionError):
                    raise ProtocolError(f"{self.description} sent JSON nested too deeply to read") from None
                # A broken status line, a truncated body: the server does not speak HTTP as it should.
                raise ProtocolError(
                    f"{self.description} sent a broken HTTP answer: {type(problem).__name__}", detail=repr(problem)
                ) from problem

    def _abort(self) -> None:
        httpguard.shutdown_socket(self._socket)

    def abandon(self) -> None:
        # Only the request's connection goes; a session id stays good for the next request.
        self._abandoned = True
        self._abort()

    def _exchange(
        self, message: Message, on_other: Callable[[Message], Message | None], headers: dict[str, str] | None
    ) -> Message | None:
        try:
            response = self._request("POST", json.dumps(message).encode(), headers)
        except ServerDropped as dropped:
            method = str(message.get("method"))
            if method == "tools/call":
                method += f" {(message.get('params') or {}).get('name')}"
            dropped.message = (
                f"the MCP server at {self.description} crashed mid-call: it closed the connection without "
                f"answering {method}"
            )
            raise
        if message.get("method") == "initialize":
            session = response.getheader("Mcp-Session-Id")
            if session:
                self.session_id = session
        status = response.status
        if "id" not in message or status == 202:
            # Notifications (and responses we send) get 202 Accepted with no body.
            body = self.read_body(response)
            if status >= 400:
                raise self._http_error(status, body, response=response)
            return None
        content_type = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if status >= 400:
            raise self._http_error(status, self.read_body(response), content_type, response=response)
        try:
            if content_type == "text/event-stream":
                return self._read_stream(response, message["id"], on_other)
            if content_type == "application/json":
                return self._expect_response(json.loads(self.read_body(response)), message["id"])
        except TimeoutError as problem:
            self._drop_connection()
            raise ConnectError(f"{self.description} did not answer within {self.timeout:g} s") from problem
        except (ValueError, UnicodeDecodeError) as problem:
            self._drop_connection()
            raise ProtocolError(f"{self.description} sent a body that is not JSON: {problem}") from problem
        body = self.read_body(response)
        raise ProtocolError(
            f"{self.description} answered with Content-Type {content_type or 'none'!r}, not JSON or an event stream;"
            " is this the MCP endpoint (usually ending in /mcp)?",
            detail=body[:2000].decode("utf-8", "replace"),
        )

    def _expect_response(self, value: Any, request_id: Any) -> Message:
        # A JSON body may be a batch (2025-03-26); pick our answer out of it.
        candidates = value if isinstance(value, list) else [value]
        for candidate in candidates:
            if isinstance(candidate, dict) and candidate.get("id") == request_id:
                return candidate
        raise ProtocolError(f"{self.description} answered without a response to request {request_id}")

    def _read_stream(
        self, response: http.client.HTTPResponse, request_id: Any, on_other: Callable[[Message], Message | None]
    ) -> Message:
        for event in self.events(response):
            if event.event != "message" or not event.data.strip():
                continue  # e.g. a priming event that carries only an id
            message = json.loads(event.data)
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                # The rest of the stream is not ours to wait for; a half-read response spoils the connection.
                self._drop_connection()
                return message
            try:
                reply = on_other(message)
            except BaseException:
                self._drop_connection()  # the rest of this answer will never be read
                raise
            if reply is not None:
                self.send_aside(reply)
        self._drop_connection()
        raise ProtocolError(f"{self.description} closed the event stream before answering request {request_id}")

    def send_aside(self, message: Message, *, timeout: float | None = None) -> None:
        """Send on a connection of its own, in this session: an answer to a request the server made
        mid-stream, or a cancellation while the request's own connection still waits."""
        side = HttpTransport(self.url, timeout=timeout or self.timeout, headers=self.extra_headers)  # the token too
        side.session_id, side.protocol_version = self.session_id, self.protocol_version
        try:
            side.exchange(message, on_other=lambda _: None)
        finally:
            side._drop_connection()

    def _http_error(
        self,
        status: int,
        body: bytes,
        content_type: str = "",
        response: http.client.HTTPResponse | None = None,
    ) -> AppsdkError:
        text = body[:2000].decode("utf-8", "replace")
        challenge = parse_bearer_challenge(response.getheader("WWW-Authenticate") or "") if response else None
        if status == 403 and challenge and challenge.get("error") == "insufficient_scope":
            # RFC 6750 §3.1: the token is good but asks for too little; a sign-in for more scopes can fix it.
            return AuthRequired(
                f"{self.description} needs more scope: HTTP 403 (insufficient_scope: {challenge.get('scope', '?')})",
                resource_metadata=challenge.get("resource_metadata"),
                scope=challenge.get("scope"),
                error="insufficient_scope",
                detail=text,
            )
        if status == 401:
            challenge = challenge or {}
            refused = "refused the token" if "Authorization" in self.extra_headers else "wants you to sign in"
            why = f" ({challenge['error_description']})" if challenge.get("error_description") else ""
            return AuthRequired(
                f"{self.description} {refused}: HTTP 401{why}",
                resource_metadata=challenge.get("resource_metadata"),
                scope=challenge.get("scope"),
                error=challenge.get("error"),
                detail=text,
            )
        # A JSON-RPC error in the body says more than the status line (a 2026-07-28 server always sends one).
        try:
            answer = json.loads(text) if text else None
        except ValueError:
            answer = None
        error = answer.get("error") if isinstance(answer, dict) else None
        if not isinstance(error, dict):
            error = None
        why = f": {error.get('message')}" if error and error.get("message") else ""
        if error is not None and answer.get("id") is None:
            # No request id: the transport refused the request before any JSON-RPC layer read it (how 2025
            # servers refuse a 2026-07-28 POST), which says nothing about the method or its params.
            error = None
        code = error.get("code") if error and isinstance(error.get("code"), int) else None
        hints = {
            421: " (the server refused the Host header: DNS-rebinding protection)",
            403: " (the server refused the Origin)",
            401: " (the server wants authorization)",
        }
        if status == 404 and error is None:
            # Nothing MCP answered: no JSON-RPC body. With a session, the session is what is gone.
            hints[404] = (
                " (the session expired)"
                if self.session_id
                else " (wrong path? MCP servers usually serve /mcp, HTTP+SSE ones /sse)"
            )
        where = f"{self.description} answered HTTP {status}"
        return ProtocolError(f"{where}{why}{hints.get(status, '')}", detail=text, status=status, error=error, code=code)

    def close(self) -> None:
        if self.session_id:
            # Ending the session frees it on the server; a server that does not allow DELETE answers 405.
            with contextlib.suppress(AppsdkError, httpguard.TooLarge):
                self.read_body(self._request("DELETE", None))
            self.session_id = None
        self._drop_connection()


# What OpenSSL says when the "TLS" answer is plain text: an HTTP server answering the ClientHello with a 400
# (1.1 and 3.0 say wrong version number; 3.2 and later, record layer failure or packet length too long).
_PLAIN_TEXT_TLS_REASONS = frozenset({"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"})


def _plain_http_answered_tls(problem: BaseException) -> bool:
    import ssl

    return (
        isinstance(problem, ssl.SSLError)
        and not isinstance(problem, ssl.SSLCertVerificationError)
        and getattr(problem, "reason", None) in _PLAIN_TEXT_TLS_REASONS
    )


def _closed_while_idle(sock: Any) -> bool:
    """Whether the server closed an idle kept-alive connection: it has something to read (EOF), when an
    idle HTTP/1.1 connection has nothing."""
    import select

    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
