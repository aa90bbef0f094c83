"""A quick way to know that a tool's schema is valid JSON Schema 2020-12, for the common case.

jsonschema's metaschema check walks the 2020-12 metaschema through $dynamicRef for every keyword of every
subschema: about 7 ms a schema here, which made `appsdk check` of 5,000 tools spend a minute on it. Nearly
every tool schema uses a handful of keywords with plain values, so this module walks the schema once and
answers "certainly valid" when every keyword it meets is one it knows and every value has the shape the
metaschema asks for. Anything else (a keyword it does not know, $id, $schema, $anchor, a non-int integer,
a nesting past MAX_DEPTH) is "cannot tell", and checks/schemas.py asks jsonschema as before; so it never
says valid where jsonschema would not (tests/test_check_fastmeta.py holds it to that).

The value rules are the 2020-12 metaschema's (json-schema.org/draft/2020-12/schema and its vocabularies);
`pattern`, property-name patterns and `$ref` go through the same format checker jsonschema uses, so they
are judged exactly as it judges them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_DEPTH = 48
SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
Conforms = Callable[[Any, str], bool]


def _integer(value: Any) -> bool:
    return type(value) is int


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _non_negative(value: Any) -> bool:
    return _integer(value) and value >= 0


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _unique_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and len(set(value)) == len(value)


def _type(value: Any) -> bool:
    if isinstance(value, str):
        return value in SIMPLE_TYPES
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(isinstance(v, str) and v in SIMPLE_TYPES for v in value)
        and len(set(value)) == len(value)
    )


_ANYTHING: Callable[[Any], bool] = lambda value: True  # noqa: E731
# Keywords whose value is not a schema, with the test the metaschema puts on it.
_VALUES: dict[str, Callable[[Any], bool]] = {
    "type": _type,
    "const": _ANYTHING,
    "enum": lambda value: isinstance(value, list),
    "multipleOf": lambda value: _number(value) and value > 0,
    "maximum": _number,
    "exclusiveMaximum": _number,
    "minimum": _number,
    "exclusiveMinimum": _number,
    "maxLength": _non_negative,
    "minLength": _non_negative,
    "maxItems": _non_negative,
    "minItems": _non_negative,
    "uniqueItems": _boolean,
    "maxContains": _non_negative,
    "minContains": _non_negative,
    "maxProperties": _non_negative,
    "minProperties": _non_negative,
    "required": _unique_strings,
    "dependentRequired": lambda value: isinstance(value, dict) and all(_unique_strings(v) for v in value.values()),
    "title": _string,
    "description": _string,
    "default": _ANYTHING,
    "deprecated": _boolean,
    "readOnly": _boolean,
    "writeOnly": _boolean,
    "examples": lambda value: isinstance(value, list),
    "format": _string,
    "contentEncoding": _string,
    "contentMediaType": _string,
    "$comment": _string,
}
_SCHEMA = ("items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not")
_SCHEMA += ("unevaluatedItems", "unevaluatedProperties", "contentSchema")
_SCHEMA_ARRAY = ("prefixItems", "allOf", "anyOf", "oneOf")
_SCHEMA_MAP = ("properties", "dependentSchemas", "$defs")


def certainly_valid(schema: Any, conforms: Conforms) -> bool:
    """True when `schema` is certainly a valid 2020-12 schema; False when this walk cannot tell."""
    return _schema(schema, conforms, 0)


def _schema(schema: Any, conforms: Conforms, depth: int) -> bool:
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return False
    for key, value in schema.items():
        test = _VALUES.get(key)
        if test is not None:
            if not test(value):
                return False
        elif key in _SCHEMA:
            if not _schema(value, conforms, depth + 1):
                return False
        elif key in _SCHEMA_ARRAY:
            if not isinstance(value, list) or not value:
                return False
            if not all(_schema(item, conforms, depth + 1) for item in value):
                return False
        elif key in _SCHEMA_MAP:
            if not isinstance(value, dict) or not all(_schema(v, conforms, depth + 1) for v in value.values()):
                return False
        elif key == "patternProperties":
            if not isinstance(value, dict):
                return False
            if not all(conforms(k, "regex") and _schema(v, conforms, depth + 1) for k, v in value.items()):
                return False
        elif key == "pattern":
            if not (isinstance(value, str) and conforms(value, "regex")):
                return False
        elif key == "$ref":
            if not (isinstance(value, str) and conforms(value, "uri-reference")):
                return False
        else:
            return False  # a keyword this walk does not know: jsonschema decides
    return True
