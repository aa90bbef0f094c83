"""--help as a person reads it: placeholders named for what they hold, wrapped to the terminal, with examples.

typer describes each value by its Python type (`--allow-host <list[str]>`, `--port <int range>`,
`{TOOL}`); the help formatter here names it for what it holds (`--allow-host HOST`, `--port PORT`,
`TOOL`), drops click's `0<=x<=65535` ranges, and wraps to the terminal's width instead of 80 columns.
`polish()` applies it to every command of the tree and adds each one's examples; `GroupedCommands`
lists the root's commands under their panels (build, run, inspect, ship). click only: nothing here
imports rich, so `appsdk --help` stays fast. docsgen renders the same help at a fixed width for docs/.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Sequence

# typer carries its own copy of click (typer._click) and its commands use that copy's Context and
# exceptions; the installed click's would not be caught.
from typer import _click as click
from typer.core import TyperGroup

# Wider than this, lines of help get hard to read; narrower terminals wrap at their own width.
MAX_WIDTH = 160

# What an option's value is, by the option's long name; any other option shows its name in capitals.
_METAVARS = {
    "--url": "URL",
    "--stdio": "COMMAND",
    "--args": "JSON",
    "--meta": "JSON",
    "--user-location": "JSON",
    "--user-agent": "TEXT",
    "--description": "TEXT",
    "--token": "TOKEN",
    "--authtoken": "TOKEN",
    "--timeout": "SECONDS",
    "--allow-host": "HOST",
    "--auth-user": "USER",
    "--icon-url": "URL",
    "--icon-url-dark": "URL",
    "--path": "DIR",
    "--screenshot": "FILE",
}

# Each command's examples (its path without "appsdk"): one or two lines a newcomer would type.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("appsdk new book-club --dev", "appsdk call list-books month=June"),
    "new": ("appsdk new book-club --dev", "appsdk new shelf --path ~/apps --auth --domain shelf.ngrok.app"),
    "dev": ("appsdk dev", "appsdk dev ~/apps/shelf --port 9000 --tunnel"),
    "call": (
        "appsdk call list-books month=June",
        'appsdk call --stdio "python server.py --stdio" list-books --json',
    ),
    "tools": ("appsdk tools", "appsdk tools --url https://example.com/mcp --json"),
    "resources": ("appsdk resources", 'appsdk resources --stdio "python server.py --stdio"'),
    "read": ("appsdk read ui://widget/book-list.html", "appsdk read ui://widget/book-list.html --json"),
    "check": ("appsdk check", "appsdk check --url http://127.0.0.1:8000/mcp --strict"),
    "preview": ("appsdk preview list-books", "appsdk preview list-books --theme dark --screenshot picks.png"),
    "test": ("appsdk test", "appsdk test --url http://127.0.0.1:8000/mcp --junitxml report.xml"),
    "tunnel": ("appsdk tunnel", "appsdk tunnel --domain books.ngrok.app"),
    "apps": ("appsdk apps add books --url http://127.0.0.1:8000/mcp", "appsdk apps read books --tools"),
    "apps add": (
        "appsdk apps add books --url http://127.0.0.1:8000/mcp",
        'appsdk apps add books --url https://books.example.com/mcp --name "Book club" --workspace',
    ),
    "apps remove": ("appsdk apps remove books",),
    "apps list": ("appsdk apps list", "appsdk apps list --json"),
    "apps installed": ("appsdk apps installed --refresh",),
    "apps read": ("appsdk apps read books --tools", "appsdk apps read books shelf --json"),
    "app-server": ("appsdk app-server < requests.jsonl",),
    "mcp": ("appsdk mcp --print-config claude", "appsdk mcp ~/apps --port 8765"),
    "skill": ("appsdk skill install", "appsdk skill install --claude --project"),
    "skill install": ("appsdk skill install", "appsdk skill install --claude --project"),
}

# The root's command list, in these panels and this order (each command names its panel, typer's
# rich_help_panel). typer draws panels only with its rich help, which costs ~0.1 s per --help; this is
# the same grouping in click's plain help.
PANELS = ("Build", "Run", "Inspect", "Ship")

_TYPE = re.compile(r"^(?P<names>.*?) <(?P<type>[^>]*)>(?P<many>\.\.\.)?$")
_RANGE = r"(?:-?[\d.]+<=?)?x(?:[<>]=?-?[\d.]+)?"
_RANGE_AFTER_DEFAULT = re.compile(rf"; {_RANGE}\]")
_RANGE_ALONE = re.compile(rf"\s*\[{_RANGE}\]")
_BRACED = re.compile(r"\{([^{}\s]+)\}")


def _term(term: str) -> str:
    """One help row's first column, its typer type label replaced by what the value is."""
    match = _TYPE.match(term)
    if match is None:
        return term
    names, kind, many = match["names"], match["type"], bool(match["many"])
    if not names.startswith("-"):  # an argument: its name already says what it is
        return names + ("..." if many or kind.startswith("list[") else "")
    if "|" in kind and "[" not in kind:  # a choice: the choices are the placeholder
        return f"{names} {kind}"
    long_name = [name for name in re.split(r"[,;/ ]+", names) if name.startswith("--")][-1:]
    option = long_name[0] if long_name else names.split()[-1]
    metavar = _METAVARS.get(option) or option.lstrip("-").upper().replace("-", "_")
    return f"{names} {metavar}"


class HelpFormatter(click.HelpFormatter):
    def __init__(self, indent_increment: int = 2, width: int | None = None, max_width: int | None = None) -> None:
        if width is None:
            width = max(min(shutil.get_terminal_size().columns, max_width or MAX_WIDTH) - 2, 50)
        super().__init__(indent_increment=indent_increment, width=width, max_width=max_width)

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog, _BRACED.sub(r"\1", args), prefix)

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        cleaned = [(_term(term), _RANGE_ALONE.sub("", _RANGE_AFTER_DEFAULT.sub("]", text))) for term, text in rows]
        super().write_dl(cleaned, col_max=col_max, col_spacing=col_spacing)


class GroupedCommands(TyperGroup):
    """A group whose --help lists its commands under their panels, in PANELS order, then any without one."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        shown = [(name, self.commands[name]) for name in self.list_commands(ctx) if not self.commands[name].hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        panels: dict[str, list[tuple[str, str]]] = {panel: [] for panel in PANELS}
        for name, command in shown:
            panel = getattr(command, "rich_help_panel", None) or "Commands"
            panels.setdefault(panel, []).append((name, command.get_short_help_str(limit)))
        # One column width for every panel, so the summaries line up down the whole list.
        width = max(len(name) for name, _ in shown)
        for panel, rows in panels.items():
            if rows:
                with formatter.section(panel):
                    formatter.write_dl([(name.ljust(width), text) for name, text in rows])


class HelpContext(click.Context):
    formatter_class = HelpFormatter

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        if self.max_content_width is None:
            self.max_content_width = MAX_WIDTH


def _examples_epilog(lines: Iterable[str]) -> str:
    # \b keeps click from re-wrapping the paragraph: each example stays on one line, as typed.
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def polish(command: click.Command, path: str = "") -> click.Command:
    """Give `command` and every subcommand this help: the formatter, full one-line summaries, examples."""
    command.context_class = HelpContext
    examples = EXAMPLES.get(path)
    if examples and not command.epilog:
        command.epilog = _examples_epilog(examples)
    if not command.short_help and command.help:
        # click cuts a summary it derives at 45 characters ("accessible (its..."); take the first sentence.
        command.short_help = command.help.split("\n\n", 1)[0].replace("\n", " ").split(". ", 1)[0].rstrip(".") + "."
    for name, sub in getattr(command, "commands", {}).items():  # typer's groups are not click.Group
        polish(sub, f"{path} {name}".strip())
    return command
