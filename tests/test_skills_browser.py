"""The workbench shows the server's skills (SEP-2640) in a real browser (Debian's Chromium through
Playwright): the scaffold's skill with its files and digests, SKILL.md shown as text and checked against
its digest, a file changed on its way flagged, and skill text that looks like HTML staying text.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import REPO, RunningServer, free_port, serve, serve_project, stop
from preview_helpers import NEEDS_CHROMIUM

from appsdk_cli.connection import Target
from appsdk_cli.scaffold import scaffold
from appsdk_cli.workbench import Workbench

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM
CHECK_FIXTURES = REPO / "tests" / "fixtures" / "check"


def open_workbench(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")


def test_the_scaffolds_skill_is_listed_and_its_skill_md_shown_verified(page, app_server: RunningServer) -> None:
    with Workbench(Target(url=app_server.url)) as bench:
        open_workbench(page, bench.url)
        skills = page.locator("#skills")
        assert skills.is_visible()
        assert page.locator("#skill-count").text_content() == "1"
        skill = page.locator("#skill-list .skill")
        assert skill.locator(".skill-name").text_content() == "book-club-picks"
        skill.locator("summary").click()
        assert "Use when the user asks" in skill.locator(".skill-description").text_content()
        files = skill.locator(".skill-file-uri").all_text_contents()
        assert files == ["skill://book-club-picks/SKILL.md", "skill://book-club-picks/reference/answers.md"]
        assert all(d.startswith("sha256:") and len(d) == 71 for d in skill.locator(".skill-digest").all_text_contents())
        status = skill.locator(".skill-status")
        page.wait_for_function("() => document.querySelector('#skill-list .skill-status').textContent.startsWith('✓')")
        assert status.text_content() == "✓ matches its sha256 digest and size"
        assert skill.locator(".skill-text").text_content().startswith("---\nname: book-club-picks\n")


def test_a_skill_file_changed_on_its_way_is_flagged(page) -> None:
    port = free_port()
    fixture = CHECK_FIXTURES / "skill-digest-mismatch"
    server = serve([sys.executable, str(CHECK_FIXTURES / "serve.py"), str(fixture), str(port)], port)
    try:
        with Workbench(Target(url=f"http://127.0.0.1:{port}/mcp")) as bench:
            open_workbench(page, bench.url)
            skill = page.locator("#skill-list .skill")
            skill.locator("summary").click()
            page.wait_for_function(
                "() => document.querySelector('#skill-list .skill-status').textContent.startsWith('✗')"
            )
            assert "bytes, the entry lists" in skill.locator(".skill-status").text_content()
    finally:
        stop(server.process)


def test_skill_text_that_looks_like_html_stays_text(page, tmp_path: Path) -> None:
    project = scaffold("book-club", tmp_path).path
    skill_md = project / "skills" / "book-club-picks" / "SKILL.md"
    hostile = '<img src=x onerror="window.pwned=1"><b>bold</b>'
    text = (
        skill_md.read_text()
        .replace("description: Answer questions", f"description: '{hostile} Answer questions", 1)
        .replace("one of them.\n---", "one of them.'\n---", 1)
    )
    skill_md.write_text(text + f"\n<script>window.pwned = 2</script>{hostile}\n")
    server = serve_project(project)
    try:
        with Workbench(Target(url=server.url)) as bench:
            open_workbench(page, bench.url)
            skill = page.locator("#skill-list .skill")
            skill.locator("summary").click()
            assert skill.locator(".skill-description").text_content().startswith(hostile)
            page.wait_for_function(
                "() => document.querySelector('#skill-list .skill-status').textContent.startsWith('✓')"
            )
            assert "<script>window.pwned = 2</script>" in skill.locator(".skill-text").text_content()
            assert skill.locator("img, b, script").count() == 0
            assert page.evaluate("() => window.pwned") is None
    finally:
        stop(server.process)


def test_a_server_without_skills_shows_no_skills_section(page, trip_bench) -> None:
    open_workbench(page, trip_bench.url)
    assert page.locator("#skills").is_hidden()
