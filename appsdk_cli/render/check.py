"""`appsdk check`: the report, grouped by rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.checks import CheckReport
    from appsdk_cli.rulebook import Entry


from appsdk_cli.render.console import count, json_line, stdout


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
    called = sorted([*snapshot.calls, *snapshot.call_errors])
    scope = f"{count(len(snapshot.tools), 'tool')}, {count(len(snapshot.resources), 'resource')}" + (
        f", called {', '.join(called)}" if called else ""
    )
    where = f"— {snapshot.mode} mode: {escape(snapshot.server)} ({escape(scope)})"
    if report.subject is not None:
        where = f"— {escape(report.subject)}"
    spoken = [e for e in snapshot.eras.get("spoken") or [] if isinstance(e, dict)]
    if spoken:
        names = ", ".join(
            f"HTTP+SSE ({e.get('version')})" if e.get("transport") == "sse" else str(e.get("version")) for e in spoken
        )
        console.print(f"[cyan]speaks:[/] {escape(names)} [dim](this check: {escape(snapshot.era)})[/]", soft_wrap=True)
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
