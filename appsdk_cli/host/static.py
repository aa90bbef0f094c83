"""The host's static files: the host page, its scripts and styles, and the bootstrap injected into widgets.

They live in host/static/: the host page (host.html, host.css), its ES modules (host/*.js, served as
/host/NAME.js) and the widget's bootstrap. `send_static` serves a file by its path under a folder
(subfolders too: the page is several ES modules), never anything outside it.
"""

from __future__ import annotations

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
    """Answer with the file, or a plain 404; an HTML page goes out under `html_csp`."""
    file = static_file(folder, name)
    if file is None:
        raise HttpError(HTTPStatus.NOT_FOUND, "not found", plain=True)
    headers = {"Content-Security-Policy": html_csp} if file.suffix == ".html" else None
    request.send(HTTPStatus.OK, file.read_bytes(), STATIC_TYPES[file.suffix], headers)
