"""Find the outside origins a widget's HTML loads from or connects to (stdlib html.parser + regexes).

Conservative on purpose: only absolute URLs written out literally count (http, https, ws, wss, or
protocol-relative `//host` in markup). URLs built at run time are invisible here, so they cannot produce a
false alarm. Relative script and stylesheet URLs are collected apart (`relative_assets`): a widget is a
`ui://` document, so they load nothing in any host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urlsplit

from appsdk_cli.netloc import is_this_machine

CONNECT, RESOURCE, FRAME = "connect", "resource", "frame"

# (tag, attribute) -> what kind of CSP list governs it
_URL_ATTRIBUTES = {
    ("script", "src"): RESOURCE,
    ("img", "src"): RESOURCE,
    ("img", "srcset"): RESOURCE,
    ("source", "src"): RESOURCE,
    ("source", "srcset"): RESOURCE,
    ("video", "src"): RESOURCE,
    ("video", "poster"): RESOURCE,
    ("audio", "src"): RESOURCE,
    ("track", "src"): RESOURCE,
    ("embed", "src"): RESOURCE,
    ("object", "data"): RESOURCE,
    ("input", "src"): RESOURCE,
    ("image", "href"): RESOURCE,
    ("iframe", "src"): FRAME,
    ("frame", "src"): FRAME,
}
# <link rel=...> values that make the browser fetch the href
_LOADING_RELS = {"stylesheet", "icon", "apple-touch-icon", "preload", "modulepreload", "prefetch", "manifest"}

# The first argument of a call, when it is a literal absolute URL.
_ARG_URL = r"""\s*['"`]((?:https?|wss?):[^'"`\s)]+)"""
_SCRIPT_PATTERNS = (
    (re.compile(r"\bfetch\s*\(" + _ARG_URL), CONNECT, "fetch()"),
    (re.compile(r"\bnew\s+WebSocket\s*\(" + _ARG_URL), CONNECT, "new WebSocket()"),
    (re.compile(r"\bnew\s+EventSource\s*\(" + _ARG_URL), CONNECT, "new EventSource()"),
    (re.compile(r"\bsendBeacon\s*\(" + _ARG_URL), CONNECT, "navigator.sendBeacon()"),
    (re.compile(r"""\.open\s*\(\s*['"`][A-Za-z]+['"`]\s*,""" + _ARG_URL), CONNECT, "XMLHttpRequest.open()"),
    (re.compile(r"\bimport\s*\(" + _ARG_URL), RESOURCE, "import()"),
    (re.compile(r"""\b(?:from|import)\s*['"`]((?:https?):[^'"`\s]+)"""), RESOURCE, "import"),
)
_CSS_PATTERNS = (
    (re.compile(r"""\burl\(\s*['"]?((?:https?:)?//[^'")\s]+)""", re.IGNORECASE), RESOURCE, "CSS url()"),
    (re.compile(r"""@import\s+(?:url\(\s*)?['"]?((?:https?:)?//[^'")\s;]+)""", re.IGNORECASE), RESOURCE, "@import"),
)


@dataclass(frozen=True)
class OutsideLoad:
    kind: str  # CONNECT, RESOURCE or FRAME: which CSP list must name the origin
    url: str
    origin: str  # scheme://host[:port]
    how: str  # "<script src>", "fetch()", ...


def origin_of(url: str) -> str | None:
    """scheme://host[:port] of an absolute or protocol-relative URL; None for relative, data:, blob:, ..."""
    if url.startswith("//"):
        url = "https:" + url
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname or "${" in url.split("/")[2]:
        return None
    return f"{parts.scheme}://{parts.hostname}" + (f":{port}" if port else "")


@dataclass(frozen=True)
class RelativeAsset:
    url: str
    how: str  # "<script src>", "<link rel=stylesheet>", "@import"


# A widget is a ui:// document: a relative URL resolves against nothing the browser can fetch.
_NOT_RELATIVE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//|#)")
_TEMPLATED = ("{{", "${", "{%", "<%")
_CSS_RELATIVE_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?['"]?([^'")\s;]+)""", re.IGNORECASE)


def _is_relative(url: str) -> bool:
    url = url.strip()
    return bool(url) and not _NOT_RELATIVE.match(url) and not any(mark in url for mark in _TEMPLATED)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.loads: list[OutsideLoad] = []
        self.relative: list[RelativeAsset] = []
        self.base_href: str | None = None
        self._inline: str | None = None  # "script" or "style" while inside one without src

    def _add(self, kind: str, url: str, how: str) -> None:
        url = url.strip()
        origin = origin_of(url)
        if origin:
            self.loads.append(OutsideLoad(kind, url, origin, how))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        for name, value in values.items():
            kind = _URL_ATTRIBUTES.get((tag, name))
            if kind and name.endswith("srcset"):
                for candidate in value.split(","):
                    if candidate.strip():
                        self._add(kind, candidate.split()[0], f"<{tag} {name}>")
            elif kind:
                self._add(kind, value, f"<{tag} {name}>")
        if tag == "base" and values.get("href") and self.base_href is None:
            self.base_href = values["href"].strip()
        if tag == "script" and _is_relative(values.get("src", "")):
            self.relative.append(RelativeAsset(values["src"].strip(), "<script src>"))
        if tag == "link" and values.get("href"):
            rels = set(values.get("rel", "").lower().split())
            if rels & _LOADING_RELS:
                self._add(RESOURCE, values["href"], f"<link rel={values.get('rel')}>")
            if rels & {"stylesheet", "modulepreload", "preload"} and _is_relative(values["href"]):
                self.relative.append(RelativeAsset(values["href"].strip(), f"<link rel={values.get('rel')}>"))
        if "style" in values:
            self._scan(values["style"], _CSS_PATTERNS)
        if tag == "script" and "src" not in values:
            self._inline = "script"
        elif tag == "style":
            self._inline = "style"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._inline = None

    def handle_data(self, data: str) -> None:
        if self._inline == "script":
            self._scan(data, _SCRIPT_PATTERNS)
        elif self._inline == "style":
            self._scan(data, _CSS_PATTERNS)
            for match in _CSS_RELATIVE_IMPORT.finditer(data):
                if _is_relative(match.group(1)):
                    self.relative.append(RelativeAsset(match.group(1), "@import"))

    def _scan(self, text: str, patterns: tuple[tuple[re.Pattern[str], str, str], ...]) -> None:
        for pattern, kind, how in patterns:
            for match in pattern.finditer(text):
                self._add(kind, match.group(1), how)


def outside_loads(html: str) -> list[OutsideLoad]:
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return collector.loads


def is_loopback_origin(origin: str) -> bool:
    return is_this_machine(urlsplit(origin).hostname or "")


def dev_server_loads(html: str) -> list[OutsideLoad]:
    """Scripts and styles the widget loads from this machine (a dev server's page served as the widget): no host
    can reach them, whatever the CSP declares. (An image from there is APPS505's, like any undeclared origin.)"""
    code = ("<script", "<link", "import", "@import")
    return [load for load in outside_loads(html) if load.how.startswith(code) and is_loopback_origin(load.origin)]


def relative_assets(html: str) -> list[RelativeAsset]:
    """Scripts and stylesheets a widget loads by a relative URL; none when a `<base href>` makes them absolute."""
    collector = _Collector()
    collector.feed(html)
    collector.close()
    if collector.base_href and not _is_relative(collector.base_href):
        return []
    return collector.relative


def _split_host(entry: str) -> tuple[str | None, str, str | None]:
    """A CSP source ("https://*.example.com:443", "cdn.example.com") as (scheme, host, port)."""
    scheme, _, rest = entry.partition("://") if "://" in entry else ("", "", entry)
    authority = rest.split("/", 1)[0]
    host, _, port = authority.rpartition(":") if authority.count(":") == 1 else (authority, "", "")
    return (scheme.lower() or None), host.lower(), (port or None)


_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443"}


def allowed_by(origin: str, sources: tuple[str, ...]) -> bool:
    """Whether a CSP source list admits `origin`. Lenient on schemes (an http source also admits its
    https upgrade), so a doubt never becomes an error."""
    scheme, _, authority = origin.partition("://")
    host, _, port = authority.partition(":")
    port = port or _DEFAULT_PORTS.get(scheme, "")
    for source in sources:
        source = source.strip()
        if source == "*":
            return True
        source_scheme, source_host, source_port = _split_host(source)
        if source_scheme in ("https", "wss") and scheme in ("http", "ws"):
            continue
        # A source without a port means its scheme's default port, as in CSP itself.
        expected = source_port or _DEFAULT_PORTS.get(source_scheme or scheme, "")
        if expected not in ("*", port):
            continue
        if source_host == host or (source_host.startswith("*.") and host.endswith(source_host[1:])):
            return True
    return False
