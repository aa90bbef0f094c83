"""The workbench does what `appsdk call` does (issue 36, seam 12), in a real browser: a tool that runs only as
an MCP task, image content and the other non-text blocks, an empty required string, a theme chosen just
after a profile switch, the layout at 1280, 1024 and 390 px, and a widget's own call in the traffic.

Screenshots go to $APPSDK_TEST_SCREENSHOTS when it is set (to look at them), else to the test's tmp folder.
"""

from __future__ import annotations

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
    widget(page).get_by_text("theme dark").wait_for(timeout=10_000)
    page.wait_for_timeout(2000)  # past the view's initialized, and anything that came after it
    assert widget(page).locator("#theme").text_content() == "theme dark"
    assert host_window(page)["theme"] == "dark"
