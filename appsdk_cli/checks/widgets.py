"""Widget resources: which ones exist, what MIME type they carry, whether they can be read.

Also home to `widgets(snapshot)`, the one view of "the app's widgets" that the CSP rules share.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appsdk_cli.appmeta import WIDGET_MIME_TYPES
from appsdk_cli.checks.htmlscan import OutsideLoad, RelativeAsset, dev_server_loads, relative_assets
from appsdk_cli.checks.model import Finding, Rule, Severity, resource_target
from appsdk_cli.snapshot.model import Snapshot
from appsdk_cli.snapshot.plan import is_widget_candidate, referenced_uris

MCP_APP_MIME, SKYBRIDGE_MIME = WIDGET_MIME_TYPES

WIDGET_MIME_TYPE = Rule(
    "APPS201",
    "widget-mime-type",
    Severity.ERROR,
    f"A widget resource whose MIME type is neither `{MCP_APP_MIME}` nor `{SKYBRIDGE_MIME}`",
    "Hosts render only those types; plain `text/html` shows nothing",
)
SKYBRIDGE_ONLY = Rule(
    "APPS202",
    "skybridge-only",
    Severity.WARNING,
    f"A widget served as `{SKYBRIDGE_MIME}`",
    "Valid for ChatGPT, but standard MCP Apps hosts will not render it",
)
WIDGET_UNREADABLE = Rule(
    "APPS203",
    "widget-unreadable",
    Severity.ERROR,
    "A listed widget resource that fails `resources/read` or returns no HTML",
    "The host reads it to render the widget; nothing renders",
)
RELATIVE_ASSET = Rule(
    "APPS204",
    "relative-asset-url",
    Severity.ERROR,
    "Widget HTML whose scripts or stylesheets are neither inlined nor fetchable: relative URLs "
    "(`./app.js`, `styles.css`, `/main.css`) or a dev server on this machine (`http://localhost:5173/@vite/client`)",
    "A widget is served from a `ui://` resource, so a relative URL loads nothing in any host, and no host reaches "
    "your machine's dev server: the widget renders dead",
)
STALE_BUILD = Rule(
    "APPS205",
    "widget-build-stale",
    Severity.WARNING,
    "A widget project (web/) whose built `web/dist/index.html` is missing or older than its sources",
    "The server serves the built file: ChatGPT gets the widget as it was at the last build, not as the code is",
)
RULES = (WIDGET_MIME_TYPE, SKYBRIDGE_ONLY, WIDGET_UNREADABLE, RELATIVE_ASSET, STALE_BUILD)


@dataclass(frozen=True)
class Widget:
    uri: str
    listed: dict[str, Any] | None  # the resources/list entry
    content: dict[str, Any] | None  # the resources/read content item for this URI
    read_error: str | None
    referenced: bool  # some tool names it as its template

    @property
    def meta(self) -> dict[str, Any]:
        """The resource's `_meta`: the listing's, overlaid by the read content item's (the MCP Apps place)."""
        merged: dict[str, Any] = {}
        for source in (self.listed, self.content):
            meta = source.get("_meta") if source else None
            if isinstance(meta, dict):
                merged.update(meta)
        return merged

    @property
    def mime_types(self) -> list[str]:
        found = []
        for source in (self.listed, self.content):
            mime = source.get("mimeType") if source else None
            if isinstance(mime, str) and mime not in found:
                found.append(mime)
        return found

    @property
    def html(self) -> str | None:
        if not self.content:
            return None
        if isinstance(self.content.get("text"), str):
            return self.content["text"]
        if isinstance(self.content.get("blob"), str):
            try:
                return base64.b64decode(self.content["blob"]).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                return None
        return None


def _content_item(result: dict[str, Any] | None, uri: str) -> dict[str, Any] | None:
    contents = result.get("contents") if result else None
    items = [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
    return next((c for c in items if c.get("uri") == uri), items[0] if items else None)


def widgets(snapshot: Snapshot) -> list[Widget]:
    """Every widget: each URI a tool names that exists (listed or readable), then widget-like resources."""
    referenced = referenced_uris(list(snapshot.unique_tools()))
    uris = list(referenced)
    for resource in snapshot.resources:
        if isinstance(resource, dict) and is_widget_candidate(resource) and resource.get("uri") not in uris:
            uris.append(str(resource.get("uri")))
    found: list[Widget] = []
    for uri in uris:
        listed = snapshot.listed_resource(uri)
        result = snapshot.reads.get(uri)
        if listed is None and result is None:
            continue  # a tool names a resource that does not exist: links.py reports it
        found.append(Widget(uri, listed, _content_item(result, uri), snapshot.read_errors.get(uri), uri in referenced))
    return found


def check(snapshot: Snapshot) -> Iterator[Finding]:
    for widget in widgets(snapshot):
        target = resource_target(widget.uri)
        mimes = widget.mime_types
        looks_like_html = any(m.startswith("text/html") for m in mimes)
        if (widget.referenced or looks_like_html) and not mimes:
            yield Finding(
                WIDGET_MIME_TYPE,
                target,
                f"widget {widget.uri} declares no MIME type",
                f'serve it as "{MCP_APP_MIME}" (e.g. mime_type= on @mcp.resource)',
            )
        for mime in mimes:
            if mime not in WIDGET_MIME_TYPES and (widget.referenced or looks_like_html):
                yield Finding(
                    WIDGET_MIME_TYPE,
                    target,
                    f"widget {widget.uri} is served as {mime!r}, which no host renders as a widget",
                    f'serve it as "{MCP_APP_MIME}" (every host) or "{SKYBRIDGE_MIME}" (ChatGPT only)',
                )
        if SKYBRIDGE_MIME in mimes:
            yield Finding(
                SKYBRIDGE_ONLY,
                target,
                f"widget {widget.uri} is {SKYBRIDGE_MIME}: ChatGPT renders it, standard MCP Apps hosts do not",
                f'serve it as "{MCP_APP_MIME}", which ChatGPT renders too',
            )
        if widget.listed is not None and widget.read_error:
            yield Finding(
                WIDGET_UNREADABLE,
                target,
                f"widget {widget.uri} cannot be read: {widget.read_error}",
                "make the resource function return the widget's HTML without raising",
            )
        elif widget.listed is not None and widget.referenced and not (widget.html or "").strip():
            yield Finding(
                WIDGET_UNREADABLE,
                target,
                f"widget {widget.uri} was read but holds no HTML",
                "return the widget's HTML as the resource's text",
            )
        relative = relative_assets(widget.html or "")
        if relative:
            yield Finding(
                RELATIVE_ASSET,
                target,
                f"widget {widget.uri} loads {_first_loads(relative)} by a relative URL, which no host can fetch",
                "inline the script and styles into the HTML (a bundler's single-file build does it), or serve "
                "them at absolute https URLs on an origin the widget's CSP lists",
            )
        local = dev_server_loads(widget.html or "")
        if local:
            yield Finding(
                RELATIVE_ASSET,
                target,
                f"widget {widget.uri} loads {_first_loads(local)} from this machine, which no host can reach",
                "serve the built, self-contained file (`appsdk build` writes web/dist/index.html), not the dev "
                "server's page",
            )


# What a widget project's build is made from, besides everything under web/src/.
_BUILD_INPUTS = ("index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "vite.config.js")


def build_findings(project: Path) -> Iterator[Finding]:
    """APPS205 for a project with web/: the built file exists and is newer than every source it is built from."""
    web = project / "web"
    if not (web / "package.json").is_file():
        return
    built = web / "dist" / "index.html"
    target = "project web/"
    if not built.is_file():
        yield Finding(
            STALE_BUILD,
            target,
            "web/dist/index.html does not exist, so the server serves a 'not built yet' page as the widget",
            "run `appsdk build` (appsdk dev rebuilds it on every save)",
        )
        return
    sources = [web / name for name in _BUILD_INPUTS if (web / name).is_file()]
    sources += [path for path in (web / "src").rglob("*") if path.is_file()] if (web / "src").is_dir() else []
    built_at = built.stat().st_mtime
    newer = sorted((path for path in sources if path.stat().st_mtime > built_at), key=lambda p: -p.stat().st_mtime)
    if newer:
        names = ", ".join(str(path.relative_to(project)) for path in newer[:3])
        more = f" and {len(newer) - 3} more" if len(newer) > 3 else ""
        yield Finding(
            STALE_BUILD,
            target,
            f"web/dist/index.html is older than {names}{more}: the server serves the widget as it was before",
            "run `appsdk build` (appsdk dev rebuilds it on every good save)",
        )


def _first_loads(loads: list[RelativeAsset] | list[OutsideLoad]) -> str:
    """'script a.js, link b.css' for the first three loads, and how many more there are."""
    shown = ", ".join(f"{load.how} {load.url}" for load in loads[:3])
    return shown + (f" and {len(loads) - 3} more" if len(loads) > 3 else "")
