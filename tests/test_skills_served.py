"""The scaffold serves its skills/ folder over MCP (SEP-2640) in both protocol eras, from the app itself.

Raw JSON-RPC over HTTP, not appsdk's client: these pin what any host sees on the wire, ChatGPT's skill
importer among them (it reads the extension from a 2025-era initialize result's capabilities.extensions).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import RunningServer, serve_project, stop

from appsdk_cli.scaffold import scaffold

SKILLS = "io.modelcontextprotocol/skills"
SKILL_URI = "skill://book-club-picks/SKILL.md"
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "skills-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Wire:
    """One era's requests to a server: a 2025-era session after initialize, or 2026-07-28's per-request _meta."""

    def __init__(self, url: str, era: str) -> None:
        self.url, self.era = url, era
        self.headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        self.ids = iter(range(1, 1000))

    def post(self, method: str, params: dict | None = None) -> dict:
        params = dict(params or {})
        headers = dict(self.headers)
        if self.era == MODERN:
            params["_meta"] = MODERN_META
            headers.update({"mcp-protocol-version": MODERN, "mcp-method": method})
            if method == "resources/read":
                headers["mcp-name"] = params["uri"]
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        response = httpx.post(self.url, json=body, headers=headers, timeout=20)
        answer = response.json()
        assert response.status_code == 200 or "error" in answer, response.text  # 2026-07-28 errors come as 400
        return answer

    def capabilities(self) -> dict:
        if self.era == MODERN:
            return self.post("server/discover")["result"]["capabilities"]
        init = self.post(
            "initialize",
            {"protocolVersion": self.era, "capabilities": {}, "clientInfo": {"name": "skills-test", "version": "1"}},
        )
        self.headers["mcp-protocol-version"] = self.era  # the scaffold is stateless: no session id to carry
        return init["result"]["capabilities"]


@pytest.fixture(scope="module")
def skills_app(tmp_path_factory) -> Iterator[RunningServer]:
    server = serve_project(scaffold("book-club", tmp_path_factory.mktemp("skills")).path)
    yield server
    stop(server.process)


def read_bytes(wire: Wire, uri: str) -> bytes:
    (content,) = wire.post("resources/read", {"uri": uri})["result"]["contents"]
    return content["text"].encode("utf-8") if "text" in content else base64.b64decode(content["blob"])


@pytest.mark.parametrize("era", ["2025-06-18", "2025-11-25", MODERN])
def test_skills_are_declared_listed_and_verified_in_each_era(skills_app, era):
    wire = Wire(skills_app.url, era)
    capabilities = wire.capabilities()
    # The capability survives the 2025 schema's initialize result (mcp 2.3 drops it there by itself).
    assert capabilities["extensions"][SKILLS] == {}
    assert "resources" in capabilities  # SEP-2640: a server declaring skills declares resources too

    listed = wire.post("skills/list")["result"]
    (entry,) = listed["skills"]
    assert entry["uri"] == SKILL_URI
    assert entry["frontmatter"]["name"] == "book-club-picks"
    assert "list-books" in read_bytes(wire, SKILL_URI).decode()
    uris = [file["uri"] for file in entry["resources"]]
    assert uris == [SKILL_URI, "skill://book-club-picks/reference/answers.md"]
    for file in entry["resources"]:
        data = read_bytes(wire, file["uri"])
        assert file["digest"] == f"sha256:{hashlib.sha256(data).hexdigest()}"
        assert file["size"] == len(data)
    if era == MODERN:
        assert listed["resultType"] == "complete"
        assert isinstance(listed["ttlMs"], int) and listed["cacheScope"] in {"public", "private"}

    got = wire.post("skills/get", {"uri": SKILL_URI})["result"]
    assert got["skill"] == entry
    unknown = wire.post("skills/get", {"uri": "skill://nope/SKILL.md"})
    assert unknown["error"]["code"] == -32602


def test_an_edited_skill_file_is_served_with_its_new_digest(tmp_path: Path):
    project = scaffold("book-club", tmp_path).path
    server = serve_project(project)
    try:
        wire = Wire(server.url, "2025-11-25")
        wire.capabilities()
        reference = project / "skills" / "book-club-picks" / "reference" / "answers.md"
        reference.write_bytes(b"# Example answers\r\n\r\nCRLF line ends stay as written.\r\n")
        (_, file) = wire.post("skills/list")["result"]["skills"][0]["resources"]
        assert file["digest"] == f"sha256:{hashlib.sha256(reference.read_bytes()).hexdigest()}"
        assert read_bytes(wire, file["uri"]) == reference.read_bytes()
    finally:
        stop(server.process)
