"""`appsdk test`: the project's tests with appsdk's pytest plugin, or a smoke suite against any server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def test(
    arguments: Annotated[
        list[str] | None,
        typer.Argument(
            help="A project folder or test path, then (after --) any pytest arguments.",
            show_default=False,
            metavar="[PATH] [-- PYTEST ARGS]",
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option("--url", help="Test the MCP server at this URL instead of the project's app.", show_default=False),
    ] = None,
    stdio: Annotated[
        str | None,
        typer.Option("--stdio", help="Test the MCP server this command starts on stdio.", show_default=False),
    ] = None,
    update_snapshots: Annotated[
        bool,
        typer.Option("--update-snapshots", help="Rewrite the widget snapshots (__snapshots__/) with what renders now."),
    ] = False,
    include_writes: Annotated[
        bool,
        typer.Option(
            "--include-writes",
            help="With --url/--stdio: the smoke suite calls widget tools that do not say readOnlyHint: true too.",
        ),
    ] = False,
    junitxml: Annotated[
        Path | None,
        typer.Option("--junitxml", help="Write a JUnit XML report here (for CI).", show_default=False, metavar="FILE"),
    ] = None,
) -> None:
    """Run the app's tests with appsdk's pytest plugin, and sum them up.

    The plugin (loaded by pytest in any project with appsdk installed) gives the tests the app under
    test (`app`: the project's `[tool.appsdk] app`, started once) and its widgets rendered in the local
    host (`render_widget`), the `hosts` marker for a profile × theme matrix, and visual snapshots kept
    in __snapshots__/ beside the tests. Rendered tests skip, saying what to install, without Chromium.

    With --url or --stdio and no tests of the project's own, a generated smoke suite runs instead: every
    tool with a widget that says readOnlyHint: true and whose arguments can be built (defaults, examples,
    enums) is called and rendered in each host profile, failing on host errors, CSP violations or a widget
    that never shows its data. Tools that may write are skipped unless --include-writes; each skip is
    listed with its reason, and a server with no widget passes, skipped, saying so. Each case is named
    after the server (host:port/path, or the stdio command).

    Exit codes: 0 every test passed; 1 a test failed, none ran, or pytest is missing; 2 the command
    line is wrong (pytest's usage errors too); 130 interrupted.
    """
    from appsdk_cli.render.testing import test_summary
    from appsdk_cli.testing.run import run_tests

    words = list(arguments or [])
    path: Path | None = None
    if words and not words[0].startswith("-"):
        path = Path(words.pop(0))
    if include_writes and not (url or stdio):
        from appsdk_cli.errors import UsageError

        raise UsageError("--include-writes goes with --url or --stdio (the smoke suite)")
    outcome = run_tests(
        path,
        words,
        url=url,
        stdio=stdio,
        update_snapshots=update_snapshots,
        junitxml=junitxml,
        include_writes=include_writes,
    )
    test_summary(outcome)
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)
