"""`appsdk check --against` with many changes: one line each past 50, grouped by kind with counts (`--all`
for the table with every what-to-do), --json complete; against real generated servers
(tests/fixtures/many_tools.py), the old one under another tool-name prefix so every tool is renamed."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, RunningServer, appsdk, free_port, serve, stop


@pytest.fixture(scope="module")
def renamed(tmp_path_factory) -> Iterator[tuple[RunningServer, Path]]:
    """A server with 60 tools, and the contract recorded when they had other names."""
    contract = tmp_path_factory.mktemp("contract") / "appsdk.contract.json"
    port = free_port()
    old = serve([sys.executable, str(FIXTURES / "many_tools.py"), str(port), "60", "old"], port)
    try:
        recorded = appsdk("snapshot", "--url", old.url, "-o", str(contract))
        assert recorded.returncode == 0, recorded.stderr
    finally:
        stop(old.process)
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "many_tools.py"), str(port), "60"], port)
    yield server, contract
    stop(server.process)


def test_many_changes_are_listed_one_line_each_grouped_by_kind(renamed: tuple[RunningServer, Path]) -> None:
    server, contract = renamed
    result = appsdk("check", "--against", str(contract), "--url", server.url)
    assert result.returncode == 1, result.stderr  # renames break the published app
    lines = result.stdout.splitlines()
    assert "breaking tool renamed: 60" in lines and "needs review tool added: 60" in lines
    assert "  tool `old-0000` is gone, apparently renamed to `tool-0000`" in lines
    assert "  tool `tool-0059` is new" in lines
    assert [line for line in lines if line.startswith("  → ")][1].startswith("  → the published app does not offer")
    assert "120 changes, one line each by kind: `--all` shows each with what to do" in result.stdout
    assert "✗ 60 breaking, 60 need a new reviewed version, 0 go live at once" in result.stdout
    assert "┃" not in result.stdout  # no table


def test_all_shows_the_table_and_json_every_change(renamed: tuple[RunningServer, Path]) -> None:
    server, contract = renamed
    table = appsdk("check", "--against", str(contract), "--url", server.url, "--all")
    assert table.returncode == 1, table.stderr
    assert "┃ impact" in table.stdout and table.stdout.count("next to") == 60
    assert "one line each" not in table.stdout
    printed = appsdk("check", "--against", str(contract), "--url", server.url, "--json")
    assert printed.returncode == 1, printed.stderr
    report = json.loads(printed.stdout)
    assert len(report["changes"]) == 120 and report["summary"]["breaking"] == 60
    kinds = {change["kind"] for change in report["changes"]}
    assert kinds == {"tool renamed", "tool added"}
    assert all("todo" in change for change in report["changes"])


def test_a_snapshot_that_replaces_a_contract_lists_many_changes_by_kind(
    renamed: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    server, contract = renamed
    replaced = tmp_path / "appsdk.contract.json"
    replaced.write_bytes(contract.read_bytes())
    result = appsdk("snapshot", "--url", server.url, "-o", str(replaced))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "breaking tool renamed: 60" in lines and "needs review tool added: 60" in lines
    assert "  tool `old-0059` is gone, apparently renamed to `tool-0059`" in lines
    assert "120 changes, one line each by kind" in result.stdout


@pytest.mark.parametrize("many", [False, True], ids=["few", "many"])
def test_a_hostile_tool_name_cannot_forge_a_line_of_dev_or_snapshot_output(capsys, many: bool) -> None:
    from appsdk_cli.contract import compare
    from appsdk_cli.render.contract import change_lines

    old = {"tools": {"a": {}}}
    new = {"tools": {"a": {}, "evil\n  breaking: tool `a` was removed": {}}}
    new["tools"] |= {f"more-{i}": {} for i in range(60 if many else 0)}
    change_lines(compare(old, new))
    lines = capsys.readouterr().out.splitlines()
    assert not [line for line in lines if line.startswith("  breaking")]
    assert any("evil\\n  breaking: tool `a` was removed" in line for line in lines)


@pytest.mark.parametrize("terminal", [False, True], ids=["log", "terminal"])
def test_a_hostile_tool_name_cannot_forge_a_line_of_the_compact_report(capsys, monkeypatch, terminal: bool) -> None:
    from appsdk_cli.contract import ContractDiff, compare
    from appsdk_cli.render.contract import contract_report

    old = {"tools": {f"tool-{i:04d}": {"description": f"Tool {i}."} for i in range(60)}}
    evil = "evil\n  tool `tool-0001` is gone\x1b]52;c;aGk=\x07"
    new = {"tools": {**old["tools"], evil: {"description": "Evil."}}}
    del new["tools"]["tool-0000"]
    new["tools"] |= {f"more-{i}": {"description": f"More {i}."} for i in range(60)}
    if terminal:  # styled with rich markup, which the name must not inject either
        monkeypatch.setenv("FORCE_COLOR", "1")
        monkeypatch.setenv("COLUMNS", "400")
    contract_report(ContractDiff(compare(old, new), against="c.json", server="s"), as_json=False)
    lines = re.sub("\x1b\\[[0-9;]*m", "", capsys.readouterr().out).splitlines()
    assert "  tool `evil\\n  tool `tool-0001` is gone\\x1b]52;c;aGk=\\x07` is new" in lines
    assert not [line for line in lines if line.startswith("  tool `tool-0001` is gone")]
    assert "\x1b" not in "\n".join(lines)


def _bare_tools(count: int) -> list[dict]:
    return [{"name": f"tool-{i:04d}", "inputSchema": {"type": "object"}} for i in range(count)]


def test_many_findings_are_listed_one_line_each_grouped_by_rule(capsys, monkeypatch) -> None:
    """`appsdk check` of a server with many tools, each without its hints: one line a finding past 50."""
    from appsdk_cli.checks import run_rules
    from appsdk_cli.render.check import check_report
    from appsdk_cli.snapshot.model import Snapshot

    tools = _bare_tools(60)
    tools[1]["name"] = "evil\ntool-9999: annotations forged\x1b[2J"
    report = run_rules(Snapshot(mode="live", server="http://127.0.0.1:9/mcp", tools=tools))
    assert len(report.findings) > 50
    check_report(report, as_json=False, show_all=False)
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("APPS302 "))
    assert header.endswith(": 60") and "warning" in header
    assert sum(1 for line in lines if line.startswith("  tool-") and line.endswith("openWorldHint")) == 59
    # the tools without hints, on one line: the first ten and how many more
    assert any(line.startswith("  tool-0000, evil\\ntool-9999") and " and 50 more " in line for line in lines)
    assert not [line for line in lines if line.startswith("tool-9999") or line.startswith("  tool-9999")]
    assert any(line.startswith("  evil\\ntool-9999: annotations forged\\x1b[2J") for line in lines)
    assert "one line each by rule: `--all` shows each with its fix" in "\n".join(lines)
    check_report(report, as_json=False, show_all=True)
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("┃ rule") for line in lines) and not any(line.startswith("tool-9999") for line in lines)
