"""The plugin folder as a package sees it: one bounded walk, and the one way to read a file from it.

`plugin check`, `pack` and `install` all take the folder from `walk_package`, which
- lists each folder once and opens nothing: an entry's type comes from the listing (lstat), so a symlink
  is never followed and a FIFO, a socket or a device is reported, never read (opening a FIFO for reading
  waits for a writer, for good);
- goes at most MAX_DEPTH folders down and lists at most MAX_ENTRIES entries; past either it stops, and the
  tree says where, once, instead of walking a runaway folder (a copy of itself, generated output) for a
  minute.

`read_regular` reads a file only once it is known to be a regular file inside the folder, and opens it
non-blocking, so a file swapped for a FIFO between the check and the read cannot hang either.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_DEPTH = 32
MAX_ENTRIES = 10_000

# Folders and files a package never carries: version control, environments, caches, appsdk's own state.
EXCLUDED_NAMES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "__pycache__",
        ".pytest_cache",
        ".ruff_cache",
        ".mypy_cache",
        ".appsdk",
        "node_modules",
        "dist",
        "build",
        ".DS_Store",
        ".idea",
        ".vscode",
    }
)


# The project's tests and what they leave: a host runs the server, never its tests, and a new app's widget
# pictures (tests/__snapshots__/) were 73 of its package's 89 kB.
TEST_FOLDERS = frozenset({"tests", "test"})  # at the top of the folder only: a package may hold a module named so
TEST_ARTEFACTS = frozenset({"__snapshots__", ".coverage", "htmlcov", ".tox", ".nox", ".hypothesis"})


def is_excluded(relative: PurePosixPath) -> bool:
    parts = relative.parts
    return (
        any(
            part in EXCLUDED_NAMES
            or part in TEST_ARTEFACTS
            or part.endswith(".egg-info")
            or part == ".env"
            or part.startswith(".env.")
            for part in parts
        )
        or (len(parts) > 0 and parts[0] in TEST_FOLDERS)
        or relative.suffix in (".pyc", ".pyo")
    )


@dataclass(frozen=True)
class PackageTree:
    """What walk_package found: the files a package would hold, and everything it refused."""

    files: list[PurePosixPath] = field(default_factory=list)  # regular files, sorted
    size: int = 0  # their bytes, before compression
    links: list[PurePosixPath] = field(default_factory=list)  # symlinks, never followed
    leaving: frozenset[PurePosixPath] = frozenset()  # those of the links that lead out of the folder
    special: dict[PurePosixPath, str] = field(default_factory=dict)  # path -> "a FIFO", "a socket", …
    unreadable: dict[PurePosixPath, str] = field(default_factory=dict)  # folder -> why it could not be listed
    too_deep: PurePosixPath | None = None  # the first folder below MAX_DEPTH, not walked
    too_many: bool = False  # MAX_ENTRIES were listed and the walk stopped there


def kind_of(mode: int) -> str | None:
    """What a non-regular, non-folder, non-link entry is, in words; None for those three."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return None
    return "not a regular file"


def walk_package(root: Path, *, skip: set[Path]) -> PackageTree:
    """Walk `root` (resolved) as a package: `skip` holds folders left out (the archive's own output folder)."""
    skipped = {PurePosixPath(p.relative_to(root).as_posix()) for p in skip if p.is_relative_to(root)}
    files: list[PurePosixPath] = []
    links: list[PurePosixPath] = []
    leaving: set[PurePosixPath] = set()
    special: dict[PurePosixPath, str] = {}
    unreadable: dict[PurePosixPath, str] = {}
    size = listed = 0
    too_deep: PurePosixPath | None = None
    stack: list[PurePosixPath] = [PurePosixPath()]
    while stack:
        folder = stack.pop()
        if len(folder.parts) > MAX_DEPTH:
            too_deep = too_deep or folder
            continue
        try:
            with os.scandir(root / folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as error:
            unreadable[folder] = error.strerror or str(error)
            continue
        listed += len(entries)
        if listed > MAX_ENTRIES:
            return PackageTree(
                sorted(files), size, sorted(links), frozenset(leaving), special, unreadable, too_deep, True
            )
        for entry in entries:
            relative = folder / entry.name
            if is_excluded(relative) or relative in skipped:
                continue
            try:
                found = entry.stat(follow_symlinks=False)
            except OSError as error:
                unreadable[relative] = error.strerror or str(error)
                continue
            if stat.S_ISLNK(found.st_mode):
                links.append(relative)
                if not _stays_inside(root, relative):
                    leaving.add(relative)
            elif stat.S_ISDIR(found.st_mode):
                stack.append(relative)
            elif stat.S_ISREG(found.st_mode):
                files.append(relative)
                size += found.st_size
            else:
                special[relative] = kind_of(found.st_mode) or "not a regular file"
    return PackageTree(sorted(files), size, sorted(links), frozenset(leaving), special, unreadable, too_deep)


def _stays_inside(root: Path, relative: PurePosixPath) -> bool:
    try:
        return (root / relative).resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a loop of links
        return False


class NotAFile(ValueError):
    """A path appsdk will not read: not a regular file (`kind` says what it is), or one reached by leaving
    the plugin folder (`leaves`)."""

    def __init__(self, kind: str = "", *, leaves: bool = False) -> None:
        self.kind = kind
        self.leaves = leaves
        super().__init__("leads out of the plugin folder through a symlink" if leaves else f"is {kind}, not a file")


def read_regular(path: Path, *, limit: int, root: Path | None = None) -> bytes:
    """At most `limit` bytes of `path`, which must be a regular file (inside `root`, when given, after
    following links); NotAFile, one line of why, otherwise. OSError when it cannot be read."""
    real = path.resolve()
    if root is not None and not real.is_relative_to(root.resolve()):
        raise NotAFile(leaves=True)
    mode = os.stat(real).st_mode
    if stat.S_ISDIR(mode):
        raise NotAFile("a folder")
    kind = kind_of(mode)
    if kind is not None:
        raise NotAFile(kind)
    # Non-blocking and checked again once open: it may have been swapped since the stat above.
    descriptor = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "rb") as handle:
        kind = kind_of(os.fstat(descriptor).st_mode)
        if kind is not None:
            raise NotAFile(kind)
        return handle.read(limit)
