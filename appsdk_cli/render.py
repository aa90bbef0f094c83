"""How a person (rich) or a script (--json) sees a result. Nothing else in appsdk prints."""

from __future__ import annotations

import json
import signal
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from rich.console import Console

    from appsdk_cli.checks import CheckReport
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.remote import CallOutcome, ReadOutcome, ResourcesOutcome, ToolsOutcome
    from appsdk_cli.scaffold import ScaffoldResult
    from appsdk_cli.tunnel import TunnelEndpoints


def stdout() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def json_line(value: Any) -> None:
    """One JSON document on one line of stdout, for scripts."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def error(problem: AppsdkError, *, verbose: bool = False) -> None:
    from rich.markup import escape

    console = stderr()
    console.print(f"[bold red]error:[/] {escape(problem.message)}", soft_wrap=True)
    if verbose and problem.detail:
        console.print(escape(problem.detail), soft_wrap=True)


def warning(message: str) -> None:
    from rich.markup import escape

    stderr().print(f"[yellow]warning:[/] {escape(message)}", soft_wrap=True)


def scaffold_result(result: ScaffoldResult, *, as_json: bool) -> None:
    if as_json:
        json_line(
            {
                "name": result.name,
                "path": str(result.path),
                "widgetMimeType": result.flavor.value,
                "files": [str(f) for f in result.files],
            }
        )
        return
    from rich.markup import escape

    console = stdout()
    verb = "Updated" if result.replaced_existing else "Created"
    console.print(f"[green]{verb}[/] [bold]{escape(str(result.path))}[/] ({len(result.files)} files)")
    console.print(f"  widget MIME type: {result.flavor.value}")
    console.print()
    console.print("Next:")
    console.print(f"  cd {escape(str(result.path))}")
    console.print("  appsdk dev                 [dim]# or: python server.py[/]")
    console.print("  appsdk call list-books     [dim]# in a second terminal[/]")
    console.print("  python -m pytest           [dim]# the app's own tests[/]")


# --- call, tools, resources, read ----------------------------------------------------------------------


def _pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _content_lines(blocks: Any) -> list[str]:
    """Content blocks as a person reads them: text as is, the rest as a one-line summary."""
    lines: list[str] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            lines.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(block.get("data", ""))) * 3 // 4
            lines.append(f"[{kind} {block.get('mimeType', '?')}, about {size} bytes; see --json]")
        elif kind == "resource_link":
            lines.append(f"[link {block.get('uri')} {block.get('mimeType') or ''}]".replace(" ]", "]"))
        elif kind == "resource":
            inner = block.get("resource") if isinstance(block.get("resource"), dict) else {}
            lines.append(f"[resource {inner.get('uri')} {inner.get('mimeType') or ''}]".replace(" ]", "]"))
        else:
            lines.append(f"[{kind} block; see --json]")
    return lines


def call_result(outcome: CallOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line(outcome.result)
        return
    from rich.markup import escape

    console = stdout()
    tool = outcome.tool
    result = outcome.result
    failed = outcome.is_error
    header = f"[bold red]{escape(tool.name)} failed (isError)[/]" if failed else f"[bold]{escape(tool.name)}[/]"
    console.print(f"{header} [dim]on {escape(outcome.target.description)}[/]", soft_wrap=True)
    if tool.invoking or tool.invoked:
        console.print(
            f"  [cyan]invoking:[/] {escape(tool.invoking or '-')}  [cyan]invoked:[/] {escape(tool.invoked or '-')}",
            soft_wrap=True,
        )
    if tool.template:
        console.print(f"  [cyan]widget:[/] {escape(tool.template)}", soft_wrap=True)
    if "structuredContent" in result:
        console.print("[bold]structuredContent[/]")
        console.print(escape(_pretty_json(result["structuredContent"])), soft_wrap=True)
    lines = _content_lines(result.get("content"))
    if lines:
        console.print("[bold]content[/]")
        style = "red" if failed else ""
        for line in lines:
            console.print(escape(line), style=style, soft_wrap=True)
    if isinstance(result.get("_meta"), dict):
        console.print("[bold]_meta[/] [dim](widget only)[/]")
        console.print(escape(_pretty_json(result["_meta"])), soft_wrap=True)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _flag(value: bool | None, yes: str, no: str) -> str:
    return "?" if value is None else (yes if value else no)


def tools_list(outcome: ToolsOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line({"tools": outcome.tools})
        return
    from rich.markup import escape

    console = stdout()
    console.print(f"[bold]{_count(len(outcome.metas), 'tool')}[/] [dim]on {escape(outcome.target.description)}[/]")
    for tool in outcome.metas:
        console.print()
        title = f" [dim]- {escape(tool.title)}[/]" if tool.title else ""
        console.print(f"[bold]{escape(tool.name)}[/]{title}", soft_wrap=True)
        if tool.description:
            console.print(f"  {escape(tool.description.strip().splitlines()[0])}", soft_wrap=True)
        if tool.template:
            console.print(f"  [cyan]widget:[/] {escape(tool.template)}", soft_wrap=True)
        if tool.templates_disagree:
            console.print(
                f"  [yellow]ui.resourceUri {escape(tool.resource_uri or '')} differs from "
                f"openai/outputTemplate {escape(tool.output_template or '')}[/]",
                soft_wrap=True,
            )
        if tool.invoking or tool.invoked:
            console.print(
                f"  [cyan]invoking:[/] {escape(tool.invoking or '-')}  [cyan]invoked:[/] {escape(tool.invoked or '-')}",
                soft_wrap=True,
            )
        hints = ", ".join(
            [
                _flag(tool.read_only, "read-only", "writes"),
                _flag(tool.destructive, "destructive", "not destructive"),
                _flag(tool.open_world, "open-world", "closed-world"),
            ]
        )
        console.print(f"  [cyan]hints:[/] {hints}" + (" [dim](? = not declared)[/]" if "?" in hints else ""))
        visibility = ["model" if tool.model_visible else "hidden from the model"]
        if tool.ui_visibility is not None:
            visibility.append(f"ui.visibility {', '.join(tool.ui_visibility)}")
        if tool.openai_visibility:
            visibility.append(f"openai/visibility {tool.openai_visibility}")
        if tool.widget_accessible:
            visibility.append("widget may call it")
        console.print(f"  [cyan]visibility:[/] {escape('; '.join(visibility))}", soft_wrap=True)
    if outcome.metas:
        console.print()
        console.print("[dim]Call one: appsdk call NAME KEY=VALUE ...[/]")


def resources_list(outcome: ResourcesOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line({"resources": outcome.resources})
        return
    from rich.markup import escape

    console = stdout()
    console.print(f"[bold]{_count(len(outcome.metas), 'resource')}[/] [dim]on {escape(outcome.target.description)}[/]")
    for resource in outcome.metas:
        widget = " [green]widget[/]" if resource.is_widget else ""
        console.print(
            f"  {escape(resource.uri)}  [cyan]{escape(resource.mime_type or 'no MIME type')}[/]{widget}",
            soft_wrap=True,
        )
        label = resource.title or resource.name
        if label:
            console.print(f"    [dim]{escape(label)}[/]", soft_wrap=True)


def resource_contents(outcome: ReadOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line(outcome.result)
        return
    from rich.markup import escape

    console = stdout()
    contents = outcome.result.get("contents") or []
    for item in contents if isinstance(contents, list) else []:
        if not isinstance(item, dict):
            continue
        console.print(
            f"[bold]{escape(str(item.get('uri', outcome.uri)))}[/]  [cyan]{escape(str(item.get('mimeType') or ''))}[/]",
            soft_wrap=True,
        )
        if isinstance(item.get("_meta"), dict):
            console.print("[bold]_meta[/]")
            console.print(escape(_pretty_json(item["_meta"])), soft_wrap=True)
        if "text" in item:
            console.print("[bold]text[/]")
            # The text as served, byte for byte: no markup, no highlighting, no wrapping.
            sys.stdout.write(str(item["text"]))
            if not str(item["text"]).endswith("\n"):
                sys.stdout.write("\n")
            sys.stdout.flush()
        elif "blob" in item:
            console.print(f"[dim]binary, about {len(str(item['blob'])) * 3 // 4} bytes; use --json for the base64[/]")


# --- check --------------------------------------------------------------------------------------------


def check_report(report: CheckReport, *, as_json: bool) -> None:
    if as_json:
        json_line(report.as_json())
        return
    from rich.markup import escape
    from rich.table import Table

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
    scope = f"{_count(len(snapshot.tools), 'tool')}, {_count(len(snapshot.resources), 'resource')}" + (
        f", called {', '.join(called)}" if called else ""
    )
    where = f"— {snapshot.mode} mode: {escape(snapshot.server)} ({escape(scope)})"
    if not report.findings:
        console.print(f"[green]✓ no problems[/] [dim]{where}[/]", soft_wrap=True)
        return
    colour = "red" if report.failed else "yellow"
    mark = "✗" if report.failed else "!"
    console.print(
        f"[{colour}]{mark} {_count(report.errors, 'error')}, {_count(report.warnings, 'warning')}[/]"
        + (" [dim](--strict: warnings fail)[/]" if report.strict and report.warnings else "")
        + f" [dim]{where}[/]",
        soft_wrap=True,
    )


@contextmanager
def spinner(message: str) -> Iterator[None]:
    """A spinner on stderr while something slow starts; stdout stays clean for --json."""
    with stderr().status(message):
        yield


@contextmanager
def stopping_on_sigterm() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C, so the same cleanup runs for both."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


CHATGPT_STEPS = (
    "In ChatGPT: Settings → Apps → Advanced settings → turn on Developer mode.",
    "Settings → Apps → Create app: give it a name and the MCP URL above.",
    "In a chat, pick the app from + → More, and ask it something.",
    "After you change a tool's name, schema or metadata, press Refresh on the app in Settings.",
)


def tunnel_check(check: Callable[[], object], endpoints: TunnelEndpoints) -> bool:
    """Run the through-the-tunnel MCP check; report a failure plainly and go on."""
    from appsdk_cli.errors import AppsdkError

    try:
        with spinner("Checking the public /mcp URL"):
            check()
    except AppsdkError as problem:
        warning(f"the tunnel is open, but {endpoints.mcp_url} failed an MCP initialize: {problem.message}")
        return False
    return True


def tunnel_opened(endpoints: TunnelEndpoints, *, verified: bool, as_json: bool) -> None:
    if as_json:
        json_line({**endpoints.as_json(), "verified": verified})
        return
    from rich.markup import escape

    console = stdout()
    console.print(
        f"[green]Tunnel open[/] → {escape(endpoints.local_url)}" + ("" if verified else " [yellow](unverified)[/]")
    )
    console.print()
    console.print("MCP URL for ChatGPT:")
    # The URL alone on its line, unstyled and unwrapped, so it copies cleanly.
    console.print(endpoints.mcp_url, soft_wrap=True, markup=False)
    console.print()
    for number, step in enumerate(CHATGPT_STEPS, 1):
        console.print(f"  {number}. {escape(step)}")
    console.print()
    console.print("[dim]Ctrl-C closes the tunnel.[/]")


def tunnel_restarted(endpoints: TunnelEndpoints, url_changed: bool, *, as_json: bool) -> None:
    if as_json:
        json_line({**endpoints.as_json(), "restarted": True, "url_changed": url_changed})
        return
    if url_changed:
        warning("the ngrok agent stopped and was restarted; the URL CHANGED, update it in ChatGPT:")
        stdout().print(endpoints.mcp_url, soft_wrap=True, markup=False)
    else:
        warning(f"the ngrok agent stopped and was restarted; the URL is unchanged ({endpoints.mcp_url})")


def tunnel_closed(*, as_json: bool) -> None:
    if not as_json:
        stderr().print("Tunnel closed.")
