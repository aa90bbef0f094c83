"""Traffic traces: the record and its JSON lines, the Tracer, and `--trace FILE` against real servers.

Servers: the scaffold under `appsdk dev` (2026-07-28 and the 2025 handshake), tests/fixtures/eras_server.py
(MRTR questions in 2026-07-28, elicitation and progress on a 2025 event stream, stdio) and
@modelcontextprotocol/server-everything (streamable HTTP and HTTP+SSE, its progress and elicitation tools).
Every line a test writes is validated against trace.RECORD_SCHEMA and its requests paired with answers.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, INTEROP, RunningServer, appsdk, free_port, serve, stop

from appsdk_cli import trace
from appsdk_cli.scaffold import scaffold

EVERYTHING = INTEROP / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def stamp(record: dict) -> float:
    return datetime.fromisoformat(record["time"].replace("Z", "+00:00")).timestamp() * 1000


def checked_trace(path: Path) -> list[dict]:
    """The trace's records, each valid, in order, each answer paired with its request and timed right."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    records = trace.read_jsonl(path)
    assert records, "the trace is empty"
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    waiting: list[dict] = []
    for record in records:
        trace.validate_record(record)
        assert trace.dumps_record(record) + "\n" in text  # written compact, as Tracer.jsonl would
        if record["message"] is not None and not record.get("redacted"):
            assert record["size"] == len(trace.compact(record["message"]).encode())
        if record["kind"] == "request":
            waiting.append(record)
        elif record["kind"] in ("response", "error") and record["id"] is not None:
            asked = [r for r in waiting if r["id"] == record["id"] and r["from"] == record["to"]]
            assert asked, f"answer without a request: {record}"
            request = asked[-1]
            waiting.remove(request)
            assert record["method"] == request["method"] and record["to"] == request["from"]
            assert record["duration_ms"] is not None and record["duration_ms"] >= 0
            # Times are stamped to the millisecond; the duration comes from a monotonic clock.
            assert abs(record["duration_ms"] - (stamp(record) - stamp(request))) <= 2.5, (request, record)
    assert not waiting, f"requests never answered: {waiting}"
    return records


def methods(records: list[dict], kind: str | None = None) -> list[str]:
    return [r["method"] for r in records if kind is None or r["kind"] == kind]


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    return {"APPSDK_HOME": str(tmp_path / "home")}


# --- the record and the Tracer ---------------------------------------------------------------------


def test_records_pair_time_and_measure_messages():
    tracer = trace.Tracer()
    tracer("send", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}})
    tracer("receive", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}})
    # A server's own request may reuse an id of ours: pairing goes by who asked, not by the id alone.
    tracer("receive", {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {}})
    tracer("send", {"jsonrpc": "2.0", "id": 7, "result": {"action": "decline"}})
    tracer("receive", {"jsonrpc": "2.0", "id": 7, "error": {"code": -32000, "message": "no"}})
    kinds = [(r["kind"], r["method"], r["from"], r["to"]) for r in tracer.records()]
    assert kinds == [
        ("request", "tools/call", "appsdk", "server"),
        ("notification", "notifications/progress", "server", "appsdk"),
        ("request", "elicitation/create", "server", "appsdk"),
        ("response", "elicitation/create", "appsdk", "server"),
        ("error", "tools/call", "server", "appsdk"),
    ]
    records = tracer.records()
    assert "duration_ms" not in records[0] and records[1]["id"] is None
    assert records[4]["duration_ms"] >= records[3]["duration_ms"] >= 0
    assert records[0]["size"] == len(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}')
    for record in records:
        trace.validate_record(record)
    # A response whose request is not in the trace has a duration of null and no method of its own.
    tracer("receive", {"jsonrpc": "2.0", "id": 99, "result": {}})
    assert tracer.records()[-1]["duration_ms"] is None and tracer.records()[-1]["method"] is None


def test_two_clients_on_one_tracer_pair_their_own_ids():
    tracer = trace.Tracer(client="workbench")
    listing, calling = tracer.hook(), tracer.hook()
    calling("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}})
    listing("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    listing("receive", {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
    calling("receive", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
    answers = [r for r in tracer.records() if r["kind"] == "response"]
    assert [r["method"] for r in answers] == ["tools/list", "tools/call"]
    assert all(r["from"] == "server" and r["to"] == "workbench" for r in answers)


def test_the_schema_refuses_what_is_not_a_record():
    good = {
        "time": "2026-12-01T12:00:00.123Z",
        "channel": "bridge",
        "from": "widget",
        "to": "host",
        "kind": "request",
        "method": "ui/initialize",
        "id": 1,
        "size": 10,
        "message": {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize"},
    }
    trace.validate_record(good)
    for broken in (
        {**good, "channel": "http"},
        {**good, "from": "someone"},
        {**good, "kind": "reply"},
        {**good, "time": "yesterday"},
        {**good, "size": -1},
        {**good, "duration_ms": 3},  # a request has no duration
        {**good, "message": None},  # no message needs a failure saying why
        {k: v for k, v in good.items() if k != "method"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            trace.validate_record(broken)


def test_secrets_never_reach_a_record_a_file_or_a_subscriber(tmp_path: Path):
    heard: list[dict] = []
    sink = tmp_path / "trace.jsonl"
    with trace.Tracer(sink=sink, secrets=["s3cret-client-value"]) as tracer:
        tracer.subscribe(heard.append)
        tracer.add_secret("tok_9f8e7d6c5b4a")
        tracer(
            "send",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "login",
                    "arguments": {"password": "hunter2", "note": "use tok_9f8e7d6c5b4a or s3cret-client-value"},
                    "_meta": {"progressToken": "appsdk-1", "Authorization": "Bearer abc.def.1234567890"},
                },
            },
        )
        tracer("receive", {"jsonrpc": "2.0", "id": 1, "result": {"text": "header was Bearer eyJhbGciOi.J9.x1y2z3"}})
        tracer("receive", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "Bearer of news"}})
    written = sink.read_text()
    for text in (written, json.dumps(heard), json.dumps(tracer.records())):
        for secret in ("hunter2", "tok_9f8e7d6c5b4a", "s3cret-client-value", "abc.def.1234567890", "eyJhbGciOi"):
            assert secret not in text
    request, answer, note = tracer.records()
    assert request["redacted"] is True and answer["redacted"] is True and "redacted" not in note
    assert request["message"]["params"]["_meta"]["progressToken"] == "appsdk-1"  # a token by name only
    assert note["message"]["params"]["data"] == "Bearer of news"  # prose is not a credential
    assert heard == tracer.records()


def test_many_threads_one_order_in_memory_in_the_file_and_for_subscribers(tmp_path: Path):
    sink = tmp_path / "trace.jsonl"
    heard: list[int] = []
    with trace.Tracer(sink=sink, limit=500) as tracer:
        tracer.subscribe(lambda r: heard.append(r["seq"]))
        tracer.subscribe(lambda r: 1 / 0)  # a broken subscriber breaks nothing

        def talk(worker: int) -> None:
            hook = tracer.for_run(f"run-{worker}")
            for n in range(100):
                hook("send", {"jsonrpc": "2.0", "id": n, "method": "ping"})
                hook("receive", {"jsonrpc": "2.0", "id": n, "result": {}})

        threads = [threading.Thread(target=talk, args=(w,)) for w in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    lines = trace.read_jsonl(sink)
    assert [r["seq"] for r in lines] == list(range(1, 1601)) == heard
    kept = tracer.records()
    assert len(kept) == 500 and kept == lines[-500:]  # the bound keeps the newest
    # Each run's answers found their own run's requests, whatever the interleaving.
    answers = [r for r in lines if r["kind"] == "response"]
    assert len(answers) == 800 and all(r["method"] == "ping" and r["duration_ms"] is not None for r in answers)
    assert len(tracer.records(run="run-3")) <= 500
    tracer.clear()
    assert tracer.records() == []


def test_the_file_is_flushed_line_by_line(tmp_path: Path):
    sink = tmp_path / "trace.jsonl"
    tracer = trace.Tracer(sink=sink)
    tracer("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    # Still open (a run that crashes now keeps this line).
    assert [r["method"] for r in trace.read_jsonl(sink)] == ["tools/list"]
    tracer.close()


def test_host_records_are_completed_and_redacted():
    tracer = trace.Tracer(client="workbench", secrets=["widget-secret-123"])
    kept = tracer.add(
        {
            "channel": "openai",
            "from": "widget",
            "to": "host",
            "kind": "request",
            "method": "callTool",
            "id": 3,
            "run": "r1",
            "message": {"name": "x", "args": {"key": "widget-secret-123"}},
        }
    )
    assert kept["seq"] == 1 and kept["run"] == "r1" and kept["redacted"] is True
    assert kept["size"] == trace.message_size({"name": "x", "args": {"key": "widget-secret-123"}})
    trace.validate_record(kept)
    junk = tracer.add({"channel": "nonsense", "message": "not an object", "duration_ms": -4})
    trace.validate_record(junk)
    buffer = io.StringIO()
    trace.write_jsonl(tracer.records(), buffer)
    assert buffer.getvalue() == tracer.jsonl()
    assert list(trace.iter_jsonl(buffer.getvalue())) == tracer.records()


def test_a_broken_trace_file_is_named_by_line(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1}\nnot json\n')
    with pytest.raises(trace.TraceFormatError, match="line 2"):
        trace.read_jsonl(bad)
    with pytest.raises(trace.TraceFormatError, match="line 2"):
        trace.TraceIndex(bad)
    with pytest.raises(trace.TraceFormatError, match="line 3 of the trace is not UTF-8"):
        bad.write_bytes(b'{"seq": 1}\n\n{"seq": "\xff"}\n')
        list(trace.iter_trace(bad))


# --- bounded memory: the kept buffer, and reading big traces -------------------------------------------


def _big_answer(n: int, size: int) -> dict:
    return {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": f"{n:08d}" * (size // 8)}]}}


def test_the_kept_records_stay_within_their_bytes_whatever_their_number(tmp_path: Path):
    import tracemalloc

    sink, budget = tmp_path / "big.jsonl", 3_000_000
    heard = 0
    tracemalloc.start()
    try:
        with trace.Tracer(sink=sink, max_bytes=budget) as tracer:

            def count(_record: dict) -> None:
                nonlocal heard
                heard += 1

            tracer.subscribe(count)
            before = tracemalloc.get_traced_memory()[0]
            for n in range(300):  # 300 answers of 100 kB: 30 MB went through, ten times the budget
                tracer("send", {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "big"}})
                tracer("receive", _big_answer(n, 100_000))
                kept = tracer.kept()
                assert kept.bytes <= budget
            held = tracemalloc.get_traced_memory()[0] - before
            tracer("receive", _big_answer(999, 4_000_000))  # bigger than the whole budget: written, not kept
        assert tracer.kept().bytes <= budget
    finally:
        tracemalloc.stop()
    # What the kept lines really take in memory, not only what the tracer counts.
    assert held <= budget * 1.1, held
    lines = trace.read_jsonl(sink)
    assert heard == len(lines) == 601 and [r["seq"] for r in lines] == list(range(1, 602))
    kept_records = tracer.records()
    assert kept_records == lines[600 - len(kept_records) : 600]  # the newest, as written, but the 4 MB one
    assert kept_records[-1]["seq"] == 600 and 20 <= len(kept_records) < 601  # not the 4 MB one
    assert tracer.kept() == (len(kept_records), tracer.kept().bytes, 601 - len(kept_records), budget)
    assert tracer.recent(3) == kept_records[-3:]
    assert tracer.recent(100, max_bytes=150_000) == kept_records[-2:]  # one 100 kB answer and its request
    exported = io.StringIO()
    assert tracer.export(exported) == len(kept_records) and exported.getvalue() == tracer.jsonl()
    tracer.clear()
    assert tracer.kept() == (0, 0, 0, budget)


def _generated_trace(path: Path, records: int) -> None:
    """A trace of every kind of record, some with text UTF-8 spends two to four bytes on."""
    with trace.Tracer(sink=path) as tracer:
        for n in range(records // 3):
            tracer("send", {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": f"tool-{n}"}})
            tracer("receive", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": n}})
            text = "é日🙂" * (n % 7) + "x" * (n % 500)
            tracer("receive", {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": text}]}})


def test_a_trace_read_as_a_stream_or_by_offset_is_the_trace_read_whole(tmp_path: Path):
    path = tmp_path / "generated.jsonl"
    _generated_trace(path, 3_000)
    with path.open("a", encoding="utf-8") as more:
        more.write("\n")  # a blank line is no record, for either reader
    # The full read this replaces: the whole text, split into lines, each parsed.
    whole = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(whole) == 3_000
    assert list(trace.iter_trace(path)) == whole
    assert trace.read_jsonl(path) == whole
    index = trace.TraceIndex(path)
    assert len(index) == 3_000 and list(index) == whole
    assert [index.record(n) for n in (0, 1, 2, 1234, 2999, -1)] == [whole[n] for n in (0, 1, 2, 1234, 2999, -1)]
    page = index.page(1_500, 50)
    assert page == [{k: v for k, v in r.items() if k != "message"} for r in whole[1_500:1_550]]
    assert index.summary(7)["seq"] == 8 and "message" not in index.summary(7)
    assert len(index.page(2_990, 50)) == 10
    with pytest.raises(IndexError):
        index.record(3_000)


def test_a_message_serialised_once_is_written_as_dumps_record_writes_it(tmp_path: Path):
    path = tmp_path / "lines.jsonl"
    texts = ["plain", "é日🙂", "a\u2028b", "lone \ud800 surrogate", "Bearer abc.def"]
    with trace.Tracer(sink=path, secrets=["s3cret"]) as tracer:
        for n, text in enumerate(texts):
            tracer("send", {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"q": text}})
            tracer("receive", {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": text}]}})
        tracer("send", {"jsonrpc": "2.0", "id": 9, "method": "m\ud800é", "params": {"key": "s3cret"}})
        tracer("receive", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "é"}})
        tracer.failed({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}, OSError("refused"))
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]  # not splitlines(): U+2028 is no line end
    assert len(lines) == 2 * len(texts) + 3
    for line in lines:
        assert line == trace.dumps_record(json.loads(line))
    assert tracer.jsonl() == "".join(line + "\n" for line in lines)


def test_a_line_separator_inside_a_message_is_not_a_line_end(tmp_path: Path):
    path = tmp_path / "separators.jsonl"
    odd = "a\u2028b\u2029c\x85d\x1ce"  # compact JSON writes these raw; str.splitlines() splits on each
    with trace.Tracer(sink=path) as tracer:
        tracer("receive", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": odd}})
    (record,) = trace.iter_trace(path)
    assert record["message"]["params"]["data"] == odd
    assert list(trace.iter_jsonl(path.read_text(encoding="utf-8"))) == [record]
    assert trace.TraceIndex(path).record(0) == record


def test_reading_a_big_trace_holds_one_record_at_a_time(tmp_path: Path):
    import tracemalloc

    path = tmp_path / "big.jsonl"
    with trace.Tracer(sink=path, max_bytes=0) as tracer:
        for n in range(400):
            tracer("receive", _big_answer(n, 50_000))
    assert path.stat().st_size > 20_000_000
    tracemalloc.start()
    try:
        seen = sum(1 for _ in trace.iter_trace(path))
        streamed = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        index = trace.TraceIndex(path)
        opened = index.record(200)
        indexed = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seen == len(index) == 400 and opened["id"] == 200
    # A 20 MB file, read in well under 1 MB: a line (50 kB) and its record at a time.
    assert streamed < 1_000_000 and indexed < 1_000_000, (streamed, indexed)


# --- appsdk call --trace against real servers ---------------------------------------------------------


@pytest.fixture(scope="module")
def dev_url(tmp_path_factory) -> Iterator[str]:
    from test_dev import start_dev

    project = scaffold("book-club", tmp_path_factory.mktemp("trace")).path
    dev = start_dev(project)
    yield dev.url
    stop(dev.process)


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_call_trace_on_the_scaffold_under_dev(dev_url, home, tmp_path: Path, protocol):
    path = tmp_path / "call.jsonl"
    result = appsdk(
        "call", "list-books", "month=May", "--url", dev_url, "--protocol", protocol, "--trace", str(path), env=home
    )
    assert result.returncode == 0, result.stderr
    records = checked_trace(path)
    assert all(r["channel"] == "mcp" for r in records)
    if protocol == "auto":
        # 2026-07-28: a discover, then one exchange per request, no handshake.
        assert methods(records, "request") == ["server/discover", "tools/list", "tools/call"]
    else:
        assert methods(records) == [
            "initialize",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/list",
            "tools/call",
            "tools/call",
        ]
    call = next(r for r in records if r["method"] == "tools/call" and r["kind"] == "response")
    assert call["message"]["result"]["structuredContent"]["books"][0]["title"] == "Frankenstein"
    assert call["duration_ms"] > 0

    # The same format from read and tools (whose era probe is traffic too).
    read_path, tools_path = tmp_path / "read.jsonl", tmp_path / "tools.jsonl"
    read = appsdk("read", "ui://widget/book-list.html", "--url", dev_url, "--trace", str(read_path), env=home)
    assert read.returncode == 0, read.stderr
    assert "resources/read" in methods(checked_trace(read_path), "response")
    tools = appsdk("tools", "--url", dev_url, "--trace", str(tools_path), env=home)
    assert tools.returncode == 0, tools.stderr
    tools_records = checked_trace(tools_path)
    assert "tools/list" in methods(tools_records, "response") and "initialize" in methods(tools_records, "response")


def test_a_bad_trace_path_is_one_line_and_exit_2(dev_url, home, tmp_path: Path):
    for path in (tmp_path / "no" / "such" / "dir" / "t.jsonl", tmp_path):
        result = appsdk("call", "list-books", "--url", dev_url, "--trace", str(path), env=home)
        assert result.returncode == 2, result.stderr
        assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "--trace" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "no").exists()


def test_a_failed_call_keeps_its_trace(home, tmp_path: Path):
    path = tmp_path / "dead.jsonl"
    port = free_port()
    result = appsdk("call", "x", "--url", f"http://127.0.0.1:{port}/mcp", "--trace", str(path), env=home)
    assert result.returncode == 1
    records = checked_trace(path)
    assert records[0]["kind"] == "request" and records[1]["kind"] == "error"
    assert records[1]["message"] is None and "cannot reach" in records[1]["failure"]


def test_modern_questions_are_traced_round_by_round(eras_app, home, tmp_path: Path):
    path = tmp_path / "mrtr.jsonl"
    answers = '{"guests": 2, "name": "Ada"}'
    result = appsdk(
        "call", "book-table", "restaurant=Noma", "--answers", answers, "--url", eras_app.url, "--trace", str(path),
        env=home,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    records = checked_trace(path)
    calls = [r for r in records if r["method"] == "tools/call"]
    # input_required, then the retry carrying the answers, then the result.
    assert [r["kind"] for r in calls] == ["request", "response", "request", "response"]
    assert calls[1]["message"]["result"]["resultType"] == "input_required"
    assert "inputResponses" in calls[2]["message"]["params"]
    assert calls[3]["message"]["result"]["structuredContent"]["name"] == "Ada"


def test_handshake_elicitation_progress_and_logs_on_the_stream(eras_stateful, home, tmp_path: Path):
    path = tmp_path / "stream.jsonl"
    base = ("--url", eras_stateful.url, "--protocol", "2025-11-25", "--trace", str(path))
    result = appsdk("call", "count-slowly", "steps=3", *base, env=home)
    assert result.returncode == 0, result.stderr
    records = checked_trace(path)
    assert methods(records, "notification").count("notifications/progress") == 3
    assert methods(records, "notification").count("notifications/message") == 3
    asked = appsdk(
        "call", "book-table", "restaurant=Noma", "--answer", "guests=2", "--answer", "name=Ada", *base, env=home
    )
    assert asked.returncode == 0, asked.stderr
    records = checked_trace(path)  # rewritten, not appended
    assert records[0]["method"] == "initialize"
    question, answer = [r for r in records if r["method"] == "elicitation/create"]
    assert (question["kind"], question["from"], answer["kind"], answer["from"]) == (
        "request",
        "server",
        "response",
        "appsdk",
    )
    assert answer["message"]["result"]["content"] == {"guests": 2, "name": "Ada", "vegan": False}


def test_stdio_is_traced(home, tmp_path: Path):
    path = tmp_path / "stdio.jsonl"
    command = f'"{sys.executable}" "{FIXTURES / "eras_server.py"}" stdio'
    result = appsdk("call", "count-slowly", "steps=2", "--stdio", command, "--trace", str(path), env=home)
    assert result.returncode == 0, result.stderr
    records = checked_trace(path)
    assert "tools/call" in methods(records, "response")
    assert methods(records, "notification").count("notifications/progress") == 2


def everything(mode: str) -> RunningServer:
    port = free_port()
    return serve(["node", str(EVERYTHING), mode], port, cwd=INTEROP, env={"PORT": str(port)})


@pytest.mark.parametrize(("mode", "path"), [("streamableHttp", "/mcp"), ("sse", "/sse")])
def test_server_everything_progress_and_elicitation(node_clients, home, tmp_path: Path, mode, path):
    server = everything(mode)
    url = f"http://127.0.0.1:{server.port}{path}"
    try:
        slow_path, asked_path = tmp_path / "slow.jsonl", tmp_path / "asked.jsonl"
        slow = appsdk(
            "call", "trigger-long-running-operation", "duration=1", "steps=3", "--url", url, "--trace", str(slow_path),
            env=home,
        )  # fmt: skip
        assert slow.returncode == 0, slow.stderr
        records = checked_trace(slow_path)
        progress = [r for r in records if r["method"] == "notifications/progress"]
        assert [r["message"]["params"]["progress"] for r in progress] == [1, 2, 3]
        call_request = next(r for r in records if r["method"] == "tools/call")
        call_answer = [r for r in records if r["method"] == "tools/call"][-1]
        # The notifications came while the call ran: after its request, before its answer.
        assert all(call_request["seq"] < r["seq"] < call_answer["seq"] for r in progress)
        assert call_answer["duration_ms"] >= 900
        asked = appsdk(
            "call", "trigger-elicitation-request", "--answer", "name=Ada", "--answer", "check=true", "--url", url,
            "--trace", str(asked_path), env=home,
        )  # fmt: skip
        assert asked.returncode == 0, asked.stderr
        question, answer = [r for r in checked_trace(asked_path) if r["method"] == "elicitation/create"]
        assert question["from"] == "server" and answer["from"] == "appsdk" and answer["kind"] == "response"
    finally:
        stop(server.process)


def test_a_token_never_lands_in_the_trace(node_clients, home, tmp_path: Path):
    server = everything("streamableHttp")
    token = "tok-7c1e9a2b44d0f5"
    path = tmp_path / "token.jsonl"
    try:
        result = appsdk(
            "call", "echo", f"message=my token is {token}", "--token", token, "--url",
            f"http://127.0.0.1:{server.port}/mcp", "--trace", str(path), env=home,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
    finally:
        stop(server.process)
    text = path.read_text()
    assert token not in text and trace.REDACTED in text
    echoed = [r for r in checked_trace(path) if r["method"] == "tools/call"]
    assert all(r["redacted"] for r in echoed)


def test_text_utf8_cannot_carry_is_escaped_not_lost(tmp_path: Path):
    sink = tmp_path / "trace.jsonl"
    with trace.Tracer(sink=sink) as tracer:
        # A lone surrogate is valid JSON text but not UTF-8: the line is escaped instead of dropping the file.
        tracer("receive", json.loads('{"jsonrpc": "2.0", "id": 1, "result": {"text": "\\ud800 é"}}'))
        tracer("receive", {"jsonrpc": "2.0", "id": 2, "result": {"text": "é"}})
    assert tracer.sink_error is None
    first, second = trace.read_jsonl(sink)
    assert first["message"]["result"]["text"] == "\ud800 é" and second["message"]["result"]["text"] == "é"
    assert '"é"' in sink.read_text(encoding="utf-8").splitlines()[1]
