"""The workbench inside `appsdk dev`: started before the supervisor, told about every reload.

The workbench listens before the first worker is forked (so the start-up panel can print its URL) and
learns the MCP URL from the Started event; the supervisor closes its sockets in every worker. It is
the observer's wrapper: each dev event goes to the terminal renderer first, then to the page.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from appsdk_cli import chatgpt
from appsdk_cli.devserver import events

if TYPE_CHECKING:
    from collections.abc import Callable

    from appsdk_cli.devserver.supervisor import Supervisor
    from appsdk_cli.workbench.server import Workbench


class DevWorkbench:
    def __init__(self, observer: Callable[[events.DevEvent], None], *, open_browser: bool = False) -> None:
        from appsdk_cli.remote import Target
        from appsdk_cli.workbench.server import Workbench

        self._observer = observer
        self._open_browser = open_browser
        # The MCP URL is known once the supervisor has bound its socket; the page asks nothing before that.
        self.workbench: Workbench = Workbench(Target(url="http://127.0.0.1:0/mcp", source="appsdk dev"), dev=True)

    def start(self, supervisor: Supervisor) -> None:
        self.workbench.start()
        supervisor.close_in_workers(*(sock.fileno() for sock in self.workbench.sockets()))

    def close(self) -> None:
        self.workbench.close()

    @property
    def url(self) -> str:
        return self.workbench.url

    def __call__(self, event: events.DevEvent) -> None:
        if isinstance(event, events.Started):
            self.workbench.target = replace(self.workbench.target, url=event.url)
            event = replace(event, workbench=self.url)
        self._observer(event)
        if isinstance(event, events.Started) and self._open_browser:
            import webbrowser

            from appsdk_cli.render.console import warning

            if not webbrowser.open(self.url):
                warning(f"could not open a browser; open {self.url} yourself")
        elif isinstance(event, events.Reloaded):
            tools = None
            if event.tools is not None:
                tools = {"added": event.tools.added, "removed": event.tools.removed, "changed": event.tools.changed}
            self.workbench.reloaded(
                event.changed_files,
                tools,
                app_ok=event.app_ok,
                notice=refresh_notice(event),
                seconds=event.seconds,
            )


def refresh_notice(event: events.Reloaded) -> str | None:
    """What the terminal says about ChatGPT after this reload, in the page's words (**bold** for controls)."""
    if not event.app_ok or event.tools is None:
        return None
    tools = event.tools
    named = (("added", tools.added), ("removed", tools.removed), ("changed", tools.changed))
    parts = [f"{label} {', '.join(names)}" for label, names in named if names]
    return f"Refresh needed in ChatGPT: the tool list changed ({'; '.join(parts)}); {chatgpt.REFRESH}."
