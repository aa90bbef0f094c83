"""The one way appsdk writes a file: whole, into a folder reached without following a planted link.

A fixed-name temporary (`OUTPUT.partial`, `dev.json.tmp`) in a folder someone else can write into is a
redirect waiting to happen: plant a symlink under that name and the write lands wherever it points. So every
file appsdk writes goes through `write_file` (or `replacing`, for one written in pieces):

- the target's folder is reached from an allowed `root` one name at a time, each opened relative to the
  one before with O_NOFOLLOW. A symlink on the way is followed only while where it points stays under the
  root (resolved here, name by name, never by the kernel); one that leads out is refused, as is `..` above
  the root. Missing folders are made the same way, relative to their parent.
- the folder is opened once; a random name is created in it with O_CREAT|O_EXCL|O_NOFOLLOW relative to that
  descriptor, written, flushed to disk, and renamed over the target relative to the same descriptor. A
  reader never sees half a file, and no name another process planted is ever opened.
- a target that is itself a symlink is refused (renaming over it would be safe, but the person who made
  that link meant something by it: say so instead of silently replacing it).

The root is the boundary the caller is allowed to write under: the project for what a command writes into
it, APPSDK_HOME for the user's state, the user's home for skills, the folder a person named on the command
line for an output they chose. The root itself is trusted as given (it may be a symlink).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import BinaryIO

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Symlinks followed inside the root on the way to one folder, as the kernel's own limit (ELOOP past it).
_MAX_LINKS = 40
# Without descriptor-relative calls (Windows) the walk falls back to checking each name by path.
# (os.replace takes src_dir_fd/dst_dir_fd wherever os.rename does; only rename is listed in supports_dir_fd.)
_RELATIVE = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and bool(_DIRECTORY)


class UnsafeOutput(PermissionError):
    """A write refused because it would follow a link appsdk did not make, or land outside its root.
    An OSError, so every caller's `except OSError` reports it with its one line (`strerror`)."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(errno.EPERM, why, str(path))


def default_root(path: Path, cwd: Path | None = None) -> Path:
    """The root for an output a person named on the command line: the current folder when the path is
    under it (so a planted link inside the project cannot lead the write out), else the folder they named."""
    cwd = Path.cwd() if cwd is None else cwd
    absolute = Path(os.path.abspath(cwd / path))
    return cwd if absolute.is_relative_to(os.path.abspath(cwd)) else absolute.parent


def write_file(
    path: Path,
    data: str | bytes,
    *,
    root: Path | None = None,
    mode: int = 0o666,
    folder_mode: int = 0o777,
    sync: bool = True,
) -> Path:
    """Write `path` whole (see the module's docstring). `root`: the folder the write must stay under
    (default: `path`'s own folder, so only the target and its temporary are guarded). `mode`: the new
    file's mode before the umask (0o600: this user's alone from its first byte). OSError (UnsafeOutput when
    refused) when it cannot be written; nothing is left behind then."""
    with replacing(path, root=root, mode=mode, folder_mode=folder_mode, sync=sync) as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


@contextlib.contextmanager
def replacing(
    path: Path,
    *,
    root: Path | None = None,
    mode: int = 0o666,
    folder_mode: int = 0o777,
    sync: bool = True,
) -> Iterator[BinaryIO]:
    """A binary handle on a new file that replaces `path` when the block ends without an exception (and is
    removed when it raises). Same rules as write_file."""
    path = Path(path)
    with open_folder(path.parent, root=path.parent if root is None else root, mode=folder_mode) as folder:
        name = path.name
        _refuse_link(name, folder, path)
        temporary = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
        descriptor = _open_new(temporary, folder, mode)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                yield handle
                handle.flush()
                if sync:
                    os.fsync(handle.fileno())
            _replace(temporary, name, folder)
        except BaseException:
            with contextlib.suppress(OSError):
                _unlink(temporary, folder)
            raise


def open_in_place(path: Path, flags: int, *, root: Path, mode: int = 0o600, folder_mode: int = 0o777) -> int:
    """A descriptor on `path` itself, for a file used in place rather than replaced (a lock, an append-only
    log): its folder reached as open_folder reaches it, the file opened with O_NOFOLLOW relative to it, so
    a link planted under its name is refused (ELOOP) rather than followed."""
    path = Path(path)
    with open_folder(path.parent, root=root, mode=folder_mode) as folder:
        if isinstance(folder, int):
            return os.open(path.name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=folder)
        return os.open(folder / path.name, flags | _NOFOLLOW | _CLOEXEC, mode)


def rename_in_folder(folder: Path, source: str, target: str, *, root: Path) -> None:
    """Rename `source` to `target` (replacing it), both plain names in `folder`, which is reached as
    open_folder reaches it: for a whole folder moved into place (a copy made beside it, then renamed).
    Neither name is followed; a rename moves the entry itself."""
    for name in (source, target):
        if os.sep in name or name in ("", ".", ".."):
            raise ValueError(f"{name!r} is not a plain name")
    with open_folder(Path(folder), root=root, create=False) as opened:
        _replace(source, target, opened)


def move_entry(source: Path, target: Path, *, root: Path) -> None:
    """Move the entry `source` to `target` (replacing it), from one folder to another, each folder reached
    as open_folder reaches it (the target's made where missing): a file set aside where it moves folders.
    Neither name is followed; a link moves as the link."""
    source, target = Path(source), Path(target)
    with (
        open_folder(source.parent, root=root, create=False) as from_folder,
        open_folder(target.parent, root=root) as to_folder,
    ):
        if isinstance(from_folder, int) and isinstance(to_folder, int):
            os.replace(source.name, target.name, src_dir_fd=from_folder, dst_dir_fd=to_folder)
        else:
            os.replace(Path(from_folder) / source.name, Path(to_folder) / target.name)


def make_folder(path: Path, *, root: Path, mode: int = 0o777) -> Path:
    """`path` and every missing folder between `root` and it, made the safe way (see open_folder)."""
    with open_folder(Path(path), root=root, mode=mode):
        return Path(path)


@contextlib.contextmanager
def open_folder(folder: Path, *, root: Path, mode: int = 0o777, create: bool = True) -> Iterator[int | Path]:
    """A descriptor on `folder`, reached from `root` without following a link out of it (made, `mode`
    before the umask, where missing and `create`). Where the platform has no descriptor-relative calls,
    the checked path itself."""
    folder, root = Path(folder), Path(root)
    if not _RELATIVE:
        yield _checked_folder(folder, root, mode, create)
        return
    descriptor = _walk(folder, root, mode, create)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def _relative_parts(folder: Path, root: Path) -> list[str]:
    """`folder`'s names below `root`, `..` taken lexically as a person reads the path they typed (every name
    that remains is still walked, links included)."""
    absolute_root = os.path.abspath(root)
    relative = os.path.relpath(os.path.abspath(folder), absolute_root)
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        raise UnsafeOutput(folder, f"{folder} is outside {root}, where appsdk may write")
    return [part for part in PurePath(relative).parts if part not in ("", ".")]


def _walk(folder: Path, root: Path, mode: int, create: bool) -> int:
    if create and not root.exists():
        root.mkdir(parents=True, mode=mode, exist_ok=True)  # the root is trusted as given
    parts = _relative_parts(folder, root)
    real_root = os.path.realpath(root)
    stack = [os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)]
    links = 0
    try:
        while parts:
            name = parts.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) == 1:
                    raise UnsafeOutput(folder, f"{folder} leads out of {root}, where appsdk may write")
                os.close(stack.pop())
                continue
            try:
                stack.append(os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=stack[-1]))
                continue
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: the retry opens it as found
                    os.mkdir(name, mode, dir_fd=stack[-1])
                parts.insert(0, name)
                continue
            except OSError as problem:
                found = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
                if not stat.S_ISLNK(found.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, f"{name} is not a folder", str(folder)) from problem
            links += 1
            if links > _MAX_LINKS:
                raise OSError(errno.ELOOP, "too many symbolic links", str(folder))
            target = os.readlink(name, dir_fd=stack[-1])
            if os.path.isabs(target):
                inside = _below(target, real_root) or _below(target, os.path.abspath(root))
                if inside is None:
                    raise UnsafeOutput(
                        folder, f"{name} is a symbolic link that leads out of {root}; appsdk does not write through it"
                    )
                while len(stack) > 1:
                    os.close(stack.pop())
                parts = [*PurePath(inside).parts, *parts]
            else:
                parts = [*PurePath(target).parts, *parts]
        return stack.pop()
    finally:
        for descriptor in stack:
            os.close(descriptor)


def _below(target: str, root: str) -> str | None:
    """`target` relative to `root` when it is root or below it (lexically), else None."""
    inside = os.path.relpath(os.path.normpath(target), root)
    return None if inside == ".." or inside.startswith(".." + os.sep) else inside


def _refuse_link(name: str, folder: int | Path, path: Path) -> None:
    try:
        if isinstance(folder, int):
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
        else:
            found = (folder / name).lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(found.st_mode):
        raise UnsafeOutput(path, f"{path} is a symbolic link; appsdk does not write through one (remove it first)")
    if stat.S_ISDIR(found.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"{path} is a folder", str(path))


def _open_new(name: str, folder: int | Path, mode: int) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    if isinstance(folder, int):
        return os.open(name, flags, mode, dir_fd=folder)
    return os.open(folder / name, flags, mode)


def _replace(source: str, target: str, folder: int | Path) -> None:
    if isinstance(folder, int):
        os.replace(source, target, src_dir_fd=folder, dst_dir_fd=folder)
    else:
        os.replace(folder / source, folder / target)


def _unlink(name: str, folder: int | Path) -> None:
    if isinstance(folder, int):
        os.unlink(name, dir_fd=folder)
    else:
        (folder / name).unlink()


def _checked_folder(folder: Path, root: Path, mode: int, create: bool) -> Path:
    """The fallback walk: the same rule, checked by path (a race remains where the platform cannot do better)."""
    parts = _relative_parts(folder, root)
    real_root = Path(os.path.realpath(root))
    current = Path(root)
    if create:
        current.mkdir(parents=True, exist_ok=True, mode=mode)
    for part in parts:
        current = current / part
        if create and not os.path.lexists(current):
            with contextlib.suppress(FileExistsError):
                current.mkdir(mode=mode)
    if not Path(os.path.realpath(current)).is_relative_to(real_root):
        raise UnsafeOutput(folder, f"{folder} leads out of {root}, where appsdk may write")
    return current
