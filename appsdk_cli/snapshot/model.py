"""What a server sends (Snapshot), wire-shaped and plain.

The live and PATH collectors produce the same Snapshot, so the rules (checks/), the contract file
(contract/) and `appsdk dev`'s reload summary never know which mode made it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Snapshot:
    """What the server sent, as wire dicts: lists, the widget reads, and the calls the check made.

    `reads` / `calls` hold the results that came back; `read_errors` / `call_errors` one line for each
    request that failed outright (a JSON-RPC error, a timeout). A tool result with isError is a result.
    """

    mode: str  # "live" or "path"
    server: str  # the URL, or "module:attr in /project"
    server_name: str = ""
    server_version: str = ""
    instructions: str | None = None
    # The MCP protocol versions this collection spoke (today one: the 2025 handshake's).
    protocol_versions: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    resource_templates: list[dict[str, Any]] = field(default_factory=list)
    reads: dict[str, dict[str, Any]] = field(default_factory=dict)
    read_errors: dict[str, str] = field(default_factory=dict)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    call_errors: dict[str, str] = field(default_factory=dict)
    # How long each of those calls took, in seconds, so a check can name the one it waited on.
    call_seconds: dict[str, float] = field(default_factory=dict)
    # Calls refused only for want of a sign-in or of scope (HTTP 401/403): tool name -> the scope asked for.
    sign_in_calls: dict[str, str] = field(default_factory=dict)
    # Live mode only: how the server answers a client that is not signed in (see checks/auth.py).
    auth: dict[str, Any] = field(default_factory=dict)
    # The server's `instructions` from initialize (None when it sends none), for the submission rules.
    instructions: str | None = None
    # The server's own MCP Apps declaration (capabilities.extensions["io.modelcontextprotocol/ui"], from
    # server/discover or initialize); None when it makes none. Collected offering the UI extension, as a
    # widget host does, so a server that gates its widgets on it shows them.
    server_ui: dict[str, Any] | None = None

    # Live mode only (see checks/eras.py): the era the check ran in, what each era answered, the tools a
    # 2026-07-28 client must leave out (name -> why), and the modern methods answered without resultType.
    era: str = ""
    eras: dict[str, Any] = field(default_factory=dict)
    dropped_tools: dict[str, str] = field(default_factory=dict)
    without_result_type: list[str] = field(default_factory=list)

    # Skills over MCP (SEP-2640), asked only when the server declares io.modelcontextprotocol/skills:
    # the skills/list entries (or why the listing failed), each listed skill's skills/get result, and the
    # resources/read result of every file a listed skill names, as for the widgets above.
    skills_declared: bool = False
    skills: list[dict[str, Any]] = field(default_factory=list)
    skills_error: str = ""
    skill_gets: dict[str, dict[str, Any]] = field(default_factory=dict)
    skill_get_errors: dict[str, str] = field(default_factory=dict)
    skill_reads: dict[str, dict[str, Any]] = field(default_factory=dict)
    skill_read_errors: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Snapshot:
        known = {name: value[name] for name in cls.__dataclass_fields__ if name in value}
        return cls(**known)

    def listed_uris(self) -> set[str]:
        return {str(r.get("uri")) for r in self.resources if isinstance(r, dict)}

    def listed_resource(self, uri: str) -> dict[str, Any] | None:
        return next((r for r in self.resources if isinstance(r, dict) and r.get("uri") == uri), None)

    def unique_tools(self) -> Iterator[dict[str, Any]]:
        """Each tool name once (the first listed), so a duplicate is reported by its own rule only."""
        seen: set[str] = set()
        for tool in self.tools:
            name = str(tool.get("name", "")) if isinstance(tool, dict) else ""
            if name and name not in seen:
                seen.add(name)
                yield tool
