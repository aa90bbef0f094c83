"""`appsdk test` and appsdk's pytest plugin, driven through real pytest runs in child processes.

The scaffold's own suite (rendered book list in chatgpt and mcp-apps, light and dark, snapshots written
on the first run and compared on the next), a widget that throws at load (one line naming the template's
line), a restyled widget (mismatch, actual and diff images written, --update-snapshots accepted), and a
third-party MCP Apps server from tests/interop through `appsdk test --url`'s generated smoke suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import INTEROP, RunningServer, dead_url, free_port, serve, stop
from preview_helpers import CHROMIUM

from appsdk_cli.host.place import SourcePlace
from appsdk_cli.scaffold import scaffold
from appsdk_cli.testing.matrix import host_cases
from appsdk_cli.testing.run import read_outcomes
from appsdk_cli.testing.smoke import built_arguments, smoke_cases
from appsdk_cli.testing.snapshots import file_name

APPSDK = [sys.executable, "-m", "appsdk_cli"]
TITLES = ["Frankenstein", "Pride and Prejudice", "The Time Machine"]


def needs_chromium() -> None:
    """Skip where there is no Chromium; in CI, where there must be one, fail instead."""
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing in CI: apt-get install chromium-headless-shell")
        pytest.skip("Chromium is not installed (apt-get install chromium-headless-shell); CI installs it")


def run(command: list[str], cwd: Path, *, env: dict[str, str] | None = None, timeout: float = 180):
    # CI=true makes a missing snapshot fail; these runs are a developer's first runs.
    environment = {k: v for k, v in os.environ.items() if k != "CI"} | (env or {})
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment)


@pytest.fixture(scope="module")
def book_club_template(tmp_path_factory) -> Path:
    return scaffold("book-club", tmp_path_factory.mktemp("apptest")).path


@pytest.fixture
def project(book_club_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "book-club"
    shutil.copytree(book_club_template, copy)
    return copy


# --- pure parts ------------------------------------------------------------------------------------------


def test_the_matrix_names_each_case_by_profile_and_theme():
    cases = host_cases(profiles=["chatgpt", "mcp-apps"], themes=["light", "dark"])
    assert [c.id for c in cases] == ["chatgpt-light", "chatgpt-dark", "mcp-apps-light", "mcp-apps-dark"]
    with_modes = host_cases("claude", modes=["inline", "fullscreen"], devices=["mobile"])
    assert [c.id for c in with_modes] == ["claude-light-inline-mobile", "claude-light-fullscreen-mobile"]
    assert with_modes[1].display_mode == "fullscreen" and with_modes[1].device == "mobile"
    with pytest.raises(ValueError, match="unknown profile 'gemini'"):
        host_cases(profiles=["gemini"])
    with pytest.raises(ValueError, match="unknown argument 'colours'"):
        host_cases(colours=["red"])


def test_smoke_arguments_come_from_defaults_examples_and_enums():
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "examples": ["Paris"]},
            "unit": {"enum": ["c", "f"]},
            "days": {"type": "integer", "default": 3},
            "note": {"type": "string"},
        },
        "required": ["city", "unit", "days"],
    }
    assert built_arguments(schema) == ({"city": "Paris", "unit": "c", "days": 3}, None)
    schema["required"].append("note")
    assert built_arguments(schema)[1] == "the required argument 'note' has no default, example or enum"
    why = built_arguments(schema)[1]
    assert why == "the required argument 'note' has no default, example or enum"
    widget = {
        "name": "w",
        "inputSchema": schema,
        "annotations": {"readOnlyHint": True},
        "_meta": {"ui": {"resourceUri": "ui://w"}},
    }
    plain = {"name": "p", "inputSchema": {"type": "object"}}
    cases = smoke_cases([widget, plain])
    assert [c.id for c in cases] == ["w-chatgpt", "w-mcp-apps", "w-claude"]
    assert all(c.skip == why for c in cases)


def test_snapshot_names_and_error_places():
    assert file_name("test_x[chatgpt-dark]") == "test_x-chatgpt-dark"
    place = SourcePlace("http://view-ab.localhost:5/view", "ui://widget/w.html", 40)
    assert place.place("Uncaught Error: boom (http://view-ab.localhost:5/view:52)") == (
        "Uncaught Error: boom (ui://widget/w.html:12)"
    )


def test_the_summary_counts_come_from_the_plugins_outcomes(tmp_path: Path):
    summary = tmp_path / "outcomes.json"
    summary.write_text(
        '{"exit": 1, "tests": {"t.py::a": {"outcome": "passed", "line": ""},'
        ' "t.py::b": {"outcome": "failed", "line": "boom"}, "t.py::c": {"outcome": "skipped", "line": "no"},'
        ' "t.py::d": {"outcome": "error", "line": "setup broke"}}}'
    )
    outcome = read_outcomes(summary, 1)
    assert (outcome.passed, outcome.failed, outcome.errors, outcome.skipped, outcome.exit_code) == (1, 1, 1, 1, 1)
    assert [(f.test, f.line) for f in outcome.failures] == [("t.py::b", "boom"), ("t.py::d", "setup broke")]
    assert read_outcomes(tmp_path / "missing.json", 4).exit_code == 2


def test_loading_the_plugin_imports_nothing_heavy():
    """pytest loads the plugin in every project with appsdk installed, whether it renders widgets or not."""
    script = (
        "import sys, appsdk_cli.testing.plugin\n"
        "heavy = ('mcp', 'playwright', 'httpx', 'rich', 'typer', 'appsdk_cli.host')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr


# --- the command line, without a browser ------------------------------------------------------------------


def test_no_tests_is_exit_1_and_a_bad_pytest_option_is_exit_2(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "empty"\n')  # a project without tests
    empty = run([*APPSDK, "test"], tmp_path)
    assert empty.returncode == 1, empty.stdout + empty.stderr
    assert "appsdk test: no tests ran" in empty.stdout
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    bad = run([*APPSDK, "test", "--", "--no-such-option"], tmp_path)
    assert bad.returncode == 2, bad.stdout + bad.stderr
    both = run([*APPSDK, "test", "--url", "http://127.0.0.1:9/mcp", "--stdio", "x"], tmp_path)
    assert both.returncode == 2 and "either --url or --stdio" in both.stderr


def test_the_smoke_suite_of_a_dead_server_fails_in_one_line(tmp_path: Path):
    nowhere = dead_url()
    result = run([*APPSDK, "test", "--url", nowhere], tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "appsdk test (the generated smoke suite): 1 failed" in result.stdout
    server = nowhere.removeprefix("http://")
    # Why, once (pytest's FAILURES section); the summary lists the test, named after the server.
    assert result.stdout.count(f"cannot reach the MCP server at {nowhere}") == 1, result.stdout
    assert f"✗ {server}::test_widget_renders[server]\n" in result.stdout


def test_without_chromium_the_rendered_tests_skip_naming_the_package(project: Path):
    result = run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/test_widget.py"],
        project,
        env={"APPSDK_CHROMIUM": str(project / "no-such-browser")},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 skipped" in result.stdout
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped and all("apt-get install chromium-headless-shell" in line for line in skipped)


# --- rendered -----------------------------------------------------------------------------------------------


@pytest.mark.browser
def test_the_scaffold_suite_passes_writes_its_snapshots_then_compares(project: Path):
    needs_chromium()
    junit = project / "report.xml"
    # The rendered tests first: the asyncio of the scaffold's own tests must still work after Playwright ran.
    order = ["tests/test_widget.py", "tests/test_server.py"]
    first = run([*APPSDK, "test", "--junitxml", str(junit), "--", "-v", *order], project)
    assert first.returncode == 0, first.stdout + first.stderr
    for case in ("chatgpt-light", "chatgpt-dark", "mcp-apps-light", "mcp-apps-dark"):
        assert f"test_the_book_list_shows_the_three_picks[{case}] PASSED" in first.stdout
        shot = (
            project / "tests" / "__snapshots__" / "test_widget" / f"test_the_book_list_shows_the_three_picks-{case}.png"
        )
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert first.stdout.count("new snapshot written") == 4
    assert "appsdk test (tests): 10 passed in" in first.stdout
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    assert len(list(cases)) == 10
    assert f"JUnit report: {junit}" in first.stdout
    second = run([*APPSDK, "test"], project)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "snapshot written" not in second.stdout


@pytest.mark.browser
def test_a_widget_that_throws_at_load_fails_with_the_cause_in_one_line(project: Path):
    needs_chromium()
    widget = project / "widgets" / "book-list.html"
    html = widget.read_text()
    anchor = '  const list = document.getElementById("books");\n'
    widget.write_text(html.replace(anchor, anchor + '  throw new Error("the shelf collapsed");\n', 1))
    line = html[: html.index(anchor)].count("\n") + 2
    result = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_widget.py"], project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "5 failed" in result.stdout
    cause = f"Uncaught Error: the shelf collapsed (ui://widget/book-list.html:{line})"
    causes = [text for text in result.stdout.splitlines() if cause in text]
    assert len(causes) >= 5, result.stdout
    assert "list-books in mcp-apps (dark, inline, desktop): " + cause in result.stdout
    assert "Timeout" not in result.stdout and "During handling" not in result.stdout
    assert "Traceback" not in result.stdout


@pytest.mark.browser
def test_a_restyled_widget_fails_its_snapshot_until_the_change_is_accepted(project: Path):
    needs_chromium()
    pick = "tests/test_widget.py::test_the_book_list_shows_the_three_picks[chatgpt-dark]"
    first = run([*APPSDK, "test", "--", pick], project)
    assert first.returncode == 0, first.stdout + first.stderr
    folder = project / "tests" / "__snapshots__" / "test_widget"
    name = "test_the_book_list_shows_the_three_picks-chatgpt-dark"
    widget = project / "widgets" / "book-list.html"
    # Last night's CSS change: the dark theme's text now nearly matches its cards.
    widget.write_text(widget.read_text().replace("--text: #f2f2ef;", "--text: #3a3a3a;"))

    changed = run([*APPSDK, "test", "--", pick], project)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert f"the widget differs from tests/__snapshots__/test_widget/{name}.png" in changed.stdout
    assert (folder / f"{name}.actual.png").is_file() and (folder / f"{name}.diff.png").is_file()
    assert f"✗ {pick}\n" in changed.stdout

    accepted = run([*APPSDK, "test", "--update-snapshots", "--", pick], project)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "updated snapshot written" in accepted.stdout
    assert not (folder / f"{name}.actual.png").exists() and not (folder / f"{name}.diff.png").exists()
    again = run([*APPSDK, "test", "--", pick], project)
    assert again.returncode == 0, again.stdout + again.stderr


WIDGET_API_TEST = """
import pytest


@pytest.mark.hosts("chatgpt", "mcp-apps")
def test_the_counter(render_widget, appsdk_host):
    widget = render_widget("show-counter", {"start": 5, "label": "taps"})
    assert widget.element("#count").text == "5" and widget.element("#label").text == "taps"
    if appsdk_host.profile == "chatgpt":  # the fixture keeps widget state through window.openai only
        widget.click("#save")
        widget.wait_for(lambda: widget.state == {"saved": 105}, what="the saved state")
    widget.click("#inc")
    call = widget.wait_for_message("tool-call")
    assert call.params.get("name") == "increment"
    widget.wait_for(lambda: widget.element("#count").text == "7", what="the count 7")
    widget.click(text="follow up")
    assert widget.wait_for_message("follow-up").text == "Tell me more about the counter"
    widget.click("#open")
    link = widget.wait_for_message("link")
    assert "https://example.com/docs" in str(link.params)
    widget.click("#network")
    widget.wait_for(lambda: widget.csp_violations, what="a CSP violation")
    assert any("127.0.0.1:7" in line.message for line in widget.csp_violations)
    assert any("counter widget says hello" in line.message for line in widget.log)
    channel = {"chatgpt": "openai", "mcp-apps": "bridge"}[appsdk_host.profile]
    assert {m.channel for m in widget.messages} == {channel}
    assert widget.screenshot()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
"""


@pytest.mark.browser
def test_a_test_reads_and_drives_the_widget_over_either_api(counter_app: RunningServer, tmp_path: Path):
    needs_chromium()
    (tmp_path / "test_counter.py").write_text(WIDGET_API_TEST)
    result = run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "--appsdk-url", counter_app.url], tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_the_counter[chatgpt-light] PASSED" in result.stdout
    assert "test_the_counter[mcp-apps-light] PASSED" in result.stdout


@pytest.fixture
def vanillajs(node_clients) -> Iterator[RunningServer]:
    port = free_port()
    entry = INTEROP / "node_modules" / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist" / "index.js"
    server = serve(["node", "--import", "./loopback.mjs", str(entry)], port, cwd=INTEROP, env={"PORT": str(port)})
    yield server
    stop(server.process)


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("node") is None, reason="NODE IS MISSING: the interop servers are node programs")
def test_appsdk_test_url_smoke_tests_a_third_party_mcp_apps_server(vanillajs: RunningServer, tmp_path: Path):
    needs_chromium()
    # Run from a folder that is no project but holds others' tests below it (as /tmp or a home folder
    # does): the smoke suite runs, and nothing of theirs is collected.
    elsewhere = tmp_path / "someone-else" / "tests"
    elsewhere.mkdir(parents=True)
    (elsewhere / "test_theirs.py").write_text("def test_theirs():\n    raise SystemExit('collected')\n")
    # get-time says nothing of readOnlyHint: only --include-writes calls it.
    skipped = run([*APPSDK, "test", "--url", vanillajs.url], tmp_path)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "not called: get-time does not say readOnlyHint: true" in skipped.stdout
    result = run([*APPSDK, "test", "--url", vanillajs.url, "--include-writes", "--", "-v"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for profile in ("chatgpt", "mcp-apps", "claude"):
        # Each case is named after the server (-vv adds where pytest read it from, after "<-").
        case = f"{vanillajs.url.removeprefix('http://')}::test_widget_renders[get-time-{profile}]"
        assert any(line.startswith(case) and "PASSED" in line for line in lines), result.stdout
    assert "appsdk test (the generated smoke suite): 3 passed" in result.stdout


def test_appsdk_test_outside_a_project_says_where_to_run_it(tmp_path: Path):
    (tmp_path / "stray").mkdir()
    (tmp_path / "stray" / "test_theirs.py").write_text("def test_theirs():\n    pass\n")
    result = run([*APPSDK, "test"], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path} is no project folder (no pyproject.toml): run appsdk test in your app's folder,"
        " give its PATH, or give --url URL to smoke-test a server"
    ]
    assert "test_theirs" not in result.stdout
