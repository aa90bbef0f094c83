"""The appsdk command line: registers the commands and maps errors to exit codes, nothing else.

Each command imports what it needs when it runs, so `appsdk --help` stays fast.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from appsdk_cli import __version__
from appsdk_cli.commands.apps import app_server, apps
from appsdk_cli.commands.auth import auth
from appsdk_cli.commands.build import build, types
from appsdk_cli.commands.call import call, read, resources, tools
from appsdk_cli.commands.check import check
from appsdk_cli.commands.dev import dev
from appsdk_cli.commands.mcp import mcp
from appsdk_cli.commands.new import new
from appsdk_cli.commands.plugin import plugin
from appsdk_cli.commands.preview import preview
from appsdk_cli.commands.skill import skill
from appsdk_cli.commands.snapshot import snapshot
from appsdk_cli.commands.test import test
from appsdk_cli.commands.tunnel import tunnel
from appsdk_cli.helptext import PANELS, GroupedCommands

app = typer.Typer(
    name="appsdk",
    cls=GroupedCommands,
    help="Build, run, tunnel and test apps for ChatGPT (Apps SDK and MCP Apps).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: typer's rich help imports rich.markdown and markdown-it, about 0.1 s on every
    # --help and usage error, which is most of what `appsdk --help` would cost.
    rich_markup_mode=None,
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


# Short lines for the command list; each command's docstring is its full --help. The panels group
# the list as the work goes: make the app, run it, look at what it sends, ship it.
BUILD, RUN, INSPECT, SHIP = PANELS
app.command(short_help="Scaffold the book-club app: server, widget and tests.", rich_help_panel=BUILD)(new)
app.command(short_help="Generate the widget's TypeScript types from the tools' outputSchema.", rich_help_panel=BUILD)(
    types
)
app.command(short_help="Build the React widget into one self-contained web/dist/index.html.", rich_help_panel=BUILD)(
    build
)
app.command(short_help="Serve the app with hot reload (--tunnel: and over HTTPS).", rich_help_panel=RUN)(dev)
app.command(short_help="Render a widget in a local ChatGPT-like host; no TOOL: the workbench.", rich_help_panel=RUN)(
    preview
)
app.command(short_help="Open an ngrok HTTPS tunnel and print the /mcp URL for ChatGPT.", rich_help_panel=RUN)(tunnel)
app.add_typer(auth, short_help="The cached sign-ins: status, logout.", rich_help_panel=RUN)
app.command(short_help="Call a tool the way ChatGPT does and show what each side gets.", rich_help_panel=INSPECT)(call)
app.command(short_help="List the tools: arguments, sign-in scopes and Apps SDK metadata.", rich_help_panel=INSPECT)(
    tools
)
app.command(short_help="List the resources and their MIME types.", rich_help_panel=INSPECT)(resources)
app.command(short_help="Print one resource (a widget's HTML and _meta).", rich_help_panel=INSPECT)(read)
app.command(short_help="Lint the app against ChatGPT's and the MCP Apps rules.", rich_help_panel=INSPECT)(check)
app.command(short_help="Run the app's tests: rendered widgets, snapshots, a host matrix.", rich_help_panel=INSPECT)(
    test
)
app.command(short_help="Record the release contract: what ChatGPT freezes at review.", rich_help_panel=SHIP)(snapshot)
app.add_typer(plugin, short_help="Ship the app as a plugin: init, check, pack, install --codex.", rich_help_panel=SHIP)
app.add_typer(apps, short_help="The local apps registry: add, remove, list, installed, read.", rich_help_panel=SHIP)
# For coding agents: appsdk's own tools over MCP, and the skill that teaches the loop.
app.command(short_help="Serve appsdk's tools to a coding agent over MCP (stdio, or --port).", rich_help_panel=RUN)(mcp)
app.add_typer(skill, short_help="Install appsdk's skill for Codex or Claude Code.", rich_help_panel=BUILD)
app.command("app-server", short_help="Serve the Codex app/* methods on stdio (JSONL).", rich_help_panel=SHIP)(
    app_server
)


def _only_the_invoked_command(argv: list[str]) -> typer.Typer:
    """`app` with just the command argv names, when it names a plain command: click's tree for all of
    them costs about 0.05 s per run (benchmarks/call.py), one costs a tenth. The root's own help,
    --version, a group and an unknown name get the whole tree."""
    import copy

    wanted = argv[0] if argv and not argv[0].startswith("-") else None
    chosen = [c for c in app.registered_commands if (c.name or c.callback.__name__.replace("_", "-")) == wanted]
    if len(chosen) != 1:
        return app
    lean = copy.copy(app)
    lean.registered_commands, lean.registered_groups = chosen, []
    return lean


def _refusing_nan(command: Any) -> Any:
    """Every bounded float option of the tree refuses NaN, which compares false with both bounds and so
    slips through click's FloatRange (typer 0.29's pydantic adapters refused it; 0.28 does not)."""
    import math

    from typer._click.types import FloatRange

    class FiniteRange(FloatRange):
        def convert(self, value: Any, param: Any, ctx: Any) -> Any:
            number = super().convert(value, param, ctx)
            if isinstance(number, float) and math.isnan(number):
                self.fail(f"{value!r} is not a number.", param, ctx)
            return number

    for param in command.params:
        bounds = param.type
        if isinstance(bounds, FloatRange) and not isinstance(bounds, FiniteRange):
            param.type = FiniteRange(bounds.min, bounds.max, bounds.min_open, bounds.max_open, bounds.clamp)
    for sub in getattr(command, "commands", {}).values():
        _refusing_nan(sub)
    return command


def main() -> None:
    import typer.main

    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.helptext import polish

    try:
        command = typer.main.get_command(_only_the_invoked_command(sys.argv[1:]))
        polish(_refusing_nan(command))(standalone_mode=True)
    except AppsdkError as problem:
        from appsdk_cli.render.console import error

        error(problem, verbose="--verbose" in sys.argv or "-v" in sys.argv)
        sys.exit(problem.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except RecursionError:
        from appsdk_cli.render.console import error

        error(AppsdkError("the input is nested too deeply to read (JSON or TOML many levels deep)"))
        sys.exit(1)
    except Exception as problem:  # a bug of ours: one line, and the traceback only when asked for
        import traceback

        from appsdk_cli.render.console import error

        verbose = "--verbose" in sys.argv or "-v" in sys.argv
        error(
            AppsdkError(
                f"appsdk failed unexpectedly ({type(problem).__name__}: {problem}); rerun with --verbose and report it",
                detail=traceback.format_exc(),
            ),
            verbose=verbose,
        )
        sys.exit(1)
