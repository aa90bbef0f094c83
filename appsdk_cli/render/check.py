"""`appsdk check`: the report, grouped by rule."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.checks import CheckReport
    from appsdk_cli.rulebook import Entry


from appsdk_cli.render.console import count, escape, json_line, stderr, stdout

# A check call this slow is named with its time in the summary line (read-only tools with no arguments
# are called; a long one was the wait nobody could place).
SLOW_CALL_SECONDS = 1.0


def check_report(report: CheckReport, *, as_json: bool) -> None:
    if as_json:
        json_line(report.as_json())
        return
    from rich.table import Table

    from appsdk_cli.render.console import escape

    console = stdout()
    snapshot = report.snapshot
    if report.findings:
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
        _permission_prompts(report)
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


def _permission_prompts(report: CheckReport) -> None:
    """Which tools would ask the user first under each of ChatGPT's permission modes ("never" asks about none)."""
    from appsdk_cli.permissions import MODES, Hints

    console = stdout()
    console.print("[cyan]ChatGPT asks the user before calling, by permission mode:[/]")
    width = max(len(label) for label in MODES.values())
    for mode, asking in report.permission_prompts().items():
        if mode == "never":
            continue
        every = len(asking) == len(report.snapshot.tools)
        names = "every tool" if every else escape(", ".join(name for name, _ in asking)) or "[dim]none[/]"
        console.print(f"  {MODES[mode]:<{width}}  {names}", soft_wrap=True)
    bare = [str(t["name"]) for t in report.snapshot.tools if isinstance(t, dict) and Hints.of(t).missing]
    if bare:
        console.print(
            f"  [dim]{escape(', '.join(bare))}: a hint left out counts as MCP's default"
            " (readOnlyHint false, destructiveHint true, openWorldHint true)[/]",
            soft_wrap=True,
        )


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
