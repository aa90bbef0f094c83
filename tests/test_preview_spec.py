"""`appsdk preview` is a spec-exact MCP Apps host, and its screenshots tell the truth.

Every message the host page posts to a view, across a whole lifecycle (ui/initialize, tool-input,
tool-result, host-context-changed, display-mode requests, proxied calls, errors, ui/resource-teardown),
with window.openai on and off, is judged by the published SDK's own zod schemas (see bridge_capture.py).
The view is tests/fixtures/sdk_app: written with the official SDK's `App`, loaded from an absolute URL
as production widgets are. Then `--screenshot`'s verdict on widgets with one fault each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge_capture import BridgeRecorder, coverage, failures, validate
from conftest import FIXTURES, RunningServer, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, NEEDS_NODE_FOR_SCHEMAS, widget_view

from appsdk_cli.browser.capture import jpeg_size, png_size
from appsdk_cli.client import connect
from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = [NEEDS_CHROMIUM, NEEDS_NODE_FOR_SCHEMAS]


@pytest.fixture(scope="module")
def sdk_app(node_clients) -> Iterator[RunningServer]:
    port, assets = free_port(), free_port()
    server = serve([sys.executable, str(FIXTURES / "sdk_app" / "server.py"), str(port), str(assets)], port)
    yield server
    stop(server.process)


def widget_frame(page):
    return next(f for f in page.frames if "/view?" in f.url)


def settle(page) -> None:
    page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled", timeout=20_000)


@pytest.mark.parametrize("openai", ["1", "0"], ids=["window.openai", "bridge-only"])
def test_every_host_message_matches_the_sdk_schemas_across_the_lifecycle(browser, sdk_app, openai):
    preview = PreviewServer(prepare(Target(url=sdk_app.url), "forecast", ["city=Bergen"]), PreviewOptions()).start()
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        recorder = BridgeRecorder(context)
        page = context.new_page()
        page.goto(preview.page_url(openai=openai))
        widget = widget_view(page)
        widget.locator("#steps", has_text="done").wait_for(timeout=20_000)
        # The view got its data from the host: the SDK's App accepted ui/initialize and the notifications.
        assert widget.locator("#city").text_content() == "Bergen"
        assert widget.locator("#forecast").text_content() == "Sunny in Bergen, 21 °C"
        steps = widget.locator("#log li").all_text_contents()
        assert "toolInfo.tool.name = forecast" in steps
        assert any(s.startswith("tools/call echo: ok") for s in steps), steps
        assert any(s.startswith("tools/call model-only: refused") for s in steps), steps
        assert any(s.startswith("resources/list: ok") and "ui://sdk/lifecycle.html" in s for s in steps), steps
        # pip is not among the modes the view declared: the host stays where it was (fullscreen) and says so.
        assert 'display pip: ok {"mode":"fullscreen"}' in steps
        assert widget_eval_openai(page) == (openai == "1")
        if openai == "1":
            assert any(s.startswith("openai callTool: ok") for s in steps), steps

        page.select_option("#theme", "dark")  # ui/notifications/host-context-changed
        widget.locator("#theme", has_text="dark").wait_for()
        # ui/resource-teardown, answered before the view goes; the tool runs again; then a second lifecycle.
        page.click("#reload")
        page.wait_for_function("() => window.appsdkPreview.log.some((e) => e.message.includes('ran again'))")
        widget_view(page).locator("#steps", has_text="done").wait_for(timeout=20_000)
        log = page.evaluate("() => window.appsdkPreview.log.map((e) => e.message)")
        assert "ui/resource-teardown answered" in log
        assert log.index("ui/resource-teardown answered") < log.index(next(m for m in log if "ran again" in m))
        # The host's own controls: locale and display mode reach the view as host-context-changed; the
        # mode the view did not declare cannot be picked.
        page.fill("#locale", "de-DE")
        page.dispatch_event("#locale", "change")
        assert page.locator("#display-mode option[value=pip]").is_disabled()
        page.select_option("#display-mode", "fullscreen")
        widget = widget_view(page)
        widget.locator("#mode", has_text="fullscreen").wait_for()
        page.select_option("#display-mode", "inline")
        widget.locator("#mode", has_text="inline").wait_for()
        # The view asks to close: the host tears it down (and waits for the answer) before removing it.
        # Through the #widget frame the steps above read, not the first frame whose URL looks like it.
        widget.locator("body").evaluate("() => window.probeApp.requestTeardown()")
        page.wait_for_selector("p#widget.closed")
        log = page.evaluate("() => window.appsdkPreview.log.map((e) => e.message)")
        assert log.count("ui/resource-teardown answered") == 2, log
    finally:
        context.close()
        preview.close()

    results = validate(recorder.records)
    assert not failures(results), failures(results)
    seen = coverage(results)
    for expected in [
        ("result", "ui/initialize"),
        ("notification", "ui/notifications/tool-input"),
        ("notification", "ui/notifications/tool-result"),
        ("notification", "ui/notifications/host-context-changed"),
        ("request", "ui/resource-teardown"),
        ("result", "tools/call"),
        ("error", "tools/call"),
        ("result", "resources/read"),
        ("result", "resources/list"),
        ("result", "ui/request-display-mode"),
        ("result", "ui/message"),
        ("result", "ui/open-link"),
        ("result", "ui/update-model-context"),
        ("error", "ui/download-file"),
    ]:
        assert seen[expected], (expected, seen)
    # Nothing but the bridge's JSON-RPC on the window: window.openai's traffic has a channel of its own.
    assert all(isinstance(r["data"], dict) and r["data"].get("jsonrpc") == "2.0" for r in recorder.host_to_view())
    # The sandbox proxy's channel (MCP Apps "Sandbox proxy"): per view, the proxy says it is ready and the
    # host then hands it the resource, once each, in that order; none of it ever reaches the view.
    sandbox = [
        (r["dir"], r["data"]["method"]) for r in recorder.records if r["dir"] in ("host→sandbox", "sandbox→host")
    ]
    ready = ("sandbox→host", "ui/notifications/sandbox-proxy-ready")
    resource = ("host→sandbox", "ui/notifications/sandbox-resource-ready")
    assert sandbox == [ready, resource, ready, resource], sandbox  # two views: before and after the reload
    assert seen[("notification", "ui/notifications/sandbox-resource-ready")] == 2
    handed = [r["data"]["params"] for r in recorder.records if r["dir"] == "host→sandbox"]
    assert all('data-appsdk-preview="bootstrap"' in p["html"] and p["sandbox"] for p in handed)
    assert not [r for r in recorder.host_to_view() if "sandbox-" in str(r["data"].get("method", ""))]
    # Two views (before and after the reload): each gets tool-input and tool-result exactly once, after
    # it said it was initialized.
    assert seen[("notification", "ui/notifications/tool-input")] == 2
    assert seen[("notification", "ui/notifications/tool-result")] == 2
    assert seen[("request", "ui/resource-teardown")] == 2
    changes = [r["data"]["params"] for r in recorder.host_to_view() if "host-context-changed" in str(r["data"])]
    assert {"theme", "styles", "locale", "displayMode", "containerDimensions"} <= {k for c in changes for k in c}
    ordered = [(r["dir"], r["data"].get("method")) for r in sorted(recorder.records, key=lambda r: r["at"])]
    starts = [i for i, step in enumerate(ordered) if step == ("view→host", "ui/notifications/initialized")]
    assert len(starts) == 2
    for start in starts:
        sent = [method for direction, method in ordered[start:] if direction == "host→view" and method]
        assert sent[:2] == ["ui/notifications/tool-input", "ui/notifications/tool-result"], sent
    before = [method for direction, method in ordered[: starts[0]] if direction == "host→view" and method]
    assert before == [], before  # no notification reaches a view before it is initialized


# In the sandbox proxy, ahead of the proxy's own handler (an init script's listener is the first): when
# the host page asks for a new view, a message the old view sent just before it was replaced is still on
# its way to the host page. The proxy posts what the old view sent as it forwards it, so one posted here,
# ahead of the proxy's answer, is exactly that.
LATE_FROM_THE_OLD_VIEW = """if (location.pathname === "/proxy") window.addEventListener("message", (event) => {
  const own = event.data && event.data.__appsdk;
  if (event.source !== window.parent || !own || own.type !== "replace-view") return;
  const late = [
    { jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} },
    { jsonrpc: "2.0", method: "notifications/message", params: { level: "error", data: "late from the old view" } },
  ];
  for (const message of late) window.parent.postMessage(message, event.origin);
});"""


def test_a_re_render_keeps_the_proxy_frame_and_gives_the_view_a_fresh_document_and_handshake(browser, sdk_app):
    preview = PreviewServer(prepare(Target(url=sdk_app.url), "forecast", ["city=Bergen"]), PreviewOptions()).start()
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        recorder = BridgeRecorder(context)
        context.add_init_script(LATE_FROM_THE_OLD_VIEW)
        page = context.new_page()
        views: list[dict[str, str]] = []
        page.on("response", lambda r: views.append({"url": r.url, **r.headers}) if "/view?" in r.url else None)
        page.goto(preview.page_url())
        widget_view(page).locator("#steps", has_text="done").wait_for(timeout=20_000)
        proxy = page.locator("iframe#widget").element_handle().content_frame()
        proxy.evaluate("() => (window.keptProxy = 'the same proxy document')")
        widget_frame(page).evaluate("() => (window.oldView = true)")
        before = len(recorder.records)

        page.evaluate("() => window.appsdkPreview.reloadTemplate()")
        widget_view(page).locator("#steps", has_text="done").wait_for(timeout=20_000)
        settle(page)

        # The proxy frame stayed; the view in it is a new document on the view origin, under its CSP.
        assert page.locator("iframe#widget").count() == 1
        assert page.locator("iframe#widget").element_handle().content_frame().evaluate("() => window.keptProxy") == (
            "the same proxy document"
        )
        view = widget_frame(page)
        assert view.evaluate("() => window.oldView === undefined")
        session = page.evaluate("() => fetch('/api/session').then((r) => r.json())")
        assert len(views) == 2 and views[0]["url"] != views[1]["url"]  # another document token
        assert all(v["url"].startswith(session["viewOrigin"] + "/view?") for v in views), views
        assert all("content-security-policy" in v for v in views), views
        # The bridge handshake again, in order: nothing reaches the new view before it is initialized,
        # then tool-input and tool-result once each; every message is what the SDK's schemas accept.
        after = recorder.records[before:]
        results = validate(recorder.records)
        assert not failures(results), failures(results)
        ordered = [(r["dir"], r["data"].get("method")) for r in sorted(after, key=lambda r: r["at"])]
        ordered = [step for step in ordered if step[0] in ("host→view", "view→host")]
        start = ordered.index(("view→host", "ui/notifications/initialized"))
        sent = [method for direction, method in ordered if direction == "host→view" and method]
        early = [method for direction, method in ordered[:start] if direction == "host→view" and method]
        assert early == ["ui/resource-teardown"], early  # to the old view; nothing to the new one yet
        assert sent[1:3] == ["ui/notifications/tool-input", "ui/notifications/tool-result"], sent
        # What the old view sent on its way out never reached the host page as the new view's.
        log = page.evaluate("() => window.appsdkPreview.log.map((e) => e.message)")
        assert not [line for line in log if "late from the old view" in line], log
        assert page.evaluate("() => window.appsdkPreview.problems()") == []
    finally:
        context.close()
        preview.close()


def widget_eval_openai(page) -> bool:
    return widget_frame(page).evaluate("() => typeof window.openai === 'object'")


def test_tool_info_is_the_tool_exactly_as_tools_list_gave_it(browser, sdk_app):
    with connect(sdk_app.url) as client:
        client.initialize()
        listed = next(t for t in client.list_tools() if t["name"] == "forecast")
    preview = PreviewServer(prepare(Target(url=sdk_app.url), "forecast", []), PreviewOptions()).start()
    context = browser.new_context()
    try:
        recorder = BridgeRecorder(context)
        page = context.new_page()
        page.goto(preview.page_url(openai="0"))
        widget_view(page).locator("#steps", has_text="done").wait_for(timeout=20_000)
    finally:
        context.close()
        preview.close()
    answer = next(r["data"]["result"] for r in recorder.host_to_view() if "hostInfo" in (r["data"].get("result") or {}))
    assert answer["hostContext"]["toolInfo"] == {"tool": listed}
    assert "inputSchema" in listed
    assert answer["hostCapabilities"]["sandbox"]["csp"]["resourceDomains"], answer["hostCapabilities"]


# --- --screenshot's verdict ------------------------------------------------------------------------------


def shoot(server: RunningServer, tool: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "preview", tool, "--url", server.url, "--screenshot", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
    )


FAULTS = {
    "show-throws": "Uncaught Error: boom in the widget",
    "show-missing-script": "script failed to load: http://view-",
    "show-missing-style": "stylesheet failed to load: http://view-",
    "show-bad-import": "module script failed to load: http://view-",
    "show-never-initialized": "sent ui/initialize but never completed it",
    "show-static": "never read its data",
}


@pytest.mark.parametrize("tool", list(FAULTS))
def test_a_broken_widget_fails_the_screenshot_but_the_image_is_written(sdk_app, tool, tmp_path: Path):
    out = tmp_path / "shot.png"
    result = shoot(sdk_app, tool, out)
    assert result.returncode == 1, result.stdout + result.stderr
    assert FAULTS[tool] in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: the widget failed in the preview")
    assert "--allow-errors" in result.stderr
    assert png_size(out.read_bytes())[0] == 768  # the image is still written
    if tool in ("show-missing-script", "show-bad-import"):
        assert "(HTTP 404)" in result.stderr


def test_allow_errors_writes_the_image_and_exits_0(sdk_app, tmp_path: Path):
    out = tmp_path / "shot.png"
    result = shoot(sdk_app, "show-throws", out, "--allow-errors")
    assert result.returncode == 0, result.stderr
    assert "boom in the widget" in result.stderr  # still reported
    assert out.is_file()


def test_a_healthy_widget_and_the_sdk_widget_pass(sdk_app, tmp_path: Path):
    fine = shoot(sdk_app, "show-fine", tmp_path / "fine.png")
    assert fine.returncode == 0, fine.stderr
    assert "did not render cleanly" not in fine.stderr
    sdk = shoot(sdk_app, "forecast", tmp_path / "sdk.png", "--bridge-only")
    assert sdk.returncode == 0, sdk.stderr


@pytest.mark.parametrize("name", ["shot.jpg", "shot.JPEG"])
def test_jpeg_by_extension(sdk_app, tmp_path: Path, name):
    out = tmp_path / name
    result = shoot(sdk_app, "show-fine", out)
    assert result.returncode == 0, result.stderr
    data = out.read_bytes()
    assert data[:2] == b"\xff\xd8"
    width, height = jpeg_size(data)
    assert width == 768 and height > 20
    assert f"{width}×{height} px JPEG" in result.stdout.replace("\n", "")


@pytest.mark.parametrize("name", ["shot", "shot.gif", "shot.png.txt"])
def test_any_other_image_name_is_one_line_and_exit_2(sdk_app, tmp_path: Path, name):
    result = shoot(sdk_app, "show-fine", tmp_path / name)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and ".png, .jpg or .jpeg" in lines[0], result.stderr
    assert not (tmp_path / name).exists()


def test_allow_errors_without_screenshot_is_a_usage_error(sdk_app):
    result = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "preview", "show-fine", "--url", sdk_app.url, "--allow-errors"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "--allow-errors goes with --screenshot" in result.stderr


def test_validator_rejects_what_the_old_host_sent(node_clients):
    """The judge itself: the ui/initialize answer appsdk sent before (toolInfo.tool without inputSchema,
    a title of null) and a window.openai message on the window are both refused."""
    old_answer = {
        "protocolVersion": "2026-01-26",
        "hostInfo": {"name": "appsdk-preview", "version": "0"},
        "hostCapabilities": {},
        "hostContext": {"toolInfo": {"tool": {"name": "t", "title": None, "description": None}}},
    }
    records = [
        {"dir": "view→host", "at": 1, "data": {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}}},
        {"dir": "host→view", "at": 2, "data": {"jsonrpc": "2.0", "id": 1, "result": old_answer}},
        {"dir": "host→view", "at": 3, "data": {"__appsdk": {"type": "globals", "globals": {}}}},
    ]
    results = validate(records)
    assert not results[0]["ok"] and any("inputSchema" in issue for issue in results[0]["issues"]), results[0]
    assert not results[1]["ok"] and results[1]["kind"] == "not JSON-RPC"
    assert json.dumps(results)  # plain JSON all the way
