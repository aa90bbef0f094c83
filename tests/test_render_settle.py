"""When a rendered widget counts as settled: as soon as it is idle, and never before it finished rendering.

The host page no longer waits a fixed quiet window: the bootstrap inside the widget reports each change
to its document and the work it has pending (short timers, fetches, images, fonts), so the host settles
a widget the moment it goes idle. These widgets render in two steps, the second one 300 ms after they
took their data (a timer, or an await on one), in both APIs; a test reading them right after render()
and a screenshot must see the second step. Real app server, real host, real Chromium.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from preview_helpers import NEEDS_CHROMIUM

from appsdk_cli.browser.capture import png_size
from appsdk_cli.scaffold import scaffold
from appsdk_cli.testing.app import AppLocation, start_app
from appsdk_cli.testing.harness import Harness
from appsdk_cli.testing.rendering import Rendering

pytestmark = [pytest.mark.browser, NEEDS_CHROMIUM]

TITLES = ["Frankenstein", "Pride and Prejudice", "The Time Machine"]
# The scaffold's widget renders at once; each of these renders an empty list first, then the books.
TWO_STEPS = {
    "timer": """
  const renderNow = render;
  render = (output) => {
    renderNow({ books: [] });
    setTimeout(() => renderNow(output), 300);
  };
""",
    # The same height twice (placeholder titles, then the real ones): no resize tells the host.
    "await": """
  const renderNow = render;
  render = async (output) => {
    const books = (output && output.books) || [];
    renderNow({ books: books.map(() => ({ title: "…", author: "…" })) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    renderNow(output);
  };
""",
}


def two_step_project(folder: Path, kind: str) -> Path:
    project = scaffold("book-club", folder).path
    widget = project / "widgets" / "book-list.html"
    html = widget.read_text(encoding="utf-8")
    # `function render` becomes a variable the patch can wrap, before anything calls it.
    html = html.replace("  function render(output) {", "  let render = function (output) {", 1)
    html = html.replace("  function applyTheme(theme) {", TWO_STEPS[kind] + "\n  function applyTheme(theme) {", 1)
    assert "let render = function" in html and "renderNow" in html
    widget.write_text(html, encoding="utf-8")
    return project


@pytest.fixture(scope="module", params=sorted(TWO_STEPS))
def harness(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    project = two_step_project(tmp_path_factory.mktemp(f"settle-{request.param}"), request.param)
    app = start_app(AppLocation.of(project))
    try:
        with Harness(app) as harness:
            yield harness
    finally:
        app.close()


@pytest.mark.parametrize("profile", ["chatgpt", "mcp-apps"])
def test_a_widget_that_renders_in_two_steps_is_read_after_the_second(harness: Harness, profile: str):
    widget = harness.render(Rendering(tool="list-books", arguments={"month": "June"}, profile=profile))
    try:
        assert widget.texts(".title") == TITLES
        assert widget.texts(".author") == ["by Mary Shelley", "by Jane Austen", "by H. G. Wells"]
        # Three cards under the header: an empty list would be one line high.
        _, height = png_size(widget.screenshot())
        assert height > 150
    finally:
        widget.close()
