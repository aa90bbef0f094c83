"""`appsdk mcp`'s bounds (issue 37, hole 6): over HTTP it answers only requests with its bearer token, and
served a subfolder it never looks above it (no project, pyproject.toml or .appsdk/ from a parent folder)."""

from __future__ import annotations

import re
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from conftest import appsdk, free_port, stop, wait_for_port
from test_agent_mcp import agent_session, text_of

HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def printed_token(port: int, agent: str = "codex") -> str:
    printed = appsdk("mcp", "--print-config", agent, "--port", str(port))
    assert printed.returncode == 0, printed.stderr
    assert f"http://127.0.0.1:{port}/mcp" in printed.stdout
    (token,) = set(re.findall(r"Bearer ([A-Za-z0-9_-]{32,})", printed.stdout))
    return token


def test_http_mode_answers_only_requests_with_its_bearer_token(tmp_path: Path, appsdk_home_of_the_test: Path):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "mcp", str(tmp_path), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}/mcp"
        # Another local user: no token, a wrong one, or one in another scheme.
        for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": "Basic eDp5"}):
            answer = httpx.post(url, json=HELLO, headers={**ACCEPT, **headers}, timeout=10)
            assert answer.status_code == 401, (headers, answer.status_code, answer.text)
            assert "result" not in answer.text and answer.headers["www-authenticate"].startswith("Bearer")
        token = printed_token(port)
        assert printed_token(port, "claude") == token  # one token, whichever agent's config
        kept = appsdk_home_of_the_test / "mcp-http-token"
        assert kept.read_text().strip() == token and stat.S_IMODE(kept.stat().st_mode) == 0o600
        authorized = {**ACCEPT, "Authorization": f"Bearer {token}"}
        answer = httpx.post(url, json=HELLO, headers=authorized, timeout=10)
        assert answer.status_code == 200 and "appsdk" in answer.text, answer.text
        # The DNS-rebinding rule still holds for a request that has the token.
        evil = httpx.post(url, json=HELLO, headers={**authorized, "Host": "evil.example"}, timeout=10)
        assert evil.status_code in (400, 403, 421)
    finally:
        stop(process)
    assert token.encode() not in process.stderr.read()  # the serving line names the command, not the secret


@pytest.mark.anyio
async def test_a_served_subfolder_never_reaches_the_project_above_it(tmp_path: Path, anyio_backend):
    outer = tmp_path / "outer"
    served = outer / "notes"
    served.mkdir(parents=True)
    marker = tmp_path / "outer-server-was-imported"
    (outer / "pyproject.toml").write_text('[project]\nname = "outer"\nversion = "0"\n')
    (outer / "server.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n")
    async with agent_session(served) as agent:
        status = await agent.call_tool("dev_status", {})
        assert not status.is_error and status.structured_content["project"] == ".", text_of(status)
        for tool in ("check", "contract_snapshot", "list_tools"):
            result = await agent.call_tool(tool, {})
            assert not marker.exists(), f"{tool} imported the project above the served folder"
            assert "outer" not in text_of(result).replace(str(served), ""), text_of(result)
    assert not marker.exists() and not (outer / "appsdk.contract.json").exists()


def test_every_walk_up_is_project_walk_up():
    """One walk up, with its ceiling: a loop over some path's .parents anywhere else is a second one."""
    import ast

    from conftest import REPO

    allowed = {
        ("project.py", "walk_up"): "it is the walk",
        ("scaffold.py", "_missing_ancestors"): "finds the folders `new` must create, searches for no project",
        ("scaffold.py", "_merge_into"): "checks a template file's folders inside the project, below it",
    }
    strays = []
    package = REPO / "appsdk_cli"
    for source in sorted(package.rglob("*.py")):
        where = source.relative_to(package).as_posix()
        for function in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if not isinstance(function, ast.FunctionDef) or (where, function.name) in allowed:
                continue
            for node in ast.walk(function):
                loops = [node.iter] if isinstance(node, ast.For | ast.comprehension) else []
                if any(isinstance(n, ast.Attribute) and n.attr == "parents" for loop in loops for n in ast.walk(loop)):
                    strays.append(f"appsdk_cli/{where}:{getattr(node, 'lineno', function.lineno)} ({function.name})")
    assert not strays, "walk up with appsdk_cli.project.walk_up (and its ceiling):\n" + "\n".join(strays)
