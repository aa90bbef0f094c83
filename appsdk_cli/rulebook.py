"""Every rule with a stable id, APPS and PLUG, by family: what `appsdk check --explain` prints and
docs/rules.md lists.

Only the rule tables are read (checks/ and plugin/rules.py export them); nothing here runs a rule or
contacts a server, so explaining a rule works offline.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.checks.model import Rule

# The family is the first digit after the prefix; these titles name it in the docs and in --explain.
FAMILIES: dict[str, str] = {
    "APPS0": "skills over MCP (`appsdk check`)",
    "APPS1": "widget links (`appsdk check`)",
    "APPS2": "widget resources (`appsdk check`)",
    "APPS3": "tool metadata (`appsdk check`)",
    "APPS4": "tool outputs (`appsdk check`)",
    "APPS5": "CSP and widget domain (`appsdk check`)",
    "APPS6": "schemas and names (`appsdk check`)",
    "APPS7": "sign-in (`appsdk check`)",
    "APPS8": "protocol eras (`appsdk check`)",
    "APPS9": "directory submission (`appsdk check --submission`)",
    "PLUG1": "the manifest as Codex finds and reads it (`appsdk plugin check`)",
    "PLUG2": "the directory listing, `interface` (`appsdk plugin check`)",
    "PLUG3": "assets (`appsdk plugin check`)",
    "PLUG4": "marketplace files (`appsdk plugin check`)",
    "PLUG5": "the package archive (`appsdk plugin check`)",
}


@dataclass(frozen=True)
class Entry:
    """One rule as the docs show it: the rule itself and the family it belongs to."""

    rule: Rule
    family: str

    def as_json(self) -> dict[str, str]:
        return {
            "rule": self.rule.id,
            "name": self.rule.name,
            "severity": self.rule.severity.value,
            "family": self.family,
            "what": self.rule.what,
            "why": self.rule.why,
        }


def family_of(rule_id: str) -> str:
    return FAMILIES.get(rule_id[:5], rule_id[:5])


def entries() -> tuple[Entry, ...]:
    """APPS rules (the base families, then --submission's), then PLUG rules, each in its table's order."""
    from appsdk_cli.checks import RULES as APPS_RULES
    from appsdk_cli.checks.submission import RULES as SUBMISSION_RULES
    from appsdk_cli.plugin.rules import RULES as PLUG_RULES

    return tuple(Entry(rule, family_of(rule.id)) for rule in (*APPS_RULES, *SUBMISSION_RULES, *PLUG_RULES))


def find(word: str) -> Entry | None:
    """The rule named by its id or its name, in any case (`apps101`, `template-missing`)."""
    wanted = word.strip().lower()
    return next((e for e in entries() if wanted in (e.rule.id.lower(), e.rule.name)), None)


def nearest(word: str, limit: int = 3) -> list[str]:
    """The ids closest to what was typed, by the spelling of the id or the name; a typo inside a family
    (`APPS1O1`) stays in that family."""
    wanted = word.strip().upper()

    def score(entry: Entry) -> float:
        by_id = difflib.SequenceMatcher(None, wanted, entry.rule.id).ratio()
        by_name = difflib.SequenceMatcher(None, wanted, entry.rule.name.upper()).ratio()
        return max(by_id + (0.2 if entry.rule.id[:5] == wanted[:5] else 0.0), by_name)

    ranked = sorted(((score(e), e.rule.id) for e in entries()), key=lambda pair: -pair[0])
    return [rule_id for value, rule_id in ranked[:limit] if value >= 0.6]
