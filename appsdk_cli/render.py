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

    from appsdk_cli.apps.registry import AddResult, RemoveResult
    from appsdk_cli.apps.service import InstalledResult, ListResult, ReadResult
    from appsdk_cli.checks import CheckReport
    from appsdk_cli.devserver.events import DevEvent
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.preview.screenshot import Screenshot
    from appsdk_cli.preview.server import LogEntry
    from appsdk_cli.preview.session import PreviewSession
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


def notice(message: str) -> None:
    """A step the user should know about (a sign-in opening the browser), on stderr so --json stays clean."""
    from rich.markup import escape

    stderr().print(f"[dim]{escape(message)}[/]", soft_wrap=True)


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
                "auth": result.auth,
                "files": [str(f) for f in result.files],
            }
        )
        return
    from rich.markup import escape

    console = stdout()
    verb = "Updated" if result.replaced_existing else "Created"
    console.print(f"[green]{verb}[/] [bold]{escape(str(result.path))}[/] ({len(result.files)} files)")
    console.print(f"  widget MIME type: {result.flavor.value}")
    if result.auth:
        console.print("  sign-in: OAuth 2.1 resource server; appsdk dev runs a development authorization server")
    console.print()
    console.print("Next:")
    console.print(f"  cd {escape(str(result.path))}")
    if result.auth:
        console.print("  appsdk dev --auth-user ada [dim]# sign-in approves as ada; drop it for a consent page[/]")
        console.print("  appsdk call whoami         [dim]# in a second terminal: signs in, then calls[/]")
    else:
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


def dev_event(event: DevEvent) -> None:
    """One running `appsdk dev`: a panel when it starts, then one line per reload or problem."""
    from rich.markup import escape

    from appsdk_cli.devserver import events

    if isinstance(event, events.Started):
        _dev_panel(event)
    elif isinstance(event, events.Reloaded):
        if not event.app_ok:
            return  # AppBroken already said why
        files = ", ".join(event.changed_files[:3]) + (" …" if len(event.changed_files) > 3 else "")
        stdout().print(f"[green]reloaded[/] in {event.seconds:.2f} s [dim]({escape(files)})[/]", soft_wrap=True)
        if event.tools is not None:
            parts = [
                f"{label} {', '.join(names)}"
                for label, names in (
                    ("added", event.tools.added),
                    ("removed", event.tools.removed),
                    ("changed", event.tools.changed),
                )
                if names
            ]
            stdout().print(
                f"[yellow]the tool list changed[/] ({escape('; '.join(parts))}): ChatGPT needs a Refresh of the "
                "connector to see it (Settings → Apps & Connectors → your app → Refresh)",
                soft_wrap=True,
            )
    elif isinstance(event, events.AppBroken):
        console = stderr()
        if event.traceback:
            console.print(escape(event.traceback.rstrip()), soft_wrap=True)
        console.print(f"[bold red]the app failed to import:[/] {escape(event.summary)}", soft_wrap=True)
        console.print(f"[dim]hint:[/] {escape(event.hint)}", soft_wrap=True)
    elif isinstance(event, events.AppExited):
        warning(event.message)
    elif isinstance(event, events.AllowedHostAdded):
        stdout().print(f"now accepting Host {escape(event.host)}", soft_wrap=True)
    elif isinstance(event, events.AuthServerStarted):
        how = (
            f"signs in as [bold]{escape(event.auto_user)}[/] without asking (--auth-user)"
            if event.auto_user
            else f"a consent page picks the test user ({escape(', '.join(event.users))})"
        )
        stdout().print(
            f"[green]sign-in[/]: development authorization server at {escape(event.issuer)} [dim]"
            f"(metadata {escape(event.issuer)}/.well-known/oauth-authorization-server)[/]; {how}; "
            f"tokens are for {escape(event.resource)}",
            soft_wrap=True,
        )
    elif isinstance(event, events.Stopped):
        stdout().print("[dim]appsdk dev stopped[/]")


def _dev_panel(event: Any) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    kind = "SSE" if event.transport == "sse" else "streamable HTTP, stateless JSON"
    grid.add_row("Serving", f"[bold cyan]{escape(event.url)}[/]  [dim]({kind})[/]")
    grid.add_row("App", escape(event.app))
    reload = "on save of .py .html .css .js .json .toml" if event.reload else "off (--no-reload)"
    grid.add_row("Reload", reload)
    grid.add_row("Next", "appsdk call list-books   [dim]# call a tool, in a second terminal[/]")
    grid.add_row("", "appsdk tunnel            [dim]# an HTTPS URL for ChatGPT developer mode[/]")
    console = stdout()
    console.print(Panel(grid, title="appsdk dev", title_align="left", expand=False))
    console.print("[dim]Ctrl-C to stop[/]")


# --- apps (the local registry) and app-server ----------------------------------------------------------


def server_log(message: str) -> None:
    """A log line of `appsdk app-server`, on stderr: stdout carries only protocol messages."""
    sys.stderr.write(f"appsdk app-server: {message}\n")
    sys.stderr.flush()


def _yes(value: bool) -> str:
    return "[green]yes[/]" if value else "[red]no[/]"


def app_added(result: AddResult, *, as_json: bool) -> None:
    app = result.app
    if as_json:
        json_line(
            {
                "id": app.id,
                "url": app.url,
                "name": app.name,
                "description": app.description,
                "iconUrl": app.icon_url,
                "iconUrlDark": app.icon_url_dark,
                "file": str(result.file),
                "replaced": result.previous is not None,
            }
        )
        return
    from rich.markup import escape

    console = stdout()
    verb = "Updated" if result.previous is not None else "Registered"
    console.print(f"[green]{verb}[/] [bold]{escape(app.id)}[/] → {escape(app.url)}", soft_wrap=True)
    if result.previous is not None and result.previous.url != app.url:
        console.print(f"  [dim]was {escape(result.previous.url)}[/]", soft_wrap=True)
    console.print(f"  [dim]in {escape(str(result.file))}[/]", soft_wrap=True)
    console.print("  [dim]See how a host judges it: appsdk apps installed --refresh[/]")


def app_removed(result: RemoveResult, *, as_json: bool) -> None:
    if as_json:
        json_line({"id": result.app.id, "url": result.app.url, "file": str(result.file), "removed": True})
        return
    from rich.markup import escape

    stdout().print(f"Removed [bold]{escape(result.app.id)}[/] from {escape(str(result.file))}", soft_wrap=True)


def _listing_failures(failures: list) -> None:
    for failure in failures:
        warning(f"cannot list the tools of {failure}")


def apps_list(result: ListResult, *, as_json: bool) -> None:
    if not result.feature_enabled:
        warning("the apps feature is off ([features] apps = false in config.toml): app/list is empty")
    _listing_failures(result.failures)
    if as_json:
        json_line(result.wire())
        return
    from rich.markup import escape
    from rich.table import Table

    console = stdout()
    if not result.data:
        console.print("No apps registered. Add one: appsdk apps add ID --url http://127.0.0.1:8000/mcp")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("ID", "NAME", "ACCESSIBLE", "ENABLED", "URL"):
        table.add_column(column)
    for info in result.data:
        table.add_row(
            escape(info["id"]),
            escape(info["name"]),
            _yes(info["isAccessible"]),
            _yes(info["isEnabled"]),
            escape(result.urls.get(info["id"], "")),
        )
    console.print(table)


def apps_installed(result: InstalledResult, *, as_json: bool) -> None:
    if not result.feature_enabled:
        warning("the apps feature is off ([features] apps = false in config.toml): no app is enabled or callable")
    if as_json:
        json_line(result.wire())
        return
    import time

    from rich.markup import escape
    from rich.table import Table

    console = stdout()
    if not result.apps:
        console.print("No apps registered. Add one: appsdk apps add ID --url http://127.0.0.1:8000/mcp")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("ID", "RUNTIME NAME", "ENABLED", "CALLABLE", "TOOLS"):
        table.add_column(column)
    for row in result.apps:
        listing = row.listing
        table.add_row(
            escape(row.app.id),
            escape(listing.runtime_name or "-") if listing else "[dim]not in the snapshot[/]",
            _yes(row.enabled),
            _yes(row.callable),
            str(len(listing.tools)) if listing else "-",
        )
    console.print(table)
    if result.refreshed_at:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(result.refreshed_at))
        how = "just taken" if result.refreshed else f"taken {when}"
        console.print(f"[dim]Runtime snapshot {how}; --refresh lists every server again.[/]")


def apps_read(result: ReadResult, *, as_json: bool) -> None:
    if as_json:
        json_line(result.wire())
        return
    from rich.markup import escape

    console = stdout()
    for number, metadata in enumerate(result.apps):
        app = metadata.app
        if number:
            console.print()
        console.print(f"[bold]{escape(app.id)}[/] [dim]- {escape(app.name)}[/]  {escape(app.url)}", soft_wrap=True)
        if app.description:
            console.print(f"  {escape(app.description)}", soft_wrap=True)
        if app.icon_url or app.icon_url_dark:
            icons = ", ".join(filter(None, [app.icon_url, app.icon_url_dark and f"dark: {app.icon_url_dark}"]))
            console.print(f"  [cyan]icon:[/] {escape(icons)}", soft_wrap=True)
        if metadata.tools is None:
            continue
        if not metadata.tools:
            console.print("  [yellow]no tools: a host cannot call this app[/]")
        for tool in metadata.tools:
            mark = "[green]✓[/]" if tool.decision.allowed else "[red]✗[/]"
            notes = []
            if tool.title:
                notes.append(escape(tool.title))
            if tool.read_only:
                notes.append("read-only")
            if not tool.model_visible:
                notes.append("[yellow]hidden from the model[/]")
            if not tool.decision.allowed:
                notes.append(f"[red]{escape(tool.decision.reason or 'disabled')}[/]")
            console.print(f"  {mark} {escape(tool.name)}" + (f"  [dim]{' · '.join(notes)}[/]" if notes else ""))
    if result.missing:
        console.print()
        console.print(f"[yellow]missing:[/] {escape(', '.join(result.missing))}", soft_wrap=True)


# --- preview ---------------------------------------------------------------------------------------------


def preview_serving(session: PreviewSession, page_url: str, widget_origin: str) -> None:
    from rich.markup import escape

    console = stdout()
    console.print(
        f"[green]Previewing[/] [bold]{escape(session.tool.name)}[/] with {escape(session.template.uri)}"
        f" [dim]from {escape(session.target.description)}[/]",
        soft_wrap=True,
    )
    console.print("Open:")
    # The URL alone on its line, unstyled, so it copies cleanly and scripts can pick it up.
    console.print(page_url, soft_wrap=True, markup=False, highlight=False)
    console.print(f"[dim]The widget runs on {escape(widget_origin)} under its CSP. Ctrl-C stops the preview.[/]")


def preview_log(entry: LogEntry) -> None:
    """A line of the host log, live in the terminal: errors and CSP blocks stand out."""
    from rich.markup import escape

    style = {"error": "red", "warn": "yellow"}.get(entry.level, "dim")
    stderr().print(f"[{style}]{escape(entry.kind)}:[/] {escape(entry.message)}", soft_wrap=True)


def preview_screenshot(shot: Screenshot, log: list[LogEntry]) -> None:
    from rich.markup import escape

    for entry in log:
        if entry.level in ("warn", "error"):
            preview_log(entry)
    stdout().print(
        f"[green]Saved[/] {escape(str(shot.path))} [dim]({shot.width}×{shot.height} px, the widget frame)[/]",
        soft_wrap=True,
    )


def preview_stopped() -> None:
    stderr().print("Preview stopped.")
