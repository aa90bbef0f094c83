"""Answers to a server's questions (appsdk_cli/answers.py), driven without the CLI.

The schemas use the elicitation enum shapes of MCP 2025-11-25 (as server-everything's
trigger-elicitation-request sends them): plain and legacy-titled `enum`, `oneOf` of {const, title},
and multi-select arrays with `items.enum` or `items.anyOf`.
"""

from __future__ import annotations

import pytest

from appsdk_cli.answers import Unanswered, choices, elicitor, shown_default

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "instruments": {
            "type": "array",
            "items": {"type": "string", "enum": ["Guitar", "Piano"]},
            "default": ["Guitar"],
        },
        "fish": {
            "type": "array",
            "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]},
            "default": ["fish-1"],
        },
        "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}], "default": "hero-1"},
        "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"], "default": "pet-1"},
        "count": {"type": "integer", "default": 42},
        "agree": {"type": "boolean", "default": False},
    },
    "required": ["name", "count"],
}


def test_enter_sends_each_default_as_its_value_not_as_the_text_shown():
    typed = {"name": "Ada"}
    answer = elicitor({}, ask=lambda message, name, schema, required: typed.get(name, ""))
    result = answer({"message": "Who are you?", "requestedSchema": SCHEMA})
    assert result == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "instruments": ["Guitar"],
            "fish": ["fish-1"],
            "hero": "hero-1",
            "pet": "pet-1",
            "count": 42,  # required, and Enter takes its default
            "agree": False,
        },
    }


def test_the_choices_of_every_enum_shape_are_shown_and_enforced():
    fields = SCHEMA["properties"]
    assert choices(fields["instruments"]) == [("Guitar", None), ("Piano", None)]
    assert choices(fields["fish"]) == [("fish-1", "Tuna"), ("fish-2", "Salmon")]
    assert choices(fields["hero"]) == [("hero-1", "Superman")]
    assert choices(fields["pet"]) == [("pet-1", "Cats"), ("pet-2", "Dogs")]
    assert choices(fields["name"]) is None
    assert shown_default(fields["instruments"]) == '["Guitar"]' and shown_default(fields["agree"]) == "false"
    answer = elicitor({"name": "Ada", "count": "3", "fish": "fish-2, fish-1"}, ask=None)
    assert answer({"message": "?", "requestedSchema": SCHEMA})["content"]["fish"] == ["fish-2", "fish-1"]
    with pytest.raises(Unanswered, match="may hold only fish-1, fish-2, not Cod"):
        elicitor({"name": "Ada", "count": "3", "fish": "Cod"}, ask=None)({"message": "?", "requestedSchema": SCHEMA})
    with pytest.raises(Unanswered, match="must be one of hero-1"):
        elicitor({"name": "Ada", "count": "3", "hero": "Batman"}, ask=None)({"message": "?", "requestedSchema": SCHEMA})
