"""`appsdk preview TOOL --screenshot`'s pipeline: the tool called and its host started while Chromium starts,
then one shot (browser/'s shoot()), the host's log read before it closes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.browser.capture import Screenshot
from appsdk_cli.browser.chromium import screenshot_requirements, this_process_sandbox
from appsdk_cli.browser.screenshot import discard_if_written, serving_while_the_browser_starts, written_at
from appsdk_cli.browser.shot import shoot
from appsdk_cli.host.place import in_template, root_causes
from appsdk_cli.host.run import LogEntry
from appsdk_cli.preview.prepare import prepare
from appsdk_cli.preview.server import PreviewServer

if TYPE_CHECKING:
    from appsdk_cli.connection import Target
    from appsdk_cli.host.session import PreviewOptions


@dataclass(frozen=True)
class PreviewShot:
    screenshot: Screenshot
    log: list[LogEntry]  # the host's log of the run


def screenshot_call(
    target: Target,
    tool: str,
    words: list[str],
    args_json: str | None,
    out: Path,
    *,
    options: PreviewOptions,
    port: int = 0,
    timeout: float = 30.0,
    keep: bool = True,
    on_warning: Callable[[str], None] | None = None,
    on_unsandboxed: Callable[[str], None] | None = None,
    on_kept_refused: Callable[[str], None] | None = None,
) -> PreviewShot:
    """Call `tool`, show it in the host and save the widget's frame to `out`. A missing Chromium or
    Playwright fails before the tool is called. On KeyboardInterrupt (Ctrl-C, or SIGTERM made one), no
    image of this run is left at `out`."""
    # Before the tool is called: a missing browser should not cost a round trip to find out.
    chromium = screenshot_requirements()
    sandbox = this_process_sandbox()
    if not sandbox.enabled and on_unsandboxed is not None:
        on_unsandboxed(sandbox.reason)

    def serve() -> PreviewServer:
        called = prepare(target, tool, words, args_json, locale=options.locale, permissions=options.permissions)
        return PreviewServer(called, options, port=port).start()

    def page_url(server: PreviewServer) -> str:
        if on_warning is not None:
            for message in server.preview.warnings:
                on_warning(message)
        return server.page_url(screenshot=True)

    earlier = written_at(out.expanduser())
    try:
        # The tool is called and the host started while Chromium starts: each is a good part of the time.
        with serving_while_the_browser_starts(serve, page_url) as (page, served):
            shot = shoot(
                page,
                out,
                chromium=chromium,
                sandbox=sandbox,
                timeout=timeout,
                keep=keep,
                on_kept_refused=on_kept_refused,
            )
            server = served()
            # Said as `appsdk test` says them: the error's place in the template, and the root cause alone
            # (a widget that threw at load never read its data either: that is no second problem).
            problems = root_causes([in_template(server, problem) for problem in shot.problems])
            log = list(server.log)
    except KeyboardInterrupt:
        # Ctrl-C after the image was saved, as the host closed: the run was stopped, and leaves no image.
        discard_if_written(out.expanduser(), earlier)
        raise
    return PreviewShot(replace(shot, problems=tuple(problems)), log)
