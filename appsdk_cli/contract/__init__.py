"""The release contract: record what a reviewed snapshot of the app holds, and classify every change to it.

Drivable without the CLI:

    from appsdk_cli.contract import snapshot_contract, diff_against
    contract = snapshot_contract(source, timeout=30)      # a dict; record.dumps(contract) is the file
    diff = diff_against(Path("appsdk.contract.json"), source, timeout=30)

The Snapshot comes from snapshot/'s collectors (live, or the app imported in a child process);
no tool is called. Modules: record.py (the file), compare.py (the classes), schemas.py (JSON Schema
compatibility).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from appsdk_cli.contract.compare import Change, ContractDiff, Impact, compare
from appsdk_cli.contract.record import DEFAULT_FILE, dumps, load, record

if TYPE_CHECKING:
    from appsdk_cli.snapshot.model import Snapshot
    from appsdk_cli.snapshot.source import Source

__all__ = [
    "DEFAULT_FILE",
    "Change",
    "ContractDiff",
    "Impact",
    "collect",
    "compare",
    "diff_against",
    "dumps",
    "load",
    "record",
    "snapshot_contract",
]


def collect(source: Source, *, timeout: float) -> Snapshot:
    """What the server sends, without calling a tool; a server that wants sign-in is an error here."""
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.snapshot.source import collect_source

    snapshot = collect_source(source, timeout=timeout, call_tools=False)
    if snapshot.auth.get("signInRequired"):
        raise AppsdkError(f"{snapshot.server} wants sign-in: pass --token with a bearer token to record it")
    return snapshot


def snapshot_contract(source: Source, *, timeout: float) -> dict[str, Any]:
    return record(collect(source, timeout=timeout))


def diff_against(path: Path, source: Source, *, timeout: float, strict: bool = False) -> ContractDiff:
    """The changes from the contract file at `path` to what `source` serves now."""
    from appsdk_cli.schemawalk import Budget

    old = load(path)
    snapshot = collect(source, timeout=timeout)
    # The schema comparisons get --timeout too: a contract or server may hold schemas built to hang them.
    changes = compare(old, record(snapshot), budget=Budget.within(timeout))
    return ContractDiff(changes, against=str(path), server=snapshot.server, strict=strict)
