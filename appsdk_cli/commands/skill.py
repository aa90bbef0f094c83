"""`appsdk skill install`: put appsdk's skill where Codex or Claude Code reads skills."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

skill = typer.Typer(
    name="skill",
    help="appsdk's skill for coding agents (the Agent Skills format): install it for Codex or Claude Code.",
    no_args_is_help=True,
)


@skill.command()
def install(
    codex: Annotated[bool, typer.Option("--codex", help="For Codex (~/.agents/skills/appsdk).")] = False,
    claude: Annotated[bool, typer.Option("--claude", help="For Claude Code (~/.claude/skills/appsdk).")] = False,
    project: Annotated[
        bool,
        typer.Option("--project", help="Into this project (.agents/skills, .claude/skills) instead of your home."),
    ] = False,
    path: Annotated[
        Path, typer.Option("--path", help="With --project: the project folder.", show_default="current folder")
    ] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Replace skill files you changed.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Install appsdk's skill (the loop an agent follows to build a ChatGPT app, and which command or
    `appsdk mcp` tool to use when) for Codex and Claude Code, or only the one named. A skill file you
    changed since appsdk wrote it is never replaced without --force.

    Exit codes: 0 installed; 1 a file was changed by you (use --force) or cannot be written; 2 the command
    line is wrong.
    """
    from appsdk_cli.agentsetup import Agent, install_skill
    from appsdk_cli.errors import UsageError
    from appsdk_cli.render.agent import skill_installed

    if path != Path(".") and not project:
        raise UsageError("--path goes with --project")
    agents = [agent for agent, wanted in ((Agent.CODEX, codex), (Agent.CLAUDE, claude)) if wanted] or list(Agent)
    folder = path.expanduser().resolve() if project else None
    if folder is not None and not folder.is_dir():
        raise UsageError(f"{path} is not a folder")
    results = [install_skill(agent, home=Path.home(), project=folder, force=force) for agent in agents]
    skill_installed(results, as_json=as_json)
