"""`appsdk check` over many tools: each distinct schema goes through the metaschema once, and every tool
that has it still gets its own finding."""

from __future__ import annotations

from appsdk_cli.checks import run_rules
from appsdk_cli.snapshot.model import Snapshot

SAFE = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
# $id keeps the quick walk (checks/fastmeta.py) out of it: these go through jsonschema's metaschema check.
INVALID = {"$id": "urn:shared", "type": "object", "properties": {"n": {"type": "integer", "minimum": "one"}}}
VALID = {"$id": "urn:shared", "type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}


def test_tools_sharing_a_schema_each_get_their_finding() -> None:
    tools = [
        {"name": f"tool-{i}", "inputSchema": dict(INVALID), "outputSchema": dict(VALID), "annotations": SAFE}
        for i in range(3)
    ]
    tools.append({"name": "fine", "inputSchema": dict(VALID), "outputSchema": dict(VALID), "annotations": SAFE})
    tools.append({"name": "out", "inputSchema": dict(VALID), "outputSchema": dict(INVALID), "annotations": SAFE})
    report = run_rules(Snapshot(mode="live", server="t", tools=tools))
    found = sorted((f.rule.id, f.target) for f in report.findings if f.rule.id in ("APPS601", "APPS602"))
    inputs = [("APPS601", f"tool tool-{i}") for i in range(3)]
    assert found == [*inputs, ("APPS602", "tool out")]
    assert all("minimum" in f.message for f in report.findings if f.rule.id in ("APPS601", "APPS602"))
