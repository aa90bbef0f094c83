"""What `appsdk mcp` and `appsdk skill` print: the registration lines, the HTTP address, the installed skill."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.render.console import escape, json_line, say, stderr, stdout

if TYPE_CHECKING:
    from appsdk_cli.agentsetup import SkillInstall


def config_lines(text: str) -> None:
    """Plain text on stdout, so `appsdk mcp --print-config codex >> ~/.codex/config.toml` works."""
    sys.stdout.write(text)
    sys.stdout.flush()


def serving(url: str, root: Path, *, print_config: str) -> None:
    # stderr: stdout stays free, as it must for the stdio mode of the same command. The token is not shown.
    say(stderr(), f"appsdk mcp serving [bold]{escape(url)}[/] for {escape(str(root))} (Ctrl-C stops it)")
    say(stderr(), f"[dim]Requests need its bearer token: `{escape(print_config)}` prints the config with it.[/]")


def skill_installed(results: list[SkillInstall], *, as_json: bool) -> None:
    if as_json:
        json_line(
            {
                "installed": [
                    {
                        "agent": result.agent.value,
                        "folder": str(result.folder),
                        "files": [{"path": str(f.path), "status": f.status} for f in result.files],
                    }
                    for result in results
                ]
            }
        )
        return
    console = stdout()
    for result in results:
        changed = [f for f in result.files if f.status != "unchanged"]
        what = "up to date" if not changed else ", ".join(sorted({f.status for f in changed}))
        say(console, f"[green]✓[/] {result.agent.value}: {escape(str(result.folder))} ({what})")
    say(console, "[dim]Restart the agent (or start a new session) so it reads the skill.[/]")
