"""`appsdk dev`: the start-up panel, then one line per reload or problem."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from appsdk_cli.devserver.events import DevEvent


from appsdk_cli.render.console import stderr, stdout, warning


def dev_event(event: DevEvent) -> None:
    """One running `appsdk dev`: a panel when it starts, then one line per reload or problem."""
    from appsdk_cli.devserver import events
    from appsdk_cli.render.console import escape

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
    from rich.panel import Panel
    from rich.table import Table

    from appsdk_cli.render.console import escape

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
