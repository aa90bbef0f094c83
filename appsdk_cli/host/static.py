"""The host's static files: the host page, its scripts and styles, and the bootstrap injected into widgets.

They live in host/static/: the host page (host.html, host.css), its ES modules (host/*.js, served as
/host/NAME.js) and the widget's bootstrap. `send_static` serves a file by its path under a folder
(subfolders too: the page is several ES modules), never anything outside it.

Every fresh browser context (each rendered-widget test, each screenshot) loads the host page's ~16
modules, one import level after another. So the host page names its scripts and styles under a version
of the folder's content, /v/VERSION/host/main.js, which the browser may keep for good (`immutable`: a new
content is a new URL), and lists every module it imports as a modulepreload, so they load in one round
instead of one per level of imports. The page itself, and anything under no or an old version, is never
cached.
"""

from __future__ import annotations

import functools
import hashlib
import re
from http import HTTPStatus
from pathlib import Path

from appsdk_cli.host.handler import HttpError, Request

STATIC = Path(__file__).resolve().parent / "static"

# What is served, and as what (a module script must be text/javascript, and nosniff makes the browser hold
# every file to its type). Anything else under the folder is not served.
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


KEPT_FOR_GOOD = "public, max-age=31536000, immutable"
_VERSIONED = re.compile(r"v/([0-9a-f]{16})/(.+)\Z", re.DOTALL)
_LOCAL_REFERENCE = re.compile(r'(src|href)="/([^"/][^"]*)"')
_MODULE_SCRIPT = re.compile(r'<script type="module" src="/v/[0-9a-f]{16}/((?:[^"/]+/)*)([^"/]+)"></script>')


@functools.cache
def static_version(folder: Path) -> str:
    """A digest of every file served from `folder`, read once per process: the URL part under which they
    may be cached for good (a file changed under a running process is served fresh under no version)."""
    digest = hashlib.sha256()
    root = folder.resolve()
    for file in sorted(root.rglob("*")):
        if file.is_file() and file.suffix in STATIC_TYPES:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def versioned_page(html: str, folder: Path) -> str:
    """The page with its own scripts and styles under the folder's version, and each module script's
    sibling modules preloaded beside it."""
    version = static_version(folder)

    def versioned(found: re.Match[str]) -> str:
        name = found.group(2)
        file = static_file(folder, name)
        if file is None or file.suffix == ".html":
            return found.group(0)
        return f'{found.group(1)}="/v/{version}/{name}"'

    def preloaded(found: re.Match[str]) -> str:
        subfolder, entry = found.group(1), found.group(2)
        siblings = sorted(p.name for p in (folder / subfolder).glob("*.js") if p.name != entry)
        links = "".join(f'<link rel="modulepreload" href="/v/{version}/{subfolder}{name}">\n' for name in siblings)
        return links + found.group(0)

    return _MODULE_SCRIPT.sub(preloaded, _LOCAL_REFERENCE.sub(versioned, html))


def static_file(folder: Path, name: str) -> Path | None:
    """The file `name` (a relative URL path) names under `folder`; None for anything else: a path that
    climbs out or hides (`..`, `.x`, `//`, a backslash), a folder, a type not served, or a link that
    resolves outside the folder."""
    if not name or "\\" in name or "\0" in name or name.startswith("/"):
        return None
    if any(part in ("", ".", "..") or part.startswith(".") for part in name.split("/")):
        return None
    root = folder.resolve()
    file = (root / name).resolve()
    if not file.is_relative_to(root) or file.suffix not in STATIC_TYPES or not file.is_file():
        return None
    return file


def send_static(request: Request, folder: Path, name: str, html_csp: str) -> None:
    """Answer with the file, or a plain 404; an HTML page goes out under `html_csp` (the host's own with its
    scripts and styles under the folder's version). A file under the current version may be cached for good."""
    kept = False
    versioned = _VERSIONED.match(name)
    if versioned:
        kept = versioned.group(1) == static_version(folder)
        name = versioned.group(2)
    file = static_file(folder, name)
    if file is None:
        raise HttpError(HTTPStatus.NOT_FOUND, "not found", plain=True)
    if file.suffix == ".html":
        # Only the host's own pages: another folder's (the workbench's) is served under a prefix of its own,
        # which a /v/ URL would not reach.
        page = file.read_bytes()
        if folder == STATIC:
            page = versioned_page(page.decode("utf-8"), folder).encode()
        request.send(HTTPStatus.OK, page, STATIC_TYPES[file.suffix], {"Content-Security-Policy": html_csp})
        return
    headers = {"Cache-Control": KEPT_FOR_GOOD} if kept else None
    request.send(HTTPStatus.OK, file.read_bytes(), STATIC_TYPES[file.suffix], headers)
