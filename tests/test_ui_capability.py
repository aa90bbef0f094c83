"""The MCP Apps client capability: appsdk offers `io.modelcontextprotocol/ui` as a widget host does, in the
place each era carries client capabilities, and withholds it when asked (--no-ui), against a real mcp 2.x
server that gates its widget on it (tests/fixtures/ui_gated_app.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, RunningServer, appsdk, serve_fixture, stop
from test_client import WireCheck

from appsdk_cli import client as lean
from appsdk_cli.appmeta import MCP_APP_MIME_TYPE, UI_EXTENSION, ui_extension

OFFERED = {UI_EXTENSION: {"mimeTypes": [MCP_APP_MIME_TYPE]}}


@pytest.fixture(scope="module")
def gated() -> Iterator[RunningServer]:
    """Stateless: each 2026-07-28 request carries its capabilities; a 2025 session's are not kept."""
    server = serve_fixture("ui_gated_app.py")
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def gated_sessions() -> Iterator[RunningServer]:
    """With sessions, so a 2025 client's `initialize` capabilities reach its later calls."""
    server = serve_fixture("ui_gated_app.py", "--stateful")
    yield server
    stop(server.process)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    return {"APPSDK_HOME": str(tmp_path / "home")}


def seen(connection: lean.McpClient) -> dict:
    with connection as client:
        return client.call_tool("seen-capabilities", {})["structuredContent"]


@pytest.mark.parametrize("ui", [True, False])
def test_modern_requests_carry_the_extension_in_their_meta(gated, tmp_path, ui):
    check = WireCheck()
    eras = lean.EraCache(tmp_path / "eras.json")
    connection = lean.connect(gated.url, trace=check, eras=eras, ui=ui)
    got = seen(connection)
    assert connection.era is not None and connection.era.version == lean.MODERN_VERSION
    assert got["supportsApps"] is ui
    assert (got["capabilities"].get("extensions") if got["capabilities"] else None) == (OFFERED if ui else None)


@pytest.mark.parametrize("protocol", ["2025-11-25", "2025-06-18"])
@pytest.mark.parametrize("ui", [True, False])
def test_the_handshake_carries_the_extension_in_initialize(gated_sessions, protocol, ui):
    sent: list[dict] = []
    check = WireCheck()

    def trace(direction: str, message: dict) -> None:
        check(direction, message)
        if direction == "send" and message.get("method") == "initialize":
            sent.append(message["params"]["capabilities"])

    got = seen(lean.connect(gated_sessions.url, trace=trace, protocol=protocol, ui=ui))
    assert ui_extension(sent[0]) == (OFFERED[UI_EXTENSION] if ui else None)
    assert got["supportsApps"] is ui


def test_stdio_offers_it_too():
    command = f'"{sys.executable}" "{FIXTURES / "ui_gated_app.py"}" stdio'
    assert seen(lean.connect(stdio=command, protocol="2025-11-25"))["supportsApps"] is True
    assert seen(lean.connect(stdio=command, protocol="2025-11-25", ui=False))["supportsApps"] is False


def test_call_shows_the_widget_answer_and_the_text_only_one(gated, home):
    with_ui = appsdk("call", "task-board", "--url", gated.url, "--json", env=home)
    assert with_ui.returncode == 0, with_ui.stderr
    assert json.loads(with_ui.stdout)["structuredContent"]["tasks"][0]["title"] == "Water the plants"
    # The tool list remembered by the first call is a widget host's: the text-only call keeps its own.
    without = appsdk("call", "task-board", "--url", gated.url, "--no-ui", env=home)
    assert without.returncode == 0, without.stderr
    assert "UI withheld" in without.stdout and "- Book the venue" in without.stdout
    assert "structuredContent" not in without.stdout


def test_tools_shows_the_servers_own_declaration(gated, home):
    listed = appsdk("tools", "--url", gated.url, "--json", env=home)
    assert listed.returncode == 0, listed.stderr
    answer = json.loads(listed.stdout)
    # mcp's Apps extension declares itself with no settings.
    assert answer["serverUi"] == {} and answer["ui"] is True
    assert next(t for t in answer["tools"] if t["name"] == "task-board")["_meta"]["ui"]["resourceUri"]
    shown = appsdk("tools", "--url", gated.url, "--no-ui", env=home)
    assert f"the server declares {UI_EXTENSION}" in shown.stdout and "UI withheld" in shown.stdout
    # Listed to a text-only client without its widget.
    assert "The open tasks, as a list." in shown.stdout and "widget:" not in shown.stdout


# A 2025 server that declares MCP Apps in its initialize result (the 2025-11-25 schema has no
# capabilities.extensions, but servers written to SEP-1724's forward-compatible shape send it).
DECLARING_SERVER = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {
                "tools": {},
                "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}},
            },
            "serverInfo": {"name": "declaring", "version": "1"},
        }
    elif message["method"] == "tools/list":
        result = {"tools": []}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def test_tools_reads_the_declaration_from_a_2025_initialize(tmp_path, home):
    script = tmp_path / "declaring.py"
    script.write_text(DECLARING_SERVER)
    command = f'"{sys.executable}" "{script}"'
    listed = appsdk("tools", "--stdio", command, "--protocol", "2025-11-25", "--json", env=home)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["serverUi"] == {"mimeTypes": [MCP_APP_MIME_TYPE]}
