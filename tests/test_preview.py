"""`appsdk preview` without a browser: the CSP it builds, the pages it serves, and how it fails.

The browser side is tests/test_preview_browser.py; here the real CLI runs against real MCP servers and
the preview server is spoken to over HTTP, as a browser would.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from conftest import RunningServer, appsdk, free_port, pid_alive
from preview_helpers import http_get

from appsdk_cli.host.csp import host_csp
from appsdk_cli.host.widget import inject_bootstrap

# --- the CSP -------------------------------------------------------------------------------------------


def directives(header: str) -> dict[str, str]:
    return {part.split(" ", 1)[0]: part.split(" ", 1)[1] for part in header.split("; ")}


def test_no_declared_csp_blocks_every_outside_origin():
    csp = host_csp({})
    assert not csp.declared
    found = directives(csp.header())
    assert found["default-src"] == "'none'"
    assert found["connect-src"] == "'none'" and found["frame-src"] == "'none'"
    assert found["script-src"] == "'self' 'unsafe-inline'"
    assert found["img-src"] == "'self' data: blob:"


def test_declared_domains_fill_their_directives_from_both_keys():
    meta = {
        "ui": {
            "csp": {
                "connectDomains": ["https://api.example.com"],
                "resourceDomains": ["https://cdn.example.com"],
                "frameDomains": ["https://www.youtube.com"],
                "baseUriDomains": ["https://base.example.com"],
            }
        },
        "openai/widgetCSP": {
            "connect_domains": ["https://api.example.com", "wss://live.example.com"],
            "resource_domains": ["https://cdn.example.com"],
            "frame_domains": ["https://www.youtube.com"],
            "redirect_domains": ["https://checkout.example.com"],
        },
    }
    csp = host_csp(meta)
    found = directives(csp.header())
    assert found["connect-src"] == "https://api.example.com wss://live.example.com"
    for name in ("script-src", "style-src", "img-src", "font-src", "media-src"):
        assert found[name].endswith("https://cdn.example.com"), name
    assert found["frame-src"] == "https://www.youtube.com"
    assert found["base-uri"] == "'self' https://base.example.com"
    assert "checkout.example.com" not in csp.header()  # redirect_domains is about openExternal, not CSP
    assert csp.disagreement and "connectDomains/connect_domains" in csp.disagreement
    assert "baseUriDomains/base_uri_domains" in csp.disagreement


def test_an_origin_that_would_inject_directives_is_dropped():
    csp = host_csp({"ui": {"csp": {"connectDomains": ["https://ok.example.com", "x; script-src *", 7]}}})
    assert directives(csp.header())["connect-src"] == "https://ok.example.com"


def test_bootstrap_goes_first_in_head_and_keeps_the_doctype_first():
    html = '<!DOCTYPE html><html><head><meta charset="utf-8"><script>widget()</script></head></html>'
    out = inject_bootstrap(html, {"parentOrigin": "http://127.0.0.1:1", "openai": True, "globals": {"x": "</script>"}})
    assert out.startswith("<!DOCTYPE html><html><head>")
    assert out.index('data-appsdk-preview="bootstrap"') < out.index("widget()")
    assert out.count("</script>") == 2  # the value's </script> is escaped and cannot end the bootstrap
    bare = inject_bootstrap("<p>hi</p>", {"parentOrigin": "", "openai": False, "globals": {}})
    assert bare.startswith("<script") and bare.endswith("<p>hi</p>")


# --- failures a user can cause: one line, the right exit code, no traceback ----------------------------


def one_line_error(result: subprocess.CompletedProcess, code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_unknown_tool_is_a_usage_error(counter_app):
    line = one_line_error(appsdk("preview", "show-countr", "--url", counter_app.url, "--no-open"), 2)
    assert "did you mean show-counter" in line


def test_arguments_are_checked_like_appsdk_call(counter_app):
    line = one_line_error(appsdk("preview", "show-counter", "start=many", "--url", counter_app.url, "--no-open"), 2)
    call = appsdk("call", "show-counter", "start=many", "--url", counter_app.url)
    assert line == call.stderr.strip()


def test_a_tool_without_a_widget_says_so(counter_app):
    line = one_line_error(appsdk("preview", "no-widget", "--url", counter_app.url, "--no-open"), 1)
    assert "declares no widget" in line and "appsdk call no-widget" in line


def test_unreachable_server(tmp_path: Path):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    line = one_line_error(appsdk("preview", "list-books", "--url", url, "--no-open", cwd=tmp_path), 1)
    assert "cannot reach the MCP server" in line


def test_bad_theme_is_a_usage_error(counter_app):
    result = appsdk("preview", "show-counter", "--url", counter_app.url, "--theme", "purple")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "purple" in result.stderr


def test_busy_port(counter_app):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = one_line_error(
            appsdk("preview", "show-counter", "--url", counter_app.url, "--no-open", "--port", str(port)), 1
        )
    assert f"127.0.0.1:{port}" in line and "--port" in line


# --- the running preview, over HTTP ----------------------------------------------------------------------


class Running:
    def __init__(self, process: subprocess.Popen, url: str) -> None:
        self.process = process
        self.url = url.rstrip("/")


def start_preview(server: RunningServer, *extra: str, env: dict[str, str] | None = None) -> Running:
    port = free_port()
    command = ["preview", "show-counter", "start=3", "--url", server.url, "--port", str(port), *extra]
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    deadline = time.monotonic() + 30
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise AssertionError(f"preview exited: {process.wait()} {process.stderr.read() if process.stderr else ''}")
        if line.startswith("http://"):
            assert line.strip() == f"http://127.0.0.1:{port}/"
            return Running(process, line.strip())
    raise AssertionError("the preview printed no URL")


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    return http_get(url, headers)


def post(url: str, body: dict, origin: str | None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if origin:
        headers["Origin"] = origin
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def stop_preview(running: Running) -> subprocess.CompletedProcess:
    running.process.send_signal(signal.SIGTERM)
    stdout, stderr = running.process.communicate(timeout=10)
    assert not pid_alive(running.process.pid)
    return subprocess.CompletedProcess(running.process.args, running.process.returncode, stdout, stderr)


def test_serves_the_host_page_and_the_widget_on_separate_origins_under_its_csp(counter_app):
    running = start_preview(counter_app, "--no-open", "--theme", "dark")
    try:
        status, headers, body = get(running.url + "/")
        assert status == 200 and b'id="widget"' in body
        session = json.loads(get(running.url + "/api/session")[2])
        proxy, view = session["sandboxOrigin"], session["viewOrigin"]
        # The widget's own site: names under .localhost, another site than the host page's 127.0.0.1.
        assert re.fullmatch(r"http://sandbox-[0-9a-f]{12}\.localhost:\d+", proxy)
        assert view == proxy.replace("//sandbox-", "//view-")
        page_csp = directives(headers["Content-Security-Policy"])
        assert page_csp["frame-src"] == proxy
        assert page_csp["frame-ancestors"] == f"{running.url} {running.url.replace('127.0.0.1', 'localhost')}"
        assert session["arguments"] == {"start": 3}
        assert session["result"]["structuredContent"] == {"count": 3, "label": "clicks"}
        assert session["widgetTools"] == {
            "mcp-apps": ["increment", "no-widget", "note", "show-counter", "show-tall"],
            "openai": ["increment"],
        }
        assert session["sandbox"] == "allow-scripts allow-same-origin allow-forms"

        status, _, body = get(running.url + "/api/widget?theme=dark&displayMode=pip&maxHeight=480")
        assert status == 200
        document = json.loads(body)
        csp = directives(document["csp"])
        # The declared origin; ChatGPT's CDN allowance (the default profile's); and (window.openai's file APIs)
        # the host's file store on its own origin, nothing of the host.
        cdns = "https://cdn.jsdelivr.net https://unpkg.com"
        files = proxy.replace("//sandbox-", "//files-") + "/files/"
        assert csp["connect-src"] == f"http://127.0.0.1:9 {files}"
        assert csp["img-src"] == f"'self' data: blob: http://127.0.0.1:9 {cdns} {files}"
        assert csp["script-src"] == f"'self' 'unsafe-inline' http://127.0.0.1:9 {cdns}"
        bridge_only = directives(json.loads(get(running.url + "/api/widget?openai=0&cdn=0")[2])["csp"])
        assert bridge_only["connect-src"] == "http://127.0.0.1:9"
        assert bridge_only["img-src"] == "'self' data: blob: http://127.0.0.1:9"
        html = document["html"]
        assert html.index('data-appsdk-preview="bootstrap"') < html.index("window.openai)")
        assert '"toolOutput": {"count": 3, "label": "clicks"}' in html
        assert '"theme": "dark"' in html and '"displayMode": "pip"' in html and '"maxHeight": 480' in html
        # The view origin serves that same document by its token, under exactly its CSP.
        status, view_headers, served = get(f"{view}/view?document={document['document']}")
        assert status == 200 and view_headers["Content-Security-Policy"] == document["csp"]
        assert served.decode() == html
        assert get(f"{view}/view?document=guessed")[0] == 404
        # The sandbox proxy: framed only by our host pages, its own script only.
        status, proxy_headers, _ = get(f"{proxy}/proxy?document={document['document']}")
        proxy_csp = directives(proxy_headers["Content-Security-Policy"])
        assert status == 200 and proxy_csp["script-src"] == "'self'" and proxy_csp["frame-src"] == view
        assert proxy_csp["frame-ancestors"] == page_csp["frame-ancestors"]
        # The sandbox's names serve no host API, and the sandbox socket answers no other name.
        assert get(view + "/api/session")[0] == 404 and get(proxy + "/api/session")[0] == 404
        sandbox_port = proxy.rsplit(":", 1)[1]
        assert get(f"{view}/view", {"Host": f"view-000000000000.localhost:{sandbox_port}"})[0] == 421
        assert get(f"{view}/view", {"Host": f"evil.example:{sandbox_port}"})[0] == 421
        # DNS rebinding: another name for our address is refused.
        assert get(running.url + "/", {"Host": "evil.example:80"})[0] == 421
    finally:
        result = stop_preview(running)
    assert result.returncode == 0 and "Preview stopped" in result.stderr


def test_only_the_host_page_may_call_tools_and_only_widget_callable_ones(counter_app):
    running = start_preview(counter_app, "--no-open")
    try:
        call = {"name": "increment", "arguments": {"count": 1, "by": 2}, "bridge": "openai"}
        assert post(running.url + "/api/call", call, origin="http://evil.example")[0] == 403
        assert post(running.url + "/api/call", call, origin=None)[0] == 403
        status, answer = post(running.url + "/api/call", call, origin=running.url)
        assert status == 200 and answer["result"]["structuredContent"] == {"count": 3}
        for bridge in ("mcp-apps", "openai"):
            status, answer = post(running.url + "/api/call", {"name": "secret", "bridge": bridge}, origin=running.url)
            assert status == 403 and "may not call 'secret'" in answer["error"]["message"]
        # No visibility declared: the standard bridge may call it (default ["model", "app"]); window.openai may not.
        status, answer = post(running.url + "/api/call", {"name": "note", "bridge": "mcp-apps"}, origin=running.url)
        assert status == 200 and answer["result"]["structuredContent"] == {"noted": "hi"}
        status, answer = post(running.url + "/api/call", {"name": "note", "bridge": "openai"}, origin=running.url)
        assert status == 403 and "openai/widgetAccessible" in answer["error"]["message"]
        assert post(running.url + "/api/call", {"name": "note"}, origin=running.url)[0] == 400

        # Widget state is kept by the preview server, so the next widget load (a page reload) gets it.
        assert post(running.url + "/api/widget-state", {"state": {"n": 1}}, origin=running.url)[0] == 200
        assert '"widgetState": {"n": 1}' in json.loads(get(running.url + "/api/widget")[2])["html"]

        # What the page logs reaches the terminal.
        entry = {"kind": "csp", "level": "error", "message": "CSP blocked http://x by img-src"}
        assert post(running.url + "/api/log", entry, origin=running.url)[0] == 200
    finally:
        result = stop_preview(running)
    assert "csp: CSP blocked http://x by img-src" in result.stderr


def test_opens_the_default_browser_unless_no_open(counter_app, tmp_path: Path):
    opened = tmp_path / "opened.txt"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    fake.chmod(0o755)
    # Python's webbrowser honours $BROWSER: our stand-in records the URL instead of opening a window.
    running = start_preview(counter_app, env={"BROWSER": str(fake)})
    try:
        deadline = time.monotonic() + 10
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert opened.read_text().strip() == running.url + "/"
    finally:
        stop_preview(running)


def test_only_resource_listings_are_forwarded_and_only_from_the_host_page(counter_app):
    running = start_preview(counter_app, "--no-open")
    try:
        listing = {"method": "resources/list", "params": {}}
        assert post(running.url + "/api/forward", listing, origin="http://evil.example")[0] == 403
        status, answer = post(running.url + "/api/forward", listing, origin=running.url)
        assert status == 200
        assert "ui://widget/counter.html" in [r["uri"] for r in answer["result"]["resources"]]
        status, answer = post(running.url + "/api/forward", {"method": "tools/list"}, origin=running.url)
        assert status == 403 and "does not forward tools/list" in answer["error"]["message"]
        session = json.loads(get(running.url + "/api/session")[2])
        # The tool as tools/list gave it (the bridge's toolInfo.tool), and the CSP domains the host applied.
        assert session["toolDefinition"]["name"] == "show-counter" and "inputSchema" in session["toolDefinition"]
        assert session["template"]["declaredCsp"] == {
            "connectDomains": ["http://127.0.0.1:9"],
            "resourceDomains": ["http://127.0.0.1:9"],
        }
    finally:
        stop_preview(running)


def test_static_files_are_served_by_path_under_their_folder_and_never_outside_it(tmp_path: Path):
    from appsdk_cli.host.static import STATIC_TYPES, static_file

    (tmp_path / "hostjs").mkdir()
    (tmp_path / "hostjs" / "main.js").write_text("export {};")
    (tmp_path / "page.html").write_text("<p>")
    (tmp_path / "notes.txt").write_text("not served")
    (tmp_path / ".secret.js").write_text("hidden")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.js"
    outside.write_text("outside")
    (tmp_path / "link.js").symlink_to(outside)
    assert static_file(tmp_path, "hostjs/main.js") == (tmp_path / "hostjs" / "main.js").resolve()
    assert static_file(tmp_path, "page.html") == (tmp_path / "page.html").resolve()
    for name in (
        "notes.txt",
        ".secret.js",
        "hostjs",
        "../" + outside.name,
        "hostjs/../page.html",
        "/etc/passwd",
        "hostjs//main.js",
        "hostjs\\main.js",
        "link.js",
        "missing.js",
        "",
    ):
        assert static_file(tmp_path, name) is None, name
    assert STATIC_TYPES[".js"].startswith("text/javascript") and STATIC_TYPES[".mjs"] == STATIC_TYPES[".js"]


def test_the_host_pages_scripts_are_kept_by_the_browser_under_a_version_and_the_page_never(counter_app):
    """A fresh browser context per test reloads the host page: its modules come under /v/VERSION/ (a digest of
    the folder) cached for good, all preloaded at once; the page itself, an old version and an unversioned
    path are never cached, and every answer keeps nosniff and the page its CSP."""
    from appsdk_cli.host.static import STATIC, static_version

    version = static_version(STATIC)
    running = start_preview(counter_app, "--no-open")
    try:
        status, headers, body = get(running.url + "/")
        page = body.decode()
        assert status == 200 and headers["Cache-Control"] == "no-store" and "Content-Security-Policy" in headers
        assert f'<script type="module" src="/v/{version}/host/main.js"></script>' in page
        assert f'<link rel="stylesheet" href="/v/{version}/host.css">' in page
        modules = {p.name for p in (STATIC / "host").glob("*.js")} - {"main.js"}
        preloaded = set(re.findall(rf'<link rel="modulepreload" href="/v/{version}/host/([a-z]+\.js)">', page))
        assert preloaded == modules and page.index("modulepreload") < page.index('type="module"')
        status, headers, body = get(f"{running.url}/v/{version}/host/main.js")
        assert status == 200 and body == (STATIC / "host" / "main.js").read_bytes()
        assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["Content-Type"].startswith("text/javascript")
        for path in ("/host/main.js", f"/v/{'0' * 16}/host/main.js"):  # unversioned, or a page of an older appsdk
            status, headers, body = get(running.url + path)
            assert status == 200 and headers["Cache-Control"] == "no-store", path
        status, headers, _ = get(f"{running.url}/v/{version}/host.html")  # a page is a page under any path
        assert headers["Cache-Control"] == "no-store" and "Content-Security-Policy" in headers
        for path in (f"/v/{version}/../host/main.js", f"/v/{version}/.secret.js", f"/v/{version}/host/missing.js"):
            assert get(running.url + path)[0] == 404, path
    finally:
        stop_preview(running)


# --- Chromium's sandbox (--screenshot) -------------------------------------------------------------------


def test_chromium_keeps_its_sandbox_except_as_root():
    """A hostile widget renders in the screenshot's Chromium: its sandbox stays on for every user but root,
    where Chromium cannot start with it; only then is --no-sandbox passed, with the reason to say once."""
    from appsdk_cli.browser.chromium import chromium_sandbox, launch_options

    for user in (1000, 65534, None):  # an ordinary user, nobody, a system without user ids
        sandbox = chromium_sandbox(user)
        assert sandbox.enabled and not sandbox.reason
        options = launch_options("/usr/bin/chromium", sandbox)
        # Playwright adds --no-sandbox itself unless chromium_sandbox is True: both must say "sandboxed".
        assert options["chromium_sandbox"] is True and "--no-sandbox" not in options["args"]
    root = chromium_sandbox(0)
    assert not root.enabled and root.reason == "appsdk runs as root here"
    options = launch_options("/usr/bin/chromium", root)
    assert options["chromium_sandbox"] is False and "--no-sandbox" in options["args"]
