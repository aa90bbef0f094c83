"""Both protocol eras (2026-07-28 and the 2025 handshake) and HTTP+SSE, on real servers, end to end.

Servers: the scaffold (`python server.py` and `appsdk dev`, both transports), tests/fixtures/eras_server.py
(mcp 2.x: questions, progress, logs, header-mirrored arguments), a deliberately sloppy one, and the
third-party ones in test_eras_interop.py.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import FIXTURES, RunningServer, appsdk, free_port, serve, serve_project, stop

from appsdk_cli import client as lean
from appsdk_cli.client import modern
from appsdk_cli.errors import AppsdkError
from appsdk_cli.scaffold import scaffold

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
}


def one_line_error(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def raw_modern(url: str, method: str, params: dict | None = None, **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": ENVELOPE}}
    sent = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        **headers,
    }
    return httpx.post(url, json=body, headers=sent, timeout=10)


def raw_handshake(url: str) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    return httpx.post(url, json=body, headers={"Accept": "application/json, text/event-stream"}, timeout=10)


def assert_both_eras(url: str) -> None:
    listed = raw_modern(url, "tools/list")
    assert listed.status_code == 200, listed.text
    result = listed.json()["result"]
    assert result["resultType"] == "complete" and [t["name"] for t in result["tools"]] == ["list-books"]
    called = raw_modern(url, "tools/call", {"name": "list-books", "arguments": {}}, **{"Mcp-Name": "list-books"})
    assert called.json()["result"]["structuredContent"]["books"][0]["title"] == "Frankenstein"
    # A modern server refuses a request whose headers disagree with its body.
    mismatched = raw_modern(url, "tools/list", **{"Mcp-Method": "server/discover"})
    assert mismatched.status_code == 400 and mismatched.json()["error"]["code"] == modern.HEADER_MISMATCH
    shaken = raw_handshake(url)
    assert shaken.status_code == 200 and shaken.json()["result"]["protocolVersion"] == "2025-11-25"


@pytest.fixture(scope="module")
def scaffold_app(tmp_path_factory) -> Iterator[RunningServer]:
    server = serve_project(scaffold("book-club", tmp_path_factory.mktemp("eras")).path)
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def eras_sse() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "eras_server.py"), "sse", str(port)], port)
    yield server
    stop(server.process)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    return {"APPSDK_HOME": str(tmp_path / "home")}


# --- servers: the scaffold and `appsdk dev` serve both eras ---------------------------------------------


def test_scaffold_serves_both_eras(scaffold_app):
    assert_both_eras(scaffold_app.url)


def test_dev_serves_both_eras_and_sse(tmp_path: Path, home):
    from test_dev import start_dev

    project = scaffold("book-club", tmp_path).path
    dev = start_dev(project)
    try:
        assert_both_eras(dev.url)
        for protocol in ("auto", MODERN, "2025-11-25", "2025-06-18"):
            result = appsdk("call", "list-books", "--url", dev.url, "--protocol", protocol, "--json", env=home)
            assert result.returncode == 0, result.stderr
            assert json.loads(result.stdout)["structuredContent"]["books"][0]["title"] == "Frankenstein"
        # Forcing HTTP+SSE on a server that has none is one clear line.
        refused = appsdk("call", "list-books", "--url", dev.url, "--protocol", "2024-11-05", env=home)
        assert refused.returncode == 1 and "HTTP" in one_line_error(refused)
    finally:
        stop(dev.process)


def test_dev_sse_transport_serves_sse_only_as_the_guide_says(tmp_path: Path, home):
    """`--transport sse` serves /sse instead of /mcp: the guide once said /mcp kept answering both eras."""
    from conftest import REPO
    from test_dev import start_dev

    guide = " ".join((REPO / "docs" / "guides" / "dev.md").read_text(encoding="utf-8").split())
    assert "at `/sse` instead of `/mcp`, so `/mcp` then answers 404" in guide
    project = scaffold("book-club", tmp_path).path
    dev = start_dev(project, "--transport", "sse")
    try:
        assert raw_handshake(f"http://127.0.0.1:{dev.port}/mcp").status_code == 404
        called = appsdk("call", "list-books", "--json", cwd=project, env=home)  # found from .appsdk/dev.json
        assert called.returncode == 0, called.stderr
    finally:
        stop(dev.process)


@pytest.mark.browser  # its --screenshot drives Chromium
def test_dev_sse_transport_works_with_call_check_and_preview(tmp_path: Path, home):
    from test_dev import start_dev

    project = scaffold("book-club", tmp_path).path
    dev = start_dev(project, "--transport", "sse")
    sse_url = f"http://127.0.0.1:{dev.port}/sse"
    try:
        called = appsdk("call", "list-books", "--url", sse_url, "--json", env=home)
        assert called.returncode == 0, called.stderr
        assert json.loads(called.stdout)["structuredContent"]["books"][0]["title"] == "Frankenstein"
        # Inside the project, call finds the running dev server (and its /sse URL) by itself.
        found = appsdk("call", "list-books", "--verbose", cwd=project, env=home)
        assert found.returncode == 0 and "HTTP+SSE" in found.stdout, found.stderr
        checked = appsdk("check", "--url", sse_url, "--json", env=home)
        report = json.loads(checked.stdout)
        assert report["summary"]["tools"] == 1 and report["summary"]["called"] == ["list-books"]
        assert {"version": "2024-11-05", "transport": "sse"} in report["summary"]["eras"]
        shot = tmp_path / "shot.png"
        previewed = appsdk("preview", "list-books", "--url", sse_url, "--screenshot", str(shot), env=home, timeout=120)
        assert previewed.returncode == 0, previewed.stderr
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        stop(dev.process)


# --- the client: negotiation, the era cache, forced eras ------------------------------------------------


class Trace:
    def __init__(self) -> None:
        self.methods: list[str] = []

    def __call__(self, direction: str, message: dict) -> None:
        if direction == "send" and "method" in message:
            self.methods.append(message["method"])


def test_a_remembered_modern_server_costs_one_exchange_per_request(scaffold_app, tmp_path: Path):
    cache_file = tmp_path / "eras.json"
    first = Trace()
    with lean.connect(scaffold_app.url, trace=first, eras=lean.EraCache(cache_file)) as client:
        client.list_tools()
        client.call_tool("list-books", {})
    assert first.methods == ["server/discover", "tools/list", "tools/call"]
    assert json.loads(cache_file.read_text())[scaffold_app.url]["version"] == MODERN
    # The next command (a new cache object, the same file): no probe, no handshake, no DELETE.
    second = Trace()
    with lean.connect(scaffold_app.url, trace=second, eras=lean.EraCache(cache_file)) as client:
        client.list_tools()
        client.call_tool("list-books", {})
    assert second.methods == ["tools/list", "tools/call"]


def test_a_wrongly_remembered_era_is_negotiated_again(eras_sse, tmp_path: Path):
    cache = lean.EraCache(tmp_path / "eras.json")
    cache.remember(eras_sse.url.replace("/mcp", "/sse"), lean.Era(MODERN, "streamable-http"))
    trace = Trace()
    with lean.connect(eras_sse.url.replace("/mcp", "/sse"), trace=trace, eras=cache) as client:
        assert [t["name"] for t in client.list_tools()][:1] == ["book-table"]
        assert client.era is not None and client.era.transport == "sse"
    assert trace.methods[:3] == ["tools/list", "server/discover", "initialize"]
    assert cache.get(eras_sse.url.replace("/mcp", "/sse")).transport == "sse"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed here; the third-party server needs it")
def test_a_port_reused_by_a_2025_server_is_found_out_again_by_every_command(node_clients, home):
    # A URL remembered as 2026-07-28, now served by the TypeScript SDK's 2025-only example (a dev port
    # reused): it answers a 2026-07-28 request with HTTP 400 and a JSON-RPC body, never -32022.
    port = free_port()
    module = node_clients / "node_modules" / "@modelcontextprotocol" / "server-system-monitor" / "dist" / "index.js"
    server = serve(["node", str(module)], port, env={"PORT": str(port)})
    eras_file = Path(home["APPSDK_HOME"]) / "eras.json"
    try:
        for command in (
            ["snapshot", "-o", str(Path(home["APPSDK_HOME"]).parent / "contract.json")],
            ["tools"],
            ["call", "get-system-info"],
            ["resources"],
            ["check"],
        ):
            lean.EraCache(eras_file).remember(server.url, lean.Era(MODERN, "streamable-http"))
            result = appsdk(*command, "--url", server.url, env=home)
            assert "Unsupported protocol version" not in result.stderr, (command, result.stderr)
            if command[0] != "check":  # check may fail the app on its rules; it must still have reached it
                assert result.returncode == 0, (command, result.stderr)
            remembered = lean.EraCache(eras_file).get(server.url)
            assert remembered is not None and not remembered.modern, command
    finally:
        stop(server.process)


def test_cli_caches_the_era_under_appsdk_home(scaffold_app, home):
    result = appsdk("call", "list-books", "--url", scaffold_app.url, "--verbose", env=home)
    assert result.returncode == 0 and f"protocol {MODERN}" in result.stdout, result.stderr
    # Without --verbose the era is not said: it means nothing to someone who has not met MCP's eras.
    plain = appsdk("call", "list-books", "--url", scaffold_app.url, env=home)
    assert plain.returncode == 0 and MODERN not in plain.stdout and "handshake" not in plain.stdout, plain.stdout
    cached = json.loads((Path(home["APPSDK_HOME"]) / "eras.json").read_text())
    assert cached[scaffold_app.url]["version"] == MODERN


def test_tools_reports_the_eras_and_the_dropped_tool(eras_app, home):
    result = appsdk("tools", "--url", eras_app.url, "--json", env=home)
    listing = json.loads(result.stdout)
    assert "bad-header" not in [t["name"] for t in listing["tools"]]
    assert "x-mcp-header" in listing["dropped"]["bad-header"]
    spoken = {(e["version"], e["transport"]) for e in listing["eras"]["spoken"]}
    assert spoken == {(MODERN, "streamable-http"), ("2025-11-25", "streamable-http"), ("2025-06-18", "streamable-http")}
    shown = appsdk("tools", "--url", eras_app.url, "--verbose", env=home)
    assert "protocol: 2026-07-28 (the server also speaks the 2025-11-25 handshake and the 2025-06-18 handshake)" in (
        shown.stdout
    )
    assert "left out bad-header" in shown.stdout
    plain = appsdk("tools", "--url", eras_app.url, env=home)
    assert "protocol:" not in plain.stdout and "left out bad-header" in plain.stdout
    refused = appsdk("call", "bad-header", "amount=1.5", "--url", eras_app.url, env=home)
    assert refused.returncode == 2 and "left out of tools/list in 2026-07-28" in one_line_error(refused)
    # In the handshake era the annotation means nothing, so nothing is left out.
    old = json.loads(appsdk("tools", "--url", eras_app.url, "--json", "--protocol", "2025-06-18", env=home).stdout)
    assert "bad-header" in [t["name"] for t in old["tools"]]


def test_bad_protocol_is_a_usage_error(scaffold_app, home):
    result = appsdk("tools", "--url", scaffold_app.url, "--protocol", "2023-01-01", env=home)
    assert result.returncode == 2 and "2026-07-28" in result.stderr


# --- the modern wire: envelope, headers, Mcp-Param-* ---------------------------------------------------


def test_header_values_use_the_base64_sentinel_as_mcp_decodes_it():
    from mcp.shared.inbound import decode_header_value

    for text in ("plain", "Nordland ø", " padded ", "tab\there", "=?base64?abc?="):
        encoded = modern.header_value(text)
        assert encoded.isascii() and decode_header_value(encoded) == text
    assert modern.header_value("plain") == "plain"
    assert modern.header_value("plain", always_encode=True) == "=?base64?" + base64.b64encode(b"plain").decode() + "?="


def test_invalid_header_annotations_match_mcps_verdicts():
    from mcp.shared.inbound import find_invalid_x_mcp_header

    schemas = [
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region"}}},
        {"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "Amount"}}},
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}},
        {
            "type": "object",
            "properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "integer", "x-mcp-header": "x"}},
        },
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}},
        {"type": "object", "x-mcp-header": "Root"},
        {
            "type": "object",
            "properties": {"o": {"type": "object", "properties": {"n": {"type": "boolean", "x-mcp-header": "N"}}}},
        },
    ]
    for schema in schemas:
        assert (modern.invalid_header_annotation(schema) is None) == (find_invalid_x_mcp_header(schema) is None), schema


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_header_mirrored_arguments_reach_the_tool(eras_app, home, protocol):
    # mcp 2.x refuses a modern tools/call whose Mcp-Param-* headers are missing or wrong, so success proves them.
    result = appsdk(
        "call",
        "weather",
        "region=Nordland ø",
        "days=3",
        "--url",
        eras_app.url,
        "--protocol",
        protocol,
        "--json",
        env=home,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structuredContent"] == {"region": "Nordland ø", "days": 3}


# --- questions (MRTR and elicitation/create), progress and logs ----------------------------------------


@pytest.mark.parametrize(
    ("fixture", "protocol", "era"),
    [
        ("eras_app", "auto", MODERN),
        ("eras_stateful", "auto", MODERN),
        ("eras_stateful", "2025-11-25", "2025-11-25 handshake"),
        ("eras_sse", "auto", "HTTP+SSE"),
    ],
)
def test_a_tools_question_is_answered_from_the_command_line(request, home, fixture, protocol, era):
    server: RunningServer = request.getfixturevalue(fixture)
    url = server.url.replace("/mcp", "/sse") if fixture == "eras_sse" else server.url
    args = ("call", "book-table", "restaurant=Noma", "--url", url, "--protocol", protocol)
    answered = appsdk(*args, "--answer", "guests=2", "--answer", "name=Ada Lovelace", "--verbose", env=home)
    assert answered.returncode == 0, answered.stderr
    assert era in answered.stdout and '"guests": 2' in answered.stdout and '"vegan": false' in answered.stdout
    as_json = appsdk(*args, "--answers", '{"guests": 4, "name": "Grace", "vegan": true}', "--json", env=home)
    assert json.loads(as_json.stdout)["structuredContent"] == {
        "restaurant": "Noma",
        "guests": 4,
        "name": "Grace",
        "vegan": True,
    }
    # No terminal and no answers: one line that says how to answer, exit 1.
    refused = appsdk(*args, env=home)
    assert refused.returncode == 1
    line = one_line_error(refused)
    assert "--answer guests=..." in line and "--answer name=..." in line and "not a terminal" in line


def test_a_wrongly_typed_answer_is_one_line(eras_app, home):
    result = appsdk(
        "call",
        "book-table",
        "restaurant=Noma",
        "--url",
        eras_app.url,
        "--answer",
        "guests=many",
        "--answer",
        "name=A",
        env=home,
    )
    assert result.returncode == 1 and "must be a integer" in one_line_error(result)


def test_questions_are_prompted_in_a_terminal(eras_app, home):
    import os
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: appsdk in a terminal
        os.environ.update(home)
        os.execv(
            sys.executable,
            [
                sys.executable,
                "-m",
                "appsdk_cli",
                "call",
                "book-table",
                "restaurant=Noma",
                "--url",
                eras_app.url,
                "--json",
            ],
        )
    seen = b""
    answers = iter([b"3\r", b"Ada\r", b"y\r"])
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            # Each prompt ends its line without a newline: answer it, one field at a time.
            if chunk.rstrip().endswith((b":", b")")) or b"optional]" in chunk:
                answer = next(answers, None)
                if answer:
                    os.write(fd, answer)
    finally:
        _, status = os.waitpid(pid, 0)
    text = seen.decode("utf-8", "replace")
    assert "The server asks:" in text and "Booking a table at Noma" in text, text
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert '"guests": 3' in text and '"name": "Ada"' in text


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_progress_and_logs_are_json_lines_on_stderr(eras_stateful, home, protocol):
    result = appsdk(
        "call", "count-slowly", "steps=3", "--url", eras_stateful.url, "--protocol", protocol, "--json", env=home
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structuredContent"] == {"counted": 3}
    seen = [json.loads(line) for line in result.stderr.splitlines()]
    progress = [m["params"] for m in seen if m["method"] == "notifications/progress"]
    logs = [m["params"]["data"] for m in seen if m["method"] == "notifications/message"]
    assert [(p["progress"], p["total"]) for p in progress] == [(1, 3), (2, 3), (3, 3)]
    assert logs == ["counted 1", "counted 2", "counted 3"]


def test_progress_and_logs_show_as_lines_without_a_terminal(eras_stateful, home):
    result = appsdk("call", "count-slowly", "steps=2", "--url", eras_stateful.url, env=home)
    assert result.returncode == 0
    assert "progress 1/2 step 1 of 2" in result.stderr and "info: counted 2" in result.stderr


# --- check's era rules ------------------------------------------------------------------------------


def test_check_era_rules_on_a_sloppy_server(home):
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "sloppy_modern.py"), str(port)], port)
    try:
        result = appsdk("check", "--url", f"http://127.0.0.1:{port}/mcp", "--json", env=home)
        findings = json.loads(result.stdout)["findings"]
        rules = {f["rule"]: f for f in findings}
        assert {"APPS802", "APPS803", "APPS804"} <= set(rules), rules
        assert all(rules[r]["severity"] == "warning" for r in ("APPS802", "APPS803", "APPS804"))
        assert "sloppy-discover" in rules["APPS802"]["message"]
        missing = sorted(f["message"].split(" answer to ")[1].split()[0] for f in findings if f["rule"] == "APPS803")
        assert missing == ["resources/list", "server/discover", "tools/list"]
    finally:
        stop(server.process)


def test_check_era_rules_on_legacy_and_bad_header_servers(eras_app, eras_sse, home):
    modern_report = json.loads(appsdk("check", "--url", eras_app.url, "--json", env=home).stdout)
    rules = [f["rule"] for f in modern_report["findings"]]
    assert "APPS805" in rules and not {"APPS801", "APPS802", "APPS803", "APPS804"} & set(rules)
    legacy = json.loads(appsdk("check", "--url", eras_sse.url.replace("/mcp", "/sse"), "--json", env=home).stdout)
    assert "APPS801" in [f["rule"] for f in legacy["findings"]]


def test_check_on_the_scaffold_finds_no_era_problem(scaffold_app, home):
    report = json.loads(appsdk("check", "--url", scaffold_app.url, "--json", env=home).stdout)
    assert not [f for f in report["findings"] if f["rule"].startswith("APPS8")]
    assert report["summary"]["era"].startswith(MODERN)


# --- wrong places and wrong commands ------------------------------------------------------------------


def test_404_hint_only_when_nothing_mcp_answers(scaffold_app, eras_app, home):
    wrong_path = scaffold_app.url.replace("/mcp", "/nothing")
    result = appsdk("tools", "--url", wrong_path, env=home)
    assert result.returncode == 1 and "wrong path?" in one_line_error(result)
    # A modern server's own 404 (an unknown method, with a JSON-RPC body) gets no such hint.
    cache = lean.EraCache(Path(home["APPSDK_HOME"]) / "e.json")
    with lean.connect(eras_app.url, eras=cache) as client, pytest.raises(lean.ProtocolError) as raised:
        client.request("nope/nothing")
    assert raised.value.status == 404 and "wrong path" not in raised.value.message


def test_stdio_command_that_serves_http_does_not_speak_mcp(tmp_path: Path, home):
    # The scaffold's `python server.py` serves HTTP and says so on stdout.
    project = scaffold("book-club", tmp_path).path
    env = {**home, "PORT": str(free_port())}
    result = appsdk("tools", "--stdio", f'"{sys.executable}" server.py', cwd=project, env=env)
    line = one_line_error(result)
    assert result.returncode == 1 and "does not speak MCP on stdio" in line and "serving http" in line
    # A command that prints and exits gets the same verdict.
    printer = f'"{sys.executable}" -c "print(\'hello from a script\')"'
    printed = appsdk("tools", "--stdio", printer, env=home)
    assert "does not speak MCP on stdio" in one_line_error(printed) and "hello from a script" in printed.stderr


def test_stdio_command_that_exits_early_shows_its_stderr(home):
    command = f'"{sys.executable}" -c "import sys; sys.stderr.write(\'config.toml: no such file\\n\'); sys.exit(3)"'
    result = appsdk("tools", "--stdio", command, env=home)
    assert result.returncode == 1
    assert "exited with 3" in result.stderr and "config.toml: no such file" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("protocol", ["auto", MODERN, "2025-06-18"])
def test_stdio_in_each_era(home, protocol):
    command = f'"{sys.executable}" "{FIXTURES / "eras_server.py"}" stdio'
    result = appsdk(
        "call",
        "book-table",
        "restaurant=Noma",
        "--stdio",
        command,
        "--protocol",
        protocol,
        "--answers",
        '{"guests": 1, "name": "Ada"}',
        "--json",
        env=home,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structuredContent"]["guests"] == 1


# --- cancellation ------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["streamable-http", "sse", "stdio"])
def test_a_call_cancelled_in_a_handshake_era_stops_on_the_server(request, where, tmp_path: Path):
    # notifications/cancelled names the request in flight (cancel() is True once the server took it), and
    # the waiting thread gives up at once. The Python SDK then cancels the tool's task, which the
    # fixture's `wait` records. Over HTTP it also does so when the connection drops; over stdio nothing
    # drops, and without the notification (tried) the tool runs on.
    if where == "stdio":
        target = {"stdio": f'"{sys.executable}" "{FIXTURES / "eras_server.py"}" stdio', "protocol": "2025-11-25"}
    elif where == "sse":
        target = {"url": request.getfixturevalue("eras_sse").url.replace("/mcp", "/sse")}
    else:
        target = {"url": request.getfixturevalue("eras_stateful").url, "protocol": "2025-11-25"}
    seconds = 30 + len(where)  # tells this test's cancelled call from the others' on a shared server
    with lean.connect(**target, eras=lean.EraCache(tmp_path / "eras.json")) as client:
        assert client.era is not None and not client.era.modern
        outcome: list[object] = []
        caller = threading.Thread(
            target=lambda: outcome.append(_outcome(lambda: client.call_tool("wait", {"seconds": seconds})))
        )
        caller.start()
        deadline = time.monotonic() + 10
        while client._in_flight is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # the tool has started
        assert client.cancel("the test cancelled it")
        caller.join(timeout=5)
        assert not caller.is_alive(), "the cancelled call still waits"
        assert isinstance(outcome[0], AppsdkError), outcome  # no result for a cancelled call
        if where == "stdio":
            seen = client.call_tool("cancelled-calls", {})
    if where != "stdio":
        with lean.connect(**target, eras=lean.EraCache(tmp_path / "eras.json")) as client:
            seen = client.call_tool("cancelled-calls", {})
    assert seconds in seen["structuredContent"]["cancelled"], seen


def test_in_2026_07_28_there_is_nothing_to_send_to_cancel(scaffold_app, tmp_path: Path):
    with lean.connect(scaffold_app.url, eras=lean.EraCache(tmp_path / "eras.json")) as client:
        client.list_tools()
        assert client.era is not None and client.era.modern
        client._in_flight = 7  # as if a request waited: closing its stream is the cancellation
        assert client.cancel_in_flight("no one to tell") is False


def _outcome(call):
    try:
        return call()
    except AppsdkError as problem:
        return problem


def test_ctrl_c_during_a_call_tells_the_server_and_exits_130(eras_stateful, home, tmp_path: Path):
    trace = tmp_path / "call.jsonl"
    args = ["wait", "seconds=30", "--url", eras_stateful.url, "--protocol", "2025-11-25", "--trace", str(trace)]
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "call", *args],
        env={**os.environ, **home},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and '"tools/call"' not in (trace.read_text() if trace.exists() else ""):
        time.sleep(0.05)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 130 and "Traceback" not in stderr, stderr
    assert stderr.strip().splitlines() == ["interrupted (Ctrl-C) while waiting for the result of wait"], stderr
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    call = next(r for r in records if r["method"] == "tools/call" and r["kind"] == "request")
    cancelled = [r for r in records if r["method"] == "notifications/cancelled"]
    assert [r["message"]["params"]["requestId"] for r in cancelled] == [call["message"]["id"]], cancelled
    assert cancelled[0]["message"]["params"]["reason"] == "the user interrupted appsdk (Ctrl-C)"
