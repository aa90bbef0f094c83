"""The ASGI wrappers around the app a worker serves: each one request-level rule, none of the process.

- fallback_app: what answers while the app is broken (a JSON-RPC error for a POST, 503 otherwise);
- StreamCloser: ends the open event streams when a worker retires (other connections stay open
  across requests and reloads: handoff.py moves them to the next worker);
- AuthForwarder: hands the development authorization server's paths to the supervisor;
- DevIdentity: tells a loopback caller which project this dev serves, so a state file can be checked.

They import mcp and starlette at the top, as worker.py does: the supervisor imports worker.py, and
with it this module, once before its first fork, so no worker pays for them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from appsdk_cli.netloc import allowed_host_header, is_forwarding_header, is_loopback_address
from appsdk_cli.project import DEV_IDENTITY_PATH

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# A JSON-RPC "internal error": the request was fine, the server could not run it.
_INTERNAL_ERROR = -32603


class MessageSender(Protocol):
    """The worker's end of its pipe to the supervisor (worker.Channel)."""

    def send(self, message: dict[str, Any]) -> None: ...


def fallback_app(message: str, security: Any) -> ASGIApp:
    """What serves while the app is broken: every request gets the error at once, not a hang."""
    checker = TransportSecurityMiddleware(security)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        is_post = request.method == "POST"
        rejected = await checker.validate_request(request, is_post=is_post)
        response: Response
        if rejected is not None:
            response = rejected
        elif is_post:
            response = JSONResponse(_jsonrpc_errors(await request.body(), message))
        else:
            response = PlainTextResponse(message + "\n", status_code=503)
        await response(scope, receive, send)

    return app


def _jsonrpc_errors(body: bytes, message: str) -> Any:
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None

    def error_for(request: Any) -> dict[str, Any]:
        request_id = request.get("id") if isinstance(request, dict) else None
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": _INTERNAL_ERROR, "message": message}}

    if isinstance(parsed, list):
        return [error_for(item) for item in parsed]
    return error_for(parsed)


class StreamCloser:
    """Ends the event streams a retired worker still holds.

    A stream request is a GET that accepts text/event-stream (GET /mcp, the legacy GET /sse). Its
    responder (sse-starlette) listens for `http.disconnect`; on close_all() every stream's receive()
    returns that at once, so the stream ends cleanly and the worker can exit. Other requests finish.
    """

    def __init__(self) -> None:
        self._closed = asyncio.Event()

    def close_all(self) -> None:
        self._closed.set()

    def wrap(self, app: ASGIApp) -> ASGIApp:
        closed = self._closed

        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or not is_stream_request(scope):
                await app(scope, receive, send)
                return

            async def receive_until_closed() -> MutableMapping[str, Any]:
                if closed.is_set():
                    return {"type": "http.disconnect"}
                inner = asyncio.ensure_future(receive())
                ending = asyncio.ensure_future(closed.wait())
                done, _ = await asyncio.wait({inner, ending}, return_when=asyncio.FIRST_COMPLETED)
                if inner in done:
                    ending.cancel()
                    return inner.result()
                inner.cancel()
                return {"type": "http.disconnect"}

            await app(scope, receive_until_closed, send)

        return wrapped


def is_stream_request(scope: Scope) -> bool:
    """A GET that accepts text/event-stream: a stream that stays open until one side ends it."""
    if scope.get("method") != "GET":
        return False
    accept = b",".join(value for name, value in scope.get("headers", []) if name.lower() == b"accept")
    return b"text/event-stream" in accept


class AuthForwarder:
    """Hands the authorization server's paths to the supervisor, which holds its state across reloads.

    A request becomes one `auth-http` message on the worker's pipe; the answer comes back as
    `auth-http-reply` and is matched by id. Everything else goes to the app untouched.
    """

    def __init__(self, channel: MessageSender) -> None:
        from appsdk_cli.auth.server import AUTH_PATHS, MAX_BODY

        self._channel = channel
        self._paths = frozenset(AUTH_PATHS)
        self._max_body = MAX_BODY
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0

    def wrap(self, app: ASGIApp, security: Any) -> ASGIApp:
        from appsdk_cli.auth.server import never_framed

        checker = TransportSecurityMiddleware(security)

        # Its refusals too are the authorization server's pages: none may be framed.
        @never_framed
        async def authorization_server(scope: Scope, receive: Receive, send: Send) -> None:
            # The same DNS-rebinding protection as /mcp: a page on a foreign name must not sign anyone in.
            rejected = await checker.validate_request(Request(scope, receive), is_post=False)
            if rejected is not None:
                await rejected(scope, receive, send)
            else:
                await self._forward(scope, receive, send)

        async def routed(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or scope["path"] not in self._paths:
                await app(scope, receive, send)
                return
            await authorization_server(scope, receive, send)

        return routed

    async def _forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        import base64

        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > self._max_body:
                await PlainTextResponse("request body too large\n", status_code=413)(scope, receive, send)
                return
            if not message.get("more_body"):
                break
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._channel.send(
            {
                "type": "auth-http",
                "id": request_id,
                "method": scope["method"],
                "path": scope["path"],
                "query": scope.get("query_string", b"").decode("latin-1"),
                "headers": [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", [])],
                "body": base64.b64encode(body).decode(),
            }
        )
        try:
            reply = await future
        finally:
            self._waiting.pop(request_id, None)
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.get("headers", [])]
        await send({"type": "http.response.start", "status": int(reply["status"]), "headers": headers})
        await send({"type": "http.response.body", "body": base64.b64decode(reply.get("body", ""))})

    def resolve(self, message: dict[str, Any]) -> None:
        future = self._waiting.get(int(message.get("id", -1)))
        if future is not None and not future.done():
            future.set_result(message)

    def fail_all(self) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_result({"status": 503, "headers": [], "body": ""})


class DevIdentity:
    """Answers project.DEV_IDENTITY_PATH with this dev's project, supervisor pid and per-run nonce.

    It is how other commands prove that .appsdk/dev.json names the dev that serves this project
    (project.read_dev_state). Only a request addressed to a loopback Host from a loopback peer gets it:
    through a tunnel, or from a page on a rebinding name, the path is the app's like any other.
    """

    def __init__(self, project: str, pid: int, nonce: str) -> None:
        self._path = DEV_IDENTITY_PATH
        self._body = json.dumps({"project": project, "pid": pid, "nonce": nonce}).encode()

    def wrap(self, app: ASGIApp) -> ASGIApp:
        async def routed(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or scope["path"] != self._path or scope.get("method") != "GET":
                await app(scope, receive, send)
                return
            host = b"".join(value for name, value in scope.get("headers", []) if name.lower() == b"host")
            peer = (scope.get("client") or ("", 0))[0]
            forwarded = any(is_forwarding_header(name.decode("latin-1")) for name, _ in scope.get("headers", []))
            if forwarded or not is_loopback_address(peer) or not allowed_host_header(host.decode("latin-1")):
                await app(scope, receive, send)
                return
            headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": self._body})

        return routed
