"""The workbench does what `appsdk call` does (issue 36, seam 12), in a real browser: a tool that runs only as
an MCP task, image content and the other non-text blocks, an empty required string, a theme chosen just
after a profile switch, the layout at 1280, 1024 and 390 px, and a widget's own call in the traffic.

Screenshots go to $APPSDK_TEST_SCREENSHOTS when it is set (to look at them), else to the test's tmp folder.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, RunningServer, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM
from test_workbench_browser import field, host_window, open_workbench, wait_run, widget
from test_workbench_seams import screenshot

from appsdk_cli.connection import Target
from appsdk_cli.workbench import Workbench

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM


@pytest.fixture(scope="module")
def parity_app() -> Iterator[RunningServer]:
    """tests/fixtures/parity_server.py: a task-only tool, an image and other blocks, a required string."""
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "parity_server.py"), str(port)], port)
    yield server
    stop(server.process)


@pytest.fixture
def parity_bench(parity_app: RunningServer) -> Iterator[Workbench]:
    with Workbench(Target(url=parity_app.url)) as bench:
        yield bench


def pick(page, tool: str) -> None:
    page.locator(f'#tool-list [data-tool="{tool}"]').click()
    page.wait_for_function("(tool) => window.appsdkWorkbench.page.selected?.name === tool", arg=tool)


def test_a_task_only_tool_runs_as_a_task_and_shows_its_status(
    page, parity_app: RunningServer, parity_bench: Workbench, tmp_path: Path
) -> None:
    open_workbench(page, parity_bench.url)
    pick(page, "research")
    field(page, "topic").locator("input").fill("moths")
    page.click("#run-button")
    card = page.locator(".run").first
    # Sent as a task (a plain tools/call is refused with -32601): while the task works, the run says so.
    card.locator(".run-progress", has_text="running as MCP task task-1 (working)").wait_for(timeout=20_000)
    assert page.evaluate("() => window.appsdkWorkbench.runs()[0].status") == "running"
    screenshot(page, "workbench-task-running.png", tmp_path)
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{parity_app.port}/release", b"{}"), timeout=10)
    run = wait_run(page)
    assert run["status"] == "done" and run.get("error") is None, run
    assert run["result"]["content"] == [{"type": "text", "text": "Research report: moths"}]
    assert card.locator(".run-progress").is_hidden()
    # The same exchanges as `appsdk call`: tools/call with a task, then tasks/result.
    requests = [r for r in parity_bench.tracer.records(run["id"]) if r["channel"] == "mcp" and r["kind"] == "request"]
    methods = [r["method"] for r in requests]
    assert methods[-2:] == ["tools/call", "tasks/result"], methods
    assert "task" in requests[-2]["message"]["params"], requests[-2]


def test_image_content_is_shown_and_the_other_blocks_are_named(page, parity_bench: Workbench, tmp_path: Path) -> None:
    open_workbench(page, parity_bench.url)
    title = page.title()
    pick(page, "picture")
    page.click("#run-button")
    run = wait_run(page)
    assert run["status"] == "done", run
    content = page.locator(".run").first.locator(".model-content")
    content.locator("img.content-image").first.wait_for()
    images = content.locator("img")
    # One image shown, from its own base64 as a data: URL, decoded by the browser (24×16).
    assert images.count() == 1
    red = run["result"]["content"][1]["data"]
    assert images.first.get_attribute("src") == f"data:image/png;base64,{red}"
    assert images.first.evaluate("(img) => [img.complete, img.naturalWidth, img.naturalHeight]") == [True, 24, 16]
    captions = content.locator("figcaption").all_text_contents()
    sizes = [len(block.get("data", "")) * 3 // 4 for block in run["result"]["content"]]
    assert captions == [
        f"image image/png, about {sizes[1]} bytes",
        f"image text/html, about {sizes[2]} bytes: not shown, not an image type the workbench shows"
        " (image/png, image/jpeg, image/gif, image/webp, image/avif, image/bmp)",
        f"image image/png, about {sizes[3]} bytes: not shown, its data is not base64",
        f"audio audio/wav, about {sizes[4]} bytes (not played here)",
        "resource link file:///picks/june.txt (june) text/plain",
        "embedded resource books://1 (application/json, text, 9 characters)",
    ], captions
    assert "non-text block" not in content.text_content()
    # The hostile blocks stayed text: no element of theirs, no script run, the page's title untouched.
    assert content.locator("script, [onerror], iframe, object, embed").count() == 0
    assert page.title() == title
    screenshot(page, "workbench-image-content.png", tmp_path)


def test_an_empty_required_string_is_refused_by_its_field(page, parity_bench: Workbench) -> None:
    open_workbench(page, parity_bench.url)
    pick(page, "greet")
    page.click("#run-button")
    # As `appsdk call greet` refuses a missing name: nothing is sent, and the field says why.
    assert field(page, "name").locator(".field-message").text_content() == "required"
    assert "Fix this first" in page.locator("#form-problems").text_content()
    assert page.evaluate("() => window.appsdkWorkbench.runs().length") == 0
    field(page, "name").locator("input").fill("Ada")
    page.click("#run-button")
    run = wait_run(page)
    assert run["arguments"] == {"name": "Ada"} and run["result"]["content"][0]["text"] == "Hello 'Ada'", run


def test_a_theme_chosen_right_after_a_profile_switch_sticks(page, parity_bench: Workbench) -> None:
    open_workbench(page, parity_bench.url)
    pick(page, "slow-start")
    page.click("#run-button")
    wait_run(page)
    widget(page).get_by_text("theme light").wait_for(timeout=15_000)
    profiles = page.eval_on_selector_all("#profile option", "options => options.map((o) => o.value)")
    other = next(name for name in profiles if name != page.locator("#profile").input_value())
    # A new profile, so a new view: the theme is chosen while it starts (the host has answered its
    # ui/initialize, with the light theme, and the view has not yet said it is initialized).
    page.select_option("#profile", other)
    widget(page).get_by_text("theme light").wait_for(timeout=15_000)
    assert page.locator(".run .host-frame").get_attribute("data-profile") == other
    assert host_window(page, expression="w => w.appsdkPreview.bridge.initialized") is False
    page.select_option("#theme", "dark")
    widget(page).get_by_text("theme dark").wait_for(timeout=15_000)
    page.wait_for_timeout(2000)  # past the view's initialized, and anything that came after it
    assert widget(page).locator("#theme").text_content() == "theme dark"
    assert host_window(page)["theme"] == "dark"


LAYOUT = """() => {
  const box = (selector) => {
    const found = document.querySelector(selector);
    if (!found) throw new Error(`no ${selector}`);
    const r = found.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };
  };
  const buttons = [...document.querySelectorAll("#traffic-panel button")];
  const named = (text) => buttons.find((b) => b.textContent.trim() === text);
  named("Export").id = "export-under-test";
  named("Clear").id = "clear-traffic-under-test";
  const row = document.querySelector(".run .frames");
  return {
    page: [document.documentElement.scrollWidth, document.documentElement.clientWidth, document.body.scrollWidth],
    exportButton: box("#export-under-test"),
    clearTraffic: box("#clear-traffic-under-test"),
    toolbar: box("#traffic-panel .traffic-toolbar"),
    permissions: box("#permissions"),
    hostControls: box(".host-controls"),
    clearRuns: box("#clear-runs"),
    conversation: box("#conversation"),
    inspector: box("#inspector"),
    row: box(".run .frames"),
    rowScroll: [row.scrollWidth, row.clientWidth],
    frames: [...row.querySelectorAll(".host-frame")].map((f) => {
      const r = f.getBoundingClientRect();
      return { left: r.left, right: r.right, width: r.width };
    }),
  };
}"""


def overlaps(a: dict, b: dict) -> bool:
    return (
        a["left"] < b["right"] - 1
        and b["left"] < a["right"] - 1
        and a["top"] < b["bottom"] - 1
        and b["top"] < a["bottom"] - 1
    )


@pytest.mark.parametrize("width", [1280, 1024, 390])
def test_the_page_fits_the_window_at_1280_1024_and_390(browser, trip_bench: Workbench, width: int, tmp_path: Path):
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        open_workbench(page, trip_bench.url)
        page.check("#side-by-side")
        page.evaluate(
            "() => fetch('/api/runs', {method: 'POST', headers: {'Content-Type': 'application/json'},"
            " body: JSON.stringify({tool: 'plan-trip', arguments: {city: 'Rome', nights: 2}})})"
        )
        wait_run(page)
        for index in range(3):
            widget(page, 0, index).get_by_text("Rome").wait_for(timeout=15_000)
        page.wait_for_timeout(300)  # the frames take their widgets' heights
        facts = page.evaluate(LAYOUT)
        # No sideways scroll: the page is as wide as the window.
        assert facts["page"] == [width, width, width], facts["page"]
        # Export sits on Clear's line, whole, inside the traffic toolbar.
        export, clear, toolbar = facts["exportButton"], facts["clearTraffic"], facts["toolbar"]
        assert abs(export["top"] - clear["top"]) <= 1 and export["height"] <= clear["height"] + 1, (export, clear)
        assert toolbar["left"] <= export["left"] and export["right"] <= toolbar["right"], (export, toolbar)
        # The host controls stay in their box, in the conversation column, clear of the inspector.
        permissions, controls = facts["permissions"], facts["hostControls"]
        assert controls["left"] <= permissions["left"] and permissions["right"] <= controls["right"], facts
        assert not overlaps(permissions, facts["inspector"]), (permissions, facts["inspector"])
        assert facts["clearRuns"]["right"] <= facts["conversation"]["right"], facts
        # Side by side: every widget whole within its row (none cut, none to scroll to), a phone's width
        # at least where the column has it.
        row, frames = facts["row"], facts["frames"]
        assert len(frames) == 3 and facts["rowScroll"][0] <= facts["rowScroll"][1], facts
        for frame in frames:
            assert row["left"] - 1 <= frame["left"] and frame["right"] <= row["right"] + 1, (frame, row)
            assert frame["width"] >= min(360, row["width"]) - 1, (frame, row)
        screenshot(page, f"workbench-layout-{width}.png", tmp_path)
    finally:
        context.close()
    assert not errors, errors


ROWS = "#traffic-panel .traffic-sizer .traffic-row"
ROW_FACTS = (
    "els => els.sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top).map((e) =>"
    " [e.dataset.channel, e.querySelector('.t-route').title, e.querySelector('.t-method').title,"
    " (e.querySelector('.traffic-caller') || {}).textContent || ''])"
)


def test_a_widgets_own_call_reads_in_order_and_is_the_widgets(page, trip_bench: Workbench, tmp_path: Path) -> None:
    open_workbench(page, trip_bench.url)
    page.evaluate(
        "() => fetch('/api/runs', {method: 'POST', headers: {'Content-Type': 'application/json'},"
        " body: JSON.stringify({tool: 'plan-trip', arguments: {city: 'Rome', nights: 2}})})"
    )
    wait_run(page)
    widget(page).get_by_text("Rome").wait_for(timeout=15_000)
    page.click('#inspector-tabs [data-panel="traffic"]')
    widget(page).locator("#ask").click()
    widget(page).get_by_text("asked Asked").wait_for(timeout=15_000)
    page.fill("#traffic-panel .traffic-search", '"asked"')
    page.wait_for_function(f"() => document.querySelectorAll('{ROWS}[data-channel=mcp]').length === 2")
    rows = page.eval_on_selector_all(ROWS, ROW_FACTS)
    # The widget's callTool, the MCP exchange the workbench made for it, then the widget's answer; the MCP
    # rows say whose call it was.
    assert [(channel, method) for channel, _, method, _ in rows] == [
        ("openai", "request callTool"),
        ("mcp", "request tools/call"),
        ("mcp", "response tools/call"),
        ("openai", "response callTool"),
    ], rows
    assert [(route, caller) for channel, route, _, caller in rows if channel == "mcp"] == [
        ("workbench → server, for the widget's own request", "for widget"),
        ("server → workbench, for the widget's own request", "for widget"),
    ], rows
    records = [r for r in trip_bench.tracer.records() if r["method"] == "tools/call" and "Asked" in str(r["message"])]
    assert [r.get("caller") for r in records] == ["widget", "widget"], records
    screenshot(page, "workbench-widget-call-traffic.png", tmp_path)
    # An MCP record the event stream brings late (a busy machine) goes where its time puts it: here, first.
    page.evaluate(
        """() => {
            const times = [...document.querySelectorAll('#traffic-panel .traffic-sizer .traffic-row .t-time')]
                .map((t) => Date.parse(t.title.match(/[(](.*)[)]$/)[1]));
            window.appsdkWorkbench.page.panels.traffic({
                time: new Date(Math.min(...times) - 1000).toISOString(), channel: "mcp", from: "server",
                to: "workbench", kind: "notification", method: "notifications/message", id: null, size: 9,
                caller: "widget", message: {note: "asked"},
            });
        }"""
    )
    page.wait_for_function(f"() => document.querySelectorAll('{ROWS}[data-channel=mcp]').length === 3")
    late = [(channel, method) for channel, _, method, _ in page.eval_on_selector_all(ROWS, ROW_FACTS)]
    assert late[0] == ("mcp", "notification notifications/message") and late[-1] == ("openai", "response callTool")


def test_cancelling_a_task_run_cancels_the_servers_task(page, tmp_path: Path) -> None:
    """Cancel in the workbench while a task works: the server is sent `tasks/cancel` for it, so the task
    stops instead of working on for nobody (dropping the wait on `tasks/result` cancels only the wait)."""
    port = free_port()  # a server of its own: its first task is task-1, whatever ran before
    server = serve([sys.executable, str(FIXTURES / "parity_server.py"), str(port)], port)
    try:
        with Workbench(Target(url=server.url)) as bench:
            open_workbench(page, bench.url)
            pick(page, "research")
            field(page, "topic").locator("input").fill("moths")
            page.click("#run-button")
            card = page.locator(".run").first
            card.locator(".run-progress", has_text="running as MCP task task-1 (working)").wait_for(timeout=20_000)
            card.locator('[data-action="cancel"]').click()
            run = wait_run(page, calls=0)
            assert run["status"] == "cancelled", run
            asked = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": "task-1"}}
            request = urllib.request.Request(
                server.url, json.dumps(asked).encode(), {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                task = json.load(answer)["result"]
            assert task["status"] == "cancelled", task
    finally:
        stop(server.process)
