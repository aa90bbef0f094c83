"""Which Chromium, whether Playwright is here, the sandbox and the launch flags: what every use of the browser
shares, whether it takes one shot (screenshot.py), keeps a browser (kept.py, keptbrowser.py) or renders
widgets for tests (thread.py under testing/).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass

from appsdk_cli.errors import AppsdkError

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


def cache_the_drivers_compiled_code() -> None:
    """Playwright's driver is a Node process that compiles its whole bundle at every start; Node (22.1+)
    keeps the compiled code in NODE_COMPILE_CACHE, which took the driver's start from about 420 to 345 ms
    here. The driver gets this process's environment, so that is where it is set; one the user set wins.
    It goes in the private home, made private first (Node makes the cache folder itself)."""
    from appsdk_cli.home import home_location, private_home

    with contextlib.suppress(OSError):  # a home that cannot be made only costs the driver its cache
        private_home()
    os.environ.setdefault("NODE_COMPILE_CACHE", str(home_location() / "node-compile-cache"))
