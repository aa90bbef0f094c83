"""Turn `KEY=VALUE` words and `--args JSON` into a tool's arguments, by the tool's inputSchema.

Everything is checked before a request leaves: an unknown key, a missing required key or a value of
the wrong type is a UsageError whose one line lists the tool's parameters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from appsdk_cli.errors import UsageError

JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")


@dataclass(frozen=True)
class Parameter:
    name: str
    types: tuple[str, ...]  # JSON Schema types the value may have; () = anything
    required: bool
    enum: tuple[Any, ...] | None
    description: str | None

    def describe(self) -> str:
        kind = "|".join(t for t in self.types if t != "null") or "any"
        if self.enum is not None:
            kind = "|".join(json.dumps(v) for v in self.enum)
        return f"{self.name} ({kind}{', required' if self.required else ''})"


def parameters(input_schema: dict[str, Any] | None) -> list[Parameter]:
    schema = input_schema or {}
    required = set(schema.get("required") or [])
    return [
        Parameter(
            name=name,
            types=_types(prop, schema),
            required=name in required,
            enum=_enum(prop, schema),
            description=_resolve(prop, schema).get("description") if isinstance(prop, dict) else None,
        )
        for name, prop in (schema.get("properties") or {}).items()
    ]


def describe_parameters(tool_name: str, params: list[Parameter]) -> str:
    if not params:
        return f"{tool_name} takes no parameters"
    return f"{tool_name} takes: " + ", ".join(p.describe() for p in params)


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow a local `$ref` (pydantic puts nested models under `$defs`)."""
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 20:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            break
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            break
        schema, seen = target, seen + 1
    return schema if isinstance(schema, dict) else {}


def _types(prop: Any, root: dict[str, Any]) -> tuple[str, ...]:
    """The union of JSON types a property allows, through `anyOf`/`oneOf` (e.g. [X, null] for optionals)."""
    schema = _resolve(prop, root)
    found: list[str] = []
    declared = schema.get("type")
    if isinstance(declared, str):
        found.append(declared)
    elif isinstance(declared, list):
        found.extend(t for t in declared if isinstance(t, str))
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema.get("enum") or []
        found.extend(_json_type(v) for v in values)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key) or []
        branch_types = [_types(branch, root) for branch in branches]
        if any(not t for t in branch_types):
            return ()  # one branch takes anything, so the union does
        found.extend(t for types in branch_types for t in types)
    # Nothing declared means anything goes; keep the declared order, drop duplicates.
    return tuple(dict.fromkeys(t for t in found if t in JSON_TYPES))


def _enum(prop: Any, root: dict[str, Any]) -> tuple[Any, ...] | None:
    schema = _resolve(prop, root)
    if "enum" in schema and isinstance(schema["enum"], list):
        return tuple(schema["enum"])
    if "const" in schema:
        return (schema["const"],)
    values: list[Any] = []
    for branch in schema.get("anyOf") or schema.get("oneOf") or []:
        inner = _enum(branch, root)
        if inner is None:
            if _types(branch, root) == ("null",):
                continue
            return None
        values.extend(inner)
    return tuple(values) if values else None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _fits(value: Any, types: tuple[str, ...]) -> bool:
    if not types:
        return True
    kind = _json_type(value)
    if kind in types:
        return True
    # An integral number is an integer to JSON Schema, and every integer is a number.
    if kind == "integer" and "number" in types:
        return True
    return kind == "number" and "integer" in types and float(value).is_integer()


def _loads(text: str) -> Any:
    """json.loads, with JSON nested past Python's recursion limit refused like any other bad JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def convert(text: str, param: Parameter) -> Any:
    """One command-line word to a JSON value, trying the types the schema allows, strictest first."""
    types = param.types
    if not types:
        # No type declared: JSON if it parses (numbers, true, lists...), else the plain text.
        try:
            return _loads(text)
        except ValueError:
            return text
    lowered = text.strip().lower()
    if "integer" in types:
        try:
            return int(text.strip())
        except ValueError:
            pass
    if "number" in types:
        try:
            number = float(text.strip())
        except ValueError:
            pass
        else:
            if number == number and number not in (float("inf"), float("-inf")):  # JSON has no NaN/inf
                return int(number) if number.is_integer() and "." not in text and "e" not in lowered else number
    if "boolean" in types and lowered in ("true", "false"):
        return lowered == "true"
    if "array" in types or "object" in types:
        try:
            value = _loads(text)
        except ValueError:
            value = None
        if (isinstance(value, list) and "array" in types) or (isinstance(value, dict) and "object" in types):
            return value
    if "string" in types:
        return text  # a string parameter takes the text as typed, even "null" or "42"
    if "null" in types and lowered == "null":
        return None
    raise _wrong_type(param, repr(text))


def _wrong_type(param: Parameter, shown: str) -> ValueError:
    kinds = [t for t in param.types if t != "null"] or list(param.types)
    hint = " (as JSON)" if {"array", "object"} & set(kinds) else ""
    return ValueError(f"{param.name} must be {' or '.join(kinds)}{hint}, not {shown}")


def build_arguments(
    tool_name: str, input_schema: dict[str, Any] | None, words: list[str], args_json: str | None
) -> dict[str, Any]:
    """The arguments object for tools/call: `--args` first, then each KEY=VALUE over it."""
    params = parameters(input_schema)
    by_name = {p.name: p for p in params}
    listing = describe_parameters(tool_name, params)
    schema = input_schema or {}
    additional = schema.get("additionalProperties")
    # Servers rarely say additionalProperties: false, but a key the tool does not declare is a typo far
    # more often than an intent; accept undeclared keys only when the schema allows them explicitly,
    # or declares no properties at all (a schema that says nothing).
    extras_allowed = additional not in (None, False) or ("properties" not in schema and additional is None)

    arguments: dict[str, Any] = {}
    if args_json is not None:
        try:
            given = _loads(args_json)
        except ValueError as problem:
            raise UsageError(f'--args is not valid JSON ({problem}); e.g. --args \'{{"month": "June"}}\'') from None
        if not isinstance(given, dict):
            raise UsageError('--args must be a JSON object, e.g. --args \'{"month": "June"}\'')
        arguments.update(given)

    for word in words:
        key, sep, text = word.partition("=")
        if not sep or not key:
            raise UsageError(f"{word!r} is not KEY=VALUE; {listing}")
        param = by_name.get(key)
        if param is None:
            if not extras_allowed:
                raise UsageError(f"{tool_name} has no parameter {key!r}; {listing}")
            try:
                arguments[key] = _loads(text)
            except ValueError:
                arguments[key] = text
            continue
        try:
            arguments[key] = convert(text, param)
        except ValueError as problem:
            raise UsageError(f"{problem}; {listing}") from None

    for key, value in arguments.items():
        param = by_name.get(key)
        if param is None:
            if not extras_allowed:
                raise UsageError(f"{tool_name} has no parameter {key!r}; {listing}")
            continue
        if not _fits(value, param.types):
            raise UsageError(f"{_wrong_type(param, json.dumps(value))}; {listing}")
        if param.enum is not None and value not in param.enum and not (value is None and "null" in param.types):
            choices = ", ".join(json.dumps(v) for v in param.enum)
            raise UsageError(f"{key} must be one of {choices}, not {json.dumps(value)}; {listing}")

    missing = [p.name for p in params if p.required and p.name not in arguments]
    if missing:
        raise UsageError(f"{tool_name} needs {', '.join(missing)}; {listing}")
    return arguments
