"""The widget's size, as each host profile plays it: what ui/initialize tells the view of its container
(hostContext.containerDimensions) and what the frame does agree, in the preview page and side by side in
the workbench. Real browser (Debian's Chromium through Playwright), real server (tests/fixtures/sizing_app.py).

ChatGPT's inline card follows the view's height (profiles.py says why and cites it): a view 400 px tall
that reports nothing is framed at 400 px (the host measures it), and one that reports 900 px grows to it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from conftest import FIXTURES, RunningServer, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, view_frame
from test_workbench_browser import open_workbench, wait_run

from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM

PROFILES = ("chatgpt", "mcp-apps", "claude")


@pytest.fixture(scope="module")
def sizing_app() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "sizing_app.py"), str(port)], port)
    yield server
    stop(server.process)


def seen_by(view) -> dict:
    view.wait_for_function("() => document.getElementById('seen').textContent.includes('container')")
    return json.loads(view.evaluate("() => document.getElementById('seen').textContent"))


def settled_height(frame_locator_owner, selector: str = "#widget") -> float:
    """The widget frame's height once it stopped changing (the size arrives a frame or two after load)."""
    owner = frame_locator_owner
    owner.wait_for_function(
        "(s) => { const f = document.querySelector(s); if (!f) return false;"
        " const h = f.getBoundingClientRect().height; const was = f.dataset.lastHeight; f.dataset.lastHeight = h;"
        " return was !== undefined && Number(was) === h; }",
        arg=selector,
        polling=200,
    )
    return owner.evaluate("(s) => document.querySelector(s).getBoundingClientRect().height", selector)


def assert_agree(told: dict, frame: float, inner: float, reported: float | None) -> None:
    """The view was told a fixed height: the frame is it; a maxHeight: the frame follows up to it; neither:
    the frame follows the view. And the view's own viewport is the frame."""
    assert abs(inner - frame) <= 1, (told, frame, inner)
    if "height" in told:
        assert frame == told["height"], (told, frame)
    elif reported is not None:
        assert frame == min(reported, told.get("maxHeight", reported)), (told, frame, reported)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_frame_does_what_the_view_is_told_in_each_profile(browser, sizing_app: RunningServer, profile: str) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 1000})
    page = context.new_page()
    try:
        for tool, reported in (("fixed", 400), ("grow", 900)):
            preview = PreviewServer(prepare(Target(url=sizing_app.url), tool, []), PreviewOptions()).start()
            try:
                page.goto(preview.page_url(profile=profile))
                page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled")
                seen = seen_by(view_frame(page))
                frame = settled_height(page)
                seen = seen_by(view_frame(page))
                assert_agree(seen["container"], frame, seen["innerHeight"], reported)
                assert "height" not in seen["container"] and "maxHeight" not in seen["container"]
                assert frame == reported, (profile, tool, frame)
                if profile == "chatgpt":
                    assert seen["container"]["maxWidth"] == 768
            finally:
                preview.close()
    finally:
        context.close()


def test_side_by_side_each_profile_frames_its_view_as_it_told_it(page, sizing_app: RunningServer) -> None:
    from appsdk_cli.workbench import Workbench

    with Workbench(Target(url=sizing_app.url)) as bench:
        open_workbench(page, bench.url)
        page.check("#side-by-side")
        page.evaluate(
            "() => fetch('/api/runs', {method: 'POST', headers: {'Content-Type': 'application/json'},"
            " body: JSON.stringify({tool: 'grow', arguments: {}})})"
        )
        wait_run(page)
        frames = page.locator(".run").first.locator(".host-frame")
        assert frames.count() == 3
        for index in range(3):
            profile = frames.nth(index).get_attribute("data-profile")
            host = frames.nth(index).locator("iframe").element_handle().content_frame()
            host.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled")
            seen = seen_by(view_frame(host))
            frame = settled_height(host)
            seen = seen_by(view_frame(host))
            assert_agree(seen["container"], frame, seen["innerHeight"], 900)
            # The workbench's frame around the host page shows the whole widget: nothing is cut off.
            outer = frames.nth(index).locator("iframe").bounding_box()["height"]
            assert outer >= frame, (profile, outer, frame)
