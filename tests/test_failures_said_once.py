"""`appsdk test` and `preview --screenshot` say each failure once (#36): pytest's FAILURES section says
why and appsdk's summary lists the tests after it (pytest's own short summary of them is left out); the
screenshot's list of problems is not preceded by the host log's line of the same error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import dead_url, serve_project, stop
from preview_helpers import CHROMIUM

from appsdk_cli.scaffold import scaffold

APPSDK = [sys.executable, "-m", "appsdk_cli"]
THROWN = "Uncaught TypeError: the shelf is missing"


def needs_chromium() -> None:
    """Skip where there is no Chromium; in CI, where there must be one, fail instead."""
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing in CI: apt-get install chromium-headless-shell")
        pytest.skip("Chromium is not installed (apt-get install chromium-headless-shell); CI installs it")


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "CI"}  # CI=true fails on a missing snapshot
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=240, env=environment)


@pytest.fixture
def throwing(tmp_path: Path) -> Path:
    """book-club whose widget throws as its script starts."""
    project = scaffold("book-club", tmp_path).path
    widget = project / "widgets" / "book-list.html"
    html = widget.read_text(encoding="utf-8")
    widget.write_text(
        html.replace(
            '<script type="module">\n', '<script type="module">\n  throw new TypeError("the shelf is missing");\n', 1
        )
    )
    return project


def throwing_line(project: Path) -> int:
    """The line of book-list.html that throws (1-based)."""
    lines = (project / "widgets" / "book-list.html").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if "the shelf is missing" in line)


def test_appsdk_test_says_a_failure_once(tmp_path: Path):
    nowhere = dead_url()
    result = run([*APPSDK, "test", "--url", nowhere], tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    said = result.stdout + result.stderr
    assert said.count(f"cannot reach the MCP server at {nowhere}") == 1, said
    server = nowhere.removeprefix("http://")  # the smoke suite's cases are named after the server
    assert f"✗ {server}::test_widget_renders[server]\n" in result.stdout
    assert "short test summary" not in said


def test_with_pytests_sections_off_the_summary_says_why(tmp_path: Path):
    nowhere = dead_url()
    result = run([*APPSDK, "test", "--url", nowhere, "--", "--tb=no"], tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    server = nowhere.removeprefix("http://")
    assert f"✗ {server}::test_widget_renders[server]: cannot reach the MCP server at {nowhere}" in result.stdout


@pytest.mark.browser
def test_appsdk_test_says_each_widget_failure_once(throwing: Path):
    needs_chromium()
    result = run([*APPSDK, "test", "--", "tests/test_widget.py"], throwing)
    assert result.returncode == 1, result.stdout + result.stderr
    said = result.stdout + result.stderr
    assert "appsdk test (tests): 5 failed" in result.stdout, said
    assert said.count(THROWN) == 5, said  # five tests failed, each said once
    failed = [line for line in result.stdout.splitlines() if line.strip().startswith("✗")]
    assert len(failed) == 5 and not [line for line in failed if THROWN in line], said


@pytest.mark.browser
def test_preview_screenshot_says_a_widget_error_once(throwing: Path, tmp_path: Path):
    needs_chromium()
    server = serve_project(throwing)
    try:
        shot = tmp_path / "shot.png"
        result = run([*APPSDK, "preview", "list-books", "--url", server.url, "--screenshot", str(shot)], throwing)
    finally:
        stop(server.process)
    said = result.stdout + result.stderr
    assert result.returncode == 1 and shot.is_file(), said
    assert said.count(THROWN) == 1, said
    # Named in the template, as `appsdk test` names it, never the served view's line; and alone: that the
    # widget never read its data follows from it, and is no second problem.
    thrown_at = throwing_line(throwing)
    assert f"✗ {THROWN} (ui://widget/book-list.html:{thrown_at})" in result.stderr, said
    assert "/view:" not in said, said
    assert "never read its data" not in said, said
    assert "(1 problem above" in said, said


@pytest.mark.browser
@pytest.mark.anyio
async def test_the_agents_screenshot_names_a_widget_error_at_its_template_line(throwing: Path, anyio_backend):
    """appsdk mcp's screenshot says what preview --screenshot says: the template's line, the root cause alone."""
    import json

    from test_agent_mcp import agent_session, start_dev

    needs_chromium()
    dev, _ = start_dev(throwing)
    try:
        async with agent_session(throwing.parent) as agent:
            shot = await agent.call_tool("screenshot", {"path": throwing.name, "tool": "list-books"})
    finally:
        stop(dev)
    said = "\n".join(block.text for block in shot.content if block.type == "text")
    assert shot.is_error, said
    answer = shot.structured_content or {}
    if not answer:  # the answer as data, inside its untrusted-data fence
        answer = json.loads(said.split(">>>\n", 1)[1].rsplit("\n<<<end-untrusted-data", 1)[0])
    thrown_at = throwing_line(throwing)
    assert answer["problems"] == [f"{THROWN} (ui://widget/book-list.html:{thrown_at})"], said
    assert "(1 problem;" in said, said
