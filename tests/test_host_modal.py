"""window.openai.requestModal in a real browser: the host's own modal, a second view of the widget.

Debian's Chromium through Playwright against tests/fixtures/modal_app.py, a real MCP server whose board
widget opens modals (its own template, or the registered ui://widget/detail.html) and reads
window.openai.view in each view. The modal is a second view through the same origins as the inline one
(its own sandbox proxy frame, window.openai channel and bridge endpoint); closing it leaves the inline
view live, with its state.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, VIEW_IN_PROXY, view_frame, widget_view

from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

FIXTURE = Path(__file__).parent / "fixtures" / "modal_app.py"
DETAIL = "ui://widget/detail.html"

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM


@pytest.fixture(scope="module")
def modal_app() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(FIXTURE), str(port)], port)
    yield server
    stop(server.process)


@pytest.fixture
def preview(modal_app: RunningServer) -> Iterator[PreviewServer]:
    server = PreviewServer(prepare(Target(url=modal_app.url), "show-board", ["total=3"]), PreviewOptions()).start()
    yield server
    server.close()


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, f"the host page threw: {errors}"


def open_board(page, preview: PreviewServer):
    page.goto(preview.page_url())
    page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled")
    inline = widget_view(page)
    inline.locator("#mode", has_text="inline").wait_for(timeout=15_000)
    return inline


def modal_view(page):
    """The modal's document, inside its own sandbox proxy frame."""
    return page.frame_locator("iframe#modal-frame").frame_locator(VIEW_IN_PROXY)


def request_modal(page, options: str) -> str:
    """window.openai.requestModal(options) from the inline view: "opened", or "rejected: <message>"."""
    return view_frame(page).evaluate(f"window.openModal({options})")


def log_lines(page, level: str | None = None) -> list[str]:
    entries = page.evaluate("() => window.appsdkPreview.log")
    return [e["message"] for e in entries if level is None or e["level"] == level]


def wait_closed(page) -> None:
    page.locator("#modal").wait_for(state="hidden", timeout=10_000)
    assert page.locator("iframe#modal-frame").count() == 0


def assert_inline_still_works(page, inline, clicks: str) -> None:
    """The inline view underneath is the same document, with its state, and still reaches the host."""
    assert page.locator("iframe#widget").count() == 1
    assert inline.locator("#mode").text_content() == "inline"
    assert inline.locator("#clicks").text_content() == clicks
    inline.locator("#click").click()
    assert inline.locator("#clicks").text_content() == str(int(clicks) + 1)
    assert view_frame(page).evaluate("window.echo('still here')") == "still here"


def test_a_named_template_opens_in_the_modal_with_its_params_and_the_close_control_closes_it(page, preview) -> None:
    inline = open_board(page, preview)
    assert inline.locator("#params").text_content() == "null"
    inline.locator("#click").click()
    inline.locator("#click").click()

    opened = request_modal(page, f"{{template: '{DETAIL}', params: {{item: 7, tags: ['a']}}, title: 'Item 7'}}")
    assert opened == "opened"
    assert page.locator("#modal").is_visible()
    assert page.locator("#modal-title").text_content() == "Item 7"
    modal = modal_view(page)
    modal.locator("#mode", has_text="modal").wait_for(timeout=15_000)
    assert modal.locator("#params").text_content() == '{"item":7,"tags":["a"]}'
    assert modal.locator("#input").text_content() == '{"total":3}'
    # The modal's own bridge endpoint answered its ui/initialize and sent it the call's result.
    modal.locator("#bridge", has_text="chatgpt").wait_for(timeout=10_000)
    assert modal.locator("#bridge").text_content() == 'chatgpt {"total":3}'
    # The modal's frame is the sandbox proxy on the sandbox origin, framing the view origin's document.
    session = page.evaluate("() => fetch('/api/session').then((r) => r.json())")
    assert page.locator("iframe#modal-frame").get_attribute("src").startswith(session["sandboxOrigin"] + "/proxy?")
    modal_document = next(f for f in page.frames if f.url.startswith(session["viewOrigin"]) and "detail" in f.title())
    assert modal_document.parent_frame.url.startswith(session["sandboxOrigin"] + "/proxy?")
    # The inline view still says it is the inline one.
    assert inline.locator("#mode").text_content() == "inline"

    page.locator("#modal-close").click()
    wait_closed(page)
    assert_inline_still_works(page, inline, "2")
    assert any("the modal closed (the host's close button)" in line for line in log_lines(page))


def test_request_close_inside_the_modal_closes_only_the_modal(page, preview) -> None:
    inline = open_board(page, preview)
    inline.locator("#click").click()
    # No template: the call's own template, as the modal's view.
    assert request_modal(page, "{params: {step: 'review'}}") == "opened"
    modal = modal_view(page)
    modal.locator("#heading", has_text="Board (modal)").wait_for(timeout=15_000)
    assert modal.locator("#mode").text_content() == "modal"
    assert modal.locator("#params").text_content() == '{"step":"review"}'
    assert modal.locator("#total").text_content() == '{"total":3}'

    modal.locator("#close").click()
    wait_closed(page)
    assert_inline_still_works(page, inline, "1")
    assert any("requestClose from the modal" in line for line in log_lines(page))

    # The named template's own close button (requestClose) works the same.
    assert request_modal(page, f"{{template: '{DETAIL}'}}") == "opened"
    modal.locator("#params", has_text="null").wait_for(timeout=15_000)
    modal.locator("#close").click()
    wait_closed(page)
    assert_inline_still_works(page, inline, "2")


def test_escape_closes_the_modal_from_the_host_page_and_from_inside_it(page, preview) -> None:
    inline = open_board(page, preview)
    assert request_modal(page, "{}") == "opened"
    modal_view(page).locator("#mode", has_text="modal").wait_for(timeout=15_000)
    page.keyboard.press("Escape")  # the focus is on the host's close control
    wait_closed(page)

    assert request_modal(page, f"{{template: '{DETAIL}'}}") == "opened"
    modal = modal_view(page)
    modal.locator("#mode", has_text="modal").wait_for(timeout=15_000)
    modal.locator("#close").focus()
    modal.locator("#close").press("Escape")
    wait_closed(page)
    assert_inline_still_works(page, inline, "0")


def test_an_unknown_or_foreign_template_is_refused_with_one_line(page, preview) -> None:
    inline = open_board(page, preview)
    refused = request_modal(page, "{template: 'ui://widget/nope.html'}")
    assert refused.startswith("rejected: requestModal: ui://widget/nope.html is not a resource"), refused
    assert "\n" not in refused
    foreign = request_modal(page, "{template: 'https://example.com/page.html'}")
    assert (
        foreign == 'rejected: requestModal: template must be a ui:// resource URI, not "https://example.com/page.html"'
    )
    assert page.locator("#modal").is_hidden()
    errors = log_lines(page, "error")
    assert any(line.startswith("requestModal: ui://widget/nope.html is not a resource") for line in errors), errors
    assert any(line.startswith("requestModal: template must be a ui:// resource URI") for line in errors), errors
    # Refused, nothing opened: the next request opens.
    assert request_modal(page, f"{{template: '{DETAIL}'}}") == "opened"
    assert inline.locator("#mode").text_content() == "inline"


def test_one_modal_at_a_time(page, preview) -> None:
    open_board(page, preview)
    both = view_frame(page).evaluate(
        f"Promise.all([window.openModal({{}}), window.openModal({{template: '{DETAIL}'}})])"
    )
    assert both[0] == "opened"
    assert both[1] == "rejected: requestModal: a modal is already open (one at a time)"
    modal = modal_view(page)
    modal.locator("#mode", has_text="modal").wait_for(timeout=15_000)
    # Nor does the modal open another.
    inner = modal.locator("body").evaluate("() => window.openModal({})")
    assert inner == "rejected: requestModal: the modal is already open (one at a time)"
    assert page.locator("iframe#modal-frame").count() == 1


def test_with_a_modal_open_the_host_page_still_ignores_other_frames(page, preview) -> None:
    open_board(page, preview)
    assert request_modal(page, f"{{template: '{DETAIL}'}}") == "opened"
    modal_view(page).locator("#bridge", has_text="chatgpt").wait_for(timeout=15_000)
    # A frame that is neither view, even on the sandbox origin (a proxy page of its own), posts a bridge
    # request and offers a window.openai port: nothing answers it.
    page.evaluate(
        """async () => {
          const { sandboxOrigin } = await (await fetch("/api/session")).json();
          const stranger = document.createElement("iframe");
          stranger.name = "stranger";
          stranger.src = `${sandboxOrigin}/proxy?document=none`;
          const loaded = new Promise((resolve) => stranger.addEventListener("load", resolve, { once: true }));
          document.body.append(stranger);
          await loaded;
        }"""
    )
    stranger = page.frame(name="stranger")
    assert stranger is not None and "/proxy?" in stranger.url
    stranger.evaluate(
        """() => {
          const message = { jsonrpc: "2.0", id: 99, method: "ui/message", params: { role: "user", content: [] } };
          parent.postMessage(message, "*");
          const channel = new MessageChannel();
          parent.postMessage({ __appsdk: { type: "connect" } }, "*", [channel.port2]);
        }"""
    )
    page.wait_for_timeout(300)
    assert not any("ui/message" in line for line in log_lines(page))
    traffic = page.evaluate("() => window.appsdkPreview.traffic.map((r) => r.method)")
    assert "ui/message" not in traffic
    # Both views still have their own channels.
    assert view_frame(page).evaluate("window.echo('inline')") == "inline"
    page.locator("#modal-close").click()
    wait_closed(page)


def test_in_the_workbench_the_modal_overlays_the_widget_area_which_grows_to_hold_it(browser, modal_app) -> None:
    from appsdk_cli.workbench import Workbench

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        with Workbench(Target(url=modal_app.url)) as bench:
            page.goto(bench.url)
            page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
            page.locator('#tool-list [data-tool="show-board"]').click()
            page.click("#run-button")
            frame = page.locator(".run").first.locator(".host-frame iframe").first
            host_page = frame.element_handle(timeout=20_000).content_frame()
            host_page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled", timeout=20_000)
            inline = widget_view(frame.content_frame)
            inline.locator("#mode", has_text="inline").wait_for(timeout=15_000)
            before = frame.bounding_box()["height"]

            assert (
                view_frame(host_page).evaluate(f"window.openModal({{template: '{DETAIL}', params: {{item: 1}}}})")
                == "opened"
            )
            modal = frame.content_frame.frame_locator("iframe#modal-frame").frame_locator(VIEW_IN_PROXY)
            modal.locator("#bridge", has_text="chatgpt").wait_for(timeout=15_000)
            panel = host_page.locator("#modal-panel")
            # The workbench's frame grew to the modal's panel: none of it is cut off.
            page.wait_for_function(
                "(least) => document.querySelector('.host-frame iframe').getBoundingClientRect().height >= least",
                arg=panel.bounding_box()["height"],
            )
            grown = frame.bounding_box()["height"]
            assert grown > before
            assert modal.locator("#params").text_content() == '{"item":1}'

            host_page.locator("#modal-close").click()
            host_page.locator("#modal").wait_for(state="hidden", timeout=10_000)
            # And back to the inline view's own height (which the "opened" line made a little taller).
            inline_height = host_page.evaluate("() => document.getElementById('widget').getBoundingClientRect().height")
            page.wait_for_function(
                "(most) => document.querySelector('.host-frame iframe').getBoundingClientRect().height <= most",
                arg=inline_height + 4,
            )
            assert frame.bounding_box()["height"] < grown
            inline.locator("#click").click()
            assert inline.locator("#clicks").text_content() == "1"
    finally:
        context.close()


def test_a_modal_goes_with_the_view_that_opened_it(page, preview) -> None:
    open_board(page, preview)
    assert request_modal(page, f"{{template: '{DETAIL}'}}") == "opened"
    modal_view(page).locator("#bridge", has_text="chatgpt").wait_for(timeout=15_000)
    page.evaluate("() => window.appsdkPreview.reloadTemplate()")
    wait_closed(page)
    inline = widget_view(page)
    inline.locator("#mode", has_text="inline").wait_for(timeout=15_000)
    assert any("the modal closed (its widget reloaded)" in line for line in log_lines(page))
    # The reloaded view opens one again.
    assert request_modal(page, "{}") == "opened"


def test_the_hosts_changes_reach_the_open_modal_but_not_its_place(page, preview) -> None:
    open_board(page, preview)
    assert request_modal(page, f"{{template: '{DETAIL}'}}") == "opened"
    modal_view(page).locator("#bridge", has_text="chatgpt").wait_for(timeout=15_000)
    modal_document = next(f for f in page.frames if "/view?" in f.url and f.title() == "detail")
    page.evaluate("() => window.appsdkPreview.setTheme('dark')")
    modal_document.wait_for_function("() => window.openai.theme === 'dark'", timeout=10_000)
    page.evaluate("() => window.appsdkPreview.setDisplayMode('fullscreen')")
    view_frame(page).wait_for_function("() => window.openai.displayMode === 'fullscreen'", timeout=10_000)
    assert modal_document.evaluate("() => window.openai.displayMode") == "inline"
    # The modal stays over the inline view, fullscreen or not.
    assert page.locator("#modal").is_visible()
    page.locator("#modal-close").click()
    wait_closed(page)
