"""`appsdk tunnel`: the public URL and the ChatGPT steps."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.tunnel import TunnelEndpoints


from appsdk_cli import chatgpt
from appsdk_cli.render.console import json_line, stderr, stdout, warning


def tunnel_unverified(endpoints: TunnelEndpoints, problem: str) -> None:
    """The tunnel is open, but the public /mcp URL failed the MCP check: said plainly, and the tunnel stays."""
    warning(f"the tunnel is open, but {endpoints.mcp_url} failed an MCP initialize: {problem}")


def tunnel_opened(endpoints: TunnelEndpoints, *, verified: bool, as_json: bool) -> None:
    if as_json:
        json_line({**endpoints.as_json(), "verified": verified})
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    console.print(
        f"[green]Tunnel open[/] → {escape(endpoints.local_url)}" + ("" if verified else " [yellow](unverified)[/]")
    )
    console.print()
    console.print("MCP URL for ChatGPT:")
    # The URL alone on its line, unstyled and unwrapped, so it copies cleanly.
    console.print(endpoints.mcp_url, soft_wrap=True, markup=False)
    console.print()
    console.print(_numbered(chatgpt.steps("the MCP URL above")))
    console.print()
    console.print("[dim]Ctrl-C closes the tunnel.[/]")


def _numbered(steps: tuple[str, ...]) -> object:
    """The steps as a numbered list whose wrapped lines stay indented under their text."""
    from rich.padding import Padding
    from rich.table import Table

    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right")
    grid.add_column()
    for number, step in enumerate(steps, 1):
        grid.add_row(f"{number}.", chatgpt.rich(step))
    return Padding(grid, (0, 0, 0, 2))


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
