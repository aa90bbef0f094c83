"""The local apps registry and `appsdk app-server`'s log."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.apps.registry import AddResult, RemoveResult
    from appsdk_cli.apps.service import InstalledResult, ListResult, ReadResult


from appsdk_cli.render.console import json_line, printable, stdout, warning


def server_log(message: str) -> None:
    """A log line of `appsdk app-server`, on stderr: stdout carries only protocol messages."""
    sys.stderr.write(f"appsdk app-server: {printable(message)}\n")
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
    from appsdk_cli.render.console import escape

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
    from appsdk_cli.render.console import escape

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
    from rich.table import Table

    from appsdk_cli.render.console import escape

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

    from rich.table import Table

    from appsdk_cli.render.console import escape

    console = stdout()
    if not result.apps:
        console.print("No apps registered. Add one: appsdk apps add ID --url http://127.0.0.1:8000/mcp")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("ID", "RUNTIME NAME", "ENABLED", "CALLABLE", "TOOLS"):
        table.add_column(column)
    for row in result.apps:
        listing = row.listing
        if row.failure is not None:
            name = "[red]not listed[/]"
        else:
            name = escape(listing.runtime_name or "-") if listing else "[dim]not in the snapshot[/]"
        table.add_row(
            escape(row.app.id),
            name,
            _yes(row.enabled),
            _yes(row.callable),
            str(len(listing.tools)) if listing else "-",
        )
    console.print(table)
    for row in result.apps:
        if row.failure is not None:
            console.print(f"  [red]{escape(row.app.id)}[/]: {escape(row.failure)}", soft_wrap=True)
    if result.failures:
        console.print(
            "[dim]The committed runtime snapshot is unchanged: only a refresh in which every server "
            "answers replaces it.[/]"
        )
    elif result.refreshed_at:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(result.refreshed_at))
        how = "just taken" if result.refreshed else f"taken {when}"
        console.print(f"[dim]Runtime snapshot {how}; --refresh lists every server again.[/]")


def apps_read(result: ReadResult, *, as_json: bool) -> None:
    if as_json:
        json_line(result.wire())
        return
    from appsdk_cli.render.console import escape

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
    # No "missing:" line: each missing id is unregistered, unlisted or off, and the error line says which.
