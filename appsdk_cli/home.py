"""APPSDK_HOME (default ~/.appsdk): where appsdk keeps this user's state, and the one way to write there.

It holds sign-ins and what signed-in servers said (their tool lists, the URLs used), so it is this user's
alone: the folder 0700 (which alone keeps every other user out), the folders appsdk makes in it 0700, the
files it writes 0600 from their first byte and whole (a temporary file renamed into place).
`private_home` owns the folder, `write_private` writes under it.

Versions before this one made the home 0755 and its caches 0644. The first use finds such a home wider
than 0700 and tightens it and everything in it, once: a 0700 home is never walked again. Only a folder
that is plainly appsdk's is tightened, never one shared by nature (owned by someone else, sticky like
/tmp, or the user's own home folder), in case APPSDK_HOME was pointed at one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from pathlib import Path

HOME_ENV = "APPSDK_HOME"
DEFAULT_NAME = ".appsdk"
FOLDER_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = 0o077  # the group's and everyone else's bits
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def home_location() -> Path:
    """Where the home is ($APPSDK_HOME, else ~/.appsdk); creates and changes nothing."""
    configured = os.environ.get(HOME_ENV)
    return Path(configured).expanduser() if configured else Path.home() / DEFAULT_NAME


def private_home(home: Path | None = None) -> Path:
    """The home (`home`, else home_location()), created 0700, or tightened to 0700 (with its files, to 0600)
    if an earlier appsdk left it open. OSError when it cannot be created."""
    home = home_location() if home is None else home
    try:
        found = home.stat()
    except FileNotFoundError:
        home.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # another appsdk made it meanwhile
            home.mkdir(mode=FOLDER_MODE)
        return home
    if stat.S_ISDIR(found.st_mode) and found.st_mode & _OTHERS and _ours_to_tighten(home, found):
        tighten(home)
    return home


def _ours_to_tighten(home: Path, found: os.stat_result) -> bool:
    owner = os.geteuid() if hasattr(os, "geteuid") else found.st_uid
    shared = found.st_mode & stat.S_ISVTX or found.st_uid != owner
    return not shared and home.resolve() not in (Path.home().resolve(), Path(home.anchor))


def tighten(folder: Path) -> None:
    """The folder and every folder and regular file under it lose the group's and others' bits (0755 becomes
    0700, 0644 becomes 0600); symlinks are neither followed nor changed."""
    _take_others_bits(folder)
    for where, folders, files in os.walk(folder, followlinks=False):
        for name in folders + files:
            _take_others_bits(Path(where) / name)


def _take_others_bits(path: Path) -> None:
    with contextlib.suppress(OSError):  # gone meanwhile, or not ours: leave it
        found = path.lstat()
        if (stat.S_ISDIR(found.st_mode) or stat.S_ISREG(found.st_mode)) and found.st_mode & _OTHERS:
            path.chmod(stat.S_IMODE(found.st_mode) & ~_OTHERS)


def private_folder(folder: Path, home: Path | None = None) -> Path:
    """`folder` made with every missing folder from the home down to it 0700 (the home first, see
    private_home). A folder outside the home (a cache path a caller chose) is made as any other."""
    home = home_location() if home is None else home
    try:
        below = folder.relative_to(home)
    except ValueError:
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    current = private_home(home)
    for part in below.parts:
        current = current / part
        with contextlib.suppress(FileExistsError):
            current.mkdir(mode=FOLDER_MODE)
    return folder


def write_private(path: Path, data: str | bytes, *, home: Path | None = None, sync: bool = False) -> Path:
    """Write `path` whole and readable by this user only: 0600 from the first byte, in a temporary file
    beside it renamed over it, so no reader sees half a file. `sync` flushes it to disk first (for a file
    a person edits through appsdk, not for a cache). OSError when it cannot be written."""
    private_folder(path.parent, home)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    body = data.encode("utf-8") if isinstance(data, str) else data
    try:
        temporary.unlink(missing_ok=True)  # a leftover of a killed writer keeps its mode; O_EXCL starts afresh
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, FILE_MODE)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(body)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    return path
