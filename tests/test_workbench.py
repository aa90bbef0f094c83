"""The workbench's server without a browser: runs over its JSON API, the push channel, the multi-run
preview server underneath, cancel, argument checks, and the origin rules. Against a real MCP server
(tests/fixtures/workbench_app.py) on loopback."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import RunningServer, free_port

from appsdk_cli.connection import Target
from appsdk_cli.scaffold import scaffold
from appsdk_cli.workbench import Workbench
from appsdk_cli.workbench.server import argument_problems


@pytest.fixture
def bench(trip_app: RunningServer) -> Iterator[Workbench]:
    with Workbench(Target(url=trip_app.url)) as running:
        yield running


def request(bench: Workbench, method: str, path: str, body: object = None, origin: str | None = "own"):
    parts = urlsplit(bench.url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    headers = {"Content-Type": "application/json"}
    if origin == "own":
        headers["Origin"] = bench.host.host_origin
    elif origin:
        headers["Origin"] = origin
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    try:
        return response.status, json.loads(data)
    except ValueError:
        return response.status, data.decode()


class EventReader:
    """The page's side of /api/events: parsed (event, data) pairs as they come."""

    def __init__(self, bench: Workbench) -> None:
        parts = urlsplit(bench.url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
        self.connection.request("GET", "/api/events")
        self.response = self.connection.getresponse()
        assert self.response.status == 200
        assert self.response.getheader("Content-Type").startswith("text/event-stream")

    def next(self) -> tuple[str, object]:
        event, data = None, None
        while True:
            line = self.response.fp.readline().decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
            elif line == "" and event is not None:
                return event, data

    def until(self, wanted, timeout: float = 20.0) -> object:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            event, data = self.next()
            if wanted(event, data):
                return data
        raise AssertionError("the event never came")

    def close(self) -> None:
        self.connection.close()


def test_a_run_is_called_on_the_server_and_served_as_a_host_page_session(bench: Workbench) -> None:
    events = EventReader(bench)
    assert events.next()[0] == "hello"
    body = {"tool": "plan-trip", "arguments": {"city": "Oslo", "nights": 2}}
    status, answer = request(bench, "POST", "/api/runs", body)
    assert status == 202 and answer["run"]["status"] == "running"
    run_id = answer["run"]["id"]
    done = events.until(lambda e, d: e == "run" and d["id"] == run_id and d["status"] != "running")
    events.close()
    assert done["status"] == "done", done
    assert done["result"]["structuredContent"]["city"] == "Oslo"
    assert done["widget"] is True and done["templateUri"] == "ui://widget/trip.html"
    assert done["invoked"] == "Trip planned"

    # The run is a session of the multi-run preview server: the host page and the widget read it by id.
    status, session = request(bench, "GET", f"/api/session?run={run_id}")
    assert status == 200 and session["run"] == run_id and session["arguments"] == {"city": "Oslo", "nights": 2}
    assert session["toolDefinition"]["name"] == "plan-trip"
    html, _csp = bench.host.widget_document({"run": run_id})
    assert "window.openai" in html and "Oslo" in html
    # No run named, and none made by `appsdk preview TOOL`: a clear 404, not a crash.
    status, missing = request(bench, "GET", "/api/session")
    assert status == 404 and "no default run" in missing["error"]["message"]
    status, unknown = request(bench, "POST", "/api/call?run=nope", {"name": "plan-trip", "bridge": "mcp-apps"})
    assert status == 404 and "no run 'nope'" in unknown["error"]["message"]


def test_a_rerun_keeps_the_id_and_the_widget_state(bench: Workbench) -> None:
    run = bench.start_run("plan-trip", {"city": "Oslo", "nights": 2})
    wait_done(bench, run.id, calls=1)
    bench.host.set_widget_state({"count": 3}, run.id)
    bench.rerun(run.id, {"city": "Bergen", "nights": 4})
    wait_done(bench, run.id, calls=2)
    assert bench.get_run(run.id).result["structuredContent"]["city"] == "Bergen"
    assert bench.host.widget_state(run.id) == {"count": 3}
    _, session = request(bench, "GET", f"/api/session?run={run.id}")
    assert session["result"]["structuredContent"]["city"] == "Bergen"


def test_arguments_that_do_not_fit_the_schema_never_reach_the_server(bench: Workbench) -> None:
    run = bench.start_run("plan-trip", {"city": "Oslo", "nights": 0, "pace": "sprint"})
    finished = wait_done(bench, run.id, status="invalid")
    assert "nights: 0 is less than the minimum of 1" in finished.error
    assert "pace: 'sprint' is not one of ['slow', 'normal', 'fast']" in finished.error
    unknown = bench.start_run("plan-trips", {})
    assert "has no tool 'plan-trips'" in wait_done(bench, unknown.id, status="invalid").error


def test_cancel_drops_a_call_in_flight(bench: Workbench) -> None:
    run = bench.start_run("slow", {"seconds": 30})
    deadline = time.monotonic() + 10
    while not bench.connected(run.id) and time.monotonic() < deadline:
        time.sleep(0.02)
    started = time.monotonic()
    status, answer = request(bench, "POST", "/api/runs/cancel", {"run": run.id})
    assert status == 200 and answer["run"]["status"] == "cancelled"
    assert time.monotonic() - started < 5
    # The server is fine, and the workbench calls it again at once.
    again = bench.start_run("plan-trip", {"city": "Oslo", "nights": 1})
    assert wait_done(bench, again.id).status == "done"
    assert bench.get_run(run.id).status == "cancelled"


def test_a_cancelled_call_on_a_kept_alive_connection_ends_at_once_and_is_not_sent_again(
    trip_app: RunningServer,
) -> None:
    """Cancel drops the call's connection. The call reuses tools/list's kept-alive connection, and a dropped
    kept-alive connection used to read as a stale one: the call went out again and waited its 30 s."""
    import threading

    from appsdk_cli.connection import session
    from appsdk_cli.errors import AppsdkError

    outcome: dict[str, object] = {}
    with session(Target(url=trip_app.url)) as client:
        client.list_tools()

        def call() -> None:
            started = time.monotonic()
            try:
                client.call_tool("slow", {"seconds": 30})
            except AppsdkError as problem:
                outcome["error"] = problem.message
            outcome["seconds"] = time.monotonic() - started

        thread = threading.Thread(target=call)
        thread.start()
        time.sleep(1)
        client.cancel("cancelled by the test")
        thread.join(10)
        assert not thread.is_alive(), "the cancelled call was still waiting 10 s later"
    assert "abandoned" in str(outcome.get("error")), outcome
    assert float(outcome["seconds"]) < 5, outcome  # type: ignore[arg-type]


def test_clear_forgets_the_runs_and_their_host_sessions(bench: Workbench) -> None:
    done = bench.start_run("plan-trip", {"city": "Oslo", "nights": 1})
    wait_done(bench, done.id)
    flying = bench.start_run("slow", {"seconds": 30})
    assert request(bench, "POST", "/api/runs/clear", {})[0] == 200
    assert bench.runs() == [] and flying.status == "cancelled"
    assert request(bench, "GET", f"/api/session?run={done.id}")[0] == 404


def test_only_the_page_may_start_runs(bench: Workbench) -> None:
    body = {"tool": "plan-trip", "arguments": {"city": "Oslo", "nights": 1}}
    assert request(bench, "POST", "/api/runs", body, origin="http://evil.example")[0] == 403
    assert request(bench, "POST", "/api/runs", body, origin=None)[0] == 403
    assert bench.runs() == []


def test_the_tools_listing_carries_the_metadata_the_page_shows(bench: Workbench) -> None:
    status, listing = request(bench, "GET", "/api/tools")
    assert status == 200
    tools = {t["name"]: t for t in listing["tools"]}
    assert tools["plan-trip"]["template"] == "ui://widget/trip.html"
    assert tools["plan-trip"]["invoking"] == "Planning the trip"
    assert tools["plan-trip"]["tool"]["inputSchema"]["required"] == ["city", "nights"]
    assert tools["slow"]["template"] is None


def test_a_dev_reload_reaches_every_open_page(bench: Workbench) -> None:
    first, second = EventReader(bench), EventReader(bench)
    for reader in (first, second):
        assert reader.next()[0] == "hello"
    bench.reloaded(("server.py",), {"added": (), "removed": (), "changed": ("plan-trip",)}, notice="Refresh needed")
    for reader in (first, second):
        reload = reader.until(lambda e, d: e == "reload")
        assert reload["files"] == ["server.py"] and reload["codeChanged"] is True
        assert reload["notice"] == "Refresh needed" and reload["tools"]["changed"] == ["plan-trip"]
        reader.close()


def test_a_reload_pushed_early_gets_its_tool_news_after_and_a_page_opened_later_sees_both(bench: Workbench) -> None:
    reader = EventReader(bench)
    assert reader.next()[0] == "hello"
    # As `appsdk dev` pushes it: the moment the new code answers (nothing known of its tools yet) ...
    bench.reloaded(("widgets/trip.html",), None, seconds=0.05)
    reload = reader.until(lambda e, d: e == "reload")
    assert reload["tools"] is None and reload["notice"] is None and reload["codeChanged"] is False
    # ... then what dev read of the new code.
    bench.reload_news({"added": (), "removed": (), "changed": ("plan-trip",)}, "Refresh needed")
    news = reader.until(lambda e, d: e == "reload-news")
    assert news == {"tools": {"added": [], "removed": [], "changed": ["plan-trip"]}, "notice": "Refresh needed"}
    reader.close()
    later = EventReader(bench)
    kind, hello = later.next()
    assert kind == "hello"
    assert hello["info"]["lastReload"]["notice"] == "Refresh needed"
    assert hello["info"]["lastReload"]["files"] == ["widgets/trip.html"]
    # A reload that changed nothing in the tools sends no news at all.
    bench.reloaded(("widgets/trip.html",), None, seconds=0.05)
    bench.reload_news(None, None)
    bench.reloaded(("server.py",), None, seconds=0.05)
    kinds: list[str] = []
    later.until(lambda e, d: kinds.append(e) or (e == "reload" and d["files"] == ["server.py"]))
    assert "reload-news" not in kinds and kinds.count("reload") == 2, kinds
    later.close()


def test_argument_problems_read_like_the_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert argument_problems(schema, {}) == ["arguments: 'n' is a required property"]
    assert argument_problems(schema, {"n": 1}) == []
    assert argument_problems(None, {"anything": 1}) == []


def wait_done(bench: Workbench, run_id: str, *, status: str = "done", calls: int | None = None, timeout: float = 20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = bench.get_run(run_id)
        if run is not None and run.status != "running" and (calls is None or run.calls >= calls):
            assert run.status == status, (run.status, run.error)
            return run
        time.sleep(0.02)
    raise AssertionError(f"run {run_id} never finished")


def _listening_inode(port: int) -> str | None:
    """The socket inode listening on 127.0.0.1:port (from /proc/net/tcp), or None."""
    wanted = f"0100007F:{port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == wanted and fields[3] == "0A":  # 0A: LISTEN
            return fields[9]
    return None


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found |= {int(child) for child in (task / "children").read_text().split()}
    return found


def _holds(pid: int, inode: str) -> bool:
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            if os.readlink(fd) == f"socket:[{inode}]":
                return True
    return False


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc to read sockets")
def test_dev_workers_do_not_hold_the_workbench_socket(tmp_path: Path) -> None:
    """The workbench lives in the dev supervisor, which forks a worker per reload: the workers must not
    inherit its listening socket (a worker outliving a reload would keep the port)."""
    project = scaffold("book-club", tmp_path).path
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "dev", "--port", str(free_port())],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
    )
    try:
        port = None
        for _ in range(40):
            found = re.search(r"Workbench\s+http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
            if found:
                port = int(found.group(1))
                break
        assert port, "appsdk dev printed no workbench URL"
        inode = _listening_inode(port)
        assert inode is not None
        deadline = time.monotonic() + 20
        while not _children(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _children(process.pid)
        assert workers, "no worker"
        assert _holds(process.pid, inode)
        assert not any(_holds(worker, inode) for worker in workers)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
    assert process.returncode == 0
    assert _listening_inode(port) is None  # the port is free again
