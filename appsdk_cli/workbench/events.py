"""The workbench's push channel: events fanned out to every open page as Server-Sent Events.

An event is encoded once, when it is published, and the same bytes go to every page. Each page has its
own backlog, bounded by bytes and by count: `publish` never blocks (a page that stops reading loses its
oldest events, never the server's time or memory), and `close` ends every stream so no handler thread
outlives the server.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

KEEPALIVE_SECONDS = 15.0
RETRY_MS = 1000  # how soon a page whose stream broke reconnects (the SSE `retry:` field)
QUEUE_LIMIT = 1000  # events waiting for one page
QUEUE_BYTES = 16 * 1024 * 1024  # ... and their bytes: a stalled page holds no more than this
_CLOSED = b""


class _Backlog:
    """What one page has yet to read: encoded events, oldest first, dropped from the front past the bounds."""

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._frames: deque[bytes] = deque()
        self._bytes = 0
        self._closed = False

    def put(self, frame: bytes) -> None:
        with self._ready:
            if self._closed:
                return
            self._frames.append(frame)
            self._bytes += len(frame)
            while len(self._frames) > 1 and (len(self._frames) > QUEUE_LIMIT or self._bytes > QUEUE_BYTES):
                self._bytes -= len(self._frames.popleft())
            self._ready.notify()

    def close(self, farewell: bytes | None = None) -> None:
        """End the stream; a `farewell` frame is the last thing the page reads (what it had not read is dropped)."""
        with self._ready:
            self._closed = True
            self._frames.clear()
            self._bytes = 0
            if farewell is not None:
                self._frames.append(farewell)
            self._ready.notify()

    def take(self, timeout: float) -> bytes | None:
        """The next frame; None when nothing came within `timeout`; _CLOSED once the hub closed."""
        with self._ready:
            if not self._frames and not self._closed:
                self._ready.wait(timeout)
            if self._closed and not self._frames:
                return _CLOSED
            if not self._frames:
                return None
            frame = self._frames.popleft()
            self._bytes -= len(frame)
            return frame

    @property
    def waiting_bytes(self) -> int:
        with self._ready:
            return self._bytes


class EventHub:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._backlogs: list[_Backlog] = []
        self._next_id = 0
        self._closed = False

    @property
    def listeners(self) -> int:
        with self._lock:
            return len(self._backlogs)

    @property
    def waiting_bytes(self) -> int:
        """The bytes published and not yet read, over every open page."""
        with self._lock:
            backlogs = list(self._backlogs)
        return sum(backlog.waiting_bytes for backlog in backlogs)

    def publish(self, event: str, data: Any) -> int:
        """Send the event to every open page; what it weighs encoded, in bytes."""
        body = json.dumps(data, ensure_ascii=False).encode()
        with self._lock:
            self._next_id += 1
            frame = _frame(self._next_id, event, body)
            targets = list(self._backlogs)
        for target in targets:
            target.put(frame)
        return len(body)

    def stream(self, hello: Callable[[], dict[str, Any]]) -> Iterator[bytes]:
        """The bytes of one page's stream: a `hello` event first, then every event published, with a
        comment line now and then so a dead connection is noticed (the write fails). `hello` is built
        once the page listens, so nothing published in between is lost (the page drops what it has)."""
        mine = _Backlog()
        with self._lock:
            if self._closed:
                return
            self._backlogs.append(mine)
        try:
            # A page that loses the stream (the workbench restarting) asks again after RETRY_MS, not the
            # browser's default of seconds.
            yield _frame(0, "hello", json.dumps(hello(), ensure_ascii=False).encode()) + b"retry: %d\n\n" % RETRY_MS
            while True:
                frame = mine.take(KEEPALIVE_SECONDS)
                if frame is None:
                    yield b": keepalive\n\n"
                    continue
                if frame is _CLOSED:
                    return
                yield frame
        finally:
            with self._lock:
                if mine in self._backlogs:
                    self._backlogs.remove(mine)

    def close(self, farewell: tuple[str, Any] | None = None) -> None:
        """End every page's stream; with `farewell` (event, data), each page reads that event last, so it
        can tell the server stopped from a connection that broke."""
        with self._lock:
            self._closed = True
            targets = list(self._backlogs)
            self._next_id += 1
            last = _frame(self._next_id, farewell[0], json.dumps(farewell[1]).encode()) if farewell else None
        for target in targets:
            target.close(last)


def _frame(event_id: int, event: str, body: bytes) -> bytes:
    # json.dumps never emits a raw newline, so the data is one `data:` line.
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (event_id, event.encode(), body)
