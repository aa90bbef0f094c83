"""The widget half of `appsdk dev` for a project with web/: Vite beside the server, and types kept current.

The server half (the supervisor) does not know about it beyond one entry in .appsdk/dev.json: the Vite
dev server's URL, which `appsdk preview` loads the widget from (with hot module replacement). What
ChatGPT gets is web/dist/index.html, rebuilt on every good save by the runner's watching build.

When a reload changes the tools (an outputSchema among them), web/src/tools.gen.ts is regenerated on a
thread of its own, and the watching type checker reports what the change broke in the widget.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.errors import AppsdkError

if TYPE_CHECKING:
    from appsdk_cli.devserver.events import DevEvent
    from appsdk_cli.web.build import ViteDev


@dataclass
class WidgetDev:
    project: Path
    web: Path
    vite: ViteDev
    _report: Callable[[DevEvent], None]
    _types_wanted: threading.Event
    _stop: threading.Event
    _thread: threading.Thread | None = None

    @classmethod
    def start(cls, project: Path, web: Path, report: Callable[[DevEvent], None], *, server_url: str) -> WidgetDev:
        """Start Vite and the types thread; what they do is reported as events. AppsdkError if Vite won't start.

        Vite answers across origins only the view origin a host shows `server_url`'s widgets on (any port:
        the host picks it), so no other server's widget in the same browser can read the project."""
        from appsdk_cli.devserver.events import WidgetActivity
        from appsdk_cli.netloc import sandbox_site_id, view_origin_pattern
        from appsdk_cli.web.build import ViteDev

        allowed = view_origin_pattern(sandbox_site_id(server_url))
        vite = ViteDev(web, lambda event: report(WidgetActivity(event)), allowed_origin=allowed)
        vite.start()
        widget = cls(project, web, vite, report, threading.Event(), threading.Event())
        widget._thread = threading.Thread(target=widget._regenerate_types, name="widget-types", daemon=True)
        widget._thread.start()
        return widget

    def want_types(self) -> None:
        """Regenerate web/src/tools.gen.ts soon: the app serves, or its tools changed."""
        self._types_wanted.set()

    def _regenerate_types(self) -> None:
        from appsdk_cli.devserver.events import WidgetTypesFailed, WidgetTypesWritten
        from appsdk_cli.web.build import generate_types

        while not self._stop.is_set():
            if not self._types_wanted.wait(0.5):
                continue
            self._types_wanted.clear()
            try:
                result = generate_types(self.project, self.web)
            except AppsdkError as problem:
                self._report(WidgetTypesFailed(problem.message))
                continue
            if result.changed:
                self._report(WidgetTypesWritten(tuple(result.tools)))

    def close(self) -> None:
        self._stop.set()
        self.vite.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
