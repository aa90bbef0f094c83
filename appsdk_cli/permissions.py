"""ChatGPT's app permission modes (June 2026), and the one rule saying which tool calls ask the user first.

Both the host (host/: the run's own call and a widget's callTool) and `appsdk check` (checks/: which tools
would prompt under each mode) read it from here, so what the preview holds and what check explains agree.

Sources, and where they are silent:
- The modes: "ChatGPT users can now choose when connected apps ask for permission: always, before making
  changes, or only before important changes" (Plugin UI changelog, June 2026,
  https://developers.openai.com/plugins/changelog). Third-party guides also list "Never ask" (allowing
  actions without a prompt, where available: https://www.designs24hr.com/?p=12135,
  https://grn.dk/chatgpt-apps-need-permissions-map-they-touch-company-data); appsdk offers it as "never".
- What is held: "for tools that need user approval, ChatGPT now delivers widget tool input through the
  MCP Apps ui/notifications/tool-input lifecycle after approval" (same changelog, May 2026).
- Which annotation means what: MCP's ToolAnnotations (https://modelcontextprotocol.io/specification/
  2025-11-25/server/tools, schema.ts): readOnlyHint (default false), destructiveHint (default true,
  meaningful only when readOnlyHint is false), openWorldHint (default true). So a tool that declares
  nothing is a destructive, open-world write, and prompts in every mode but "never".
- OpenAI's review meanings (openai/plugins, plugins/chatgpt-apps/skills/mcp-tool-hint-justifications,
  https://skillsauth.com/skills/openai/mcp-tool-hint-justifications): destructiveHint is a delete, an
  overwrite, an irreversible send; openWorldHint is a change to public or third-party state.

The table (mode × annotations → ask?). No source maps "important" to annotations; appsdk reads an
important change as one that cannot be taken back or reaches beyond the app (destructive or open world),
the two hints OpenAI's review defines in those terms:

    mode        read-only   write, additive, closed world   write, destructive or open world
    always      ask         ask                             ask
    changes     run         ask                             ask
    important   run         run                             ask
    never       run         run                             run

ChatGPT itself may still ask where this table says run: its confirmations were model-driven before the
modes (https://community.openai.com/t/action-confirmation-for-read-only-tool/1381879). The table is the
deterministic part a developer can test against.

ChatGPT's default mode is not documented; appsdk's hosts default to "never", so a preview shows the
widget at once as before, and the developer picks a mode to see the approval flow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# mode -> the label ChatGPT's settings show (appsdk's own "never" last)
MODES: dict[str, str] = {
    "always": "Always ask",
    "changes": "Ask before changes",
    "important": "Ask only before important changes",
    "never": "Never ask",
}
DEFAULT_MODE = "never"


class UnknownMode(ValueError):
    """A permission mode that is not one of MODES."""

    def __init__(self, mode: object) -> None:
        super().__init__(f"unknown permission mode {mode!r}: use {', '.join(MODES)}")


def parse_mode(mode: object) -> str:
    """The mode named, or UnknownMode (its message is the one line a user sees)."""
    if isinstance(mode, str) and mode in MODES:
        return mode
    raise UnknownMode(mode)


@dataclass(frozen=True)
class Hints:
    """A tool's three hints as they count, with MCP's defaults for the ones it leaves out."""

    read_only: bool
    destructive: bool
    open_world: bool
    missing: tuple[str, ...]  # the hints the tool did not declare (their defaults apply)

    @classmethod
    def of(cls, tool: Mapping[str, Any]) -> Hints:
        annotations = tool.get("annotations")
        declared = annotations if isinstance(annotations, Mapping) else {}

        def hint(key: str, default: bool) -> bool:
            value = declared.get(key)
            return value if isinstance(value, bool) else default

        keys = ("readOnlyHint", "destructiveHint", "openWorldHint")
        missing = tuple(k for k in keys if not isinstance(declared.get(k), bool))
        return cls(hint("readOnlyHint", False), hint("destructiveHint", True), hint("openWorldHint", True), missing)

    def said(self, key: str, value: bool) -> str:
        """`key value`, or that MCP's default gave it."""
        text = f"{key} {str(value).lower()}"
        return f"{text} by MCP's default" if key in self.missing else text


@dataclass(frozen=True)
class Decision:
    """Whether a call asks the user first under a mode, and why, in words the host log and check show."""

    mode: str
    ask: bool
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "label": MODES[self.mode], "ask": self.ask, "reason": self.reason}


def decide(mode: str, tool: Mapping[str, Any]) -> Decision:
    """The rule: does a call of `tool` (a tools/list entry) ask the user first under `mode`?"""
    mode = parse_mode(mode)
    hints = Hints.of(tool)
    if mode == "always":
        return Decision(mode, True, "every call asks")
    if mode == "never":
        return Decision(mode, False, "no call asks")
    if hints.read_only:
        return Decision(mode, False, f"read-only ({hints.said('readOnlyHint', True)})")
    if mode == "changes":
        return Decision(mode, True, f"it may change things ({hints.said('readOnlyHint', False)})")
    important = [
        hints.said(key, True)
        for key, value in (("destructiveHint", hints.destructive), ("openWorldHint", hints.open_world))
        if value
    ]
    if important:
        return Decision(mode, True, f"an important change ({', '.join(important)})")
    return Decision(mode, False, "an additive change in a closed world (destructiveHint false, openWorldHint false)")


def decisions(tool: Mapping[str, Any]) -> dict[str, Decision]:
    """The tool's decision under every mode."""
    return {mode: decide(mode, tool) for mode in MODES}


def prompts(tools: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[str, Decision]]]:
    """mode -> (tool name, decision) for each tool that asks under it, for `appsdk check`."""
    asking: dict[str, list[tuple[str, Decision]]] = {mode: [] for mode in MODES}
    for tool in tools:
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            for mode, decision in decisions(tool).items():
                if decision.ask:
                    asking[mode].append((tool["name"], decision))
    return asking
