"""`appsdk check`: the report, grouped by rule."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.checks import CheckReport
    from appsdk_cli.checks.model import Finding
    from appsdk_cli.rulebook import Entry


from appsdk_cli.render.console import count, escape, json_line, stderr, stdout

# A check call this slow is named with its time in the summary line (read-only tools with no arguments
# are called; a long one was the wait nobody could place).
SLOW_CALL_SECONDS = 1.0
# Past this many findings, one line each, grouped by rule with counts (`--all` for the table with every
# fix): a table row each took 3 s at 5,000 tools, each missing its annotations.
COMPACT_FINDINGS = 50


def check_report(report: CheckReport, *, as_json: bool, show_all: bool = True) -> None:
    """The findings in a table; with show_all False, past COMPACT_FINDINGS one line each, grouped by rule."""
    if as_json:
        json_line(report.as_json())
        return
    from rich.table import Table

    from appsdk_cli.render.console import escape

    console = stdout()
    snapshot = report.snapshot
    if len(report.findings) > COMPACT_FINDINGS and not show_all:
        _compact_findings(report)
    elif report.findings:
        table = Table(show_header=True, header_style="bold", show_lines=False, expand=False)
        table.add_column("rule", no_wrap=True)
        table.add_column("severity", no_wrap=True)
        # Each message names its tool or resource, so the target (in --json) needs no column here.
        table.add_column("problem, and how to fix it", overflow="fold")
        for finding in report.findings:
            colour = "red" if finding.severity.value == "error" else "yellow"
            table.add_row(
                finding.rule.id,
                f"[{colour}]{finding.severity.value}[/]",
                f"{escape(finding.message)}\n[dim]→ {escape(finding.hint)}[/]",
            )
        console.print(table)
    called = [_call_shown(name, snapshot.call_seconds.get(name)) for name in report.called]
    scope = f"{count(len(snapshot.tools), 'tool')}, {count(len(snapshot.resources), 'resource')}"
    if snapshot.skills_declared:
        scope += f", {count(len(snapshot.skills), 'skill')}"
    scope += f", called {', '.join(called)}" if called else ""
    where = f"— {snapshot.mode} mode: {escape(snapshot.server)} ({escape(scope)})"
    if report.subject is not None:
        where = f"— {escape(report.subject)}"
    spoken = [e for e in snapshot.eras.get("spoken") or [] if isinstance(e, dict)]
    if spoken:
        names = ", ".join(
            f"HTTP+SSE ({e.get('version')})" if e.get("transport") == "sse" else str(e.get("version")) for e in spoken
        )
        console.print(f"[cyan]speaks:[/] {escape(names)} [dim](this check: {escape(snapshot.era)})[/]", soft_wrap=True)
    if report.subject is None and snapshot.tools:
        _permission_prompts(report, show_all=show_all)
    if not report.findings:
        console.print(f"[green]✓ no problems[/] [dim]{where}[/]", soft_wrap=True)
        return
    colour = "red" if report.failed else "yellow"
    mark = "✗" if report.failed else "!"
    console.print(
        f"[{colour}]{mark} {count(report.errors, 'error')}, {count(report.warnings, 'warning')}[/]"
        + (" [dim](--strict: warnings fail)[/]" if report.strict and report.warnings else "")
        + f" [dim]{where}[/]",
        soft_wrap=True,
    )


def _compact_findings(report: CheckReport) -> None:
    """One line per finding, grouped by rule, each group headed by its count and how to fix it; printed
    as one text (render/lines.py)."""
    from appsdk_cli.render.lines import Lines

    groups: dict[str, list[Finding]] = {}
    for finding in report.findings:  # already errors first, then by rule: each group keeps that order
        groups.setdefault(finding.rule.id, []).append(finding)
    lines = Lines(stdout())
    for members in groups.values():
        rule = members[0].rule
        colour = "red" if rule.severity.value == "error" else "yellow"
        lines.add()
        lines.add(("bold", rule.id), ("", f" {rule.name} "), (colour, rule.severity.value), ("", f": {len(members)}"))
        example = "" if len({finding.hint for finding in members}) == 1 else "for example: "
        lines.add(("dim", f"  → {example}{members[0].hint}"))
        for finding in members:
            lines.add(("", f"  {finding.message}"))
    lines.add()
    lines.add(
        (
            "dim",
            f"{count(len(report.findings), 'finding')}, one line each by rule: `--all` shows each with its fix,"
            " `--json` every field",
        )
    )
    lines.emit()


@contextlib.contextmanager
def calling_tool(name: str) -> Iterator[None]:
    """While check waits on a tool call: on a terminal, a spinner naming the tool and the seconds so far
    (a long read-only tool was a silent wait); in a log nothing, as the summary names a slow call."""
    import threading
    import time

    console = stderr()
    if not console.is_terminal:
        yield
        return
    text = f"calling {escape(name)} (read-only, no arguments; --no-calls skips it)"
    started = time.monotonic()
    done = threading.Event()
    with console.status(text) as status:

        def tick() -> None:
            while not done.wait(1.0):
                status.update(f"{text} {time.monotonic() - started:.0f} s")

        ticker = threading.Thread(target=tick, name="check-call-ticker", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()


def _permission_prompts(report: CheckReport, *, show_all: bool = True) -> None:
    """Which tools would ask the user first under each of ChatGPT's permission modes ("never" asks about none)."""
    from appsdk_cli.permissions import MODES, Hints

    console = stdout()
    console.print("[cyan]ChatGPT asks the user before calling, by permission mode:[/]")
    width = max(len(label) for label in MODES.values())
    for mode, asking in report.permission_prompts().items():
        if mode == "never":
            continue
        every = len(asking) == len(report.snapshot.tools)
        names = "every tool" if every else _names([name for name, _ in asking], show_all) or "[dim]none[/]"
        console.print(f"  {MODES[mode]:<{width}}  {names}", soft_wrap=True)
    bare = [str(t["name"]) for t in report.snapshot.tools if isinstance(t, dict) and Hints.of(t).missing]
    if bare:
        console.print(
            f"  [dim]{_names(bare, show_all)}: a hint left out counts as MCP's default"
            " (readOnlyHint false, destructiveHint true, openWorldHint true)[/]",
            soft_wrap=True,
        )


# Past this many tools, a list of names shows the first few and how many more (--json has every one).
NAMES_SHOWN = 10


def _names(names: list[str], show_all: bool) -> str:
    """Tool names on one line, as markup: a newline in a name cannot start a line of its own."""
    more = ""
    if not show_all and len(names) > COMPACT_FINDINGS:
        names, more = names[:NAMES_SHOWN], f" and {len(names) - NAMES_SHOWN} more (`--all` or `--json`)"
    return escape(", ".join(names)).replace("\n", "\\n") + more


def _call_shown(name: str, seconds: float | None) -> str:
    """A called tool's name, and its time when the check waited on it, so a slow tool is named."""
    if seconds is None or seconds < SLOW_CALL_SECONDS:
        return name
    return f"{name} ({seconds:.1f} s)"


def rule_text(entry: Entry, *, as_json: bool) -> None:
    """`appsdk check --explain RULE`: one rule, as docs/rules.md has it."""
    if as_json:
        json_line(entry.as_json())
        return
    from appsdk_cli.render.console import escape

    rule = entry.rule
    colour = "red" if rule.severity.value == "error" else "yellow"
    console = stdout()
    console.print(f"[bold]{rule.id}[/] {rule.name} [{colour}]{rule.severity.value}[/] [dim]— {escape(entry.family)}[/]")
    console.print(f"[bold]what:[/] {escape(rule.what)}")
    console.print(f"[bold]why:[/]  {escape(rule.why)}")
