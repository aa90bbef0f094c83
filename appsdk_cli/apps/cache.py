"""The time-limited caches of the app/* methods (app/list's two sources, each kept for an hour)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CACHE_TTL = 3600.0  # Codex keeps both app/list sources for an hour


@dataclass
class CacheEntry:
    value: Any
    stored_at: float  # time.monotonic()


class TtlCache:
    """A small thread-safe cache; an entry is replaced only by `put` (i.e. by a fetch that succeeded)."""

    def __init__(self, ttl: float = CACHE_TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._entries: dict[Any, CacheEntry] = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or self.clock() - entry.stored_at > self.ttl:
                return None
            return entry.value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._entries[key] = CacheEntry(value, self.clock())
