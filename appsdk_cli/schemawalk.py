"""The one bound on every walk through a JSON Schema that came from a server or a file.

Following `$ref` can turn a few kilobytes into an exponential tree: 40 `$defs`, each an `anyOf` of two
refs to the next, expand to 2^40 nodes, and a walker that does not remember what it has seen never
ends. So each walker memoises what it can (by node, or by pair of nodes for a comparison), and all of
them spend a Budget: a number of steps, and the command's deadline when it has a `--timeout`. Past
either, `TooComplex`, which the caller shows as a "cannot tell" in one line. The budget is far above
what a real schema needs (a pydantic model of a few hundred fields takes a few thousand steps).

jsonschema walks schemas too (validating a value); `bounded_validator` makes it spend the same budget.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

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
    spends `budget`: `iter_errors` raises TooComplex instead of running for ever on an anyOf bomb."""
    from jsonschema.validators import Draft202012Validator, extend, validator_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unknown $schema falls back to 2020-12, without a warning
        base = validator_for(schema, default=Draft202012Validator)

    def counted(check: Any, cost: int) -> Any:
        def run(validator: Any, value: Any, instance: Any, node: Any) -> Any:
            budget.spend(cost)
            yield from check(validator, value, instance, node) or ()

        return run

    counted_checks = {
        keyword: counted(check, 4 if keyword in _REFERENCES else 1) for keyword, check in base.VALIDATORS.items()
    }
    bounded = extend(base, counted_checks)
    return bounded(schema)
