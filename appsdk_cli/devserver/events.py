"""What a running dev session reports: plain values, handed to one observer (the renderer, or a test).

The supervisor's events come first (started, reloaded, broken, stopped); the session adds those of the
parts it composes around it: the widget half (Vite, the widget's types), the workbench and the tunnel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.devserver.transport import Transport

if TYPE_CHECKING:
    from appsdk_cli.contract.compare import Change
    from appsdk_cli.tunnel import TunnelEndpoints
    from appsdk_cli.web.build import WidgetEvent

__all__ = ["Transport"]  # and the event types below


@dataclass(frozen=True)
class ToolChanges:
    """How the tool list differs from the last good import: names only, the detail is in the app."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    @classmethod
    def between(cls, before: dict[str, str], after: dict[str, str]) -> ToolChanges:
        """From two imports' tool fingerprints (tool name -> hash of its whole descriptor)."""
        return cls(
            added=tuple(sorted(after.keys() - before.keys())),
            removed=tuple(sorted(before.keys() - after.keys())),
            changed=tuple(sorted(n for n in before.keys() & after.keys() if before[n] != after[n])),
        )


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
    call_tool: str | None = None  # one to `appsdk call` as printed: no required arguments, read-only first
    preview_tool: str | None = None  # one to `appsdk preview`: it has a widget, read-only first
    tunnel: bool = False  # a tunnel opens with the server (dev --tunnel)
    workbench: str | None = None  # the workbench's URL, when dev runs one
    workbench_note: str | None = None  # why it is not on the project's usual port


@dataclass(frozen=True)
class ContractReport:
    """What a reload did to the release contract, classified, against one baseline; made only with news."""

    baseline: str | None  # the snapshot file compared with ("appsdk.contract.json"); None: the previous reload
    changes: tuple[Change, ...] = ()  # new since the last report (against the previous reload: all of them)
    resolved: tuple[Change, ...] = ()  # reported before, gone now: back as in the snapshot
    standing: int = 0  # how many differences from the baseline there are after this reload


@dataclass(frozen=True)
class Reloaded:
    changed_files: tuple[str, ...]
    seconds: float  # from the change being seen to the new code accepting requests
    app_ok: bool
    tools: ToolChanges | None = None  # set only when the tool list changed since the last good import
    contract: ContractReport | None = None  # set only when there is something new to say about the contract
    # Every tool the new code serves, when it imported and described itself; () when it does not import.
    tool_names: tuple[str, ...] | None = None
    # Where the time went, when the reload took longer than the supervisor's SLOW_RELOAD_SECONDS: the
    # biggest parts, largest first, as (what, seconds): ("importing the app's 300 modules", 0.81).
    slow: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class NewCodeServing:
    """A save's new code answers requests: said the moment it does, ahead of Reloaded, which waits for
    the new code's description (tool changes, the contract), so a page can re-render without that wait."""

    changed_files: tuple[str, ...]
    seconds: float  # from the change being seen to the new code accepting requests


@dataclass(frozen=True)
class AppBroken:
    summary: str  # one line: "SyntaxError: invalid syntax (server.py line 12)"
    traceback: str
    hint: str


@dataclass(frozen=True)
class AppExited:
    """The app's process ended on its own (os._exit, a crash, a kill): the next request starts it again."""

    exit_code: int
    message: str


@dataclass(frozen=True)
class AppRestarted:
    """A request came in after the app's process had died, and a fresh one now serves it."""

    seconds: float  # from the request being seen to the new process accepting it
    app_ok: bool


@dataclass(frozen=True)
class WaitingForImport:
    """Importing the app has not finished after `seconds`: said once, dev keeps waiting (or a save restarts it)."""

    target: str
    seconds: float
    hint: str
    then: str  # what the user can do meanwhile: "save a fix to start over, Ctrl-C to stop"


@dataclass(frozen=True)
class AppsdkReplaced:
    """appsdk's own installed files changed under the running dev (a `pip install` into its venv): what
    it has not loaded yet (the workbench's files among them) is gone or new, until dev restarts."""

    package: Path


@dataclass(frozen=True)
class ToolCrashed:
    """A tool raised something other than ToolError: the client got only "Error executing tool NAME"."""

    tool: str
    summary: str  # "KeyError: 'june' (server.py:103 in picks_for)"
    frames: tuple[tuple[str, int, str, str], ...]  # the user's own frames: (file, line, function, code)
    rerun_of: str | None = None  # the workbench made this call again by itself after a save: which one


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


# -- the session around the supervisor ----------------------------------------------------------------


@dataclass(frozen=True)
class StepStarted:
    """A slow step begins (the renderer shows a spinner); a StepFinished with the same words always follows."""

    what: str  # "Starting the ngrok agent"


@dataclass(frozen=True)
class StepFinished:
    what: str


@dataclass(frozen=True)
class WidgetUnavailable:
    """The project has web/, but Vite could not start: the server still serves the last built widget."""

    message: str


@dataclass(frozen=True)
class WidgetStarted:
    """The app serves and Vite is running beside it (reported right after Started)."""

    vite_url: str | None


@dataclass(frozen=True)
class WidgetActivity:
    """What the Vite side did: a build, a build error, a type error, Vite exiting."""

    event: WidgetEvent


@dataclass(frozen=True)
class WidgetTypesWritten:
    """web/src/tools.gen.ts was regenerated from the tools' schemas."""

    tools: tuple[str, ...]


@dataclass(frozen=True)
class WidgetTypesFailed:
    message: str


@dataclass(frozen=True)
class WidgetThrew:
    """A widget in the workbench threw: an uncaught error or rejection in its document."""

    tool: str
    run: int  # the run's number on the page (#3)
    message: str  # one line, its place in the template: "Uncaught Error: boom (ui://widget/x.html:12)"


@dataclass(frozen=True)
class BrowserNotOpened:
    """--open asked for the workbench in a browser, and none could be started."""

    url: str


@dataclass(frozen=True)
class TunnelOpened:
    endpoints: TunnelEndpoints
    # Whether the public /mcp URL answered an MCP initialize; if not, `problem` says what it answered.
    verified: bool
    problem: str | None = None


@dataclass(frozen=True)
class TunnelRestarted:
    """The ngrok agent died and was restarted; the public URL may have changed."""

    endpoints: TunnelEndpoints
    url_changed: bool


@dataclass(frozen=True)
class TunnelLost:
    """The agent died and could not come back: the app keeps serving locally."""

    message: str


DevEvent = (
    Started
    | NewCodeServing
    | Reloaded
    | AppBroken
    | AppExited
    | AppRestarted
    | WaitingForImport
    | AppsdkReplaced
    | ToolCrashed
    | AllowedHostAdded
    | AuthServerStarted
    | Stopped
    | StepStarted
    | StepFinished
    | WidgetUnavailable
    | WidgetStarted
    | WidgetActivity
    | WidgetTypesWritten
    | WidgetTypesFailed
    | WidgetThrew
    | BrowserNotOpened
    | TunnelOpened
    | TunnelRestarted
    | TunnelLost
)

# Who hears a session: the renderer in the CLI, a list's append in a test.
Observer = Callable[[DevEvent], None]
