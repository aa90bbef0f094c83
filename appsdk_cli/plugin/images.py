"""Just enough of PNG, JPEG, WebP and SVG to check a listing asset, and a PNG writer for the placeholder logo.

Reads headers only (the type from the magic bytes, never the file name), with the standard library, from
bytes the caller read (tree.read_regular: a regular file only).
"""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class ImageInfo:
    kind: str  # "png", "jpeg", "webp", "svg"
    width: float | None  # None when the file does not say (an SVG without a size or viewBox)
    height: float | None


def sniff(data: bytes) -> ImageInfo | None:
    """The image's type and size, or None when it is none of the four types."""
    head = data[: 64 * 1024]
    if head.startswith(PNG_SIGNATURE) and head[12:16] == b"IHDR":
        width, height = struct.unpack(">II", head[16:24])
        return ImageInfo("png", width, height)
    if head.startswith(b"\xff\xd8"):
        return ImageInfo("jpeg", *_jpeg_size(data))
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return ImageInfo("webp", *_webp_size(head))
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if text.startswith("<") and re.search(r"<svg[\s>]", text):
        return ImageInfo("svg", *_svg_size(text))
    return None


def _jpeg_size(data: bytes) -> tuple[int | None, int | None]:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            index += 1
            continue
        marker = data[index + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            index += 2
            continue
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        # Start-of-frame markers (all but DHT, JPG and DAC) carry the size.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return width, height
        index += 2 + length
    return None, None


def _webp_size(head: bytes) -> tuple[int | None, int | None]:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None, None


def _svg_size(text: str) -> tuple[float | None, float | None]:
    tag = re.search(r"<svg\b[^>]*>", text, re.DOTALL)
    if not tag:
        return None, None

    def attribute(name: str) -> str | None:
        match = re.search(rf"\s{name}\s*=\s*[\"']([^\"']*)[\"']", tag.group(0))
        return match.group(1) if match else None

    def number(value: str | None) -> float | None:
        match = re.fullmatch(r"\s*([0-9.]+)\s*(px)?\s*", value or "")
        return float(match.group(1)) if match else None

    width, height = number(attribute("width")), number(attribute("height"))
    if width is not None and height is not None:
        return width, height
    box = (attribute("viewBox") or "").replace(",", " ").split()
    if len(box) == 4:
        try:
            return float(box[2]), float(box[3])
        except ValueError:
            return None, None
    return None, None


def hex_colour(value: str) -> tuple[int, int, int] | None:
    """#RRGGBB (or #RGB) as an RGB triple; None for anything else."""
    match = re.fullmatch(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})", value.strip())
    if not match:
        return None
    digits = match.group(1)
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def contrast(first: tuple[int, int, int], second: tuple[int, int, int]) -> float:
    """The WCAG 2 contrast ratio of two sRGB colours (1 to 21)."""

    def luminance(rgb: tuple[int, int, int]) -> float:
        def channel(value: int) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = (channel(v) for v in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def placeholder_logo(size: int, background: tuple[int, int, int]) -> bytes:
    """A square RGB PNG: the brand colour with a white ring, so it reads as a placeholder at any size."""
    centre = (size - 1) / 2
    outer, inner = size * 0.34, size * 0.22
    fill = bytes(background)
    white = b"\xff\xff\xff"
    rows = []
    for y in range(size):
        dy = (y - centre) ** 2
        row = bytearray(b"\x00")  # filter type 0 (none) for every row
        for x in range(size):
            distance = ((x - centre) ** 2 + dy) ** 0.5
            row += white if inner <= distance <= outer else fill
        rows.append(bytes(row))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return (
        PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")
    )
