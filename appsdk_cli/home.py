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
from pathlib import Path

from appsdk_cli.safewrite import make_folder, write_file

HOME_ENV = "APPSDK_HOME"
DEFAULT_NAME = ".appsdk"
FOLDER_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = 0o077  # the group's and everyone else's bits


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
    private_home), none through a link out of the home. A folder outside the home (a cache path a caller
    chose) is made as any other."""
    home = home_location() if home is None else home
    if not _inside(folder, home):
        return make_folder(folder, root=folder.parent)
    return make_folder(folder, root=private_home(home), mode=FOLDER_MODE)


def write_private(path: Path, data: str | bytes, *, home: Path | None = None, sync: bool = False) -> Path:
    """Write `path` whole and readable by this user only: 0600 from the first byte, by safewrite's one
    writer (a random temporary beside it renamed over it, no planted link followed), so no reader sees half a
    file. `sync` flushes it to disk first (for a file a person edits through appsdk, not for a cache).
    OSError when it cannot be written."""
    home = home_location() if home is None else home
    root = private_home(home) if _inside(path, home) else path.parent
    return write_file(path, data, root=root, mode=FILE_MODE, folder_mode=FOLDER_MODE, sync=sync)


def _inside(path: Path, home: Path) -> bool:
    return Path(os.path.abspath(path)).is_relative_to(os.path.abspath(home))


MCP_TOKEN_FILE = "mcp-http-token"


def mcp_http_token(home: Path | None = None) -> str:
    """The bearer token `appsdk mcp --port` requires of every request: made (random, 256 bits) the first
    time it is needed and kept 0600 in the home, so only this user (and what runs as them) can read it, and
    the config `--print-config ... --port` prints stays valid across restarts. Delete the file to rotate it.
    OSError when the home cannot be written."""
    path = private_home(home) / MCP_TOKEN_FILE
    with contextlib.suppress(OSError, UnicodeDecodeError):
        found = path.lstat()
        if stat.S_ISREG(found.st_mode) and not found.st_mode & _OTHERS and found.st_uid == _owner(found):
            token = path.read_text(encoding="ascii").strip()
            if len(token) >= 32:
                return token
    import secrets

    token = secrets.token_urlsafe(32)
    write_private(path, token + "\n", home=home, sync=True)
    return token


def _owner(found: os.stat_result) -> int:
    return os.geteuid() if hasattr(os, "geteuid") else found.st_uid
