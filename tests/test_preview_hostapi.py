"""The host's whole widget API, in Chromium against a real server: profiles, devices, files, the lifecycle
commands the workbench drives (window.appsdkPreview), display-mode exits, widget state, model and CSP events.

The view is tests/fixtures/hostapi_app: written with the official SDK's `App`. Every host→view message of
every test here is judged by the SDK's own zod schemas (bridge_capture.py), as in test_preview_spec.py.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge_capture import BridgeRecorder, coverage, failures, validate
from conftest import RunningServer, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, NEEDS_NODE_FOR_SCHEMAS, http_get, view_frame, widget_view

from appsdk_cli.connection import Target
from appsdk_cli.host.files import FileStore, file_arguments
from appsdk_cli.host.profiles import PROFILES
from appsdk_cli.host.run import Run
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

FIXTURE = Path(__file__).parent / "fixtures" / "hostapi_app" / "server.py"
pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = [NEEDS_CHROMIUM, NEEDS_NODE_FOR_SCHEMAS]


@pytest.fixture(scope="module")
def probe_app(node_clients) -> Iterator[RunningServer]:
    port, assets = free_port(), free_port()
    server = serve([sys.executable, str(FIXTURE), str(port), str(assets)], port)
    yield server
    stop(server.process)


class Host:
    """One preview of the probe in one browser context, with every bridge message recorded."""

    def __init__(self, browser, app: RunningServer, runs: dict[str, str] | None = None, **query: str) -> None:
        self.closed = False
        self.server = PreviewServer(prepare(Target(url=app.url), "probe", ["city=Bergen"]), PreviewOptions()).start()
        for run_id, city in (runs or {}).items():
            self.server.add_run(Run.shown(run_id, prepare(Target(url=app.url), "probe", [f"city={city}"])))
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.recorder = BridgeRecorder(self.context)
        self.page = self.context.new_page()
        self.page.goto(self.server.page_url(**query))
        widget_view(self.page).locator("#status", has_text="ready").wait_for(timeout=20_000)

    def widget(self):
        # The frame the host page shows now (#widget), not the first whose URL matches.
        return view_frame(self.page)

    def probe(self, expression: str, arg=None):
        return self.widget().evaluate(f"(arg) => {expression}", arg)

    def events(self, kind: str) -> list[dict]:
        return [e for e in self.probe("window.probe.events") if e["type"] == kind]

    def wait_event(self, kind: str, count: int = 1) -> None:
        self.widget().wait_for_function(
            "([kind, count]) => window.probe.events.filter((e) => e.type === kind).length >= count",
            arg=[kind, count],
            timeout=10_000,
        )

    def host(self, expression: str, arg=None):
        return self.page.evaluate(f"(arg) => {expression}", arg)

    def close(self) -> list[dict]:
        self.closed = True
        self.context.close()
        self.server.close()
        results = validate(self.recorder.records)
        assert not failures(results), failures(results)
        return results


@pytest.fixture
def open_host(browser, probe_app) -> Iterator:
    opened: list[Host] = []

    def opener(runs: dict[str, str] | None = None, **query: str) -> Host:
        host = Host(browser, probe_app, runs, **query)
        opened.append(host)
        return host

    yield opener
    for host in opened:
        if not host.closed:
            host.context.close()
            host.server.close()


@pytest.mark.parametrize("name", list(PROFILES))
def test_each_profile_answers_ui_initialize_as_that_host_within_the_spec(open_host, name):
    host = open_host(profile=name)
    profile = PROFILES[name]
    assert host.probe("window.probe.hostInfo()") == profile.host_info
    capabilities = host.probe("window.probe.hostCapabilities()")
    assert ("downloadFile" in capabilities) == ("downloadFile" in profile.host_capabilities)
    assert host.page.locator("#widget").get_attribute("sandbox") == profile.sandbox
    context = host.probe("window.probe.hostContext()")
    assert context["availableDisplayModes"] == list(profile.display_modes)
    assert context["styles"]["variables"] == profile.styles["light"]
    assert len(context["styles"]["variables"]) == 76  # every McpUiStyleVariableKey
    assert context["platform"] == "web" and context["deviceCapabilities"] == {"touch": False, "hover": True}
    if profile.inline_container:
        assert context["containerDimensions"] == profile.inline_container
    has_openai = host.probe("typeof window.openai === 'object'")
    assert has_openai == profile.openai
    download = host.probe("window.probe.download()")
    if "downloadFile" in profile.host_capabilities:
        assert download == {"ok": {}}
        host.page.wait_for_function("() => appsdkPreview.log.some((e) => e.message.includes('report.txt (11 bytes)'))")
    else:
        assert "downloadFile" in download["error"]
    seen = coverage(host.close())
    assert seen[("result", "ui/initialize")] == 1
    assert seen[("result" if "downloadFile" in profile.host_capabilities else "error", "ui/download-file")] == 1


def test_the_chatgpt_profile_offers_its_cdns_as_a_toggle(open_host, probe_app):
    host = open_host(profile="chatgpt")
    csp_of = {}
    for cdn in ("1", "0"):
        url = f"{host.server.url}api/widget?profile=chatgpt&cdn={cdn}"
        csp_of[cdn] = json.loads(urllib.request.urlopen(url).read())["csp"]
    assert "https://cdn.jsdelivr.net https://unpkg.com" in csp_of["1"]
    assert "jsdelivr" not in csp_of["0"] and "unpkg" not in csp_of["0"]
    generic = json.loads(urllib.request.urlopen(f"{host.server.url}api/widget?profile=mcp-apps").read())["csp"]
    assert "jsdelivr" not in generic
    first = view_frame(host.page).url
    host.page.uncheck("#cdn")  # a new view (another document, in the same proxy), under the CSP without the CDNs
    deadline = time.monotonic() + 30
    while view_frame(host.page).url == first and time.monotonic() < deadline:
        host.page.wait_for_timeout(50)
    assert view_frame(host.page).url != first
    widget_view(host.page).locator("#status", has_text="ready").wait_for(timeout=20_000)
    host.close()


def test_a_mobile_device_has_touch_safe_areas_and_pip_becomes_fullscreen(open_host):
    host = open_host(device="mobile")
    context = host.probe("window.probe.hostContext()")
    assert context["platform"] == "mobile"
    assert context["deviceCapabilities"] == {"touch": True, "hover": False}
    assert context["safeAreaInsets"] == {"top": 47, "right": 0, "bottom": 34, "left": 0}
    assert host.probe("window.openai.userAgent") == {
        "device": {"type": "mobile"},
        "capabilities": {"hover": False, "touch": True},
    }
    assert host.probe("window.openai.safeArea.insets.bottom") == 34
    assert host.page.locator("#widget").bounding_box()["width"] <= 390
    assert host.probe("window.probe.requestMode('pip')") == {"ok": {"mode": "fullscreen"}}
    assert host.page.locator("#stage").get_attribute("data-mode") == "fullscreen"
    # Back on a desktop, live: the view hears about it.
    host.page.select_option("#device", "desktop")
    host.widget().wait_for_function(
        "() => window.probe.events.some((e) => e.type === 'context' && e.keys.includes('deviceCapabilities'))"
    )
    assert host.probe("window.openai.userAgent.device.type") == "desktop"
    host.close()


def test_fullscreen_is_left_by_the_control_and_by_escape_from_the_host_or_the_widget(open_host):
    host = open_host(profile="mcp-apps")
    mode = widget_view(host.page).locator("#mode")
    for leave in ("control", "escape-host", "escape-widget"):
        assert host.probe("window.probe.requestMode('fullscreen')") == {"ok": {"mode": "fullscreen"}}
        mode.filter(has_text="fullscreen").wait_for()
        control = host.page.locator("#exit-mode")
        assert control.is_visible() and "Exit fullscreen" in control.inner_text()
        if leave == "control":
            control.click()
        elif leave == "escape-host":
            host.page.locator("#exit-mode").focus()
            host.page.keyboard.press("Escape")
        else:
            widget_view(host.page).locator("h1").click()  # the focus inside the widget
            host.page.keyboard.press("Escape")
        mode.filter(has_text="inline").wait_for()
        assert host.page.locator("#stage").get_attribute("data-mode") == "inline"
        assert not control.is_visible()
    log = host.host("appsdkPreview.log.map((e) => e.message)")
    assert "display mode → inline (exit control)" in log
    assert log.count("display mode → inline (Escape)") == 2
    host.close()


def test_a_file_goes_up_comes_back_by_its_download_url_and_reaches_a_file_params_tool(open_host):
    host = open_host(profile="chatgpt")
    trip = host.probe(
        "window.probe.fileRoundTrip(arg.text, arg.name)", {"text": "bytes in the store ✓", "name": "note.txt"}
    )
    assert trip["fileId"].startswith("file_")
    # The widget reads its uploads from the files origin; the MCP server gets them on 127.0.0.1, which
    # its resolver knows (a *.localhost name is the browser's).
    origins = host.server.origins
    assert trip["downloadUrl"] == f"{origins.files_origin}/files/{trip['fileId']}"
    assert trip["fetched"] == "bytes in the store ✓"  # the widget fetched its own upload under its CSP
    expected = {
        "download_url": f"{origins.server_files_origin}/files/{trip['fileId']}",
        "file_id": trip["fileId"],
        "mime_type": "text/plain",
        "file_name": "note.txt",
    }
    for via in ("viaOpenai", "viaBridge"):
        assert trip[via]["received"] == expected, trip  # openai/fileParams: the tool got a file object
        assert trip[via]["body"] == "bytes in the store ✓"  # and the server could download it
    # Another origin may not read it (CORS names the view's origin only); it is an attachment that runs
    # nothing; unknown ids are 404; the host's own origin serves no files at all.
    status, headers, _ = http_get(trip["downloadUrl"])
    assert status == 200 and headers["Access-Control-Allow-Origin"] == origins.view_origin
    assert headers["Content-Disposition"].startswith("attachment;")
    assert headers["Content-Security-Policy"].startswith("sandbox;")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert http_get(f"{origins.files_origin}/files/file_{'0' * 32}")[0] == 404
    assert http_get(f"{host.server.host_origin}/files/{trip['fileId']}")[0] == 404
    # selectFiles opens the host's file chooser on the widget's click.
    with host.page.expect_file_chooser() as chooser:
        widget_view(host.page).locator("#pick").click()
    chooser.value.set_files([{"name": "a.csv", "mimeType": "text/csv", "buffer": b"x,y\n1,2\n"}])
    host.wait_event("picked")
    picked = host.events("picked")[0]["files"]
    assert [(f["fileName"], f["mimeType"]) for f in picked] == [("a.csv", "text/csv")]
    host.close()
    # The store went with the server.
    assert host.server.files.files() == []


def test_file_params_name_an_uploaded_file_or_fail_in_one_line():
    store = FileStore()
    try:
        stored = store.add("../../etc/photo.png", b"\x89PNG", None)
        assert stored.file_name == "photo.png" and stored.mime_type == "image/png"
        tool = {"name": "t", "inputSchema": {"type": "object"}, "_meta": {"openai/fileParams": ["image", "more"]}}
        resolved = file_arguments(
            tool, {"image": stored.file_id, "more": [{"fileId": stored.file_id}], "n": 1}, store, "http://h"
        )
        assert resolved["image"]["download_url"] == f"http://h/files/{stored.file_id}"
        assert resolved["more"][0]["file_name"] == "photo.png" and resolved["n"] == 1
        assert file_arguments({"name": "plain"}, {"image": "x"}, store, "http://h") == {"image": "x"}
        with pytest.raises(ValueError, match="names no uploaded file"):
            file_arguments(tool, {"image": "file_nope"}, store, "http://h")
    finally:
        store.close()


def test_approval_holds_tool_input_while_partial_input_streams_then_stops(open_host):
    host = open_host(profile="mcp-apps", permissions="always")
    assert host.page.locator("#approval-bar").is_visible()
    host.host("appsdkPreview.sendPartialInput({city: 'Ber'})")
    host.host("appsdkPreview.sendPartialInput({city: 'Berg'})")
    host.wait_event("partial", 2)
    assert host.events("input") == [] and host.events("result") == []  # held
    assert [e["arguments"] for e in host.events("partial")] == [{"city": "Ber"}, {"city": "Berg"}]
    host.page.click("#approve")
    host.wait_event("result")
    assert host.events("input") == [{"type": "input", "arguments": {"city": "Bergen"}}]
    assert not host.page.locator("#approval-bar").is_visible()
    # Partial input stops once tool-input is sent.
    refused = host.host("appsdkPreview.sendPartialInput({city: 'x'}).then(() => 'sent', (e) => e.message)")
    assert "already sent" in refused
    seen = coverage(host.close())
    assert seen[("notification", "ui/notifications/tool-input-partial")] == 2
    assert seen[("notification", "ui/notifications/tool-input")] == 1


def test_window_openai_gets_its_data_only_once_approved(open_host):
    host = open_host(profile="chatgpt", permissions="always")
    assert host.probe("window.openai.toolOutput") is None
    host.host("appsdkPreview.approve()")
    host.widget().wait_for_function("() => window.openai.toolOutput && window.openai.toolOutput.city === 'Bergen'")
    host.close()


def test_cancel_sends_tool_cancelled_with_its_reason(open_host):
    host = open_host(profile="mcp-apps")
    answer = host.host("appsdkPreview.cancel('the user stopped it')")
    assert answer == {"cancelled": True, "sent": True}
    host.wait_event("cancelled")
    assert host.events("cancelled") == [{"type": "cancelled", "reason": "the user stopped it"}]
    seen = coverage(host.close())
    assert seen[("notification", "ui/notifications/tool-cancelled")] == 1


def test_teardown_waits_for_the_views_answer_before_removing_it(open_host):
    host = open_host(profile="mcp-apps")
    host.host(
        """(() => {
          window.removedAt = null;
          new MutationObserver(() => {
            if (!document.querySelector('iframe#widget') && window.removedAt === null) window.removedAt = Date.now();
          }).observe(document.body, {subtree: true, childList: true});
        })()"""
    )
    answer = host.host("appsdkPreview.teardown()")
    assert answer == {"answered": True, "closed": True}
    assert host.page.locator("p#widget.closed").is_visible()
    log = host.host("appsdkPreview.log.map((e) => e.message)")
    # The view's cleanup (400 ms, then a log line) finished before its answer, and its answer before removal.
    assert log.index("log: probe teardown finished") < log.index("ui/resource-teardown answered")
    traffic = host.host("appsdkPreview.traffic")
    response = next(r for r in traffic if r["method"] == "ui/resource-teardown" and r["kind"] == "response")
    assert response["from"] == "widget" and response["duration_ms"] >= 400
    removed_at = host.host("window.removedAt")
    from datetime import datetime

    answered_at = datetime.fromisoformat(response["time"].replace("Z", "+00:00")).timestamp() * 1000
    assert removed_at >= answered_at
    seen = coverage(host.close())
    assert seen[("request", "ui/resource-teardown")] == 1


def test_widget_state_is_live_both_ways(open_host):
    host = open_host(profile="chatgpt")
    host.host("(window.states = [], appsdkPreview.on('widget-state', (e) => window.states.push(e.state)))")
    assert host.probe("window.probe.saveState({count: 1})") == {"ok": {}}
    host.page.wait_for_function("() => window.states.length === 1")
    assert host.host("appsdkPreview.getWidgetState()") == {"count": 1}
    # The inspector's edit reaches the live widget (set_globals) and the server, which gives it back on reload.
    host.host("appsdkPreview.setWidgetState({count: 41, note: 'edited'})")
    widget_view(host.page).locator("#state", has_text='{"count":41,"note":"edited"}').wait_for()
    assert host.probe("window.openai.widgetState") == {"count": 41, "note": "edited"}
    assert host.host("window.states") == [{"count": 1}, {"count": 41, "note": "edited"}]
    host.host("appsdkPreview.reloadTemplate()")
    widget_view(host.page).locator("#status", has_text="ready").wait_for(timeout=20_000)
    assert host.probe("window.openai.widgetState") == {"count": 41, "note": "edited"}
    host.close()


def test_what_the_model_sees_csp_violations_and_traffic_reach_the_parent(open_host):
    host = open_host(profile="chatgpt")
    host.host(
        "(window.seen = {model: [], csp: [], traffic: []},"
        " ['model', 'csp', 'traffic'].forEach((t) => appsdkPreview.on(t, (e) => window.seen[t].push(e))))"
    )
    host.probe("window.probe.modelContext('the user picked Bergen')")
    host.probe("window.probe.message('Show me more')")
    host.probe("window.probe.followUp('And tomorrow?')")
    host.probe("window.probe.blockedFetch()")
    host.page.wait_for_function("() => window.seen.model.length === 3 && window.seen.csp.length >= 1")
    seen = host.host("window.seen")
    assert [m["kind"] for m in seen["model"]] == ["update-model-context", "message", "follow-up"]
    assert seen["model"][0]["params"]["content"][0]["text"] == "the user picked Bergen"
    assert seen["model"][2]["params"] == {"prompt": "And tomorrow?"}
    violation = next(v for v in seen["csp"] if v["directive"] == "connect-src")
    assert violation["blockedURI"].startswith("http://127.0.0.1:7")
    assert set(violation) >= {"directive", "blockedURI", "sourceFile", "line"}
    # Traffic: the late listener got the whole history (ui/initialize onwards), both channels, timed answers.
    traffic = seen["traffic"]
    initialize = [r for r in traffic if r["method"] == "ui/initialize"]
    assert [(r["from"], r["to"], r["kind"]) for r in initialize] == [
        ("widget", "host", "request"),
        ("host", "widget", "response"),
    ]
    assert initialize[1]["duration_ms"] >= 0 and initialize[1]["id"] == initialize[0]["id"]
    follow = [r for r in traffic if r["channel"] == "openai" and r["method"] == "sendFollowUpMessage"]
    assert [r["kind"] for r in follow] == ["request", "response"]
    for record in traffic:
        assert set(record) >= {"time", "channel", "from", "to", "kind", "method", "id", "size", "message"}
        assert record["size"] == len(json.dumps(record["message"], separators=(",", ":"), ensure_ascii=False).encode())
        assert record["channel"] in ("bridge", "openai") and {record["from"], record["to"]} == {"host", "widget"}
    host.close()


def test_embed_mode_shows_only_the_widget_of_the_run_it_names(open_host):
    host = open_host(runs={"r1": "Tromsø"}, run="r1", embed="1")
    for chrome in ("#bar", "#panel", "#request"):
        assert not host.page.locator(chrome).is_visible()
    assert host.page.locator("#widget").is_visible()
    assert host.page.locator("#widget").bounding_box()["x"] <= 1
    # Every request named the run: the widget got that run's call, and its traffic says which run it is.
    widget_view(host.page).locator("#city", has_text="Tromsø").wait_for()
    assert "/view?document=" in host.widget().url
    assert {r.get("run") for r in host.host("appsdkPreview.traffic")} == {"r1"}
    host.probe("window.probe.saveState({in: 'r1'})")
    assert host.server.widget_state("r1") == {"in": "r1"} and host.server.widget_state() is None
    host.close()


def test_commands_change_the_live_view_and_events_follow(open_host):
    host = open_host(profile="mcp-apps")
    host.page.wait_for_function("() => appsdkPreview.settled")
    host.host(
        "(window.got = {'display-mode': [], size: [], settled: []},"
        " Object.keys(window.got).forEach((t) => appsdkPreview.on(t, (e) => window.got[t].push(e))))"
    )
    assert host.host("window.got.settled.length") == 1  # the latest state, replayed
    assert host.host("window.got.size.at(-1).height") == host.page.locator("#widget").bounding_box()["height"]
    assert host.host("appsdkPreview.setTimeZone('Asia/Tokyo')") == {"timeZone": "Asia/Tokyo"}
    assert "unknown time zone" in host.host("appsdkPreview.setTimeZone('Mars/Base').then(() => '', (e) => e.message)")
    host.host("appsdkPreview.setTheme('dark')")
    host.host("appsdkPreview.setLocale('nb-NO')")
    host.host("appsdkPreview.setDisplayMode('fullscreen')")
    host.widget().wait_for_function("() => window.probe.events.filter((e) => e.type === 'context').length >= 4")
    context_keys = [e["keys"] for e in host.events("context")]
    assert ["timeZone"] in context_keys and ["styles", "theme"] in context_keys and ["locale"] in context_keys
    assert host.host("window.got['display-mode'].at(-1)") == {"mode": "fullscreen"}
    # A re-run's result goes into the live view as another tool-result; tool-input is not repeated.
    fresh = {
        "structuredContent": {"city": "Oslo", "greeting": "Hello again"},
        "content": [{"type": "text", "text": "again"}],
    }
    host.host("appsdkPreview.sendResult(arg)", fresh)
    host.wait_event("result", 2)
    assert host.events("result")[-1]["structuredContent"] == fresh["structuredContent"]
    assert len(host.events("input")) == 1
    seen = coverage(host.close())
    assert seen[("notification", "ui/notifications/tool-result")] == 2


def test_a_command_sent_while_the_page_starts_waits_for_the_view(browser, probe_app):
    # The workbench sends a call's result as soon as it has it, which may be while the host page is still
    # fetching its session; the command must wait for the view and reach it, not throw.
    server = PreviewServer(prepare(Target(url=probe_app.url), "probe", ["city=Bergen"]), PreviewOptions()).start()
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        context.add_init_script(
            "document.addEventListener('DOMContentLoaded', () => { if (!window.appsdkPreview) return;"
            " window.early = appsdkPreview.sendResult({structuredContent: {city: 'Early', greeting: 'Hi'},"
            " content: [{type: 'text', text: 'early'}]}).then(() => 'sent', (e) => `failed: ${e.message}`); })"
        )
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server.page_url())
        assert page.evaluate("() => window.early") == "sent"
        view = widget_view(page)
        view.locator("#status", has_text="ready").wait_for(timeout=20_000)
        frame = view_frame(page)
        frame.wait_for_function("() => window.probe.events.some((e) => e.type === 'result')", timeout=10_000)
        results = [e for e in frame.evaluate("() => window.probe.events") if e["type"] == "result"]
        assert [r["structuredContent"]["city"] for r in results] == ["Early"]
        assert not errors, errors
    finally:
        context.close()
        server.close()
