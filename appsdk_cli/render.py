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

    from appsdk_cli.errors import AppsdkError
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
