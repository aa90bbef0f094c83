"""`appsdk preview TOOL`'s server: the host (host/) holding one run, the call `prepare()` made.

The host's requests that name no run (`appsdk preview TOOL`'s page never names one) address it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from appsdk_cli.host.run import DEFAULT_RUN, Run
from appsdk_cli.host.server import HostServer

if TYPE_CHECKING:
    from collections.abc import Callable

    from appsdk_cli.host.server import LogEntry
    from appsdk_cli.host.session import PreviewOptions, PreviewSession


class PreviewServer(HostServer):
    """The host serving one session as its default run; use as a context manager (or start()/close())."""

    def __init__(
        self,
        preview: PreviewSession,
        options: PreviewOptions | None = None,
        *,
        port: int = 0,
        on_log: Callable[[LogEntry], None] | None = None,
    ) -> None:
        super().__init__(options, port=port, on_log=on_log, server=preview.target.url or preview.target.description)
        self.add_run(Run.shown(DEFAULT_RUN, preview))

    @property
    def preview(self) -> PreviewSession:
        """The one run's session."""
        session = self.run(DEFAULT_RUN).session
        assert session is not None  # a shown run always has one
        return session
