"""The Content-Security-Policy a host puts on a widget, built from what its resource declares.

MCP Apps (`ui.csp`, camelCase) and ChatGPT (`openai/widgetCSP`, snake_case) name the same four lists.
A server may declare either or both; reports disagree on which key ChatGPT reads, so the preview
applies the union and says so when the two differ, rather than silently picking one.

The directives follow the MCP Apps host rules: nothing is reachable unless declared, inline script and
style are allowed (widgets ship as one HTML document), connectDomains feed connect-src, resourceDomains
feed every static-resource directive, frameDomains feed frame-src, baseUriDomains feed base-uri.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# (MCP Apps key, ChatGPT key) per list. redirect_domains is ChatGPT's allow-list for openExternal, not CSP.
_KEYS = {
    "connect": ("connectDomains", "connect_domains"),
    "resource": ("resourceDomains", "resource_domains"),
    "frame": ("frameDomains", "frame_domains"),
    "base_uri": ("baseUriDomains", "base_uri_domains"),
}


@dataclass(frozen=True)
class WidgetCsp:
    connect: tuple[str, ...] = ()
    resource: tuple[str, ...] = ()
    frame: tuple[str, ...] = ()
    base_uri: tuple[str, ...] = ()
    declared: bool = False  # False: the resource declared no CSP, so the strict default applies
    disagreement: str | None = None  # set when ui.csp and openai/widgetCSP list different origins

    def header(self) -> str:
        """The Content-Security-Policy header value."""
        resources = " ".join(self.resource)

        def directive(name: str, *sources: str) -> str:
            return f"{name} {' '.join(s for s in sources if s)}"

        return "; ".join(
            [
                "default-src 'none'",
                directive("script-src", "'self'", "'unsafe-inline'", resources),
                directive("style-src", "'self'", "'unsafe-inline'", resources),
                directive("img-src", "'self'", "data:", "blob:", resources),
                directive("font-src", "'self'", "data:", resources),
                directive("media-src", "'self'", "data:", "blob:", resources),
                directive("connect-src", " ".join(self.connect) or "'none'"),
                directive("frame-src", " ".join(self.frame) or "'none'"),
                directive("base-uri", "'self'", " ".join(self.base_uri)),
                "form-action 'none'",
            ]
        )


def _origins(value: Any) -> list[str]:
    # A CSP source cannot contain spaces, semicolons, commas or quotes: such an entry would inject
    # directives of its own, so it is dropped rather than passed through.
    if not isinstance(value, list):
        return []
    return [v.strip() for v in value if isinstance(v, str) and v.strip() and not set(v.strip()) & set(" ;,'\"")]


def widget_csp(resource_meta: dict[str, Any] | None) -> WidgetCsp:
    """The CSP for a widget resource whose `_meta` is `resource_meta` (as on the wire)."""
    meta = resource_meta if isinstance(resource_meta, dict) else {}
    ui = meta.get("ui") if isinstance(meta.get("ui"), dict) else {}
    standard = ui.get("csp") if isinstance(ui.get("csp"), dict) else None
    openai = meta.get("openai/widgetCSP") if isinstance(meta.get("openai/widgetCSP"), dict) else None
    lists: dict[str, tuple[str, ...]] = {}
    differing: list[str] = []
    for field, (camel, snake) in _KEYS.items():
        one = _origins(standard.get(camel)) if standard else []
        other = _origins(openai.get(snake)) if openai else []
        lists[field] = tuple(dict.fromkeys([*one, *other]))
        if standard is not None and openai is not None and set(one) != set(other):
            differing.append(f"{camel}/{snake}")
    disagreement = None
    if differing:
        disagreement = (
            f"ui.csp and openai/widgetCSP list different origins ({', '.join(differing)}); "
            "the preview allows both, a host may read only one"
        )
    return WidgetCsp(**lists, declared=standard is not None or openai is not None, disagreement=disagreement)
