"""`appsdk dev` composed: the supervisor, the widget half, the workbench and the tunnel, as one session.

The way uvicorn's library `run()` composes Config → Server → supervisor: the command parses its
options into a SessionConfig and passes one observer; the session starts the parts in order, and
everything they have to say reaches that observer as a DevEvent (devserver/events.py). Nothing here
prints, so a test drives a whole session in-process and reads its events:

    session = DevSession(SessionConfig(DevConfig(project, port=0)), events.append)
    threading.Thread(target=session.run).start()   # ... then session.stop()

The order matters: the supervisor takes the project and its port first (Vite admits across origins only
the view origin of the server's URL, port and all), then Vite starts (its URL goes into .appsdk/dev.json),
the workbench listens before the first worker forks (so the start-up panel can name it, and every worker
closes its sockets), and the tunnel opens once the first worker serves.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from appsdk_cli.devserver import events
from appsdk_cli.devserver.events import Observer
from appsdk_cli.errors import AppsdkError

if TYPE_CHECKING:
    from appsdk_cli.devserver.supervisor import DevConfig, Supervisor
    from appsdk_cli.devserver.widget import WidgetDev
    from appsdk_cli.devserver.workbench import DevWorkbench
    from appsdk_cli.tunnel import Tunnel, TunnelEndpoints, TunnelSettings


@dataclass(frozen=True)
class SessionConfig:
    server: DevConfig
    workbench: bool = True  # the interactive host page beside the app
    open_browser: bool = False  # open the workbench in a browser once the app serves
    # An ngrok tunnel for the whole session; its local_url is filled in once the socket is bound.
    tunnel: TunnelSettings | None = None


class DevSession:
    """One `appsdk dev`: run() serves until stop() (or Ctrl-C on the main thread), then closes every part."""

    def __init__(self, config: SessionConfig, observer: Observer) -> None:
        from appsdk_cli.devserver.status import StatusRecorder

        self.config = config
        # What the terminal shows is also kept in .appsdk/status.json, for an agent (`appsdk mcp`).
        self._observer = StatusRecorder(config.server.project, observer)
        self._lock = threading.Lock()
        self._stop_requested = False
        self.supervisor: Supervisor | None = None
        self._widget: WidgetDev | None = None
        self._bench: DevWorkbench | None = None

    def run(self, *, handle_signals: bool | None = None) -> None:
        from appsdk_cli.devserver.supervisor import Supervisor

        if self.config.tunnel is not None:
            from appsdk_cli.tunnel import preflight

            preflight(self.config.tunnel)  # no token, no agent: one line before anything starts
        tunnel = _TunnelAttachment(self.config.tunnel, self._emit) if self.config.tunnel else None
        try:
            supervisor = Supervisor(self.config.server, observer=self._on_server_event, on_bound=tunnel)
            # The port first: Vite admits only the view origin of this server's URL, port and all.
            supervisor.claim()
            self._widget = self._start_widget(supervisor.url)
            if self._widget is not None and self._widget.vite.url:
                supervisor.record_extra("vite_url", self._widget.vite.url)
            if self.config.workbench:
                from appsdk_cli.devserver.workbench import DevWorkbench

                self._bench = DevWorkbench(self.config.server.project, self._emit)
                self._bench.start(supervisor)
            with self._lock:
                self.supervisor = supervisor
                if self._stop_requested:
                    supervisor.stop()
            supervisor.run(handle_signals=handle_signals)
        finally:
            if tunnel is not None:
                tunnel.close()
            if self._bench is not None:
                self._bench.close()
            if self._widget is not None:
                self._widget.close()

    def stop(self) -> None:
        """Ask run() to stop and return. Thread-safe; before run() has started serving too."""
        with self._lock:
            self._stop_requested = True
            supervisor = self.supervisor
        if supervisor is not None:
            supervisor.stop()

    def _start_widget(self, server_url: str) -> WidgetDev | None:
        """A project with web/: Vite and the widget's watching build, beside the server at `server_url`
        (or a reason why not)."""
        from appsdk_cli.web.node import web_dir

        web = web_dir(self.config.server.project)
        if web is None:
            return None
        from appsdk_cli.devserver.widget import WidgetDev

        try:
            with self._step("Starting Vite for the widget"):
                return WidgetDev.start(self.config.server.project, web, self._emit, server_url=server_url)
        except AppsdkError as problem:
            self._emit(
                events.WidgetUnavailable(
                    f"{problem.message}; serving the last built widget (web/dist/) without hot reload"
                )
            )
            return None

    def _on_server_event(self, event: events.DevEvent) -> None:
        """The supervisor's events, passed on with what the workbench and the widget add to them."""
        if isinstance(event, events.Started) and self._bench is not None:
            event = self._bench.started(event)
        self._emit(event)
        if isinstance(event, events.Started):
            if self._widget is not None:
                self._emit(events.WidgetStarted(self._widget.vite.url))
                if event.app_ok:
                    self._widget.want_types()
            if self._bench is not None and self.config.open_browser:
                import webbrowser

                if not webbrowser.open(self._bench.url):
                    self._emit(events.BrowserNotOpened(self._bench.url))
        elif isinstance(event, events.NewCodeServing) and self._bench is not None:
            self._bench.serving(event)
        elif isinstance(event, events.Reloaded):
            if self._widget is not None and event.app_ok and event.tools is not None:
                self._widget.want_types()
            if self._bench is not None:
                self._bench.reloaded(event)
        elif isinstance(event, events.AppBroken) and self._bench is not None:
            self._bench.broken(event)

    @contextmanager
    def _step(self, what: str) -> Iterator[None]:
        with _step(self._emit, what):
            yield

    def _emit(self, event: events.DevEvent) -> None:
        self._observer(event)


@contextmanager
def _step(emit: Observer, what: str) -> Iterator[None]:
    emit(events.StepStarted(what))
    try:
        yield
    finally:
        emit(events.StepFinished(what))


class _TunnelAttachment:
    """Opens the tunnel once the first worker serves, and keeps it for the whole session.

    The tunnel lives in the supervisor, not in a worker, so reloads never touch it and the public URL
    stays the same. The agent is started on the supervisor's own thread (no worker is forked while
    the agent's stderr is being redirected); a thread then watches it and restarts it if it dies.
    """

    def __init__(self, settings: TunnelSettings, emit: Observer) -> None:
        self.settings = settings
        self._emit = emit
        self.tunnel: Tunnel | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def __call__(self, supervisor: Supervisor) -> None:
        from appsdk_cli.tunnel import Tunnel, check_mcp

        self.tunnel = Tunnel(replace(self.settings, local_url=supervisor.url))
        with _step(self._emit, "Starting the ngrok agent"):
            endpoints = self.tunnel.open()
        supervisor.record_public_url(endpoints.public_url)
        problem = None
        try:
            with _step(self._emit, "Checking the public /mcp URL"):
                check_mcp(endpoints.mcp_url)
        except AppsdkError as failure:
            problem = failure.message
        self._emit(events.TunnelOpened(endpoints, verified=problem is None, problem=problem))
        self._watcher = threading.Thread(target=self._watch, args=(supervisor,), name="tunnel-watch", daemon=True)
        self._watcher.start()

    def _watch(self, supervisor: Supervisor) -> None:
        from appsdk_cli.tunnel import watch

        def restarted(endpoints: TunnelEndpoints, changed: bool) -> None:
            supervisor.record_public_url(endpoints.public_url)
            self._emit(events.TunnelRestarted(endpoints, changed))

        assert self.tunnel is not None
        try:
            watch(self.tunnel, restarted, stop=self._stop)
        except AppsdkError as problem:
            # The agent died and could not come back: say so, and keep serving locally.
            self._emit(events.TunnelLost(problem.message))
            supervisor.record_public_url(None)

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10)
        if self.tunnel is not None:
            self.tunnel.close()


def run(config: SessionConfig, observer: Observer) -> None:
    """Serve one `appsdk dev` session until Ctrl-C (on the main thread) or until it fails."""
    DevSession(config, observer).run()
