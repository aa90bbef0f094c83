"""Clients no one here wrote agree with `appsdk call --json`: the official TypeScript SDK and the Inspector CLI.

The npm packages are pinned in tests/interop/package.json (+ package-lock.json). CI installs them in
.ci/run; when node_modules is missing this test runs the same `npm install` itself. It skips only
where node (or npm) is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator

import pytest
from conftest import INSPECTOR, INTEROP, RunningServer, appsdk, serve_fixture, serve_project, stop

from appsdk_cli.scaffold import WidgetFlavor, scaffold

WIDGET = "ui://widget/book-list.html"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not installed here; the interoperability test needs them to run the TypeScript clients",
)


@pytest.fixture(scope="module")
def book_club_app(tmp_path_factory) -> Iterator[RunningServer]:
    project = scaffold("book-club", tmp_path_factory.mktemp("interop"), flavor=WidgetFlavor.MCP_APPS).path
    server = serve_project(project)
    yield server
    stop(server.process)


def node(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["node", *args], cwd=INTEROP, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def ours(*args: str) -> dict:
    # The peers here (TypeScript SDK 1.x, the Inspector's default) speak the 2025 handshake, so appsdk
    # does too, for a like-for-like result; test_eras_interop.py compares the 2026-07-28 era.
    result = appsdk(*args, "--json", "--protocol", "2025-11-25")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_typescript_sdk_client_agrees(node_clients, book_club_app):
    theirs = json.loads(node("sdk-client.mjs", book_club_app.url, "list-books", '{"month": "June"}', WIDGET).stdout)
    call = ours("call", "list-books", "month=June", "--url", book_club_app.url)
    assert theirs["tools"] == [t["name"] for t in ours("tools", "--url", book_club_app.url)["tools"]]
    assert call["structuredContent"] == theirs["call"]["structuredContent"]
    assert call == theirs["call"]  # the whole result, _meta and content included
    assert ours("read", WIDGET, "--url", book_club_app.url) == theirs["read"]


def test_inspector_cli_agrees(node_clients, book_club_app):
    theirs = json.loads(
        node(
            str(INSPECTOR),
            "--cli",
            book_club_app.url,
            "--transport",
            "http",
            "--method",
            "tools/call",
            "--tool-name",
            "list-books",
            "--tool-arg",
            "month=June",
        ).stdout
    )
    call = ours("call", "list-books", "month=June", "--url", book_club_app.url)
    assert call["structuredContent"] == theirs["structuredContent"]
    assert call["_meta"] == theirs["_meta"] == {"month": "June", "pickedBy": "book-club"}


def test_typescript_sdk_agrees_on_a_stateful_sse_server(node_clients):
    """The other transport shape (sessions, event streams): both clients see the same typed result."""
    server = serve_fixture("typed_server.py", "--stateful")
    try:
        args = {"city": "Oslo", "nights": 2, "vegan": True, "stops": ["Bergen"]}
        theirs = json.loads(node("sdk-client.mjs", server.url, "plan-trip", json.dumps(args)).stdout)
        call = ours("call", "plan-trip", "city=Oslo", "nights=2", "vegan=true", 'stops=["Bergen"]', "--url", server.url)
        assert call["structuredContent"] == theirs["call"]["structuredContent"]
        assert call == theirs["call"]
    finally:
        stop(server.process)
