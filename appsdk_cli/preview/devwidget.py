"""The preview's widget document from the app's Vite dev server, for hot module replacement.

When `appsdk dev` runs a project with web/, it records its Vite dev server in .appsdk/dev.json. If the
widget the preview shows is that project's built file (web/dist/index.html), the preview serves Vite's
HTML instead, on the same sandbox origin and with the same host bootstrap: the page's scripts then come
from Vite, and a saved .tsx/.css file updates the widget in place, keeping React state. The CSP is the
resource's own, plus the Vite origin and its HMR websocket and nothing else.

This is the local preview only. What ChatGPT (or a tunnel) gets stays the self-contained built file.
"""

from __future__ import annotations

import re
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from appsdk_cli.preview.server import PreviewServer
    from appsdk_cli.preview.session import WidgetTemplate

STATIC = Path(__file__).parent / "static"
VITE_URL_KEY = "vite_url"
# The <meta> appsdk's builds of web/ carry (runner.mjs), whichever build of it the preview read first.
SOURCE_MARK = '<meta name="appsdk-widget-source"'


def vite_url_for(preview: PreviewServer, template: WidgetTemplate) -> str | None:
    """The Vite dev server that serves this widget's source, when `appsdk dev` runs one for it."""
    from appsdk_cli.project import find_dev_state

    target_url = preview.preview.target.url
    if not target_url:
        return None
    state = find_dev_state(Path.cwd())
    if state is None or state.url != target_url:
        return None
    url = state.extra.get(VITE_URL_KEY) if isinstance(state.extra, dict) else None
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost"):
        return None
    if SOURCE_MARK not in template.html:
        built = _project_of(Path.cwd()) / "web" / "dist" / "index.html"
        try:
            if built.read_text(encoding="utf-8") != template.html:
                return None  # another widget of the app, not the one web/ builds
        except OSError:
            pass  # not built yet: the first build is still running
    return f"http://{parts.netloc}/"


def dev_document(preview: PreviewServer, config: dict[str, Any], template: WidgetTemplate) -> tuple[str, str] | None:
    """Vite's widget HTML with the preview's bootstrap, and its CSP; None to serve the resource as it is."""
    from appsdk_cli.preview.server import LogEntry, inject_bootstrap

    vite = vite_url_for(preview, template)
    if vite is None:
        return None
    try:
        with urllib.request.urlopen(vite, timeout=10) as answer:  # a loopback http URL, checked above
            html = answer.read().decode("utf-8", "replace")
    except OSError as problem:
        preview.record(LogEntry("host", "warn", f"Vite at {vite} did not answer ({problem}); showing the built widget"))
        return None
    origin = vite.rstrip("/")
    socket = "ws://" + urlsplit(vite).netloc
    overlay = (STATIC / "widget-dev.js").read_text(encoding="utf-8")
    head = f'<base href="{vite}">\n<script type="module" data-appsdk-preview="widget-dev">\n{overlay}</script>\n'
    found = re.search(r"<head\b[^>]*>", html, flags=re.IGNORECASE)
    html = html[: found.end()] + "\n" + head + html[found.end() :] if found else head + html
    csp = template.csp
    csp = replace(
        csp,
        connect=(*csp.connect, origin, socket),
        resource=(*csp.resource, origin),
        base_uri=(*csp.base_uri, origin),
    )
    return inject_bootstrap(html, config), csp.header()


def _project_of(start: Path) -> Path:
    start = start.resolve()
    for folder in [start, *start.parents]:
        if (folder / "pyproject.toml").is_file():
            return folder
    return start
