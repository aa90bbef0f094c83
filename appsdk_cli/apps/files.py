"""Where the registry's files are, and how one is written: atomically, under a lock between processes.

Files under APPSDK_HOME (default ~/.appsdk; private, see appsdk_cli.home), and a project's `.appsdk/`
layered over them:
  apps.toml          the registered apps; written only by appsdk, atomically (temporary file + rename)
  config.toml        the user's policy, with Codex's keys (see policy.py); appsdk never writes it
  requirements.toml  (APPSDK_HOME only) a managed layer that can only switch apps and tools off
  snapshots/*.json   the committed runtime snapshot of `app/installed`, one per registry view
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.home import HOME_ENV, home_location, private_folder, write_private
from appsdk_cli.project import walk_up
from appsdk_cli.safewrite import open_in_place, write_file

STATE_DIR = ".appsdk"
APPS_FILE = "apps.toml"
CONFIG_FILE = "config.toml"
REQUIREMENTS_FILE = "requirements.toml"
SNAPSHOT_DIR = "snapshots"


def default_home() -> Path:
    return home_location()


def find_workspace(start: Path, home: Path) -> Path | None:
    """The project containing `start`: the nearest folder with a `.appsdk/` or a pyproject.toml.

    A folder whose `.appsdk` is APPSDK_HOME itself (running in ~) is not a project.
    """
    home = home.resolve()
    for folder in walk_up(start):
        state = folder / STATE_DIR
        if state.resolve() == home:
            return None
        if state.is_dir() or (folder / "pyproject.toml").is_file():
            return folder
    return None


@dataclass(frozen=True)
class Paths:
    home: Path
    workspace: Path | None = None  # the project folder, whose .appsdk/ layers over home

    @classmethod
    def discover(cls, cwd: Path | None = None, home: Path | None = None) -> Paths:
        home = (home or default_home()).resolve()
        return cls(home, find_workspace(cwd or Path.cwd(), home))

    @property
    def workspace_dir(self) -> Path | None:
        return self.workspace / STATE_DIR if self.workspace else None

    def apps_files(self) -> list[Path]:
        """Lowest layer first."""
        return [self.home / APPS_FILE] + ([self.workspace_dir / APPS_FILE] if self.workspace_dir else [])

    def config_files(self) -> list[Path]:
        return [self.home / CONFIG_FILE] + ([self.workspace_dir / CONFIG_FILE] if self.workspace_dir else [])

    @property
    def requirements_file(self) -> Path:
        return self.home / REQUIREMENTS_FILE

    def apps_file(self, workspace: bool) -> Path:
        if not workspace:
            return self.home / APPS_FILE
        if self.workspace_dir is None:
            raise UsageError("--workspace needs a project: run it in a folder with a pyproject.toml or .appsdk/")
        return self.workspace_dir / APPS_FILE

    @property
    def snapshot_file(self) -> Path:
        # One snapshot per registry view, kept under APPSDK_HOME so listing never writes into a project.
        key = "global" if self.workspace is None else hashlib.sha256(str(self.workspace).encode()).hexdigest()[:16]
        return self.home / SNAPSHOT_DIR / f"{key}.json"


def write_atomically(path: Path, text: str, *, home: Path) -> None:
    """A temporary file in the same folder, flushed to disk, renamed over the target: never half a file, never
    through a planted link (appsdk_cli.safewrite). Under `home` (APPSDK_HOME) the file is private (0600, see
    appsdk_cli.home); a project's (in its .appsdk/) is the user's own, and stays inside that project."""
    make_folder(path.parent, home=home)
    try:
        if path.is_relative_to(home):
            write_private(path, text.encode("utf-8"), home=home, sync=True)
        else:
            write_file(path, text, root=_root_of(path, home))
    except OSError as problem:
        raise AppsdkError(f"cannot write {path}: {problem.strerror or problem}") from problem


def _root_of(path: Path, home: Path) -> Path:
    """Where a registry file's writes must stay: APPSDK_HOME, or the project whose .appsdk/ holds it."""
    return home if path.is_relative_to(home) else path.parent.parent


def make_folder(folder: Path, *, home: Path) -> None:
    """Create a registry folder (APPSDK_HOME, private; a project's .appsdk/), or say in one line why not."""
    try:
        private_folder(folder, home)
    except OSError as problem:
        reason = problem.strerror or str(problem)
        raise AppsdkError(
            f"cannot create {folder}: {reason}; set {HOME_ENV} to a folder you can write (default ~/.appsdk)"
        ) from None


@contextlib.contextmanager
def locked(path: Path, *, home: Path) -> Iterator[None]:
    """Serialise read-modify-write of `path` between processes (two `apps add` at once lose nothing)."""
    import fcntl

    make_folder(path.parent, home=home)
    lock_file = path.with_name(f".{path.name}.lock")
    try:
        descriptor = open_in_place(lock_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, root=_root_of(path, home))
    except OSError as problem:
        raise AppsdkError(f"cannot lock {path}: {problem.strerror or problem}") from None
    with os.fdopen(descriptor, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
