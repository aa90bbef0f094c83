"""How many HTTP exchanges a real `appsdk dev` sees per `appsdk call`, and that a remembered tool list
never makes a call wrong after the app changes (dev reload).

A counting proxy (tests/exchange_counter.py) sits between the real `appsdk` command line and a real
`appsdk dev`; it records what the server receives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import appsdk, stop
from exchange_counter import counting_proxy
from test_dev import edit, start_dev, wait_until

from appsdk_cli.scaffold import scaffold

MODERN = "2026-07-28"
COUNT_TOOL = '''

@mcp.tool(name="count")
def count(limit: int) -> str:
    """Echo the argument with its type, so a test sees what the server received."""
    return f"limit={limit!r}"
'''


@pytest.fixture
def dev_behind_proxy(tmp_path: Path):
    project = scaffold("book-club", tmp_path).path
    dev = start_dev(project)
    try:
        with counting_proxy(dev.port) as (port, exchanges):
            yield dev, f"http://127.0.0.1:{port}/mcp", exchanges
    finally:
        stop(dev.process)


def call(url: str, home: Path, *words: str) -> dict:
    done = appsdk("call", *words, "--url", url, "--json", env={"APPSDK_HOME": str(home)})
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("protocol", "cold", "warm"),
    [
        # 2026-07-28: the probe and the tool list once; then the call alone.
        ("auto", ["server/discover", "tools/list", "tools/call"], ["tools/call"]),
        # The 2025 handshake cannot go below three: initialize, its notification, the call (this server
        # keeps no session, so there is no DELETE; a stateful one adds it).
        (
            "2025-11-25",
            ["initialize", "notifications/initialized", "tools/list", "tools/call"],
            ["initialize", "notifications/initialized", "tools/call"],
        ),
    ],
)
def test_a_warm_call_to_appsdk_dev_is_one_exchange_in_2026_and_three_in_2025(
    dev_behind_proxy, tmp_path, protocol, cold, warm
):
    _, url, exchanges = dev_behind_proxy
    home = tmp_path / "home"
    for expected in (cold, warm, warm):
        exchanges.clear()
        result = call(url, home, "list-books", "--protocol", protocol)
        assert result["structuredContent"]["books"][0]["title"] == "Frankenstein"
        assert exchanges.rpc == [f"POST {method}" for method in expected]


def test_a_tool_changed_by_a_reload_is_still_called_right(dev_behind_proxy, tmp_path):
    dev, url, exchanges = dev_behind_proxy
    home = tmp_path / "home"
    call(url, home, "list-books")  # the era and the tool list are remembered now
    server = dev.project / "server.py"

    def reload(old: str, new: str) -> None:
        reloads = dev.out().count("reloaded")
        edit(server, old, new)
        wait_until(lambda: dev.out().count("reloaded") > reloads, message="the reload")

    def sent(*words: str) -> tuple[str, list[str]]:
        exchanges.clear()
        result = call(url, home, *words)
        assert result.get("isError") is not True, result
        return result["content"][0]["text"], [rpc.removeprefix("POST ") for rpc in exchanges.rpc]

    # A new tool is not in the remembered list: list again, then call.
    reload("\n\ndef transport_security()", COUNT_TOOL + "\n\ndef transport_security()")
    assert sent("count", "limit=2") == ("limit=2", ["tools/list", "tools/call"])
    assert sent("count", "limit=2") == ("limit=2", ["tools/call"])
    # The argument's type changes: the remembered schema sends 2, the server refuses it (isError), the
    # fresh schema builds "2" and the call is resent once.
    reload("def count(limit: int)", "def count(limit: str)")
    assert sent("count", "limit=2") == ("limit='2'", ["tools/call", "tools/list", "tools/call"])
    assert sent("count", "limit=2") == ("limit='2'", ["tools/call"])
    # The argument is renamed: the remembered schema has no `n`, so the fresh one decides before any call.
    reload("def count(limit: str)", "def count(n: str)")
    reload('f"limit={limit!r}"', 'f"n={n!r}"')
    assert sent("count", "n=x") == ("n='x'", ["tools/list", "tools/call"])
    # The tool is removed: the usual unknown-tool line (exit 2), found by listing again.
    reload('@mcp.tool(name="count")', '@mcp.tool(name="counted")')
    exchanges.clear()
    gone = appsdk("call", "count", "n=x", "--url", url, env={"APPSDK_HOME": str(home)})
    assert gone.returncode == 2 and "no tool 'count'" in gone.stderr and "counted" in gone.stderr, gone.stderr
    assert [rpc.removeprefix("POST ") for rpc in exchanges.rpc] == ["tools/call", "tools/list"]


def test_the_tool_list_is_remembered_per_principal_without_the_token(tmp_path):
    from appsdk_cli.client.toolcache import ToolCache, ToolList, cache_key

    cache = ToolCache(tmp_path / "tools.json")
    mine = cache_key("http://127.0.0.1:1/mcp", MODERN, "Bearer secret-one")
    cache.remember(mine, ToolList([{"name": "a", "inputSchema": {"type": "object"}}], {}))
    fresh = ToolCache(tmp_path / "tools.json")  # the next command
    assert fresh.get(mine) is not None and fresh.get(mine).tools[0]["name"] == "a"
    assert fresh.get(cache_key("http://127.0.0.1:1/mcp", MODERN, "Bearer secret-two")) is None
    assert fresh.get(cache_key("http://127.0.0.1:1/mcp", "2025-11-25", "Bearer secret-one")) is None
    assert "secret" not in (tmp_path / "tools.json").read_text()
    expired = ToolCache(tmp_path / "tools.json", lifetime=0.0)
    assert expired.get(mine) is None


def test_a_warm_call_to_a_stateful_2025_server_adds_only_the_session_delete(node_clients, tmp_path):
    """server-everything keeps 2025 sessions: the warm call is the handshake, the call and the DELETE."""
    from conftest import free_port, serve
    from test_eras_interop import EVERYTHING

    port = free_port()
    everything = serve(["node", str(EVERYTHING), "streamableHttp"], port, cwd=node_clients, env={"PORT": str(port)})
    try:
        with counting_proxy(port) as (proxy, exchanges):
            url = f"http://127.0.0.1:{proxy}/mcp"
            home = tmp_path / "home"
            seen = []
            for _ in range(2):
                exchanges.clear()
                assert call(url, home, "echo", "message=hi")["content"][0]["text"] == "Echo: hi"
                seen.append(exchanges.rpc)
    finally:
        stop(everything.process)
    # Cold: the modern probe is refused, then the handshake; warm: no probe and no tools/list.
    assert seen[0] == [
        "POST server/discover",
        "POST initialize",
        "POST notifications/initialized",
        "POST tools/list",
        "POST tools/call",
        "DELETE",
    ]
    assert seen[1] == ["POST initialize", "POST notifications/initialized", "POST tools/call", "DELETE"]
