"""Traffic traces: one record per message, in JSON lines, shared by `appsdk call --trace` and the workbench.

    from appsdk_cli.trace import Tracer
    with Tracer(sink="trace.jsonl") as tracer:   # an MCP client's trace hook, called for every message
        tracer("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    record.py      what a record is and how a trace file holds it: RECORD_SCHEMA, the compact JSON
                   line, reading and writing JSON lines, opening a --trace file (its docstring: the format)
    redaction.py   which values are secrets, and blanking them before a record is kept
    tracer.py      Tracer (thread-safe: keeps, pairs, writes and hands out records) and the McpHook one
                   MCP client calls for every message

The standard library only: `appsdk call` imports this on its fast path (jsonschema only in
`validate_record`).
"""

from __future__ import annotations

from appsdk_cli.trace.record import (
    CHANNELS,
    KINDS,
    PARTIES,
    RECORD_SCHEMA,
    TraceFileError,
    TraceFormatError,
    compact,
    dumps_record,
    iter_jsonl,
    kind_of,
    message_size,
    now_iso,
    open_trace_file,
    read_jsonl,
    validate_record,
    write_jsonl,
)
from appsdk_cli.trace.redaction import REDACTED, SECRET_KEYS, redact
from appsdk_cli.trace.tracer import DEFAULT_LIMIT, PENDING_LIMIT, McpHook, Subscriber, Tracer

__all__ = [
    "CHANNELS",
    "DEFAULT_LIMIT",
    "KINDS",
    "PARTIES",
    "PENDING_LIMIT",
    "RECORD_SCHEMA",
    "REDACTED",
    "SECRET_KEYS",
    "McpHook",
    "Subscriber",
    "TraceFileError",
    "TraceFormatError",
    "Tracer",
    "compact",
    "dumps_record",
    "iter_jsonl",
    "kind_of",
    "message_size",
    "now_iso",
    "open_trace_file",
    "read_jsonl",
    "redact",
    "validate_record",
    "write_jsonl",
]
