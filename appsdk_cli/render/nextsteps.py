"""Commands to type next, printed so each one copies and runs as shown: one line each, never wrapped."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console


def print_commands(console: Console, commands: Sequence[tuple[str, str]], *, indent: str = "  ") -> None:
    """Each (command, note) as `command  # note`, the notes aligned; a line too wide for the terminal
    gets its note on the line above instead, so the terminal never wraps a command or a comment."""
    from appsdk_cli.render.console import escape

    width = max((len(command) for command, _ in commands), default=0) + 2
    for command, note in commands:
        line = f"{indent}{command}" + (" " * (width - len(command)) + f"# {note}" if note else "")
        if note and len(line) > console.width:
            console.print(f"{indent}[dim]# {escape(note)}[/]", soft_wrap=True)
            console.print(f"{indent}{escape(command)}", soft_wrap=True)
        elif note:
            console.print(
                f"{indent}{escape(command)}" + " " * (width - len(command)) + f"[dim]# {escape(note)}[/]",
                soft_wrap=True,
            )
        else:
            console.print(f"{indent}{escape(command)}", soft_wrap=True)
