"""`appsdk snapshot` and `appsdk check --against`: the recorded file, and each change with what to do."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appsdk_cli.render.console import count, json_line, say, stdout

if TYPE_CHECKING:
    from rich.console import Console

    from appsdk_cli.contract import Change, ContractDiff

LABELS = {"breaking": "breaking", "needs-review": "needs review", "goes-live": "goes live"}
COLOURS = {"breaking": "red", "needs-review": "yellow", "goes-live": "cyan"}


def _tally(changes: Iterable[Change]) -> str:
    counts = {"breaking": 0, "needs-review": 0, "goes-live": 0}
    for change in changes:
        counts[change.impact.value] += 1
    parts = [
        f"{counts['breaking']} breaking",
        f"{counts['needs-review']} need{'s' if counts['needs-review'] == 1 else ''} a new reviewed version",
        f"{counts['goes-live']} go{'es' if counts['goes-live'] == 1 else ''} live at once",
    ]
    return ", ".join(parts)


# Past this many changes, `check --against` lists one line each, grouped by kind with counts (`--all` for the
# table with every what-to-do): a table of 2,000 rows took 5 s to draw and nobody reads it on a terminal.
COMPACT_CHANGES = 50


def contract_report(diff: ContractDiff, *, as_json: bool, show_all: bool = False) -> None:
    if as_json:
        json_line(diff.as_json())
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    where = f"— against {escape(diff.against)}: {escape(diff.server)}"
    if not diff.changes:
        console.print(f"[green]✓ no changes[/] [dim]{where}[/]", soft_wrap=True)
        return
    if show_all or len(diff.changes) <= COMPACT_CHANGES:
        _table(console, diff.changes)
    else:
        _compact(console, diff.changes, "`--all` shows each with what to do, `--json` every field")
    reviews = any(change.impact.value == "needs-review" for change in diff.changes)
    colour, mark = ("red", "✗") if diff.failed else ("yellow", "!") if reviews else ("green", "✓")
    console.print(
        f"[{colour}]{mark} {_tally(diff.changes)}[/]"
        + (" [dim](--strict: changes that need review fail)[/]" if diff.strict else "")
        + f" [dim]{where}[/]",
        soft_wrap=True,
    )


def _table(console: Console, changes: list[Change]) -> None:
    from rich.table import Table

    from appsdk_cli.render.console import escape

    table = Table(show_header=True, header_style="bold", expand=False)
    table.add_column("impact", no_wrap=True)
    table.add_column("what changed, and what to do instead", overflow="fold")
    for change in changes:
        table.add_row(_label(change), f"{escape(change.change)}\n[dim]→ {escape(change.todo)}[/]")
    console.print(table)


def _compact(console: Console, changes: list[Change], footer: str) -> None:
    """One line per change, grouped by impact and kind, each group headed by its count and what to do.

    Printed as one text (render/lines.py): a table row each took 5 s at 2,000."""
    from appsdk_cli.render.lines import Lines

    groups: dict[tuple[str, str], list[Change]] = {}
    for change in changes:  # already breaking first: each group keeps that order
        groups.setdefault((change.impact.value, change.kind or change.target.split(" ")[0]), []).append(change)
    lines = Lines(console)
    for (impact, kind), members in groups.items():
        lines.add()
        lines.add((COLOURS[impact], LABELS[impact]), ("", " "), ("bold", kind), ("", f": {len(members)}"))
        example = "" if len({change.todo for change in members}) == 1 else "for example: "
        lines.add(("dim", f"  → {example}{members[0].todo}"))
        for change in members:
            lines.add(("", f"  {change.change}"), ("dim", "" if change.certain else " (cannot tell)"))
    lines.add()
    lines.add(("dim", f"{count(len(changes), 'change')}, one line each by kind: {footer}"))
    lines.emit()


def _label(change: Change) -> str:
    value = change.impact.value
    unsure = "" if change.certain else " [dim](cannot tell)[/]"
    return f"[{COLOURS[value]}]{LABELS[value]}[/]{unsure}"


def change_lines(changes: Iterable[Change], console: Console | None = None) -> None:
    """One line per change, for `appsdk dev`'s reload output and `appsdk snapshot`'s.

    On a terminal each wraps at a word under its own text, the labels in a column (the terminal would
    cut a long line anywhere, mid-word); in a log each stays one whole line, for grep. Past
    COMPACT_CHANGES, grouped by kind as `check --against` prints them (a grid of 2,000 rows took 6 s)."""
    from appsdk_cli.render.lines import Lines

    console = console or stdout()
    changes = list(changes)
    if len(changes) > COMPACT_CHANGES:
        _compact(console, changes, "`appsdk check --against` the old file with --all shows each with what to do")
        return
    if not console.is_terminal:
        lines = Lines(console)
        for change in changes:
            value = change.impact.value
            lines.add(
                ("", "  "),
                (COLOURS[value], LABELS[value]),
                ("dim", "" if change.certain else " (cannot tell)"),
                ("", f": {change.change}"),
                ("dim", f" → {change.todo}"),
            )
        lines.emit()
        return
    from rich.table import Table

    from appsdk_cli.render.console import escape

    rows = Table.grid(padding=(0, 1))
    rows.add_column(no_wrap=True)
    rows.add_column()
    for change in changes:
        rows.add_row(f"  {_label(change)}:", f"{escape(change.change)} [dim]→ {escape(change.todo)}[/]")
    console.print(rows)


def snapshot_written(path: Path, contract: dict[str, Any], changes: list[Change] | None) -> None:
    from appsdk_cli.render.console import escape

    console = stdout()
    eras = ", ".join(f"{era} {'/'.join(v)}" for era, v in sorted(contract.get("protocol", {}).items())) or "none"
    scope = (
        f"{count(len(contract.get('tools', {})), 'tool')}, {count(len(contract.get('resources', {})), 'resource')}, "
        f"{count(len(contract.get('resourceTemplates', {})), 'resource template')}; protocol {eras}"
    )
    say(console, f"[green]recorded[/] {escape(str(path))} [dim]({escape(scope)})[/]")
    if changes:
        say(console, f"[yellow]{count(len(changes), 'change')} since the file it replaced:[/] {_tally(changes)}")
        change_lines(changes, console)
    elif changes is not None:
        console.print("[dim]unchanged since the file it replaced[/]")
    say(
        console,
        f"[dim]commit it; `appsdk check --against {escape(str(path))}` then classifies every change before it ships[/]",
    )
