"""What a running dev server reports: plain values, handed to an observer (the renderer, or a test)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.devserver.transport import Transport

if TYPE_CHECKING:
    from appsdk_cli.contract.compare import Change

__all__ = ["Transport"]  # and the event types below


@dataclass(frozen=True)
class ToolChanges:
    """How the tool list differs from the last good import: names only, the detail is in the app."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Started:
    url: str
    transport: Transport
    app: str  # the target, described: "server:mcp ([tool.appsdk] app in …/pyproject.toml)"
    project: Path
    reload: bool
    app_ok: bool
    pid: int
    tools: tuple[str, ...] = ()  # the app's tool names, as first imported
    tunnel: bool = False  # a tunnel opens with the server (dev --tunnel)
    workbench: str | None = None  # the workbench's URL, when dev runs one


@dataclass(frozen=True)
class Reloaded:
    changed_files: tuple[str, ...]
    seconds: float  # from the change being seen to the new code accepting requests
    app_ok: bool
    tools: ToolChanges | None = None  # set only when the tool list changed since the last good import
    contract: tuple[Change, ...] | None = None  # set only when the release contract changed, classified


@dataclass(frozen=True)
class AppBroken:
    summary: str  # one line: "SyntaxError: invalid syntax (server.py line 12)"
    traceback: str
    hint: str


@dataclass(frozen=True)
class AppExited:
    """The app's process ended on its own (os._exit, a crash): requests get an error until the next save."""

    exit_code: int
    message: str


@dataclass(frozen=True)
class ToolCrashed:
    """A tool raised something other than ToolError: the client got only "Error executing tool NAME"."""

    tool: str
    summary: str  # "KeyError: 'june' (server.py:103 in picks_for)"
    frames: tuple[tuple[str, int, str, str], ...]  # the user's own frames: (file, line, function, code)


@dataclass(frozen=True)
class AllowedHostAdded:
    host: str


@dataclass(frozen=True)
class AuthServerStarted:
    """The development authorization server serves (again, with a new issuer once a tunnel opens)."""

    issuer: str
    resource: str  # the token audience
    users: tuple[str, ...]
    scopes: tuple[str, ...]
    auto_user: str | None


@dataclass(frozen=True)
class Stopped:
    reason: str = "stopped"
    extra: dict[str, str] = field(default_factory=dict)


DevEvent = Started | Reloaded | AppBroken | AppExited | ToolCrashed | AllowedHostAdded | AuthServerStarted | Stopped
