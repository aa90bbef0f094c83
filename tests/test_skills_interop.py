"""A client no one here wrote verifies the scaffold's skills: MCP Inspector 2.12's `--verify` (SEP-2640
conformance of each entry, every file read and checked against its sha256 digest and size), in both
protocol eras, on `python server.py` and on `appsdk dev`; and it catches a file changed on its way.

The Inspector is pinned in tests/interop/package.json and installed by .ci/run (or the node_clients
fixture); the test skips only where node or npm is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import INSPECTOR, INTEROP, REPO, free_port, serve, stop

from appsdk_cli.scaffold import scaffold

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not installed here; the interoperability test needs them to run the Inspector",
)
ERAS = {"legacy": "the 2025 handshake", "modern": "2026-07-28"}


def verify(url: str, era: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = ["node", str(INSPECTOR), "--cli", url, "--transport", "http", "--protocol-era", era]
    command += ["--method", "skills/list", "--verify", "--format", "json", *args]
    return subprocess.run(command, cwd=INTEROP, capture_output=True, text=True, timeout=120)


def reports(done: subprocess.CompletedProcess[str]) -> list[dict]:
    """--verify prints one JSON report per skill, one after another."""
    decoder, text, found, at = json.JSONDecoder(), done.stdout, [], 0
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        report, at = decoder.raw_decode(text, at)
        found.append(report)
    return found


def assert_verified(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    (report,) = reports(done)
    assert report["uri"] == "skill://book-club-picks/SKILL.md" and report["ok"] is True, report
    assert report["outcome"] == "verified" and report["conformance"] == [] and report["frontmatter"] == []
    assert [f["status"] for f in report["files"]] == ["verified", "verified"]


@pytest.mark.parametrize("era", list(ERAS), ids=list(ERAS.values()))
def test_the_inspector_verifies_the_scaffolds_skills(node_clients, app_server, era):
    assert_verified(verify(app_server.url, era))


def test_the_inspector_verifies_them_through_appsdk_dev(node_clients, tmp_path: Path):
    from test_dev import start_dev

    dev = start_dev(scaffold("book-club", tmp_path).path)
    try:
        for era in ERAS:
            assert_verified(verify(dev.url, era))
    finally:
        stop(dev.process)


def test_the_inspector_catches_a_file_changed_on_its_way(node_clients):
    port = free_port()
    fixtures = REPO / "tests" / "fixtures" / "check"
    server = serve(
        [sys.executable, str(fixtures / "serve.py"), str(fixtures / "skill-digest-mismatch"), str(port)], port
    )
    try:
        done = verify(f"http://127.0.0.1:{port}/mcp", "legacy")
        assert done.returncode != 0
        (report,) = reports(done)
        assert report["ok"] is False
        skill_md = next(f for f in report["files"] if f["uri"].endswith("/SKILL.md"))
        assert skill_md["status"] == "mismatch" and skill_md["actualSize"] != skill_md["expectedSize"]
        assert "skills_nonconformant" in done.stderr
    finally:
        stop(server.process)
