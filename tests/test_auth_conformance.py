"""appsdk's sign-in against the official MCP conformance suite (npm @modelcontextprotocol/conformance 0.1.16,
pinned in tests/interop): every client auth scenario of that release, each a mock MCP server and mock
authorization server of the suite's own, with `appsdk call` as the client under test
(tests/interop/conformance_client.py) and a scripted browser.

What 0.1.16 has, and so what is run: the client scenarios `auth/*` of spec versions 2025-03-26 to draft.
Not run, and why: its `extension` scenarios (`client-credentials-*`, `cross-app-access-*`) are machine-to-
machine grants with no user, which appsdk's interactive sign-in does not do. 0.1.16 has no authorization-
server scenarios, no server auth scenarios and no `issuer-parameter` client scenario (`list` shows none), so
the dev AS's RFC 9207 and CIMD are tested against other real clients in test_auth_interop.py and end to end
in test_auth_2026.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import INTEROP

CONFORMANCE = INTEROP / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
# What appsdk must pass; the list is checked against the suite's own, so a scenario cannot go missing.
SCENARIOS = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
]
NOT_APPLICABLE = {
    "auth/client-credentials-jwt": "client_credentials grant: no user to sign in",
    "auth/client-credentials-basic": "client_credentials grant: no user to sign in",
    "auth/cross-app-access-complete-flow": "an enterprise identity assertion grant: no user to sign in",
}

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None, reason="node is not installed here; the conformance suite runs on it"
)


@pytest.fixture(scope="module")
def suite(node_clients: Path) -> list[str]:
    assert CONFORMANCE.is_file(), "npm install in tests/interop did not bring the conformance suite"
    listed = _conformance("list", "--client").stdout
    return [line.split()[1] for line in listed.splitlines() if line.strip().startswith("- auth/")]


def _conformance(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    # Node 20 (Debian's) lacks fs.globSync, which the suite imports; the hook supplies it (see the file).
    command = ["node", "--import", "./node20-globsync.mjs", str(CONFORMANCE), *args]
    return subprocess.run(command, cwd=INTEROP, capture_output=True, text=True, timeout=timeout)


def test_every_client_auth_scenario_of_the_suite_is_run_or_excused(suite: list[str]):
    assert sorted(suite) == sorted(SCENARIOS + list(NOT_APPLICABLE))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_appsdk_passes_the_client_auth_scenario(suite: list[str], scenario: str, tmp_path: Path):
    driver = f"{sys.executable} {INTEROP / 'conformance_client.py'}"
    run = _conformance("client", "--command", driver, "--scenario", scenario, "-o", str(tmp_path), timeout=180)
    (checks_file,) = tmp_path.glob("**/checks.json")
    checks = json.loads(checks_file.read_text())
    failed = [f"{c['id']}: {c.get('errorMessage') or c.get('description')}" for c in checks if c["status"] == "FAILURE"]
    stderr = "".join(p.read_text() for p in tmp_path.glob("**/stderr.txt"))
    assert not failed, f"{failed}\nappsdk said: {stderr}"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert any(c["status"] == "SUCCESS" for c in checks)
    assert "Traceback" not in stderr
