"""`appsdk tools` on a server with many tools: one line each past 50 (`--all` for every entry in full),
against a real server with generated tools (tests/fixtures/many_tools.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from conftest import FIXTURES, RunningServer, appsdk, free_port, serve, stop


@pytest.fixture(scope="module")
def sixty_tools() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "many_tools.py"), str(port), "60"], port)
    yield server
    stop(server.process)


def test_many_tools_are_listed_one_line_each_and_all_shows_them_in_full(sixty_tools: RunningServer) -> None:
    listed = appsdk("tools", "--url", sixty_tools.url)
    assert listed.returncode == 0, listed.stderr
    lines = [line for line in listed.stdout.splitlines() if line.startswith("tool-")]
    assert len(lines) == 60
    assert lines[0].startswith("tool-0000 - Tool 0") and "read-only, not destructive, closed-world" in lines[0]
    assert "arguments:" not in listed.stdout  # the full entries are for --all
    assert "60 tools, one line each: `appsdk tools --all` shows each in full" in listed.stdout
    full = appsdk("tools", "--url", sixty_tools.url, "--all")
    assert full.returncode == 0, full.stderr
    assert full.stdout.count("arguments:") == 60 and "one line each" not in full.stdout


def test_a_few_tools_are_listed_in_full(tmp_path) -> None:
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "many_tools.py"), str(port), "3"], port)
    try:
        listed = appsdk("tools", "--url", server.url)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.count("arguments:") == 3 and "one line each" not in listed.stdout
    finally:
        stop(server.process)


def test_a_hostile_title_cannot_forge_a_line_of_the_compact_listing(capsys) -> None:
    from appsdk_cli.appmeta import tool_meta
    from appsdk_cli.connection import Target
    from appsdk_cli.remote import ToolsOutcome
    from appsdk_cli.render.calls import tools_list

    tools = [{"name": f"tool-{i:04d}", "inputSchema": {"type": "object"}} for i in range(60)]
    tools[0]["title"] = "Harmless\ntool-9999 - Forged  widget ui://evil.html"
    outcome = ToolsOutcome(Target(url="http://127.0.0.1:9/mcp"), tools, [tool_meta(t) for t in tools], "", None, {})
    tools_list(outcome, as_json=False, show_all=False)
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("tool-")][:1] == [
        "tool-0000 - Harmless\\ntool-9999 - Forged  widget ui://evil.html  none (no annotations)"
    ]
    assert not [line for line in lines if line.startswith("tool-9999")]
