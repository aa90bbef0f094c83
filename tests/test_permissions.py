"""The permission rule (appsdk_cli/permissions.py): every mode against every combination of the three hints,
declared or left to MCP's defaults."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from conftest import appsdk

from appsdk_cli.permissions import DEFAULT_MODE, MODES, Hints, UnknownMode, decide, parse_mode, prompts

HINT_VALUES = (True, False, None)  # None: the hint is not declared


def tool(read_only: bool | None, destructive: bool | None, open_world: bool | None) -> dict:
    annotations = {
        key: value
        for key, value in (("readOnlyHint", read_only), ("destructiveHint", destructive), ("openWorldHint", open_world))
        if value is not None
    }
    return {"name": "t", "inputSchema": {"type": "object"}, "annotations": annotations}


def expected(mode: str, read_only: bool | None, destructive: bool | None, open_world: bool | None) -> bool:
    """The table in the module's docstring, written out again with MCP's defaults applied by hand."""
    read_only = bool(read_only)  # default false
    destructive = True if destructive is None else destructive  # default true
    open_world = True if open_world is None else open_world  # default true
    return {
        "always": True,
        "changes": not read_only,
        "important": not read_only and (destructive or open_world),
        "never": False,
    }[mode]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("hints", list(itertools.product(HINT_VALUES, repeat=3)))
def test_every_mode_against_every_combination_of_hints(mode, hints) -> None:
    decision = decide(mode, tool(*hints))
    assert decision.ask is expected(mode, *hints), decision
    assert decision.mode == mode and decision.reason


def test_a_tool_without_annotations_is_a_destructive_open_world_write() -> None:
    bare = {"name": "t", "inputSchema": {"type": "object"}}
    hints = Hints.of(bare)
    assert (hints.read_only, hints.destructive, hints.open_world) == (False, True, True)
    assert hints.missing == ("readOnlyHint", "destructiveHint", "openWorldHint")
    assert [m for m in MODES if decide(m, bare).ask] == ["always", "changes", "important"]
    assert "by MCP's default" in decide("important", bare).reason


def test_non_boolean_hints_count_as_missing() -> None:
    odd = {"name": "t", "annotations": {"readOnlyHint": "yes", "destructiveHint": 0}}
    assert Hints.of(odd).missing == ("readOnlyHint", "destructiveHint", "openWorldHint")
    assert decide("changes", odd).ask


def test_reasons_name_the_hint_that_decided() -> None:
    assert decide("changes", tool(True, None, None)).reason == "read-only (readOnlyHint true)"
    assert decide("changes", tool(False, False, False)).reason == "it may change things (readOnlyHint false)"
    assert decide("important", tool(False, True, False)).reason == "an important change (destructiveHint true)"
    additive = decide("important", tool(False, False, False))
    assert not additive.ask and "closed world" in additive.reason


def test_modes_parse_and_a_bad_one_says_the_choices_in_one_line() -> None:
    assert DEFAULT_MODE in MODES
    assert parse_mode("changes") == "changes"
    with pytest.raises(UnknownMode) as raised:
        parse_mode("sometimes")
    assert str(raised.value) == "unknown permission mode 'sometimes': use always, changes, important, never"


def test_prompts_lists_per_mode_the_tools_that_ask() -> None:
    tools = [
        {**tool(True, None, None), "name": "search"},
        {**tool(False, False, False), "name": "add_note"},
        {**tool(False, True, False), "name": "delete_note"},
        {"name": "bare"},
    ]
    asking = {mode: [name for name, _ in entries] for mode, entries in prompts(tools).items()}
    assert asking == {
        "always": ["search", "add_note", "delete_note", "bare"],
        "changes": ["add_note", "delete_note", "bare"],
        "important": ["delete_note", "bare"],
        "never": [],
    }


# --- appsdk check explains the modes -------------------------------------------------------------------

FIXTURE = Path(__file__).parent / "fixtures" / "permissions_app"


def test_check_says_which_tools_ask_under_each_mode() -> None:
    result = appsdk("check", str(FIXTURE), "--json", env={"APPSDK_URL": ""})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    asking = {mode: [p["tool"] for p in entry["prompts"]] for mode, entry in report["permissions"].items()}
    assert asking == {
        "always": ["list-notes", "delete-note", "add-note", "post-note", "bare", "count"],
        "changes": ["delete-note", "add-note", "post-note", "bare"],
        "important": ["delete-note", "post-note", "bare"],
        "never": [],
    }
    assert report["permissions"]["changes"]["label"] == "Ask before changes"
    bare = next(p for p in report["permissions"]["important"]["prompts"] if p["tool"] == "bare")
    defaults = "destructiveHint true by MCP's default, openWorldHint true by MCP's default"
    assert bare["reason"] == f"an important change ({defaults})"
    # An explanation, not a finding: only the missing hints are (APPS302, as before).
    assert not [f for f in report["findings"] if "permission" in f["message"].lower()]


def test_check_prints_the_modes_as_lines() -> None:
    result = appsdk("check", str(FIXTURE), env={"APPSDK_URL": "", "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "ChatGPT asks the user before calling, by permission mode:" in lines
    assert "Always ask every tool" in lines
    assert "Ask before changes delete-note, add-note, post-note, bare" in lines
    assert "Ask only before important changes delete-note, post-note, bare" in lines
    assert any(line.startswith("bare: a hint left out counts as MCP's default") for line in lines)
