"""The deprecated HTTP+SSE transport of MCP 2024-11-05, still served by many servers (OpenAI's examples,
FastMCP's `sse`, `appsdk dev --transport sse`).

The client GETs the URL and keeps the event stream open; its first event, `endpoint`, names where to
POST messages (usually `/messages/?session_id=...`). Every POST is answered `202 Accepted`; the
JSON-RPC answers, notifications and server requests all arrive on the one stream. Both halves go
through `HttpTransport`, so redirects, headers and errors are handled as for streamable HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from appsdk_cli.client.http import (
    DEFAULT_TIMEOUT,
    ConnectError,
    HttpTransport,
    Message,
    ProtocolError,
    SseEvent,
)
from appsdk_cli.httpguard import TooLarge

if TYPE_CHECKING:
    import http.client

# An HTTP+SSE server names its endpoint at once; a stream that stays silent is some other kind of stream.
ENDPOINT_SECONDS = 5.0


class SseTransport:
    """One HTTP+SSE session: the GET event stream, and POSTs to the endpoint it names."""

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
        self._stream_side = HttpTransport(url, timeout=min(timeout, ENDPOINT_SECONDS), headers=headers, token=token)
        self._headers = headers
        self._token = token
        self._posts: HttpTransport | None = None
        self._events: Iterator[SseEvent] | None = None
        self._response: http.client.HTTPResponse | None = None

    def set_protocol_version(self, version: str) -> None:
        pass  # 2024-11-05 has no protocol-version header

    def set_token(self, token: str) -> None:
        for side in (self._stream_side, self._posts):
            if side is not None:
                side.set_token(token)

    def open(self) -> None:
        """GET the stream and wait for its `endpoint` event."""
        try:
            self._open()
        except TooLarge:
            self._stream_side._drop_connection()
            raise self._stream_side.too_large() from None

    def _open(self) -> None:
        response = self._stream_side._request("GET", None, {"Accept": "text/event-stream"})
        content_type = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if response.status >= 400:
            raise self._stream_side._http_error(
                response.status, self._stream_side.read_body(response), content_type, response=response
            )
        if content_type != "text/event-stream":
            self._stream_side.read_body(response)
            raise ProtocolError(
                f"{self.description} answered GET with {content_type or 'no Content-Type'}, not an event stream,"
                " so it is not an HTTP+SSE endpoint either"
            )
        self._response = response
        self._events = self._stream_side.events(response)
        try:
            for event in self._events:
                if event.event == "endpoint":
                    endpoint = urljoin(self._stream_side.url, event.data.strip())
                    if urlsplit(endpoint)[:2] != urlsplit(self._stream_side.url)[:2]:
                        # The spec has the endpoint on the stream's own origin; a token must not go elsewhere.
                        raise ProtocolError(f"{self.description} named a message endpoint on another origin")
                    self._posts = HttpTransport(
                        endpoint, timeout=self.timeout, headers=self._headers, token=self._token
                    )
                    self._posts.description = self.description
                    # From now on the stream carries answers, which may take as long as any answer.
                    connection = self._stream_side._connection
                    if connection is not None and connection.sock is not None:
                        connection.sock.settimeout(self.timeout)
                    return
        except TimeoutError as problem:
            raise ProtocolError(
                f"{self.description} opened an event stream but named no endpoint within"
                f" {self._stream_side.timeout:g} s, so it is not an HTTP+SSE (2024-11-05) server",
                status=200,
            ) from problem
        raise ProtocolError(f"{self.description} closed its event stream without naming an endpoint")

    def exchange(
        self,
        message: Message,
        *,
        on_other: Callable[[Message], Message | None],
        headers: dict[str, str] | None = None,
    ) -> Message | None:
        if self._posts is None:
            self.open()
        assert self._posts is not None and self._events is not None
        answer = self._posts.exchange(message, on_other=on_other)
        if answer is not None or "id" not in message or "method" not in message:
            return answer  # a server that answers on the POST itself, or a notification
        return self._await(message["id"], on_other)

    def _await(self, request_id: Any, on_other: Callable[[Message], Message | None]) -> Message:
        assert self._posts is not None and self._events is not None
        try:
            for event in self._events:
                if event.event != "message" or not event.data.strip():
                    continue
                incoming = json.loads(event.data)
                if isinstance(incoming, dict) and incoming.get("id") == request_id and "method" not in incoming:
                    return incoming
                reply = on_other(incoming)
                if reply is not None:
                    self._posts.exchange(reply, on_other=lambda _: None)
        except TimeoutError as problem:
            raise ConnectError(f"{self.description} did not answer within {self.timeout:g} s") from problem
        except (ValueError, UnicodeDecodeError) as problem:
            raise ProtocolError(f"{self.description} sent an event that is not JSON: {problem}") from problem
        except TooLarge:
            self._stream_side._drop_connection()
            raise self._stream_side.too_large() from None
        raise ProtocolError(f"{self.description} closed the event stream before answering request {request_id}")

    def send_aside(self, message: Message, *, timeout: float | None = None) -> None:
        if self._posts is not None:  # the endpoint's URL names the session
            self._posts.send_aside(message, timeout=timeout)

    def abandon(self) -> None:
        # Answers come on the session's one event stream: to stop waiting is to end the session.
        self._stream_side._abort()

    def close(self) -> None:
        # Closing the stream ends the session; there is nothing to DELETE in this transport.
        if self._posts is not None:
            self._posts.close()
        self._stream_side._drop_connection()
