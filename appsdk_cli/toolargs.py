"""Turn `KEY=VALUE` words and `--args JSON` into a tool's arguments, by the tool's inputSchema.

Everything is checked before a request leaves: an unknown key, a missing required key or a value of
the wrong type is a UsageError whose one line lists the tool's parameters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from appsdk_cli.errors import UsageError
from appsdk_cli.schemawalk import Budget, TooComplex, pointer

JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")


@dataclass(frozen=True)
class Parameter:
    name: str
    types: tuple[str, ...]  # JSON Schema types the value may have; () = anything
    required: bool
    enum: tuple[Any, ...] | None
    description: str | None
    unknown: str | None = None  # why its type cannot be told (a schema too complex to expand), or None

    def kind(self) -> str:
        """What the value may be: its types, its values, or "cannot tell" and why."""
        if self.unknown is not None:
            return f"cannot tell: {self.unknown}"
        if self.enum is not None:
            return "|".join(json.dumps(v) for v in self.enum)
        return "|".join(t for t in self.types if t != "null") or "any"

    def describe(self) -> str:
        return f"{self.name} ({self.kind()}{', required' if self.required else ''})"


def parameters(input_schema: dict[str, Any] | None, *, budget: Budget | None = None) -> list[Parameter]:
    """The tool's top-level parameters. The walk is memoised and spends `budget`: past it, a parameter's
    type is "cannot tell" (and any value goes, for the server to judge) instead of a hang."""
    schema = input_schema if isinstance(input_schema, dict) else {}
    listed = schema.get("required")
    required = {name for name in listed if isinstance(name, str)} if isinstance(listed, list) else set()
    walk = _Walk(schema, budget or Budget())
    found = []
    properties = schema.get("properties")
    for name, prop in (properties if isinstance(properties, dict) else {}).items():
        try:
            types, enum = walk.types(prop), walk.enum(prop)
            unknown = None
        except TooComplex as problem:
            types, enum, unknown = (), None, f"its schema is too complex ({problem})"
        except RecursionError:
            types, enum, unknown = (), None, "its schema is nested too deeply"
        description = walk.description(prop)
        found.append(Parameter(str(name), types, name in required, enum, description, unknown))
    return found


def describe_parameters(tool_name: str, params: list[Parameter]) -> str:
    if not params:
        return f"{tool_name} takes no parameters"
    return f"{tool_name} takes: " + ", ".join(p.describe() for p in params)


_NOTHING: dict[str, Any] = {}  # what a non-schema or a cycle of $refs resolves to (never written to)


class _Walk:
    """Types and values of the subschemas of one schema, each node worked out once (by identity, which
    stays unique while `root` holds the nodes) and cycles cut, so shared `$defs` cost their size only."""

    def __init__(self, root: dict[str, Any], budget: Budget) -> None:
        self.root, self.budget = root, budget
        self._types: dict[int, tuple[str, ...] | None] = {}
        self._enums: dict[int, tuple[Any, ...] | None] = {}
        self._active_types: set[int] = set()
        self._active_enums: set[int] = set()

    def resolve(self, schema: Any) -> dict[str, Any]:
        """Follow local `$ref`s (pydantic puts nested models under `$defs`); a cycle of them is nothing."""
        seen: set[int] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            self.budget.spend()
            if id(schema) in seen:
                return _NOTHING
            seen.add(id(schema))
            target = pointer(self.root, schema["$ref"])
            if not isinstance(target, dict):
                break
            schema = target
        return schema if isinstance(schema, dict) else _NOTHING

    def description(self, prop: Any) -> str | None:
        try:
            text = self.resolve(prop).get("description")
        except TooComplex:
            return None
        return text if isinstance(text, str) else None

    def types(self, prop: Any) -> tuple[str, ...]:
        """The union of JSON types a property allows, through `anyOf`/`oneOf` (e.g. [X, null] for optionals)."""
        found = self._union(prop)
        return () if found is None else found

    def _union(self, prop: Any) -> tuple[str, ...] | None:
        """None: anything goes (a branch declares nothing); () also when met again inside itself."""
        schema = self.resolve(prop)
        key = id(schema)
        if key in self._types:
            return self._types[key]
        if key in self._active_types:
            return ()  # a recursive union: the outer visit collects its other branches
        self.budget.spend()
        self._active_types.add(key)
        try:
            found = self._own_types(schema)
        finally:
            self._active_types.discard(key)
        self._types[key] = found
        return found

    def _own_types(self, schema: dict[str, Any]) -> tuple[str, ...] | None:
        found: list[str] = []
        declared = schema.get("type")
        if isinstance(declared, str):
            found.append(declared)
        elif isinstance(declared, list):
            found.extend(t for t in declared if isinstance(t, str))
        if "const" in schema or "enum" in schema:
            values = [schema["const"]] if "const" in schema else schema.get("enum") or []
            found.extend(_json_type(v) for v in values)
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            for branch in branches if isinstance(branches, list) else []:
                branch_types = self._union(branch)
                if branch_types is None:
                    return None  # one branch takes anything, so the union does
                found.extend(branch_types)
        if not found and not any(isinstance(schema.get(k), list) for k in ("anyOf", "oneOf")):
            return None  # nothing declared means anything goes
        # Keep the declared order, drop duplicates.
        return tuple(dict.fromkeys(t for t in found if t in JSON_TYPES))

    def enum(self, prop: Any) -> tuple[Any, ...] | None:
        schema = self.resolve(prop)
        key = id(schema)
        if key in self._enums:
            return self._enums[key]
        if key in self._active_enums:
            return None
        self.budget.spend()
        self._active_enums.add(key)
        try:
            found = self._own_enum(schema)
        finally:
            self._active_enums.discard(key)
        self._enums[key] = found
        return found

    def _own_enum(self, schema: dict[str, Any]) -> tuple[Any, ...] | None:
        if "enum" in schema and isinstance(schema["enum"], list):
            return tuple(schema["enum"])
        if "const" in schema:
            return (schema["const"],)
        values: list[Any] = []
        branches = schema.get("anyOf") or schema.get("oneOf") or []
        for branch in branches if isinstance(branches, list) else []:
            inner = self.enum(branch)
            if inner is None:
                if self.types(branch) == ("null",):
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
    tool_name: str,
    input_schema: dict[str, Any] | None,
    words: list[str],
    args_json: str | None,
    *,
    budget: Budget | None = None,
) -> dict[str, Any]:
    """The arguments object for tools/call: `--args` first, then each KEY=VALUE over it.

    A parameter whose schema is too complex to expand within `budget` takes any value (the server
    judges it), rather than the call hanging on it."""
    params = parameters(input_schema, budget=budget)
    by_name = {p.name: p for p in params}
    listing = describe_parameters(tool_name, params)
    schema = input_schema if isinstance(input_schema, dict) else {}
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
