"""The appsdk command line: registers the commands and maps errors to exit codes, nothing else.

Each command imports what it needs when it runs, so `appsdk --help` stays fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from appsdk_cli import __version__
from appsdk_cli.commands.apps import app_server, apps
from appsdk_cli.commands.call import call, read, resources, tools
from appsdk_cli.commands.check import check
from appsdk_cli.commands.dev import dev
from appsdk_cli.commands.new import new
from appsdk_cli.commands.preview import preview
from appsdk_cli.commands.tunnel import tunnel

app = typer.Typer(
    name="appsdk",
    help="Build, run, tunnel and test apps for ChatGPT (Apps SDK and MCP Apps).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"appsdk {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    """Build, run, tunnel and test apps for ChatGPT (Apps SDK and MCP Apps)."""


app.command()(new)
app.command()(dev)
app.command()(call)
app.command()(tools)
app.command()(resources)
app.command()(read)
app.command()(check)
app.command()(preview)
app.command()(tunnel)
app.add_typer(apps)
app.command("app-server")(app_server)


def main() -> None:
    from appsdk_cli.errors import AppsdkError

    try:
        app(standalone_mode=True)
    except AppsdkError as problem:
        from appsdk_cli import render

        render.error(problem, verbose="--verbose" in sys.argv or "-v" in sys.argv)
        sys.exit(problem.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
