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
import queue
import shutil
import signal
import struct
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appsdk_cli.errors import AppsdkError, UsageError

CHROMIUM_ENV = "APPSDK_CHROMIUM"
INSTALL_HINT = (
    "install it with `apt-get install chromium-headless-shell` (the quickest to start; `chromium` works too),"
    " or point $APPSDK_CHROMIUM at a Chrome/Chromium binary"
)
# What the preview extra adds; named as a plain requirement so the hint also works from a clone.
PLAYWRIGHT_REQUIREMENT = "playwright>=1.45"
# Quiet and offline: no GPU, none of Chromium's own network chatter. The sandbox stays on (see chromium_sandbox).
CHROMIUM_FLAGS = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)
# The real binaries first: Debian's /usr/bin entries are shell wrappers, and a wrapper between
# Playwright and the browser is one more process that could outlive a failed run.
CANDIDATES = (
    "/usr/lib/chromium/chromium-headless-shell",  # Debian's chromium-headless-shell: starts fastest
    "chromium-headless-shell",
    "/usr/lib/chromium/chromium",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)
VIEWPORT = {"width": 1200, "height": 900}
# The file name picks the format, as people expect from any image tool.
IMAGE_TYPES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg"}
JPEG_QUALITY = 90


def image_type(path: Path) -> str:
    """ "png" or "jpeg" from the name's extension; any other name is a usage error."""
    kind = IMAGE_TYPES.get(path.suffix.lower())
    if kind is None:
        shown = path.name or str(path)
        raise UsageError(f"--screenshot {shown}: name the image .png, .jpg or .jpeg (the extension picks the format)")
    return kind


def _executable(path: str) -> str | None:
    if os.sep in path:
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return shutil.which(path)


def find_chromium(environ: dict[str, str] | None = None) -> str:
    """$APPSDK_CHROMIUM, else the first Chromium found; a missing browser is one line on how to install it."""
    environ = os.environ if environ is None else environ
    chosen = environ.get(CHROMIUM_ENV)
    if chosen:
        found = _executable(chosen)
        if not found:
            raise AppsdkError(f"${CHROMIUM_ENV} is {chosen}, which is not an executable; {INSTALL_HINT}")
        return found
    for candidate in CANDIDATES:
        found = _executable(candidate)
        if found:
            return found
    raise AppsdkError(f"--screenshot needs Chromium, and none was found; {INSTALL_HINT}")


def check_playwright() -> None:
    import importlib.util

    if importlib.util.find_spec("playwright") is None:
        raise AppsdkError(f"--screenshot needs Playwright: {_playwright_install()}")


def _playwright_install() -> str:
    from appsdk_cli.invocation import pip_install

    return pip_install(PLAYWRIGHT_REQUIREMENT)


def screenshot_requirements(environ: dict[str, str] | None = None) -> str:
    """The Chromium to use, once both it and Playwright are there; else one line naming all that is missing."""
    try:
        chromium = find_chromium(environ)
    except AppsdkError as missing_browser:
        try:
            check_playwright()
        except AppsdkError:
            both = f"apt-get install chromium-headless-shell; {_playwright_install()}"
            raise AppsdkError(f"--screenshot needs Chromium and Playwright: {both}") from None
        raise missing_browser from None
    check_playwright()
    return chromium


@dataclass(frozen=True)
class Screenshot:
    path: Path
    width: int
    height: int
    browser: str  # the executable used
    format: str = "png"  # png or jpeg
    # What went wrong inside the widget (uncaught errors, failed loads, no data); empty when it rendered.
    problems: tuple[str, ...] = ()


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def jpeg_size(data: bytes) -> tuple[int, int]:
    """Width and height from a JPEG's first start-of-frame segment."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG")
    position = 2
    while position + 9 < len(data):
        if data[position] != 0xFF:
            raise ValueError("corrupt JPEG segment")
        marker = data[position + 1]
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        # SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return width, height
        position += 2 + length
    raise ValueError("no JPEG frame header")


def image_size(data: bytes, kind: str) -> tuple[int, int]:
    return png_size(data) if kind == "png" else jpeg_size(data)


@dataclass(frozen=True)
class ChromiumSandbox:
    """Whether Chromium keeps its sandbox, and when it cannot, why (for the one line that says so)."""

    enabled: bool
    reason: str = ""


def chromium_sandbox(euid: int | None) -> ChromiumSandbox:
    """Chromium keeps its sandbox, which is what stands between a hostile widget and the user's files, except
    where it cannot start with it: as root it refuses to (crbug.com/638180). `euid` None is a system without
    user ids (Windows), where the sandbox needs nothing from us."""
    if euid == 0:
        return ChromiumSandbox(False, "appsdk runs as root here")
    return ChromiumSandbox(True)


def this_process_sandbox() -> ChromiumSandbox:
    return chromium_sandbox(os.geteuid() if hasattr(os, "geteuid") else None)


def launch_options(chromium: str, sandbox: ChromiumSandbox) -> dict[str, object]:
    """Playwright's chromium.launch() keywords. Playwright itself adds --no-sandbox unless told
    chromium_sandbox=True, so the decision is passed both ways, never left to its default."""
    args = list(CHROMIUM_FLAGS) + ([] if sandbox.enabled else ["--no-sandbox"])
    return {"executable_path": chromium, "headless": True, "args": args, "chromium_sandbox": sandbox.enabled}


def take_screenshot(
    page_url: str | ComingPage, out: Path, *, chromium: str, sandbox: ChromiumSandbox, timeout: float = 30.0
) -> Screenshot:
    """Open the host page headless, wait until the widget settles, save the widget frame alone (the format
    by `out`'s extension), and report what went wrong inside the widget.

    `page_url` may be a page still coming (serving_while_the_browser_starts): it is waited for once
    Chromium is up, so the two start side by side, each of them a good part of a screenshot's time. What
    serving it raised is raised as it is; Ctrl-C while waiting for it stops at once."""
    kind = image_type(out)
    check_playwright()
    from playwright.sync_api import sync_playwright

    out = out.expanduser().resolve()
    if not out.parent.is_dir():
        raise AppsdkError(f"cannot write {out}: the folder {out.parent} does not exist")
    milliseconds = timeout * 1000
    options: dict[str, object] = {"type": kind}
    if kind == "jpeg":
        options["quality"] = JPEG_QUALITY
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
                    data, problems = _capture(browser, url, options, milliseconds)
                    out.write_bytes(data)
                finally:
                    browser.close()
        except Exception as problem:
            if interrupt.asked:  # the driver was stopped on purpose: whatever it broke is the interrupt
                discard_if_written(out, earlier)
                raise KeyboardInterrupt from None
            _raise_as_appsdk_error(problem, chromium, timeout)
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


def _capture(
    browser: Any,
    page_url: str,
    options: dict[str, object],
    milliseconds: float,
    viewport: dict[str, int] | None = None,
) -> tuple[bytes, Any]:
    """One shot in a running browser: the host page in a new page, until the widget settles; the widget
    frame's image bytes (the caller writes them), and the problems the host page counted."""
    page = browser.new_page(viewport=viewport or VIEWPORT)
    try:
        return _capture_in(page, page_url, options, milliseconds)
    finally:
        with contextlib.suppress(Exception):  # a browser already gone: the failure above is the one to tell
            page.close()


class Abandoned(Exception):
    """The shot's caller went away (a command stopped by Ctrl-C): the kept browser stops waiting for it."""


def _capture_in(
    page: Any,
    page_url: str,
    options: dict[str, object],
    milliseconds: float,
    abandoned: threading.Event | None = None,
) -> tuple[bytes, Any]:
    """_capture in a page the caller opened (and closes). With `abandoned`, the wait for the widget to settle
    is checked on every second, so a shot nobody waits for any more does not hold the browser to its timeout
    (its host page is gone with its command, so it would never settle)."""
    page.goto(page_url, timeout=milliseconds)
    settled = "() => window.appsdkPreview && window.appsdkPreview.settled"
    if abandoned is None:
        page.wait_for_function(settled, timeout=milliseconds)
    else:
        _wait_settled_unless_abandoned(page, settled, milliseconds, abandoned)
    # The widget's frame; with --no-ui, the text a host without widgets shows instead.
    shown = page.locator("#widget:visible, #text-only:visible").first
    clip = _enclosing_pixels(shown.bounding_box(timeout=milliseconds), page.viewport_size)
    if clip is None:
        data = shown.screenshot(timeout=milliseconds, animations="disabled", **options)
    else:
        # The same pixels as the element's own screenshot (which also rounds its box out to whole pixels),
        # in about half the time: it skips scrolling the element into view and waiting for it to be stable,
        # which a settled widget inside the viewport already is.
        data = page.screenshot(clip=clip, timeout=milliseconds, animations="disabled", **options)
    problems = page.evaluate("() => window.appsdkPreview.problems()")
    return data, problems


def _wait_settled_unless_abandoned(page: Any, settled: str, milliseconds: float, abandoned: threading.Event) -> None:
    import time

    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + milliseconds / 1000
    while True:
        if abandoned.is_set():
            raise Abandoned
        left = deadline - time.monotonic()
        try:
            page.wait_for_function(settled, timeout=max(1.0, min(1000.0, left * 1000)))
            return
        except PlaywrightTimeout:
            if left <= 1.0:
                raise


def _enclosing_pixels(box: dict[str, float] | None, viewport: dict[str, int] | None) -> dict[str, int] | None:
    """The whole-pixel rectangle around `box`, if it lies inside the viewport; else None."""
    import math

    if not box or not viewport:
        return None
    left, top = math.floor(box["x"]), math.floor(box["y"])
    right, bottom = math.ceil(box["x"] + box["width"]), math.ceil(box["y"] + box["height"])
    if (
        left < 0
        or top < 0
        or right > viewport["width"]
        or bottom > viewport["height"]
        or right <= left
        or bottom <= top
    ):
        return None
    return {"x": left, "y": top, "width": right - left, "height": bottom - top}


def _raise_as_appsdk_error(problem: Exception, chromium: str, timeout: float) -> None:
    """A Playwright failure as the one line the user reads; anything else as it is."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if isinstance(problem, PlaywrightTimeout):
        raise AppsdkError(f"the widget did not finish rendering within {timeout:g} s") from None
    if isinstance(problem, PlaywrightError):
        first = (str(problem).strip().splitlines() or ["unknown error"])[0]
        raise AppsdkError(f"Chromium ({chromium}) failed: {first}", detail=str(problem)) from None
    raise problem


def screenshot_from(out: Path, kind: str, chromium: str, data: bytes, problems: Any) -> Screenshot:
    width, height = image_size(data, kind)
    found = tuple(str(p) for p in problems) if isinstance(problems, list) else ()
    return Screenshot(out, width, height, chromium, kind, found)


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
        kind = image_type(out)
        check_playwright()
        out = out.expanduser().resolve()
        if not out.parent.is_dir():
            raise AppsdkError(f"cannot write {out}: the folder {out.parent} does not exist")
        options: dict[str, object] = {"type": kind}
        if kind == "jpeg":
            options["quality"] = JPEG_QUALITY
        try:
            data, problems = self.capture(page_url, options, timeout=timeout)
        except Exception as problem:
            _raise_as_appsdk_error(problem, self.chromium, timeout)
            raise
        out.write_bytes(data)
        return screenshot_from(out, kind, self.chromium, data, problems)

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
                        answer.put(_capture_in(page, page_url, options, milliseconds, abandoned))
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


def cache_the_drivers_compiled_code() -> None:
    """Playwright's driver is a Node process that compiles its whole bundle at every start; Node (22.1+)
    keeps the compiled code in NODE_COMPILE_CACHE, which took the driver's start from about 420 to 345 ms
    here. The driver gets this process's environment, so that is where it is set; one the user set wins.
    It goes in the private home, made private first (Node makes the cache folder itself)."""
    from appsdk_cli.home import home_location, private_home

    with contextlib.suppress(OSError):  # a home that cannot be made only costs the driver its cache
        private_home()
    os.environ.setdefault("NODE_COMPILE_CACHE", str(home_location() / "node-compile-cache"))
