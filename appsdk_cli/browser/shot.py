"""shoot(): the one way to a widget's image, in whichever browser takes it soonest.

A browser this process keeps (`appsdk mcp`'s KeptBrowser) when one is given; else the kept browser's process
(keptbrowser.py), found or started, unless keeping is off or none can be had; else a browser started and
stopped for this shot (screenshot.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from appsdk_cli.browser.capture import Screenshot
from appsdk_cli.browser.chromium import ChromiumSandbox, this_process_sandbox
from appsdk_cli.browser.kept import KeptBrowser
from appsdk_cli.browser.keptbrowser import KeptBrowserUnavailable, keeping_wanted, shoot_kept
from appsdk_cli.browser.screenshot import ComingPage, take_screenshot


def shoot(
    page: str | ComingPage,
    out: Path,
    *,
    chromium: str,
    timeout: float = 30.0,
    sandbox: ChromiumSandbox | None = None,
    kept: KeptBrowser | None = None,
    keep: bool = False,
    on_kept_refused: Callable[[str], None] | None = None,
) -> Screenshot:
    """The widget's frame of the host page at `page` written to `out` (the format by its extension), with
    what went wrong inside the widget. In `kept` when given; else, with `keep`, by the kept browser's
    process; else in a browser of its own. `on_kept_refused` hears why a kept browser found was not safe
    to use (this shot is then taken alone)."""
    if kept is not None:
        return kept.take(page.wait() if isinstance(page, ComingPage) else page, out, timeout=timeout)
    sandbox = sandbox or this_process_sandbox()
    if keep:
        shot = _shot_in_the_kept_browser(page, out, chromium, sandbox, timeout, on_kept_refused)
        if shot is not None:
            return shot
    return take_screenshot(page, out, chromium=chromium, sandbox=sandbox, timeout=timeout)


def _shot_in_the_kept_browser(
    page: str | ComingPage,
    out: Path,
    chromium: str,
    sandbox: ChromiumSandbox,
    timeout: float,
    on_refused: Callable[[str], None] | None,
) -> Screenshot | None:
    """The shot taken by the kept browser (started now if there is none); None when no kept browser can
    take it (keeping is off, or the socket found is not safe to use: told), so the caller takes it itself."""
    if not keeping_wanted():
        return None
    try:
        return shoot_kept(page, out, chromium=chromium, sandbox=sandbox, timeout=timeout)
    except KeptBrowserUnavailable as problem:
        if problem.refused and on_refused is not None:
            on_refused(str(problem))
        return None
