"""Where the workbench meets the rest, in a real browser at the README's 1280×800 (issue 26): a crashed tool
under `appsdk dev`, the traffic panel's columns, side by side, a widget's own tools/call, progress during a
slow call, a page opened while the app is broken, and the workbench's port across `appsdk dev` starts.

Screenshots go to $APPSDK_TEST_SCREENSHOTS when it is set (to look at them), else to the test's tmp folder.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, RunningServer, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, view_frame
from test_workbench_browser import dev_workbench_url, open_workbench, start_dev, wait_run, widget

from appsdk_cli.appmeta import TOOL_CRASH
from appsdk_cli.connection import Target
from appsdk_cli.scaffold import scaffold
from appsdk_cli.workbench import Workbench
from appsdk_cli.workbench.port import project_port

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM

# Crashes two frames down, in the user's own code (as tests/test_tool_errors.py's app does).
PICKS_FOR = """

def picks_for(month: str) -> list[dict[str, str]]:
    return {"june": PICKS}[month.lower()]
"""


@pytest.fixture(scope="module")
def streaming_app() -> Iterator[RunningServer]:
    """tests/fixtures/workbench_app.py answering as event streams, with its count-slowly tool."""
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "workbench_app.py"), str(port), "stream"], port)
    yield server
    stop(server.process)


def screenshot(page, name: str, tmp_path: Path) -> Path:
    folder = Path(os.environ.get("APPSDK_TEST_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    page.screenshot(path=str(path))
    return path


class Dev:
    """`appsdk dev` on a project, its output kept."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.lines: list[str] = []
        self.process = start_dev(project)
        self.url = dev_workbench_url(self.process, self.lines)

    def stop(self) -> str:
        self.process.send_signal(signal.SIGINT)
        try:
            output, _ = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            output, _ = self.process.communicate()
        self.lines.append(output)
        return "".join(self.lines)


def crashing_project(tmp_path: Path) -> Path:
    project = scaffold("book-club", tmp_path).path
    server = project / "server.py"
    source = server.read_text(encoding="utf-8")
    source = source.replace('    when = f" for {month}" if month else ""\n', '    picks_for(month or "never")\n', 1)
    marker = "\n\ndef transport_security()"
    server.write_text(source.replace(marker, PICKS_FOR + marker, 1), encoding="utf-8")
    return project


def test_a_crashed_tool_is_a_failure_with_the_exception_and_its_file_and_line(page, tmp_path: Path) -> None:
    project = crashing_project(tmp_path)
    line = next(n for n, text in enumerate((project / "server.py").read_text().splitlines(), 1) if '{"june"' in text)
    dev = Dev(project)
    try:
        # The workbench is on the project's own port, the same on every start (a bookmarked tab lives on).
        usual = project_port(project)
        if dev.url != f"http://127.0.0.1:{usual}/":  # another program holds it on this shared machine
            assert f"its usual port {usual} was busy" in "".join(dev.lines), dev.lines
        open_workbench(page, dev.url)
        page.click("#run-button")
        run = wait_run(page)
        card = page.locator(".run").first
        # Not "✓ Here are the picks": the call failed, and the page says what the tool raised and where.
        assert run["status"] == "done" and run["result"]["isError"] is True, run
        assert card.get_attribute("data-outcome") == "error"
        status = card.locator(".status-text")
        assert status.text_content() == "list-books raised KeyError"
        assert page.evaluate("(el) => getComputedStyle(el, '::before').content", status.element_handle()) == '"✕ "'
        crash = card.locator(".run-crash")
        assert crash.is_visible()
        assert crash.locator(".crash-summary").text_content() == "KeyError: 'never'"
        wheres = crash.locator(".crash-where").all_text_contents()
        assert wheres[-1] == f"server.py:{line} in picks_for", wheres
        assert any(where.startswith("server.py:") and where.endswith("in list_books") for where in wheres), wheres
        assert "Raise ToolError(...)" in crash.locator(".crash-hint").text_content()
        # The widget got what production sends: the isError result without appsdk dev's report.
        assert TOOL_CRASH not in (run["result"].get("_meta") or {})
        assert run["crash"]["file"] == "server.py" and run["crash"]["line"] == line
        card.scroll_into_view_if_needed()
        screenshot(page, "workbench-crash.png", tmp_path)
    finally:
        output = dev.stop()
    assert dev.process.returncode == 0, output


def test_a_page_opened_after_a_bad_save_shows_the_broken_app(page, browser, tmp_path: Path) -> None:
    project = scaffold("book-club", tmp_path).path
    # The project's usual port is taken: dev takes a free one and says why.
    usual = project_port(project)
    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", usual))
        holder.listen()
    except OSError:
        holder.close()
        pytest.skip(f"port {usual} is busy on this machine already")
    try:
        dev = Dev(project)
    finally:
        holder.close()
    try:
        assert dev.url != f"http://127.0.0.1:{usual}/"
        assert f"its usual port {usual} was busy" in "".join(dev.lines)
        open_workbench(page, dev.url)
        assert page.locator("#reload-banner").is_hidden()
        server = project / "server.py"
        server.write_text(server.read_text() + "\ndef broken(:\n")
        # The page open at the bad save says so...
        page.wait_for_function("() => window.appsdkWorkbench.reloads >= 1", timeout=60_000)
        assert "failed to import" in page.locator("#reload-text").text_content()
        # ...and so does one opened afterwards: the banner, the reason, and a dot that is not green.
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            fresh = context.new_page()
            open_workbench(fresh, dev.url)
            fresh.wait_for_function("() => !document.getElementById('reload-banner').hidden")
            banner = fresh.locator("#reload-banner")
            assert banner.get_attribute("class") == "banner error"
            text = fresh.locator("#reload-text").text_content()
            assert re.fullmatch(
                r"The app failed to import after saving server\.py \(server\.py:\d+: SyntaxError: invalid syntax\);"
                r" the widgets keep the last good version \(see the terminal\)\.",
                text,
            ), text
            assert fresh.evaluate("() => window.appsdkWorkbench.appOk") is False
            dot = fresh.locator("#connection-dot")
            assert "live" not in dot.get_attribute("class") and "broken" in dot.get_attribute("title")
            screenshot(fresh, "workbench-broken.png", tmp_path)
        finally:
            context.close()
        # A good save clears it on the open page.
        server.write_text(server.read_text().replace("\ndef broken(:\n", "\n"))
        page.wait_for_function("() => window.appsdkWorkbench.appOk === true", timeout=60_000)
        assert page.locator("#connection-dot").get_attribute("class") == "dot live"
    finally:
        output = dev.stop()
    assert dev.process.returncode == 0, output


def overflowing(page, selector: str) -> list[str]:
    """The text of every element matched whose content is wider than the element (cut off)."""
    return page.eval_on_selector_all(
        selector, "els => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.innerText)"
    )


def test_the_traffic_columns_fit_the_inspector_at_1280x800(page, trip_bench: Workbench, tmp_path: Path) -> None:
    open_workbench(page, trip_bench.url)
    page.locator('#tool-list [data-tool="slow-plan"]').click()
    page.click("#run-button")
    wait_run(page)
    widget(page).locator("#events li", has_text="tool-result").wait_for(timeout=15_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('#traffic-panel .traffic-method-name')]"
        ".some((n) => n.textContent === 'ui/notifications/tool-result')"
    )
    # A message a minute and a half after the first: its time shows whole too.
    page.evaluate(
        """() => {
            const first = document.querySelector('#traffic-panel .traffic-row[data-index="0"] .t-time');
            const start = Date.parse(first.title.match(/[(](.*)[)]$/)[1]);
            window.appsdkWorkbench.page.panels.traffic({
                time: new Date(start + 95_250).toISOString(), channel: "bridge", from: "widget", to: "host",
                kind: "notification", method: "ui/notifications/size-changed", id: null, size: 40, message: {},
            });
        }"""
    )
    rows = "#traffic-panel .traffic-sizer .traffic-row"
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{rows} .t-time')].some((t) => t.textContent.includes(':'))"
    )
    times = page.locator(f"{rows} .t-time").all_text_contents()
    assert all(re.fullmatch(r"\d+\.\d{2,3}|\d+:\d\d\.\d", t) for t in times), times
    assert "1:35.3" in times, times
    # Every cell's text fits its column: times, parties, method names, durations.
    for cell in (".t-time", ".t-route", ".traffic-method-name", ".t-duration"):
        assert overflowing(page, f"{rows} {cell}") == [], cell
    for header in page.locator("#traffic-panel .traffic-head > span").all():
        if header.is_visible():
            assert header.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1"), header.inner_text()
    # The bridge's notifications read by what differs (the shared prefix is left out, the full name kept).
    shown = page.eval_on_selector_all(
        f"{rows}[data-channel=bridge] .traffic-method-name", "els => els.map((e) => [e.innerText, e.textContent])"
    )
    visible = {text for text, _ in shown}
    assert {"tool-input", "tool-result", "initialized"} <= visible, visible
    assert ("tool-result", "ui/notifications/tool-result") in [tuple(pair) for pair in shown]
    assert "ui/initialize" in visible
    title = page.locator(f"{rows}[data-channel=bridge] .t-method", has_text="tool-result").first.get_attribute("title")
    assert title == "notification ui/notifications/tool-result"
    screenshot(page, "workbench-traffic.png", tmp_path)


def test_side_by_side_shows_each_widget_whole(page, app_server: RunningServer, tmp_path: Path) -> None:
    with Workbench(Target(url=app_server.url)) as bench:
        open_workbench(page, bench.url)
        page.check("#side-by-side")
        page.click("#run-button")
        wait_run(page)
        frames = page.locator(".run").first.locator(".host-frame")
        assert frames.count() == 3
        row = page.locator(".run").first.locator(".frames")
        for index in range(3):
            widget(page, 0, index).get_by_text("Frankenstein").wait_for(timeout=15_000)
        for index in range(3):
            frame = frames.nth(index)
            frame.evaluate("(e) => e.scrollIntoView({ inline: 'start', block: 'nearest', behavior: 'instant' })")
            page.wait_for_timeout(300)  # the row's scroll settles (it snaps to each frame)
            box, visible = frame.bounding_box(), row.bounding_box()
            # Wide enough for a widget (a phone's width at least), and all of it in view once scrolled to.
            assert box["width"] >= 360, box
            assert visible["x"] - 1 <= box["x"] and box["x"] + box["width"] <= visible["x"] + visible["width"] + 1
            host = frame.locator("iframe").element_handle().content_frame()
            view = view_frame(host)
            widths = view.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            assert widths[0] <= widths[1], (index, widths)
            if index == 1:
                screenshot(page, "workbench-side-by-side.png", tmp_path)


def test_a_widgets_own_tool_call_is_recorded_as_an_mcp_exchange(page, trip_bench: Workbench) -> None:
    open_workbench(page, trip_bench.url)
    page.evaluate(
        "() => fetch('/api/runs', {method: 'POST', headers: {'Content-Type': 'application/json'},"
        " body: JSON.stringify({tool: 'plan-trip', arguments: {city: 'Rome', nights: 2}})})"
    )
    run = wait_run(page)
    widget(page).locator("#ask").click()
    widget(page).get_by_text("asked Asked").wait_for(timeout=15_000)
    # The widget's call went host page → /api/call → server: that exchange is in the traffic, of its run.
    records = [r for r in trip_bench.tracer.records(run["id"]) if r["channel"] == "mcp" and r["method"] == "tools/call"]
    asked = [r for r in records if "Asked" in str(r["message"])]
    assert [(r["kind"], r["from"], r["to"]) for r in asked] == [
        ("request", "workbench", "server"),
        ("response", "server", "workbench"),
    ], asked
    assert asked[1]["duration_ms"] is not None
    page.click('#inspector-tabs [data-panel="traffic"]')
    # (The widget's own HTML, in resources/read, says "asked" too, but never as a JSON string of its own.)
    page.fill("#traffic-panel .traffic-search", '"asked"')
    page.wait_for_function(
        "() => document.querySelectorAll('#traffic-panel .traffic-sizer .traffic-row[data-channel=mcp]').length === 2"
    )
    methods = page.locator("#traffic-panel .traffic-sizer .traffic-row[data-channel=mcp] .traffic-method-name")
    assert methods.all_text_contents() == ["tools/call", "tools/call"]


def test_progress_during_a_slow_call_shows_as_it_arrives(page, streaming_app: RunningServer) -> None:
    with Workbench(Target(url=streaming_app.url)) as bench:
        open_workbench(page, bench.url)
        page.locator('#tool-list [data-tool="count-slowly"]').click()
        page.locator('#form-pane [data-path="seconds"] input').fill("1.5")
        page.click("#run-button")
        card = page.locator(".run").first
        card.locator(".run-progress", has_text="1/3 · step 1 of 3").wait_for(timeout=15_000)
        card.locator(".run-progress", has_text="info: counted 1").wait_for()
        # While the call still runs, the notifications are in the timeline already.
        page.wait_for_function(
            "() => [...document.querySelectorAll('#traffic-panel .traffic-method-name')]"
            ".some((n) => n.textContent === 'notifications/progress')"
        )
        assert page.evaluate("() => window.appsdkWorkbench.runs()[0].status") == "running"
        names = page.locator("#traffic-panel .traffic-method-name").all_text_contents()
        assert "notifications/message" in names, names
        run = wait_run(page)
        assert run["status"] == "done" and run["result"]["structuredContent"] == {"counted": 3}
        assert card.locator(".run-progress").is_hidden()
