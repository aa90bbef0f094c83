"""Where in its template a line of the widget's document is: the one mapping `appsdk test`, the host's log
(the workbench's Log panel, preview's terminal) and `preview --screenshot` name a widget's error by (the
template's ui:// URI and line, not the view's `/view:375`); and which of a widget's problems to say."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from appsdk_cli.host.run import DEFAULT_RUN, UnknownRun

if TYPE_CHECKING:
    from appsdk_cli.host.state import HostState

# What follows from a widget failing rather than causing it: a widget that threw at load never took its data.
DATA_PROBLEMS = ("the widget never", "the widget sent ui/initialize", "the preview page never loaded")


@dataclass(frozen=True)
class SourcePlace:
    """Where the widget's own document is served (`…/view`) and what it is: a line there is a line of the
    template, shifted by the bootstrap the host injects (host/widget.py), so an error names the template."""

    view_url: str  # the view origin's /view
    uri: str  # the template's ui:// URI
    injected_lines: int

    @classmethod
    def of(cls, view_origin: str, uri: str, html: str) -> SourcePlace:
        from appsdk_cli.host.widget import inject_bootstrap

        return cls(f"{view_origin}/view", uri, inject_bootstrap(html, {}).count("\n") - html.count("\n"))

    def place(self, cause: str) -> str:
        def shifted(found: re.Match[str]) -> str:
            line = int(found.group(1))
            return f"{self.uri}:{line - self.injected_lines if line > self.injected_lines else line}"

        return re.sub(re.escape(self.view_url) + r":(\d+)", shifted, cause)


def in_template(host: HostState, text: str, run_id: str = DEFAULT_RUN) -> str:
    """`text` with each line of the run's widget document it names named as its template's line (as it is
    when the run shows no widget)."""
    if f"{host.origins.view_origin}/view:" not in text:
        return text  # most log lines name no place in the view: no template to read for them
    try:
        _, template = host.view(run_id)
    except UnknownRun:
        return text
    return SourcePlace.of(host.origins.view_origin, template.uri, template.html).place(text)


def root_causes(problems: list[str], also: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Why a widget failed, the root first: its errors (and `also`, what else the caller counts, such as CSP
    blocks), then only if there is nothing else that it never took its data, which a widget that threw at
    load never does either."""
    errors = [p for p in problems if not p.startswith(DATA_PROBLEMS)]
    found = list(dict.fromkeys([*errors, *also]))
    return found or [p for p in problems if p.startswith(DATA_PROBLEMS)]
