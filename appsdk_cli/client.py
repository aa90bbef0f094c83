"""One MCP client for every appsdk capability: connect by URL or stdio, list, call, read.

A lean JSON-RPC client on the standard library, not `mcp.Client`. Importing `mcp` costs about 0.7 s and
`mcp_types` alone about 0.2 s on our machines, while a whole `appsdk call` must finish within a few
tenths of a second (see benchmarks/call.py); `http.client` + `json` cost about 0.03 s. The shapes we
send and receive are still the mcp types': tests/test_client.py validates every message this client
puts on the wire, and every result it hands back, against the `mcp_types` models.

Measured end to end (`appsdk call list-books --json`, median of 7, 2 cores): 0.20 s as is; 0.29 s with
`mcp_types` imported to build and validate messages (pydantic is already loaded by typer, so the models
add ~0.09 s); 0.72 s with `mcp`. The mcp_types variant would fit the budget too, but with half the
margin, and validating answers at run time would refuse slightly-off servers that other clients
tolerate: a debugging tool should show what the server sent (judging it is `appsdk check`'s job).
Results are therefore the wire dicts (camelCase), untouched, so `--json` prints exactly what was sent.

The HTTP transport speaks the 2025 streamable-HTTP handshake, which every server speaks: `initialize`,
then `notifications/initialized`, then requests carrying `Mcp-Session-Id` (when the server gave one) and
`MCP-Protocol-Version`; answers come as JSON or as a `text/event-stream`; a session is DELETEd on close.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from appsdk_cli import __version__, httpguard
from appsdk_cli.errors import AppsdkError

if TYPE_CHECKING:
    import http.client

# The versions reachable by the initialize handshake, newest last; tests check this against
# mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS so the two cannot drift apart unnoticed.
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_PROTOCOL_VERSIONS[-1]
CLIENT_INFO = {"name": "appsdk", "version": __version__}
DEFAULT_TIMEOUT = 30.0
METHOD_NOT_FOUND = -32601

Message = dict[str, Any]
# Sees every JSON-RPC message: ("send" | "receive", message). Tests use it to check the wire shapes.
Tracer = Callable[[str, Message], None]


class ConnectError(AppsdkError):
    """The server could not be reached or started (exit 1)."""


class ProtocolError(AppsdkError):
    """The server answered, but not as MCP allows, or with a JSON-RPC error (exit 1)."""

    def __init__(self, message: str, *, code: int | None = None, detail: str | None = None) -> None:
        super().__init__(message, detail=detail)
        self.code = code


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

    def exchange(self, message: Message, *, on_other: Callable[[Message], Message | None]) -> Message | None: ...

    def set_protocol_version(self, version: str) -> None: ...

    def close(self) -> None: ...


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
        self._target = self._split(url)

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

    def _headers(self) -> dict[str, str]:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "User-Agent": f"appsdk/{__version__}",
            **self.extra_headers,
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def set_protocol_version(self, version: str) -> None:
        self.protocol_version = version

    def _request(self, method: str, body: bytes | None) -> http.client.HTTPResponse:
        """Send one HTTP request, following 307/308 redirects (e.g. /mcp -> /mcp/)."""
        import http.client

        for _ in range(4):
            reused = self._connection is not None
            connection = self._connect()
            path = self._target[3]
            try:
                connection.request(method, path, body=body, headers=self._headers())
                # Kept for the deadline's watchdog: a response that will close holds the socket alone.
                self._socket = connection.sock
                response = connection.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as problem:
                # A kept-alive connection the server had already closed: the request never arrived.
                self._drop_connection()
                if reused:
                    continue
                raise self._unreachable(problem) from problem
            except OSError as problem:
                self._drop_connection()
                raise self._unreachable(problem) from problem
            if response.status in (307, 308) and response.getheader("Location"):
                response.read()
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
        reason = getattr(problem, "strerror", None) or str(problem) or type(problem).__name__
        return ConnectError(f"cannot reach the MCP server at {self.description}: {reason}", detail=repr(problem))

    def exchange(self, message: Message, *, on_other: Callable[[Message], Message | None]) -> Message | None:
        # --timeout bounds the whole answer: a server dripping bytes must not hold us (see httpguard).
        import http.client

        deadline = httpguard.Deadline(self.timeout)
        with httpguard.watchdog(deadline, self._abort):
            try:
                return self._exchange(message, on_other)
            except (AppsdkError, OSError, ValueError, RecursionError, http.client.HTTPException) as problem:
                self._drop_connection()
                if deadline.expired:
                    raise ConnectError(f"{self.description} did not answer within {self.timeout:g} s") from problem
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

    def _exchange(self, message: Message, on_other: Callable[[Message], Message | None]) -> Message | None:
        response = self._request("POST", json.dumps(message).encode())
        if "id" in message and message.get("method") == "initialize":
            session = response.getheader("Mcp-Session-Id")
            if session:
                self.session_id = session
        status = response.status
        if "id" not in message or status == 202:
            # Notifications (and responses we send) get 202 Accepted with no body.
            body = response.read()
            if status >= 400:
                raise self._http_error(status, body, response=response)
            return None
        content_type = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if status >= 400:
            raise self._http_error(status, response.read(), content_type, response=response)
        try:
            if content_type == "text/event-stream":
                return self._read_stream(response, message["id"], on_other)
            if content_type == "application/json":
                return self._expect_response(json.loads(response.read()), message["id"])
        except TimeoutError as problem:
            self._drop_connection()
            raise ConnectError(f"{self.description} did not answer within {self.timeout:g} s") from problem
        except (ValueError, UnicodeDecodeError) as problem:
            self._drop_connection()
            raise ProtocolError(f"{self.description} sent a body that is not JSON: {problem}") from problem
        body = response.read()
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
        for event in parse_sse(iter(response.readline, b"")):
            if event.event != "message" or not event.data.strip():
                continue  # e.g. a priming event that carries only an id
            message = json.loads(event.data)
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                # The rest of the stream is not ours to wait for; a half-read response spoils the connection.
                self._drop_connection()
                return message
            reply = on_other(message)
            if reply is not None:
                self._post_reply(reply)
        self._drop_connection()
        raise ProtocolError(f"{self.description} closed the event stream before answering request {request_id}")

    def _post_reply(self, reply: Message) -> None:
        """Answer a request the server made mid-stream, on a connection of its own."""
        side = HttpTransport(self.url, timeout=self.timeout, headers=self.extra_headers)  # the token too
        side.session_id, side.protocol_version = self.session_id, self.protocol_version
        try:
            side.exchange(reply, on_other=lambda _: None)
        finally:
            side._drop_connection()

    def _http_error(
        self, status: int, body: bytes, content_type: str = "", response: http.client.HTTPResponse | None = None
    ) -> AppsdkError:
        text = body[:2000].decode("utf-8", "replace")
        challenge = parse_bearer_challenge(response.getheader("WWW-Authenticate") or "") if response else None
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
        # A JSON-RPC error in the body says more than the status line.
        try:
            error = json.loads(text).get("error") if text else None
        except (ValueError, AttributeError):
            error = None
        why = f": {error.get('message')}" if isinstance(error, dict) and error.get("message") else ""
        hints = {
            404: " (wrong path? MCP servers usually serve /mcp; or the session expired)",
            421: " (the server refused the Host header: DNS-rebinding protection)",
            403: " (the server refused the Origin)",
            401: " (the server wants authorization)",
        }
        return ProtocolError(f"{self.description} answered HTTP {status}{why}{hints.get(status, '')}", detail=text)

    def close(self) -> None:
        if self.session_id:
            # Ending the session frees it on the server; a server that does not allow DELETE answers 405.
            with contextlib.suppress(AppsdkError):
                self._request("DELETE", None).read()
            self.session_id = None
        self._drop_connection()


# --- stdio -------------------------------------------------------------------------------------------


class StdioTransport:
    """A server started as a child process, speaking newline-delimited JSON-RPC on its stdin/stdout."""

    def __init__(self, command: str, *, timeout: float = DEFAULT_TIMEOUT, cwd: str | None = None) -> None:
        self.description = f"stdio server `{command}`"
        self.timeout = timeout
        try:
            argv = shlex.split(command)
        except ValueError as problem:
            raise ConnectError(f"cannot parse --stdio command {command!r}: {problem}") from problem
        if not argv:
            raise ConnectError("--stdio needs a command, e.g. --stdio 'python server.py'")
        # The server's log goes to a file, shown with --verbose when something fails.
        self._log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=cwd, bufsize=0
            )
        except OSError as problem:
            self._log.close()
            raise ConnectError(f"cannot start {self.description}: {problem.strerror or problem}") from problem
        self._buffer = b""

    def set_protocol_version(self, version: str) -> None:
        pass  # stdio carries no headers

    def _server_log(self) -> str:
        self._log.seek(0)
        return self._log.read()[-4000:].decode("utf-8", "replace")

    def _send(self, message: Message) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
        except (BrokenPipeError, OSError) as problem:
            raise self._died() from problem

    def _died(self) -> ConnectError:
        # Its output closing usually means it is exiting: give it a moment so we can say with what code.
        try:
            code: int | None = self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        state = f"exited with {code}" if code is not None else "closed its output"
        return ConnectError(f"{self.description} {state} before answering", detail=self._server_log())

    def _read_line(self, deadline: float) -> bytes:
        import selectors

        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    raise ConnectError(f"{self.description} did not answer within {self.timeout:g} s")
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    raise self._died()
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def exchange(self, message: Message, *, on_other: Callable[[Message], Message | None]) -> Message | None:
        self._send(message)
        if "id" not in message or "method" not in message:
            return None
        deadline = time.monotonic() + self.timeout
        while True:
            line = self._read_line(deadline).strip()
            if not line:
                continue
            try:
                incoming = json.loads(line)
            except RecursionError:
                raise ProtocolError(f"{self.description} sent JSON nested too deeply to read") from None
            except ValueError as problem:
                raise ProtocolError(
                    f"{self.description} wrote something that is not JSON-RPC on stdout (logs belong on stderr)",
                    detail=line[:2000].decode("utf-8", "replace"),
                ) from problem
            if isinstance(incoming, dict) and incoming.get("id") == message["id"] and "method" not in incoming:
                return incoming
            reply = on_other(incoming)
            if reply is not None:
                self._send(reply)

    def close(self) -> None:
        # The stdio shutdown the spec describes: close stdin, wait, then SIGTERM, then SIGKILL.
        if self.process.stdin:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        self._log.close()


# --- the client --------------------------------------------------------------------------------------


@dataclass
class ServerInfo:
    protocol_version: str
    name: str
    version: str
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None


class McpClient:
    """The 2025 handshake and the requests appsdk needs, over any Transport.

    Use as a context manager: the handshake runs on enter, the session ends on exit.
    """

    def __init__(self, transport: Transport, *, trace: Tracer | None = None) -> None:
        self.transport = transport
        self.trace = trace
        self.server: ServerInfo | None = None
        self._next_id = 0

    def __enter__(self) -> McpClient:
        try:
            self.initialize()
        except BaseException:
            self.transport.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.transport.close()

    def _send(self, message: Message) -> Message | None:
        if self.trace:
            self.trace("send", message)
        answer = self.transport.exchange(message, on_other=self._on_server_message)
        if answer is not None and self.trace:
            self.trace("receive", answer)
        return answer

    def _on_server_message(self, message: Message) -> Message | None:
        """Notifications (logs, progress) are dropped; requests get the answers of a client with no capabilities."""
        if self.trace:
            self.trace("receive", message)
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return None
        if message["method"] == "ping":
            reply: Message = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": METHOD_NOT_FOUND, "message": f"appsdk does not support {message['method']}"},
            }
        if self.trace:
            self.trace("send", reply)
        return reply

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; return its result, or raise ProtocolError for a JSON-RPC error."""
        self._next_id += 1
        message: Message = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        answer = self._send(message)
        if not isinstance(answer, dict):
            raise ProtocolError(f"{self.transport.description} sent no answer to {method}")
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            code = error.get("code")
            raise ProtocolError(
                f"{method} failed: {error.get('message', 'unknown error')} (JSON-RPC error {code})",
                code=code if isinstance(code, int) else None,
                detail=json.dumps(answer, indent=2),
            )
        result = answer.get("result")
        if not isinstance(result, dict):
            raise ProtocolError(
                f"{self.transport.description} answered {method} without a result object", detail=json.dumps(answer)
            )
        return result

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def initialize(self) -> ServerInfo:
        result = self.request(
            "initialize",
            {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
        )
        version = result.get("protocolVersion")
        if version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"{self.transport.description} wants MCP protocol version {version!r}; appsdk speaks "
                + ", ".join(HANDSHAKE_PROTOCOL_VERSIONS),
                detail=json.dumps(result),
            )
        self.transport.set_protocol_version(version)
        info = result.get("serverInfo") or {}
        self.server = ServerInfo(
            protocol_version=version,
            name=str(info.get("name", "")),
            version=str(info.get("version", "")),
            capabilities=result.get("capabilities") or {},
            instructions=result.get("instructions"),
        )
        self.notify("notifications/initialized")
        return self.server

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
        return self._paginated("tools/list", "tools")["tools"]

    def list_resources(self) -> list[dict[str, Any]]:
        return self._paginated("resources/list", "resources")["resources"]

    def call_tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """The CallToolResult as the server sent it; `isError` results are returned, not raised."""
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params)

    def read_resource(self, uri: str) -> dict[str, Any]:
        return self.request("resources/read", {"uri": uri})


def connect(
    url: str | None = None,
    *,
    stdio: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    trace: Tracer | None = None,
    cwd: str | None = None,
    token: str | None = None,
) -> McpClient:
    """A client for the server at `url` (with a bearer `token` if given), or for the stdio server that
    `stdio` starts (a shell-style command)."""
    if stdio is not None:
        transport: Transport = StdioTransport(stdio, timeout=timeout, cwd=cwd)
    elif url is not None:
        transport = HttpTransport(url, timeout=timeout, token=token)
    else:
        raise ValueError("connect() needs a url or a stdio command")
    return McpClient(transport, trace=trace)
