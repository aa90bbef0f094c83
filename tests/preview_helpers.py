"""Shared by the preview tests: the fixture app, a tiny PNG decoder, and processes found by an env marker."""

from __future__ import annotations

import shutil
import struct
import sys
import zlib
from pathlib import Path

import pytest

FIXTURE_APP = Path(__file__).parent / "fixtures" / "preview_app"


def system_chromium() -> str | None:
    """The Chromium the preview would use, or None where there is none (the browser tests then skip)."""
    from appsdk_cli.browser.chromium import find_chromium
    from appsdk_cli.errors import AppsdkError

    try:
        return find_chromium()
    except AppsdkError:
        return None


# What every browser test drives (conftest's `browser` fixture launches it), and the mark that skips
# a browser test file, saying so, where there is none.
CHROMIUM = system_chromium()
NEEDS_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (apt-get install chromium-headless-shell); CI installs it, so these run there",
)
# Every host→view message of these tests is judged by the ext-apps SDK's own schemas, in node.
NEEDS_NODE_FOR_SCHEMAS = pytest.mark.skipif(
    shutil.which("node") is None,
    reason="NODE IS MISSING: the host's messages are judged by the ext-apps SDK's schemas, which need node",
)


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) for the 8-bit, non-interlaced PNGs Chromium writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    position, chunks, header = 8, [], None
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    assert header is not None, "no IHDR chunk"
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, f"unexpected PNG format {header}"
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + predictor) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [bytes(r[i] for i in range(len(r)) if i % channels != 3) for r in rows]


def luminance_stats(rows: list[bytes]) -> tuple[float, float, int]:
    """Mean and variance of pixel luminance, and the number of distinct colours."""
    values: list[float] = []
    colours: set[bytes] = set()
    for row in rows:
        for x in range(0, len(row), 3):
            r, g, b = row[x], row[x + 1], row[x + 2]
            values.append(0.299 * r + 0.587 * g + 0.114 * b)
            colours.add(row[x : x + 3])
    mean = sum(values) / len(values)
    return mean, sum((v - mean) ** 2 for v in values) / len(values), len(colours)


def marked_pids(marker: str) -> set[int]:
    """Every live process whose environment holds `marker`: our child and all it started, even reparented ones."""
    found: set[int] = set()
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes():
                found.add(int(entry.name))
        except OSError:
            continue
    return found


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


PYTHON = sys.executable


# The host page frames the sandbox proxy as `#widget`; the view (the widget's own document) is the proxy's
# one frame, on the view origin.
VIEW_IN_PROXY = "iframe"


def widget_view(scope):
    """A FrameLocator for the widget's document in a host page (or a FrameLocator of one)."""
    return scope.frame_locator("iframe#widget").frame_locator(VIEW_IN_PROXY)


def view_frame(page, timeout: float = 20.0):
    """The Frame of the widget's document the host page shows now (inside its #widget proxy frame)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        handle = page.locator("iframe#widget").element_handle(timeout=timeout * 1000)
        proxy = handle.content_frame() if handle else None
        if proxy is not None and proxy.child_frames:
            view = proxy.child_frames[0]
            if "/view?" in view.url:
                return view
        if time.monotonic() > deadline:
            raise AssertionError("the host page shows no widget view in its #widget proxy frame")
        page.wait_for_timeout(50)


def http_get(url: str, headers: dict[str, str] | None = None, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """GET a URL of the host, its sandbox names under `.localhost` included: a browser answers them with
    loopback itself, Python's resolver need not, so the request goes to 127.0.0.1 with the name as Host."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection("127.0.0.1", parts.port or 80, timeout=timeout)
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request("GET", path or "/", headers={"Host": parts.netloc, **(headers or {})})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()
