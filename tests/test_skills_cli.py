"""`appsdk tools` lists a server's skills (SEP-2640) and `appsdk read` checks a skill file against its digest.

Real processes: the scaffold served by `python server.py`, a check fixture whose SKILL.md is changed on its
way (tests/fixtures/check/skill-digest-mismatch), and the CLI as a child.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO, appsdk, free_port, serve, stop

SKILL_MD = "skill://book-club-picks/SKILL.md"
TAMPERED = REPO / "tests" / "fixtures" / "check" / "skill-digest-mismatch"


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_tools_lists_the_skills_with_their_digests(app_server, protocol):
    listed = appsdk("tools", "--url", app_server.url, "--protocol", protocol, "--json")
    assert listed.returncode == 0, listed.stderr
    (skill,) = json.loads(listed.stdout)["skills"]
    assert skill["uri"] == SKILL_MD and skill["frontmatter"]["name"] == "book-club-picks"
    assert all(f["digest"].startswith("sha256:") and f["size"] > 0 for f in skill["resources"])

    shown = appsdk("tools", "--url", app_server.url, "--protocol", protocol)
    assert shown.returncode == 0, shown.stderr
    assert "1 skill" in shown.stdout and "book-club-picks" in shown.stdout
    assert skill["resources"][0]["digest"] in shown.stdout


def test_read_checks_a_skill_file_against_its_digest(app_server):
    read = appsdk("read", SKILL_MD, "--url", app_server.url)
    assert read.returncode == 0, read.stderr
    assert "name: book-club-picks" in read.stdout
    assert "✓ matches its sha256 digest and size in skills/list" in read.stdout
    # --json stays the resources/read result as sent
    as_json = appsdk("read", SKILL_MD, "--url", app_server.url, "--json")
    assert json.loads(as_json.stdout)["contents"][0]["uri"] == SKILL_MD


def test_a_tampered_skill_file_fails_its_digest_in_one_line():
    port = free_port()
    server = serve(
        [sys.executable, str(REPO / "tests" / "fixtures" / "check" / "serve.py"), str(TAMPERED), str(port)], port
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        read = appsdk("read", "skill://picks/SKILL.md", "--url", url)
        assert read.returncode == 1
        (line,) = read.stderr.strip().splitlines()
        assert "skill://picks/SKILL.md is not the file skills/list describes" in line and "bytes" in line
        assert "Traceback" not in read.stderr
        checked = appsdk("check", "--url", url, "--json", env={"APPSDK_URL": ""})
        assert checked.returncode == 1
        assert [f["rule"] for f in json.loads(checked.stdout)["findings"] if f["severity"] == "error"] == ["APPS003"]
    finally:
        stop(server.process)


def test_a_server_without_skills_lists_none(tmp_path):
    port = free_port()
    fixture = REPO / "tests" / "fixtures" / "check" / "skills-not-served"
    server = serve(
        [sys.executable, str(REPO / "tests" / "fixtures" / "check" / "serve.py"), str(fixture), str(port)], port
    )
    try:
        listed = appsdk("tools", "--url", f"http://127.0.0.1:{port}/mcp", "--json")
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout)["skills"] is None
        shown = appsdk("tools", "--url", f"http://127.0.0.1:{port}/mcp")
        assert "skill" not in shown.stdout
    finally:
        stop(server.process)
