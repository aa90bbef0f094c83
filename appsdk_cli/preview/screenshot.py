"""`--screenshot`: render the preview headless in Chromium and save the widget's frame as a PNG.

Playwright drives the browser. Doing it by hand over the DevTools protocol would mean our own
websocket client, launching Chromium and parsing its DevTools port, following the widget into its
out-of-process frame (it is cross-origin, so site isolation puts it in another renderer), and
killing the process tree on every failure path; Playwright does all of that and is tested against
each Chromium release. It is an optional extra (`appsdk-cli[preview]`, i.e. playwright; about 40 MB with its driver)
because only --screenshot needs it; the browser itself is the system's Chromium, never a download.
"""

from __future__ import annotations

import os
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

from appsdk_cli.errors import AppsdkError

CHROMIUM_ENV = "APPSDK_CHROMIUM"
INSTALL_HINT = "install it with `apt-get install chromium` (or point $APPSDK_CHROMIUM at a Chrome/Chromium binary)"
# What the preview extra adds; named as a plain requirement so the hint also works from a clone.
PLAYWRIGHT_REQUIREMENT = "playwright>=1.45"
# Quiet and offline: no sandbox (containers, root), no GPU, none of Chromium's own network chatter.
CHROMIUM_FLAGS = (
    "--no-sandbox",
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
            raise AppsdkError(
                f"--screenshot needs Chromium and Playwright: apt-get install chromium; {_playwright_install()}"
            ) from None
        raise missing_browser from None
    check_playwright()
    return chromium


@dataclass(frozen=True)
class Screenshot:
    path: Path
    width: int
    height: int
    browser: str  # the executable used


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def take_screenshot(page_url: str, out: Path, *, chromium: str, timeout: float = 30.0) -> Screenshot:
    """Open the host page headless, wait until the widget settles, and save the widget frame alone."""
    check_playwright()
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    out = out.expanduser().resolve()
    if not out.parent.is_dir():
        raise AppsdkError(f"cannot write {out}: the folder {out.parent} does not exist")
    milliseconds = timeout * 1000
    try:
        # Leaving this block stops the browser and Playwright's driver, on success and on every error.
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium, headless=True, args=list(CHROMIUM_FLAGS), timeout=milliseconds
            )
            try:
                page = browser.new_page(viewport=VIEWPORT)
                page.goto(page_url, timeout=milliseconds)
                settled = "() => window.appsdkPreview && window.appsdkPreview.settled"
                page.wait_for_function(settled, timeout=milliseconds)
                data = page.locator("#widget").screenshot(path=str(out), timeout=milliseconds, animations="disabled")
            finally:
                browser.close()
    except PlaywrightTimeout:
        raise AppsdkError(f"the widget did not finish rendering within {timeout:g} s") from None
    except PlaywrightError as problem:
        first = (str(problem).strip().splitlines() or ["unknown error"])[0]
        raise AppsdkError(f"Chromium ({chromium}) failed: {first}", detail=str(problem)) from None
    width, height = png_size(data)
    return Screenshot(out, width, height, chromium)
