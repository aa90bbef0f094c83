"""The workbench on a server with many tools (tests/fixtures/many_tools.py): a run touches only its tool
(the listing is kept per server generation), what the workbench keeps and replays is bounded by bytes,
and the page's tool list keeps its selection and keys when a click no longer redraws it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator

import pytest
from conftest import FIXTURES, RunningServer, free_port, serve, stop
from test_workbench import EventReader, request, wait_done

from appsdk_cli.connection import Target
from appsdk_cli.workbench import Workbench, events, server

TOOLS = 300


@pytest.fixture(scope="module")
def many_tools() -> Iterator[RunningServer]:
    port = free_port()
    running = serve([sys.executable, str(FIXTURES / "many_tools.py"), str(port), str(TOOLS)], port)
    yield running
    stop(running.process)


@pytest.fixture
def bench(many_tools: RunningServer) -> Iterator[Workbench]:
    with Workbench(Target(url=many_tools.url)) as running:
        yield running


def listings(bench: Workbench) -> int:
    assert bench.tracer is not None
    return sum(1 for r in bench.tracer.records() if r.get("method") == "tools/list" and r.get("kind") == "request")


def test_runs_use_the_kept_listing_until_a_reload_makes_a_new_generation(bench: Workbench) -> None:
    reader = EventReader(bench)
    assert reader.next()[0] == "hello"
    assert len(bench.tools()) == TOOLS and listings(bench) == 1
    for index in range(5):
        run = bench.start_run(f"tool-{index:04d}", {"query": "books"})
        assert wait_done(bench, run.id).status == "done"
        assert run.result["structuredContent"]["tool"] == index
    assert listings(bench) == 1  # no run listed the tools again
    # Nor did any run push the listing to the page: its run events only.
    last = bench.start_run("tool-0007", {"query": "x"})
    seen: list[str] = []

    def last_done(event: str, data: dict) -> bool:
        seen.append(event)
        return event == "run" and data["id"] == last.id and data["status"] == "done"

    reader.until(last_done)
    assert set(seen) <= {"run", "traffic", "progress"}, seen
    # A reload is a new server generation: the tools are listed again ...
    bench.reloaded(("server.py",), None)
    reader.until(lambda event, data: event == "reload")
    deadline = time.monotonic() + 20
    while listings(bench) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    before = listings(bench)
    assert before == 2
    # ... and the page is not sent them again when they are what it has: up to the next run, it hears only
    # of the MCP traffic of that listing.
    probe = bench.start_run("tool-0002", {"query": "x"})
    heard: list[str] = []
    reader.until(lambda event, data: heard.append(event) or (event == "run" and data["id"] == probe.id))
    assert set(heard) == {"traffic", "run"}, heard
    wait_done(bench, probe.id)
    again = bench.start_run("tool-0001", {"query": "books"})
    assert wait_done(bench, again.id).status == "done"
    assert listings(bench) == before  # ... once: the runs after it use that listing
    reader.close()


def test_a_tool_the_kept_listing_lacks_is_looked_up_again(bench: Workbench) -> None:
    bench.tools()
    run = bench.start_run("no-such-tool", {})
    done = wait_done(bench, run.id, status="invalid")
    assert "has no tool 'no-such-tool'" in (done.error or "")
    assert listings(bench) == 2  # the server may have added it since: asked, not assumed
    assert f"and {TOOLS - 20} more" in done.error and len(done.error) < 600  # not all 300 names


def test_arguments_the_kept_schema_refuses_are_checked_against_a_fresh_listing_first(bench: Workbench) -> None:
    bench.tools()
    run = bench.start_run("tool-0003", {"limit": 2})  # no query: the schema requires one
    done = wait_done(bench, run.id, status="invalid")
    assert "'query' is a required property" in (done.error or "")
    assert listings(bench) == 2  # the server may have changed the schema since the listing was kept


def test_what_the_workbench_keeps_and_replays_is_bounded_by_bytes(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server, "KEPT_RUN_BYTES", 6_000)
    monkeypatch.setattr(server, "HELLO_RUN_BYTES", 3_000)
    monkeypatch.setattr(server, "HELLO_TRAFFIC_BYTES", 4_000)
    started = []
    for index in range(40):
        started.append(bench.start_run(f"tool-{index:04d}", {"query": "q" * 200}))
        wait_done(bench, started[-1].id)
    kept = bench.runs()
    assert started[-1] in kept and 1 < len(kept) < 40
    assert sum(run.weight for run in kept) <= 6_000
    status, listed = request(bench, "GET", "/api/runs")
    assert status == 200 and [r["id"] for r in listed["runs"]] == [r.id for r in kept]
    # A page opened now gets the newest runs and traffic within the budgets, not all there was.
    reader = EventReader(bench)
    event, hello = reader.next()
    reader.close()
    assert event == "hello"
    assert hello["runs"] and hello["runs"][-1]["id"] == started[-1].id
    assert len(json.dumps(hello["runs"], ensure_ascii=False).encode()) <= 3_000
    assert hello["traffic"] and sum(len(json.dumps(r, separators=(",", ":"))) for r in hello["traffic"]) <= 4_000
    assert len(bench.tracer.records()) > len(hello["traffic"])


def test_a_page_that_stops_reading_holds_no_more_than_its_backlog_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "QUEUE_BYTES", 100_000)
    hub = events.EventHub()
    stalled = hub.stream(lambda: {"hello": True})
    assert next(stalled).startswith(b"id: 0\nevent: hello\n")  # listening, and then reading nothing
    for index in range(200):
        hub.publish("run", {"index": index, "result": "x" * 10_000})
    assert hub.listeners == 1 and 0 < hub.waiting_bytes <= 100_000
    # What it reads next is the newest it kept, in order; the oldest went.
    frame = next(stalled)
    assert b'"index": 19' in frame and b'"index": 0,' not in frame
    hub.close()
    assert list(stalled) == []


def test_the_page_lists_many_tools_and_a_click_or_a_key_moves_the_selection(bench: Workbench, workbench_page) -> None:
    pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
    page = workbench_page
    page.goto(bench.url)
    page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
    items = page.locator("#tool-list .tool-item")
    assert items.count() == TOOLS
    page.locator('#tool-list [data-tool="tool-0250"]').click()
    assert page.locator("#tool-name").text_content() == "tool-0250"
    selected = page.locator('#tool-list [aria-selected="true"]')
    assert selected.count() == 1 and selected.get_attribute("data-tool") == "tool-0250"
    assert page.locator('#tool-list [tabindex="0"]').count() == 1
    assert items.count() == TOOLS  # the list was not redrawn into something else
    # The keys still work on every item: down to the next one, Enter selects it.
    page.locator('#tool-list [data-tool="tool-0250"]').focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    assert page.locator("#tool-name").text_content() == "tool-0251"
    assert page.locator('#tool-list [aria-selected="true"]').get_attribute("data-tool") == "tool-0251"
    # A filter redraws the list; the selection shows in it.
    page.fill("#tool-filter", "tool-025")
    assert items.count() == 10
    assert page.locator('#tool-list [aria-selected="true"]').get_attribute("data-tool") == "tool-0251"
    # A run from the page goes by the kept listing.
    page.fill("#tool-filter", "")
    page.locator('#tool-list [data-tool="tool-0003"]').click()
    field = page.locator('#form-pane [data-path="query"] input')
    field.fill("books")
    page.click("#run-button")
    page.wait_for_function("() => window.appsdkWorkbench.runs().some((r) => r.status === 'done')")
    run = page.evaluate("() => window.appsdkWorkbench.runs()[0]")
    assert run["tool"] == "tool-0003" and run["result"]["structuredContent"]["query"] == "books"
    assert listings(bench) == 1


def test_no_project_gets_a_workbench_port_browsers_refuse(tmp_path) -> None:
    """Chromium refuses 6665-6669 and a few more (ERR_UNSAFE_PORT): a project whose path hashed to one got
    a workbench no browser opened."""
    import hashlib

    from appsdk_cli.workbench.port import COUNT, FIRST, UNSAFE, project_port

    def hashed(path) -> int:
        return FIRST + int.from_bytes(hashlib.sha256(str(path.resolve()).encode()).digest()[:4], "big") % COUNT

    unlucky = next(path for n in range(100_000) if hashed(path := tmp_path / f"app-{n}") == 6665)
    port = project_port(unlucky)
    assert port not in UNSAFE and FIRST <= port < FIRST + COUNT
    assert port == project_port(unlucky)  # still the same on every start
    lucky = next(path for n in range(100_000) if hashed(path := tmp_path / f"app-{n}") not in UNSAFE)
    assert project_port(lucky) == hashed(lucky)


def test_the_host_keeps_its_log_and_widget_documents_within_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from appsdk_cli.host import state
    from appsdk_cli.host.run import LogEntry

    monkeypatch.setattr(state, "KEPT_LOG_BYTES", 50_000)
    monkeypatch.setattr(state, "KEPT_DOCUMENT_BYTES", 300_000)
    host = state.HostState()
    for index in range(2_000):
        host.record(LogEntry("console", "info", f"line {index:05d} " + "x" * 990))
    assert sum(len(entry.message) for entry in host.log) <= 50_000
    assert host.log[-1].message.startswith("line 01999") and len(host.log) < 2_000
    tokens = [host.remember_document("<p>" + "y" * 100_000 + "</p>", "default-src 'none'") for _ in range(10)]
    kept = [token for token in tokens if host.stored_document(token) is not None]
    assert kept == tokens[-2:]  # the newest, within the bytes; a widget reloading itself still gets itself
    one = host.remember_document("z" * 1_000_000, "")  # one larger than the budget is still served
    assert host.stored_document(one) is not None


def test_a_save_that_changes_no_tool_rerenders_the_widget_and_leaves_the_tool_list_be(workbench_page, tmp_path) -> None:
    """Under a real `appsdk dev`: the widget re-renders in place, the page is not sent the listing again (the
    list's items are the same nodes), and it asks for the skills once more (a save may change them)."""
    pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
    import signal
    import subprocess

    from preview_helpers import widget_view
    from test_workbench_browser import dev_workbench_url, open_workbench, start_dev, wait_run

    from appsdk_cli.scaffold import scaffold

    page = workbench_page
    project = scaffold("book-club", tmp_path).path
    process = start_dev(project)
    lines: list[str] = []
    try:
        open_workbench(page, dev_workbench_url(process, lines))
        page.click("#run-button")
        assert wait_run(page)["status"] == "done"
        widget = widget_view(page.locator(".host-frame iframe").first.content_frame)
        widget.get_by_text("Frankenstein").wait_for(timeout=15_000)
        page.evaluate("() => { window.firstTool = document.querySelector('#tool-list .tool-item'); }")
        skills: list[str] = []
        page.on("request", lambda request: "/api/skills" in request.url and skills.append(request.url))

        html = project / "widgets" / "book-list.html"
        html.write_text(html.read_text().replace("Book club picks", "Reading list"))
        widget.get_by_text("Reading list").wait_for(timeout=20_000)
        page.wait_for_function("() => window.appsdkWorkbench.reloads === 1")
        deadline = time.monotonic() + 10
        while not skills and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        assert skills, "the page did not ask for the skills after the reload"
        assert page.evaluate("() => document.querySelector('#tool-list .tool-item') === window.firstTool")
        assert page.locator("#tool-list .tool-item").count() == 1
    finally:
        process.send_signal(signal.SIGINT)
        try:
            output, _ = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        lines.append(output)
    assert "Traceback" not in "".join(lines)
