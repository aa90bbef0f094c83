"""What goes wrong in the dev loop, said where the developer looks (issue 36), in a real browser on `appsdk dev`:
a widget that throws marks its run and prints one line in dev's terminal, named by its template's line; the
crash of a call the workbench makes again by itself after a save is said to be that re-run's.

Screenshots go to $APPSDK_TEST_SCREENSHOTS when it is set (to look at them), else to the test's tmp folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from preview_helpers import NEEDS_CHROMIUM
from test_workbench_browser import open_workbench, wait_run
from test_workbench_seams import Dev, crashing_project, screenshot

from appsdk_cli.scaffold import scaffold

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM

# Markup and a terminal control in the error's text: the terminal shows them, it does not obey them.
THROWS = '<script>\nthrow new Error("the shelf [red]collapsed[/] \\u001b[2J");\n</script>\n</body>'


def test_a_widget_that_throws_marks_its_run_and_says_where_in_the_template_on_the_terminal(
    browser, tmp_path: Path
) -> None:
    # Not the `page` fixture, which fails a test whose page threw: here the widget (in a frame) throws on purpose.
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    project = scaffold("book-club", tmp_path).path
    widget = project / "widgets" / "book-list.html"
    widget.write_text(widget.read_text().replace("</body>", THROWS, 1))
    line = next(n for n, text in enumerate(widget.read_text().splitlines(), 1) if "throw new Error" in text)
    dev = Dev(project)
    try:
        open_workbench(page, dev.url)
        page.click("#run-button")
        run = wait_run(page)
        assert run["status"] == "done" and not run["result"].get("isError"), run
        card = page.locator(".run").first
        page.wait_for_function("() => window.appsdkWorkbench.runs()[0].widgetError", timeout=20_000)
        place = f"(ui://widget/book-list.html:{line})"
        # The card is marked, and names the template's line, as `appsdk test` does: not the view's.
        assert card.get_attribute("data-outcome") == "error"
        assert card.locator(".status-text").text_content().endswith("its widget threw")
        problem = card.locator(".run-problem")
        assert problem.is_visible()
        assert problem.text_content().startswith("The widget threw: Uncaught Error: the shelf [red]collapsed[/]")
        assert place in problem.text_content() and "/view:" not in problem.text_content(), problem.text_content()
        card.scroll_into_view_if_needed()
        screenshot(page, "workbench-widget-threw.png", tmp_path)
    finally:
        output = dev.stop()
        context.close()
    assert set(errors) <= {"the shelf [red]collapsed[/] \x1b[2J"}, errors  # the widget's, none of the page's
    assert dev.process.returncode == 0, output
    said = [text for text in output.splitlines() if "widget error" in text]
    assert len(said) == 1, output
    assert said[0].startswith("widget error in list-books (run #1): Uncaught Error: the shelf [red]collapsed[/]")
    assert said[0].endswith(place) and "\\x1b[2J" in said[0] and "\x1b" not in said[0], said


def test_the_workbenchs_re_run_after_a_save_says_its_crash_is_that_re_runs(page, tmp_path: Path) -> None:
    project = crashing_project(tmp_path)
    dev = Dev(project)
    try:
        open_workbench(page, dev.url)
        page.click("#run-button")
        run = wait_run(page)
        assert run["result"]["isError"] is True, run
        # A save that fixes nothing: the workbench calls list-books again by itself, and it raises again.
        server = project / "server.py"
        server.write_text(server.read_text() + "\n# a comment, nothing fixed\n")
        page.wait_for_function("() => window.appsdkWorkbench.reloads >= 1", timeout=30_000)
        run = wait_run(page, calls=2, timeout=30_000)
        assert run["result"]["isError"] is True, run
        card = page.locator(".run").first
        assert "re-run by the workbench after the save of server.py" in card.locator(".run-meta").text_content()
        card.scroll_into_view_if_needed()
        screenshot(page, "workbench-rerun-crash.png", tmp_path)
    finally:
        output = dev.stop()
    assert dev.process.returncode == 0, output
    crashes = [text for text in output.splitlines() if "list-books raised" in text]
    assert len(crashes) == 2, output
    assert "re-run" not in crashes[0], crashes  # the user's own call
    assert re.search(
        r"\(the workbench's re-run of run #1 list-books\(.*\) after the save of server\.py\)$", crashes[1]
    ), crashes


def test_a_widget_throwing_in_a_loop_is_a_few_lines_in_the_terminal_not_a_flood(browser, tmp_path: Path) -> None:
    project = scaffold("book-club", tmp_path).path
    widget = project / "widgets" / "book-list.html"
    ticks = "for (let n = 1; n <= 8; n++) setTimeout(() => { throw new Error(`tick ${n}`); }, n * 50);"
    loop = f"<script>\n{ticks}\n</script>\n</body>"
    widget.write_text(widget.read_text().replace("</body>", loop, 1))
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    dev = Dev(project)
    try:
        open_workbench(page, dev.url)
        page.click("#run-button")
        wait_run(page)
        page.wait_for_function(
            "() => (window.appsdkWorkbench.runs()[0].widgetError || '').includes('tick 8')", timeout=20_000
        )
    finally:
        output = dev.stop()
        context.close()
    said = [text for text in output.splitlines() if "widget error" in text]
    assert [text.split(": Uncaught Error: ")[1].split(" (")[0] for text in said] == ["tick 1", "tick 2", "tick 3"], said


def test_the_log_panel_names_a_widget_error_by_its_templates_line(browser, tmp_path: Path) -> None:
    # Not the `page` fixture, which fails a test whose page threw: here the widget (in a frame) throws on purpose.
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    project = scaffold("book-club", tmp_path).path
    widget = project / "widgets" / "book-list.html"
    widget.write_text(widget.read_text().replace("</body>", THROWS, 1))
    line = next(n for n, text in enumerate(widget.read_text().splitlines(), 1) if "throw new Error" in text)
    dev = Dev(project)
    try:
        open_workbench(page, dev.url)
        page.click("#run-button")
        wait_run(page)
        page.locator('[role="tab"][data-panel="log"]').click()
        # The error's line and its stack, both named by the template (the server names them, host/place.py),
        # as the run card and `appsdk test` name them: never the served view's /view:NNN.
        logged = page.locator("#log-entries li[data-level='error']", has_text="the shelf")
        logged.first.wait_for(timeout=20_000)
        text = logged.first.text_content() or ""
        assert f"(ui://widget/book-list.html:{line})" in text, text
        assert "/view:" not in (page.locator("#log-entries").text_content() or ""), text
        screenshot(page, "workbench-log-panel-widget-error.png", tmp_path)
    finally:
        output = dev.stop()
        context.close()
    assert dev.process.returncode == 0, output
