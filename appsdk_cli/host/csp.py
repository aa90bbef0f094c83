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

from appsdk_cli.appmeta import OPENAI_CSP_KEYS, UI_CSP_KEYS, widget_csp


@dataclass(frozen=True)
class HostCsp:
    connect: tuple[str, ...] = ()
    resource: tuple[str, ...] = ()
    frame: tuple[str, ...] = ()
    base_uri: tuple[str, ...] = ()
    declared: bool = False  # False: the resource declared no CSP, so the strict default applies
    disagreement: str | None = None  # set when ui.csp and openai/widgetCSP list different origins

    def approved(self) -> dict[str, list[str]] | None:
        """The domains the host applied, in the spec's McpUiResourceCsp shape (hostCapabilities.sandbox.csp)."""
        if not self.declared:
            return None
        lists = {UI_CSP_KEYS[kind]: list(getattr(self, kind)) for kind in KINDS}
        return {key: origins for key, origins in lists.items() if origins}

    def header(self, *, extra_images: tuple[str, ...] = ()) -> str:
        """The Content-Security-Policy header value; `extra_images` may also be shown (the host's file store)."""
        resources = " ".join(self.resource)

        def directive(name: str, *sources: str) -> str:
            return f"{name} {' '.join(s for s in sources if s)}"

        return "; ".join(
            [
                "default-src 'none'",
                directive("script-src", "'self'", "'unsafe-inline'", resources),
                directive("style-src", "'self'", "'unsafe-inline'", resources),
                directive("img-src", "'self'", "data:", "blob:", resources, " ".join(extra_images)),
                directive("font-src", "'self'", "data:", resources),
                directive("media-src", "'self'", "data:", "blob:", resources),
                directive("connect-src", " ".join(self.connect) or "'none'"),
                directive("frame-src", " ".join(self.frame) or "'none'"),
                directive("base-uri", "'self'", " ".join(self.base_uri)),
                "form-action 'none'",
            ]
        )


# The lists a host turns into directives. redirect_domains is ChatGPT's allow-list for openExternal, not CSP.
KINDS = ("connect", "resource", "frame", "base_uri")


def _safe(origins: tuple[str, ...]) -> list[str]:
    # A CSP source cannot contain spaces, semicolons, commas or quotes: such an entry would inject
    # directives of its own, so it is dropped rather than passed through.
    return [o.strip() for o in origins if o.strip() and not set(o.strip()) & set(" ;,'\"")]


def host_csp(resource_meta: dict[str, Any] | None) -> HostCsp:
    """The CSP for a widget resource whose `_meta` is `resource_meta` (as on the wire)."""
    declared = widget_csp(resource_meta if isinstance(resource_meta, dict) else {})
    lists: dict[str, tuple[str, ...]] = {}
    differing: list[str] = []
    for kind in KINDS:
        standard = _safe((declared.ui or {}).get(kind, ()))
        openai = _safe((declared.openai or {}).get(kind, ()))
        lists[kind] = tuple(dict.fromkeys([*standard, *openai]))
        if declared.ui is not None and declared.openai is not None and set(standard) != set(openai):
            differing.append(f"{UI_CSP_KEYS[kind]}/{OPENAI_CSP_KEYS.get(kind, f'{kind}_domains')}")
    disagreement = None
    if differing:
        disagreement = (
            f"ui.csp and openai/widgetCSP list different origins ({', '.join(differing)}); "
            "the preview allows both, a host may read only one"
        )
    return HostCsp(**lists, declared=declared.declared, disagreement=disagreement)
