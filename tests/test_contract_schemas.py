"""JSON Schema compatibility: the constructs mcp emits, "cannot tell" for the rest, and a property test
that checks every "compatible" answer against jsonschema itself on random values."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from appsdk_cli.contract.compare import Impact, compare
from appsdk_cli.contract.schemas import gaps

OPTIONAL_STR = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
BOOK_DEFS = {"Book": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}


def obj(required: tuple[str, ...] = (), **props: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    return schema


# (wide, narrow, expected): "ok" wide accepts all narrow does; "no" a certain gap; "unsure" cannot tell.
CASES = [
    ("integer inside number", {"type": "number"}, {"type": "integer"}, "ok"),
    ("number is not integer", {"type": "integer"}, {"type": "number"}, "no"),
    ("type list", {"type": ["string", "null"]}, {"type": "string"}, "ok"),
    ("optional dropped null", {"type": "string"}, OPTIONAL_STR, "no"),
    ("optional gained null", OPTIONAL_STR, {"type": "string"}, "ok"),
    (
        "anyOf covers type list",
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        {"type": ["integer", "string"]},
        "ok",
    ),
    ("enum widened", {"enum": ["a", "b", "c"]}, {"enum": ["a", "b"]}, "ok"),
    ("enum narrowed", {"enum": ["a"]}, {"enum": ["a", "b"]}, "no"),
    ("enum added to a string", {"type": "string", "enum": ["a"]}, {"type": "string"}, "no"),
    ("const in a type", {"type": "string"}, {"const": "x"}, "ok"),
    ("bool has two values", {"const": True}, {"type": "boolean"}, "no"),
    ("required added", obj(("a",), a={"type": "string"}), obj(a={"type": "string"}), "no"),
    ("required dropped", obj(a={"type": "string"}), obj(("a",), a={"type": "string"}), "ok"),
    ("property added", obj(a={"type": "string"}, b={"type": "integer"}), obj(a={"type": "string"}), "ok"),
    ("property type narrowed", obj(a={"type": "integer"}), obj(a={"type": "number"}), "no"),
    # Property names that are also annotation keywords are still properties.
    ("a property named title", obj(title={"type": "integer"}), obj(title={"type": "string"}), "no"),
    ("a property named default", obj(default={"enum": [1]}), obj(default={"enum": [1, 2]}), "no"),
    (
        "closed object refuses a declared property",
        {**obj(a={"type": "string"}), "additionalProperties": False},
        obj(a={"type": "string"}, b={"type": "integer"}),
        "no",
    ),
    ("items narrowed", {"type": "array", "items": {"type": "string"}}, {"type": "array", "items": {}}, "no"),
    ("items widened", {"type": "array", "items": {}}, {"type": "array", "items": {"type": "string"}}, "ok"),
    ("maximum lowered", {"type": "integer", "maximum": 10}, {"type": "integer", "maximum": 100}, "no"),
    ("minimum lowered", {"type": "integer", "minimum": 0}, {"type": "integer", "minimum": 1}, "ok"),
    ("exclusive bound at the edge", {"type": "number", "exclusiveMinimum": 0}, {"type": "number", "minimum": 0}, "no"),
    ("maxLength added", {"type": "string", "maxLength": 5}, {"type": "string"}, "no"),
    ("pattern added", {"type": "string", "pattern": "^a"}, {"type": "string"}, "no"),
    ("pattern changed", {"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "^ab"}, "unsure"),
    ("format added", {"type": "string", "format": "date"}, {"type": "string"}, "unsure"),
    ("allOf on the wide side", {"allOf": [{"type": "string"}, {"minLength": 1}]}, {"type": "string"}, "unsure"),
    ("not on the wide side", {"not": {"type": "null"}}, {"type": "string"}, "unsure"),
    (
        "unchanged allOf",
        {"allOf": [{"type": "string"}, {"minLength": 1}]},
        {"allOf": [{"type": "string"}, {"minLength": 1}]},
        "ok",
    ),
    (
        "$ref into $defs, changed",
        {**obj(b={"$ref": "#/$defs/Book"}), "$defs": {"Book": obj(("title",), title={"type": "integer"})}},
        {**obj(b={"$ref": "#/$defs/Book"}), "$defs": BOOK_DEFS},
        "no",
    ),
    (
        "$ref into $defs vs inline",
        obj(b=obj(("title",), title={"type": "string"})),
        {**obj(b={"$ref": "#/$defs/Book", "description": "a book"}), "$defs": BOOK_DEFS},
        "ok",
    ),
    (
        "recursive $ref",
        {"$defs": {"N": obj(kids={"type": "array", "items": {"$ref": "#/$defs/N"}})}, "$ref": "#/$defs/N"},
        {"$defs": {"N": obj(kids={"type": "array", "items": {"$ref": "#/$defs/N"}})}, "$ref": "#/$defs/N"},
        "ok",
    ),
    ("remote $ref", {"$ref": "https://example.com/s.json"}, {"type": "string"}, "unsure"),
    (
        "oneOf with a discriminator",
        {"oneOf": [obj(("k",), k={"const": "a"}), obj(("k",), k={"const": "b"}), obj(("k",), k={"const": "c"})]},
        {"oneOf": [obj(("k",), k={"const": "a"}), obj(("k",), k={"const": "b"})]},
        "ok",
    ),
    ("overlapping oneOf", {"oneOf": [{"type": "number"}, {"type": "integer"}]}, {"type": "integer"}, "unsure"),
]


@pytest.mark.parametrize(("wide", "narrow", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gaps(wide: Any, narrow: Any, expected: str):
    found = gaps(wide, narrow)
    verdict = "ok" if not found else ("no" if any(g.certain for g in found) else "unsure")
    assert verdict == expected, found
    for gap in found:
        assert gap.message and "\n" not in gap.message


def test_gap_messages_name_the_argument_and_both_sides():
    (gap,) = gaps(obj(a=OPTIONAL_STR | {"anyOf": [{"type": "integer"}, {"type": "null"}]}), obj(a=OPTIONAL_STR))
    assert gap.path == ("a",)
    assert gap.message == "`a`: the old schema allows type string; the new schema does not"


def tool_contract(**tools: dict[str, Any]) -> dict[str, Any]:
    return {"appsdkContract": 1, "server": {"name": "s"}, "protocol": {"legacy": ["2025-11-25"]}, "tools": tools}


def test_cannot_tell_is_never_breaking():
    old = tool_contract(t={"inputSchema": obj(d={"type": "string"})})
    new = tool_contract(t={"inputSchema": obj(d={"type": "string", "format": "date"})})
    (change,) = compare(old, new)
    assert change.impact is Impact.NEEDS_REVIEW and change.certain is False
    assert "cannot tell" in change.change and "check this by hand" in change.todo


def test_output_dropping_a_promised_field_is_breaking():
    promised = obj(("books", "total"), books={"type": "array"}, total={"type": "integer"})
    old = tool_contract(t={"inputSchema": obj(), "outputSchema": promised})
    new = tool_contract(t={"inputSchema": obj(), "outputSchema": obj(("books",), books={"type": "array"})})
    (change,) = compare(old, new)
    assert change.impact is Impact.BREAKING
    assert "`total`: the new schema allows leaving it out; the old one requires it" in change.change


def test_a_dropped_protocol_era_is_breaking():
    old = tool_contract()
    new = {**old, "protocol": {"modern": ["2026-07-28"]}}
    impacts = sorted((c.impact.value, c.change) for c in compare(old, new))
    assert impacts == [
        ("breaking", "the server no longer speaks the legacy MCP protocol (2025-11-25)"),
        ("goes-live", "the server now speaks the modern MCP protocol"),
    ]


# --- soundness against jsonschema --------------------------------------------------------------------

KEYS = ("a", "b")
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, -1.5]), st.sampled_from(["", "x", "ab"])
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=2)),
    max_leaves=6,
)
leaf_schemas = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(["null", "boolean", "integer", "number", "string"])),
    st.builds(
        lambda t: {"type": t},
        st.lists(st.sampled_from(["null", "integer", "string"]), min_size=1, max_size=2, unique=True),
    ),
    st.builds(lambda v: {"enum": v}, st.lists(scalars, min_size=1, max_size=3)),
    st.builds(lambda n: {"type": "integer", "minimum": n}, st.integers(-2, 2)),
    st.builds(lambda n: {"type": "number", "exclusiveMaximum": n}, st.integers(-2, 2)),
    st.builds(lambda n: {"type": "string", "maxLength": n}, st.integers(0, 2)),
    st.just({}),
)


def _object(props: dict[str, Any], required: list[str], closed: bool | None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    present = [k for k in required if k in props]
    if present:
        schema["required"] = present
    if closed is not None:
        schema["additionalProperties"] = not closed
    return schema


schemas = st.recursive(
    leaf_schemas,
    lambda inner: st.one_of(
        st.builds(
            _object,
            st.dictionaries(st.sampled_from(KEYS), inner, max_size=2),
            st.lists(st.sampled_from(KEYS), max_size=2, unique=True),
            st.sampled_from([None, True]),
        ),
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(lambda bs: {"anyOf": bs}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=5,
)


def closed(schema: Any) -> Any:
    """Every object closed, so "undeclared properties are never sent" is exactly what jsonschema checks."""
    schema = copy.deepcopy(schema)
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "object" and "additionalProperties" not in node:
                node["additionalProperties"] = False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return schema


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide=schemas, narrow=schemas, samples=st.lists(values, min_size=1, max_size=25))
def test_every_compatible_answer_holds_for_jsonschema(wide: Any, narrow: Any, samples: list[Any]):
    narrow = closed(narrow)
    if gaps(wide, narrow):
        return
    wide_check, narrow_check = Draft202012Validator(wide), Draft202012Validator(narrow)
    for value in samples:
        if narrow_check.is_valid(value):
            assert wide_check.is_valid(value), f"{value!r} fits {narrow} but not {wide}, yet no gap was found"


def test_a_widget_that_stops_reading_is_breaking_and_new_html_goes_live():
    def widget(html: str) -> dict[str, Any]:
        return {
            **tool_contract(),
            "resources": {"ui://w.html": {"mimeType": "text/html;profile=mcp-app", "html": html}},
        }

    (live,) = compare(widget("sha256:aa"), widget("sha256:bb"))
    assert live.impact is Impact.GOES_LIVE and "cache widget HTML by URI" in live.todo
    (broken,) = compare(widget("sha256:aa"), widget("unreadable"))
    assert broken.impact is Impact.BREAKING and "can no longer be read" in broken.change


def test_two_tools_without_arguments_are_not_a_rename():
    old = tool_contract(**{"get-env": {"description": "Env.", "inputSchema": obj()}})
    new = tool_contract(**{"get-image": {"description": "An image.", "inputSchema": obj()}})
    assert [c.change for c in compare(old, new)] == ["tool `get-env` was removed", "tool `get-image` is new"]
