"""`tools`, `call` and `check --url` against servers no one at appsdk wrote.

The MCP Apps standard's published example servers (built on the official ext-apps SDK), the reference
server-everything (pinned in tests/interop/package.json), and a Python app on mcp 1.x written the way
OpenAI's Python examples are (tests/interop/py-mcp1, its own venv). Each is started once per module on
127.0.0.1 (the Node servers listen on every interface by themselves; tests/interop/loopback.cjs keeps
them on loopback). A check finding is asserted only where the server deserves it, and then by name.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import INTEROP, RunningServer, appsdk, free_port, serve, stop

NODE_SERVERS = INTEROP / "node_modules" / "@modelcontextprotocol"
PY_MCP1 = INTEROP / "py-mcp1"
NO_ENV_URL = {"APPSDK_URL": ""}
# A server that answers the 2025 handshake but not 2026-07-28's server/discover: true of every peer here.
DISCOVER_FAILS = ("APPS801", "warning", "server")

needs_node = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not installed here; the published example servers are Node programs",
)


def start_node_server(package: str, *args: str) -> RunningServer:
    port = free_port()
    script = NODE_SERVERS / package / "dist" / "index.js"
    command = ["node", "--require", str(INTEROP / "loopback.cjs"), str(script), *args]
    return serve(command, port, cwd=INTEROP, env={"PORT": str(port)})


def run_json(*args: str) -> dict:
    result = appsdk(*args, "--json", env=NO_ENV_URL)
    assert result.stdout.strip(), result.stderr
    return json.loads(result.stdout)


def findings(url: str) -> tuple[dict, list[tuple[str, str, str]]]:
    """The check report, and its findings as (rule, severity, target), sorted."""
    report = run_json("check", "--url", url)
    return report, sorted((f["rule"], f["severity"], f["target"]) for f in report["findings"])


def human(*args: str) -> subprocess.CompletedProcess[str]:
    return appsdk(*args, env={**NO_ENV_URL, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def node_servers(node_clients: Path) -> Iterator[dict[str, RunningServer]]:
    """The four published servers, each on its own free port (node_clients installs them when missing)."""
    started: dict[str, RunningServer] = {}
    try:
        for name, package, args in (
            ("react", "server-basic-react", ()),
            ("vanillajs", "server-basic-vanillajs", ()),
            ("system-monitor", "server-system-monitor", ()),
            ("everything", "server-everything", ("streamableHttp",)),
        ):
            started[name] = start_node_server(package, *args)
        yield started
    finally:
        for server in started.values():
            stop(server.process)


# --- the MCP Apps example servers (registerAppTool / registerAppResource from ext-apps) ----------------


@needs_node
@pytest.mark.parametrize("name", ["react", "vanillajs"])
def test_basic_app_servers(node_servers: dict[str, RunningServer], name: str):
    url = node_servers[name].url
    tools = run_json("tools", "--url", url)["tools"]
    assert [t["name"] for t in tools] == ["get-time"]
    # registerAppTool writes the flat key beside the nested one, on purpose, for older hosts.
    assert tools[0]["_meta"] == {
        "ui": {"resourceUri": "ui://get-time/mcp-app.html"},
        "ui/resourceUri": tools[0]["_meta"]["ui"]["resourceUri"],
    }
    listing = human("tools", "--url", url)
    assert listing.returncode == 0, listing.stderr
    assert "widget: ui://get-time/mcp-app.html" in listing.stdout
    assert "visibility: model and app (the default: no ui.visibility)" in listing.stdout
    assert "widget calls: MCP Apps bridge yes; window.openai.callTool no" in listing.stdout

    called = human("call", "get-time", "--url", url)
    assert called.returncode == 0, called.stderr
    assert re.search(r"^content\n\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", called.stdout, re.M), called.stdout

    report, found = findings(url)
    assert report["summary"]["errors"] == 0 and report["summary"]["passed"] is True
    # Deserved: get-time declares no annotation hints, and its widget no domain (both optional for a demo,
    # both asked for by directory review); the React server's get-time also has no outputSchema, the
    # vanilla one's has. No APPS103 for the two resourceUri keys, no APPS401.
    expected = [
        ("APPS302", "warning", "tool get-time"),
        ("APPS504", "warning", "resource ui://get-time/mcp-app.html"),
    ]
    if name == "react":
        assert "outputSchema" not in tools[0]
        expected.insert(1, ("APPS303", "warning", "tool get-time"))
    else:
        assert tools[0]["outputSchema"]["required"] == ["time"]
    # Deserved too: the SDK v1 server answers the 2025 handshake only, not 2026-07-28's server/discover.
    expected.append(DISCOVER_FAILS)
    assert found == expected
    # A TypeScript server's fix is told in wire fields, not in the Python SDK's spelling.
    hints = {f["rule"]: f["hint"] for f in report["findings"]}
    assert '"readOnlyHint": true' in hints["APPS302"] and "ToolAnnotations" not in hints["APPS302"]
    if name == "react":
        assert "outputSchema" in hints["APPS303"] and "Annotated" not in hints["APPS303"]
    assert "upgrade the server's MCP SDK" in hints["APPS801"]


@needs_node
def test_system_monitor_has_an_app_only_tool(node_servers: dict[str, RunningServer]):
    url = node_servers["system-monitor"].url
    tools = {t["name"]: t for t in run_json("tools", "--url", url)["tools"]}
    assert set(tools) == {"get-system-info", "poll-system-stats"}
    assert tools["poll-system-stats"]["_meta"]["ui"]["visibility"] == ["app"]
    listing = human("tools", "--url", url).stdout
    # The widget polls poll-system-stats over the bridge; the model never sees it.
    poll = listing[listing.index("poll-system-stats") :]
    assert "visibility: app (ui.visibility ['app'])" in poll
    assert "widget calls: MCP Apps bridge yes; window.openai.callTool yes" in poll

    called = run_json("call", "get-system-info", "--url", url)
    info = called["structuredContent"]
    assert called.get("isError") is not True and info["hostname"] == platform.node()
    assert info["cpu"]["count"] == os.cpu_count() and json.loads(called["content"][0]["text"]) == info

    report, found = findings(url)
    assert report["summary"]["errors"] == 0
    # App-only and reachable by its widget: not APPS304. Deserved: no hints, no widget domain.
    assert found == [
        ("APPS302", "warning", "tool get-system-info"),
        ("APPS302", "warning", "tool poll-system-stats"),
        ("APPS504", "warning", "resource ui://system-monitor/mcp-app.html"),
        DISCOVER_FAILS,
    ]


@needs_node
def test_server_everything(node_servers: dict[str, RunningServer]):
    url = node_servers["everything"].url
    names = [t["name"] for t in run_json("tools", "--url", url)["tools"]]
    assert {"echo", "get-sum", "get-structured-content", "get-tiny-image"} <= set(names)
    listing = human("tools", "--url", url).stdout
    # No tool names a widget, so there is nothing to say about widget calls.
    assert "echo - Echo Tool" in listing and "widget calls:" not in listing

    echo = human("call", "echo", "message=hello there", "--url", url)
    assert echo.returncode == 0 and "Echo: hello there" in echo.stdout, echo.stdout + echo.stderr
    total = run_json("call", "get-sum", "a=2", "b=3", "--url", url)
    assert "5" in total["content"][0]["text"]
    image = human("call", "get-tiny-image", "--url", url)
    assert image.returncode == 0 and "[image image/png, about" in image.stdout

    report, found = findings(url)
    # A plain MCP server with no widgets, good annotations and schemas: nothing to say but that it
    # speaks the 2025 handshake only.
    assert found == [DISCOVER_FAILS], found
    assert "get-structured-content" not in report["summary"]["called"]  # it requires an argument


# --- a Python app on mcp 1.x, the way OpenAI's examples are written ----------------------------------


@pytest.fixture(scope="module")
def py_mcp1() -> Iterator[RunningServer]:
    python = PY_MCP1 / ".venv" / "bin" / "python"
    if not python.is_file():
        # .ci/run creates this venv; a developer's first run makes the same one.
        subprocess.run([sys.executable, "-m", "venv", str(PY_MCP1 / ".venv")], check=True, timeout=120)
        installed = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "-r", str(PY_MCP1 / "requirements.txt")],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert installed.returncode == 0, installed.stdout + installed.stderr
    version = subprocess.run(
        [str(python), "-c", "import mcp, importlib.metadata as m; print(m.version('mcp'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.startswith("1."), version.stdout
    port = free_port()
    server = serve([str(python), str(PY_MCP1 / "server.py")], port, env={"PORT": str(port)})
    yield server
    stop(server.process)


def test_python_mcp1_app(py_mcp1: RunningServer):
    url = py_mcp1.url
    listing = human("tools", "--url", url)
    assert listing.returncode == 0, listing.stderr
    assert "show-trails - Show trails" in listing.stdout
    assert "invoking: Looking for trails  invoked: Found some trails" in listing.stdout
    assert "widget calls: MCP Apps bridge yes; window.openai.callTool yes" in listing.stdout

    called = run_json("call", "show-trails", "region=alps", "--url", url)
    assert called["structuredContent"] == {
        "region": "alps",
        "trails": [{"name": "Eiger Trail", "km": 6.0}, {"name": "Via Alpina 1", "km": 14.5}],
    }
    shown = human("call", "show-trails", "region=lakes", "--url", url)
    assert "Trails near lakes: Catbells, Helvellyn Edge." in shown.stdout
    # The arguments are checked against the inputSchema's enum before anything is sent.
    wrong = human("call", "show-trails", "region=moon", "--url", url)
    assert wrong.returncode == 2 and 'region must be one of "alps", "lakes"' in wrong.stderr

    report, found = findings(url)
    assert report["summary"]["errors"] == 0 and report["summary"]["called"] == ["trail-count"]
    # Deserved, all warnings: a ChatGPT-only MIME type, its CSP in ChatGPT's key only, and a tool that
    # returns structuredContent without an outputSchema (MCP allows it; APPS401 is a warning now).
    assert found == [
        ("APPS202", "warning", "resource ui://widget/trail-list.html"),
        ("APPS401", "warning", "tool trail-count"),
        ("APPS502", "warning", "resource ui://widget/trail-list.html"),
        DISCOVER_FAILS,  # mcp 1.x speaks the 2025 handshake only
    ]
