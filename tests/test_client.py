"""appsdk_cli.client without the CLI: its wire messages are the mcp types', against real servers.

The client is a lean JSON-RPC client (importing mcp would cost more than a whole `appsdk call` may
take), so these tests hold it to mcp_types: every message it sends must validate as a client
request/notification and dump back to exactly what was sent, and every result it returns must do
the same as the result type of its method.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import mcp_types
import pytest
from conftest import FIXTURES, RunningServer, serve_fixture, serve_project, stop
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from appsdk_cli import client as lean
from appsdk_cli.scaffold import WidgetFlavor, scaffold

RESULT_TYPES = {
    "initialize": mcp_types.InitializeResult,
    "server/discover": mcp_types.DiscoverResult,
    "tools/list": mcp_types.ListToolsResult,
    "tools/call": mcp_types.CallToolResult,
    "resources/list": mcp_types.ListResourcesResult,
    "resources/read": mcp_types.ReadResourceResult,
}
REQUESTS = TypeAdapter(mcp_types.ClientRequest)
NOTIFICATIONS = TypeAdapter(mcp_types.ClientNotification)


def same_on_the_wire(model, wire: dict) -> bool:
    return model.model_dump(by_alias=True, exclude_unset=True, mode="json") == wire


class WireCheck:
    """A tracer that holds every message to the mcp types, as it passes."""

    def __init__(self) -> None:
        self.pending: dict[object, str] = {}
        self.checked: list[str] = []

    def __call__(self, direction: str, message: dict) -> None:
        body = {k: v for k, v in message.items() if k in ("method", "params")}
        if direction == "send" and "id" in message:
            mcp_types.JSONRPCRequest.model_validate(message)
            assert same_on_the_wire(REQUESTS.validate_python(body), body), message
            self.pending[message["id"]] = message["method"]
        elif direction == "send":
            mcp_types.JSONRPCNotification.model_validate(message)
            assert same_on_the_wire(NOTIFICATIONS.validate_python(body), body), message
        elif "id" in message and "method" not in message:
            mcp_types.JSONRPCResponse.model_validate(message)
            method = self.pending.pop(message["id"])
            result = RESULT_TYPES[method].model_validate(message["result"])
            assert same_on_the_wire(result, message["result"]), message
        self.checked.append(f"{direction} {message.get('method', 'result')}")


@pytest.fixture(scope="module")
def scaffold_server(tmp_path_factory) -> Iterator[RunningServer]:
    project = scaffold("book-club", tmp_path_factory.mktemp("client"), flavor=WidgetFlavor.MCP_APPS).path
    server = serve_project(project)
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def stateful_server() -> Iterator[RunningServer]:
    server = serve_fixture("typed_server.py", "--stateful")
    yield server
    stop(server.process)


def test_handshake_versions_match_mcp_types():
    assert lean.HANDSHAKE_PROTOCOL_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


def exercise(connection: lean.McpClient, tool: str, arguments: dict, uri: str, era: str | None = None) -> dict:
    with connection as client:
        assert client.server is not None
        assert client.server.protocol_version == (era or lean.LATEST_HANDSHAKE_VERSION)
        assert tool in [t["name"] for t in client.list_tools()]
        result = client.call_tool(tool, arguments, {"openai/locale": "en-GB"})
        assert uri in [r["uri"] for r in client.list_resources()]
        assert client.read_resource(uri)["contents"][0]["uri"] == uri
    return result


def test_wire_shapes_stateless_json_modern(scaffold_server, tmp_path):
    check = WireCheck()
    connection = lean.connect(scaffold_server.url, trace=check, eras=lean.EraCache(tmp_path / "eras.json"))
    result = exercise(connection, "list-books", {"month": "May"}, "ui://widget/book-list.html", lean.MODERN_VERSION)
    assert result["_meta"]["month"] == "May" and result["resultType"] == "complete"
    # No handshake: a discover probe (first contact), then one exchange per request.
    assert check.checked[:2] == ["send server/discover", "receive result"]
    assert "send initialize" not in check.checked
    assert not check.pending


def test_wire_shapes_stateless_json_handshake(scaffold_server):
    check = WireCheck()
    connection = lean.connect(scaffold_server.url, trace=check, protocol="2025-11-25")
    result = exercise(connection, "list-books", {"month": "May"}, "ui://widget/book-list.html")
    assert result["_meta"]["month"] == "May"
    assert check.checked[:3] == ["send initialize", "receive result", "send notifications/initialized"]
    assert not check.pending


def test_wire_shapes_stateful_sse(stateful_server):
    check = WireCheck()
    connection = lean.connect(stateful_server.url, trace=check, protocol="2025-11-25")
    result = exercise(connection, "echo-meta", {}, "ui://widget/plain.html")
    assert result["structuredContent"] == {"meta": {"openai/locale": "en-GB"}}
    # The log notification came first on the event stream and was skipped, not taken for the answer.
    assert "receive notifications/message" in check.checked
    assert not check.pending


def test_wire_shapes_stdio():
    check = WireCheck()
    command = f'"{sys.executable}" "{FIXTURES / "typed_server.py"}" stdio'
    result = exercise(
        lean.connect(stdio=command, trace=check, protocol="2025-11-25"),
        "plan-trip",
        {"city": "Oslo", "nights": 1},
        "ui://widget/plain.html",
    )
    assert result["structuredContent"]["city"] == "Oslo"


def test_session_is_deleted_on_close(stateful_server):
    transport = lean.HttpTransport(stateful_server.url)
    with lean.McpClient(transport, protocol="2025-11-25") as client:
        session = transport.session_id
        assert session
        client.list_tools()
    headers = {
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": lean.LATEST_HANDSHAKE_VERSION,
    }
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    assert httpx.post(stateful_server.url, json=ping, headers=headers).status_code == 404


def test_json_rpc_errors_raise_protocol_error(stateful_server):
    with lean.connect(stateful_server.url) as client, pytest.raises(lean.ProtocolError) as raised:
        client.read_resource("ui://nowhere")
    assert raised.value.code == -32602 and "resources/read failed" in raised.value.message


def test_unreachable_raises_connect_error(tmp_path: Path):
    from conftest import free_port

    with pytest.raises(lean.ConnectError, match="cannot reach the MCP server"):
        lean.connect(f"http://127.0.0.1:{free_port()}/mcp").__enter__()
    with pytest.raises(lean.ConnectError, match="not an http"):
        lean.connect("ftp://example.com/mcp")


def sse(text: str) -> list[tuple[str, str, str | None]]:
    lines = text.encode().splitlines(keepends=True)
    return [(e.event, e.data, e.id) for e in lean.parse_sse(lines)]


def test_sse_multi_line_data_comments_and_ids():
    stream = (
        ": a comment\n"
        "id: 1\n"
        "data:\n"  # a priming event: an id and empty data
        "\n"
        "event: message\r\n"
        'data: {"a":\r\n'
        "data:  1}\r\n"
        "\r\n"
        "retry: 100\n"
        "data:no-space\n"
        "\n"
        "event: other\n"
        "data: last, without a blank line"
    )
    assert sse(stream) == [
        ("message", "", "1"),
        ("message", '{"a":\n 1}', "1"),
        ("message", "no-space", "1"),
        ("other", "last, without a blank line", "1"),
    ]


def test_the_client_never_imports_a_sign_in_strategy():
    """client/ speaks MCP and raises AuthRequired; connection.py signs in around it (as httpx's auth flow
    drives a transport). Imports inside functions count too."""
    import ast

    package = Path(lean.__file__).parent
    upward = ("appsdk_cli.auth", "appsdk_cli.connection", "appsdk_cli.remote")
    found = []
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.name}: {name}" for name in names if name.startswith(upward)]
    assert found == []
