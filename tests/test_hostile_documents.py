"""Issue 37 items 3, 4 and 7, as an attacker would: a hostile server on 127.0.0.1 (tests/hostile_documents.py)
whose schema patterns hang a backtracking engine, whose sign-in metadata is a gzip bomb, and whose 401
sends our client to another address. Each command ends at once, bounded, saying what it refused; nothing
is fetched where the server pointed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer, appsdk, free_port, serve, stop
from hostile_documents import BOMB_BYTES, CATASTROPHIC, HANGS_IT, SLOW_SECONDS, SLOW_TOOLS, TOOLS
from measured import measured as run_measured

from appsdk_cli.auth.discovery import challenge_url_problem, endpoints_inward_problem, inward_problem
from appsdk_cli.httpguard import BoundedBody, TooLarge
from appsdk_cli.workbench.server import argument_problems

SERVER = Path(__file__).resolve().parent / "hostile_documents.py"
# Backtracking, `^(a|a)*$` against HANGS_IT is 2^40 steps: hours. Linear, it is nothing; the limit leaves
# room for interpreter start-up on a loaded machine.
QUICK = 20.0


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile-documents") / "requests.jsonl"


@pytest.fixture(scope="module")
def hostile(log: Path) -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(SERVER), str(port)], port, env={"HOSTILE_LOG": str(log)})
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def bystander(log: Path) -> Iterator[RunningServer]:
    """A second local server, standing for whatever a hostile challenge points at: it logs every contact."""
    port = free_port()
    server = serve([sys.executable, str(SERVER), str(port)], port, env={"HOSTILE_LOG": str(log)})
    yield server
    stop(server.process)


def base(server: RunningServer) -> str:
    return f"http://127.0.0.1:{server.port}"


def timed(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    try:
        result = appsdk(*args, cwd=cwd, timeout=QUICK * 3)
    except subprocess.TimeoutExpired:
        pytest.fail(f"appsdk {' '.join(args)} did not end within {QUICK * 3:g} s")
    elapsed = time.monotonic() - started
    assert "Traceback" not in result.stderr, result.stderr
    assert elapsed < QUICK, f"took {elapsed:.1f} s"
    return result


def findings(result: subprocess.CompletedProcess[str], target: str) -> list[dict]:
    return [f for f in json.loads(result.stdout)["findings"] if f["target"] == target]


# --- item 3: a server's regular expressions ----------------------------------------------------------------


def test_check_matches_a_servers_catastrophic_pattern_against_its_output_in_linear_time(hostile):
    result = timed("check", "--url", f"{base(hostile)}/regex", "--timeout", "5", "--json")
    (echo,) = [f for f in findings(result, "tool echo") if f["rule"] == "APPS402"]
    assert f"'{HANGS_IT}' does not match '{CATASTROPHIC}'" in echo["message"]
    # What RE2 cannot run is said, as a warning, never matched some slower way nor called a mismatch.
    (look,) = [f for f in findings(result, "tool lookaround") if f["rule"] in ("APPS402", "APPS405")]
    assert look["rule"] == "APPS405" and look["severity"] == "warning"
    assert "pattern not checked: unsupported by the linear-time engine ('^(?!x)a$'" in look["message"]


def test_check_against_a_recorded_enum_under_a_catastrophic_pattern_ends_and_finds_the_break(hostile, tmp_path):
    contract = tmp_path / "appsdk.contract.json"
    recorded = timed("snapshot", "--url", f"{base(hostile)}/regex", "-o", str(contract))
    assert recorded.returncode == 0, recorded.stderr
    data = json.loads(contract.read_text())
    # The recorded version accepted exactly one value; the server's pattern now refuses it.
    data["tools"]["typed"]["inputSchema"]["properties"]["s"] = {"type": "string", "enum": [HANGS_IT]}
    contract.write_text(json.dumps(data))
    result = timed("check", "--against", str(contract), "--url", f"{base(hostile)}/regex", "--json", "--no-calls")
    changes = [c for c in json.loads(result.stdout)["changes"] if "tool `typed`" in c["change"]]
    assert [c["impact"] for c in changes] == ["breaking"], changes
    assert HANGS_IT in changes[0]["change"]


def test_the_workbench_checks_what_the_user_typed_against_the_servers_pattern_at_once():
    schema = TOOLS[2]["inputSchema"]
    started = time.monotonic()
    assert argument_problems(schema, {"s": HANGS_IT}) == [f"s: '{HANGS_IT}' does not match '{CATASTROPHIC}'"]
    assert argument_problems(schema, {"s": "aaaa"}) == []
    assert time.monotonic() - started < 2


def test_timeout_bounds_the_whole_check_however_many_steps_fit_within_it(hostile):
    # Each call answers within --timeout; all of them together take six times as long.
    assert SLOW_SECONDS < 2 and SLOW_SECONDS * SLOW_TOOLS >= 2 * 6
    started = time.monotonic()
    result = appsdk("check", "--url", f"{base(hostile)}/slow", "--timeout", "2", timeout=60)
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == (
        "error: appsdk check did not finish within --timeout 2 s; nothing was reported "
        "(give it more time with --timeout)"
    )
    assert elapsed < 2 + 2 + 5, f"took {elapsed:.1f} s"  # the grace, and an interpreter's start on a busy machine


def test_odd_patterns_and_texts_from_a_server_are_judged_or_said_unchecked_never_a_crash():
    from appsdk_cli.schemawalk import Budget, bounded_validator

    budget = Budget()
    schema = {"properties": {"s": {"pattern": ["x"]}, "t": {"pattern": "^a"}, "u": {"pattern": "(a)\\1"}}}
    errors = [e.message for e in bounded_validator(schema, budget).iter_errors({"s": "q", "t": "\ud800", "u": "aa"})]
    assert errors == ["'\\ud800' does not match '^a'"]  # a lone surrogate (JSON "\ud800") is matched, not a crash
    assert [line.split(" (")[0] for line in budget.unchecked_patterns] == [
        "pattern not checked: unsupported by the linear-time engine"
    ] * 2


# --- item 4: a gzip bomb as sign-in metadata ---------------------------------------------------------------


def measured(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], int]:
    return run_measured(*args, within=QUICK, env=env)


def test_check_refuses_a_gzip_bomb_of_resource_metadata_and_stays_small(hostile):
    result, rss_kib = measured("check", "--url", f"{base(hostile)}/bomb", "--json")
    (finding,) = [f for f in findings(result, f"server {base(hostile)}/bomb") if f["rule"] == "APPS704"]
    assert "its answer is larger than 1 MB (decoded); appsdk reads no more of it" in finding["message"]
    # The bomb is 256 MiB decoded; reading it whole took more than that. Bounded, the interpreter and
    # appsdk's imports are most of it.
    assert rss_kib * 1024 < BOMB_BYTES / 2, f"peak RSS {rss_kib} KiB"


def test_signing_in_refuses_a_gzip_bomb_in_one_line_and_stays_small(hostile):
    result, rss_kib = measured("call", "echo", "--url", f"{base(hostile)}/bomb")
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "larger than 1 MB (decoded)" in lines[0]
    assert rss_kib * 1024 < BOMB_BYTES / 2, f"peak RSS {rss_kib} KiB"


def test_the_bounded_reader_decodes_as_it_goes_and_refuses_what_it_did_not_ask_for():
    import zlib

    packed = zlib.compress(bytes(10_000_000))
    reader = BoundedBody("deflate", 1_000_000)
    with pytest.raises(TooLarge, match="larger than 1 MB"):
        reader.feed(packed)
    assert reader.size <= 1_000_001
    honest = BoundedBody("deflate", 1_000_000)
    assert honest.feed(zlib.compress(b'{"a": 1}')) + honest.end() == b'{"a": 1}'
    with pytest.raises(TooLarge, match="'br', which appsdk did not ask for"):
        BoundedBody("br", 1_000_000)


# --- item 7: a 401 that points elsewhere --------------------------------------------------------------------


def contacted(log: Path, server: RunningServer) -> list[dict]:
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [e for e in entries if e["port"] == server.port]


def test_check_does_not_follow_a_challenge_to_another_address(hostile, bystander, log):
    elsewhere = f"{base(bystander)}/latest/meta-data/iam/security-credentials/"
    url = f"{base(hostile)}/ssrf?to={elsewhere}"
    result = timed("check", "--url", url, "--json")
    (finding,) = [f for f in findings(result, f"server {url}") if f["rule"] == "APPS704"]
    assert "it is not on the server's own origin" in finding["message"]
    assert contacted(log, bystander) == []


def test_signing_in_does_not_follow_a_challenge_to_another_address(hostile, bystander, log):
    elsewhere = f"{base(bystander)}/.well-known/oauth-protected-resource"
    result = timed("call", "echo", "--url", f"{base(hostile)}/ssrf?to={elsewhere}")
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not on the server's own origin" in lines[0], result.stderr
    assert contacted(log, bystander) == []


def test_the_challenge_rule_keeps_each_server_to_its_own_origin_and_public_ones_off_private_networks():
    # Pure functions, no traffic: a public server is only ever named here, never contacted.
    assert challenge_url_problem("https://app.example/mcp", "https://app.example/.well-known/x") is None
    assert challenge_url_problem("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/prm") is None
    for elsewhere in (
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.1:8000/prm",
        "https://app.example:8443/prm",
        "http://app.example/prm",
        "file:///etc/passwd",
    ):
        assert challenge_url_problem("https://app.example/mcp", elsewhere), elsewhere
    for inward in ("http://169.254.169.254/", "http://10.0.0.1/", "http://localhost:9/", "http://[::1]/"):
        assert inward_problem("https://app.example/mcp", inward, "authorization server metadata"), inward
    assert inward_problem("https://app.example/mcp", "https://auth.example/", "authorization server metadata") is None
    assert inward_problem("http://127.0.0.1:8000/mcp", "http://127.0.0.1:9000/", "metadata") is None


def test_a_public_issuers_endpoints_may_not_send_sign_in_inward():
    # The issuer passed, but sign-in posts to the endpoints its metadata names: the same rule holds there.
    public = "https://app.example/mcp"
    honest = {"issuer": "https://auth.example", "token_endpoint": "https://auth.example/token"}
    assert endpoints_inward_problem(public, honest) is None
    for key in ("token_endpoint", "registration_endpoint", "revocation_endpoint", "jwks_uri"):
        planted = {**honest, key: "http://169.254.169.254/latest/meta-data/"}
        assert endpoints_inward_problem(public, planted), key
    # A server on this machine may name this machine: it is here already.
    assert endpoints_inward_problem("http://127.0.0.1:8000/mcp", {"token_endpoint": "http://127.0.0.1:9/t"}) is None


@pytest.mark.anyio
async def test_appsdk_mcp_check_of_a_catastrophic_pattern_returns(hostile, tmp_path, anyio_backend):
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    # An agent's check of the server $APPSDK_URL names, in the one process `appsdk mcp` serves it from.
    env = {**os.environ, "APPSDK_URL": f"{base(hostile)}/regex"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "appsdk_cli", "mcp", str(tmp_path)], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as agent:
        await agent.initialize()
        with anyio.fail_after(QUICK):
            answer = await agent.call_tool("check", {})
    assert not answer.is_error, answer.content
    found = answer.structured_content["findings"]
    assert any(f["rule"] == "APPS402" and CATASTROPHIC in f["message"] for f in found if f["location"] == "tool echo")
