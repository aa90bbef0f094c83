"""Reading the registry's TOML files: a malformed file is one error naming the file and line.

Only regular files of sane size are read (never a FIFO or a device), and nothing here writes.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from appsdk_cli.errors import AppsdkError


class RegistryFileError(AppsdkError):
    """A registry or config file that cannot be read (exit 1). The message names the file and line."""


_AT_LINE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def _leaf_paths(value: Any, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from _leaf_paths(inner, (*prefix, key))


def line_of(text: str, path: tuple[str, ...]) -> int | None:
    """The line that sets (or opens) the key at `path`, best effort: each line parsed on its own."""
    table: tuple[str, ...] = ()
    best: int | None = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            parsed = tomllib.loads(stripped.removeprefix("[").removesuffix("]") + " = 0" if _header(stripped) else line)
        except tomllib.TOMLDecodeError:
            continue
        if _header(stripped):
            header = next(iter(_deepest(parsed)), ())
            table = header
            if header == path:
                best = best or number
            continue
        for leaf in _leaf_paths(parsed, table):
            if leaf == path:
                return number
    return best


def _header(stripped: str) -> bool:
    return stripped.startswith("[") and not stripped.startswith("[[") and stripped.endswith("]")


def _deepest(parsed: dict[str, Any]) -> Iterator[tuple[str, ...]]:
    path: tuple[str, ...] = ()
    value: Any = parsed
    while isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        path = (*path, key)
        value = value[key]
    yield path


MAX_FILE_BYTES = 4 * 1024 * 1024  # a registry of thousands of apps is a few hundred kB


def read_regular_file(path: Path) -> bytes:
    """The bytes of a regular file of sane size. A FIFO would block forever and /dev/zero never end:
    opened without blocking, and refused unless fstat says it is a plain file."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(info.st_mode):
            raise RegistryFileError(f"{path} is not a regular file (a pipe or a device?); make it a TOML file")
        if info.st_size > MAX_FILE_BYTES:
            raise RegistryFileError(f"{path} is {info.st_size} bytes, more than a registry file can be")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_toml(path: Path) -> tuple[dict[str, Any], str] | None:
    """The parsed file and its text, or None when it does not exist."""
    try:
        raw = read_regular_file(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise RegistryFileError(f"{path} is a folder, not a file") from None
    except OSError as problem:
        raise RegistryFileError(f"cannot read {path}: {problem.strerror or problem}") from problem
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as problem:
        line = raw[: problem.start].count(b"\n") + 1
        raise RegistryFileError(f"{path}:{line}: not UTF-8 text") from None
    try:
        return tomllib.loads(text), text
    except RecursionError:
        raise RegistryFileError(f"{path}: invalid TOML: nested too deeply") from None
    except tomllib.TOMLDecodeError as problem:
        message = str(problem)
        match = _AT_LINE.search(message)
        if match:
            return_line = match.group(1)
            message = f"{message[: match.start()]} (column {match.group(2)})"
        else:
            return_line = str(max(1, text.count("\n") + (0 if text.endswith("\n") else 1)))
            message = message.replace(" (at end of document)", " (at the end)")
        raise RegistryFileError(f"{path}:{return_line}: invalid TOML: {message}") from None


def file_error(path: Path, text: str, key_path: tuple[str, ...], message: str) -> RegistryFileError:
    line = line_of(text, key_path)
    return RegistryFileError(f"{path}:{line}: {message}" if line else f"{path}: {message}")
