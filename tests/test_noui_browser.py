"""The No UI switch in a real browser: the preview's host page and the workbench play a host without
widgets (no io.modelcontextprotocol/ui offered, no frame, no window.openai) and show the text the model
gets, for an app that gates its widget on the capability (tests/fixtures/ui_gated_app.py) and for an
ordinary one (the scaffolded book-club).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import RunningServer, appsdk, serve_fixture, stop
from preview_helpers import NEEDS_CHROMIUM, decode_png, widget_view

from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare
from appsdk_cli.workbench import Workbench

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM


@pytest.fixture(scope="module")
def gated() -> Iterator[RunningServer]:
    server = serve_fixture("ui_gated_app.py")
    yield server
    stop(server.process)


def serve(server: RunningServer, tool: str, **options) -> PreviewServer:
    return PreviewServer(prepare(Target(url=server.url), tool, []), PreviewOptions(**options)).start()


def settled(page) -> None:
    page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled", timeout=20_000)


def text_only(page) -> str:
    return page.locator("#text-only").inner_text(timeout=15_000)


def test_the_gated_app_shows_its_text_answer_without_a_frame_and_its_widget_with_one(page, gated) -> None:
    with serve(gated, "task-board", no_ui=True) as preview:
        page.goto(preview.page_url())
        settled(page)
        shown = text_only(page)
        assert "Open tasks:\n- Book the venue\n- Send the invitations" in shown
        assert "UI capability withheld: no io.modelcontextprotocol/ui offered" in shown
        assert "The server answered differently: it lists task-board without a widget;" in shown
        assert "it describes task-board differently" in shown and "its result has other content" in shown
        assert page.locator("iframe").count() == 0 and page.locator("#stage").is_hidden()
        assert page.evaluate("() => window.appsdkPreview.problems()") == []
        # The switch is remembered in the page's URL, like the others.
        assert "noui=1" in page.url
        # Switched off: the widget host's frame, with its widget showing what the UI answer carried.
        page.uncheck("#no-ui")
        settled(page)
        assert page.locator("#text-only").is_hidden()
        assert "Book the venue" in widget_view(page).locator("#tasks").inner_text(timeout=15_000)
        assert "noui=0" in page.url
        page.check("#no-ui")
        settled(page)
        assert "- Book the venue" in text_only(page) and page.locator("iframe").count() == 0


def test_an_ordinary_app_shows_the_content_the_model_gets(page, app_server) -> None:
    with serve(app_server, "list-books") as preview:
        page.goto(preview.page_url(noui="1"))
        settled(page)
        shown = text_only(page)
        assert "The server answered as it does for a widget host" in shown
        content = page.locator("#text-only-content").inner_text()
        result = preview.preview.result
        texts = [b["text"] for b in result.get("content") or [] if b.get("type") == "text"]
        assert content == "\n\n".join(texts)
        if "structuredContent" in result:
            assert "structuredContent: not shown in the conversation" in shown
        assert page.locator("iframe").count() == 0


def test_the_workbench_switch_shows_each_runs_text(page, gated) -> None:
    with Workbench(Target(url=gated.url)) as bench:
        page.goto(bench.url)
        page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
        page.evaluate(
            "() => fetch('/api/runs', {method: 'POST', headers: {'Content-Type': 'application/json'},"
            " body: JSON.stringify({tool: 'task-board', arguments: {}})})"
        )
        host = page.locator(".run").first.locator(".host-frame iframe").first
        assert "Book the venue" in widget_view(host.content_frame).locator("#tasks").inner_text(timeout=20_000)
        page.check("#no-ui")
        frame = page.locator(".run").first.locator(".host-frame iframe").first.content_frame
        frame.locator("#text-only").wait_for(state="visible", timeout=20_000)
        frame.get_by_text("- Send the invitations").wait_for(timeout=20_000)
        assert "its result has other content" in frame.locator("#text-only").inner_text()
        assert frame.locator("iframe").count() == 0
        # Kept in the workbench's preferences: a reload of the page stays without the UI.
        page.reload()
        page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
        assert page.is_checked("#no-ui")


def test_a_screenshot_without_the_ui_is_of_the_text(gated, tmp_path) -> None:
    out = tmp_path / "text.png"
    shot = appsdk("preview", "task-board", "--url", gated.url, "--no-ui", "--screenshot", str(out), timeout=120)
    assert shot.returncode == 0, shot.stderr
    width, height, _ = decode_png(out.read_bytes())
    assert width > 300 and 60 < height < 400
