"""Settle and capture: the host page in a browser page until the widget settles, then the widget's frame
alone as image bytes, with the problems the host page counted; and the image's format and size.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.safewrite import default_root, write_file

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


@dataclass(frozen=True)
class ShotTarget:
    """Where a shot goes and in what format: checked before any browser work, the same for every path."""

    out: Path  # absolute, its links not followed (the writer refuses a planted one)
    kind: str  # "png" or "jpeg"

    @classmethod
    def of(cls, out: Path) -> ShotTarget:
        kind = image_type(out)
        path = output_path(out)
        if not path.parent.is_dir():
            raise AppsdkError(f"cannot write {path}: the folder {path.parent} does not exist")
        return cls(path, kind)

    @property
    def quality(self) -> int | None:
        return JPEG_QUALITY if self.kind == "jpeg" else None

    @property
    def options(self) -> dict[str, object]:
        """Playwright's screenshot options for this format."""
        return {"type": self.kind} if self.quality is None else {"type": self.kind, "quality": self.quality}


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


def capture(
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
        return capture_in(page, page_url, options, milliseconds)
    finally:
        with contextlib.suppress(Exception):  # a browser already gone: the failure above is the one to tell
            page.close()


class Abandoned(Exception):
    """The shot's caller went away (a command stopped by Ctrl-C): the kept browser stops waiting for it."""


def capture_in(
    page: Any,
    page_url: str,
    options: dict[str, object],
    milliseconds: float,
    abandoned: threading.Event | None = None,
) -> tuple[bytes, Any]:
    """As capture(), in a page the caller opened (and closes). With `abandoned`, the wait for the widget to settle
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


def raise_as_appsdk_error(problem: Exception, chromium: str, timeout: float) -> None:
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


def output_path(out: Path) -> Path:
    """The image's path made absolute without following links: a link planted under its name is refused
    when written, not resolved to wherever it points."""
    return Path(os.path.abspath(out.expanduser()))


def write_shot(out: Path, data: bytes) -> None:
    """The image, whole, by appsdk's one writer (under the current folder when it is there)."""
    try:
        write_file(out, data, root=default_root(out))
    except OSError as problem:
        raise AppsdkError(f"cannot write {out}: {problem.strerror or problem}") from None
