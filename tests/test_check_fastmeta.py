"""checks/fastmeta.py says "certainly valid" only where jsonschema's own metaschema check agrees, and
says it for the schemas tools really send (so `appsdk check` skips the slow walk for them)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.exceptions import SchemaError
from jsonschema.validators import Draft202012Validator

from appsdk_cli.checks.fastmeta import certainly_valid
from appsdk_cli.checks.schemas import schema_problem

CONFORMS = Draft202012Validator.FORMAT_CHECKER.conforms

# Mostly valid schemas, each keyword's value drawn from values that obey its rule and, one time in four,
# from values on the wrong side of some rule (wrong types, negative and float integers, bools where numbers
# go, empty and duplicate arrays, broken regexes): the quick walk must reject every such schema it cannot
# vouch for, and a rule it forgets shows up as a schema it vouches for and jsonschema refuses.
_odd_values = st.sampled_from(
    [0, 1, -1, 2.5, 1.0, True, False, None, "", "x", "string", "strin", "[", "^a+$", [], ["a"], ["a", "a"],
     ["string", "null"], ["strin"], ["string", "string"], {}, {"a": 1}, {"a": ["b"]}, {"a": ["b", "b"]}]
)  # fmt: skip
_types = st.sampled_from(["array", "boolean", "integer", "null", "number", "object", "string"])
_VALID = {
    "type": st.one_of(_types, st.lists(_types, min_size=1, max_size=3, unique=True)),
    "const": st.integers(),
    "enum": st.lists(st.text(max_size=2), max_size=3),
    "multipleOf": st.sampled_from([1, 2, 0.5]),
    "maximum": st.integers(),
    "minimum": st.floats(allow_nan=False),
    "exclusiveMinimum": st.integers(),
    "maxLength": st.integers(0, 9),
    "minLength": st.integers(0, 9),
    "minItems": st.integers(0, 9),
    "uniqueItems": st.booleans(),
    "minContains": st.integers(0, 9),
    "required": st.lists(st.text("abc", max_size=2), max_size=3, unique=True),
    "dependentRequired": st.dictionaries(st.text("ab", max_size=1), st.lists(st.text("ab", max_size=2), unique=True)),
    "title": st.text(max_size=3),
    "description": st.text(max_size=3),
    "default": st.integers(),
    "deprecated": st.booleans(),
    "examples": st.lists(st.integers(), max_size=2),
    "format": st.sampled_from(["date", "uri", "made-up"]),
    "pattern": st.sampled_from(["^a+$", "b*", ""]),
    "$ref": st.sampled_from(["#/$defs/x", "#", "other.json"]),
    "$comment": st.text(max_size=3),
}
_VALUE_KEYWORDS = sorted(_VALID)
_SCHEMA_KEYWORDS = ["items", "contains", "additionalProperties", "not", "if", "propertyNames"]
_ARRAY_KEYWORDS = ["prefixItems", "allOf", "anyOf", "oneOf"]
_MAP_KEYWORDS = ["properties", "$defs", "dependentSchemas"]


def _value_entry(keyword: str) -> st.SearchStrategy[Any]:
    return st.one_of(_VALID[keyword], _VALID[keyword], _VALID[keyword], _odd_values)


def _entries(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    value_entries = st.sampled_from(_VALUE_KEYWORDS).flatmap(lambda k: st.tuples(st.just(k), _value_entry(k)))
    schema_entries = st.tuples(st.sampled_from(_SCHEMA_KEYWORDS), st.one_of(inner, inner, inner, _odd_values))
    array_entries = st.tuples(
        st.sampled_from(_ARRAY_KEYWORDS), st.one_of(st.lists(inner, min_size=1, max_size=3), st.just([]), _odd_values)
    )
    map_entries = st.tuples(
        st.sampled_from(_MAP_KEYWORDS), st.dictionaries(st.text("abc", max_size=2), inner, max_size=3)
    )
    pattern_entries = st.tuples(
        st.just("patternProperties"), st.dictionaries(st.sampled_from(["^a", "[", "b*"]), inner, max_size=2)
    )
    unknown = st.tuples(st.sampled_from(["x-custom", "$id", "items"]), st.one_of(_odd_values, st.lists(inner)))
    entry = st.one_of(
        value_entries, value_entries, schema_entries, array_entries, map_entries, pattern_entries, unknown
    )
    return st.lists(entry, max_size=5).map(dict)


def _schemas() -> st.SearchStrategy[Any]:
    return st.recursive(st.one_of(st.booleans(), _entries(st.booleans())), _entries, max_leaves=10)


def _jsonschema_says_valid(schema: Any) -> bool:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return False
    return True


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(schema=_schemas())
def test_certainly_valid_only_where_jsonschema_agrees(schema: Any) -> None:
    if certainly_valid(schema, CONFORMS):
        assert _jsonschema_says_valid(schema), schema


# One defect per case, each breaking one rule of the metaschema, dropped into an otherwise valid schema
# at the top or inside a property: the quick walk must never vouch for the result.
DEFECTS = [
    ("minLength", -1), ("maxItems", 1.5), ("minProperties", True), ("minContains", "1"),
    ("type", "strin"), ("type", []), ("type", ["string", "string"]), ("type", ["strin"]),
    ("multipleOf", 0), ("multipleOf", -2), ("multipleOf", True), ("minimum", True), ("maximum", "1"),
    ("required", ["a", "a"]), ("required", [1]), ("required", "a"), ("dependentRequired", {"a": ["b", "b"]}),
    ("pattern", "["), ("pattern", 1), ("enum", {}), ("uniqueItems", 1), ("deprecated", "yes"),
    ("title", 1), ("description", None), ("examples", {}), ("format", 1), ("$comment", 2), ("$ref", 1),
    ("anyOf", []), ("allOf", {}), ("oneOf", [1]), ("prefixItems", []), ("items", 1), ("not", "x"),
    ("properties", []), ("properties", {"a": 1}), ("$defs", {"a": "x"}), ("patternProperties", {"[": {}}),
    ("additionalProperties", []),
]  # fmt: skip


def _valid_entries(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    value_entries = st.sampled_from(_VALUE_KEYWORDS).flatmap(lambda k: st.tuples(st.just(k), _VALID[k]))
    schema_entries = st.tuples(st.sampled_from(_SCHEMA_KEYWORDS), inner)
    map_entries = st.tuples(st.just("properties"), st.dictionaries(st.text("abc", max_size=2), inner, max_size=3))
    return st.lists(st.one_of(value_entries, schema_entries, map_entries), max_size=5).map(dict)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    base=st.recursive(_valid_entries(st.booleans()), _valid_entries, max_leaves=6),
    defect=st.sampled_from(DEFECTS),
    nested=st.booleans(),
)
def test_one_broken_rule_is_never_vouched_for(base: dict[str, Any], defect: tuple[str, Any], nested: bool) -> None:
    keyword, value = defect
    schema = {**base, "properties": {"p": {keyword: value}}} if nested else {**base, keyword: value}
    assert not _jsonschema_says_valid(schema), f"not a defect after all: {defect}"
    assert not certainly_valid(schema, CONFORMS), schema


def test_the_generator_makes_both_kinds_of_schema() -> None:
    """The property above means something only if many generated schemas are vouched for and many are not."""
    seen = {True: 0, False: 0}

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(schema=_schemas())
    def tally(schema: Any) -> None:
        seen[certainly_valid(schema, CONFORMS)] += 1

    tally()
    assert seen[True] > 60 and seen[False] > 60, seen


TYPICAL = [
    # What the mcp SDK generates for `def f(query: str, limit: int = 10) -> dict[str, Any]` and a model.
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "title": "Query", "description": "What to find"},
            "limit": {"type": "integer", "default": 10, "title": "Limit"},
        },
        "required": ["query"],
        "title": "fArguments",
    },
    {"type": "object", "additionalProperties": True, "title": "fDictOutput"},
    {
        "$defs": {"Book": {"properties": {"title": {"type": "string"}}, "required": ["title"], "type": "object"}},
        "properties": {"books": {"items": {"$ref": "#/$defs/Book"}, "type": "array"}},
        "required": ["books"],
        "type": "object",
    },
    {"type": "object", "properties": {"when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}}},
    {"type": "object", "properties": {"mode": {"enum": ["a", "b"], "type": "string", "pattern": "^[ab]$"}}},
]


def test_the_schemas_tools_send_are_known_valid_without_the_slow_walk() -> None:
    for schema in TYPICAL:
        assert certainly_valid(schema, CONFORMS), schema
        assert _jsonschema_says_valid(schema)


def test_what_the_quick_walk_cannot_tell_still_gets_jsonschemas_answer() -> None:
    # Not known to the quick walk, invalid: jsonschema's message comes through.
    assert "is not valid" in (schema_problem({"type": "object", "minLength": -1}) or "") or schema_problem(
        {"type": "object", "minLength": -1}
    )
    assert schema_problem({"type": "object", "pattern": "["}) is not None
    assert schema_problem({"type": "strin"}) is not None
    # Not known to the quick walk, valid: no problem.
    assert not certainly_valid({"type": "object", "x-vendor": {"any": "thing"}}, CONFORMS)
    assert schema_problem({"type": "object", "x-vendor": {"any": "thing"}}) is None
    assert schema_problem({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}) is None
