"""A failing tool says why: the result stays what production sends, appsdk dev tells the developer beside it.

One `appsdk dev` (real supervisor and worker) serves a scaffolded app with a tool that crashes and one that
raises ToolError; `appsdk call`, `preview`'s call proxy and `check` talk to it over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import appsdk, free_port, stop
from test_dev import DevServer, start_dev, wait_until
from test_preview import Running, post, stop_preview

from appsdk_cli.appmeta import TOOL_CRASH
from appsdk_cli.scaffold import scaffold

TUNNEL_HOST = "abc.tunnel.example"
TOOLS = '''

def picks_for(month: str) -> list[dict[str, str]]:
    return {"june": PICKS}[month.lower()]


@mcp.tool(name="crash", annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False))
def crash(month: str = "never") -> str:
    """Crashes: a KeyError two frames down, in the user's own code."""
    return str(picks_for(month))


@mcp.tool(name="crash-widget", meta={"ui": {"resourceUri": WIDGET_URI}})
def crash_widget() -> str:
    """A widget tool that crashes, for preview."""
    return str(picks_for("never"))


@mcp.tool(name="refuse")
def refuse(month: str = "never") -> str:
    """Fails on purpose, with text the model should read."""
    raise ToolError(f"no picks for {month}")
'''


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    project = scaffold("book-club", tmp_path_factory.mktemp("errors")).path
    source = (project / "server.py").read_text(encoding="utf-8")
    source = source.replace(
        "from mcp.server.mcpserver import MCPServer",
        "from mcp.server.mcpserver import MCPServer\nfrom mcp.server.mcpserver.exceptions import ToolError",
    )
    marker = "\n\ndef transport_security()"
    source = source.replace(marker, TOOLS + marker, 1)
    (project / "server.py").write_text(source, encoding="utf-8")
    server = start_dev(project, "--allow-host", TUNNEL_HOST)
    yield server
    stop(server.process)


def line_of(project: Path, text: str) -> int:
    lines = (project / "server.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_a_crash_keeps_the_production_result_and_call_shows_why(failing: DevServer):
    line = line_of(failing.project, 'return {"june": PICKS}')
    result = appsdk("call", "crash", "--url", failing.url)
    assert result.returncode == 1
    assert "crash failed (isError)" in result.stdout
    assert "\nError executing tool crash\n" in result.stdout
    assert (
        "hint: the model sees only 'Error executing tool crash'; the tool raised KeyError: 'never' "
        f"(server.py:{line} in picks_for). Raise ToolError(...) for text it should read"
    ) in result.stdout
    assert TOOL_CRASH not in result.stdout  # the report is a hint, not part of the widget's _meta
    assert result.stderr.strip() == "error: crash returned isError: Error executing tool crash"

    wire = json.loads(appsdk("call", "crash", "--url", failing.url, "--json").stdout)
    # The content is exactly what mcp sends in production; the crash rides beside it in appsdk's own key.
    assert wire["content"] == [{"type": "text", "text": "Error executing tool crash"}] and wire["isError"] is True
    crash = wire["_meta"][TOOL_CRASH]
    assert (crash["type"], crash["message"], crash["file"], crash["line"]) == ("KeyError", "'never'", "server.py", line)
    assert [f["function"] for f in crash["frames"]] == ["crash", "picks_for"]


def test_the_error_text_is_red(failing: DevServer):
    result = appsdk("call", "refuse", "month=july", "--url", failing.url, env={"FORCE_COLOR": "1", "COLUMNS": "200"})
    assert result.returncode == 1
    assert re.search(r"\x1b\[31m[^\n]*Error executing tool refuse: no picks for july", result.stdout), result.stdout
    assert "hint:" not in result.stdout  # a ToolError's text reaches the model: nothing to explain


def test_the_dev_terminal_shows_a_few_lines_of_the_users_frames(failing: DevServer):
    appsdk("call", "crash", "month=august", "--url", failing.url)
    wait_until(lambda: "crash raised KeyError: 'august'" in failing.err(), message="the crash report")
    report = failing.err()[failing.err().index("crash raised KeyError: 'august'") :]
    report = report.split("\n\n")[0].splitlines()[:4]
    assert report[0] == f"crash raised KeyError: 'august' (server.py:{line_of(failing.project, 'june')} in picks_for)"
    assert re.fullmatch(r"  server\.py:\d+ in crash +return str\(picks_for\(month\)\)", report[1])
    assert re.fullmatch(r"  server\.py:\d+ in picks_for +return \{\"june\": PICKS\}\[month\.lower\(\)\]", report[2])
    assert report[3].startswith('hint: the model sees only "Error executing tool crash"')
    # mcp's boxed dump of every frame is gone; nothing of mcp's or anyio's own frames is shown.
    everything = failing.err() + failing.out()
    assert "Traceback (most recent call last)" not in everything and "╭" not in failing.err()
    assert "site-packages" not in everything


def test_no_crash_report_through_the_tunnel(failing: DevServer):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "crash", "arguments": {}}}
    headers = {"Accept": "application/json, text/event-stream"}
    local = httpx.post(failing.url, json=body, headers=headers, timeout=10).json()["result"]
    tunnelled = httpx.post(failing.url, json=body, headers={**headers, "Host": TUNNEL_HOST}, timeout=10).json()
    # appsdk's tunnel has ngrok rewrite Host to the local address; ngrok (and the stand-in agent in
    # tests/ngrok_standin) still says the request was forwarded.
    forwarded = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https", "X-Forwarded-Host": TUNNEL_HOST}
    rewritten = httpx.post(failing.url, json=body, headers={**headers, **forwarded}, timeout=10).json()
    assert TOOL_CRASH in local["_meta"]
    # What reaches ChatGPT through a tunnel is the production result, byte for byte.
    production = {"content": [{"type": "text", "text": "Error executing tool crash"}], "isError": True}
    assert tunnelled["result"] == production
    assert rewritten["result"] == production


@pytest.mark.parametrize("mode", ["live", "path"])
def test_check_names_the_crash(failing: DevServer, mode: str):
    where = ["--url", failing.url] if mode == "live" else [str(failing.project)]
    result = appsdk("check", *where, "--json", env={"APPSDK_URL": ""})
    failed = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "APPS404"]
    assert len(failed) == 1 and "(it raised KeyError: 'never' (server.py:" in failed[0]["message"], failed


def test_preview_gives_the_widget_the_production_result_and_the_developer_the_hint(failing: DevServer):
    from appsdk_cli.connection import Target
    from appsdk_cli.preview.prepare import prepare

    session = prepare(Target(url=failing.url), "crash-widget", [])
    # As production sends it (in 2026-07-28 also resultType and the server's identity), minus appsdk's key.
    assert session.result["content"] == [{"type": "text", "text": "Error executing tool crash-widget"}]
    assert session.result["isError"] is True
    assert set(session.result) <= {"content", "isError", "resultType", "_meta"}
    assert "appsdk/crash" not in session.result.get("_meta", {})
    assert any(
        "Hint: the model sees only 'Error executing tool crash-widget'; the tool raised KeyError: 'never'" in w
        for w in session.warnings
    ), session.warnings

    # A widget's call to a crashing tool, through the preview's call proxy.
    running = start_preview_of(failing)
    try:
        status, answer = post(running.url + "/api/call", {"name": "crash", "bridge": "mcp-apps"}, origin=running.url)
        assert status == 200 and TOOL_CRASH not in json.dumps(answer)
        assert answer["result"]["content"][0]["text"] == "Error executing tool crash"
    finally:
        stopped = stop_preview(running)
    assert "crash failed: the model sees only 'Error executing tool crash'; the tool raised KeyError" in stopped.stderr


def start_preview_of(server: DevServer) -> Running:
    port = free_port()
    command = [sys.executable, "-m", "appsdk_cli", "preview", "list-books", "--url", server.url, "--no-open"]
    process = subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    for _ in range(20):  # a few lines of what is previewed, then the URL
        line = process.stdout.readline()
        if not line:
            break
        if line.startswith("http://"):
            return Running(process, line.strip())
    process.kill()
    raise AssertionError(f"the preview printed no URL: {process.communicate(timeout=10)}")


def test_a_plain_server_crash_gets_a_hint_too():
    # Outside appsdk dev there is no report, but mcp's generic text is recognisable: say where to look.
    from appsdk_cli.appmeta import crash_hint

    assert "its log has the traceback" in (crash_hint("Error executing tool list-books", None) or "")
    assert crash_hint("Error executing tool list-books: no such month", None) is None
