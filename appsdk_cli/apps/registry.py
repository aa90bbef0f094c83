"""The registry's files, the runtime snapshot, the listing of app servers, and the caches.

Files under APPSDK_HOME (default ~/.appsdk), and a project's `.appsdk/` layered over them:
  apps.toml          the registered apps; written only by appsdk, atomically (temporary file + rename)
  config.toml        the user's policy, with Codex's keys (see policy.py); appsdk never writes it
  requirements.toml  (APPSDK_HOME only) a managed layer that can only switch apps and tools off
  snapshots/*.json   the committed runtime snapshot of `app/installed`, one per registry view
A malformed file is one error naming the file and line, and is never overwritten.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.appmeta import ToolMeta, tool_meta
from appsdk_cli.apps import policy as policy_rules
from appsdk_cli.errors import AppsdkError, UsageError

HOME_ENV = "APPSDK_HOME"
STATE_DIR = ".appsdk"
APPS_FILE = "apps.toml"
CONFIG_FILE = "config.toml"
REQUIREMENTS_FILE = "requirements.toml"
SNAPSHOT_DIR = "snapshots"
SNAPSHOT_VERSION = 1
DEFAULT_LIST_TIMEOUT = 10.0
CACHE_TTL = 3600.0  # Codex keeps both app/list sources for an hour
APP_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
APP_FIELDS = ("url", "name", "description", "icon_url", "icon_url_dark")


class RegistryFileError(AppsdkError):
    """A registry or config file that cannot be read (exit 1). The message names the file and line."""


# --- where the files are --------------------------------------------------------------------------------


def default_home() -> Path:
    configured = os.environ.get(HOME_ENV)
    return Path(configured).expanduser() if configured else Path.home() / STATE_DIR


def find_workspace(start: Path, home: Path) -> Path | None:
    """The project containing `start`: the nearest folder with a `.appsdk/` or a pyproject.toml.

    A folder whose `.appsdk` is APPSDK_HOME itself (running in ~) is not a project.
    """
    start = start.resolve()
    home = home.resolve()
    for folder in [start, *start.parents]:
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


# --- reading TOML with errors that name file and line ----------------------------------------------------


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


def _file_error(path: Path, text: str, key_path: tuple[str, ...], message: str) -> RegistryFileError:
    line = line_of(text, key_path)
    return RegistryFileError(f"{path}:{line}: {message}" if line else f"{path}: {message}")


# --- apps.toml -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RegisteredApp:
    id: str
    url: str
    name: str
    description: str | None = None
    icon_url: str | None = None
    icon_url_dark: str | None = None
    source: Path | None = None  # the apps.toml it came from


def check_app_id(app_id: str) -> str:
    if not APP_ID.match(app_id):
        raise UsageError(
            f"{app_id!r} is not a valid app id: use 1-64 letters, digits, '-' and '_', starting with a letter or digit"
        )
    return app_id


def check_url(url: str) -> str:
    from appsdk_cli.project import check_server_url

    return check_server_url(url)


def parse_apps(path: Path, document: dict[str, Any], text: str) -> dict[str, RegisteredApp]:
    apps_table = document.get("apps", {})
    if not isinstance(apps_table, dict):
        raise _file_error(path, text, ("apps",), "apps must be a table of [apps.<id>] tables")
    apps: dict[str, RegisteredApp] = {}
    for app_id, raw in apps_table.items():
        where = ("apps", app_id)
        if not APP_ID.match(app_id):
            raise _file_error(path, text, where, f"{app_id!r} is not a valid app id (letters, digits, '-', '_')")
        if not isinstance(raw, dict):
            raise _file_error(path, text, where, f"apps.{app_id} must be a table")
        values: dict[str, str | None] = {}
        for key in APP_FIELDS:
            value = raw.get(key)
            if value is not None and not isinstance(value, str):
                raise _file_error(path, text, (*where, key), f"apps.{app_id}.{key} must be a string, not {value!r}")
            values[key] = value
        if not values["url"]:
            raise _file_error(path, text, where, f"apps.{app_id} has no url")
        apps[app_id] = RegisteredApp(
            id=app_id,
            url=str(values["url"]),
            name=values["name"] or app_id,
            description=values["description"],
            icon_url=values["icon_url"],
            icon_url_dark=values["icon_url_dark"],
            source=path,
        )
    return apps


def read_apps_file(path: Path) -> dict[str, RegisteredApp]:
    loaded = read_toml(path)
    return {} if loaded is None else parse_apps(path, *loaded)


def load_apps(paths: Paths) -> dict[str, RegisteredApp]:
    """Every registered app, the workspace's entry replacing a global one of the same id; sorted by id."""
    apps: dict[str, RegisteredApp] = {}
    for path in paths.apps_files():
        apps.update(read_apps_file(path))
    return dict(sorted(apps.items()))


# A tiny TOML writer for the one shape apps.toml has: [apps.<id>] tables of string values.

_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and every control character escaped."""
    out = []
    for char in value:
        if char in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        elif 0xD800 <= ord(char) <= 0xDFFF:
            raise UsageError("text with a lone surrogate cannot be stored in apps.toml")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def render_apps(apps: Iterable[RegisteredApp]) -> str:
    lines = ["# The apps registered with appsdk, written by `appsdk apps add` and `appsdk apps remove`.", ""]
    for app in sorted(apps, key=lambda a: a.id):
        lines.append(f"[apps.{app.id}]")  # ids are bare keys by construction (APP_ID)
        for key in APP_FIELDS:
            value = getattr(app, key)
            if value is not None:
                lines.append(f"{key} = {toml_string(value)}")
        lines.append("")
    return "\n".join(lines)


def write_atomically(path: Path, text: str) -> None:
    """A temporary file in the same folder, flushed to disk, renamed over the target: never half a file."""
    make_folder(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as problem:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise AppsdkError(f"cannot write {path}: {problem.strerror or problem}") from problem


def make_folder(folder: Path) -> None:
    """Create a registry folder (APPSDK_HOME, a project's .appsdk/), or say in one line why not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as problem:
        reason = problem.strerror or str(problem)
        raise AppsdkError(
            f"cannot create {folder}: {reason}; set {HOME_ENV} to a folder you can write (default ~/.appsdk)"
        ) from None


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Serialise read-modify-write of `path` between processes (two `apps add` at once lose nothing)."""
    import fcntl

    make_folder(path.parent)
    with open(path.with_name(f".{path.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@dataclass(frozen=True)
class AddResult:
    app: RegisteredApp
    file: Path
    previous: RegisteredApp | None


@dataclass(frozen=True)
class RemoveResult:
    app: RegisteredApp
    file: Path


def _edited(text: str | None, change: Callable[[Any], None]) -> str:
    """apps.toml with one change made in place: comments, key order and keys appsdk does not know (an
    `owner`, a note) are kept as the user wrote them. A new file starts with render_apps' header."""
    import tomlkit

    document = tomlkit.parse(text if text is not None else render_apps([]))
    if "apps" not in document:
        document["apps"] = tomlkit.table(is_super_table=True)
    change(document["apps"])
    return tomlkit.dumps(document)


def add_app(paths: Paths, app: RegisteredApp, *, workspace: bool = False) -> AddResult:
    check_app_id(app.id)
    check_url(app.url)
    for key in APP_FIELDS:
        value = getattr(app, key)
        if value is not None:
            toml_string(value)  # refuses what TOML cannot hold (a lone surrogate) as a usage error
    target = paths.apps_file(workspace)
    with locked(target):
        loaded = read_toml(target)  # a malformed file raises here, before anything is written
        apps = {} if loaded is None else parse_apps(target, *loaded)
        previous = apps.get(app.id)
        stored = RegisteredApp(app.id, app.url, app.name, app.description, app.icon_url, app.icon_url_dark, target)

        def put(table: Any) -> None:
            import tomlkit

            entry = table.get(app.id)
            if entry is None:
                entry = tomlkit.table()
                table[app.id] = entry
            for key in APP_FIELDS:
                value = getattr(stored, key)
                if value is not None:
                    entry[key] = value
                elif key in entry:
                    del entry[key]  # an update says every field appsdk owns; the user's own keys stay

        text = _edited(loaded[1] if loaded else None, put)
        # What we write must read back as exactly this registry: never leave a file we could not parse.
        if parse_apps(target, tomllib.loads(text), text).get(app.id) != stored:
            raise AppsdkError(f"could not update {target} in place; it is left as it was")
        write_atomically(target, text)
    return AddResult(stored, target, previous)


def remove_app(paths: Paths, app_id: str, *, workspace: bool = False) -> RemoveResult:
    target = paths.apps_file(workspace)
    with locked(target):
        loaded = read_toml(target)
        apps = {} if loaded is None else parse_apps(target, *loaded)
        if app_id not in apps or loaded is None:
            raise _unknown_app(paths, app_id, target)
        removed = apps.pop(app_id)

        def drop(table: Any) -> None:
            del table[app_id]

        write_atomically(target, _edited(loaded[1], drop))
    return RemoveResult(removed, target)


def _unknown_app(paths: Paths, app_id: str, target: Path) -> UsageError:
    import difflib

    everywhere = load_apps(paths)
    if app_id in everywhere and everywhere[app_id].source != target:
        other = everywhere[app_id].source
        flag = "without --workspace" if other == paths.home / APPS_FILE else "with --workspace"
        return UsageError(f"app {app_id!r} is registered in {other}, not {target}; run the command {flag}")
    close = difflib.get_close_matches(app_id, list(everywhere), n=3, cutoff=0.5)
    if close:
        hint = f"; did you mean {', '.join(close)}?"
    else:
        hint = f"; registered: {', '.join(everywhere)}" if everywhere else "; none are registered"
    return UsageError(f"no app {app_id!r} is registered in {target}{hint}")


# --- config.toml and requirements.toml --------------------------------------------------------------------


def _read_policy_layer(path: Path) -> policy_rules.PolicyLayer:
    loaded = read_toml(path)
    if loaded is None:
        return policy_rules.PolicyLayer()
    document, text = loaded
    try:
        return policy_rules.parse_layer(document)
    except policy_rules.PolicyValueError as problem:
        raise _file_error(path, text, problem.path, str(problem)) from None


def load_policy(paths: Paths) -> policy_rules.Policy:
    user = policy_rules.merge(_read_policy_layer(path) for path in paths.config_files())
    return policy_rules.Policy(user=user, managed=_read_policy_layer(paths.requirements_file))


# --- listing app servers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    """What one app's server said: its name (runtimeName) and every page of tools/list, raw."""

    url: str
    runtime_name: str | None
    tools: list[dict[str, Any]]
    fetched_at: float  # unix seconds

    @functools.cached_property
    def metas(self) -> tuple[ToolMeta, ...]:
        """The tools' metadata, read once per listing: warm app/read answers from it without re-parsing."""
        return tuple(tool_meta(tool) for tool in self.tools)

    def as_json(self) -> dict[str, Any]:
        return {"url": self.url, "runtimeName": self.runtime_name, "tools": self.tools, "fetchedAt": self.fetched_at}

    @classmethod
    def from_json(cls, raw: Any) -> Listing | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("url"), str) or not isinstance(raw.get("tools"), list):
            return None
        name = raw.get("runtimeName")
        fetched = raw.get("fetchedAt")
        return cls(
            url=raw["url"],
            runtime_name=name if isinstance(name, str) else None,
            tools=[tool for tool in raw["tools"] if isinstance(tool, dict)],
            fetched_at=float(fetched) if isinstance(fetched, int | float) else 0.0,
        )


@dataclass(frozen=True)
class ListingFailure:
    app_id: str
    url: str
    reason: str

    def __str__(self) -> str:
        return f"{self.app_id} ({self.url}): {self.reason}"


Lister = Callable[[RegisteredApp, float], Listing]


def list_app(app: RegisteredApp, timeout: float) -> Listing:
    """Connect to the app's server, as a host does, and take every page of tools/list.

    A protected server gets the token given with `apps add --token`, else the cached sign-in for its
    URL (refreshed if it ran out); without either, its 401 says how to get one."""
    from appsdk_cli.apps import tokens
    from appsdk_cli.auth import client as oauth
    from appsdk_cli.client import AuthRequired, connect

    token = tokens.load(default_home(), app.url) or oauth.usable_token(app.url, timeout=timeout)
    try:
        with connect(app.url, timeout=timeout, token=token) as client:
            tools = client.list_tools()
            name = client.server.name if client.server and client.server.name else None
    except AuthRequired as problem:
        how = f"`appsdk call --url {app.url}` signs in, or `appsdk apps add {app.id} --url {app.url} --token T`"
        raise AppsdkError(f"{problem.message}; {how}") from None
    return Listing(app.url, name, [tool for tool in tools if isinstance(tool, dict)], time.time())


def list_concurrently(
    apps: Iterable[RegisteredApp], timeout: float, lister: Lister = list_app
) -> dict[str, Listing | ListingFailure]:
    """List every app at once, each within `timeout` seconds from the start.

    One daemon thread per app rather than a pool: a server that never answers must not hold up the others,
    nor the process's exit (a pool's workers are joined at exit). The client's socket timeout is the same
    `timeout`, so an abandoned thread ends soon after on its own.
    """
    apps = list(apps)
    results: dict[str, Listing | ListingFailure] = {}
    done = {app.id: threading.Event() for app in apps}
    lock = threading.Lock()

    def work(app: RegisteredApp) -> None:
        try:
            outcome: Listing | ListingFailure = lister(app, timeout)
        except AppsdkError as problem:
            outcome = ListingFailure(app.id, app.url, problem.message)
        except Exception as problem:  # a server can break a client in ways no one listed; report, don't crash
            outcome = ListingFailure(app.id, app.url, f"{type(problem).__name__}: {problem}")
        with lock:
            results.setdefault(app.id, outcome)
        done[app.id].set()

    for app in apps:
        threading.Thread(target=work, args=(app,), name=f"list-{app.id}", daemon=True).start()
    deadline = time.monotonic() + timeout
    for app in apps:
        if not done[app.id].wait(max(0.0, deadline - time.monotonic())):
            with lock:
                results.setdefault(app.id, ListingFailure(app.id, app.url, f"did not answer within {timeout:g} s"))
    return {app.id: results[app.id] for app in apps}


# --- the runtime snapshot (app/installed) -----------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """The committed runtime state: one Listing per app id, replaced only by a refresh that fully succeeded."""

    listings: dict[str, Listing] = field(default_factory=dict)
    refreshed_at: float | None = None

    def for_app(self, app: RegisteredApp) -> Listing | None:
        listing = self.listings.get(app.id)
        # A listing taken from another URL says nothing about the server registered now.
        return listing if listing is not None and listing.url == app.url else None


def read_snapshot(path: Path) -> Snapshot | None:
    """The committed snapshot, or None if there is none (an unreadable one counts as none: it is a cache)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("version") != SNAPSHOT_VERSION or not isinstance(raw.get("apps"), dict):
        return None
    listings = {}
    for app_id, entry in raw["apps"].items():
        listing = Listing.from_json(entry)
        if listing is not None:
            listings[app_id] = listing
    refreshed = raw.get("refreshedAt")
    return Snapshot(listings, float(refreshed) if isinstance(refreshed, int | float) else None)


def write_snapshot(path: Path, snapshot: Snapshot) -> None:
    document = {
        "version": SNAPSHOT_VERSION,
        "refreshedAt": snapshot.refreshed_at,
        "apps": {app_id: listing.as_json() for app_id, listing in sorted(snapshot.listings.items())},
    }
    write_atomically(path, json.dumps(document, ensure_ascii=False, indent=1) + "\n")


# --- caches -----------------------------------------------------------------------------------------------


@dataclass
class CacheEntry:
    value: Any
    stored_at: float  # time.monotonic()


class TtlCache:
    """A small thread-safe cache; an entry is replaced only by `put` (i.e. by a fetch that succeeded)."""

    def __init__(self, ttl: float = CACHE_TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._entries: dict[Any, CacheEntry] = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or self.clock() - entry.stored_at > self.ttl:
                return None
            return entry.value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._entries[key] = CacheEntry(value, self.clock())
