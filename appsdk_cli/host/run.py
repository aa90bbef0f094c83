"""What a run is, once: one tool call the host knows of, and the host log's line.

`appsdk preview TOOL` holds one run (the default run, id ""), already done when the host starts. The
workbench holds one per call it makes, from the moment the call starts: the page lists runs without a
widget too, and a run gets its `session` (what the host page renders) when its widget is read. So the
run's call (tool, arguments, status, result, timing) and its view (session, the template last served)
live in one record, and the workbench's page and the host page read the same one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from appsdk_cli.host.session import PreviewSession, WidgetTemplate

DEFAULT_RUN = ""  # the run a request that names none addresses (`appsdk preview TOOL`'s)
RUN_STATUSES = ("running", "done", "failed", "invalid", "cancelled")


@dataclass(frozen=True)
class LogEntry:
    """One line of the host log: what the widget did or what went wrong inside it."""

    kind: str  # console, error, csp, openai, bridge, host
    level: str  # info, warn, error
    message: str
    run: str = ""  # the run it belongs to ("" : the single session of `appsdk preview TOOL`)


class UnknownRun(KeyError):
    """A request named a run this host does not hold (or one that has no widget to show)."""


@dataclass
class Run:
    """One tool call: what was called, how it went (`as_json` is what the workbench page sees), and what
    the host page renders for it (`session`; None while the run has no widget)."""

    id: str
    tool: str
    arguments: dict[str, Any]
    sequence: int = 0  # the order the runs were started in
    status: str = "running"  # one of RUN_STATUSES
    started: float = field(default_factory=time.time)
    duration_ms: float | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    # The result is isError: what appsdk dev saw the tool raise (exception, the user's frames; a JSON object
    # of the page's, never sent to the widget), and what to tell the developer beside it.
    crash: dict[str, Any] | None = None
    hint: str | None = None
    template_uri: str | None = None
    invoking: str | None = None
    invoked: str | None = None
    warnings: list[str] = field(default_factory=list)
    # The widget threw (an uncaught error or rejection in its document): the first line, its place named in
    # the template (ui://…:12). Cleared when the widget renders afresh (a re-run, a reload).
    widget_error: str | None = None
    calls: int = 0  # how many times it ran (a re-run keeps the id and the widget state)
    # What the run's last event weighed in bytes (about its arguments and result): the workbench bounds the
    # runs it keeps by the sum of these, not only by their number.
    weight: int = 0
    version: int = 0  # bumped on every change: the page keeps the newest of what it hears
    session: PreviewSession | None = field(default=None, repr=False)
    # The template last served for the widget, and how often the widget document was served (the first
    # load uses the template read with the call; later loads re-read it).
    template: WidgetTemplate | None = field(default=None, repr=False)
    widget_served: int = 0

    @classmethod
    def shown(cls, run_id: str, session: PreviewSession) -> Run:
        """A finished call with its widget (`appsdk preview TOOL`'s run, made before the host started)."""
        return cls(
            id=run_id,
            tool=session.tool.name,
            arguments=session.arguments,
            status="done",
            result=session.result,
            template_uri=session.template.uri,
            invoking=session.tool.invoking,
            invoked=session.tool.invoked,
            warnings=session.warnings,
            calls=1,
            session=session,
            template=session.template,
        )

    @property
    def widget(self) -> bool:
        """A host page can render it (/host?run=ID)."""
        return self.session is not None

    def show(self, session: PreviewSession | None) -> None:
        """Render this session from now on (None: no widget); the next widget load uses its template."""
        self.session = session
        self.template = session.template if session is not None else None
        self.widget_served = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "sequence": self.sequence,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "started": self.started,
            "durationMs": self.duration_ms,
            "result": self.result,
            "error": self.error,
            "crash": self.crash,
            "hint": self.hint,
            "widget": self.widget,
            "templateUri": self.template_uri,
            "invoking": self.invoking,
            "invoked": self.invoked,
            "warnings": self.warnings,
            "widgetError": self.widget_error,
            "calls": self.calls,
            "version": self.version,
        }
