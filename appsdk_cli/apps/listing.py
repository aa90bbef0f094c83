"""Listing app servers: connect as a host does and take every page of tools/list, all apps at once."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from appsdk_cli.appmeta import ToolMeta, tool_meta
from appsdk_cli.apps.files import default_home
from appsdk_cli.apps.registry import RegisteredApp
from appsdk_cli.errors import AppsdkError

DEFAULT_LIST_TIMEOUT = 10.0


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
    URL (refreshed if it ran out) once it shows it is the server signed in to; without either, its 401
    says how to get one."""
    from appsdk_cli.apps import tokens
    from appsdk_cli.auth import release
    from appsdk_cli.client import AuthRequired, connect

    token = tokens.load(default_home(), app.url) or release.cached_token(app.url, timeout=timeout).token
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
