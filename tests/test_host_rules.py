"""Per-host rules a widget trips over, as the profiles play them: Claude shows no widget whose ui.domain is
not the name it derives from the connector URL (appmeta.claude_domain_problem says why and cites it);
ChatGPT and the generic host render it. Real browser, real server (tests/fixtures/domain_app.py)."""

from __future__ import annotations

import sys

import pytest
from conftest import FIXTURES, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, widget_view

from appsdk_cli.appmeta import claude_widget_domain
from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM


def render(browser, domain: str, profile: str) -> tuple[str, list[dict], list[str]]:
    """The widget's text (or the host's note in its place), the host log, and the page's problems."""
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "domain_app.py"), str(port), domain], port)
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    preview = PreviewServer(prepare(Target(url=server.url), "hello", []), PreviewOptions()).start()
    try:
        page.goto(preview.page_url(profile=profile))
        page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled", timeout=20_000)
        shown = page.locator("#widget")
        if shown.evaluate("(e) => e.tagName") == "IFRAME":
            text = widget_view(page).locator("#hello").text_content(timeout=15_000)
        else:
            text = "note: " + shown.text_content()
        return (
            text,
            page.evaluate("() => window.appsdkPreview.log"),
            page.evaluate("() => window.appsdkPreview.problems()"),
        )
    finally:
        preview.close()
        context.close()
        stop(server.process)


def test_claude_shows_no_widget_whose_ui_domain_is_chatgpts_kind_of_origin(browser) -> None:
    text, log, problems = render(browser, "https://books.example.com", "claude")
    assert text.startswith("note: Claude-like shows no widget here: Claude renders no widget whose ui.domain")
    assert any(e["level"] == "error" and "claudemcpcontent.com" in e["message"] for e in log), log
    assert any("shows no widget" in p for p in problems), problems
    # The same resource in ChatGPT (and the spec's generic host) renders.
    for profile in ("chatgpt", "mcp-apps"):
        text, log, _ = render(browser, "https://books.example.com", profile)
        assert text == "Hello from the widget", profile
        assert not [e for e in log if "shows no widget" in e["message"]]


def test_claude_renders_without_ui_domain_and_warns_about_one_of_its_form_for_another_url(browser) -> None:
    text, log, _ = render(browser, "", "claude")
    assert text == "Hello from the widget"
    text, log, _ = render(browser, claude_widget_domain("https://books.example.com/mcp"), "claude")
    assert text == "Hello from the widget"  # this machine's URL is not the one Claude will be given
    assert any(e["level"] == "warn" and "not the one Claude derives here" in e["message"] for e in log), log
