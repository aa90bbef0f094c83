"""JSON Schemas (input and output, checked against their metaschema) and duplicate names.

jsonschema is imported inside the functions: only `appsdk check` pays for it.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

from appsdk_cli.checks.fastmeta import certainly_valid
from appsdk_cli.checks.model import Finding, Rule, Severity, resource_target, tool_target
from appsdk_cli.schemawalk import Budget, TooComplex, bounded_validator
from appsdk_cli.snapshot.model import Snapshot

INPUT_SCHEMA_INVALID = Rule(
    "APPS601",
    "input-schema-invalid",
    Severity.ERROR,
    'An `inputSchema` that is not a valid JSON Schema (metaschema check) or not `type: "object"`',
    "Hosts cannot build arguments for the tool and may drop it from the list",
)
OUTPUT_SCHEMA_INVALID = Rule(
    "APPS602",
    "output-schema-invalid",
    Severity.ERROR,
    "An `outputSchema` that is not a valid JSON Schema",
    "Clients that validate results reject every call",
)
DUPLICATE_TOOL = Rule(
    "APPS603",
    "duplicate-tool-name",
    Severity.ERROR,
    "Two tools with the same name",
    "A host can reach only one of them, and which one is undefined",
)
DUPLICATE_RESOURCE = Rule(
    "APPS604",
    "duplicate-resource-uri",
    Severity.ERROR,
    "Two resources with the same URI",
    "A host can read only one of them, and which one is undefined",
)
RULES = (INPUT_SCHEMA_INVALID, OUTPUT_SCHEMA_INVALID, DUPLICATE_TOOL, DUPLICATE_RESOURCE)


def _path(parts: Any) -> str:
    return "/".join(str(p) for p in parts) or "the top level"


def _validator_class(schema: dict[str, Any]) -> Any:
    from jsonschema.validators import Draft202012Validator, validator_for

    if "$schema" not in schema:
        return Draft202012Validator  # what validator_for answers, without its warnings filter per schema
    # MCP's default dialect is 2020-12; an unknown $schema falls back to it (jsonschema warns, we do not).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return validator_for(schema, default=Draft202012Validator)


def schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a valid JSON Schema, or None."""
    if _quickly_valid(schema):
        return None
    return _metaschema_problem(schema)


def _quickly_valid(schema: Any) -> bool:
    """The common case, known valid without walking the metaschema (checks/fastmeta.py)."""
    if not isinstance(schema, dict) or "$schema" in schema:
        return False
    return certainly_valid(schema, _conforms)


def _conforms(value: Any, format_name: str) -> bool:
    """jsonschema's 2020-12 format check, imported only when a schema has a pattern or a $ref to judge:
    importing jsonschema cost `check` a fifth of a second on servers whose schemas have neither."""
    from jsonschema.validators import Draft202012Validator

    return Draft202012Validator.FORMAT_CHECKER.conforms(value, format_name)


def _metaschema_problem(schema: Any) -> str | None:
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        return f"is a {type(schema).__name__}, not a JSON object"
    try:
        _validator_class(schema).check_schema(schema)
    except SchemaError as error:
        return f"at {_path(error.absolute_path)}: {error.message}"
    except RecursionError:
        return "is nested too deeply to check (hosts that walk it fail too)"
    return None


def instance_problem(schema: dict[str, Any], instance: Any, unchecked: list[str] | None = None) -> str | None:
    """Why `instance` does not match the (valid) `schema`, or None; the best-matching error only.

    Patterns are matched in linear time (serverregex); those it cannot run are added to `unchecked`.

    Raises TooComplex when checking takes more than schemawalk's budget (an anyOf bomb, say) or
    nests deeper than Python's stack."""
    from jsonschema.exceptions import best_match
    from referencing.exceptions import Unresolvable

    budget = Budget.for_validation()
    validator = bounded_validator(schema, budget)
    try:
        error = best_match(validator.iter_errors(instance))
    except Unresolvable as problem:
        return f"the schema has a $ref that does not resolve: {problem}"
    except RecursionError:
        raise TooComplex("nested too deeply") from None
    finally:
        if unchecked is not None:
            unchecked.extend(budget.unchecked_patterns)
    if error is None:
        return None
    return f"at {_path(error.absolute_path)}: {error.message}"


class _Verdicts:
    """schema_problem once per distinct schema: tools generated from one model share their schemas, and
    a schema the quick walk cannot vouch for costs milliseconds of metaschema walking each time."""

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}

    def problem(self, schema: Any) -> str | None:
        if _quickly_valid(schema):
            return None  # cheaper than the key below
        try:
            key = json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            return _metaschema_problem(schema)
        if key not in self._known:
            self._known[key] = _metaschema_problem(schema)
        return self._known[key]


def check(snapshot: Snapshot) -> Iterator[Finding]:
    verdicts = _Verdicts()
    for tool in snapshot.unique_tools():
        name = str(tool.get("name"))
        target = tool_target(name)
        schema = tool.get("inputSchema")
        problem = verdicts.problem(schema)
        if problem is None and isinstance(schema, dict) and schema.get("type") != "object":
            problem = f'has type {schema.get("type")!r}; MCP requires "object"'
        if problem:
            yield Finding(
                INPUT_SCHEMA_INVALID,
                target,
                f"{name}: inputSchema {problem}",
                "fix the schema (or the parameter annotations it is generated from)",
            )
        if "outputSchema" in tool:
            problem = verdicts.problem(tool.get("outputSchema"))
            if problem:
                yield Finding(
                    OUTPUT_SCHEMA_INVALID,
                    target,
                    f"{name}: outputSchema {problem}",
                    "fix the schema (or the return annotation it is generated from)",
                )
    names = Counter(str(t.get("name")) for t in snapshot.tools if isinstance(t, dict))
    for name, count in names.items():
        if count > 1:
            yield Finding(
                DUPLICATE_TOOL, tool_target(name), f"{count} tools are named {name}", "give each tool a unique name"
            )
    uris = Counter(str(r.get("uri")) for r in snapshot.resources if isinstance(r, dict))
    for uri, count in uris.items():
        if count > 1:
            yield Finding(
                DUPLICATE_RESOURCE,
                resource_target(uri),
                f"{count} resources have the URI {uri}",
                "give each resource a unique URI",
            )
