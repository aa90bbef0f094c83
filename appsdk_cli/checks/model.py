"""The linter's data: what a server sends (Snapshot), the rules (Rule) and what they find (Finding).

Everything here is wire-shaped and plain, so the live and PATH collectors produce the same Snapshot and
the rules never know which mode they run in.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    # error: something breaks in a host today (a widget does not render, a call fails, output is wrong).
    # warning: it works, but a standard host, directory review or a future client will trip over it.
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Rule:
    id: str  # stable: APPS + family digit + number; never reused once published
    name: str  # stable, readable alias of the id
    severity: Severity
    what: str  # one line for the docs table
    why: str


@dataclass(frozen=True)
class Finding:
    rule: Rule
    target: str  # "tool list-books", "resource ui://widget/x.html"
    message: str  # one line, names the target
    hint: str  # how to fix it

    @property
    def severity(self) -> Severity:
        return self.rule.severity

    def as_json(self) -> dict[str, str]:
        return {
            "rule": self.rule.id,
            "name": self.rule.name,
            "severity": self.severity.value,
            "target": self.target,
            "message": self.message,
            "hint": self.hint,
        }


def tool_target(name: str) -> str:
    return f"tool {name}"


def resource_target(uri: str) -> str:
    return f"resource {uri}"


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
    # Calls refused only for want of a sign-in or of scope (HTTP 401/403): tool name -> the scope asked for.
    sign_in_calls: dict[str, str] = field(default_factory=dict)
    # Live mode only: how the server answers a client that is not signed in (see checks/auth.py).
    auth: dict[str, Any] = field(default_factory=dict)
    # The server's `instructions` from initialize (None when it sends none), for the submission rules.
    instructions: str | None = None

    # Live mode only (see checks/eras.py): the era the check ran in, what each era answered, the tools a
    # 2026-07-28 client must leave out (name -> why), and the modern methods answered without resultType.
    era: str = ""
    eras: dict[str, Any] = field(default_factory=dict)
    dropped_tools: dict[str, str] = field(default_factory=dict)
    without_result_type: list[str] = field(default_factory=list)

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


@dataclass
class CheckReport:
    snapshot: Snapshot
    findings: list[Finding]
    strict: bool = False
    # What was checked when it is not a server (`appsdk plugin check`: the plugin folder).
    subject: str | None = None

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.WARNING)

    @property
    def failed(self) -> bool:
        return self.errors > 0 or (self.strict and self.warnings > 0)

    def as_json(self) -> dict[str, Any]:
        if self.subject is not None:
            summary = {"errors": self.errors, "warnings": self.warnings, "mode": self.snapshot.mode}
            summary |= {"subject": self.subject, "strict": self.strict, "passed": not self.failed}
            return {"findings": [f.as_json() for f in self.findings], "summary": summary}
        return {
            "findings": [f.as_json() for f in self.findings],
            "summary": {
                "errors": self.errors,
                "warnings": self.warnings,
                "mode": self.snapshot.mode,
                "server": self.snapshot.server,
                "serverName": self.snapshot.server_name,
                "tools": len(self.snapshot.tools),
                "resources": len(self.snapshot.resources),
                "called": sorted([*self.snapshot.calls, *self.snapshot.call_errors]),
                "era": self.snapshot.era,
                "eras": self.snapshot.eras.get("spoken", []),
                "strict": self.strict,
                "passed": not self.failed,
            },
        }
