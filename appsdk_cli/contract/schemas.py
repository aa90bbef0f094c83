"""Does one JSON Schema accept every value another accepts? The question behind every schema change.

For a tool's input the new schema must accept every call the old one allowed (the reviewed snapshot's
model still sends those); for its output the old schema must accept everything the new one allows
(hosts and widgets rely on what was promised). Both are `gaps(wide, narrow)`: the values `narrow`
allows and `wide` rejects, each with a path and whether we are sure.

Handled exactly: type (integer inside number), required, properties, additionalProperties, items,
enum/const (checked value by value with jsonschema), anyOf/oneOf (as mcp emits them for optional
parameters and unions), numeric, length and item-count bounds, and `$ref` into `$defs`/`definitions`
as mcp and pydantic emit it. Anything else (allOf, not, if/then, patternProperties, a changed pattern
or format, ...) is compared only when unchanged; otherwise the gap says "cannot tell" and is not
certain. Properties a schema does not declare are taken as never sent (a model calls with the
declared arguments), unless it says additionalProperties.

No library does this with reasons: jsoncompat answers only yes/no (and called a newly added `pattern`
compatible), jsonsubschema answers yes/no too; a developer needs to know which argument and why.

A comparison is memoised by pair of nodes and place, and spends a Budget (schemawalk.py): a schema whose
`$ref`s expand past it, or a comparison past the command's deadline, is one "cannot tell" gap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from appsdk_cli.schemawalk import Budget, TooComplex, bounded_validator, pointer

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "definitions",
        "deprecated",
        "readOnly",
        "writeOnly",
        "discriminator",  # OpenAPI's hint next to a oneOf; the oneOf itself decides
        "contentMediaType",
        "contentEncoding",
    }
)
KNOWN = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "pattern",
        "format",
        "multipleOf",
    }
)
TRIVIAL_PATTERNS = frozenset({"", ".*", "^.*$", "^.*"})
ALL_TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


@dataclass(frozen=True)
class Gap:
    """Values one schema allows and the other does not, at one place; `certain` False means "cannot tell"."""

    kind: str  # "type", "required", "property", "value", "bound", "unknown"
    path: tuple[str, ...]  # property names; "[]" for array items
    message: str  # one line, names the place
    certain: bool = True


def where(path: tuple[str, ...]) -> str:
    text = ""
    for part in path:
        text += part if part == "[]" else (f".{part}" if text else part)
    return f"`{text}`"


def gaps(
    wide: Any,
    narrow: Any,
    *,
    wide_name: str = "the new schema",
    narrow_name: str = "the old schema",
    root_name: str = "the whole value",
    budget: Budget | None = None,
) -> list[Gap]:
    """Every place where `narrow` allows a value that `wide` rejects; [] when `wide` accepts all of it."""
    comparison = _Comparison(wide, narrow, wide_name, narrow_name, root_name, budget or Budget())
    try:
        return comparison.compare(wide, narrow, ())
    except TooComplex as problem:
        return [comparison.too_complex(str(problem))]
    except RecursionError:
        return [comparison.too_complex("nested too deeply")]


SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})  # name -> schema
DATA = frozenset({"enum", "const", "required"})  # values, never schemas


def _strip(value: Any) -> Any:
    """A schema without its annotations, for an "unchanged?" test (property names and values kept)."""
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if not isinstance(value, dict):
        return value
    stripped: dict[str, Any] = {}
    for key, item in value.items():
        if key in ANNOTATIONS:
            continue
        if key in DATA:
            stripped[key] = item
        elif key in SCHEMA_MAPS and isinstance(item, dict):
            stripped[key] = {name: _strip(sub) for name, sub in item.items()}
        else:
            stripped[key] = _strip(item)
    return stripped


def _types(schema: dict[str, Any]) -> set[str] | None:
    value = schema.get("type")
    if isinstance(value, str):
        return {value}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return set(value)
    return None


def _covers(kind: str, types: set[str] | None) -> bool:
    return types is None or kind in types or (kind == "integer" and "number" in types)


def _describe_types(types: set[str]) -> str:
    names = sorted(types)
    return ("type " if len(names) == 1 else "types ") + ", ".join(names)


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _disjoint(branches: list[Any]) -> bool:
    """Branches no value can match twice: distinct types, or objects told apart by one const property."""
    seen: set[str] = set()
    typed = True
    for branch in branches:
        types = _types(branch) if isinstance(branch, dict) else None
        if types is None or ("integer" in types and "number" in seen) or ("number" in types and "integer" in seen):
            typed = False
            break
        if seen & types:
            typed = False
            break
        seen |= types
    if typed:
        return True
    dicts = [b for b in branches if isinstance(b, dict) and isinstance(b.get("properties"), dict)]
    if len(dicts) != len(branches):
        return False
    for key in dicts[0]["properties"]:
        consts = []
        for branch in dicts:
            prop = branch["properties"].get(key)
            if not (isinstance(prop, dict) and "const" in prop and key in (branch.get("required") or [])):
                break
            consts.append(json.dumps(prop["const"], sort_keys=True))
        else:
            if len(set(consts)) == len(consts):
                return True
    return False


class _Comparison:
    def __init__(
        self, wide_root: Any, narrow_root: Any, wide_name: str, narrow_name: str, root_name: str, budget: Budget
    ) -> None:
        self.roots = {"wide": wide_root, "narrow": narrow_root}
        self.root_name = root_name
        self.wide_name, self.narrow_name = wide_name, narrow_name
        self.budget = budget
        self._active: set[tuple[int, int]] = set()
        # (id(wide), id(narrow), path) -> (wide, narrow, gaps); holding the nodes keeps their ids unique.
        self._done: dict[tuple[int, int, tuple[str, ...]], tuple[Any, Any, tuple[Gap, ...]]] = {}

    # --- helpers ---

    def _where(self, path: tuple[str, ...]) -> str:
        return where(path) if path else self.root_name

    def _gap(self, kind: str, path: tuple[str, ...], what: str) -> Gap:
        return Gap(kind, path, f"{self._where(path)}: {self.narrow_name} allows {what}; {self.wide_name} does not")

    def _unsure(self, path: tuple[str, ...], why: str) -> Gap:
        return Gap("unknown", path, f"{self._where(path)}: cannot tell whether it still fits ({why})", certain=False)

    def too_complex(self, why: str) -> Gap:
        return self._unsure((), f"the schemas are too complex to compare: {why}")

    def _resolve(self, schema: Any, side: str, path: tuple[str, ...]) -> tuple[Any, Gap | None]:
        """Follow $ref (and a lone allOf wrapper) to the schema it names; siblings must be annotations."""
        for _ in range(32):
            self.budget.spend()
            if not isinstance(schema, dict):
                return schema, None
            if "$ref" in schema:
                ref = schema["$ref"]
                rest = set(schema) - {"$ref"} - ANNOTATIONS
                if not isinstance(ref, str) or not ref.startswith("#") or rest:
                    return None, self._unsure(path, f"$ref {ref!r} is not a plain local reference")
                target = pointer(self.roots[side], ref)
                if target is None:
                    return None, self._unsure(path, f"$ref {ref!r} points at nothing")
                schema = target
                continue
            all_of = schema.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and not set(schema) - {"allOf"} - ANNOTATIONS:
                schema = all_of[0]
                continue
            return schema, None
        return None, self._unsure(path, "$ref chain too deep")

    def _finite(self, schema: dict[str, Any]) -> list[Any] | None:
        if "const" in schema:
            return [schema["const"]]
        if isinstance(schema.get("enum"), list):
            return list(schema["enum"])
        types = _types(schema)
        if types == {"null"}:
            return [None]
        if types == {"boolean"} and not set(schema) - {"type"} - ANNOTATIONS:
            return [True, False]
        return None

    def _validator(self, schema: Any, side: str) -> Any:
        root = self.roots[side]
        probe = dict(schema) if isinstance(schema, dict) else schema
        if isinstance(probe, dict) and isinstance(root, dict):
            for key in ("$defs", "definitions"):
                if key in root and key not in probe:
                    probe[key] = root[key]
        return bounded_validator(probe, self.budget)

    @staticmethod
    def _merge(outer: dict[str, Any], branch: Any, keyword: str) -> Any:
        """A union's branch together with the constraints written next to the union."""
        siblings = {k: v for k, v in outer.items() if k != keyword and k not in ANNOTATIONS}
        if not siblings or not isinstance(branch, dict):
            return branch
        merged = dict(branch)
        for key, value in siblings.items():
            if key in merged and merged[key] != value:
                return None  # both constrain the same keyword differently: not a shape we compare
            merged[key] = value
        return merged

    # --- the comparison ---

    def compare(self, wide: Any, narrow: Any, path: tuple[str, ...]) -> list[Gap]:
        wide, problem = self._resolve(wide, "wide", path)
        if problem:
            return [problem]
        narrow, problem = self._resolve(narrow, "narrow", path)
        if problem:
            return [problem]
        if wide is True or wide == {} or (isinstance(wide, dict) and not set(wide) - ANNOTATIONS):
            return []
        if narrow is False:
            return []
        if narrow is True or (isinstance(narrow, dict) and not set(narrow) - ANNOTATIONS):
            return [self._gap("type", path, "any value")]
        if wide is False:
            return [self._gap("type", path, "a value")]
        if not isinstance(wide, dict) or not isinstance(narrow, dict):
            return [self._unsure(path, "a schema that is not an object")]
        key = (id(wide), id(narrow))
        if key in self._active:
            return []  # a recursive definition met again: the first visit compares it
        done = self._done.get((*key, path))
        if done is not None:
            return list(done[2])  # the same two nodes at the same place: an anyOf of refs to one definition
        self.budget.spend()
        self._active.add(key)
        try:
            found = self._compare(wide, narrow, path)
        finally:
            self._active.discard(key)
        self._done[(*key, path)] = (wide, narrow, tuple(found))
        return found

    def _compare(self, wide: dict[str, Any], narrow: dict[str, Any], path: tuple[str, ...]) -> list[Gap]:
        text = json.dumps([wide, narrow])
        self.budget.spend(len(text) // 4096)  # the text of big subtrees costs its size
        if "$ref" not in text and _strip(wide) == _strip(narrow):
            return []
        values = self._finite(narrow)
        if values is not None:
            return self._compare_values(wide, narrow, values, path)
        for keyword in ("anyOf", "oneOf"):
            branches = narrow.get(keyword)
            if isinstance(branches, list):
                return self._narrow_union(wide, narrow, keyword, branches, path)
        narrow_types = _types(narrow)
        if narrow_types is not None and len(narrow_types) > 1:
            found: list[Gap] = []
            for kind in sorted(narrow_types):
                found += self.compare(wide, {**narrow, "type": kind}, path)
            return list(dict.fromkeys(found))
        for keyword in ("anyOf", "oneOf"):
            branches = wide.get(keyword)
            if isinstance(branches, list):
                return self._wide_union(wide, narrow, keyword, branches, path)
        unknown = sorted(set(wide) - KNOWN - ANNOTATIONS)
        if unknown:
            return [self._unsure(path, f"{', '.join(unknown)} is compared only when unchanged")]
        found = self._compare_plain(wide, narrow, path)
        unknown_narrow = sorted(set(narrow) - KNOWN - ANNOTATIONS)
        if unknown_narrow:
            # narrow allows less than its known keywords say: a gap found without them may not be real.
            return [
                Gap(g.kind, g.path, f"{g.message} (unless {', '.join(unknown_narrow)} rules it out)", certain=False)
                for g in found
            ]
        return found

    def _compare_values(
        self, wide: dict[str, Any], narrow: dict[str, Any], values: list[Any], path: tuple[str, ...]
    ) -> list[Gap]:
        """A finite narrow side: check each value, exactly, with jsonschema."""
        from jsonschema.exceptions import SchemaError

        unchecked_before = len(self.budget.unchecked_patterns)
        try:
            wide_check = self._validator(wide, "wide")
            narrow_check = self._validator(narrow, "narrow")
            rejected = [v for v in values if narrow_check.is_valid(v) and not wide_check.is_valid(v)]
        except TooComplex:
            raise
        except (SchemaError, Exception) as error:  # an unresolvable $ref deep inside, a bad regex
            return [self._unsure(path, f"the schema could not be evaluated ({type(error).__name__})")]
        if not rejected and len(self.budget.unchecked_patterns) > unchecked_before:
            # A value RE2 could not judge passed unjudged: say so rather than call it compatible.
            return [self._unsure(path, self.budget.unchecked_patterns[-1])]
        if not rejected:
            return []
        shown = ", ".join(_value(v) for v in rejected[:5]) + (" ..." if len(rejected) > 5 else "")
        return [self._gap("value", path, f"the value{'s' if len(rejected) > 1 else ''} {shown}")]

    def _narrow_union(
        self, wide: dict[str, Any], narrow: dict[str, Any], keyword: str, branches: list[Any], path: tuple[str, ...]
    ) -> list[Gap]:
        found: list[Gap] = []
        for branch in branches:
            merged = self._merge(narrow, branch, keyword)
            if merged is None:
                return [self._unsure(path, f"{keyword} with constraints beside it")]
            found += self.compare(wide, merged, path)
        # Branches that reach one definition find the same gaps: each is said once, not once per branch.
        found = list(dict.fromkeys(found))
        if keyword == "oneOf" and not _disjoint(branches):
            # A value matching two branches is not allowed by oneOf: a gap may be one of those.
            found = [Gap(g.kind, g.path, g.message, certain=False) for g in found]
        return found

    def _wide_union(
        self, wide: dict[str, Any], narrow: dict[str, Any], keyword: str, branches: list[Any], path: tuple[str, ...]
    ) -> list[Gap]:
        kind = next(iter(_types(narrow) or ()), None)
        candidates: list[list[Gap]] = []
        for branch in branches:
            merged = self._merge(wide, branch, keyword)
            if merged is None:
                return [self._unsure(path, f"{keyword} with constraints beside it")]
            branch_gaps = self.compare(merged, narrow, path)
            if not branch_gaps:
                if keyword == "oneOf" and not _disjoint(branches):
                    return [self._unsure(path, "oneOf branches that overlap")]
                return []
            resolved, _ = self._resolve(merged, "wide", path)
            branch_types = _types(resolved) if isinstance(resolved, dict) else None
            if kind is None or _covers(kind, branch_types):
                candidates.append(branch_gaps)
        if not candidates:
            what = _describe_types({kind}) if kind else "any value"
            return [self._gap("type", path, what)]
        if len(candidates) == 1:
            return candidates[0]
        return [self._unsure(path, f"its values may be split across several {keyword} branches")]

    def _compare_plain(self, wide: dict[str, Any], narrow: dict[str, Any], path: tuple[str, ...]) -> list[Gap]:
        found: list[Gap] = []
        wide_types, narrow_types = _types(wide), _types(narrow)
        if "enum" in wide or "const" in wide:
            what = _describe_types(narrow_types) if narrow_types else "any value"
            return [self._gap("value", path, f"{what} beyond the listed values")]
        if wide_types is not None:
            if narrow_types is None:
                return [self._gap("type", path, "any type")]
            missing = {kind for kind in narrow_types if not _covers(kind, wide_types)}
            if missing:
                found.append(self._gap("type", path, _describe_types(missing)))
                narrow_types = narrow_types - missing
                if not narrow_types:
                    return found
        kinds = narrow_types if narrow_types is not None else set(ALL_TYPES)
        if "object" in kinds:
            found += self._compare_object(wide, narrow, path)
        if "array" in kinds:
            found += self._compare_array(wide, narrow, path)
        if kinds & {"number", "integer"}:
            found += self._bounds(wide, narrow, path, "minimum", "exclusiveMinimum", low=True, noun="values")
            found += self._bounds(wide, narrow, path, "maximum", "exclusiveMaximum", low=False, noun="values")
            multiple = wide.get("multipleOf")
            if multiple is not None:
                theirs = narrow.get("multipleOf")
                exact = isinstance(theirs, int | float) and isinstance(multiple, int | float) and multiple
                if not exact or (theirs / multiple) != int(theirs / multiple):
                    found.append(self._gap("bound", path, f"a number that is not a multiple of {multiple}"))
        if "string" in kinds:
            found += self._bounds(wide, narrow, path, "minLength", None, low=True, noun="strings of length")
            found += self._bounds(wide, narrow, path, "maxLength", None, low=False, noun="strings of length")
            pattern = wide.get("pattern")
            if pattern is not None and pattern not in TRIVIAL_PATTERNS and narrow.get("pattern") != pattern:
                if "pattern" in narrow:
                    found.append(self._unsure(path, f"its pattern changed to {pattern!r}"))
                else:
                    found.append(self._gap("bound", path, f"a string that does not match {pattern!r}"))
            fmt = wide.get("format")
            if fmt is not None and narrow.get("format") != fmt:
                found.append(self._unsure(path, f"format {fmt!r} is checked by some servers and not by others"))
        return found

    def _compare_object(self, wide: dict[str, Any], narrow: dict[str, Any], path: tuple[str, ...]) -> list[Gap]:
        found: list[Gap] = []
        wide_required = {r for r in wide.get("required") or [] if isinstance(r, str)}
        narrow_required = {r for r in narrow.get("required") or [] if isinstance(r, str)}
        for name in sorted(wide_required - narrow_required):
            found.append(
                Gap(
                    "required",
                    (*path, name),
                    f"{self._where((*path, name))}: {self.narrow_name} allows leaving it out; "
                    f"{self.wide_name} requires it",
                )
            )
        wide_props = wide.get("properties") if isinstance(wide.get("properties"), dict) else {}
        narrow_props = narrow.get("properties") if isinstance(narrow.get("properties"), dict) else {}
        wide_extra = wide.get("additionalProperties", True)
        for name, schema in narrow_props.items():
            if name in wide_props:
                found += self.compare(wide_props[name], schema, (*path, name))
            elif wide_extra is False:
                found.append(self._gap("property", (*path, name), "any value"))
            else:
                found += self.compare(wide_extra, schema, (*path, name))
        # Undeclared properties are taken as never sent, unless narrow says they may be.
        narrow_extra = narrow.get("additionalProperties")
        if narrow_extra is not None and narrow_extra is not False:
            for name, schema in wide_props.items():
                if name not in narrow_props:
                    found += self.compare(schema, narrow_extra, (*path, name))
            extra_gaps = self.compare(wide_extra, narrow_extra, (*path, "*"))
            if extra_gaps and wide_extra is False:
                found.append(self._gap("property", path, "an undeclared property"))
            else:
                found += extra_gaps
        found += self._bounds(wide, narrow, path, "minProperties", None, low=True, noun="objects with a property count")
        found += self._bounds(
            wide, narrow, path, "maxProperties", None, low=False, noun="objects with a property count"
        )
        return found

    def _compare_array(self, wide: dict[str, Any], narrow: dict[str, Any], path: tuple[str, ...]) -> list[Gap]:
        found: list[Gap] = []
        wide_items, narrow_items = wide.get("items", True), narrow.get("items", True)
        if isinstance(wide_items, list) or isinstance(narrow_items, list):
            if wide_items != narrow_items:
                found.append(self._unsure((*path, "[]"), "tuple-style items are compared only when unchanged"))
        else:
            found += self.compare(wide_items, narrow_items, (*path, "[]"))
        found += self._bounds(wide, narrow, path, "minItems", None, low=True, noun="arrays of length")
        found += self._bounds(wide, narrow, path, "maxItems", None, low=False, noun="arrays of length")
        if wide.get("uniqueItems") is True and narrow.get("uniqueItems") is not True:
            found.append(self._gap("bound", path, "an array with repeated items"))
        return found

    def _bounds(
        self,
        wide: dict[str, Any],
        narrow: dict[str, Any],
        path: tuple[str, ...],
        inclusive: str,
        exclusive: str | None,
        *,
        low: bool,
        noun: str,
    ) -> list[Gap]:
        def bound(schema: dict[str, Any]) -> tuple[float, bool] | None:
            found: tuple[float, bool] | None = None
            for key, strict in ((inclusive, False), (exclusive, True)):
                value = schema.get(key) if key else None
                if isinstance(value, bool) or not isinstance(value, int | float):
                    continue
                tighter = found is None or (value > found[0] if low else value < found[0])
                if tighter or (value == found[0] and strict):
                    found = (value, strict)
            return found

        theirs, ours = bound(wide), bound(narrow)
        if theirs is None:
            return []
        limit, strict = theirs
        if ours is not None:
            value, narrow_strict = ours
            looser = value < limit if low else value > limit
            if not looser and not (value == limit and strict and not narrow_strict):
                return []
        edge = (
            f"{'at or below' if low else 'at or above'} {limit}" if strict else f"{'below' if low else 'above'} {limit}"
        )
        return [self._gap("bound", path, f"{noun} {edge}")]
