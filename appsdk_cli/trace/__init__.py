"""Traffic traces: one record per message, in JSON lines, shared by `appsdk call --trace` and the workbench.

    from appsdk_cli.trace import Tracer
    with Tracer(sink="trace.jsonl") as tracer:   # an MCP client's trace hook, called for every message
        tracer("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    record.py      what a record is and how a trace file holds it: RECORD_SCHEMA, the compact JSON
                   line, parsing and writing JSON lines, opening a --trace file (its docstring: the format)
    reader.py      reading a trace file without holding it: streamed (iter_trace) or indexed by offset,
                   a record's body read when asked for (TraceIndex)
    redaction.py   which values are secrets, and blanking them before a record is kept
    tracer.py      Tracer (thread-safe: keeps the newest records within a byte budget, pairs, writes
                   and hands out records) and the McpHook one MCP client calls for every message

The standard library only: `appsdk call` imports this on its fast path (jsonschema only in
`validate_record`).
"""

from __future__ import annotations

from appsdk_cli.trace.reader import TraceIndex, iter_trace, read_jsonl
from appsdk_cli.trace.record import (
    CHANNELS,
    KINDS,
    PARTIES,
    RECORD_SCHEMA,
    TraceFileError,
    TraceFormatError,
    compact,
    dumps_record,
    dumps_record_with,
    iter_jsonl,
    kind_of,
    message_json,
    message_size,
    now_iso,
    open_trace_file,
    parse_line,
    validate_record,
    write_jsonl,
)
from appsdk_cli.trace.redaction import REDACTED, SECRET_KEYS, redact
from appsdk_cli.trace.tracer import DEFAULT_MAX_BYTES, PENDING_LIMIT, Kept, McpHook, Subscriber, Tracer

__all__ = [
    "CHANNELS",
    "DEFAULT_MAX_BYTES",
    "KINDS",
    "PARTIES",
    "PENDING_LIMIT",
    "RECORD_SCHEMA",
    "REDACTED",
    "SECRET_KEYS",
    "Kept",
    "McpHook",
    "Subscriber",
    "TraceFileError",
    "TraceFormatError",
    "TraceIndex",
    "Tracer",
    "compact",
    "dumps_record",
    "dumps_record_with",
    "iter_jsonl",
    "iter_trace",
    "kind_of",
    "message_json",
    "message_size",
    "now_iso",
    "open_trace_file",
    "parse_line",
    "read_jsonl",
    "redact",
    "validate_record",
    "write_jsonl",
]
