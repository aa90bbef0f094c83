"""Skills over MCP serve and check only regular files inside skills/ (issue 37, hole 8).

An attacker (or a careless commit) links a secret into a skill: skills/<skill>/.env -> the project's .env,
or a whole skill folder -> somewhere else. The scaffold's skills_mcp.py must neither list nor read it, and
`appsdk check` must say so, as `appsdk plugin check` does for a plugin. A front matter `appsdk check` cannot
compare is a finding, not a crash.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import appsdk, serve_project, stop
from test_skills_served import Wire

from appsdk_cli.scaffold import scaffold

SECRET = "OPENAI_API_KEY=sk-the-secret\n"
SKILL = Path("skills") / "book-club-picks"


def planted(tmp_path: Path) -> Path:
    """A new app whose skill holds a link to a secret outside skills/, and a skill folder linked from outside."""
    project = scaffold("book-club", tmp_path).path
    (project / ".env").write_text(SECRET)
    (project / SKILL / ".env").symlink_to(project / ".env")
    elsewhere = tmp_path / "elsewhere" / "stolen"
    elsewhere.mkdir(parents=True)
    (elsewhere / "SKILL.md").write_text("---\nname: stolen\ndescription: Not in skills/.\n---\n")
    (elsewhere / "id_rsa").write_text(SECRET)
    (project / "skills" / "stolen").symlink_to(elsewhere, target_is_directory=True)
    return project


def test_the_scaffold_serves_no_symlinked_file_or_folder_out_of_skills(tmp_path: Path):
    project = planted(tmp_path)
    server = serve_project(project)
    try:
        wire = Wire(server.url, "2025-11-25")
        wire.capabilities()
        listed = wire.post("skills/list")["result"]["skills"]
        assert [entry["uri"] for entry in listed] == ["skill://book-club-picks/SKILL.md"]
        uris = [file["uri"] for file in listed[0]["resources"]]
        assert uris == ["skill://book-club-picks/SKILL.md", "skill://book-club-picks/reference/answers.md"]
        for uri in ("skill://book-club-picks/.env", "skill://stolen/id_rsa", "skill://stolen/SKILL.md"):
            answer = wire.post("resources/read", {"uri": uri})
            assert "error" in answer and "sk-the-secret" not in json.dumps(answer), answer
    finally:
        stop(server.process)


def test_check_flags_every_link_in_skills(tmp_path: Path):
    project = planted(tmp_path)
    result = appsdk("check", str(project), "--json")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    linked = sorted(f["target"] for f in report["findings"] if f["rule"] == "APPS009")
    assert linked == ["file skills/book-club-picks/.env", "file skills/stolen"], report["findings"]
    assert "sk-the-secret" not in result.stdout


def test_a_front_matter_key_that_is_not_a_string_is_a_finding_not_a_crash(tmp_path: Path):
    project = scaffold("book-club", tmp_path).path
    skill_md = project / SKILL / "SKILL.md"
    text = skill_md.read_text()
    skill_md.write_text(text.replace("---\n", "---\n1: one\n", 1))
    result = appsdk("check", str(project), "--json")
    assert "Traceback" not in result.stderr and result.stdout, result.stderr
    report = json.loads(result.stdout)
    messages = [f["message"] for f in report["findings"] if f["rule"] == "APPS005"]
    assert any("key 1 is not a string" in message for message in messages), report["findings"]
    assert result.returncode == 1
