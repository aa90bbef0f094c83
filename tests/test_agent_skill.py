"""appsdk's skill for coding agents: its format, `appsdk skill install` into a temporary HOME, the AGENTS.md
every new app gets, and `appsdk mcp --print-config`."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from conftest import appsdk

REPO = Path(__file__).resolve().parent.parent
SKILL = REPO / "agent-skills" / "appsdk" / "SKILL.md"
MCP_TOOLS = (
    "scaffold_app",
    "dev_status",
    "list_tools",
    "call_tool",
    "check",
    "check_code",
    "screenshot",
    "contract_snapshot",
    "contract_snapshot_code",
    "contract_compare",
    "contract_compare_code",
)


def front_matter(text: str) -> dict[str, str]:
    """The YAML front matter's top-level `key: value` lines (all this skill uses), as the format requires:
    the file opens with `---`, the block closes with `---`."""
    assert text.startswith("---\n"), "SKILL.md must open with YAML front matter"
    block = text[4:].split("\n---\n", 1)[0]
    return dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(" "))


def test_the_skill_follows_the_agent_skills_format_and_names_every_tool():
    text = SKILL.read_text(encoding="utf-8")
    meta = front_matter(text)
    # agentskills.io: name 1-64 chars, lowercase letters, digits and single hyphens, matching the folder;
    # description non-empty, at most 1024 characters.
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"]) and len(meta["name"]) <= 64
    assert meta["name"] == SKILL.parent.name
    assert 0 < len(meta["description"]) <= 1024
    body = text.split("\n---\n", 1)[1]
    for tool in MCP_TOOLS:
        assert f"`{tool}`" in body, tool
    for step in ("Scaffold", "Serve", "Call", "Check", "Test", "Look", "Contract", "Tunnel"):
        assert f"**{step}**" in body, step
    assert len(body.splitlines()) < 500  # the format's advice: SKILL.md under 500 lines


def test_the_mcp_server_offers_exactly_the_tools_the_skill_teaches():
    from appsdk_cli.agentserver.tools import TOOLS

    assert tuple(tool.name for tool in TOOLS) == MCP_TOOLS


def test_skill_install_writes_where_each_agent_reads_and_keeps_a_changed_file(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    installed = appsdk("skill", "install", env=env)
    assert installed.returncode == 0, installed.stderr
    claude = home / ".claude" / "skills" / "appsdk" / "SKILL.md"
    codex = home / ".agents" / "skills" / "appsdk" / "SKILL.md"
    assert claude.read_text() == SKILL.read_text() and codex.read_text() == SKILL.read_text()

    again = appsdk("skill", "install", "--claude", "--json", env=env)
    assert again.returncode == 0, again.stderr
    (result,) = json.loads(again.stdout)["installed"]
    assert result["agent"] == "claude" and {f["status"] for f in result["files"]} == {"unchanged"}

    claude.write_text(claude.read_text() + "\nMy own note.\n")
    refused = appsdk("skill", "install", "--claude", env=env)
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1 and "--force" in refused.stderr and "Traceback" not in refused.stderr
    assert "My own note." in claude.read_text()
    forced = appsdk("skill", "install", "--claude", "--force", "--json", env=env)
    assert forced.returncode == 0, forced.stderr
    assert "My own note." not in claude.read_text()

    # appsdk's own older text (an earlier install) is replaced without --force.
    manifest = claude.parent / ".appsdk-skill.json"
    older = "---\nname: appsdk\ndescription: older\n---\n"
    claude.write_text(older)
    recorded = json.loads(manifest.read_text())
    import hashlib

    recorded["files"]["SKILL.md"] = hashlib.sha256(older.encode()).hexdigest()
    manifest.write_text(json.dumps(recorded))
    upgraded = appsdk("skill", "install", "--claude", "--json", env=env)
    assert upgraded.returncode == 0, upgraded.stderr
    assert json.loads(upgraded.stdout)["installed"][0]["files"][0]["status"] == "updated"
    assert claude.read_text() == SKILL.read_text()


def test_skill_install_into_a_project(tmp_path: Path):
    project = tmp_path / "app"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    done = appsdk("skill", "install", "--codex", "--project", "--path", str(project), env={"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert (project / ".agents" / "skills" / "appsdk" / "SKILL.md").is_file()
    assert not (home / ".agents").exists() and not (project / ".claude").exists()
    assert appsdk("skill", "install", "--path", str(project)).returncode == 2  # --path goes with --project


def test_print_config_gives_the_lines_that_register_the_server():
    codex = appsdk("mcp", "--print-config", "codex")
    assert codex.returncode == 0, codex.stderr
    table = tomllib.loads(codex.stdout)["mcp_servers"]["appsdk"]
    assert Path(table["command"]).name == "appsdk" and table["args"] == ["mcp"]
    assert "codex mcp add appsdk -- " in codex.stdout

    claude = appsdk("mcp", "--print-config", "claude")
    assert claude.returncode == 0, claude.stderr
    first = claude.stdout.splitlines()[0]
    assert first.startswith("claude mcp add --scope user appsdk -- ") and first.endswith(" mcp")
    lines = claude.stdout.splitlines()
    json_text = "\n".join(line.removeprefix("# ") for line in lines[lines.index("# {") :])
    entry = json.loads(json_text)["mcpServers"]["appsdk"]  # the .mcp.json entry, commented out
    assert entry["type"] == "stdio" and entry["args"] == ["mcp"] and Path(entry["command"]).name == "appsdk"

    wrong = appsdk("mcp", "--print-config", "cursor")
    assert wrong.returncode == 2 and "codex or claude" in wrong.stderr


@pytest.mark.parametrize("template", ["html", "react"])
def test_every_new_app_has_an_agents_md_that_points_to_the_skill(tmp_path: Path, template: str):
    from appsdk_cli.scaffold import WidgetTemplate, scaffold

    made = scaffold("demo", tmp_path, template=WidgetTemplate(template))
    assert Path("AGENTS.md") in made.files
    agents = (made.path / "AGENTS.md").read_text()
    assert "appsdk skill install" in agents and "appsdk mcp --print-config" in agents
    assert "{{" not in agents and "# demo:" in agents
    widget = "web/" if template == "react" else "widgets/book-list.html"
    assert f"`{widget}`" in agents
    # Which of appsdk's tools run the project's code, in the file the agent reads first (#37).
    assert "`check_code`" in agents and "run whatever is" in agents
