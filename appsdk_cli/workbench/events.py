"""The workbench's push channel: events fanned out to every open page as Server-Sent Events.

One queue per connected page; `publish` never blocks (a page that stops reading loses its oldest
events, never the server's time), and `close` ends every stream so no handler thread outlives the
server.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

KEEPALIVE_SECONDS = 15.0
QUEUE_LIMIT = 1000
_CLOSED = object()


class EventHub:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: list[queue.Queue[Any]] = []
        self._next_id = 0
        self._closed = False

    @property
    def listeners(self) -> int:
        with self._lock:
            return len(self._queues)

    def publish(self, event: str, data: Any) -> None:
        with self._lock:
            self._next_id += 1
            item = (self._next_id, event, data)
            targets = list(self._queues)
        for target in targets:
            try:
                target.put_nowait(item)
            except queue.Full:
                # A page that stopped reading: drop its oldest event rather than block the publisher.
                try:
                    target.get_nowait()
                    target.put_nowait(item)
                except (queue.Empty, queue.Full):
                    pass

    def stream(self, hello: Callable[[], dict[str, Any]]) -> Iterator[bytes]:
        """The bytes of one page's stream: a `hello` event first, then every event published, with a
        comment line now and then so a dead connection is noticed (the write fails). `hello` is built
        once the page listens, so nothing published in between is lost (the page drops what it has)."""
        mine: queue.Queue[Any] = queue.Queue(maxsize=QUEUE_LIMIT)
        with self._lock:
            if self._closed:
                return
            self._queues.append(mine)
        try:
            yield _frame(0, "hello", hello())
            while True:
                try:
                    item = mine.get(timeout=KEEPALIVE_SECONDS)
                except queue.Empty:
                    yield b": keepalive\n\n"
                    continue
                if item is _CLOSED:
                    return
                yield _frame(*item)
        finally:
            with self._lock:
                if mine in self._queues:
                    self._queues.remove(mine)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            targets = list(self._queues)
        for target in targets:
            try:
                target.put_nowait(_CLOSED)
            except queue.Full:
                try:
                    target.get_nowait()
                    target.put_nowait(_CLOSED)
                except (queue.Empty, queue.Full):
                    pass


def _frame(event_id: int, event: str, data: Any) -> bytes:
    # json.dumps never emits a raw newline, so the data is one `data:` line.
    body = json.dumps(data, ensure_ascii=False)
    return f"id: {event_id}\nevent: {event}\ndata: {body}\n\n".encode()
