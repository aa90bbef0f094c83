"""The workbench server: runs of tool calls, the page and its API, registered on the host's route table.

A *run* is one tool call the workbench made (host.run.Run: the tool, its arguments, the result, and for
a tool with a widget the session the host page renders). The host holds the runs, so a run's widget is
the host's own page at `/host?run=ID&embed=1`, same-origin with the workbench page, which drives it
through `frame.contentWindow.appsdkPreview`. The workbench's routes (`_routes`) go before the host's own
on the host origin and are under the same base handler (Host and Origin checks, JSON errors).

Every call runs on its own thread with a fresh session (the dev server may reload between two runs),
so the page never waits on the server: it gets the run id at once and its outcome as a `run` event.
A cancel tells the server (`notifications/cancelled` in the 2025 eras) and drops the call's connection (in
2026-07-28 that is the cancellation); the page sees `cancelled`.

Under `appsdk dev` this lives inside the supervisor, which forks workers: its threads only talk to the
MCP server, publish events and answer the page (nothing they hold is needed by a worker), everything
they import is imported before the first of them starts (`preload`), and the supervisor closes the
listening sockets in each worker (`sockets`).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Sequence
from concurrent import futures
from concurrent.futures import Future
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appsdk_cli import __version__
from appsdk_cli.errors import AppsdkError
from appsdk_cli.host import api
from appsdk_cli.host.handler import HttpError, Request, Route, get, post
from appsdk_cli.host.run import LogEntry, Run
from appsdk_cli.host.server import HostServer
from appsdk_cli.host.session import PreviewOptions
from appsdk_cli.host.static import send_static
from appsdk_cli.workbench.events import EventHub

if TYPE_CHECKING:
    from collections.abc import Callable

    from appsdk_cli.appmeta import ToolCrash, ToolMeta
    from appsdk_cli.client import McpClient
    from appsdk_cli.connection import Target
    from appsdk_cli.host.session import WidgetTemplate

STATIC = Path(__file__).parent / "static"
PAGE_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self';"
    " frame-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
MAX_RUNS = 200  # runs kept; older ones (and their host-page sessions) are dropped
# ... and fewer when their events weigh more than this in all: what is kept is bounded by bytes, so memory
# stays flat however many runs are made and however large their results.
KEPT_RUN_BYTES = 32 * 1024 * 1024
# What a page gets on opening (the hello event): the newest runs and MCP traffic up to these sizes.
HELLO_RUN_BYTES = 4 * 1024 * 1024
# After a save, the tool list is asked for once the widgets' templates are read, or after this at most.
TEMPLATES_FIRST_SECONDS = 1.0
HELLO_TRAFFIC_BYTES = 8_000_000  # as the tracer counts them (trace.Tracer.recent)
HELLO_TRAFFIC_RECORDS = 500
TOOLS_NAMED = 20  # a run of a tool the server lacks names this many of the tools it has
RELISTING_WAIT_SECONDS = 30.0  # how long a run waits for the listing after a reload before listing itself
MAX_WIDGET_ERROR = 500  # characters of a widget's error kept on its run (the first line; the host log has the rest)
WIDGET_ERRORS_TOLD = 3  # distinct widget errors dev's terminal hears per rendering: a loop of them is no flood


def preload() -> None:
    """Import what the workbench's threads will need, on the calling thread, before any of them runs: an
    import half-done on another thread when the dev supervisor forks would deadlock the worker that
    imports the same module."""
    import jsonschema  # noqa: F401

    import appsdk_cli.appmeta
    import appsdk_cli.client
    import appsdk_cli.host.files
    import appsdk_cli.remote
    import appsdk_cli.toolargs

    with contextlib.suppress(ImportError):
        import appsdk_cli.trace  # noqa: F401


@dataclass
class _InFlight:
    """What the workbench holds of a call while it runs: how to stop waiting for it. The run itself (what
    was called, how it went, its widget) is the host's one record, `host.run.Run`."""

    cancelled: threading.Event = field(default_factory=threading.Event)
    client: McpClient | None = None
    # ChatGPT's permission mode the page played when it started the call (None: the host's default), and
    # the user's approval the call waits for when that mode asks about its tool.
    permissions: str | None = None
    approved: threading.Event = field(default_factory=threading.Event)
    waiting: bool = False
    # The page made this call again by itself after a save: which call, in words the dev terminal prints.
    rerun_of: str | None = None
    widget_errors_told: int = 0  # how many of its widget's errors `on_widget_error` heard (up to a bound)


class Workbench:
    """The workbench for one MCP server; use as a context manager (or start()/close()).

    `dev`: run by `appsdk dev`, which tells it about reloads (`reloaded`). `on_log`: told about every
    host-log line of every host page (the terminal of `appsdk preview` prints them). `on_widget_error`:
    told once when a run's widget throws, with the line its card shows (dev's terminal prints it).
    """

    def __init__(
        self,
        target: Target,
        options: PreviewOptions | None = None,
        *,
        port: int = 0,
        dev: bool = False,
        on_log: Callable[[LogEntry], None] | None = None,
        on_widget_error: Callable[[Run, str], None] | None = None,
    ) -> None:
        self.target = target
        self.options = options or PreviewOptions()
        self.dev = dev
        self.events = EventHub()
        self.host = HostServer(
            self.options, port=port, on_log=self._on_log, routes=self._routes(), server=target.url or target.description
        )
        self._on_log_outside = on_log
        self._on_widget_error = on_widget_error
        self._lock = threading.Lock()
        self._flights: dict[str, _InFlight] = {}  # by run id
        self._sequence = 0
        self._tools: list[dict[str, Any]] | None = None
        self._tools_error: str | None = None
        # The listing is kept per server generation: a run uses it (it lists again only after a reload, or
        # for a tool the listing lacks), so a run costs its own tool, not all of them. What is derived
        # from a listing (the page's JSON, the tools a widget may call, by name) is derived once.
        self._generation = 0  # bumped on every reload of `appsdk dev`
        self._listed_generation = -1  # the generation the kept listing was taken in
        self._by_name: dict[str, dict[str, Any]] = {}
        self._listing_page: list[dict[str, Any]] | None = None
        self._listing_widget_tools: dict[Any, frozenset[str]] | None = None
        # Set while the listing after a reload is under way: a run started meanwhile waits for it rather
        # than list the same tools again beside it.
        self._relisting: threading.Event | None = None
        self._server_info: dict[str, Any] = {}
        self._threads: set[threading.Thread] = set()
        self._last_reload: dict[str, Any] | None = None
        self.tracer = _make_tracer()
        self._app_problem: str | None = None  # why the app is broken now (appsdk dev), None while it imports
        # The server wants a sign-in the page must ask for (it needs the user at the sign-in page): why.
        self._sign_in_needed: str | None = None
        self._signing_in = False  # the page's Sign in is under way
        if self.tracer is not None:
            self.tracer.subscribe(lambda record: self.events.publish("traffic", record))
            # A widget's own requests (host page -> /api/call -> server) are MCP exchanges of its run too.
            self.host.trace_for = self.tracer.for_run

    # --- lifecycle -------------------------------------------------------------------------------------

    def start(self) -> Workbench:
        preload()
        self.host.start()
        return self

    def close(self) -> None:
        # Each open page reads this last: it says the workbench stopped, and reconnects when it is back.
        self.events.close(("stopped", {"dev": self.dev}))
        runs = self.host.runs()
        with self._lock:
            threads = list(self._threads)
        for run in runs:
            if run.status == "running":
                self._abort(run)
        self.host.close()
        for thread in threads:
            thread.join(timeout=5)

    def __enter__(self) -> Workbench:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        return self.host.url

    # --- what the page reads -----------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        return {
            "appsdkVersion": __version__,
            "server": self.target.description,
            "serverInfo": self._server_info,
            "dev": self.dev,
            "sandboxOrigin": self.host.origins.proxy_origin,
            "defaults": {
                "theme": self.options.theme,
                "displayMode": self.options.display_mode,
                "locale": self.options.locale,
                "profile": getattr(self.options, "profile", "chatgpt"),
                "device": getattr(self.options, "device", "desktop"),
                "permissions": self.options.permissions,
                "noUi": self.options.no_ui,
            },
            "traffic": self.tracer is not None,
            "lastReload": self._last_reload,
            # A page opened while the app is broken must say so (dev keeps serving the last good version).
            "app": {"ok": self._app_problem is None, "problem": self._app_problem},
        }

    def tools(self, *, refresh: bool = False, browser: bool = True) -> list[dict[str, Any]]:
        """tools/list, kept until the next refresh (every run and every reload refreshes it).

        A server that asks for a sign-in gets one, as `appsdk call` does; `browser`: False where no browser
        may open unasked (the page loading, a reload), so only an authorization server that approves at
        once (appsdk dev --auth-user) signs in, and the page offers its Sign in for the others."""
        from appsdk_cli.connection import session

        if self._tools is not None and not refresh:
            return self._tools
        try:
            with session(self.signing_target(browser=browser)) as client:
                self._attach_tracer(client, None)
                tools = self._listed(client)
        except AppsdkError as problem:
            self._tools_error = problem.message
            self._sign_in_needed = problem.message if self._needs_sign_in(problem) else None
            if self._tools is None:
                raise
            return self._tools
        return tools

    def signing_target(self, *, browser: bool = True) -> Target:
        """The target, signing in as `appsdk call` does and telling the page (and the caller's sign_in)."""
        from dataclasses import replace

        return replace(self.target, sign_in=self._told_sign_in, browser=browser)

    def _told_sign_in(self, message: str, run_id: str | None = None) -> None:
        if self.target.sign_in is not None:
            self.target.sign_in(message)  # `appsdk preview`'s terminal
        # A run's own sign-in names the run: its card says it waits for the user, not only the sidebar.
        self.events.publish("signin", {"message": message, **({"run": run_id} if run_id else {})})

    def _needs_sign_in(self, problem: AppsdkError) -> bool:
        from appsdk_cli.auth.signin_errors import SignInError
        from appsdk_cli.client import AuthRequired
        from appsdk_cli.connection import may_sign_in

        return isinstance(problem, AuthRequired | SignInError) and may_sign_in(self.signing_target())

    def sign_in(self) -> None:
        """The page's Sign in: list the tools again, signing in with the browser if the server asks (the
        answer comes as a `tools` event; the sign-in's steps as `signin` events)."""
        with self._lock:
            if self._signing_in:
                return
            self._signing_in = True
        self.events.publish("tools", self._tools_json_or_error())

        def signing_in() -> None:
            try:
                with contextlib.suppress(AppsdkError):
                    self.tools(refresh=True)
            finally:
                with self._lock:
                    self._signing_in = False
                    self._threads.discard(threading.current_thread())
                self.events.publish("tools", self._tools_json_or_error())

        thread = threading.Thread(target=signing_in, name="workbench-sign-in", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _sign_in_json(self) -> dict[str, Any]:
        return {"needed": self._sign_in_needed is not None, "busy": self._signing_in}

    def _listed(self, client: McpClient) -> list[dict[str, Any]]:
        """tools/list in this session, kept as the workbench's listing (with what the server said of itself)."""
        generation = self._generation  # read before asking: a reload meanwhile leaves the listing stale
        tools = [t for t in client.list_tools() if isinstance(t, dict)]
        by_name = {str(t.get("name")): t for t in tools}
        info = client.server
        with self._lock:
            self._tools, self._tools_error, self._sign_in_needed = tools, None, None
            self._by_name, self._listed_generation = by_name, generation
            self._listing_page, self._listing_widget_tools = None, None
            self._server_info = {
                "name": getattr(info, "name", None),
                "version": getattr(info, "version", None),
                "instructions": getattr(info, "instructions", None),
            }
        return tools

    def _listing_for_run(
        self, client: McpClient, name: str, *, again: bool = False
    ) -> tuple[list[dict[str, Any]], bool]:
        """The tools a run goes by, and whether they were listed just now: the kept listing when it is of
        this server generation and names the tool (and not `again`), else tools/list in the run's own
        session (told to the page, whose list is stale too)."""
        with self._lock:
            relisting = self._relisting
        if relisting is not None:
            relisting.wait(RELISTING_WAIT_SECONDS)
        with self._lock:
            tools, current = self._tools, self._listed_generation == self._generation
            known = name in self._by_name
        if tools is not None and current and known and not again:
            return tools, False
        tools = self._listed(client)
        self.events.publish("tools", self.tools_json())
        return tools, True

    def _checked(self, run: Run, tools: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]] | str:
        """The run's tool definition and its arguments as the server gets them, or why the call cannot go."""
        from appsdk_cli.host.files import file_arguments

        definition = next((t for t in tools if t.get("name") == run.tool), None)
        if definition is None:
            names = [str(t.get("name")) for t in tools]
            listed = ", ".join(names[:TOOLS_NAMED]) or "none"
            if len(names) > TOOLS_NAMED:
                listed += f" and {len(names) - TOOLS_NAMED} more"
            return f"{self.target.description} has no tool {run.tool!r} (it has {listed})"
        try:
            # openai/fileParams arguments name uploaded files; the tool gets them as file objects.
            files_origin = self.host.origins.server_files_origin
            arguments = file_arguments(definition, run.arguments, self.host.files, files_origin)
        except ValueError as problem:
            return str(problem)
        problems = argument_problems(definition.get("inputSchema"), arguments)
        return "; ".join(problems) if problems else (definition, arguments)

    def _widget_tools(self, tools: list[dict[str, Any]]) -> dict[Any, frozenset[str]]:
        """The tools a widget may call, per bridge: derived once per listing."""
        from appsdk_cli.host.session import widget_tools

        with self._lock:
            kept = self._listing_widget_tools if tools is self._tools else None
        if kept is not None:
            return kept
        derived = widget_tools(tools)
        with self._lock:
            if tools is self._tools:
                self._listing_widget_tools = derived
        return derived

    def tools_json(self, *, refresh: bool = False, browser: bool = True) -> dict[str, Any]:
        tools = self.tools(refresh=refresh, browser=browser)
        with self._lock:
            listed = self._listing_page if tools is self._tools else None
        if listed is None:
            listed = _page_tools(tools)
            with self._lock:
                if tools is self._tools:
                    self._listing_page = listed
        return {
            "tools": listed,
            "error": self._tools_error,
            "serverInfo": self._server_info,
            "signIn": self._sign_in_json(),
        }

    def runs(self) -> list[Run]:
        return self.host.runs()

    def get_run(self, run_id: str) -> Run | None:
        return self.host.find_run(run_id)

    def template_json(self, run_id: str) -> dict[str, Any]:
        """The run's widget template, read afresh from the server (what the next render will show)."""
        from appsdk_cli.host.session import read_template

        run = self.host.run(run_id)
        assert run.session is not None and run.template is not None  # host.run() returns runs with a widget
        fresh = read_template(run.session.target, run.template.uri, run.template.meta)
        return {
            "uri": fresh.uri,
            "mimeType": fresh.mime_type,
            "html": fresh.html,
            "meta": fresh.meta,
            "csp": fresh.csp.header(),
            "changed": fresh.html != run.template.html,
        }

    # --- runs -------------------------------------------------------------------------------------------

    def start_run(
        self, tool: str, arguments: dict[str, Any], *, locale: str | None = None, permissions: str | None = None
    ) -> Run:
        """Call `tool`; under a permission mode that asks about it (`permissions`, else the host's), the call
        waits, its widget showing with tool-input held, until `approve` (or `cancel`)."""
        import secrets

        with self._lock:
            self._sequence += 1
            run = Run(id=secrets.token_hex(6), sequence=self._sequence, tool=tool, arguments=arguments)
            self._flights[run.id] = _InFlight(permissions=permissions)
        self.host.add_run(run)
        self._prune()
        self._launch(run, locale)
        return run

    def _prune(self) -> None:
        """Drop the oldest finished runs (and their host-page sessions) beyond MAX_RUNS, or beyond
        KEPT_RUN_BYTES of their last events in all; the newest run is always kept."""
        runs = self.host.runs()
        total = sum(run.weight for run in runs)
        count = len(runs)
        for old in runs[:-1]:
            if count <= MAX_RUNS and total <= KEPT_RUN_BYTES:
                break
            if old.status == "running":
                continue
            self.host.drop_run(old.id)
            with self._lock:
                self._flights.pop(old.id, None)
            count -= 1
            total -= old.weight

    def rerun(
        self,
        run_id: str,
        arguments: dict[str, Any] | None = None,
        *,
        locale: str | None = None,
        after_save: Sequence[str] | None = None,
    ) -> Run:
        """Call the run's tool again (with new arguments, if given) under the same id, so its widget keeps
        its state and the page can hand the new result to the live view. `after_save`: the page re-runs it by
        itself after a save of these files; the call says so to `appsdk dev` (RERUN_OF)."""
        run = self.get_run(run_id)
        if run is None:
            raise KeyError(run_id)
        if run.status == "running":
            raise RuntimeError("the run is still in flight; cancel it first")
        with self._lock:
            if arguments is not None:
                run.arguments = arguments
            run.status, run.error, run.duration_ms = "running", None, None
            run.crash, run.hint, run.widget_error = None, None, None
            run.started = time.time()
            run.version += 1
            self._flights[run.id] = _InFlight(rerun_of=_rerun_words(run, after_save))
        self._launch(run, locale)
        return run

    def approve(self, run_id: str) -> Run | None:
        """The user approved the run's call: it goes to the server now. None: no run by that id."""
        run = self.get_run(run_id)
        if run is None:
            return None
        flight = self._flight(run)
        if not flight.waiting:
            raise RuntimeError("the run is not waiting for approval")
        flight.approved.set()
        return run

    def cancel(self, run_id: str) -> Run | None:
        run = self.get_run(run_id)
        if run is None or run.status != "running":
            return run
        self._flight(run).cancelled.set()
        self._abort(run)
        self._finish(run, "cancelled", error="cancelled from the workbench before the server answered")
        return run

    def clear_runs(self) -> None:
        """Forget every finished run (and its host-page session); runs still in flight are cancelled."""
        for run in self.runs():
            if run.status == "running":
                self.cancel(run.id)
            self.host.drop_run(run.id)
            with self._lock:
                self._flights.pop(run.id, None)

    def connected(self, run_id: str) -> bool:
        """The run's call has its session to the server open (a cancel now reaches the server)."""
        with self._lock:
            flight = self._flights.get(run_id)
        return flight is not None and flight.client is not None

    def _flight(self, run: Run) -> _InFlight:
        with self._lock:
            return self._flights.setdefault(run.id, _InFlight())

    def _abort(self, run: Run) -> None:
        client = self._flight(run).client
        if client is not None:
            # The server is told (2025 eras) and the call's thread stops waiting; that thread then closes
            # the session (closing it here would race the thread on the same connection).
            with contextlib.suppress(Exception):
                client.cancel("cancelled from the appsdk workbench")

    def _launch(self, run: Run, locale: str | None) -> None:
        self.events.publish("run", run.as_json())
        flight = self._flight(run)  # this call's, taken before a later re-run can replace it
        thread = threading.Thread(
            target=self._execute, args=(run, flight, locale), name=f"workbench-run-{run.id}", daemon=True
        )
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _execute(self, run: Run, flight: _InFlight, locale: str | None) -> None:
        cancelled = flight.cancelled
        try:
            self._call(run, locale, flight)
        except AppsdkError as problem:
            if not cancelled.is_set():
                self._finish(run, "failed", error=problem.message)
        except Exception as problem:
            if not cancelled.is_set():
                self._finish(run, "failed", error=f"{type(problem).__name__}: {problem}")
        finally:
            flight.client = None
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _call(self, run: Run, locale: str | None, flight: _InFlight) -> None:
        from dataclasses import replace

        from appsdk_cli.appmeta import RERUN_OF, crash_hint, error_text, tool_crash, tool_meta, without_tool_crash
        from appsdk_cli.connection import signed_in, step_up
        from appsdk_cli.host.session import PreviewSession
        from appsdk_cli.remote import request_meta, runs_as_task

        begun = time.monotonic()
        cancelled = flight.cancelled
        # One session per run (the dev server may have reloaded since the last): the call and the
        # template (and tools/list only when the kept listing is of an older generation), so a run costs
        # one handshake and its own tool. With a listener for notifications the call
        # asks for progress (and, in 2026-07-28, logs): the trace shows them as they come, the run too.
        # Signed in as `appsdk call` is: a 401 signs in, a result asking for more scope steps up, and the
        # run goes again.
        target = replace(
            self.signing_target(),
            notify=lambda message: self._notified(run, message),
            sign_in=lambda message: self._told_sign_in(message, run.id),
        )
        asked: set[str] = set()

        def work(client: McpClient) -> Any:
            flight.client = client
            self._attach_tracer(client, run.id)
            tools, listed_now = self._listing_for_run(client, run.tool)
            checked = self._checked(run, tools)
            if isinstance(checked, str) and not listed_now:
                # The kept listing may be older than the server (changed outside appsdk dev): the tool's
                # schema is asked for again before its arguments are refused.
                tools, _ = self._listing_for_run(client, run.tool, again=True)
                checked = self._checked(run, tools)
            if isinstance(checked, str):
                self._finish(run, "invalid", error=checked)
                return None
            definition, arguments = checked
            meta = tool_meta(definition)
            run.invoking, run.invoked, run.template_uri = meta.invoking, meta.invoked, meta.template
            if cancelled.is_set():
                return None
            template, warnings = None, []
            # The first call shows its widget before the answer, as ChatGPT does: the view gets tool-input
            # at once and tool-result when the call returns (or tool-cancelled). A re-run keeps the views
            # it has and gives them the new result.
            early = bool(meta.template) and run.calls == 0
            if early:
                template, warnings = self._template(client, meta.template)
                if template is not None:
                    self._show_pending(run, meta, template, warnings, tools, definition)
            # As ChatGPT does, a call its permission mode asks about is not made until the user approves;
            # meanwhile its widget shows, tool-input held. (A re-run is the developer's own repeat: it goes.)
            if early and template is not None and not self._approved(run, flight, definition):
                return None
            # A cancel between two requests of this session dropped no connection (there was none to
            # drop): the call must not go out after it, or the server runs a tool the page cancelled.
            if cancelled.is_set():
                return None
            extra = {RERUN_OF: flight.rerun_of} if flight.rerun_of else None
            # A tool that runs only as an MCP task is sent as one, as `appsdk call` sends it (the same
            # question, the same client call); the run shows the task's id and status while it waits.
            raw = client.call_tool(
                run.tool,
                arguments,
                request_meta(locale=locale, extra=extra) or None,
                as_task=runs_as_task(client, definition),
                on_task=lambda task: self._notified(run, {"method": "task", "params": task}),
            )
            if cancelled.is_set():
                return None
            result = without_tool_crash(raw)
            # The widget gets the result as production sends it; the page shows appsdk dev's crash report.
            crash = tool_crash(raw)
            hint = crash_hint(error_text(result), crash) if result.get("isError") is True else None
            if meta.template and not early:
                template, warnings = self._template(client, meta.template)
            step_up(target, run.tool, raw, asked)
            return tools, definition, meta, template, warnings, early, result, crash, hint

        outcome = signed_in(target, work)
        if outcome is None or cancelled.is_set():
            return
        tools, definition, meta, template, warnings, early, result, crash, hint = outcome
        if template is not None and early:
            self.host.complete_run(run.id, result)
        elif template is not None:
            preview = PreviewSession(
                target=self.signing_target(),
                tool=meta,
                arguments=run.arguments,
                result=result,
                template=template,
                widget_tools=self._widget_tools(tools),
                warnings=warnings,
                tool_definition=definition,
                tools=tools,  # the listing, shared: its annotations say whether a widget call asks
            )
            self.host.show(run.id, preview)  # the same id on a re-run: the widget state stays
        else:
            self.host.show(run.id, None)
        with self._lock:
            run.result, run.warnings = result, warnings
            run.crash, run.hint = _crash_json(crash), hint
            run.calls += 1
            run.duration_ms = round((time.monotonic() - begun) * 1000, 1)
        self._finish(run, "done")

    def _approved(self, run: Run, flight: _InFlight, definition: dict[str, Any]) -> bool:
        """Wait for the user's approval when the run's permission mode asks about its tool: True once
        approved (or when nothing asks), False when the run was cancelled instead."""
        from appsdk_cli.permissions import decide

        decision = decide(flight.permissions or self.options.permissions, definition)
        if not decision.ask:
            return True
        flight.waiting = True
        try:
            while not flight.approved.wait(0.1):
                if flight.cancelled.is_set():
                    return False
        finally:
            flight.waiting = False
        return not flight.cancelled.is_set()

    def _template(self, client: McpClient, uri: str) -> tuple[WidgetTemplate | None, list[str]]:
        """The run's widget template, read in the call's own session (one handshake per run), and what is
        wrong with it for ChatGPT."""
        from appsdk_cli.host.session import listing_meta, read_template, template_warnings

        try:
            template = read_template(self.target, uri, listing_meta(client, uri), client)
        except AppsdkError as problem:
            return None, [f"the widget could not be read: {problem.message}"]
        return template, template_warnings(template)

    def _show_pending(
        self,
        run: Run,
        meta: ToolMeta,
        template: WidgetTemplate,
        warnings: list[str],
        tools: list[dict[str, Any]],
        definition: dict[str, Any],
    ) -> None:
        from appsdk_cli.host.session import PreviewSession

        preview = PreviewSession(
            target=self.signing_target(),
            tool=meta,
            arguments=run.arguments,
            result={"content": []},  # nothing yet: the view gets tool-input only
            template=template,
            widget_tools=self._widget_tools(tools),
            warnings=warnings,
            tool_definition=definition,
            tools=tools,  # the listing, shared: its annotations say whether a widget call asks
            pending=True,
        )
        self.host.show(run.id, preview)
        with self._lock:
            run.warnings = warnings
            run.version += 1
        self.events.publish("run", run.as_json())

    def _finish(self, run: Run, status: str, *, error: str | None = None) -> None:
        with self._lock:
            if run.status != "running":
                return
            run.status, run.error = status, error
            run.version += 1
            if run.duration_ms is None:
                run.duration_ms = round((time.time() - run.started) * 1000, 1)
        # What the run's event weighs is about what the run holds (its arguments and result): kept runs
        # are bounded by it.
        run.weight = self.events.publish("run", run.as_json())
        self._prune()

    def _notified(self, run: Run, message: dict[str, Any]) -> None:
        """A progress or log notification of the run's call, as it arrives (the trace has it too), or the
        MCP task its call became (method "task")."""
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        self.events.publish("progress", {"run": run.id, "method": message.get("method"), "params": params})

    def _attach_tracer(self, client: McpClient, run_id: str | None) -> None:
        if self.tracer is not None:
            client.trace = self.tracer.for_run(run_id) if run_id else self.tracer.hook()

    def _on_log(self, entry: LogEntry) -> None:
        if entry.kind == "error" and entry.level == "error" and entry.run:
            self._widget_threw(entry)
        if self._on_log_outside is not None:
            self._on_log_outside(entry)

    def _widget_threw(self, entry: LogEntry) -> None:
        """A widget's uncaught error: its run is marked, the error's place named in the template (the host
        named it so as it logged it, host/place.py, as `appsdk test` names it), and `on_widget_error` told
        once per error a rendering raises."""
        run = self.get_run(entry.run)
        if run is None or run.template is None:
            return
        line = entry.message.split("\n", 1)[0][:MAX_WIDGET_ERROR]
        flight = self._flight(run)
        with self._lock:
            if run.widget_error == line:
                return  # a widget throwing in a loop (a timer, an observer): said once
            run.widget_error = line
            run.version += 1
            flight.widget_errors_told += 1
            tell = flight.widget_errors_told <= WIDGET_ERRORS_TOLD
        self.events.publish("run", run.as_json())
        if tell and self._on_widget_error is not None:
            self._on_widget_error(run, line)

    # --- dev --------------------------------------------------------------------------------------------

    def app_broken(self, problem: str) -> None:
        """`appsdk dev`'s app failed to import: every page, open now or later, says so until a reload that
        imports."""
        self._app_problem = problem
        self.events.publish("app", {"ok": False, "problem": problem})

    def reloaded(
        self,
        changed_files: tuple[str, ...],
        tools: dict[str, tuple[str, ...]] | None,
        *,
        app_ok: bool = True,
        notice: str | None = None,
        seconds: float | None = None,
    ) -> None:
        """`appsdk dev` reloaded the app: tell every open page (it re-reads the templates, re-renders each
        widget keeping its state, and re-runs the last call when the tool changed)."""
        code_changed = any(name.endswith(".py") for name in changed_files)
        event = {
            "files": list(changed_files),
            "appOk": app_ok,
            "seconds": seconds,
            "tools": tools,
            "codeChanged": code_changed,
            "notice": notice,
            "problem": None if app_ok else self._app_problem,
            "time": time.time(),
        }
        if app_ok:
            self._app_problem = None
        elif self._app_problem is None:
            self._app_problem = "the app failed to import"
        self._last_reload = event
        if app_ok:
            self._generation += 1  # a new worker: the kept listing is of the last one
        # The page hears of it at once; the tool list follows from another thread, so neither the page
        # nor the dev supervisor (whose loop calls this) waits on a round trip to the new worker. The
        # widgets' templates are read first (under way while the push reaches the page, which then asks
        # for them): a re-render waits on them, and the new worker answers them faster alone.
        templates = self.host.read_templates_ahead() if app_ok else []
        if app_ok:
            self._forget_widget_errors()  # every widget renders the new code afresh
        self.events.publish("reload", event)
        if app_ok:
            relisting = threading.Event()
            thread = threading.Thread(
                target=self._refresh_tools, args=(relisting, templates), name="workbench-tools", daemon=True
            )
            with self._lock:
                self._threads.add(thread)
                self._relisting = relisting
            thread.start()

    def _forget_widget_errors(self) -> None:
        for run in self.runs():
            with self._lock:
                flight = self._flights.get(run.id)
                if flight is not None:
                    flight.widget_errors_told = 0
                if run.widget_error is None:
                    continue
                run.widget_error = None
                run.version += 1
            self.events.publish("run", run.as_json())

    def reload_news(self, tools: dict[str, tuple[str, ...]] | None, notice: str | None) -> None:
        """What the reload just pushed changed in the tools, now that dev has read the new code: pages
        show the notice, and re-run their last call if its tool changed (when the save was not code,
        which re-ran it already). Nothing to send when nothing changed."""
        last = self._last_reload
        if last is not None:
            self._last_reload = {**last, "tools": tools, "notice": notice}
        if tools is not None or notice is not None:
            self.events.publish("reload-news", {"tools": tools, "notice": notice})

    def _refresh_tools(self, relisting: threading.Event, after: Sequence[Future[Any]] = ()) -> None:
        # The page hears of the listing only when it differs from what it has: most saves change no
        # tool, and sending thousands of them again would have every page redraw its list for nothing.
        told = (self._tools, self._tools_error, self._sign_in_needed is not None)
        try:
            if after:
                futures.wait(after, timeout=TEMPLATES_FIRST_SECONDS)
            with contextlib.suppress(AppsdkError):
                self.tools(refresh=True, browser=False)
            if (self._tools, self._tools_error, self._sign_in_needed is not None) != told:
                self.events.publish("tools", self._tools_json_or_error())
        finally:
            relisting.set()
            with self._lock:
                self._threads.discard(threading.current_thread())
                if self._relisting is relisting:
                    self._relisting = None

    def _tools_json_or_error(self) -> dict[str, Any]:
        """The listing as it stands, without asking the server (a first listing that failed: its error)."""
        if self._tools is not None:
            return self.tools_json()
        return {
            "tools": [],
            "error": self._tools_error,
            "serverInfo": self._server_info,
            "signIn": self._sign_in_json(),
        }

    # --- HTTP -------------------------------------------------------------------------------------------

    def _routes(self) -> tuple[Route, ...]:
        """The workbench's page and API on the host origin, tried before the host's own routes."""
        return (
            get("/", self._page),
            get("/workbench/{name:path}", self._static),
            get("/host", api.host_page),  # the host page each run's widget is rendered in
            get("/api/workbench", lambda request: request.json(HTTPStatus.OK, self.info())),
            get("/api/tools", self._tools_route),
            get("/api/skills", self._skills_route),
            get("/api/skill-file", self._skill_file_route),
            get("/api/runs", lambda request: request.json(HTTPStatus.OK, {"runs": [r.as_json() for r in self.runs()]})),
            get("/api/template", self._template_route),
            get("/api/widget-state", self._widget_state_route),
            get("/api/events", self._stream),
            post("/api/runs", self._start_route),
            post("/api/sign-in", self._sign_in_route),
            post("/api/runs/clear", self._clear_route),
            post("/api/runs/rerun", self._rerun_route),
            post("/api/runs/cancel", self._cancel_route),
            post("/api/runs/approve", self._approve_route),
        )

    def _page(self, request: Request) -> None:
        send_static(request, STATIC, "workbench.html", PAGE_CSP)

    def _static(self, request: Request) -> None:
        send_static(request, STATIC, request.params["name"], PAGE_CSP)

    def _tools_route(self, request: Request) -> None:
        # The page asks on loading and on its refresh button: no browser opens unasked (its Sign in does).
        try:
            listing = self.tools_json(refresh=request.query.get("refresh") == "1", browser=False)
        except AppsdkError:
            if self._sign_in_needed is None:
                raise
            listing = self._tools_json_or_error()
        request.json(HTTPStatus.OK, listing)

    def _skills_route(self, request: Request) -> None:
        """The server's skills (SEP-2640) as skills/list gives them; `declared` false when it serves none."""
        from appsdk_cli import remote

        try:
            outcome = remote.list_skills(self.signing_target(browser=False))
        except AppsdkError as problem:
            if not self._needs_sign_in(problem):
                raise
            # Not broken: the skills wait for the sign-in the page offers, as the tools do.
            request.json(HTTPStatus.OK, {"declared": True, "skills": [], "error": None, "signIn": problem.message})
            return
        listing = {"declared": outcome.skills is not None, "skills": outcome.skills or []}
        request.json(HTTPStatus.OK, {**listing, "error": outcome.skills_error or None})

    def _skill_file_route(self, request: Request) -> None:
        """One file of a listed skill, read as a host reads it and checked against its digest and size.

        Only a URI the listing names is read: the page shows skill files, not whatever a URL asks for."""
        from appsdk_cli import mcpskills, remote

        uri = request.query.get("uri", "")
        target = self.signing_target(browser=False)
        listed = remote.list_skills(target).skills or []
        if not any(f.get("uri") == uri for entry in listed if isinstance(entry, dict) for f in mcpskills.files(entry)):
            raise HttpError(HTTPStatus.NOT_FOUND, f"no listed skill has a file {uri}")
        outcome = remote.read_resource(target, uri)
        data = mcpskills.content_bytes(outcome.result, uri)
        problem = outcome.verdict.problem if outcome.verdict is not None else "not checked: no listing holds it"
        text = data.decode("utf-8", errors="replace") if data is not None else None
        request.json(HTTPStatus.OK, {"uri": uri, "text": text, "verified": problem is None, "problem": problem})

    def _sign_in_route(self, request: Request) -> None:
        self.sign_in()
        request.json(HTTPStatus.ACCEPTED, {"signIn": self._sign_in_json()})

    def _template_route(self, request: Request) -> None:
        try:
            request.json(HTTPStatus.OK, self.template_json(request.query.get("run", "")))
        except KeyError:
            raise HttpError(HTTPStatus.NOT_FOUND, "that run has no widget") from None

    def _widget_state_route(self, request: Request) -> None:
        try:
            request.json(HTTPStatus.OK, {"state": self.host.widget_state(request.query.get("run", ""))})
        except KeyError:
            raise HttpError(HTTPStatus.NOT_FOUND, "that run has no widget") from None

    def _start_route(self, request: Request) -> None:
        body = request.body or {}
        tool, arguments = body.get("tool"), body.get("arguments")
        if not isinstance(tool, str) or not isinstance(arguments, dict):
            raise HttpError(HTTPStatus.BAD_REQUEST, "send {tool: string, arguments: object}")
        permissions = body.get("permissions")
        if permissions is not None:
            from appsdk_cli.permissions import UnknownMode, parse_mode

            try:
                permissions = parse_mode(permissions)
            except UnknownMode as problem:
                raise HttpError(HTTPStatus.BAD_REQUEST, str(problem)) from None
        run = self.start_run(tool, arguments, locale=_locale(body), permissions=permissions)
        request.json(HTTPStatus.ACCEPTED, {"run": run.as_json()})

    def _clear_route(self, request: Request) -> None:
        self.clear_runs()
        request.json(HTTPStatus.OK, {})

    def _named_run(self, request: Request) -> str:
        run_id = (request.body or {}).get("run")
        if not isinstance(run_id, str) or self.get_run(run_id) is None:
            raise HttpError(HTTPStatus.NOT_FOUND, "no such run")
        return run_id

    def _approve_route(self, request: Request) -> None:
        try:
            run = self.approve(self._named_run(request))
        except RuntimeError as not_waiting:
            raise HttpError(HTTPStatus.CONFLICT, str(not_waiting)) from None
        request.json(HTTPStatus.OK, {"run": run.as_json() if run else None})

    def _cancel_route(self, request: Request) -> None:
        run = self.cancel(self._named_run(request))
        request.json(HTTPStatus.OK, {"run": run.as_json() if run else None})

    def _rerun_route(self, request: Request) -> None:
        run_id = self._named_run(request)
        body = request.body or {}
        arguments = body.get("arguments")
        try:
            saved = body.get("afterSave")
            after_save = [str(name) for name in saved[:3]] if isinstance(saved, list) else None
            run = self.rerun(
                run_id, arguments if isinstance(arguments, dict) else None, locale=_locale(body), after_save=after_save
            )
        except RuntimeError as busy:
            raise HttpError(HTTPStatus.CONFLICT, str(busy)) from None
        request.json(HTTPStatus.ACCEPTED, {"run": run.as_json()})

    def _stream(self, request: Request) -> None:
        handler = request.handler
        handler.answered = True  # a stream: once begun, a failure cannot be answered as JSON
        handler.send_response(HTTPStatus.OK)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Cache-Control", "no-store")
        handler.send_header("X-Content-Type-Options", "nosniff")
        handler.end_headers()
        handler.close_connection = True

        def hello() -> dict[str, Any]:
            # What happened before the page connected: the newest runs and MCP traffic, bounded by bytes.
            runs = _newest_within([r.as_json() for r in self.runs()], HELLO_RUN_BYTES)
            if self.tracer is None:
                return {"info": self.info(), "runs": runs, "traffic": []}
            traffic = self.tracer.recent(HELLO_TRAFFIC_RECORDS, max_bytes=HELLO_TRAFFIC_BYTES)
            return {"info": self.info(), "runs": runs, "traffic": traffic}

        try:
            for chunk in self.events.stream(hello):
                handler.wfile.write(chunk)
                handler.wfile.flush()
        except (ConnectionError, TimeoutError, OSError):
            pass  # the page went away


def _page_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The listing as the page shows it: each tool with the metadata its badges and form read."""
    from appsdk_cli.appmeta import tool_meta

    listed = []
    for tool in tools:
        meta = tool_meta(tool)
        raw_meta = tool.get("_meta") if isinstance(tool.get("_meta"), dict) else {}
        file_params = raw_meta.get("openai/fileParams")
        listed.append(
            {
                "tool": tool,
                "name": meta.name,
                "title": meta.title,
                "description": meta.description,
                "template": meta.template,
                "invoking": meta.invoking,
                "invoked": meta.invoked,
                "readOnly": meta.read_only,
                "destructive": meta.destructive,
                "openWorld": meta.open_world,
                "idempotent": meta.idempotent,
                "visibility": list(meta.ui_visibility) if meta.ui_visibility is not None else ["model", "app"],
                "widgetAccessible": meta.widget_accessible,
                "fileParams": file_params if isinstance(file_params, list) else [],
            }
        )
    return listed


def _crash_json(crash: ToolCrash | None) -> dict[str, Any] | None:
    """What appsdk dev saw a tool raise, for the page: the exception, where, and the user's frames."""
    if crash is None:
        return None
    frames = [dict(zip(("file", "line", "function", "code"), frame, strict=True)) for frame in crash.frames]
    return {
        "type": crash.type,
        "message": crash.message,
        "summary": crash.summary,
        "file": crash.file,
        "line": crash.line,
        "function": crash.function,
        "frames": frames,
    }


def _newest_within(items: list[Any], budget: int) -> list[Any]:
    """The newest of `items` (oldest first, as given) whose JSON together stays within `budget` bytes."""
    import json

    kept: list[Any] = []
    for item in reversed(items):
        budget -= len(json.dumps(item, ensure_ascii=False).encode())
        if budget < 0:
            break
        kept.append(item)
    kept.reverse()
    return kept


def _locale(body: dict[str, Any]) -> str | None:
    return body.get("locale") if isinstance(body.get("locale"), str) else None


def argument_problems(schema: Any, arguments: dict[str, Any]) -> list[str]:
    """The arguments checked against the tool's inputSchema, each problem one short line (the page checks
    too, but a hand-edited JSON must not reach the server unchecked)."""
    import jsonschema

    from appsdk_cli.schemawalk import Budget, TooComplex, bounded_validator

    if not isinstance(schema, dict):
        return []
    try:
        validator = bounded_validator(schema, Budget.for_validation())
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except jsonschema.exceptions.SchemaError as problem:
        return [f"the tool's inputSchema is not a valid JSON Schema: {problem.message}"]
    except (TooComplex, RecursionError):
        return []  # too complex to check here (a hostile anyOf bomb): the server checks its own arguments
    lines = []
    for error in errors[:5]:
        where = "/".join(str(part) for part in error.absolute_path) or "arguments"
        lines.append(f"{where}: {error.message}")
    return lines


def _make_tracer() -> Any:
    try:
        from appsdk_cli.trace import Tracer
    except ImportError:
        return None  # the traffic recorder is not in this build: the page says the panel waits for it
    return Tracer(client="workbench")


def _rerun_words(run: Run, after_save: Sequence[str] | None) -> str | None:
    """The call the page makes again by itself after a save, as dev's terminal names it: "run #2
    list-books({"month": "june"}) after the save of server.py"."""
    if after_save is None:
        return None
    arguments = json.dumps(run.arguments, ensure_ascii=False) if run.arguments else ""
    if len(arguments) > 80:
        arguments = arguments[:79] + "…"
    why = f"after the save of {', '.join(after_save)}" if after_save else "after a save"
    return f"run #{run.sequence} {run.tool}({arguments}) {why}"
