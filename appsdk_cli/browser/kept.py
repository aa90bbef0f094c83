"""KeptBrowser: one headless Chromium kept in this process for many shots (`appsdk mcp`, and the kept
browser's own process, keptbrowser.py).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from pathlib import Path
from typing import Any

from appsdk_cli.browser.capture import (
    VIEWPORT,
    Abandoned,
    Screenshot,
    ShotTarget,
    capture_in,
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


class KeptBrowser:
    """One headless Chromium kept open for many screenshots (`appsdk mcp`'s screenshot tool, called again
    and again in one session): Playwright's driver and the browser start once, which is most of a cold shot.

    Playwright's sync API belongs to the thread that started it, so one thread of its own owns the browser
    and takes each shot; callers on any thread wait for theirs. A browser that died is started again on the
    next shot. `close()` stops both; so does the end of the process (the driver exits with its pipe)."""

    def __init__(self, chromium: str, sandbox: ChromiumSandbox) -> None:
        self.chromium = chromium
        self.sandbox = sandbox
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def take(self, page_url: str, out: Path, *, timeout: float = 30.0) -> Screenshot:
        """As take_screenshot, in the kept browser."""
        target = ShotTarget.of(out)
        check_playwright()
        try:
            data, problems = self.capture(page_url, target.options, timeout=timeout)
        except Exception as problem:
            raise_as_appsdk_error(problem, self.chromium, timeout)
            raise
        write_shot(target.out, data)
        return screenshot_from(target.out, target.kind, self.chromium, data, problems)

    def start(self) -> None:
        """Start Playwright and launch Chromium now, ahead of the first shot (which then waits for it)."""
        with self._lock:
            self._start_locked()

    def _start_locked(self) -> None:
        if self._thread is None:
            cache_the_drivers_compiled_code()
            self._thread = threading.Thread(target=self._own, name="appsdk-kept-chromium", daemon=True)
            self._thread.start()

    def _own(self) -> None:
        try:
            self._serve_jobs()
        except Exception as problem:  # Playwright's driver did not start: every waiting shot is told so
            with self._lock:
                self._thread = None  # the next shot tries again
                while True:
                    try:
                        job = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if job is not None:
                        job[-1].put(problem)

    def capture(
        self,
        page_url: str,
        options: dict[str, object],
        *,
        timeout: float,
        viewport: dict[str, int] | None = None,
        abandoned: threading.Event | None = None,
    ) -> tuple[bytes, Any]:
        """The widget frame's bytes and the host page's problems; Playwright's exceptions as they are.
        Shots from several threads take turns in the one browser."""
        answer: queue.Queue[Any] = queue.Queue(maxsize=1)
        with self._lock:  # with the start, so a thread that failed to start Playwright cannot miss it
            self._start_locked()
            self._jobs.put((page_url, options, timeout, viewport, abandoned, answer))
        outcome = answer.get()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def _serve_jobs(self) -> None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = None
            try:
                with contextlib.suppress(Exception):  # a launch that fails now fails again, and is told, at the shot
                    browser = playwright.chromium.launch(**launch_options(self.chromium, self.sandbox))
                spare = _spare_page(browser)
                while (job := self._jobs.get()) is not None:
                    page_url, options, timeout, viewport, abandoned, answer = job
                    milliseconds = timeout * 1000
                    page = None
                    try:
                        if abandoned is not None and abandoned.is_set():
                            raise Abandoned
                        if browser is None or not browser.is_connected():
                            browser = playwright.chromium.launch(
                                **launch_options(self.chromium, self.sandbox), timeout=milliseconds
                            )
                            spare = None
                        page, spare = spare or browser.new_page(viewport=VIEWPORT), None
                        if viewport and viewport != page.viewport_size:
                            page.set_viewport_size(viewport)
                        answer.put(capture_in(page, page_url, options, milliseconds, abandoned))
                    except Exception as problem:
                        answer.put(problem)
                    # After the answer, off the shot's time: this page goes, the next shot's is opened.
                    if page is not None:
                        with contextlib.suppress(Exception):
                            page.close()
                    spare = _spare_page(browser)
            finally:
                if browser is not None:
                    with contextlib.suppress(Exception):
                        browser.close()

    def close(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            thread.join(timeout=30)


def _spare_page(browser: Any) -> Any:
    """A page (in a context of its own, as every shot gets) opened ahead of the next shot; None if the
    browser cannot open one now (the shot then tries, and says what fails)."""
    if browser is None:
        return None
    with contextlib.suppress(Exception):
        return browser.new_page(viewport=VIEWPORT)
    return None
