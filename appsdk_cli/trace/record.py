"""The trace record and its file format: JSON lines, one record per message.

A record is one JSON object (one line of a trace file):

    {"time": "2026-12-01T12:00:00.123Z", "seq": 3, "channel": "mcp", "from": "appsdk", "to": "server",
     "kind": "response", "method": "tools/call", "id": 2, "size": 412, "duration_ms": 18.4, "message": {...}}

- `channel` is `mcp` (client <-> MCP server), `bridge` (MCP Apps postMessage between host and widget) or
  `openai` (the `window.openai` API); `from`/`to` are `appsdk`, `workbench`, `server`, `host` or `widget`.
- `kind` is `request`, `response`, `error` (a JSON-RPC error, or a request that got no answer at all) or
  `notification`. A response's `method` is its request's; `id` is the JSON-RPC id (null for notifications).
- `size` is the UTF-8 byte length of the message as compact JSON, taken before redaction.
- `duration_ms` (responses and errors only) is the time since their request was recorded; null when the
  request is not in the trace.
- Optional: `run` (which workbench run), `caller` (whose request an MCP exchange carries when it is not
  the client's own: `widget` for a widget's tools/call the workbench makes for it), `status` (the HTTP
  status an error came with), `failure` (why a request got no JSON-RPC answer; then `message` is null),
  `redacted` (true when secrets were blanked).

The workbench's traffic panel writes the same bytes for a record as `dumps_record` does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.safewrite import default_root, open_in_place

CHANNELS = ("mcp", "bridge", "openai")
PARTIES = ("appsdk", "workbench", "server", "host", "widget")
KINDS = ("request", "response", "error", "notification")

RECORD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "appsdk trace record",
    "type": "object",
    "required": ["time", "channel", "from", "to", "kind", "method", "id", "size", "message"],
    "properties": {
        "time": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"},
        "seq": {"type": "integer", "minimum": 1},
        "channel": {"enum": list(CHANNELS)},
        "from": {"enum": list(PARTIES)},
        "to": {"enum": list(PARTIES)},
        "kind": {"enum": list(KINDS)},
        "method": {"type": ["string", "null"]},
        "id": {"type": ["string", "integer", "null"]},
        "size": {"type": "integer", "minimum": 0},
        "duration_ms": {"type": ["number", "null"], "minimum": 0},
        "run": {"type": "string"},
        "caller": {"enum": list(PARTIES)},
        "status": {"type": "integer"},
        "failure": {"type": "string"},
        "redacted": {"const": True},
        "message": {"type": ["object", "array", "null"]},
    },
    "allOf": [
        # Only an answer has a duration; a request without an answer says why instead of carrying a message.
        {
            "if": {"properties": {"kind": {"enum": ["request", "notification"]}}},
            "then": {"not": {"required": ["duration_ms"]}},
        },
        {"if": {"properties": {"message": {"type": "null"}}}, "then": {"required": ["failure"]}},
        {"if": {"properties": {"kind": {"const": "notification"}}}, "then": {"properties": {"id": {"type": "null"}}}},
    ],
}


class TraceFileError(UsageError):
    """The trace file cannot be written (exit 2: the path on the command line is wrong)."""


class TraceFormatError(AppsdkError):
    """A trace file line is not a trace record."""


# --- records -----------------------------------------------------------------------------------------


def now_iso(at: float | None = None) -> str:
    """UTC to the millisecond: now, or at `at` (seconds since the epoch)."""
    stamp = datetime.now(UTC) if at is None else datetime.fromtimestamp(at, UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def compact(value: Any) -> str:
    """The JSON text a record or message is measured and written as (what `JSON.stringify` gives, too)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _utf8_line(value: Any) -> bytes:
    try:
        return compact(value).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a server may send "\ud800"): escaped, as JSON.stringify does it.
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def message_size(message: Any) -> int:
    try:
        return len(_utf8_line(message))
    except (TypeError, ValueError, RecursionError):
        return 0


def message_json(message: Any) -> tuple[str | None, int]:
    """The message's compact JSON and its size (as `message_size`), made once for both. The text is None
    when a line cannot reuse it: a lone surrogate (the whole line is then written as escaped ASCII), or
    a message that cannot be written at all (size 0)."""
    try:
        text = compact(message)
    except (TypeError, ValueError, RecursionError):
        return None, 0
    try:
        return text, len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None, message_size(message)


def kind_of(message: Any) -> str:
    """request | response | error | notification, read off a JSON-RPC message's shape."""
    if not isinstance(message, dict):
        return "error"
    if "method" in message:
        return "request" if message.get("id") is not None else "notification"
    return "error" if "error" in message else "response"


def validate_record(record: Any) -> None:
    """Raise jsonschema.ValidationError unless `record` is a trace record (jsonschema imported here only)."""
    import jsonschema

    jsonschema.validate(record, RECORD_SCHEMA)


def dumps_record(record: dict[str, Any]) -> str:
    return _utf8_line(record).decode("utf-8")


def dumps_record_with(record: dict[str, Any], message_text: str) -> str:
    """`dumps_record(record)`, the same text, for a record whose last key is `message` and whose message's
    compact JSON is `message_text` already: a big message is not serialised a second time."""
    head = compact({key: value for key, value in record.items() if key != "message"})
    try:
        head.encode("utf-8")
    except UnicodeEncodeError:
        return dumps_record(record)  # escaped ASCII throughout, as dumps_record writes it
    return f'{head[:-1]},"message":{message_text}}}'


def write_jsonl(records: Iterable[dict[str, Any]], target: IO[str]) -> None:
    for record in records:
        target.write(dumps_record(record) + "\n")


def parse_line(line: str | bytes, number: int) -> dict[str, Any]:
    """One line of a trace file (text, or its UTF-8 bytes) as its record; a TraceFormatError naming the line
    unless it is a JSON object."""
    try:
        record = json.loads(line)
    except UnicodeDecodeError as problem:
        raise TraceFormatError(f"line {number} of the trace is not UTF-8: {problem}") from None
    except ValueError as problem:
        raise TraceFormatError(f"line {number} of the trace is not JSON: {problem}") from None
    if not isinstance(record, dict):
        raise TraceFormatError(f"line {number} of the trace is not a JSON object")
    return record


def iter_jsonl(text: str) -> Iterator[dict[str, Any]]:
    """The records of a trace file's text; a line that is not a JSON object is a TraceFormatError."""
    # Split on newlines only: a record written compact may hold U+2028 or U+0085 raw, which splitlines()
    # would take for line ends.
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield parse_line(line, number)


# --- files -------------------------------------------------------------------------------------------


def open_trace_file(path: str | Path) -> IO[str]:
    """Open (truncate) a trace file for writing, or say in one line why not (exit 2)."""
    target = Path(path)
    if target.is_dir():
        raise TraceFileError(f"--trace {path}: is a folder; give a file name, e.g. {target / 'trace.jsonl'}")
    if not target.parent.is_dir():
        raise TraceFileError(f"--trace {path}: the folder {target.parent} does not exist; create it or pick another")
    try:
        # Written as calls happen (not replaced at the end), so opened in place: a link under its name is refused.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        return os.fdopen(open_in_place(target, flags, root=default_root(target), mode=0o666), "w", encoding="utf-8")
    except OSError as problem:
        reason = problem.strerror or str(problem)
        raise TraceFileError(
            f"--trace {path}: cannot write it ({reason}); pick a file in a folder you can write"
        ) from None
