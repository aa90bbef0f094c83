"""The scaffolded book-club app, served as a real process and driven by the real MCP client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest
from mcp import Client
from preview_helpers import CHROMIUM

from appsdk_cli.scaffold import WidgetFlavor

WIDGET = "ui://widget/book-list.html"
PICKS = ["Frankenstein", "Pride and Prejudice", "The Time Machine"]


def flavor_of(project: Path) -> WidgetFlavor:
    source = (project / "server.py").read_text()
    declared = source.split('WIDGET_MIME_TYPE = "', 1)[1].split('"', 1)[0]
    return WidgetFlavor(declared)


def test_project_layout_and_config(book_club: Path):
    for name in ["server.py", "widgets/book-list.html", "pyproject.toml", "README.md", ".gitignore"]:
        assert (book_club / name).is_file(), name
    assert list((book_club / "tests").glob("test_*.py"))
    config = tomllib.loads((book_club / "pyproject.toml").read_text())
    assert config["tool"]["appsdk"]["app"] == "server:mcp"
    assert config["project"]["name"] == "book-club"
    assert [d.split(">")[0] for d in config["project"]["dependencies"]] == ["mcp"]
    assert "appsdk" not in (book_club / "server.py").read_text().replace("appsdk (", "")
    assert "{{" not in "".join(p.read_text() for p in book_club.rglob("*") if p.is_file())


def test_generated_tests_pass(book_club: Path):
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=book_club,
        capture_output=True,
        text=True,
        timeout=120,
        # A developer's first run, which writes the snapshots; under CI=true a missing one fails, as in jest.
        env={k: v for k, v in os.environ.items() if k != "CI"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # tests/test_widget.py renders the widget (5 tests): it needs Chromium, and skips, saying so, without.
    assert ("10 passed" if CHROMIUM else "5 passed, 5 skipped") in result.stdout


@pytest.mark.anyio
async def test_tool_metadata_over_http(book_club_server, book_club: Path):
    async with Client(book_club_server.url) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["list-books"]
    wire = tools[0].model_dump(by_alias=True, exclude_none=True)
    assert wire["title"] == "Show book club picks"
    assert wire["description"]
    assert wire["annotations"] == {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
    assert wire["_meta"]["openai/outputTemplate"] == WIDGET
    assert wire["_meta"]["ui"]["resourceUri"] == WIDGET
    assert wire["_meta"]["openai/toolInvocation/invoking"]
    assert wire["_meta"]["openai/toolInvocation/invoked"]
    assert all(len(wire["_meta"][k]) <= 64 for k in wire["_meta"] if k.startswith("openai/toolInvocation/"))
    assert wire["inputSchema"]["properties"]["month"]["anyOf"][0] == {"type": "string"}
    assert "required" not in wire["inputSchema"]
    assert wire["outputSchema"]["required"] == ["books"]


@pytest.mark.anyio
async def test_call_list_books_over_http(book_club_server):
    async with Client(book_club_server.url) as client:
        result = await client.call_tool("list-books", {"month": "July"})
    assert result.is_error is False
    assert [b["title"] for b in result.structured_content["books"]] == PICKS
    assert result.structured_content["books"][0]["author"] == "Mary Shelley"
    text = result.content[0].text
    assert all(title in text for title in PICKS) and "July" in text
    assert {"month": "July", "pickedBy": "book-club"}.items() <= result.meta.items()


@pytest.mark.anyio
async def test_widget_resource_over_http(book_club_server, book_club: Path):
    flavor = flavor_of(book_club)
    async with Client(book_club_server.url) as client:
        listed = (await client.list_resources()).resources
        read = await client.read_resource(WIDGET)
    widgets = [(str(r.uri), r.mime_type) for r in listed if not str(r.uri).startswith("skill://")]
    assert widgets == [(WIDGET, flavor.value)]
    # and skills/ (SEP-2640: every file of a skill is a resource), which skills/list describes
    assert {str(r.uri) for r in listed} - {WIDGET} == {
        "skill://book-club-picks/SKILL.md",
        "skill://book-club-picks/reference/answers.md",
    }
    content = read.contents[0]
    assert content.mime_type == flavor.value
    html = content.text
    assert html == (book_club / "widgets" / "book-list.html").read_text()
    assert "window.openai" in html and "openai:set_globals" in html
    assert "ui/initialize" in html and "ui/notifications/initialized" in html
    assert "ui/notifications/tool-result" in html and "ui/notifications/size-changed" in html
    assert "textContent" in html and "innerHTML" not in html
    meta = content.meta
    assert meta["ui"]["csp"] == {"connectDomains": [], "resourceDomains": []}
    assert meta["openai/widgetCSP"] == {"connect_domains": [], "resource_domains": []}


def test_foreign_host_is_refused(book_club_server):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    local = httpx.post(book_club_server.url, json=ping, headers=accept)
    assert local.status_code == 200
    foreign = httpx.post(book_club_server.url, json=ping, headers={**accept, "Host": "attacker.example"})
    assert foreign.status_code == 421
    origin = httpx.post(book_club_server.url, json=ping, headers={**accept, "Origin": "https://attacker.example"})
    assert origin.status_code == 403


def test_stateless_json_responses(book_club_server):
    """Stateless JSON mode: a plain POST gets a JSON answer, no session id to lose on restart."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    response = httpx.post(book_club_server.url, json=request, headers={"Accept": "application/json, text/event-stream"})
    assert response.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers
    assert json.loads(response.text)["result"]["serverInfo"]["name"] == "book-club"


def test_readme_stdio_example_calls_the_scaffold(book_club: Path):
    """The README's `--stdio "python server.py --stdio"`, on our own scaffold."""
    from conftest import appsdk

    result = appsdk("call", "--stdio", f"{sys.executable} server.py --stdio", "list-books", "--json", cwd=book_club)
    assert result.returncode == 0, result.stderr
    assert [book["title"] for book in json.loads(result.stdout)["structuredContent"]["books"]] == PICKS


def test_auth_scaffold_refuses_stdio_in_one_line(tmp_path: Path):
    from appsdk_cli.scaffold import scaffold

    project = scaffold("members", tmp_path, auth=True).path
    result = subprocess.run(
        [sys.executable, "server.py", "--stdio"], cwd=project, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and result.stdout == ""
    assert "stdio carries no bearer token" in result.stderr
