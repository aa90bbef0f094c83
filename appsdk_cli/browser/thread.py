"""Playwright on a thread of its own, so the tests' own asyncio keeps the main thread.

Playwright's sync API runs an asyncio loop in the thread that started it, and leaves that loop marked
running there: a later test's `anyio.run()` or `asyncio.run()` (the scaffold's own tests use it) then
fails with "Already running asyncio in this thread". So the session's Playwright lives on one worker
thread, and every object of it is handed out as a `Bound` proxy whose attribute reads and calls run on
that thread; plain values (text, bytes, JSON) come back as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


class BrowserThread:
    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="appsdk-playwright")

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        # A proxy passed back in (a page to context.new_cdp_session, say) reaches Playwright as itself.
        args = tuple(_unbound(value) for value in args)
        kwargs = {name: _unbound(value) for name, value in kwargs.items()}
        return self._executor.submit(function, *args, **kwargs).result()

    def bound(self, value: Any) -> Any:
        """Playwright's objects and methods as proxies to this thread; anything else as it is."""
        if isinstance(value, list):
            return [self.bound(item) for item in value]
        if callable(value) or type(value).__module__.startswith("playwright."):
            return Bound(value, self)
        return value

    def start(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run `function` on the thread and hand out what it returns as a proxy."""
        return self.bound(self.run(function, *args, **kwargs))

    def close(self) -> None:
        self._executor.shutdown(wait=True)


class Bound:
    """A Playwright object (or method) used from any thread: each use runs on the BrowserThread."""

    __slots__ = ("_target", "_thread")

    def __init__(self, target: Any, thread: BrowserThread) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_thread", thread)

    def __getattr__(self, name: str) -> Any:
        return self._thread.bound(self._thread.run(getattr, self._target, name))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._thread.bound(self._thread.run(self._target, *args, **kwargs))

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<on the Playwright thread: {self._thread.run(repr, self._target)}>"


def start_playwright(thread: BrowserThread) -> Any:
    """Playwright's sync API started on `thread`, handed out as a proxy (stop() it before closing the thread)."""
    from playwright.sync_api import sync_playwright

    return thread.start(lambda: sync_playwright().start())


def _unbound(value: Any) -> Any:
    return object.__getattribute__(value, "_target") if isinstance(value, Bound) else value
