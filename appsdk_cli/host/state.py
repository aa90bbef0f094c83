"""What the host holds while it serves: its runs, the host log, widget state, uploaded files.

`HostState` is the host without its sockets: the routes (api.py, widget.py) read and change it through a
`Request`, and `server.HostServer` adds the two listening origins. So nothing here imports the HTTP side,
and the HTTP side's routes need only this.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from typing import Any

from appsdk_cli import __version__
from appsdk_cli.appmeta import Bridge
from appsdk_cli.errors import AppsdkError
from appsdk_cli.host import profiles
from appsdk_cli.host.files import FileStore
from appsdk_cli.host.origins import Origins
from appsdk_cli.host.run import DEFAULT_RUN, LogEntry, Run, UnknownRun
from appsdk_cli.host.session import (
    USER_AGENT,
    PreviewOptions,
    PreviewSession,
    WidgetTemplate,
    prefers_border,
    read_template,
)
from appsdk_cli.permissions import Decision, decisions

SANDBOX = "allow-scripts allow-same-origin allow-forms"
KEPT_DOCUMENTS = 32
KEPT_DOCUMENT_BYTES = 32 * 1024 * 1024  # ... and no more than this of them (a bundled widget is megabytes)
KEPT_LOG_BYTES = 1024 * 1024  # the host log's lines kept, by the size of their messages
# A template read ahead (read_templates_ahead) serves the loads that follow it this long: those the push
# of the same save brings; a later load reads afresh, as a template may change without a save.
READ_AHEAD_SECONDS = 2.0
PROTOCOL_VERSION = "2026-01-26"  # the MCP Apps extension version the bridge speaks


@dataclass(frozen=True)
class HeldCall:
    """A widget's call that waits for the user's approval (its permission mode asks first): not sent to the
    server until the host page approves it, and then exactly as the widget made it."""

    run: str
    name: str
    arguments: dict[str, Any]
    bridge: Bridge
    decision: Decision


def _read_into(future: Future[WidgetTemplate], target: Any, template: WidgetTemplate) -> None:
    """A template read ahead: its outcome, for the load that waits on it (which reports a failure)."""
    try:
        future.set_result(read_template(target, template.uri, template.meta))
    except Exception as problem:
        future.set_exception(problem)


class HostState:
    """The runs a host page can show and what the widgets leave behind (state, log lines, files)."""

    def __init__(self, options: PreviewOptions | None = None, *, on_log: Callable[[LogEntry], None] | None = None):
        self.options = options or PreviewOptions()
        self.on_log = on_log
        # The host log's newest lines, bounded by bytes: a workbench serving for hours with chatty widgets
        # keeps what a screenshot's report or a page needs, not every line since it started.
        self.log: deque[LogEntry] = deque()
        self._log_bytes = 0
        self._lock = threading.Lock()
        self._widget_states: dict[tuple[str, str], Any] = {}
        self._runs: dict[str, Run] = {}
        self.files = FileStore()  # window.openai's uploads (sandbox.py serves them)
        self._documents: OrderedDict[str, tuple[str, str]] = OrderedDict()  # widget documents (html, CSP)
        self._document_bytes = 0
        self._held: dict[str, HeldCall] = {}  # widget calls waiting for approval, by an unguessable id
        # Templates read ahead after a save, by server and URI: (when the read started, its outcome).
        self._read_ahead: dict[tuple[Any, str], tuple[float, Future[WidgetTemplate]]] = {}
        # Gives the trace hook for a run's MCP client (the workbench's traffic recorder), so a widget's own
        # requests to the server are recorded like the workbench's calls (with caller="widget"); None: they are
        # not recorded.
        self.trace_for: Callable[..., Any] | None = None

    # --- addresses (the server's sockets give them) ----------------------------------------------------

    @property
    def origins(self) -> Origins:
        raise NotImplementedError

    @property
    def host_origin(self) -> str:
        return self.origins.host_origin

    # --- runs ----------------------------------------------------------------------------------------

    def run(self, run_id: str = DEFAULT_RUN) -> Run:
        """The run a host page renders; UnknownRun when there is none by that id, or it has no widget."""
        with self._lock:
            found = self._runs.get(run_id)
            if found is None or found.session is None:
                raise UnknownRun(run_id)
            return found

    def view(self, run_id: str = DEFAULT_RUN) -> tuple[PreviewSession, WidgetTemplate]:
        """What the host page renders for the run: its session and the template last served."""
        run = self.run(run_id)
        with self._lock:
            session, template = run.session, run.template
        if session is None or template is None:
            raise UnknownRun(run_id)
        return session, template

    def find_run(self, run_id: str) -> Run | None:
        """Any run by its id, with a widget or not (the workbench's runs API)."""
        with self._lock:
            return self._runs.get(run_id)

    def runs(self) -> list[Run]:
        """Every run, in the order they were started."""
        with self._lock:
            return sorted(self._runs.values(), key=lambda r: r.sequence)

    def add_run(self, run: Run) -> Run:
        with self._lock:
            self._runs[run.id] = run
        return run

    def show(self, run_id: str, session: PreviewSession | None) -> None:
        """Render this session for the run from now on (None: it has no widget). A re-run keeps the run's
        id and so its widget state, as ChatGPT keeps it for a widget instance."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is not None:
                run.show(session)

    def complete_run(self, run_id: str, result: dict[str, Any]) -> None:
        """The answer to a pending run's call: the same view (template, served count, state) gets it."""
        from dataclasses import replace

        with self._lock:
            run = self._runs.get(run_id)
            if run is not None and run.session is not None:
                run.session = replace(run.session, result=result, pending=False)

    def drop_run(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)
            for key in [key for key in self._widget_states if key[0] == run_id]:
                del self._widget_states[key]

    # --- state shared by the handlers ----------------------------------------------------------------

    def record(self, entry: LogEntry) -> None:
        with self._lock:
            self.log.append(entry)
            self._log_bytes += len(entry.message)
            while len(self.log) > 1 and self._log_bytes > KEPT_LOG_BYTES:
                self._log_bytes -= len(self.log.popleft().message)
        if self.on_log:
            self.on_log(entry)

    def widget_state(self, run_id: str = DEFAULT_RUN) -> Any:
        key = (run_id, self.view(run_id)[0].state_key)
        with self._lock:
            return self._widget_states.get(key)

    def set_widget_state(self, state: Any, run_id: str = DEFAULT_RUN) -> None:
        # Kept by the preview server, not in the frame: a page reload (or a new tab) gets it back,
        # as ChatGPT gives a widget its state back when the conversation is reopened.
        key = (run_id, self.view(run_id)[0].state_key)
        with self._lock:
            self._widget_states[key] = state

    def remember_document(self, html: str, csp: str) -> str:
        """A token the view origin serves this document by (/view?document=TOKEN), under its CSP.
        Unguessable, and kept for the last few documents: a widget that reloads itself gets itself again."""
        token = secrets.token_urlsafe(18)
        with self._lock:
            self._documents[token] = (html, csp)
            self._document_bytes += len(html)
            while len(self._documents) > 1 and (
                len(self._documents) > KEPT_DOCUMENTS or self._document_bytes > KEPT_DOCUMENT_BYTES
            ):
                self._document_bytes -= len(self._documents.popitem(last=False)[1][0])
        return token

    def stored_document(self, token: str) -> tuple[str, str] | None:
        with self._lock:
            return self._documents.get(token)

    def hold_call(self, call: HeldCall) -> str:
        """Keep a widget's call until the host page approves or denies it; the id it is answered by."""
        held_id = secrets.token_urlsafe(12)
        with self._lock:
            self._held[held_id] = call
        return held_id

    def take_held_call(self, held_id: str, run_id: str) -> HeldCall | None:
        """The held call by its id (once: approving or denying it ends the wait), if it is the run's."""
        with self._lock:
            call = self._held.get(held_id)
            if call is None or call.run != run_id:
                return None
            return self._held.pop(held_id)

    def template(self, run_id: str = DEFAULT_RUN) -> WidgetTemplate:
        """The first load uses the template read with the call; later loads re-read it, so an edited widget
        shows up on reload without restarting the preview (the server's own caching permitting)."""
        run = self.run(run_id)
        with self._lock:
            first = run.widget_served == 0
            run.widget_served += 1
            current, session = run.template, run.session
        assert current is not None and session is not None  # self.run() returns only runs with a widget
        if first:
            return current
        try:
            ahead = self._template_read_ahead(session.target, current.uri)
            fresh = ahead.result() if ahead else read_template(session.target, current.uri, current.meta)
        except AppsdkError as problem:
            self.record(
                LogEntry("host", "warn", f"re-reading {current.uri} failed, showing the last copy: {problem}", run_id)
            )
            return current
        with self._lock:
            run.template = fresh
        return fresh

    def read_templates_ahead(self) -> list[Future[WidgetTemplate]]:
        """A save changed the app: re-read now, each in a thread, the templates the runs' widgets show (once
        per server and URI), so the loads the save's push brings find them read or on their way instead
        of starting the read only when the page asks (a new worker's first reads are its slowest)."""
        with self._lock:
            shown = {
                (run.session.target, run.template.uri): run.template
                for run in self._runs.values()
                if run.session is not None and run.template is not None and run.widget_served > 0
            }
            started = time.monotonic()
            reads: list[tuple[Future[WidgetTemplate], Any, WidgetTemplate]] = []
            for key, template in shown.items():
                future: Future[WidgetTemplate] = Future()
                self._read_ahead[key] = (started, future)
                reads.append((future, key[0], template))
            for key in [key for key in self._read_ahead if key not in shown]:
                del self._read_ahead[key]
        for read in reads:
            threading.Thread(target=_read_into, args=read, name="host-template-ahead", daemon=True).start()
        return [future for future, _, _ in reads]

    def _template_read_ahead(self, target: Any, uri: str) -> Future[WidgetTemplate] | None:
        with self._lock:
            found = self._read_ahead.get((target, uri))
        if found is None or time.monotonic() - found[0] > READ_AHEAD_SECONDS:
            return None
        return found[1]

    def session_json(self, run_id: str = DEFAULT_RUN) -> dict[str, Any]:
        """What the host page needs to play the host: the call, the result, and the widget's origin."""
        preview, template = self.view(run_id)
        return {
            "run": run_id or None,
            "appsdkVersion": __version__,
            "protocolVersion": PROTOCOL_VERSION,
            "server": preview.target.description,
            "tool": {"name": preview.tool.name, "title": preview.tool.title, "description": preview.tool.description},
            "toolDefinition": preview.tool_definition,
            "invoking": preview.tool.invoking,
            "invoked": preview.tool.invoked,
            "arguments": preview.arguments,
            "result": preview.result,
            "pending": preview.pending,
            "deferred": preview.deferred,
            # Whether the run's own call waits for approval under each permission mode (permissions.py).
            "permissions": {mode: d.as_json() for mode, d in decisions(preview.tool_definition).items()},
            "template": {
                "uri": template.uri,
                "mimeType": template.mime_type,
                "csp": template.csp.header(),
                "declaredCsp": template.csp.approved(),
                "prefersBorder": prefers_border(template.meta),
            },
            "hostRules": profiles.widget_rules(template.meta, preview.target.url),
            "sandboxOrigin": self.origins.proxy_origin,
            "viewOrigin": self.origins.view_origin,
            "sandbox": SANDBOX,
            "widgetTools": {bridge.value: sorted(names) for bridge, names in preview.widget_tools.items()},
            "userAgent": USER_AGENT,
            "defaults": asdict(self.options),
            "widgetState": self.widget_state(run_id),
            "warnings": preview.warnings,
        }
