"""The workbench inside `appsdk dev`: listening before the supervisor forks, told about every reload.

The workbench listens before the first worker is forked (so the start-up panel can print its URL) and
learns the MCP URL from the Started event; a forked worker keeps none of the supervisor's descriptors. This is
the session's side of it: the workbench itself (workbench/) knows nothing of `appsdk dev`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli import chatgpt
from appsdk_cli.errors import AppsdkError

if TYPE_CHECKING:
    from appsdk_cli.devserver.events import AppBroken, NewCodeServing, Observer, Reloaded, Started
    from appsdk_cli.devserver.supervisor import Supervisor
    from appsdk_cli.host.run import Run
    from appsdk_cli.workbench import Workbench


class DevWorkbench:
    def __init__(self, project: Path, emit: Observer | None = None) -> None:
        from appsdk_cli.connection import Target
        from appsdk_cli.workbench import Workbench
        from appsdk_cli.workbench.port import project_port

        # The same port on every start (a bookmarked tab survives a restart), a free one when it is busy.
        self.port = project_port(project)
        self.busy_port: int | None = None
        # Whether the page already heard of the reload under way (NewCodeServing), its news to follow.
        self._told_early = False
        # The MCP URL is known once the supervisor has bound its socket; the page asks nothing before that.
        self._emit = emit
        self.workbench: Workbench = Workbench(
            Target(url="http://127.0.0.1:0/mcp", source="appsdk dev"),
            port=self.port,
            dev=True,
            on_widget_error=self._widget_threw,
        )

    def start(self, supervisor: Supervisor) -> None:
        _load_what_requests_import()
        # The widgets' site is the app's (Vite admits exactly its view origin): its URL is final by now.
        self.workbench.host.serve_for(supervisor.url)
        try:
            self.workbench.start()
        except AppsdkError:
            self.busy_port = self.port
            self.workbench.host.requested_port = 0
            self.workbench.start()

    def close(self) -> None:
        self.workbench.close()

    def _widget_threw(self, run: Run, message: str) -> None:
        """A widget threw in the page: the terminal says so too, where the developer looks."""
        from appsdk_cli.devserver.events import WidgetThrew

        if self._emit is not None:
            self._emit(WidgetThrew(tool=run.tool, run=run.sequence, message=message))

    @property
    def url(self) -> str:
        return self.workbench.url

    def started(self, event: Started) -> Started:
        """Point the page at the app's URL; the event, with the workbench's URL for the start-up panel."""
        self.workbench.target = replace(self.workbench.target, url=event.url)
        note = f"its usual port {self.busy_port} was busy" if self.busy_port is not None else None
        return replace(event, workbench=self.url, workbench_note=note)

    def broken(self, event: AppBroken) -> None:
        """The app failed to import: every page says so, those opened later too, until a reload imports."""
        self.workbench.app_broken(event.summary)

    def serving(self, event: NewCodeServing) -> None:
        """The new code answers: the page re-renders now; what changed in the tools follows (reloaded)."""
        self._told_early = True
        self.workbench.reloaded(event.changed_files, None, app_ok=True, seconds=event.seconds)

    def reloaded(self, event: Reloaded) -> None:
        tools = None
        if event.tools is not None:
            tools = {"added": event.tools.added, "removed": event.tools.removed, "changed": event.tools.changed}
        told_early, self._told_early = self._told_early, False
        if told_early and event.app_ok:
            self.workbench.reload_news(tools, refresh_notice(event))
            return
        self.workbench.reloaded(
            event.changed_files,
            tools,
            app_ok=event.app_ok,
            notice=refresh_notice(event),
            seconds=event.seconds,
        )


def refresh_notice(event: Reloaded) -> str | None:
    """What the terminal says about ChatGPT after this reload, in the page's words (**bold** for controls)."""
    if not event.app_ok or event.tools is None:
        return None
    tools = event.tools
    named = (("added", tools.added), ("removed", tools.removed), ("changed", tools.changed))
    parts = [f"{label} {', '.join(names)}" for label, names in named if names]
    return f"Refresh needed in ChatGPT: the tool list changed ({'; '.join(parts)}); {chatgpt.REFRESH}."


def _load_what_requests_import() -> None:
    """Import now what the workbench's requests import lazily (the host's routes, sign-in, the client).

    A dev runs for hours, and appsdk may be reinstalled under it meanwhile (a `pip install` into the same
    venv): a module first imported after that is missing or of another version, and the request that
    needed it would fail. About 0.1 s, once per dev.
    """
    import contextlib
    import importlib
    import pkgutil

    import appsdk_cli.auth
    import appsdk_cli.client
    import appsdk_cli.host
    import appsdk_cli.workbench

    for package in (appsdk_cli.auth, appsdk_cli.client, appsdk_cli.host, appsdk_cli.workbench):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            with contextlib.suppress(ImportError):  # an optional dependency that is not installed
                importlib.import_module(module.name)
    for name in ("connection", "remote", "toolargs", "trace", "project", "appmeta"):
        importlib.import_module(f"appsdk_cli.{name}")
