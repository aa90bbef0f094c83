"""The thread-safe Tracer that keeps, writes and hands out trace records, and the McpHook an MCP client
calls for every message it sends or receives."""

from __future__ import annotations

import contextlib
import itertools
import json
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, NamedTuple

from appsdk_cli.trace.record import (
    CHANNELS,
    KINDS,
    PARTIES,
    dumps_record,
    dumps_record_with,
    kind_of,
    message_json,
    message_size,
    now_iso,
    open_trace_file,
)
from appsdk_cli.trace.redaction import Redactor

# What the kept records may take in memory. A count is no bound: one tools/list of a 5,000-tool server is
# megabytes, so 10,000 records of them were gigabytes. Kept as compact JSON lines (what a record costs
# as Python objects is several times that), parsed again when asked for.
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
# Requests still waiting for their answer, per tracer: enough for any real session, bounded for a broken one.
PENDING_LIMIT = 4_096


def _milliseconds(seconds: float) -> float | int:
    # Whole numbers as integers, so Python and JavaScript write the same bytes for a record.
    value = round(seconds * 1000, 3)
    return int(value) if value.is_integer() else value


Subscriber = Callable[[dict[str, Any]], None]


class Kept(NamedTuple):
    """What the in-memory buffer holds and has let go of (the oldest go first)."""

    records: int
    bytes: int
    dropped: int  # records let go of since the start or the last clear()
    max_bytes: int


def _line_cost(line: str) -> int:
    # The memory the kept line takes (a str of ASCII JSON is about one byte a character, plus its header).
    return sys.getsizeof(line)


class Tracer:
    """Collects trace records from any thread: keeps the newest that fit in `max_bytes` (and, when given,
    the last `limit`), tells subscribers, writes a file.

    The MCP client calls it as its trace hook, `tracer("send" | "receive", message)`, and `failed(message,
    problem)` when a request got no JSON-RPC answer; `client` names the client side ("appsdk" for the
    CLI, "workbench" for the workbench). `for_run(run)` gives a hook that stamps `run` on its records.
    Host pages' bridge and window.openai records come in whole through `add`.
    """

    def __init__(
        self,
        *,
        client: str = "appsdk",
        limit: int | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        sink: str | Path | IO[str] | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        if client not in PARTIES:
            raise ValueError(f"client must be one of {PARTIES}")
        self.client = client
        self._lock = threading.RLock()
        # Each kept record as its compact JSON line: a fraction of the memory of its dicts, and the
        # bytes a file or an export writes.
        self._lines: deque[str] = deque()
        self._limit = limit
        self._max_bytes = max_bytes
        self._kept_bytes = 0
        self._dropped = 0
        self._subscribers: list[Subscriber] = []
        self._pending: OrderedDict[tuple[str, str, str], tuple[str | None, float]] = OrderedDict()
        self._secrets: set[str] = {s for s in secrets if s}
        self._seq = 0
        # One clock for both: a record's time is the wall clock at the start plus the monotonic clock since,
        # so two records' times differ by their duration (a second clock reading could be a thread switch,
        # 5 ms, apart from the first).
        self._wall_at_start, self._clock_at_start = time.time(), time.monotonic()
        self._hooks = itertools.count(1)
        self._default_hook = McpHook(self)
        self._sink: IO[str] | None = None
        self._owns_sink = False
        self.sink_error: str | None = None
        if isinstance(sink, str | Path):
            self._sink = open_trace_file(sink)
            self._owns_sink = True
        elif sink is not None:
            self._sink = sink

    # --- context and lifecycle

    def __enter__(self) -> Tracer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._sink is not None and self._owns_sink:
                with contextlib.suppress(OSError):
                    self._sink.close()
            self._sink = None

    def add_secret(self, secret: str | None) -> None:
        """Blank this value wherever it appears in later records (a bearer token, a client secret)."""
        if secret:
            with self._lock:
                self._secrets.add(secret)

    # --- subscribers and the kept records

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call `subscriber(record)` for each new record (on the recording thread); returns an unsubscribe."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def records(self, run: str | None = None) -> list[dict[str, Any]]:
        """The kept records, oldest first (fresh objects, parsed from the kept lines)."""
        with self._lock:
            lines = list(self._lines)
        records = (json.loads(line) for line in lines)
        return [r for r in records if run is None or r.get("run") == run]

    def recent(self, count: int, max_bytes: int | None = None) -> list[dict[str, Any]]:
        """The newest `count` kept records, oldest first, fewer if they would take more than `max_bytes`
        (what a page that just opened is sent: a backlog, not the whole buffer)."""
        picked: list[str] = []
        spent = 0
        with self._lock:
            for line in reversed(self._lines):
                if len(picked) >= count:
                    break
                spent += _line_cost(line)
                if max_bytes is not None and spent > max_bytes:
                    break
                picked.append(line)
        return [json.loads(line) for line in reversed(picked)]

    def kept(self) -> Kept:
        with self._lock:
            return Kept(len(self._lines), self._kept_bytes, self._dropped, self._max_bytes)

    def clear(self) -> None:
        with self._lock:
            self._lines.clear()
            self._kept_bytes = 0
            self._dropped = 0
            self._pending.clear()

    def export(self, target: IO[str]) -> int:
        """Write the kept records to `target` as JSON lines, a line at a time; returns how many."""
        with self._lock:
            lines = list(self._lines)  # the strings are shared, not copied
        for line in lines:
            target.write(line + "\n")
        return len(lines)

    def jsonl(self) -> str:
        with self._lock:
            return "".join(line + "\n" for line in self._lines)

    # --- recording

    def __call__(self, direction: str, message: Any) -> None:
        self._default_hook(direction, message)

    def failed(self, message: Any, problem: BaseException) -> None:
        self._default_hook.failed(message, problem)

    def hook(self, run: str | None = None) -> McpHook:
        """A hook for one more client: its answers pair with its own requests only (ids restart per client)."""
        return McpHook(self, run, pairing=f"client-{next(self._hooks)}")

    def for_run(self, run: str, *, caller: str | None = None) -> McpHook:
        """The hook for the client of one workbench run: its records carry `run`, and `caller` when the
        requests are another party's (a widget's own tools/call, which the workbench makes for it)."""
        hook = self.hook(run)
        hook.caller = caller if caller in PARTIES else None
        return hook

    def message(
        self,
        channel: str,
        sender: str,
        receiver: str,
        message: Any,
        *,
        run: str | None = None,
        status: int | None = None,
        pairing: str | None = None,
        caller: str | None = None,
    ) -> dict[str, Any]:
        """Record one message from `sender` to `receiver`; pairs answers with their requests by id, among
        the messages of the same `pairing` (one client's; default: the same run)."""
        pairing = pairing if pairing is not None else run
        clock = time.monotonic()
        kind = kind_of(message)
        msg_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(msg_id, str | int) or isinstance(msg_id, bool):
            msg_id = None
        method = message.get("method") if isinstance(message, dict) and isinstance(message.get("method"), str) else None
        text, size = message_json(message) if message is not None else (None, 0)
        record: dict[str, Any] = {
            "time": self._time_at(clock),
            "seq": 0,
            "channel": channel,
            "from": sender,
            "to": receiver,
            "kind": kind,
            "method": method,
            "id": msg_id if kind != "notification" else None,
            "size": size,
        }
        with self._lock:
            if kind == "request" and msg_id is not None:
                self._remember(channel, sender, pairing, msg_id, method, clock)
            elif kind in ("response", "error") and msg_id is not None:
                # The answer's request went the other way: it was sent by this answer's receiver.
                asked = self._pending.pop(self._key(channel, receiver, pairing, msg_id), None)
                record["method"] = asked[0] if asked else method
                record["duration_ms"] = _milliseconds(clock - asked[1]) if asked else None
            elif kind in ("response", "error"):
                record["duration_ms"] = None
            if run is not None:
                record["run"] = run
            if caller is not None:
                record["caller"] = caller
            if status is not None:
                record["status"] = status
            redactor = Redactor(self._secrets)
            record["message"] = redactor.value(message)
            if redactor.hit:
                record["redacted"] = True
            return self._keep(record, None if redactor.hit else text)

    def _time_at(self, clock: float) -> str:
        return now_iso(self._wall_at_start + (clock - self._clock_at_start))

    def failure(
        self,
        request: dict[str, Any],
        why: str,
        *,
        status: int | None = None,
        run: str | None = None,
        body: dict[str, Any] | None = None,
        pairing: str | None = None,
        caller: str | None = None,
    ) -> dict[str, Any]:
        """The client's `request` failed: no answer (unreachable, timed out) or an HTTP error, whose JSON-RPC
        error `body` is the record's message when there was one. Paired with the request by its id."""
        clock = time.monotonic()
        pairing = pairing if pairing is not None else run
        msg_id = request.get("id") if isinstance(request.get("id"), str | int) else None
        method = request.get("method") if isinstance(request.get("method"), str) else None
        text, size = message_json(body) if body is not None else (None, 0)
        record: dict[str, Any] = {
            "time": self._time_at(clock),
            "seq": 0,
            "channel": "mcp",
            "from": "server",
            "to": self.client,
            "kind": "error",
            "method": method,
            "id": msg_id,
            "size": size,
            "duration_ms": None,
        }
        with self._lock:
            key = self._key("mcp", self.client, pairing, msg_id) if msg_id is not None else None
            asked = self._pending.pop(key, None) if key is not None else None
            if asked:
                record["duration_ms"] = _milliseconds(clock - asked[1])
            if run is not None:
                record["run"] = run
            if caller is not None:
                record["caller"] = caller
            if status is not None:
                record["status"] = status
            redactor = Redactor(self._secrets)
            record["failure"] = redactor.text(why)
            record["message"] = redactor.value(body)
            if redactor.hit:
                record["redacted"] = True
            return self._keep(record, None if redactor.hit else text)

    def add(self, record: dict[str, Any]) -> dict[str, Any]:
        """Keep a record made elsewhere (a host page's bridge traffic); filled in and redacted, not trusted."""
        message = record.get("message")
        complete: dict[str, Any] = {
            "time": record.get("time") if isinstance(record.get("time"), str) else now_iso(),
            "seq": 0,
            "channel": record.get("channel") if record.get("channel") in CHANNELS else "bridge",
            "from": record.get("from") if record.get("from") in PARTIES else "widget",
            "to": record.get("to") if record.get("to") in PARTIES else "host",
            "kind": record.get("kind") if record.get("kind") in KINDS else kind_of(message),
            "method": record.get("method") if isinstance(record.get("method"), str) else None,
            "id": record.get("id") if isinstance(record.get("id"), str | int) else None,
            "size": record.get("size") if isinstance(record.get("size"), int) else message_size(message),
        }
        duration = record.get("duration_ms")
        if complete["kind"] in ("response", "error"):
            complete["duration_ms"] = duration if isinstance(duration, int | float) and duration >= 0 else None
        for optional in ("run", "failure"):
            if isinstance(record.get(optional), str):
                complete[optional] = record[optional]
        if isinstance(record.get("status"), int):
            complete["status"] = record["status"]
        if record.get("caller") in PARTIES:
            complete["caller"] = record["caller"]
        with self._lock:
            redactor = Redactor(self._secrets)
            complete["message"] = redactor.value(message if isinstance(message, dict | list) else None)
            if complete["message"] is None and "failure" not in complete:
                complete["failure"] = "no message"
            if redactor.hit or record.get("redacted") is True:
                complete["redacted"] = True
            return self._keep(complete)

    # --- internals

    @staticmethod
    def _key(channel: str, asker: str, pairing: str | None, msg_id: str | int) -> tuple[str, str, str]:
        return (f"{channel}/{pairing or ''}", asker, json.dumps(msg_id))

    def _remember(
        self, channel: str, asker: str, pairing: str | None, msg_id: str | int, method: str | None, clock: float
    ) -> None:
        key = self._key(channel, asker, pairing, msg_id)
        self._pending.pop(key, None)
        self._pending[key] = (method, clock)
        while len(self._pending) > PENDING_LIMIT:
            self._pending.popitem(last=False)

    def _keep(self, record: dict[str, Any], message_text: str | None = None) -> dict[str, Any]:
        # Called with the lock held: sequence, file order and subscriber order are one order.
        # `message_text`: the message's compact JSON when its size was taken (and nothing redacted).
        self._seq += 1
        record["seq"] = self._seq
        try:
            if message_text is not None and next(reversed(record)) == "message":
                line: str | None = dumps_record_with(record, message_text)
            else:
                line = dumps_record(record)
        except (ValueError, RecursionError) as problem:
            line = None  # a message nested too deep to write: it reaches subscribers only
            if self._sink is not None:
                self.sink_error = str(problem)
                self._sink = None
        if line is not None:
            self._hold(line)
        if self._sink is not None and line is not None:
            try:
                self._sink.write(line + "\n")
                self._sink.flush()  # a crashed or killed run keeps every line written so far
            except (OSError, ValueError) as problem:
                self.sink_error = getattr(problem, "strerror", None) or str(problem)
                self._sink = None
        for subscriber in list(self._subscribers):
            # A broken viewer must not break the MCP session it watches.
            with contextlib.suppress(Exception):
                subscriber(record)
        return record

    def _hold(self, line: str) -> None:
        # Called with the lock held. The oldest go until the newest fit; a record larger than the whole
        # budget is not kept at all (it was written to the file and told to subscribers).
        cost = _line_cost(line)
        if cost > self._max_bytes:
            self._dropped += 1  # it alone would push out everything else
            return
        self._lines.append(line)
        self._kept_bytes += cost
        while self._lines and (
            self._kept_bytes > self._max_bytes or (self._limit is not None and len(self._lines) > self._limit)
        ):
            self._kept_bytes -= _line_cost(self._lines.popleft())
            self._dropped += 1


class McpHook:
    """One MCP client's trace hook, `hook(direction, message)`: pass one to one client (Tracer.hook)."""

    def __init__(self, tracer: Tracer, run: str | None = None, *, pairing: str = "client-0") -> None:
        self.tracer = tracer
        self.run = run
        self.pairing = pairing
        self.caller: str | None = None  # the party whose requests these are, when not the client's own

    def __call__(self, direction: str, message: Any) -> None:
        client = self.tracer.client
        sender, receiver = (client, "server") if direction == "send" else ("server", client)
        self.tracer.message("mcp", sender, receiver, message, run=self.run, pairing=self.pairing, caller=self.caller)

    def failed(self, message: Any, problem: BaseException) -> None:
        """`message` got no JSON-RPC answer, or its answer came as an HTTP error (status and body kept)."""
        if not isinstance(message, dict):
            return
        status = getattr(problem, "status", None)
        status = status if isinstance(status, int) else None
        body = _body_answer(getattr(problem, "detail", None))
        why = getattr(problem, "message", None) or str(problem) or type(problem).__name__
        self.tracer.failure(
            message, str(why), status=status, run=self.run, body=body, pairing=self.pairing, caller=self.caller
        )


def _body_answer(detail: Any) -> dict[str, Any] | None:
    """The JSON-RPC error the server sent as an HTTP error body, as sent (None if the body is not one)."""
    if not isinstance(detail, str) or not detail.lstrip().startswith("{"):
        return None
    try:
        answer = json.loads(detail)
    except (ValueError, RecursionError):
        return None
    return answer if isinstance(answer, dict) and isinstance(answer.get("error"), dict) else None
