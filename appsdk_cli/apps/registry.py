"""apps.toml: the registered apps, read with errors that name file and line, and edited in place.

appsdk alone writes apps.toml, atomically and under a lock; an edit keeps the user's comments and keys.
A malformed file is one error naming the file and line, and is never overwritten.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appsdk_cli.apps.files import APPS_FILE, Paths, locked, write_atomically
from appsdk_cli.apps.tomlfile import file_error, read_toml
from appsdk_cli.errors import AppsdkError, UsageError

APP_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
APP_FIELDS = ("url", "name", "description", "icon_url", "icon_url_dark")


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
        raise file_error(path, text, ("apps",), "apps must be a table of [apps.<id>] tables")
    apps: dict[str, RegisteredApp] = {}
    for app_id, raw in apps_table.items():
        where = ("apps", app_id)
        if not APP_ID.match(app_id):
            raise file_error(path, text, where, f"{app_id!r} is not a valid app id (letters, digits, '-', '_')")
        if not isinstance(raw, dict):
            raise file_error(path, text, where, f"apps.{app_id} must be a table")
        values: dict[str, str | None] = {}
        for key in APP_FIELDS:
            value = raw.get(key)
            if value is not None and not isinstance(value, str):
                raise file_error(path, text, (*where, key), f"apps.{app_id}.{key} must be a string, not {value!r}")
            values[key] = value
        if not values["url"]:
            raise file_error(path, text, where, f"apps.{app_id} has no url")
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
    with locked(target, home=paths.home):
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
        write_atomically(target, text, home=paths.home)
    return AddResult(stored, target, previous)


def remove_app(paths: Paths, app_id: str, *, workspace: bool = False) -> RemoveResult:
    target = paths.apps_file(workspace)
    with locked(target, home=paths.home):
        loaded = read_toml(target)
        apps = {} if loaded is None else parse_apps(target, *loaded)
        if app_id not in apps or loaded is None:
            raise _unknown_app(paths, app_id, target)
        removed = apps.pop(app_id)

        def drop(table: Any) -> None:
            del table[app_id]

        write_atomically(target, _edited(loaded[1], drop), home=paths.home)
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
