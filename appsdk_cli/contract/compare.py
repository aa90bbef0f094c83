"""Classify every difference between two contracts by what it does to a published app.

ChatGPT freezes a reviewed app's tools: the old names, schemas and widget URIs stay in use for months,
tool changes reach users only with a new reviewed version, and widget HTML goes live at once (cached by
URI). So each change is one of:

- breaking: the published app fails (a tool it calls is gone, a call it makes is refused, an output it
  relies on changes shape, a widget URI it fetches is gone, the widget's origin moves);
- needs-review: harmless, but the published app keeps the old version until a new one is reviewed;
- goes-live: reaches every user at once, with no review.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from appsdk_cli.appmeta import DEPRECATED_RESOURCE_URI, OUTPUT_TEMPLATE, WIDGET_MIME_TYPES
from appsdk_cli.contract.record import UNREADABLE
from appsdk_cli.contract.schemas import Gap, gaps
from appsdk_cli.schemawalk import Budget


class Impact(StrEnum):
    BREAKING = "breaking"
    NEEDS_REVIEW = "needs-review"
    GOES_LIVE = "goes-live"


IMPACT_ORDER = {Impact.BREAKING: 0, Impact.NEEDS_REVIEW: 1, Impact.GOES_LIVE: 2}
REVIEW = "it reaches the published app only with a new reviewed version: submit one"
CACHE_NOTE = "hosts cache widget HTML by URI, so some users keep the old HTML for a while"


@dataclass(frozen=True)
class Change:
    impact: Impact
    target: str  # "tool list-books", "resource ui://widget/list.html", "server", "protocol"
    change: str  # what changed, one line naming the target
    todo: str  # what to do instead, or next
    certain: bool = True  # False: "cannot tell" (classified needs-review, never breaking)
    kind: str = ""  # what sort of change, e.g. "tool renamed": a long report groups by it

    def as_json(self) -> dict[str, Any]:
        return {
            "impact": self.impact.value,
            "target": self.target,
            "change": self.change,
            "todo": self.todo,
            "certain": self.certain,
            "kind": self.kind,
        }


@dataclass
class ContractDiff:
    changes: list[Change]
    against: str = ""  # the contract file
    server: str = ""  # what was compared with it
    strict: bool = False

    def count(self, impact: Impact) -> int:
        return sum(1 for change in self.changes if change.impact is impact)

    @property
    def failed(self) -> bool:
        return self.count(Impact.BREAKING) > 0 or (self.strict and self.count(Impact.NEEDS_REVIEW) > 0)

    def as_json(self) -> dict[str, Any]:
        return {
            "changes": [change.as_json() for change in self.changes],
            "summary": {
                "breaking": self.count(Impact.BREAKING),
                "needsReview": self.count(Impact.NEEDS_REVIEW),
                "goesLive": self.count(Impact.GOES_LIVE),
                "against": self.against,
                "server": self.server,
                "strict": self.strict,
                "passed": not self.failed,
            },
        }


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _short(value: Any, limit: int = 50) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any) -> str:
    return "(unset)" if value is None else _short(value)


def _templates(meta: dict[str, Any]) -> dict[str, str]:
    """A tool's widget URIs, by the key that names them."""
    found = {}
    ui_uri = _dict(meta.get("ui")).get("resourceUri")
    for key, value in (
        ("_meta.ui.resourceUri", ui_uri),
        (f"_meta[{OUTPUT_TEMPLATE!r}]", meta.get(OUTPUT_TEMPLATE)),
        (f"_meta[{DEPRECATED_RESOURCE_URI!r}]", meta.get(DEPRECATED_RESOURCE_URI)),
    ):
        if isinstance(value, str):
            found[key] = value
    return found


def _without_templates(meta: dict[str, Any]) -> dict[str, Any]:
    rest = {k: v for k, v in meta.items() if k not in (OUTPUT_TEMPLATE, DEPRECATED_RESOURCE_URI)}
    if isinstance(rest.get("ui"), dict):
        ui = {k: v for k, v in rest["ui"].items() if k != "resourceUri"}
        rest = {**rest, "ui": ui} if ui else {k: v for k, v in rest.items() if k != "ui"}
    return rest


def _changed_keys(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return sorted(k for k in old.keys() | new.keys() if not _same(old.get(k), new.get(k)))


def compare(old: dict[str, Any], new: dict[str, Any], *, budget: Budget | None = None) -> list[Change]:
    """Every difference from the recorded contract `old` to `new`, breaking first.

    Every schema comparison spends the one `budget` (schemawalk.py): past it, each schema left is a
    "cannot tell", so a hostile contract or server ends the command instead of hanging it."""
    budget = budget or Budget()
    changes: list[Change] = []
    changes += _compare_tools(_dict(old.get("tools")), _dict(new.get("tools")), budget)
    changes += _compare_resources(_dict(old.get("resources")), _dict(new.get("resources")), "resource")
    changes += _compare_resources(
        _dict(old.get("resourceTemplates")), _dict(new.get("resourceTemplates")), "resource template"
    )
    changes += _compare_server(_dict(old.get("server")), _dict(new.get("server")))
    changes += _compare_protocol(_dict(old.get("protocol")), _dict(new.get("protocol")))
    changes.sort(key=lambda c: IMPACT_ORDER[c.impact])  # stable: each family keeps its own order
    return changes


# --- tools -------------------------------------------------------------------------------------------


class _Successors:
    """Which added tool looks like a removed one renamed: the first added tool, by name, not yet taken,
    with the same input schema (one with at least one argument) or the same description.

    Indexed by both, so matching every removed tool costs one look-up each, not a scan of every added
    tool: renaming thousands of tools took minutes when each removal compared itself with each addition."""

    def __init__(self, added: dict[str, Any]) -> None:
        self._by_schema: dict[str, deque[str]] = {}
        self._by_description: dict[str, deque[str]] = {}
        for name in sorted(added):
            tool = _dict(added[name])
            self._by_schema.setdefault(_canonical(tool.get("inputSchema")), deque()).append(name)
            description = tool.get("description")
            if isinstance(description, str) and description:
                self._by_description.setdefault(description, deque()).append(name)
        self._taken: set[str] = set()

    def _first_free(self, names: deque[str] | None) -> str | None:
        while names and names[0] in self._taken:
            names.popleft()
        return names[0] if names else None

    def take(self, old: dict[str, Any]) -> str | None:
        candidates = []
        if _arguments(old.get("inputSchema")):
            candidates.append(self._first_free(self._by_schema.get(_canonical(old.get("inputSchema")))))
        description = old.get("description")
        if isinstance(description, str) and description:
            candidates.append(self._first_free(self._by_description.get(description)))
        found = min((c for c in candidates if c is not None), default=None)
        if found is not None:
            self._taken.add(found)
        return found


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _compare_tools(old: dict[str, Any], new: dict[str, Any], budget: Budget) -> list[Change]:
    changes: list[Change] = []
    added = {name: new[name] for name in sorted(new.keys() - old.keys())}
    successors = _Successors(added)
    for name in sorted(old.keys() - new.keys()):
        target = f"tool {name}"
        successor = successors.take(_dict(old[name]))
        if successor:
            changes.append(
                Change(
                    Impact.BREAKING,
                    target,
                    f"tool `{name}` is gone, apparently renamed to `{successor}`",
                    f"keep `{name}` (it may call the same code) next to `{successor}`: the published app "
                    f"calls `{name}` for months; drop it only once a version without it is reviewed and live",
                    kind="tool renamed",
                )
            )
        else:
            changes.append(
                Change(
                    Impact.BREAKING,
                    target,
                    f"tool `{name}` was removed",
                    f"keep serving `{name}` until a reviewed version without it is live: the published app "
                    "still calls it",
                    kind="tool removed",
                )
            )
    for name in added:
        changes.append(
            Change(
                Impact.NEEDS_REVIEW,
                f"tool {name}",
                f"tool `{name}` is new",
                f"the published app does not offer it yet; {REVIEW}",
                kind="tool added",
            )
        )
    for name in sorted(old.keys() & new.keys()):
        changes += _compare_tool(name, _dict(old[name]), _dict(new[name]), budget)
    return changes


def _compare_tool(name: str, old: dict[str, Any], new: dict[str, Any], budget: Budget) -> list[Change]:
    target = f"tool {name}"
    changes: list[Change] = []
    changes += _compare_input(name, old.get("inputSchema"), new.get("inputSchema"), budget)
    changes += _compare_output(name, old.get("outputSchema"), new.get("outputSchema"), budget)
    old_meta, new_meta = _dict(old.get("_meta")), _dict(new.get("_meta"))
    old_uris, new_uris = _templates(old_meta), _templates(new_meta)
    for key in sorted(old_uris.keys() | new_uris.keys()):
        before, after = old_uris.get(key), new_uris.get(key)
        if before == after:
            continue
        if before is None:
            changes.append(
                Change(
                    Impact.NEEDS_REVIEW,
                    target,
                    f"tool `{name}` now names a widget in {key}: {after}",
                    f"the published app shows no widget for it yet; {REVIEW}",
                    kind="tool widget added",
                )
            )
        else:
            what = f"changed from {before} to {after}" if after else f"({before}) was removed"
            changes.append(
                Change(
                    Impact.BREAKING,
                    target,
                    f"tool `{name}`'s widget URI in {key} {what}",
                    f"keep {before} and change its HTML in place (that goes live at once); a new URI needs a "
                    f"new reviewed version, and {before} must stay served until it is live "
                    "(else: “failed to fetch template”)",
                    kind="tool widget URI changed",
                )
            )
    for label, before, after in (
        ("title", old.get("title"), new.get("title")),
        ("description", old.get("description"), new.get("description")),
    ):
        if before != after:
            changes.append(
                Change(
                    Impact.NEEDS_REVIEW,
                    target,
                    f"tool `{name}`'s {label} changed" + (f" to “{_short(after)}”" if isinstance(after, str) else ""),
                    f"the model keeps reading the old {label}; {REVIEW}",
                    kind=f"tool {label} changed",
                )
            )
    old_notes, new_notes = _dict(old.get("annotations")), _dict(new.get("annotations"))
    keys = _changed_keys(old_notes, new_notes)
    if keys:
        detail = ", ".join(f"{k} {_shown(old_notes.get(k))} → {_shown(new_notes.get(k))}" for k in keys)
        changes.append(
            Change(
                Impact.NEEDS_REVIEW,
                target,
                f"tool `{name}`'s annotations changed: {detail}",
                REVIEW,
                kind="tool annotations changed",
            )
        )
    keys = _changed_keys(_without_templates(old_meta), _without_templates(new_meta))
    if keys:
        changes.append(
            Change(
                Impact.NEEDS_REVIEW,
                target,
                f"tool `{name}`'s _meta changed: {', '.join(keys)}",
                f"hosts keep the old _meta; {REVIEW}",
                kind="tool _meta changed",
            )
        )
    return changes


def _arguments(schema: Any) -> dict[str, Any]:
    return _dict(_dict(schema).get("properties"))


def _required(schema: Any) -> set[str]:
    value = _dict(schema).get("required")
    return {r for r in value if isinstance(r, str)} if isinstance(value, list) else set()


def _compare_input(name: str, old: Any, new: Any, budget: Budget) -> list[Change]:
    if _same(old, new):
        return []
    target = f"tool {name}"
    changes: list[Change] = []
    removed = sorted(_arguments(old).keys() - _arguments(new).keys())
    for argument in removed:
        changes.append(
            Change(
                Impact.BREAKING,
                target,
                f"tool `{name}`'s argument `{argument}` was removed",
                f"keep accepting `{argument}` (ignore it if it is no longer needed): the published app still sends it",
                kind="tool argument removed",
            )
        )
    newly_required = sorted(_required(new) - _required(old))
    for argument in newly_required:
        changes.append(
            Change(
                Impact.BREAKING,
                target,
                f"tool `{name}` now requires `{argument}`",
                f"make `{argument}` optional with a default: the published app calls `{name}` without it; "
                "or add a new tool that requires it",
                kind="tool argument now required",
            )
        )
    if old is None or new is None:
        changes.append(
            Change(
                Impact.NEEDS_REVIEW,
                target,
                f"tool `{name}`'s input schema was {'added' if old is None else 'removed'}",
                REVIEW,
                certain=False,
                kind="tool input schema added or removed",
            )
        )
        return changes
    skip = {(arg,) for arg in removed} | {(arg,) for arg in newly_required}
    found = [
        g
        for g in gaps(
            new, old, wide_name="the new one", narrow_name="the old schema", root_name="the arguments", budget=budget
        )
        if not (g.path in skip and g.kind in ("property", "required"))
    ]
    return changes + _schema_changes(
        target,
        found,
        kind="tool input schema",
        breaking=f"tool `{name}`'s input narrowed",
        unsure_subject=f"tool `{name}`'s input schema",
        todo="accept what the old schema accepted (widen, never narrow), or add a new tool with the new "
        "arguments and keep the old one",
        unchanged=f"tool `{name}`'s input schema changed (it accepts everything it accepted before)",
        certain_before=bool(changes),
    )


def _compare_output(name: str, old: Any, new: Any, budget: Budget) -> list[Change]:
    if _same(old, new):
        return []
    target = f"tool {name}"
    if old is None:
        return [
            Change(
                Impact.NEEDS_REVIEW,
                target,
                f"tool `{name}` now declares an output schema",
                REVIEW,
                kind="tool output schema added",
            )
        ]
    if new is None:
        return [
            Change(
                Impact.NEEDS_REVIEW,
                target,
                f"tool `{name}` no longer declares an output schema; cannot tell whether its output still "
                "fits the old one",
                f"keep the output schema (the published app and its widget rely on it); {REVIEW}",
                certain=False,
                kind="tool output schema removed",
            )
        ]
    found = gaps(old, new, wide_name="the old one", narrow_name="the new schema", root_name="the output", budget=budget)
    return _schema_changes(
        target,
        found,
        kind="tool output schema",
        breaking=f"tool `{name}`'s output no longer fits what its old output schema promised",
        unsure_subject=f"tool `{name}`'s output schema",
        todo="keep the old fields, types and required keys (add new fields beside them), or add a new tool "
        "for the new shape",
        unchanged=f"tool `{name}`'s output schema changed (its output still fits the old one)",
        certain_before=False,
    )


def _schema_changes(
    target: str,
    found: list[Gap],
    *,
    kind: str,
    breaking: str,
    unsure_subject: str,
    todo: str,
    unchanged: str,
    certain_before: bool,
) -> list[Change]:
    certain = [g for g in found if g.certain]
    unsure = [g for g in found if not g.certain]
    changes = [
        Change(Impact.BREAKING, target, f"{breaking}: {g.message}", todo, kind=f"{kind} narrowed") for g in certain
    ]
    changes += [
        Change(
            Impact.NEEDS_REVIEW,
            target,
            f"{unsure_subject} changed; {g.message}",
            f"check this by hand: if it narrows, {todo}; {REVIEW}",
            certain=False,
            kind=f"{kind} changed, cannot tell how",
        )
        for g in unsure
    ]
    if not changes and not certain_before:
        changes.append(Change(Impact.NEEDS_REVIEW, target, unchanged, REVIEW, kind=f"{kind} changed compatibly"))
    return changes


# --- resources and templates -----------------------------------------------------------------------


def _is_widget(uri: str, entry: dict[str, Any]) -> bool:
    return uri.startswith("ui://") or entry.get("mimeType") in WIDGET_MIME_TYPES


def _compare_resources(old: dict[str, Any], new: dict[str, Any], noun: str) -> list[Change]:
    changes: list[Change] = []
    for uri in sorted(old.keys() - new.keys()):
        entry = _dict(old[uri])
        if _is_widget(uri, entry):
            changes.append(
                Change(
                    Impact.BREAKING,
                    f"{noun} {uri}",
                    f"{noun} {uri} was removed (or its URI changed)",
                    f"keep serving {uri}: the published app's tools fetch it (else: “failed to fetch template”); "
                    "change its HTML in place, and version the URI only with a new review",
                    kind=f"widget {noun} removed",
                )
            )
        else:
            changes.append(
                Change(
                    Impact.NEEDS_REVIEW,
                    f"{noun} {uri}",
                    f"{noun} {uri} was removed",
                    f"keep it if clients read it; {REVIEW}",
                    kind=f"{noun} removed",
                )
            )
    for uri in sorted(new.keys() - old.keys()):
        changes.append(
            Change(
                Impact.GOES_LIVE,
                f"{noun} {uri}",
                f"{noun} {uri} is new",
                "served at once; a tool of the published app uses it only after a new reviewed version",
                kind=f"{noun} added",
            )
        )
    for uri in sorted(old.keys() & new.keys()):
        changes += _compare_resource(uri, _dict(old[uri]), _dict(new[uri]), noun)
    return changes


def _compare_resource(uri: str, old: dict[str, Any], new: dict[str, Any], noun: str) -> list[Change]:
    target = f"{noun} {uri}"
    changes: list[Change] = []
    if old.get("domain") != new.get("domain"):
        before, after = old.get("domain") or "(none)", new.get("domain") or "(none)"
        changes.append(
            Change(
                Impact.BREAKING,
                target,
                f"the widget domain of {uri} changed from {before} to {after}",
                "keep the domain: it is the widget's origin (its storage, its allowed requests) and identifies "
                "the app; a new domain needs a new reviewed version",
                kind="widget domain changed",
            )
        )
    for key in ("mimeType", "contentMimeType"):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        rendered = after in WIDGET_MIME_TYPES or after is None
        changes.append(
            Change(
                Impact.GOES_LIVE if rendered or before not in WIDGET_MIME_TYPES else Impact.BREAKING,
                target,
                f"the MIME type of {uri} changed from {before or '(none)'} to {after or '(none)'}",
                (f"goes live at once; {CACHE_NOTE}")
                if rendered or before not in WIDGET_MIME_TYPES
                else "keep a widget MIME type (text/html;profile=mcp-app): hosts render nothing else",
                kind=f"{noun} MIME type changed",
            )
        )
    if old.get("html") != new.get("html") and new.get("html") == UNREADABLE:
        changes.append(
            Change(
                Impact.BREAKING,
                target,
                f"the widget {uri} can no longer be read (resources/read fails)",
                "fix it before it ships: the published app renders nothing; `appsdk check` says why",
                kind="widget unreadable",
            )
        )
    elif old.get("html") != new.get("html"):
        changes.append(
            Change(
                Impact.GOES_LIVE,
                target,
                f"the widget HTML of {uri} changed",
                f"goes live at once for every user, with no review; {CACHE_NOTE}. It must still work with "
                "the reviewed tools' inputs and outputs",
                kind="widget HTML changed",
            )
        )
    if not _same(old.get("csp"), new.get("csp")):
        changes.append(
            Change(
                Impact.GOES_LIVE,
                target,
                f"the CSP of {uri} changed",
                "goes live with the HTML; an origin added here is checked again at the next review",
                kind="widget CSP changed",
            )
        )
    keys = [k for k in ("name", "title", "description") if old.get(k) != new.get(k)]
    keys += [f"_meta {k}" for k in _changed_keys(_dict(old.get("_meta")), _dict(new.get("_meta")))]
    if keys:
        changes.append(
            Change(
                Impact.GOES_LIVE,
                target,
                f"{noun} {uri} changed: {', '.join(keys)}",
                f"goes live at once; {CACHE_NOTE}",
                kind=f"{noun} changed",
            )
        )
    return changes


# --- server and protocol ----------------------------------------------------------------------------


def _compare_server(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes: list[Change] = []
    if old.get("name") != new.get("name"):
        changes.append(
            Change(
                Impact.NEEDS_REVIEW,
                "server",
                f"the server name changed from {old.get('name')!r} to {new.get('name')!r}",
                REVIEW,
                kind="server name changed",
            )
        )
    if old.get("instructions") != new.get("instructions"):
        changes.append(
            Change(
                Impact.NEEDS_REVIEW,
                "server",
                "the server's instructions changed",
                f"ChatGPT reads them; treat them like a tool description: {REVIEW}",
                kind="server instructions changed",
            )
        )
    if old.get("version") != new.get("version"):
        changes.append(
            Change(
                Impact.GOES_LIVE,
                "server",
                f"the server version changed from {old.get('version')!r} to {new.get('version')!r}",
                "nothing to do; record the new contract with `appsdk snapshot` once this version is submitted",
                kind="server version changed",
            )
        )
    return changes


def _compare_protocol(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes: list[Change] = []
    for era in sorted(old.keys() - new.keys()):
        changes.append(
            Change(
                Impact.BREAKING,
                "protocol",
                f"the server no longer speaks the {era} MCP protocol ({', '.join(old[era])})",
                "keep it: hosts that connected with it (ChatGPT among them) cannot connect otherwise",
                kind="protocol era dropped",
            )
        )
    for era in sorted(new.keys() - old.keys()):
        changes.append(
            Change(
                Impact.GOES_LIVE,
                "protocol",
                f"the server now speaks the {era} MCP protocol",
                "nothing to do",
                kind="protocol era added",
            )
        )
    for era in sorted(old.keys() & new.keys()):
        if not _same(old[era], new[era]):
            changes.append(
                Change(
                    Impact.GOES_LIVE,
                    "protocol",
                    f"the {era} protocol version changed from {', '.join(old[era])} to {', '.join(new[era])}",
                    "nothing to do; hosts negotiate the version on each connection",
                    kind="protocol version changed",
                )
            )
    return changes
