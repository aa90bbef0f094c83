"""The one bound on every walk through a JSON Schema that came from a server or a file.

Following `$ref` can turn a few kilobytes into an exponential tree: 40 `$defs`, each an `anyOf` of two
refs to the next, expand to 2^40 nodes, and a walker that does not remember what it has seen never
ends. So each walker memoises what it can (by node, or by pair of nodes for a comparison), and all of
them spend a Budget: a number of steps, and the command's deadline when it has a `--timeout`. Past
either, `TooComplex`, which the caller shows as a "cannot tell" in one line. The budget is far above
what a real schema needs (a pydantic model of a few hundred fields takes a few thousand steps).

jsonschema walks schemas too (validating a value); `bounded_validator` makes it spend the same budget,
and matches `pattern`/`patternProperties` with serverregex (linear time) instead of jsonschema's `re`.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

from appsdk_cli import serverregex

MAX_STEPS = 50_000  # schema nodes visited or compared: well under a second
# jsonschema checking one value: a keyword is a step, a $ref (a lookup and a new scope) four. Half a
# second of an honest large output; a bomb's steps cost more (each anyOf keeps its branches' errors), so
# validation also stops after VALIDATION_SECONDS.
MAX_VALIDATION_STEPS = 50_000
VALIDATION_SECONDS = 2.0
_REFERENCES = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
_CLOCK_EVERY = 256  # steps between two looks at the clock


class TooComplex(Exception):
    """A schema walk went past its budget; `str()` says which bound, e.g. "more than 50000 steps"."""


@dataclass
class Budget:
    """Steps left for one command's schema walks, and the monotonic deadline it must finish by (if any)."""

    steps: int = MAX_STEPS
    deadline: float | None = None
    seconds: float | None = None  # what the deadline was, for the message
    spent: int = 0
    # Patterns the linear-time engine could not compile, each said once ("pattern not checked: ...").
    unchecked_patterns: list[str] = field(default_factory=list)

    def not_checked(self, why: serverregex.Unsupported) -> None:
        line = str(why)
        if line not in self.unchecked_patterns:
            self.unchecked_patterns.append(line)

    @classmethod
    def within(cls, timeout: float | None, steps: int = MAX_STEPS) -> Budget:
        """A budget that also ends `timeout` seconds from now (None: steps only)."""
        if timeout is None:
            return cls(steps=steps)
        return cls(steps=steps, deadline=time.monotonic() + timeout, seconds=timeout)

    @classmethod
    def for_validation(cls) -> Budget:
        return cls.within(VALIDATION_SECONDS, MAX_VALIDATION_STEPS)

    def spend(self, steps: int = 1) -> None:
        before = self.spent
        self.spent += steps
        if self.spent > self.steps:
            raise TooComplex(f"more than {self.steps} steps")
        looks = before // _CLOCK_EVERY != self.spent // _CLOCK_EVERY
        if looks and self.deadline is not None and time.monotonic() > self.deadline:
            raise TooComplex(f"it took longer than {self.seconds or 0:g} s")


def pointer(root: Any, ref: str) -> Any:
    """The node a local `$ref` ("#", "#/$defs/X", with ~0 and ~1 escapes) names in `root`, or None."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def bounded_validator(schema: dict[str, Any], budget: Budget) -> Any:
    """A jsonschema validator for `schema` (its own dialect, 2020-12 when unsaid) whose every keyword
    spends `budget`: `iter_errors` raises TooComplex instead of running for ever on an anyOf bomb. Its
    patterns run on RE2; one RE2 cannot compile is noted in `budget.unchecked_patterns` and passes."""
    from jsonschema.validators import Draft202012Validator, extend, validator_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unknown $schema falls back to 2020-12, without a warning
        base = validator_for(schema, default=Draft202012Validator)

    def counted(check: Any, cost: int) -> Any:
        def run(validator: Any, value: Any, instance: Any, node: Any) -> Any:
            budget.spend(cost)
            yield from check(validator, value, instance, node) or ()

        return run

    checks = dict(base.VALIDATORS)
    for keyword, check in _pattern_keywords(budget).items():
        if keyword in checks:
            checks[keyword] = check
    counted_checks = {keyword: counted(check, 4 if keyword in _REFERENCES else 1) for keyword, check in checks.items()}
    bounded = extend(base, counted_checks)
    return bounded(schema)


def _pattern_keywords(budget: Budget) -> dict[str, Any]:
    """jsonschema's keywords that match a regular expression (it calls `re.search` in each), on RE2.

    A key whose match RE2 cannot tell counts as matched by patternProperties' neighbours (not "additional",
    "evaluated") and is not descended into: an unchecked pattern never makes an error up."""
    from jsonschema.exceptions import ValidationError

    def matches(pattern: Any, text: str) -> bool | None:
        # Each match is a step: additionalProperties and patternProperties try every key against every
        # pattern within one keyword, so the keyword's own step does not bound them.
        budget.spend()
        try:
            return serverregex.search(pattern, text)
        except serverregex.Unsupported as why:
            budget.not_checked(why)
            return None

    def pattern(validator: Any, wanted: Any, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and matches(wanted, instance) is False:
            yield ValidationError(f"{_short(instance)} does not match {wanted!r}")

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for each, subschema in patterns.items():
            for key, value in instance.items():
                if matches(each, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=each)

    def additional(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
        properties = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        return [
            key
            for key in instance
            if key not in properties and not any(matches(each, key) is not False for each in patterns)
        ]

    def additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        extras = additional(instance, schema)
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif not allowed and extras:
            listed = ", ".join(repr(extra) for extra in sorted(extras))
            if "patternProperties" in schema:
                patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
                yield ValidationError(f"{listed} {'does' if len(extras) == 1 else 'do'} not match any of {patterns}")
            else:
                verb = "was" if len(extras) == 1 else "were"
                yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")

    def evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any) -> set[str]:
        """jsonschema's find_evaluated_property_keys_by_schema, its patternProperties on RE2."""
        if not isinstance(schema, dict):
            return set()
        found: set[str] = set()
        for keyword in ("$ref", "$dynamicRef"):
            reference = schema.get(keyword)
            if isinstance(reference, str):
                resolved = validator._resolver.lookup(reference)
                inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
                found |= evaluated_keys(inner, instance, resolved.contents)
        properties = schema.get("properties")
        if isinstance(properties, dict):
            found |= properties.keys() & instance.keys()
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            subschema = schema.get(keyword)
            if subschema is not None:
                found |= {key for key, value in instance.items() if _valid(validator.descend(value, subschema))}
        for each in schema.get("patternProperties") or {}:
            found |= {key for key in instance if matches(each, key) is not False}
        for key, subschema in (schema.get("dependentSchemas") or {}).items():
            if key in instance:
                found |= evaluated_keys(validator, instance, subschema)
        for keyword in ("allOf", "oneOf", "anyOf"):
            for subschema in schema.get(keyword) or []:
                if _valid(validator.descend(instance, subschema)):
                    found |= evaluated_keys(validator, instance, subschema)
        if "if" in schema:
            if validator.evolve(schema=schema["if"]).is_valid(instance):
                found |= evaluated_keys(validator, instance, schema["if"])
                found |= evaluated_keys(validator, instance, schema.get("then"))
            else:
                found |= evaluated_keys(validator, instance, schema.get("else"))
        return found

    def unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        known = evaluated_keys(validator, instance, schema)
        refused = [
            key
            for key in instance
            if key not in known and not _valid(validator.descend(instance[key], unevaluated, path=key))
        ]
        if refused:
            if unevaluated is False:
                listed = ", ".join(repr(key) for key in sorted(refused))
                verb = "was" if len(refused) == 1 else "were"
                yield ValidationError(f"Unevaluated properties are not allowed ({listed} {verb} unexpected)")
            else:
                listed = ", ".join(repr(key) for key in refused)
                yield ValidationError(f"Unevaluated properties are not valid under the given schema ({listed})")

    return {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
        "unevaluatedProperties": unevaluated_properties,
    }


def _valid(errors: Any) -> bool:
    return next(iter(errors), None) is None


def _short(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 200 else shown[:197] + "..."
