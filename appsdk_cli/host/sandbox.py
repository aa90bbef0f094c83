"""The sandbox socket's two other origins: the spec's sandbox proxy, and window.openai's file downloads.

The proxy (`/proxy` on sandbox-ID.localhost) is the frame the host page puts around each view, as the MCP
Apps spec has a web host do: it tells the host page it is ready (`ui/notifications/sandbox-proxy-ready`),
takes the widget's resource from it (`ui/notifications/sandbox-resource-ready`), frames the view origin's
copy of that document with the sandbox and permissions given, and from then on forwards every other
message between the host page and the view, in both directions, untouched (sandbox-proxy.js).
It may be framed only by our host pages and runs only its own script.

The files origin (`/files/<id>` on files-ID.localhost) serves what a widget uploaded, as the download URL
`getFileDownloadUrl` and `openai/fileParams` hand out. The bytes and their type are the widget's choice,
so they go out as an attachment, under a `sandbox` CSP with nosniff: framed or opened, the file never
runs as a page of any origin. The view may read them (CORS), as a widget reads ChatGPT's download URLs.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from urllib.parse import quote

from appsdk_cli.host.handler import HttpError, Request, get
from appsdk_cli.host.origins import frame_ancestors
from appsdk_cli.host.static import STATIC

PROXY_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>appsdk sandbox proxy</title>
<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}
iframe{display:block;border:0;width:100%;height:100%;color-scheme:normal}</style>
<script type="application/json" id="appsdk-proxy">__CONFIG__</script>
<script src="/sandbox-proxy.js"></script>
</head><body></body></html>
"""


def _proxy(request: Request) -> None:
    origins = request.host.origins
    config = {"hostOrigins": list(origins.host_page_origins), "viewOrigin": origins.view_origin}
    page = PROXY_PAGE.replace("__CONFIG__", json.dumps(config).replace("<", "\\u003c"))
    csp = "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'unsafe-inline'",
            f"frame-src {origins.view_origin}",
            frame_ancestors(origins),
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    request.send(HTTPStatus.OK, page.encode(), "text/html; charset=utf-8", {"Content-Security-Policy": csp})


def _proxy_script(request: Request) -> None:
    body = (STATIC / "sandbox-proxy.js").read_bytes()
    request.send(HTTPStatus.OK, body, "text/javascript; charset=utf-8")


def content_disposition(file_name: str) -> str:
    """`attachment` with the name in ASCII and in RFC 8187 UTF-8: nothing of it can end the header."""
    ascii_name = "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\;' else "_" for c in file_name) or "file"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(file_name, safe='')}"


def _file(request: Request) -> None:
    host = request.host
    stored = host.files.get(request.params["file_id"])
    if stored is None:
        raise HttpError(HTTPStatus.NOT_FOUND, "no such file (the preview keeps files only while it runs)", plain=True)
    try:
        body = stored.path.read_bytes()
    except OSError:
        raise HttpError(HTTPStatus.GONE, "the file is gone", plain=True) from None
    headers = {
        "Content-Disposition": content_disposition(stored.file_name),
        # Opened or framed, the file is a page of no origin that runs nothing.
        "Content-Security-Policy": "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'",
        # The view reads its uploads (fetch, <img>), as a widget reads ChatGPT's download URLs.
        "Access-Control-Allow-Origin": host.origins.view_origin,
        "Cross-Origin-Resource-Policy": "cross-origin",
        "Vary": "Origin",
    }
    request.send(HTTPStatus.OK, body, stored.mime_type, headers)


PROXY_ROUTES = (get("/proxy", _proxy), get("/sandbox-proxy.js", _proxy_script))
FILE_ROUTES = (get("/files/{file_id}", _file),)
