"""`appsdk mcp`: appsdk's own tools for a coding agent, driven through real MCP clients (the Python SDK's
over stdio and streamable HTTP, the TypeScript SDK's over stdio) against a real `appsdk dev`."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import appsdk, free_port, stop, wait_for_port

WAIT = 30.0
HERE = Path(__file__).resolve().parent


def wait_until(condition: Callable[[], Any], message: str) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{message} not seen within {WAIT} s")


@asynccontextmanager
async def agent_session(root: Path):
    """A real MCP client session with `appsdk mcp ROOT`, started as an agent starts it (a child on stdio)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "appsdk_cli", "mcp", str(root)], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def start_dev(project: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    logs = project.parent / f"dev-{port}.log"
    with logs.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(port)], stdout=log, stderr=log
        )
    status = project / ".appsdk" / "status.json"

    def serving() -> bool:
        assert process.poll() is None, logs.read_text()
        return status.is_file() and json.loads(status.read_text()).get("running") is True

    wait_until(serving, "appsdk dev's status file")
    return process, f"http://127.0.0.1:{port}/mcp"


def status_file(project: Path) -> dict[str, Any]:
    """What `appsdk dev` last wrote to the project's status file."""
    return json.loads((project / ".appsdk" / "status.json").read_text())


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.mark.anyio
async def test_the_loop_scaffold_status_call_check_and_contract_through_a_real_client(root: Path, anyio_backend):
    async with agent_session(root) as agent:
        listed = (await agent.list_tools()).tools
        names = [tool.name for tool in listed]
        assert names == [
            "scaffold_app",
            "dev_status",
            "list_tools",
            "call_tool",
            "check",
            "check_code",
            "screenshot",
            "contract_snapshot",
            "contract_snapshot_code",
            "contract_compare",
            "contract_compare_code",
        ]
        for tool in listed:
            assert tool.input_schema["type"] == "object" and tool.output_schema["type"] == "object", tool.name
            hints = tool.annotations.model_dump(by_alias=True)
            for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
                assert isinstance(hints[hint], bool), (tool.name, hint)  # every one set, none left to a default

        progress: list[tuple[float, float | None, str | None]] = []

        async def heard(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        made = await agent.call_tool("scaffold_app", {"name": "book-club"}, progress_callback=heard)
        assert not made.is_error, text_of(made)
        assert made.structured_content["path"] == "book-club"
        assert "AGENTS.md" in made.structured_content["files"]
        assert progress and progress[-1][0] == progress[-1][1]  # notifications/progress reached the client
        project = root / "book-club"
        assert (project / "server.py").is_file()

        idle = (await agent.call_tool("dev_status", {"path": "book-club"})).structured_content
        assert idle["running"] is False and "appsdk dev" in idle["hint"]

        dev, url = start_dev(project)
        try:
            status = (await agent.call_tool("dev_status", {"path": "book-club"})).structured_content
            assert status["running"] is True and status["url"] == url and status["pid"] == dev.pid
            assert status["appOk"] is True and status["tools"] == ["list-books"]
            assert status["workbench"].startswith("http://127.0.0.1:")

            tools = await agent.call_tool("list_tools", {"path": "book-club"})
            assert [t["name"] for t in tools.structured_content["tools"]] == ["list-books"]
            assert tools.structured_content["tools"][0]["widget"] == "ui://widget/book-list.html"
            called = await agent.call_tool(
                "call_tool", {"path": "book-club", "tool": "list-books", "arguments": {"month": "June"}}
            )
            assert not called.is_error and called.structured_content["isError"] is False
            assert called.structured_content["structuredContent"]["books"][0]["title"] == "Frankenstein"
            wrong = await agent.call_tool("call_tool", {"path": "book-club", "tool": "list-boks"})
            assert wrong.is_error and text_of(wrong).startswith("error: ") and "list-books" in text_of(wrong)

            # A save that breaks the import: dev keeps serving, and the status names the file and line.
            server_py = project / "server.py"
            good = server_py.read_text(encoding="utf-8")
            broken_line = good.count("\n") + 2
            server_py.write_text(good + "\ndef broken(:\n", encoding="utf-8")

            def import_error() -> dict[str, Any] | None:
                status = status_file(project)
                return status["lastImportError"]

            wait_until(import_error, "the import error in the status file")
            broken = (await agent.call_tool("dev_status", {"path": "book-club"})).structured_content
            assert broken["appOk"] is False
            assert broken["lastImportError"]["file"] == "server.py"
            assert broken["lastImportError"]["line"] == broken_line, broken["lastImportError"]
            assert "SyntaxError" in broken["lastImportError"]["summary"]
            server_py.write_text(good, encoding="utf-8")
            wait_until(lambda: import_error() is None, "the import error cleared by a good reload")
            healed = (await agent.call_tool("dev_status", {"path": "book-club"})).structured_content
            assert healed["appOk"] is True and healed["lastReload"]["files"] == ["server.py"]

            # A tool that raises: the call comes back as the app's isError, dev_status names the file and line.
            raising = '    when = f" for {month}" if month else ""\n'
            crash_line = good[: good.index(raising)].count("\n") + 1
            server_py.write_text(good.replace(raising, "    raise KeyError(month)\n", 1), encoding="utf-8")
            wait_until(
                lambda: status_file(project)["lastReload"]["at"] > healed["lastReload"]["at"],
                "the reload of the raising tool",
            )
            crashed = await agent.call_tool("call_tool", {"path": "book-club", "tool": "list-books"})
            assert not crashed.is_error and crashed.structured_content["isError"] is True
            crash = wait_until(
                lambda: status_file(project)["lastToolCrash"],
                "the tool crash in the status file",
            )
            assert crash["tool"] == "list-books" and "KeyError" in crash["summary"]
            assert crash["file"] == "server.py" and crash["line"] == crash_line, crash
            assert (await agent.call_tool("dev_status", {"path": "book-club"})).structured_content[
                "lastToolCrash"
            ] == crash
            crashed_at = status_file(project)["lastReload"]["at"]
            server_py.write_text(good, encoding="utf-8")
            wait_until(
                lambda: status_file(project)["lastReload"]["at"] > crashed_at,
                "the reload of the good tool",
            )

            checked = await agent.call_tool("check", {"path": "book-club"})
            assert not checked.is_error, text_of(checked)
            summary = checked.structured_content["summary"]
            assert summary["mode"] == "live" and summary["passed"] is True
            for finding in checked.structured_content["findings"]:
                assert finding["rule"].startswith("APPS") and finding["location"] and finding["fix"], finding

            recorded = await agent.call_tool("contract_snapshot", {"path": "book-club"})
            assert not recorded.is_error, text_of(recorded)
            assert recorded.structured_content["path"] == "book-club/appsdk.contract.json"
            assert json.loads((project / "appsdk.contract.json").read_text())["tools"]["list-books"]
            compared = await agent.call_tool("contract_compare", {"path": "book-club"})
            assert not compared.is_error and compared.structured_content["summary"]["passed"] is True
        finally:
            stop(dev)
        gone = (await agent.call_tool("dev_status", {"path": "book-club"})).structured_content
        assert gone["running"] is False and gone["url"] is None


HOSTILE = [
    ("dev_status", {"path": "../"}),
    ("dev_status", {"path": "/etc"}),
    ("dev_status", {"path": "escape"}),  # a symlink to a folder outside
    ("list_tools", {"path": "book-club/../.."}),
    ("check", {"path": "escape/inner"}),
    ("scaffold_app", {"name": "x", "folder": "escape"}),
    ("contract_snapshot", {"path": "book-club", "output": "../../stolen.json"}),
    ("contract_snapshot", {"path": "book-club", "output": "link.json"}),  # a symlink to a file outside
    ("contract_compare", {"path": "book-club", "against": "/etc/passwd"}),
    ("screenshot", {"path": "..", "tool": "list-books"}),
]


@pytest.mark.anyio
async def test_a_path_outside_the_project_is_refused_as_one_error_line(root: Path, tmp_path: Path, anyio_backend):
    from appsdk_cli.scaffold import scaffold

    outside = tmp_path / "elsewhere"
    (outside / "inner").mkdir(parents=True)
    (outside / "target.json").write_text("{}")
    project = scaffold("book-club", root).path
    (root / "escape").symlink_to(outside)
    (project / "link.json").symlink_to(outside / "target.json")
    async with agent_session(root) as agent:
        for name, arguments in HOSTILE:
            result = await agent.call_tool(name, arguments)
            assert result.is_error, (name, arguments, text_of(result))
            line = text_of(result)
            assert line.startswith("error: ") and "outside the project" in line and "\n" not in line, line
        unknown = await agent.call_tool("dev_status", {"path": ".", "rm": "-rf"})
        assert unknown.is_error and "rm" in text_of(unknown)
        nameless = await agent.call_tool("no_such_tool", {})
        assert nameless.is_error and "scaffold_app" in text_of(nameless)
        # The server is still there after all of that.
        assert not (await agent.call_tool("dev_status", {})).is_error
    assert (outside / "target.json").read_text() == "{}"
    assert not (tmp_path / "stolen.json").exists() and not (outside / "x").exists()


def printed_token(port: int) -> str:
    """The bearer token, as a user gets it: from the config `appsdk mcp --print-config codex --port` prints."""
    import re

    printed = appsdk("mcp", "--print-config", "codex", "--port", str(port))
    assert printed.returncode == 0, printed.stderr
    return re.findall(r"Bearer ([A-Za-z0-9_-]{32,})", printed.stdout)[0]


def test_http_mode_serves_on_loopback_only(root: Path):
    assert appsdk("mcp", str(root), "--port", "8765", "--host", "0.0.0.0").returncode == 2
    refused = appsdk("mcp", str(root), "--port", "8765", "--host", "192.168.1.1")
    assert refused.returncode == 2 and "loopback" in refused.stderr
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "mcp", str(root), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}/mcp"
        # Every request carries the bearer token (test_agent_mcp_bounds.py: none gets a 401).
        bearer = {"Authorization": f"Bearer {printed_token(port)}"}

        import anyio
        import httpx2
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async def tools() -> list[str]:
            async with (
                httpx2.AsyncClient(headers=bearer) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                listed = await client.list_tools()
                status = await client.call_tool("dev_status", {})
            assert not status.is_error
            return [tool.name for tool in listed.tools]

        assert "screenshot" in anyio.run(tools)
        # DNS rebinding: a page on another name that resolves here is refused before any tool runs.
        hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"Accept": "application/json, text/event-stream", "Host": "evil.example", **bearer}
        assert httpx.post(url, json=hello, headers=headers, timeout=10).status_code in (400, 403, 421)
        headers = {"Accept": "application/json, text/event-stream", "Origin": "https://evil.example", **bearer}
        assert httpx.post(url, json=hello, headers=headers, timeout=10).status_code in (400, 403)
    finally:
        stop(process)


def _chromium() -> str | None:
    from preview_helpers import CHROMIUM

    return CHROMIUM


@pytest.mark.anyio
@pytest.mark.skipif(
    _chromium() is None and os.environ.get("CI") != "true",
    reason="Chromium is not installed (apt-get install chromium-headless-shell); CI installs it, so this runs there",
)
async def test_screenshot_returns_the_widget_as_an_image_block_and_the_host_log(root: Path, anyio_backend):
    from appsdk_cli.scaffold import scaffold

    project = scaffold("book-club", root).path
    dev, _ = start_dev(project)
    try:
        async with agent_session(root) as agent:
            shot = await agent.call_tool(
                "screenshot", {"path": "book-club", "tool": "list-books", "arguments": {"month": "June"}}
            )
            # The second shot is taken in the browser the first one started (kept for the session).
            again = await agent.call_tool("screenshot", {"path": "book-club", "tool": "list-books", "theme": "dark"})
    finally:
        stop(dev)
    assert not again.is_error, text_of(again)
    dark = next(block for block in again.content if block.type == "image")
    assert base64.b64decode(dark.data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert not shot.is_error, text_of(shot)
    images = [block for block in shot.content if block.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    data = base64.b64decode(images[0].data)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    structured = shot.structured_content
    assert structured["problems"] == [] and structured["width"] > 0 and structured["height"] > 0
    assert isinstance(structured["log"], list)


def test_the_typescript_sdk_client_drives_appsdk_mcp_over_stdio(root: Path, node_clients: Path):
    script = HERE / "interop" / "agent-client.mjs"
    result = subprocess.run(
        ["node", str(script), sys.executable, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert "screenshot" in seen["tools"]
    assert all(seen["annotated"].values()), seen["annotated"]
    assert seen["scaffold"]["structuredContent"]["path"] == "demo"
    assert seen["status"]["structuredContent"]["running"] is False
    assert seen["hostile"]["isError"] is True and "outside the project" in seen["hostile"]["content"][0]["text"]


@pytest.fixture
def project_with_symlinked_root(tmp_path: Path) -> Iterator[Path]:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    yield tmp_path / "alias"


def test_a_root_reached_through_a_symlink_still_admits_its_own_files(project_with_symlinked_root: Path):
    from appsdk_cli.agentserver.confine import OutsideProject, inside

    root = project_with_symlinked_root.resolve()
    assert inside(root, "a/b.json") == root / "a" / "b.json"
    assert inside(root, str(project_with_symlinked_root / "x")) == root / "x"
    with pytest.raises(OutsideProject):
        inside(root, "../real2")
    with pytest.raises(OutsideProject):
        inside(root, "nul\x00l")


def _raw_session(argv: list[str], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each message written to a stdio server, and every answer read back in order (notifications get none)."""
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    answers = []
    try:
        for message in messages:
            process.stdin.write((json.dumps(message) + "\n").encode())
            process.stdin.flush()
            if "id" in message:
                answers.append(json.loads(process.stdout.readline()))
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    return answers


def test_the_front_answers_the_handshake_exactly_as_the_sdk_would(root: Path):
    """`appsdk mcp` answers initialize and tools/list before the SDK has loaded (front.py); those answers
    must be the SDK server's own, for every handshake version, and the session it then hands over must
    be the one negotiated (no second initialize answer, tools still callable)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from appsdk_cli.agentserver import front

    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == front.HANDSHAKE_VERSIONS
    sdk_only = [
        sys.executable,
        "-c",
        "import sys; from pathlib import Path; from appsdk_cli.agentserver.server import serve_stdio;"
        " serve_stdio(Path(sys.argv[1]))",
        str(root),
    ]
    fronted = [sys.executable, "-m", "appsdk_cli", "mcp", str(root)]
    for version in front.HANDSHAKE_VERSIONS:
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        }
        session = [
            hello,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
            {
                "jsonrpc": "2.0",
                "id": "three",
                "method": "tools/call",
                "params": {"name": "dev_status", "arguments": {}},
            },
            {"jsonrpc": "2.0", "id": 4, "method": "ping"},
        ]
        plain, quick = _raw_session(sdk_only, session), _raw_session(fronted, session)
        assert [a["id"] for a in quick] == [1, 2, "three", 4]
        assert plain[0]["result"] == quick[0]["result"] == front.initialize_result(version), version
        assert plain[1]["result"] == quick[1]["result"] == front.tools_result(), version
        assert quick[2]["result"]["structuredContent"]["running"] is False
        assert plain[2]["result"]["structuredContent"] == quick[2]["result"]["structuredContent"]


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "era"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_both_protocol_eras_over_stdio(root: Path, mode: str, era: str, anyio_backend):
    """A 2026-07-28 client skips the handshake the front answers: the SDK takes the first request itself."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "appsdk_cli", "mcp", str(root)], env=dict(os.environ)
    )
    async with Client(params, mode=mode) as client:
        tools = await client.list_tools()
        status = await client.call_tool("dev_status", {})
        assert client.protocol_version == era
    assert len(tools.tools) == 11 and not status.is_error and status.structured_content["running"] is False
