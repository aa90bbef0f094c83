"""Find the app in a project, its appsdk config, and the running dev server (.appsdk/dev.json)."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.safewrite import open_in_place, write_file

DEFAULT_APP = "server:mcp"
DEFAULT_URL = "http://127.0.0.1:8000/mcp"
STATE_DIR = ".appsdk"
DEV_STATE_FILE = "dev.json"
# Under APPSDK_HOME: one file per running `appsdk dev`, named by its URL, naming its project.
DEV_INDEX_DIR = "dev"


@dataclass(frozen=True)
class AppTarget:
    """Where the MCPServer object lives: `module:attribute`, importable from `project`."""

    project: Path
    module: str
    attribute: str
    declared_in: Path | None  # the pyproject.toml that named it, or None for the default

    @property
    def spec(self) -> str:
        return f"{self.module}:{self.attribute}"

    def describe(self) -> str:
        where = f"[tool.appsdk] app in {self.declared_in}" if self.declared_in else "the default"
        return f"{self.spec} ({where})"


def read_config(project: Path) -> dict[str, Any]:
    """The [tool.appsdk] table of the project's pyproject.toml ({} when there is none)."""
    import tomllib  # here: `appsdk call --url` never reads a project

    pyproject = project / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise AppsdkError(f"{pyproject} is not valid TOML: {error}") from None
    except RecursionError:
        raise AppsdkError(f"{pyproject} is not valid TOML: nested too deeply") from None
    except (OSError, UnicodeDecodeError) as error:
        raise AppsdkError(f"cannot read {pyproject}: {getattr(error, 'strerror', None) or error}") from None
    table = data.get("tool", {}).get("appsdk", {})
    if not isinstance(table, dict):
        raise AppsdkError(f"{pyproject}: [tool.appsdk] must be a table")
    return table


def walk_up(start: Path, ceiling: Path | None = None) -> list[Path]:
    """`start` (resolved) and the folders above it, nearest first: the one walk up every search for a
    project, pyproject.toml or .appsdk/ takes. With `ceiling` (`appsdk mcp`'s served root) it stops there,
    never above it; a start outside the ceiling is searched alone."""
    start = start.resolve()
    chain = [start, *start.parents]
    if ceiling is None:
        return chain
    ceiling = ceiling.resolve()
    return chain[: chain.index(ceiling) + 1] if ceiling in chain else [start]


def find_project(start: Path, ceiling: Path | None = None) -> Path:
    """The project a folder belongs to, as `call` finds its dev server: the folder itself when it holds a
    pyproject.toml or the default server.py, else the nearest parent with a pyproject.toml (never above
    `ceiling`), else itself. So `appsdk dev` in myapp/widgets/ serves myapp."""
    start = start.resolve()
    if not start.is_dir() or (start / "pyproject.toml").is_file() or (start / "server.py").is_file():
        return start
    for folder in walk_up(start, ceiling)[1:]:
        if (folder / "pyproject.toml").is_file():
            return folder
    return start


def app_target(project: Path) -> AppTarget:
    """The app named by [tool.appsdk] app = "module:attr", else server:mcp."""
    project = project.resolve()
    if not project.is_dir():
        raise UsageError(f"{project} is not a folder; give the path of an app project")
    config = read_config(project)
    spec = config.get("app", DEFAULT_APP)
    declared_in = project / "pyproject.toml" if "app" in config else None
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise AppsdkError(f'{declared_in}: [tool.appsdk] app must look like "module:attribute", not {spec!r}')
    module, attribute = spec.split(":")
    return AppTarget(project, module, attribute, declared_in)


@dataclass(frozen=True)
class DevState:
    """What a running `appsdk dev` tells other commands: written on start, removed on exit."""

    url: str
    host: str
    port: int
    pid: int
    transport: str = "streamable-http"
    public_url: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def dev_state_path(project: Path) -> Path:
    return project / STATE_DIR / DEV_STATE_FILE


def write_dev_state(project: Path, state: DevState) -> Path:
    """Write atomically, so a reader never sees half a file; and name the project under its URL in
    APPSDK_HOME, so a command run from another folder finds it too (see running_dev_for_url)."""
    path = dev_state_path(project)
    _write_atomically(project, path, asdict(state))
    from appsdk_cli.home import write_private

    index = _dev_index_file(state.url)
    with contextlib.suppress(OSError):  # a home that cannot be written costs only that lookup from elsewhere
        write_private(index, json.dumps({"url": state.url, "project": str(project.resolve())}, indent=2) + "\n")
    return path


def _write_atomically(project: Path, path: Path, value: dict[str, Any]) -> None:
    write_file(path, json.dumps(value, indent=2) + "\n", root=project, sync=False)


def _dev_index_file(url: str) -> Path:
    import hashlib

    from appsdk_cli.home import home_location

    return home_location() / DEV_INDEX_DIR / f"{hashlib.sha256(url.encode()).hexdigest()[:24]}.json"


def running_dev_for_url(url: str) -> tuple[Path, DevState] | None:
    """The project whose running `appsdk dev` serves `url`, and its state, wherever it was started from."""
    try:
        entry = json.loads(_dev_index_file(url).read_text(encoding="utf-8"))
        project = Path(entry["project"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    state = read_dev_state(project)  # None once that dev has stopped (the entry may outlive a kill -9)
    return (project, state) if state is not None and state.url == url else None


def read_dev_state(project: Path) -> DevState | None:
    """The running dev server of this project, or None (no file, unreadable, or its process is gone)."""
    path = dev_state_path(project)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        state = DevState(**raw)
    except (OSError, ValueError, TypeError):
        return None
    if not is_appsdk_dev(state.pid):
        return None
    return state


def is_appsdk_dev(pid: int) -> bool:
    """Whether `pid` is a running `appsdk dev` (a recycled pid now running something else is not)."""
    if not _process_alive(pid):
        return False
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return False
    except OSError:
        return True  # no /proc (not Linux): alive is the best we can tell
    words = [Path(word.decode("utf-8", "replace")).name for word in argv if word]
    named = any("appsdk" in word for word in words)
    return named and "dev" in words


DEV_LOCK_FILE = "dev.lock"


def lock_dev_project(project: Path) -> int:
    """Take the project's dev lock for this process's lifetime (the kernel drops it when we die, even by
    SIGKILL); a second `appsdk dev` in the same project is refused naming the one that holds it.
    Returns the lock's file descriptor."""
    import fcntl

    folder = project / STATE_DIR
    try:
        fd = open_in_place(folder / DEV_LOCK_FILE, os.O_RDWR | os.O_CREAT, root=project, mode=0o644)
    except OSError as problem:
        raise AppsdkError(f"cannot write {folder}: {problem.strerror or problem}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        running = read_dev_state(project)
        where = f" (pid {running.pid}, serving {running.url})" if running else ""
        raise AppsdkError(
            f"appsdk dev is already running for {project}{where}; stop it (Ctrl-C in its terminal) or use that one"
        ) from None
    return fd


def remove_dev_state(project: Path, pid: int | None = None) -> None:
    """Remove the state file; with pid, only if that process wrote it."""
    path = dev_state_path(project)
    current = read_dev_state(project)
    if pid is not None and current is not None and current.pid != pid:
        return
    path.unlink(missing_ok=True)
    if current is not None:
        index = _dev_index_file(current.url)
        try:
            if json.loads(index.read_text(encoding="utf-8")).get("project") == str(project.resolve()):
                index.unlink()
        except (OSError, ValueError, AttributeError):
            pass


def find_dev_state(start: Path, ceiling: Path | None = None) -> DevState | None:
    """The dev server of the project containing `start` (this folder or a parent, never above `ceiling`)."""
    for folder in walk_up(start, ceiling):
        if dev_state_path(folder).is_file():
            return read_dev_state(folder)
        if (folder / "pyproject.toml").is_file():
            return None
    return None


def check_server_url(url: str, where: str = "--url") -> str:
    """An http(s) URL with a host, or a UsageError (exit 2) naming where it came from."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        parts, port_ok = None, False
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise UsageError(f"{where} {url!r} is not an http(s) URL of an MCP server, e.g. http://127.0.0.1:8000/mcp")
    return url


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
