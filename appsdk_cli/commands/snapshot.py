"""`appsdk snapshot`: record the app's release contract; `appsdk check --against` compares with it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def snapshot(
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
        typer.Option("--url", help="Record a running server's MCP endpoint instead (live mode).", show_default=False),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The contract file to write.", show_default=True)
    ] = Path("appsdk.contract.json"),
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the contract to stdout (the file's exact bytes) instead of writing it."),
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for each step (import, answer).", min=0.1)
    ] = 30.0,
    token: Annotated[
        str | None,
        typer.Option("--token", help="A bearer token for a protected server (live mode).", show_default=False),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="On failure, show the details.")] = False,
) -> None:
    """Record what ChatGPT freezes when the app is reviewed, as sorted, diff-friendly JSON.

    The server's name, version and instructions; every tool (name, title, description, annotations,
    input and output schema, the _meta keys hosts read); every resource and template (URI, MIME type,
    CSP, widget domain, a hash of the widget HTML); the MCP protocol eras spoken. No tool is called.
    Commit the file; `appsdk check --against appsdk.contract.json` then classifies every change.

    Where it looks, with no PATH or --url: as `appsdk check` ($APPSDK_URL, this project's running
    `appsdk dev`, else the app in the current folder).

    Exit codes: 0 recorded; 1 the server is unreachable, the app failed to import, or the file could
    not be written; 2 the command line is wrong.
    """
    from appsdk_cli.contract import dumps, snapshot_contract
    from appsdk_cli.render.contract import snapshot_written
    from appsdk_cli.snapshot.source import choose_source

    source = choose_source(path, url, timeout=timeout, token=token)
    contract = snapshot_contract(source, timeout=timeout)
    text = dumps(contract)
    if as_json:
        import sys

        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from appsdk_cli.contract import compare, load
    from appsdk_cli.errors import AppsdkError

    previous = None
    if output.is_file():
        try:
            previous = load(output)
        except AppsdkError:
            previous = None  # overwritten with a good one; nothing to compare with
    from appsdk_cli.safewrite import default_root, write_file

    try:
        write_file(output, text, root=default_root(output))
    except OSError as problem:
        raise AppsdkError(f"cannot write {output}: {problem.strerror}") from None
    changes = compare(previous, contract) if previous is not None else None
    snapshot_written(output, contract, changes)


def check_against(
    against: Path,
    path: Path | None,
    url: str | None,
    *,
    timeout: float,
    token: str | None,
    strict: bool,
    as_json: bool,
    show_all: bool = False,
) -> None:
    """`appsdk check --against FILE`: classify every change since the contract was recorded."""
    from appsdk_cli.contract import diff_against
    from appsdk_cli.render.contract import contract_report
    from appsdk_cli.snapshot.source import choose_source

    source = choose_source(path, url, timeout=timeout, token=token)
    diff = diff_against(against, source, timeout=timeout, strict=strict)
    contract_report(diff, as_json=as_json, show_all=show_all)
    if diff.failed:
        raise typer.Exit(1)
