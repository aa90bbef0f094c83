"""Protocol eras (live mode): does the server speak 2026-07-28 as the spec says, and agree with itself?

Clients in the field now probe with `server/discover` first (Claude Code, MCP Inspector 2.12); a server
that fails it, or tells discover something other than what it tells `initialize`, behaves differently
depending on who asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from appsdk_cli.checks.model import Finding, Rule, Severity, tool_target
from appsdk_cli.snapshot.model import Snapshot

SERVER = "server"

DISCOVER_FAILS = Rule(
    "APPS801",
    "discover-fails",
    Severity.WARNING,
    "The server answers the 2025 handshake but not a 2026-07-28 `server/discover`",
    "2026-07-28 clients probe with server/discover first; every mcp 2.3+ server answers it",
)
DISCOVER_DISAGREES = Rule(
    "APPS802",
    "discover-disagrees",
    Severity.WARNING,
    "`server/discover` and `initialize` name a different server, version or capabilities",
    "A client sees a different server depending on the era it speaks",
)
RESULT_TYPE_MISSING = Rule(
    "APPS803",
    "result-type-missing",
    Severity.WARNING,
    "A 2026-07-28 answer without `resultType`",
    "The field is required in 2026-07-28 results; clients use it to tell a result from an input_required one",
)
HEADER_MISMATCH_ACCEPTED = Rule(
    "APPS804",
    "header-mismatch-accepted",
    Severity.WARNING,
    "A 2026-07-28 request whose `Mcp-Method` header disagrees with its body is answered, not refused",
    "The spec requires HTTP 400 with -32020: proxies route on the headers, the server acts on the body",
)
HEADER_ANNOTATION_INVALID = Rule(
    "APPS805",
    "x-mcp-header-invalid",
    Severity.ERROR,
    "A tool whose `x-mcp-header` annotations break the 2026-07-28 rules",
    "2026-07-28 clients must leave such a tool out of tools/list: no model ever sees it",
)
RULES = (DISCOVER_FAILS, DISCOVER_DISAGREES, RESULT_TYPE_MISSING, HEADER_MISMATCH_ACCEPTED, HEADER_ANNOTATION_INVALID)


def _identity(result: dict[str, Any] | None, *, discover: bool) -> tuple[str, str, list[str]] | None:
    if not isinstance(result, dict):
        return None
    if discover:
        meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
        info = meta.get("io.modelcontextprotocol/serverInfo")
    else:
        info = result.get("serverInfo")
    info = info if isinstance(info, dict) else {}
    capabilities = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
    return str(info.get("name", "")), str(info.get("version", "")), sorted(capabilities)


def check(snapshot: Snapshot) -> Iterator[Finding]:
    for name, why in sorted(snapshot.dropped_tools.items()):
        yield Finding(
            HEADER_ANNOTATION_INVALID,
            tool_target(name),
            f"{name}: left out of tools/list by 2026-07-28 clients: {why}",
            "put x-mcp-header only on a top-level string, integer or boolean argument, with a unique header name",
        )
    eras = snapshot.eras
    if not eras:
        return
    spoken = {era.get("version") for era in eras.get("spoken") or [] if isinstance(era, dict)}
    handshake = bool(spoken - {"2026-07-28"})
    if "2026-07-28" not in spoken and handshake:
        yield Finding(
            DISCOVER_FAILS,
            SERVER,
            f"server/discover failed: {eras.get('discoverError') or 'no 2026-07-28 in supportedVersions'}",
            "upgrade the server's MCP SDK to one that speaks 2026-07-28 (in Python, mcp 2.3 or later: MCPServer "
            "answers both eras)",
        )
    discovered = _identity(eras.get("discover"), discover=True)
    initialized = _identity(eras.get("initialize"), discover=False)
    if "2026-07-28" in spoken and discovered and initialized and discovered != initialized:
        said = []
        labels = ("name", "version", "capabilities")
        for label, a, b in zip(labels, discovered, initialized, strict=True):
            if a != b:
                said.append(f"{label} {a!r} in discover, {b!r} in initialize")
        yield Finding(
            DISCOVER_DISAGREES,
            SERVER,
            "server/discover and initialize disagree: " + "; ".join(said),
            "build both answers from the same server object (name, version, capabilities)",
        )
    for method in sorted(set(eras.get("without_result_type") or []) | set(snapshot.without_result_type)):
        yield Finding(
            RESULT_TYPE_MISSING,
            SERVER,
            f"the 2026-07-28 answer to {method} has no resultType",
            'add "resultType": "complete" to every 2026-07-28 result (mcp 2.3+ does it for you)',
        )
    if eras.get("mismatchAccepted") is True:
        yield Finding(
            HEADER_MISMATCH_ACCEPTED,
            SERVER,
            "a server/discover sent with the header Mcp-Method: tools/list was answered instead of refused",
            "compare MCP-Protocol-Version, Mcp-Method and Mcp-Name with the body; refuse a mismatch with 400/-32020",
        )
