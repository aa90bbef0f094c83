"""Teach a coding agent appsdk: install appsdk's skill where the agent reads skills, and the lines that
register `appsdk mcp` with it.

Where each agent reads skills (a folder per skill, SKILL.md inside, the Agent Skills format):
- Claude Code: ~/.claude/skills/NAME/ for the user, .claude/skills/NAME/ in a project
  (code.visualstudio.com/docs/agents/reference/agent-skills-reference, allthings.how/how-to-add-skills-to-claude-code).
- Codex: ~/.agents/skills/NAME/ for the user, .agents/skills/NAME/ in a repository (developers.openai.com/codex/skills
  since May 2026, and the same VS Code reference; before, Codex read ~/.codex/skills, which it has left for the
  cross-agent .agents tree).

An installed skill keeps a manifest of what appsdk wrote (a sha256 per file), so a later install replaces
appsdk's own older text but never a file the user changed, unless forced.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from appsdk_cli.errors import AppsdkError
from appsdk_cli.safewrite import write_file

SKILL_NAME = "appsdk"
SERVER_NAME = "appsdk"
MANIFEST = ".appsdk-skill.json"


class Agent(StrEnum):
    CODEX = "codex"
    CLAUDE = "claude"


# Where each agent reads skills: (the user's folder under HOME, the project's folder under the project).
SKILL_FOLDERS = {
    Agent.CODEX: (Path(".agents") / "skills", Path(".agents") / "skills"),
    Agent.CLAUDE: (Path(".claude") / "skills", Path(".claude") / "skills"),
}


def skill_source() -> Path:
    """The shipped skill's folder: inside the installed wheel, or at the top of a source checkout."""
    here = Path(__file__).resolve().parent
    for folder in (here / "agent-skills" / SKILL_NAME, here.parent / "agent-skills" / SKILL_NAME):
        if (folder / "SKILL.md").is_file():
            return folder
    raise AppsdkError("appsdk's skill is missing from this installation; reinstall appsdk-cli")


@dataclass(frozen=True)
class InstalledFile:
    path: Path
    status: str  # "written" (new), "updated" (appsdk's older text replaced), "unchanged", "replaced" (--force)


@dataclass(frozen=True)
class SkillInstall:
    agent: Agent
    folder: Path
    files: tuple[InstalledFile, ...]


def skill_folder(agent: Agent, *, home: Path, project: Path | None) -> Path:
    user, in_project = SKILL_FOLDERS[agent]
    return (project / in_project if project is not None else home / user) / SKILL_NAME


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def install_skill(agent: Agent, *, home: Path, project: Path | None = None, force: bool = False) -> SkillInstall:
    """Copy the skill into `agent`'s skill folder (the user's under `home`, or `project`'s). A file there that
    differs both from the new text and from what appsdk last wrote is the user's: AppsdkError, unless `force`."""
    source = skill_source()
    folder = skill_folder(agent, home=home, project=project)
    wanted = {
        path.relative_to(source): path.read_bytes()
        for path in sorted(source.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    try:
        written_before = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError, AttributeError):
        written_before = {}
    plan: list[tuple[Path, bytes, str]] = []
    for relative, data in wanted.items():
        destination = folder / relative
        if not destination.exists():
            plan.append((relative, data, "written"))
            continue
        if destination.is_symlink() or not destination.is_file():
            raise AppsdkError(f"{destination} is not a plain file; move it away to install the skill")
        current = destination.read_bytes()
        if current == data:
            plan.append((relative, data, "unchanged"))
        elif written_before.get(str(relative)) == _digest(current):
            plan.append((relative, data, "updated"))  # appsdk's own older text
        elif force:
            plan.append((relative, data, "replaced"))
        else:
            raise AppsdkError(
                f"{destination} was changed since appsdk wrote it; pass --force to replace it "
                "(or move your version away first)"
            )
    # Every write stays under the project (or the user's home): a skill folder, file or manifest someone
    # planted as a link out of it is refused, not written through.
    root = project if project is not None else home
    try:
        for relative, data, status in plan:
            if status != "unchanged":
                write_file(folder / relative, data, root=root)
        manifest = {"skill": SKILL_NAME, "files": {str(r): _digest(d) for r, d in wanted.items()}}
        write_file(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n", root=root)
    except OSError as problem:
        raise AppsdkError(f"cannot write the skill into {folder}: {problem.strerror or problem}") from None
    return SkillInstall(agent, folder, tuple(InstalledFile(folder / r, s) for r, _, s in plan))


def appsdk_command() -> str:
    """The appsdk that runs now, by absolute path when it sits beside this Python (a virtualenv's bin/), so an
    agent started without that virtualenv on its PATH still finds it; else plain `appsdk`."""
    beside = Path(sys.executable).parent / ("appsdk.exe" if sys.platform == "win32" else "appsdk")
    return str(beside) if beside.is_file() else "appsdk"


def registration(agent: Agent, command: str | None = None) -> str:
    """The lines that register `appsdk mcp` with the agent, as text to paste or run.

    Codex: a [mcp_servers.NAME] table with command and args in ~/.codex/config.toml (or a trusted project's
    .codex/config.toml), or `codex mcp add NAME -- COMMAND ARGS` (developers.openai.com/codex/mcp).
    Claude Code: `claude mcp add NAME -- COMMAND ARGS`; --scope user for every project, --scope project
    writes .mcp.json, whose mcpServers entry is command + args (hasmcp.com/glossary/mcp.json).
    """
    command = command or appsdk_command()
    if agent is Agent.CODEX:
        table = json.dumps(command)
        return (
            "# ~/.codex/config.toml (or .codex/config.toml in a trusted project)\n"
            f"[mcp_servers.{SERVER_NAME}]\n"
            f"command = {table}\n"
            'args = ["mcp"]\n'
            "\n"
            "# or let Codex write it:\n"
            f"#   codex mcp add {SERVER_NAME} -- {_shell(command)} mcp\n"
        )
    entry = {"mcpServers": {SERVER_NAME: {"type": "stdio", "command": command, "args": ["mcp"]}}}
    return (
        f"claude mcp add --scope user {SERVER_NAME} -- {_shell(command)} mcp\n"
        "\n"
        "# or, for everyone working in this project, .mcp.json (what --scope project writes):\n"
        + "\n".join("# " + line for line in json.dumps(entry, indent=2).splitlines())
        + "\n"
    )


def http_registration(agent: Agent, url: str, token: str) -> str:
    """The lines that register a running `appsdk mcp --port` (streamable HTTP at `url`) with the agent,
    bearer token included: they hold a secret, so they go into a file only this user reads.

    Codex: url plus http_headers (static headers) in [mcp_servers.NAME], or bearer_token_env_var naming an
    environment variable that holds the token. Claude Code: `claude mcp add --transport http ... --header`.
    """
    if agent is Agent.CODEX:
        return (
            "# ~/.codex/config.toml: it holds the token, keep it readable by you alone\n"
            f"[mcp_servers.{SERVER_NAME}]\n"
            f"url = {json.dumps(url)}\n"
            f"http_headers = {{ Authorization = {json.dumps('Bearer ' + token)} }}\n"
            "\n"
            f"# or keep the token out of the file: export APPSDK_MCP_TOKEN={token}\n"
            '# and write bearer_token_env_var = "APPSDK_MCP_TOKEN" in place of http_headers\n'
        )
    return (
        f"claude mcp add --scope user --transport http {SERVER_NAME} {_shell(url)}"
        f" --header {_shell('Authorization: Bearer ' + token)}\n"
    )


def _shell(word: str) -> str:
    import shlex

    return shlex.quote(word)
