"""Answers to a server's questions (form elicitation), from the command line or asked in a terminal.

A tool may ask the user mid-call: in 2026-07-28 as an `input_required` result (MRTR), in the 2025 era
as an `elicitation/create` request on the call's stream. Either way the question is a message and a
flat schema of fields; this turns `--answer KEY=VALUE` / `--answers JSON` and, in a terminal, one
prompt per missing field into the ElicitResult the server expects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from appsdk_cli.errors import AppsdkError, UsageError

# Asks for one field: (question message, field name, field schema, required) -> the typed text, or None.
Ask = Callable[[str, str, dict[str, Any], bool], str | None]


class Unanswered(AppsdkError):
    """The server asked and nothing can answer: no terminal and no --answer (exit 1)."""


def parse_answers(words: list[str] | None, answers_json: str | None) -> dict[str, Any]:
    """--answers JSON first, then each --answer KEY=VALUE over it (values stay text until a schema types them)."""
    answers: dict[str, Any] = {}
    if answers_json is not None:
        try:
            value = json.loads(answers_json)
        except ValueError as problem:
            raise UsageError(f"--answers is not valid JSON: {problem}") from None
        if not isinstance(value, dict):
            raise UsageError("--answers must be a JSON object, e.g. '{\"guests\": 2}'")
        answers.update(value)
    for word in words or []:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise UsageError(f"--answer {word!r} is not KEY=VALUE")
        answers[key] = value
    return answers


def choices(schema: dict[str, Any]) -> list[tuple[str, str | None]] | None:
    """The values a field (or, for an array, each of its items) may take, with their titles if titled.

    The elicitation schema's enum shapes: `enum` (+ the legacy `enumNames`), `oneOf`/`anyOf` of
    `{const, title}`, and for multi-select the same under `items`."""
    where = schema.get("items") if schema.get("type") == "array" and isinstance(schema.get("items"), dict) else schema
    if isinstance(where.get("enum"), list):
        names = where.get("enumNames") if isinstance(where.get("enumNames"), list) else []
        return [(str(v), str(names[i]) if i < len(names) else None) for i, v in enumerate(where["enum"])]
    for keyword in ("oneOf", "anyOf"):
        options = where.get(keyword)
        if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
            return [(str(o["const"]), str(o["title"]) if o.get("title") else None) for o in options]
    return None


def shown_default(schema: dict[str, Any]) -> str | None:
    """A field's default as a person types it: text as is, anything else as JSON (true, 42, ["a"])."""
    if "default" not in schema:
        return None
    default = schema["default"]
    return default if isinstance(default, str) else json.dumps(default, ensure_ascii=False)


def _typed(name: str, schema: dict[str, Any], value: Any) -> Any:
    """A value converted to the field's type; a UsageError-like Unanswered when it does not fit."""
    kind = schema.get("type")
    allowed = [v for v, _ in choices(schema) or []]
    if kind == "array":
        items = value if isinstance(value, list) else [v.strip() for v in str(value).split(",") if v.strip()]
        picked = [str(v) for v in items]
        wrong = [v for v in picked if allowed and v not in allowed]
        if wrong:
            raise Unanswered(f"the answer for {name!r} may hold only {', '.join(allowed)}, not {', '.join(wrong)}")
        return picked
    if not isinstance(value, str):
        if kind == "boolean" and isinstance(value, bool):
            return value
        if kind in ("integer", "number") and isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        value = json.dumps(value) if not isinstance(value, (int, float, bool)) else str(value)
    text = value.strip()
    try:
        if kind == "boolean":
            if text.lower() in ("true", "yes", "y", "1"):
                return True
            if text.lower() in ("false", "no", "n", "0"):
                return False
            raise ValueError
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text) if "." in text or "e" in text.lower() else int(text)
    except ValueError:
        raise Unanswered(f"the answer for {name!r} must be a {kind}, not {value!r}") from None
    if allowed and value not in allowed:
        raise Unanswered(f"the answer for {name!r} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def elicitor(answers: dict[str, Any], *, ask: Ask | None, tool: str = "the tool") -> Callable[[dict], dict]:
    """An on_elicit callback: given answers first, then `ask` (None: no terminal) for what is missing."""

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        message = str(params.get("message") or "")
        if params.get("mode") == "url":
            url = params.get("url")
            raise Unanswered(f"{tool} asks you to open {url} ({message}); appsdk cannot do URL elicitation")
        schema = params.get("requestedSchema") if isinstance(params.get("requestedSchema"), dict) else {}
        fields = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = [r for r in schema.get("required") or [] if isinstance(r, str)]
        content: dict[str, Any] = {}
        missing: list[str] = []
        for name, field_schema in fields.items():
            field_schema = field_schema if isinstance(field_schema, dict) else {}
            if name in answers:
                content[name] = _typed(name, field_schema, answers[name])
                continue
            if ask is not None:
                text = ask(message, name, field_schema, name in required)
                if text is None:
                    return {"action": "cancel"}  # the user gave up (end of input)
                if text == "" and "default" in field_schema:
                    content[name] = field_schema["default"]  # the value itself, not the text shown for it
                elif text != "" or name in required:
                    content[name] = _typed(name, field_schema, text)
                continue
            if "default" in field_schema:
                content[name] = field_schema["default"]
            elif name in required:
                missing.append(name)
        if missing:
            example = " ".join(f"--answer {name}=..." for name in missing)
            raise Unanswered(
                f"{tool} asks: {message!r} and stdin is not a terminal; answer with {example} (or --answers JSON)"
            )
        return {"action": "accept", "content": content}

    return answer
