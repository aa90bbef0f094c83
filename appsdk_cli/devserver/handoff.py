"""Keep-alive connections across reloads: a retiring worker hands its connections to the next one.

Clients keep their connection open between requests (as they do with plain uvicorn), so a reload
cannot rely on every request coming through the shared listening socket. Closing an idle keep-alive
connection is no answer either: a client may be sending its next request at that very moment, and a
POST that meets a closed connection is an error the client cannot safely retry.

So a connection is never closed for a reload; it moves. Every worker inherits one end of a Unix
datagram socket pair from the supervisor (HandoffPair). A retiring worker stops reading from the
connections that are idle (nothing read of a next request) and sends their file descriptors down the
pair (SCM_RIGHTS); one still answering a request is sent once its response is complete. The worker
that serves next takes them from the other end once its app has started and serves them as if it had
accepted them. Whatever a client sends meanwhile waits in the kernel's buffer for the new worker,
which is why the next request after a reload reaches the new code and none is lost.

The one exception is an event stream (GET /mcp, the 2024 transport's GET /sse): the retiring worker
ends it (asgi.StreamCloser) and closes its connection, since a client does not send on a connection
while its stream is open, and the stream's state lives in the old worker anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from appsdk_cli.devserver.asgi import is_stream_request

# SCM_MAX_FD on Linux: the most descriptors one message may carry.
_FDS_PER_MESSAGE = 250
# How soon a handoff that could not go yet (a full pipe, an unsent response tail) is tried again.
_RETRY_SECONDS = 0.005


@dataclass(frozen=True)
class HandoffPair:
    """The two ends, opened by the supervisor before its first fork: workers send on one, read the other.

    The supervisor keeps both open for as long as it serves, so connections handed over while no
    worker reads (the next one still starting) wait in the pair's queue instead of being closed.
    """

    send_fd: int
    receive_fd: int

    @classmethod
    def open(cls) -> HandoffPair:
        sender, receiver = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        for end in (sender, receiver):
            end.setblocking(False)
        return cls(sender.detach(), receiver.detach())

    def close(self) -> None:
        for fd in (self.send_fd, self.receive_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class ConnectionHandoff:
    """One worker's side: takes connections while it serves, gives them away once it retires."""

    def __init__(self, pair: HandoffPair | None) -> None:
        # This worker's copies of the inherited ends (the supervisor keeps its own open).
        self._sender = None if pair is None else socket.socket(fileno=pair.send_fd)
        self._receiver = None if pair is None else socket.socket(fileno=pair.receive_fd)
        self._retiring = False
        self._waiting: list[H11Protocol] = []  # idle connections to send at the next flush
        self._flush_scheduled = False
        self._server: uvicorn.Server | None = None

    @property
    def retiring(self) -> bool:
        return self._retiring

    def protocol_class(self) -> type[H11Protocol]:
        """uvicorn's h11 protocol, told when a connection falls idle while this worker retires."""
        handoff = self

        class HandingOffProtocol(H11Protocol):
            def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
                super().connection_made(transport)
                if handoff.retiring:
                    # Accepted in the loop step that retired us: nothing read yet, so it moves whole.
                    handoff.give(self)

            def on_response_complete(self) -> None:
                super().on_response_complete()
                if handoff.retiring:
                    handoff.give(self)

        return HandingOffProtocol

    # -- taking --------------------------------------------------------------------------------

    def start_taking(self, server: uvicorn.Server) -> None:
        """Serve what earlier workers handed over, from now on (the app has started)."""
        if self._receiver is None:
            return
        self._server = server
        asyncio.get_running_loop().add_reader(self._receiver.fileno(), self._take)

    def _take(self) -> None:
        assert self._receiver is not None
        while not self._retiring:
            try:
                _, fds, _, _ = socket.recv_fds(self._receiver, 16, _FDS_PER_MESSAGE)
            except (BlockingIOError, InterruptedError):
                return
            for fd in fds:
                asyncio.get_running_loop().create_task(self._serve_handed(fd))

    async def _serve_handed(self, fd: int) -> None:
        server = self._server
        assert server is not None
        config = server.config
        connection = socket.socket(fileno=fd)

        def create_protocol() -> asyncio.Protocol:
            return config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=server.server_state, app_state=server.lifespan.state
            )

        try:
            _, protocol = await asyncio.get_running_loop().connect_accepted_socket(create_protocol, connection)
        except OSError:
            connection.close()  # the client has gone meanwhile
            return
        if isinstance(protocol, H11Protocol) and protocol.timeout_keep_alive_task is None:
            # It arrives idle: the same keep-alive timeout as after a response here.
            protocol.timeout_keep_alive_task = protocol.loop.call_later(
                protocol.timeout_keep_alive, protocol.timeout_keep_alive_handler
            )

    # -- giving --------------------------------------------------------------------------------

    def retire(self, connections: set[Any]) -> None:
        """Stop taking; close the event streams' connections once they end; hand the idle ones over now,
        the busy ones as each response completes."""
        if self._receiver is not None and self._server is not None:
            asyncio.get_running_loop().remove_reader(self._receiver.fileno())
        self._retiring = True
        for connection in list(connections):
            if not isinstance(connection, H11Protocol):
                continue
            cycle = connection.cycle
            if cycle is not None and not cycle.response_complete:
                if is_stream_request(connection.scope):
                    cycle.keep_alive = False  # uvicorn closes it when the stream ends
                continue
            self.give(connection)

    def give(self, connection: H11Protocol) -> None:
        """Hand over this connection if nothing of a next request has been read from it."""
        transport = connection.transport
        if transport is None or transport.is_closing() or not _idle(connection):
            return
        if self._sender is None:
            # Nowhere to send it: close as uvicorn's own shutdown does.
            connection.shutdown()
            return
        # Whatever the client sends from now on stays in the kernel's buffer, for the next worker.
        transport.pause_reading()
        connection._unset_keepalive_if_required()
        self._waiting.append(connection)
        self._schedule_flush(0.0)

    def _schedule_flush(self, delay: float) -> None:
        if self._flush_scheduled:
            return
        self._flush_scheduled = True
        asyncio.get_running_loop().call_later(delay, self._flush)

    def _flush(self) -> None:
        """Send every waiting connection whose response has left in full; retry the rest shortly."""
        assert self._sender is not None
        self._flush_scheduled = False
        ready: list[H11Protocol] = []
        later: list[H11Protocol] = []
        for connection in self._waiting:
            transport = connection.transport
            if transport.is_closing():
                continue  # the client closed it meanwhile
            (ready if transport.get_write_buffer_size() == 0 else later).append(connection)
        while ready:
            batch = ready[:_FDS_PER_MESSAGE]
            fds = [connection.transport.get_extra_info("socket").fileno() for connection in batch]
            try:
                socket.send_fds(self._sender, [b"c"], fds)
            except (BlockingIOError, InterruptedError):
                later += ready
                break
            del ready[: len(batch)]
            for connection in batch:
                # Our descriptor only: the message holds its own, so the client sees no close.
                connection.transport.abort()
        self._waiting = later
        if later:
            self._schedule_flush(_RETRY_SECONDS)


def _idle(connection: H11Protocol) -> bool:
    """Between requests, with nothing of the next one read (h11 buffers what it has not parsed)."""
    conn = connection.conn
    if connection.cycle is not None and not connection.cycle.response_complete:
        return False
    if conn.our_state is not h11.IDLE or conn.their_state is not h11.IDLE:
        return False
    unread, closed = conn.trailing_data
    return not unread and not closed
