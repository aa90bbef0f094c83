"""The book list as hosts show it: rendered in ChatGPT and in a standard MCP Apps host, light and dark.

appsdk's pytest plugin gives these tests `render_widget`: it serves the app named by [tool.appsdk] app
once per run, calls the tool, and renders its widget in appsdk's local host in Chromium, as
`appsdk preview` shows it. A widget that throws, is blocked by its CSP or never gets its data fails
with that cause. Without Chromium these tests skip, naming what to install.

The first run writes the pictures to tests/__snapshots__/ (commit them); later runs compare with them,
and a change you meant is accepted with `appsdk test --update-snapshots`.
"""

from __future__ import annotations

import pytest

TITLES = ["Frankenstein", "Pride and Prejudice", "The Time Machine"]


@pytest.mark.hosts(profiles=["chatgpt", "mcp-apps"], themes=["light", "dark"])
def test_the_book_list_shows_the_three_picks(render_widget):
    widget = render_widget("list-books", {"month": "June"})
    assert widget.texts(".title") == TITLES
    widget.assert_snapshot()


def test_an_empty_list_says_so(render_widget):
    # The widget's data given directly (tests/widget_states/empty.json), without calling the tool.
    widget = render_widget("list-books", data="widget_states/empty.json")
    assert "No picks yet." in widget.text
    assert widget.texts(".title") == []
