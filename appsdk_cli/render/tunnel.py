"""`appsdk tunnel`: the public URL and the ChatGPT steps."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from appsdk_cli.tunnel import TunnelEndpoints


from appsdk_cli.render.console import json_line, spinner, stderr, stdout, warning

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
