"""`appsdk check`: lint an app against ChatGPT's Apps SDK rules and the MCP Apps standard.

Parses the options, picks the mode, hands the report to the renderer and turns it into an exit code.
Nothing heavy is imported until the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from appsdk_cli.commands.call import Protocol

# A day: longer is no deadline at all, and inf or 1e300 would overflow the socket's timeout.
MAX_TIMEOUT = 86400.0


def check(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="The app's project folder (or a .py file in it), imported in memory: no server, no port.",
            show_default=False,
            metavar="PATH",
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option("--url", help="Check a running server's MCP endpoint instead (live mode).", show_default=False),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print {findings, summary, permissions} as one JSON object (permissions: the tools each of"
            " ChatGPT's permission modes asks the user about).",
        ),
    ] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too (e.g. before submission).")] = False,
    submission: Annotated[
        bool,
        typer.Option(
            "--submission",
            help="Add the app directory's review rules (APPS9xx); with a public https --url, also the domain token "
            "and redirects.",
        ),
    ] = False,
    no_calls: Annotated[
        bool,
        typer.Option("--no-calls", help="Do not call any tool (by default read-only tools with no arguments are)."),
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            help="Seconds to wait for each step (import, answer, call); the whole command ends by then too, "
            "however many steps it has left.",
            min=0.1,
            max=MAX_TIMEOUT,
        ),
    ] = 30.0,
    token: Annotated[
        str | None,
        typer.Option("--token", help="A bearer token for a protected server (live mode).", show_default=False),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="On failure, show the details.")] = False,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="Instead of the rules: classify every change since this contract (`appsdk snapshot`) was recorded.",
            show_default=False,
            metavar="CONTRACT",
        ),
    ] = None,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Every finding (with --against: every change) in the table with its fix, however many; without"
            " it, more than 50 are listed one line each, grouped by rule (by kind of change).",
        ),
    ] = False,
    protocol: Protocol = "auto",
    explain: Annotated[
        str | None,
        typer.Option(
            "--explain",
            help="Print what a rule (APPS… or PLUG…, or its name) checks and why, and exit; contacts nothing.",
            show_default=False,
            metavar="RULE",
        ),
    ] = None,
) -> None:
    """Lint an app: widget links, MIME types, CSP, status texts, annotations, schemas and real outputs.

    With no PATH or --url: $APPSDK_URL, else the running `appsdk dev` of this project (live mode),
    else the app in the current folder (PATH mode).

    With --against appsdk.contract.json: each change is breaking (exit 1), needs a new reviewed
    version, or goes live at once; --strict fails on the second kind too.

    With --explain RULE: what the rule checks and why, offline; every rule is in docs/rules.md.

    Exit codes: 0 no errors; 1 an error was found (or a warning, with --strict), or the server is
    unreachable, or the app failed to import; 2 the command line is wrong.
    """
    if explain is not None:
        explain_rule(explain, as_json=as_json)
        return
    from appsdk_cli.proctree import DEADLINE_GRACE_SECONDS, process_deadline

    # Each step has its own timeout and says which step ran out; this ends what none of them can reach.
    with process_deadline(
        timeout + DEADLINE_GRACE_SECONDS,
        f"error: appsdk check did not finish within --timeout {timeout:g} s; nothing was reported "
        "(give it more time with --timeout)",
    ):
        _check(path, url, against, timeout, token, strict, as_json, show_all, submission, no_calls, protocol)


def _check(
    path: Path | None,
    url: str | None,
    against: Path | None,
    timeout: float,
    token: str | None,
    strict: bool,
    as_json: bool,
    show_all: bool,
    submission: bool,
    no_calls: bool,
    protocol: Protocol,
) -> None:
    if against is not None:
        from appsdk_cli.commands.snapshot import check_against

        check_against(
            against, path, url, timeout=timeout, token=token, strict=strict, as_json=as_json, show_all=show_all
        )
        return
    from appsdk_cli.checks import check_source
    from appsdk_cli.render.check import calling_tool, check_report
    from appsdk_cli.snapshot.source import choose_source

    source = choose_source(path, url, timeout=timeout, token=token, protocol=protocol)
    report = check_source(source, timeout=timeout, call_tools=not no_calls, strict=strict, calling=calling_tool)
    if submission:
        from appsdk_cli.checks.submission import with_submission

        report = with_submission(report, url=source.target.url if source.target else None, timeout=timeout)
    check_report(report, as_json=as_json, show_all=show_all)
    if report.failed:
        raise typer.Exit(1)


def explain_rule(word: str, *, as_json: bool) -> None:
    """`--explain RULE`: the rule's text from the tables alone, so it works with no app and no network."""
    from appsdk_cli import rulebook
    from appsdk_cli.errors import UsageError
    from appsdk_cli.render.check import rule_text

    entry = rulebook.find(word)
    if entry is None:
        close = rulebook.nearest(word)
        suggestion = f"did you mean {', '.join(close)}?" if close else "rule ids look like APPS101 or PLUG101"
        raise UsageError(f"no rule {word!r}; {suggestion} (every rule: docs/rules.md)")
    rule_text(entry, as_json=as_json)
