"""Tests for the book club app: the tool, its widget link, and the widget resource.

They talk to the server in-process with the MCP client, exactly as a host would over HTTP,
and one test serves it over streamable HTTP as `python server.py` does.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
import server
from mcp import Client

PROJECT = Path(__file__).resolve().parent.parent


def run(coroutine_function):
    return anyio.run(coroutine_function)


def test_list_books_tool_links_to_the_widget():
    async def body():
        async with Client(server.mcp) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        tool = tools["list-books"]
        assert tool.title == "Show book club picks"
        assert tool.meta["openai/outputTemplate"] == server.WIDGET_URI
        assert tool.meta["ui"]["resourceUri"] == server.WIDGET_URI
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.annotations.open_world_hint is False
        assert tool.output_schema["properties"]["books"]["type"] == "array"
        assert "month" in tool.input_schema["properties"]
        assert "month" not in tool.input_schema.get("required", [])

    run(body)


def test_list_books_returns_the_picks_for_widget_and_model():
    async def body():
        async with Client(server.mcp) as client:
            result = await client.call_tool("list-books", {"month": "June"})
        assert result.is_error is False
        titles = [book["title"] for book in result.structured_content["books"]]
        assert titles == ["Frankenstein", "Pride and Prejudice", "The Time Machine"]
        text = " ".join(block.text for block in result.content if block.type == "text")
        assert "Frankenstein" in text and "June" in text
        assert result.meta["month"] == "June"

    run(body)


def test_widget_resource_is_served_with_its_csp():
    async def body():
        async with Client(server.mcp) as client:
            listed = {str(r.uri): r for r in (await client.list_resources()).resources}
            read = await client.read_resource(server.WIDGET_URI)
        assert listed[server.WIDGET_URI].mime_type == server.WIDGET_MIME_TYPE
        content = read.contents[0]
        assert content.mime_type == server.WIDGET_MIME_TYPE
        assert "window.openai" in content.text and "ui/initialize" in content.text
        assert "ui" in content.meta and "openai/widgetCSP" in content.meta

    run(body)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_server():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "server.py"],
        cwd=PROJECT,
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"server.py exited: {process.stderr.read().decode()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield url
    process.terminate()
    process.wait(timeout=10)


def test_serves_streamable_http_and_refuses_foreign_hosts(http_server):
    async def body():
        async with Client(http_server) as client:
            result = await client.call_tool("list-books", {})
        assert len(result.structured_content["books"]) == 3

    run(body)
    # DNS-rebinding protection: a request whose Host is not local is refused with 421.
    port = int(http_server.rsplit(":", 1)[1].split("/")[0])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    headers = {
        "Host": "evil.example",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    connection.request("POST", "/mcp", body=ping, headers=headers)
    assert connection.getresponse().status == 421
    connection.close()


def test_serves_mcp_on_stdio_when_asked():
    """`python server.py --stdio`: JSON-RPC on stdin/stdout, nothing else on stdout."""
    process = subprocess.Popen(
        [sys.executable, "server.py", "--stdio"],
        cwd=PROJECT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        process.stdin.write(json.dumps(initialize) + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == server.mcp.name
    finally:
        process.stdin.close()
        process.wait(timeout=10)
