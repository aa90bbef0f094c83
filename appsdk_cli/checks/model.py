"""The linter's data: the rules (Rule), what they find (Finding) and the report over one Snapshot.

What a server sends (Snapshot) is snapshot/'s: the rules read it and never know which collector made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from appsdk_cli.permissions import MODES, prompts
from appsdk_cli.snapshot.model import Snapshot

if TYPE_CHECKING:
    from appsdk_cli.project import AppTarget


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
class CheckReport:
    snapshot: Snapshot
    findings: list[Finding]
    strict: bool = False
    # What was checked when it is not a server (`appsdk plugin check`: the plugin folder).
    subject: str | None = None
    # The app's code, when the check knows it (PATH mode, or this project's dev): a fix can name its line.
    app: AppTarget | None = None

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.WARNING)

    @property
    def failed(self) -> bool:
        return self.errors > 0 or (self.strict and self.warnings > 0)

    def permission_prompts(self) -> dict[str, list[tuple[str, str]]]:
        """Which tools ChatGPT asks the user about before calling, under each permission mode (not a
        finding: an explanation): mode -> (tool, why)."""
        return {mode: [(name, d.reason) for name, d in asking] for mode, asking in prompts(self.snapshot.tools).items()}

    def permissions_json(self) -> dict[str, Any]:
        return {
            mode: {"label": MODES[mode], "prompts": [{"tool": name, "reason": why} for name, why in asking]}
            for mode, asking in self.permission_prompts().items()
        }

    @property
    def called(self) -> list[str]:
        """The tools the check called (answered or not), by name."""
        return sorted([*self.snapshot.calls, *self.snapshot.call_errors])

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
                "skills": len(self.snapshot.skills),
                "called": self.called,
                "callSeconds": {
                    name: round(self.snapshot.call_seconds[name], 3)
                    for name in self.called
                    if name in self.snapshot.call_seconds
                },
                "era": self.snapshot.era,
                "eras": self.snapshot.eras.get("spoken", []),
                "strict": self.strict,
                "passed": not self.failed,
            },
            # mode -> the tools that ask the user first under it (ChatGPT's permission modes)
            "permissions": self.permissions_json(),
        }
