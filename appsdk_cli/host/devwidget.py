"""The preview's widget document from the app's Vite dev server, for hot module replacement.

When `appsdk dev` runs a project with web/, it records its Vite dev server in .appsdk/dev.json (found
from the working folder, or by the server's URL from anywhere: project.running_dev_for_url). If the
widget the preview shows is that project's built file (web/dist/index.html), the preview serves Vite's
HTML instead, on the same sandbox origin and with the same host bootstrap: the page's scripts then come
from Vite, and a saved .tsx/.css file updates the widget in place, keeping React state. The CSP is the
resource's own, plus the Vite origin and its HMR websocket and nothing else.

This is the local preview only. What ChatGPT (or a tunnel) gets stays the self-contained built file.
"""

from __future__ import annotations

import re
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from appsdk_cli.host.run import LogEntry
from appsdk_cli.host.static import STATIC
from appsdk_cli.netloc import is_loopback_host

if TYPE_CHECKING:
    from collections.abc import Callable

    from appsdk_cli.host.csp import HostCsp
    from appsdk_cli.host.session import PreviewSession, WidgetTemplate

VITE_URL_KEY = "vite_url"
# The <meta> appsdk's builds of web/ carry (runner.mjs), whichever build of it the preview read first.
SOURCE_MARK = '<meta name="appsdk-widget-source"'


@dataclass(frozen=True)
class VitePage:
    """The widget's page as `appsdk dev`'s Vite serves it, before the preview's bootstrap goes in."""

    url: str  # http://127.0.0.1:PORT/
    html: str

    def csp(self, csp: HostCsp) -> HostCsp:
        """The resource's CSP, plus the Vite origin and its HMR websocket and nothing else."""
        origin = self.url.rstrip("/")
        socket = "ws://" + urlsplit(self.url).netloc
        return replace(
            csp,
            connect=(*csp.connect, origin, socket),
            resource=(*csp.resource, origin),
            base_uri=(*csp.base_uri, origin),
        )

    def page(self) -> str:
        """The page with the dev overlay (build errors) in its head; the host's bootstrap goes in after."""
        overlay = (STATIC / "widget-dev.js").read_text(encoding="utf-8")
        head = (
            f'<base href="{self.url}">\n<script type="module" data-appsdk-preview="widget-dev">\n{overlay}</script>\n'
        )
        found = re.search(r"<head\b[^>]*>", self.html, flags=re.IGNORECASE)
        return self.html[: found.end()] + "\n" + head + self.html[found.end() :] if found else head + self.html


def vite_url_for(session: PreviewSession, template: WidgetTemplate) -> str | None:
    """The Vite dev server that serves this widget's source, when `appsdk dev` runs one for it."""
    from appsdk_cli.project import find_dev_state, running_dev_for_url

    target_url = session.target.url
    if not target_url:
        return None
    state = find_dev_state(Path.cwd())
    if state is not None and state.url == target_url:
        project = _project_of(Path.cwd())
    else:
        # Started from elsewhere (`appsdk dev PATH`, or a preview run outside the project): by its URL.
        found = running_dev_for_url(target_url)
        if found is None:
            return None
        project, state = found
    url = state.extra.get(VITE_URL_KEY) if isinstance(state.extra, dict) else None
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme != "http" or not is_loopback_host(parts.hostname or ""):
        return None
    if SOURCE_MARK not in template.html:
        built = project / "web" / "dist" / "index.html"
        try:
            if built.read_text(encoding="utf-8") != template.html:
                return None  # another widget of the app, not the one web/ builds
        except OSError:
            pass  # not built yet: the first build is still running
    return f"http://{parts.netloc}/"


def vite_page(record: Callable[[LogEntry], None], session: PreviewSession, template: WidgetTemplate) -> VitePage | None:
    """Vite's page for this run's widget; None to serve the resource as it is (`record` hears why)."""
    vite = vite_url_for(session, template)
    if vite is None:
        return None
    try:
        with urllib.request.urlopen(vite, timeout=10) as answer:  # a loopback http URL, checked above
            html = answer.read().decode("utf-8", "replace")
    except OSError as problem:
        record(LogEntry("host", "warn", f"Vite at {vite} did not answer ({problem}); showing the built widget"))
        return None
    return VitePage(vite, html)


def _project_of(start: Path) -> Path:
    from appsdk_cli.project import walk_up

    return next((folder for folder in walk_up(start) if (folder / "pyproject.toml").is_file()), start.resolve())
