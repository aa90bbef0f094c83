"""The host's origin model under attack: a hostile server's widget, in a real Chromium with its popup
blocker on, tries to escape its sandbox; each attempt must fail and the honest use beside it must work.

The attacks are issue #25's: an uploaded page framed from its download URL (1), a neighbour web app's
cookies read, planted and sent (2), downloads that navigate or script the host page (6), header injection
through an upload's name and type (7), and a view speaking for the sandbox proxy. `appsdk dev`'s Vite and
its CORS are tested in test_react.py.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, RunningServer, free_port, serve, stop
from preview_helpers import CHROMIUM, NEEDS_CHROMIUM, http_get, widget_view

from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

HOSTILE = FIXTURES / "hostile_widget_app.py"


class Neighbour:
    """Another web app the user runs on a loopback port: it records the cookies each request brought."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen[self.path] = self.headers.get("Cookie", "")
                body = b"<!doctype html><title>neighbour</title><p>the neighbour app</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def hostile_app(tmp_path_factory) -> Iterator[tuple[RunningServer, Path]]:
    calls = tmp_path_factory.mktemp("hostile") / "calls.txt"
    port = free_port()
    server = serve([sys.executable, str(HOSTILE), str(port), str(calls)], port)
    yield server, calls
    stop(server.process)


@pytest.fixture
def neighbour() -> Iterator[Neighbour]:
    app = Neighbour()
    yield app
    app.close()


@pytest.fixture(scope="module")
def popup_blocking_browser() -> Iterator[Any]:
    """Debian's Chromium as a user has it: Playwright turns the popup blocker off by default; not here."""
    from appsdk_cli.browser.chromium import CHROMIUM_FLAGS

    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=list(CHROMIUM_FLAGS),
            ignore_default_args=["--disable-popup-blocking"],
        )
        yield browser
        browser.close()


def attack(browser, app: RunningServer, neighbour: Neighbour, profile: str) -> tuple[Any, PreviewServer, dict]:
    """Open the hostile widget in a preview of `profile`; the page, the host, and what the widget saw."""
    port = free_port()
    host_origin = f"http://127.0.0.1:{port}"
    arguments = [f"host={host_origin}", f"neighbour=http://127.0.0.1:{neighbour.port}"]
    server = PreviewServer(
        prepare(Target(url=app.url), "attack", arguments), PreviewOptions(profile=profile), port=port
    )
    server.start()
    context = browser.new_context()
    for name in ("127.0.0.1", "localhost"):
        # The neighbour's session, as a browser keeps it (SameSite=Lax is Chromium's default too).
        context.add_cookies(
            [{"name": "neighbour", "value": "secret", "url": f"http://{name}:{neighbour.port}", "sameSite": "Lax"}]
        )
    page = context.new_page()
    page.goto(server.page_url())
    view = widget_view(page)
    view.locator("#status", has_text="done").wait_for(timeout=30_000)
    report = json.loads(view.locator("#report").text_content() or "{}")
    page.wait_for_timeout(500)  # whatever the attempts set off has had its chance to land
    return page, server, report


@pytest.mark.browser
@NEEDS_CHROMIUM
def test_a_hostile_widget_stays_on_its_own_site_and_its_upload_never_runs(
    popup_blocking_browser, hostile_app, neighbour
):
    app, calls = hostile_app
    page, server, report = attack(popup_blocking_browser, app, neighbour, "chatgpt")
    try:
        origins = server.origins
        assert "error" not in report, report
        # The widget's own site: a *.localhost name of this server's, not 127.0.0.1 on another port.
        assert report["origin"] == origins.view_origin and ".localhost:" in report["origin"]

        # 1. The uploaded page is served from the files origin as an attachment under a sandbox CSP:
        # framed, it never ran (no message from it, the host page untouched, the hidden tool never called).
        assert report["downloadUrl"].startswith(origins.files_origin + "/files/file_")
        assert report["escaped"] == []
        assert page.title() != "pwned by an upload"
        assert not calls.exists() or calls.read_text() == ""
        status, headers, body = http_get(report["downloadUrl"])
        assert status == 200 and body.startswith(b"<!doctype html><title>evil")  # the honest upload is intact
        assert headers["Content-Disposition"].startswith("attachment;")
        assert headers["Content-Security-Policy"].startswith("sandbox;")
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert http_get(f"{origins.host_origin}/files/{report['downloadUrl'].rsplit('/', 1)[1]}")[0] == 404

        # 2. Another site than every loopback web app: it neither reads nor sends the neighbour's cookies,
        # and what it plants never reaches the neighbour.
        assert "neighbour" not in report["cookiesSeen"]
        from_widget = neighbour.seen["/record?from=widget"]
        assert "neighbour=secret" not in from_widget and "planted" not in from_widget
        user = page.context.new_page()
        for name in ("127.0.0.1", "localhost"):
            user.goto(f"http://{name}:{neighbour.port}/record?from={name}")
            assert "neighbour=secret" in neighbour.seen[f"/record?from={name}"]  # the user's own visit has it
            assert "planted" not in neighbour.seen[f"/record?from={name}"]

        # 3. The host's API is not the widget's to call, and the hidden tool stays hidden on the bridge too.
        assert report["/api/call"].startswith("blocked") and report["/api/runs"].startswith("blocked"), report
        assert report["hiddenViaBridge"] == "refused"

        # 5. The view cannot speak for the proxy: it was not replaced by the HTML it sent up.
        assert report["stillMe"] is True
    finally:
        page.context.close()
        server.close()


@pytest.mark.browser
@NEEDS_CHROMIUM
@pytest.mark.parametrize("profile", ["mcp-apps", "claude"])
def test_a_widgets_download_never_navigates_or_scripts_the_host_page(
    popup_blocking_browser, hostile_app, neighbour, profile
):
    app, _calls = hostile_app
    page, server, report = attack(popup_blocking_browser, app, neighbour, profile)
    try:
        assert report["downloadFile"] is True and "result" in report["download"], report
        assert page.url.split("?")[0] == server.page_url()  # the page keeps its settings in its query
        assert page.title() != "pwned by a download"
        assert "/elsewhere" not in neighbour.seen or len(page.context.pages) > 1  # blocked, or a tab of its own
        log = page.evaluate("window.appsdkPreview.log.map((e) => e.message)")
        assert any("javascript:" in line and "refused: only http and https" in line for line in log), log
    finally:
        page.context.close()
        server.close()


def test_an_uploads_name_and_type_cannot_add_headers(hostile_app):
    app, _calls = hostile_app
    with PreviewServer(prepare(Target(url=app.url), "attack", []), PreviewOptions()) as server:
        upload = {
            "fileName": "a.txt\r\nSet-Cookie: stolen=1",
            "mimeType": "text/plain\r\nAccess-Control-Allow-Origin: *",
            "data": base64.b64encode(b"plain bytes").decode(),
        }
        request = urllib.request.Request(
            server.host_origin + "/api/files",
            data=json.dumps(upload).encode(),
            headers={"Content-Type": "application/json", "Origin": server.host_origin},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            stored = json.loads(response.read())
        # A type that is not a plain type/subtype is not kept; the name loses its control characters.
        assert stored["mimeType"] == "application/octet-stream"
        assert "\r" not in stored["fileName"] and "\n" not in stored["fileName"]
        status, headers, body = http_get(stored["downloadUrl"])
        assert status == 200 and body == b"plain bytes"  # the honest bytes still come back
        assert "Set-Cookie" not in headers
        assert headers["Access-Control-Allow-Origin"] == server.origins.view_origin
        assert headers["Content-Type"] == "application/octet-stream"
        assert "\r" not in headers["Content-Disposition"] and "Set-Cookie" in headers["Content-Disposition"]


def test_a_route_that_fails_unexpectedly_is_answered_with_one_line_not_a_dropped_connection(hostile_app):
    """A bug in a route, or appsdk reinstalled under a running host (a lazy import fails): the page gets a
    500 with one line, the connection stays usable, the next request is answered as usual."""
    import http.client

    from appsdk_cli.host.handler import Request, get

    def broken(request: Request) -> None:
        raise ImportError("cannot import name 'gone' from 'appsdk_cli.render'")

    app, _calls = hostile_app
    session = prepare(Target(url=app.url), "attack", [])
    with PreviewServer(session, PreviewOptions()) as server:
        server.host_routes.routes.insert(0, get("/broken", broken))
        connection = http.client.HTTPConnection("127.0.0.1", int(server.host_origin.rsplit(":", 1)[1]), timeout=10)
        connection.request("GET", "/broken")
        answer = connection.getresponse()
        body = answer.read().decode()
        assert answer.status == 500
        assert body == "the host failed: ImportError: cannot import name 'gone' from 'appsdk_cli.render'"
        connection.request("GET", "/api/session")  # the same kept-alive connection
        again = connection.getresponse()
        assert again.status == 200 and json.loads(again.read())["tool"]["name"] == "attack"
        connection.close()
