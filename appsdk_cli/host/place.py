"""Where in its template a line of the widget's document is: the one mapping `appsdk test` and the workbench
both name a widget's error by (the template's ui:// URI and line, not the view's `/view:375`)."""

from __future__ import annotations

import re
from dataclasses import dataclass


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
