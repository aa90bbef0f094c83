"""`--screenshot`: render the preview headless in Chromium and save the widget's frame as a PNG or JPEG.

The image is only half the answer: a widget that threw, whose script failed to load, or that never took
its data still paints something. The host page keeps account of that (`appsdkPreview.problems()`), and
the screenshot carries those problems back, so the command can fail on a dead widget.

Playwright drives the browser. Doing it by hand over the DevTools protocol would mean our own
websocket client, launching Chromium and parsing its DevTools port, following the widget into its
out-of-process frame (it is cross-origin, so site isolation puts it in another renderer), and
killing the process tree on every failure path; Playwright does all of that and is tested against
each Chromium release. It is an optional extra (`appsdk-cli[preview]`, i.e. playwright; about 40 MB with its driver)
because only --screenshot needs it; the browser itself is the system's Chromium, never a download.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from appsdk_cli.browser.capture import (
    Screenshot,
    ShotTarget,
    capture,
    raise_as_appsdk_error,
    screenshot_from,
    write_shot,
)
from appsdk_cli.browser.chromium import (
    ChromiumSandbox,
    cache_the_drivers_compiled_code,
    check_playwright,
    launch_options,
)


def take_screenshot(
    page_url: str | ComingPage, out: Path, *, chromium: str, sandbox: ChromiumSandbox, timeout: float = 30.0
) -> Screenshot:
    """Open the host page headless, wait until the widget settles, save the widget frame alone (the format
    by `out`'s extension), and report what went wrong inside the widget.

    `page_url` may be a page still coming (serving_while_the_browser_starts): it is waited for once
    Chromium is up, so the two start side by side, each of them a good part of a screenshot's time. What
    serving it raised is raised as it is; Ctrl-C while waiting for it stops at once."""
    target = ShotTarget.of(out)
    check_playwright()
    from playwright.sync_api import sync_playwright

    out, kind, options = target.out, target.kind, target.options
    milliseconds = timeout * 1000
    cache_the_drivers_compiled_code()
    earlier = written_at(out)
    quiet = _DriverGone()
    logging.getLogger("asyncio").addFilter(quiet)
    with _stopping_the_driver_on_interrupt() as interrupt:
        try:
            # Leaving this block stops the browser and Playwright's driver, on success and on every error.
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(**launch_options(chromium, sandbox), timeout=milliseconds)
                try:
                    url = page_url.wait(interrupt) if isinstance(page_url, ComingPage) else page_url
                    data, problems = capture(browser, url, options, milliseconds)
                    write_shot(out, data)
                finally:
                    browser.close()
        except Exception as problem:
            if interrupt.asked:  # the driver was stopped on purpose: whatever it broke is the interrupt
                discard_if_written(out, earlier)
                raise KeyboardInterrupt from None
            raise_as_appsdk_error(problem, chromium, timeout)
        if interrupt.asked:  # Ctrl-C came as the image was saved: stopping means no image
            discard_if_written(out, earlier)
            raise KeyboardInterrupt
    # Only now: on any other way out, a call left pending on the driver's pipe is reported later, at exit.
    logging.getLogger("asyncio").removeFilter(quiet)
    return screenshot_from(out, kind, chromium, data, problems)


class ComingPage:
    """The host page's URL once a server started on another thread is up (serving_while_the_browser_starts)."""

    def __init__(self, pending: Future[Any], page_url: Callable[[Any], str]) -> None:
        self._pending = pending
        self._page_url = page_url

    def wait(self, interrupt: _Interrupt | None = None) -> str:
        """The URL; what serving raised, as it is; _Interrupted as soon as Ctrl-C was asked for meanwhile
        (the first Ctrl-C only stops Playwright's driver, which would not end this wait)."""
        from concurrent.futures import TimeoutError as NotYet

        while True:
            try:
                server = self._pending.result(timeout=0.05)
            except NotYet:
                if interrupt is not None and interrupt.asked:
                    raise _Interrupted from None
                continue
            return self._page_url(server)


class _Interrupted(Exception):
    """Ctrl-C came while the page was still coming: take_screenshot reports it as the interrupt."""


@contextlib.contextmanager
def serving_while_the_browser_starts(
    serve: Callable[[], Any], page_url: Callable[[Any], str]
) -> Iterator[tuple[ComingPage, Callable[[], Any]]]:
    """Run `serve` (call the tool, start a host; it returns the started server) on a thread of its own, and
    give take_screenshot the page it will serve, so Chromium starts meanwhile. Yields that page and a
    function giving the server; the server is closed on the way out, however it goes (one still starting
    when this ends, as on Ctrl-C, is closed once started). What `serve` raised is raised where it is waited on.
    """
    pending: Future[Any] = Future()

    def run() -> None:
        try:
            pending.set_result(serve())
        except BaseException as problem:  # handed to the waiting thread, which raises it
            pending.set_exception(problem)

    # A daemon: an interrupted command need not wait for a slow server to answer before it exits.
    threading.Thread(target=run, name="appsdk-serve", daemon=True).start()
    try:
        yield ComingPage(pending, page_url), pending.result
    finally:
        pending.add_done_callback(_close_served)


def _close_served(done: Any) -> None:
    if not done.cancelled() and done.exception() is None:
        done.result().close()


class _DriverGone(logging.Filter):
    """Drops asyncio's "Future exception was never retrieved" for Playwright's pipe to its driver: a
    terminal's Ctrl-C reaches the driver too, which exits and leaves a call of ours pending on a closed
    pipe; asyncio reports that Future when it is collected, often as the interpreter exits."""

    def filter(self, record: logging.LogRecord) -> bool:
        gone = record.exc_info[1] if record.exc_info else None
        unclaimed = record.getMessage().startswith("Future exception was never retrieved")
        return not (unclaimed and "while reading from the driver" in str(gone))


def written_at(path: Path) -> int | None:
    with contextlib.suppress(OSError):
        return path.stat().st_mtime_ns
    return None


def discard_if_written(out: Path, earlier: int | None) -> None:
    """An interrupted run leaves no image of its own; a file that was there before and untouched stays."""
    now = written_at(out)
    if now is not None and now != earlier:
        out.unlink(missing_ok=True)


class _Interrupt:
    """Ctrl-C, SIGTERM or SIGHUP while Playwright works. Raising KeyboardInterrupt inside its event loop
    leaves the loop half torn down (asyncio then prints "Future exception was never retrieved" and
    "Event loop is closed" at exit); so the first signal stops the driver instead, with the SIGINT a
    terminal's Ctrl-C sends it anyway, and it closes Chromium and exits. The call in progress then fails,
    the `with` blocks unwind as on any error, and the failure is reported as the interrupt. A second
    signal, or one before the driver runs, interrupts at once."""

    def __init__(self) -> None:
        from appsdk_cli.proctree import children

        self.asked = False
        # What ran before Playwright (a --stdio server, say) is not its driver and is not signalled.
        self._earlier = set(children(os.getpid()))

    def __call__(self, signum: int, frame: object) -> None:
        from appsdk_cli.proctree import children

        drivers = [pid for pid in children(os.getpid()) if pid not in self._earlier]
        if self.asked or not drivers:
            raise KeyboardInterrupt
        self.asked = True
        for pid in drivers:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGINT)


@contextlib.contextmanager
def _stopping_the_driver_on_interrupt() -> Iterator[_Interrupt]:
    interrupt = _Interrupt()
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield interrupt
        return
    numbers = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {number: signal.signal(number, interrupt) for number in numbers}
    try:
        yield interrupt
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
