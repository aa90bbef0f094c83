"""`appsdk preview` on MCP Apps no one here wrote: the standard's published example servers.

Pinned in tests/interop (npm): @modelcontextprotocol/server-basic-react (the official SDK in React),
server-basic-vanillajs, server-system-monitor, and server-everything. Each starts on 127.0.0.1 from
tests/interop/node_modules (loopback.mjs pins their `listen()` to loopback). For each widget: the text
the widget shows is read from its frame's DOM and compared with the tool's own result, every message the
host posted is judged by the SDK's schemas, the host log has no error, and `--screenshot` exits 0.

Offline: all three widgets are single self-contained HTML files (scripts and styles inlined), so they
render without the internet. Only their "Open Link" button points outside (https://modelcontextprotocol.io),
and the host merely logs ui/open-link, so nothing here needs a network.
server-everything has no widget tool at all (2026.8.31): `preview` says so and exits 1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge_capture import INTEROP, BridgeRecorder, coverage, failures, validate
from conftest import RunningServer, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, widget_view

from appsdk_cli.browser.capture import png_size
from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = [
    NEEDS_CHROMIUM,
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None,
        reason="NODE IS MISSING: the third-party MCP Apps servers are node programs; CI has node",
    ),
]

PACKAGES = INTEROP / "node_modules" / "@modelcontextprotocol"


def start(package: str, *args: str) -> RunningServer:
    port = free_port()
    entry = PACKAGES / package / "dist" / "index.js"
    return serve(["node", "--import", "./loopback.mjs", str(entry), *args], port, cwd=INTEROP, env={"PORT": str(port)})


@pytest.fixture(scope="module")
def basic_react(node_clients) -> Iterator[RunningServer]:
    server = start("server-basic-react")
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def basic_vanillajs(node_clients) -> Iterator[RunningServer]:
    server = start("server-basic-vanillajs")
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def system_monitor(node_clients) -> Iterator[RunningServer]:
    server = start("server-system-monitor")
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def everything(node_clients) -> Iterator[RunningServer]:
    server = start("server-everything", "streamableHttp")
    yield server
    stop(server.process)


def render(browser, server: RunningServer, tool: str, *, openai: str, ready: str, interact=None):
    """Preview `tool`, wait until the widget's DOM holds `ready` text (then `interact(page, widget)`);
    return its body text, the session, the host log and the SDK's verdict on every host→view message."""
    session = prepare(Target(url=server.url), tool, [])
    preview = PreviewServer(session, PreviewOptions()).start()
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        recorder = BridgeRecorder(context)
        page = context.new_page()
        page.goto(preview.page_url(openai=openai))
        page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled", timeout=20_000)
        body = widget_view(page).locator("body")
        # `ready` may depend on the result (a time stamp): the widget has rendered its data once it shows it.
        body.get_by_text(ready(session) if callable(ready) else ready).first.wait_for(timeout=15_000)
        if interact:
            interact(page, widget_view(page))
        text = body.inner_text()
        log = page.evaluate("() => window.appsdkPreview.log")
        problems = page.evaluate("() => window.appsdkPreview.problems()")
    finally:
        context.close()
        preview.close()
    return text, session, log, problems, validate(recorder.records)


def assert_clean(log, problems, results) -> None:
    assert not [e for e in log if e["level"] == "error"], log
    assert problems == [], problems
    assert not failures(results), failures(results)
    seen = coverage(results)
    assert seen[("result", "ui/initialize")] == 1, seen
    assert seen[("notification", "ui/notifications/tool-result")] == 1, seen


def served_time(session) -> str:
    return session.result["content"][0]["text"]


@pytest.mark.parametrize("openai", ["1", "0"], ids=["window.openai", "bridge-only"])
def test_the_official_react_example_renders_its_data(browser, basic_react, openai):
    """Done when a widget written with the official SDK in React renders with its data."""

    def press_its_buttons(page, widget) -> None:
        # Its own buttons: ui/message, notifications/message and ui/open-link, answered by the host.
        for button, logged in [
            ("Send Message", "ui/message (user): This is message text."),
            ("Send Log", "log: This is log text."),
            ("Open Link", "ui/open-link https://modelcontextprotocol.io/"),
        ]:
            widget.get_by_role("button", name=button).click()
            page.wait_for_function(
                "(text) => window.appsdkPreview.log.some((e) => e.message.includes(text))", arg=logged, timeout=10_000
            )

    text, session, log, problems, results = render(
        browser, basic_react, "get-time", openai=openai, ready=served_time, interact=press_its_buttons
    )
    served = session.result["content"][0]["text"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", served), served
    assert re.search(rf"Server Time:\s*{re.escape(served)}", text), text
    assert_clean(log, problems, results)
    seen = coverage(results)
    assert seen[("result", "ui/message")] == 1 and seen[("result", "ui/open-link")] == 1, seen


def test_the_vanillajs_example_renders_its_data(browser, basic_vanillajs):
    text, session, log, problems, results = render(browser, basic_vanillajs, "get-time", openai="1", ready=served_time)
    served = session.result["content"][0]["text"]
    assert re.search(rf"Server Time:\s*{re.escape(served)}", text), text
    assert_clean(log, problems, results)


def test_the_system_monitor_renders_its_data(browser, system_monitor):
    def wait_for_the_first_poll(page, widget) -> None:
        # The memory gauge fills from poll-system-stats, an app-only tool the widget calls through the host.
        widget.locator("#memory-detail", has_text="GB").wait_for(timeout=15_000)

    text, session, log, problems, results = render(
        browser, system_monitor, "get-system-info", openai="1", ready="Hostname", interact=wait_for_the_first_poll
    )
    info = session.result["structuredContent"]
    assert re.search(rf"Hostname\s+{re.escape(info['hostname'])}", text), text
    assert info["platform"] in text, text
    assert re.search(r"[\d.]+ GB / [\d.]+ GB", text), text
    assert_clean(log, problems, results)


@pytest.mark.parametrize(
    ("fixture", "tool"),
    [("basic_react", "get-time"), ("basic_vanillajs", "get-time"), ("system_monitor", "get-system-info")],
)
def test_screenshots_of_the_examples_pass(request, fixture, tool, tmp_path: Path):
    server = request.getfixturevalue(fixture)
    out = tmp_path / f"{fixture}.png"
    result = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "preview", tool, "--url", server.url, "--screenshot", str(out)],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "did not render cleanly" not in result.stderr and "error" not in result.stderr.lower(), result.stderr
    width, height = png_size(out.read_bytes())
    assert width == 768 and height > 200, (width, height)


def test_server_everything_has_no_widget_and_preview_says_so(everything):
    listed = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "tools", "--url", everything.url, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    tools = json.loads(listed.stdout)["tools"]
    assert len(tools) > 5
    with_widget = [
        t["name"] for t in tools if "ui" in (t.get("_meta") or {}) or "openai/outputTemplate" in (t.get("_meta") or {})
    ]
    assert with_widget == [], with_widget
    shown = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "preview", "echo", "message=hi", "--url", everything.url, "--no-open"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 1
    assert "declares no widget" in shown.stderr and "appsdk call echo" in shown.stderr, shown.stderr
