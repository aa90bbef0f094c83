"""Find the app in a project, its appsdk config, and the running dev server (.appsdk/dev.json)."""

from __future__ import annotations

import contextlib
import hmac
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.netloc import is_loopback_host, is_loopback_url
from appsdk_cli.proctree import listening_process
from appsdk_cli.safewrite import open_in_place, write_file

DEFAULT_APP = "server:mcp"
DEFAULT_URL = "http://127.0.0.1:8000/mcp"
STATE_DIR = ".appsdk"
DEV_STATE_FILE = "dev.json"
# Under APPSDK_HOME: one file per running `appsdk dev`, named by its URL, naming its project.
DEV_INDEX_DIR = "dev"
# Where a running `appsdk dev` says, to loopback callers only, which project it serves (devserver/asgi.py).
DEV_IDENTITY_PATH = "/.well-known/appsdk-dev"
# How long the state-file check waits for that answer: a dev whose worker is still importing answers late.
DEV_IDENTITY_TIMEOUT = 5.0
# The answer is three short fields; anything longer is not our dev.
_DEV_IDENTITY_LIMIT = 16384


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
    # Chosen per run: the dev at `url` must answer with it (and this project) before anything trusts the file.
    nonce: str = ""


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
    """The `appsdk dev` serving this project, proved by asking it; None otherwise.

    The one rule for trusting .appsdk/dev.json (and, through dev_status, status.json): a project folder is
    the agent's or a cloned repository's to write, so the file alone proves nothing. Its URL must be
    loopback, its pid alive, and the dev listening there must answer DEV_IDENTITY_PATH with this project,
    that pid and the file's per-run nonce. A process's command line is never consulted: `appsdk new --dev`
    runs dev under another name, and any live `appsdk dev` could be named by a planted pid."""
    state = _state_file(project)
    if state is None or not state.nonce or not _process_alive(state.pid):
        return None
    answer = ask_dev_identity(state.url)
    if answer is None:
        return None
    same = (
        answer.get("project") == str(project.resolve())
        and answer.get("pid") == state.pid
        and isinstance(answer.get("nonce"), str)
        and hmac.compare_digest(answer["nonce"], state.nonce)
    )
    return state if same else None


def ask_dev_identity(url: str) -> dict[str, Any] | None:
    """What the `appsdk dev` at `url` says it serves ({project, pid, nonce}); None when `url` is not a
    loopback http URL or nothing there answers as a dev. Plain http.client: no proxy from the
    environment, no redirect, a bounded read."""
    import http.client  # here: most commands never ask a dev

    if not is_loopback_url(url):
        return None
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or 80
    except ValueError:
        return None
    connection = http.client.HTTPConnection(host, port, timeout=DEV_IDENTITY_TIMEOUT)
    try:
        connection.request("GET", DEV_IDENTITY_PATH, headers={"Host": parts.netloc, "Accept": "application/json"})
        response = connection.getresponse()
        body = response.read(_DEV_IDENTITY_LIMIT + 1)
        if response.status != 200 or len(body) > _DEV_IDENTITY_LIMIT:
            return None
        answer = json.loads(body)
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        connection.close()
    return answer if isinstance(answer, dict) else None


def port_holder(host: str, port: int) -> str | None:
    """Who listens on `port`, in words for a "port in use" line: another `appsdk dev` by the project it
    answers for (asked, as read_dev_state asks), else a process of this user by pid and name; None when
    it cannot be known (another user's process, no /proc)."""
    ask = host if is_loopback_host(host) else "127.0.0.1"
    answer = ask_dev_identity(f"http://{'[' + ask + ']' if ':' in ask else ask}:{port}/")
    # Both names come from the other process: printed only when they hold nothing a terminal would obey.
    project, pid = (answer.get("project"), answer.get("pid")) if answer is not None else (None, None)
    if isinstance(project, str) and project.isprintable() and isinstance(pid, int):
        return f"the appsdk dev of {project} (pid {pid})"
    found = listening_process(port)
    if found is None:
        return None
    return f"pid {found[0]} ({found[1]})" if found[1].isprintable() else f"pid {found[0]}"


def _state_file(project: Path) -> DevState | None:
    """What .appsdk/dev.json says, unchecked: only its own writer (remove_dev_state) and read_dev_state use it."""
    try:
        raw = json.loads(dev_state_path(project).read_text(encoding="utf-8"))
        state = DevState(**raw)
    except (OSError, ValueError, TypeError):
        return None
    # Anyone may have written it: fields of the wrong type make it no state at all, not a crash later.
    typed = isinstance(state.url, str) and isinstance(state.nonce, str) and isinstance(state.extra, dict)
    pid_ok = isinstance(state.pid, int) and not isinstance(state.pid, bool) and state.pid > 0
    return state if typed and pid_ok else None


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
    current = _state_file(project)  # our own file: whether we wrote it, not whether to trust it
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
