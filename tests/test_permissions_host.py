"""ChatGPT's permission modes in the local host: the run's own call (its tool-input held until Approve) and
a widget's callTool (held by the server, made only once the user allows it), in Debian's Chromium through
Playwright, against tests/fixtures/permissions_app served as a real process.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, view_frame

from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

FIXTURE = Path(__file__).parent / "fixtures" / "permissions_app" / "server.py"


@pytest.fixture(scope="module")
def notes_app() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(FIXTURE), str(port)], port)
    yield server
    stop(server.process)


@pytest.fixture
def preview(notes_app) -> Iterator:
    started: list[PreviewServer] = []

    def start(tool: str, *words: str, **options: str) -> PreviewServer:
        server = PreviewServer(prepare(Target(url=notes_app.url), tool, list(words)), PreviewOptions(**options)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def post(server: PreviewServer, path: str, body: dict) -> tuple[int, dict]:
    """A POST from the host page: its own origin."""
    headers = {"Content-Type": "application/json", "Origin": server.host_origin}
    url = server.host_origin + path
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def counts(server: PreviewServer) -> dict[str, int]:
    """How often each tool of the fixture ran (its read-only `count` tool, asked through the host)."""
    status, answer = post(server, "/api/call", {"name": "count", "bridge": "openai"})
    assert status == 200, answer
    return answer["result"]["structuredContent"]


# --- the host's API: a call that asks first is not made until approved ---------------------------------


def test_the_server_holds_a_call_the_mode_asks_about_and_makes_it_only_once_approved(preview) -> None:
    server = preview("list-notes", permissions="changes")
    before = counts(server).get("delete-note", 0)
    call = {"name": "delete-note", "arguments": {"note": "n9"}, "bridge": "openai"}
    status, answer = post(server, "/api/call", call)
    assert status == 202, answer
    held = answer["held"]
    assert held["tool"] == "delete-note" and held["mode"] == "changes" and held["ask"] is True
    assert held["reason"] == "it may change things (readOnlyHint false)"
    assert counts(server).get("delete-note", 0) == before  # held: the tool did not run
    assert post(server, "/api/call/approve", {"id": "guess"})[0] == 404
    status, answer = post(server, "/api/call/approve", {"id": held["id"]})
    assert status == 200 and answer["result"]["structuredContent"]["note"] == "n9"
    assert counts(server)["delete-note"] == before + 1
    # Once: an approved call cannot be approved again.
    assert post(server, "/api/call/approve", {"id": held["id"]})[0] == 404

    status, answer = post(server, "/api/call", call)
    status, denied = post(server, "/api/call/deny", {"id": answer["held"]["id"]})
    assert status == 200 and denied["message"] == "the user denied delete-note (Ask before changes)"
    assert counts(server)["delete-note"] == before + 1  # denied: never made


def test_the_mode_decides_by_the_tools_annotations_and_a_bad_mode_is_refused(preview) -> None:
    server = preview("list-notes")  # the host's default: never ask

    def asks(name: str, mode: str | None) -> bool:
        body = {"name": name, "bridge": "mcp-apps"} | ({"permissions": mode} if mode else {})
        status, answer = post(server, "/api/call", body)
        assert status in (200, 202), answer
        if status == 202:
            post(server, "/api/call/deny", {"id": answer["held"]["id"]})
        return status == 202

    assert not asks("bare", None)
    assert [asks("list-notes", m) for m in ("always", "changes", "important", "never")] == [True, False, False, False]
    assert [asks("add-note", m) for m in ("always", "changes", "important", "never")] == [True, True, False, False]
    assert [asks("post-note", m) for m in ("always", "changes", "important", "never")] == [True, True, True, False]
    assert [asks("bare", m) for m in ("always", "changes", "important", "never")] == [True, True, True, False]
    status, answer = post(server, "/api/call", {"name": "bare", "bridge": "openai", "permissions": "x"})
    assert status == 400 and "unknown permission mode 'x'" in answer["error"]["message"]


# --- the host page, in a real browser ------------------------------------------------------------------


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    yield context.new_page()
    context.close()


def open_page(page, server: PreviewServer, **query: str):
    page.goto(server.page_url(**query))
    page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled")
    return view_frame(page)


def widget_input(view) -> str:
    return view.locator("#input").inner_text()


def log_lines(page) -> list[str]:
    return [e["message"] for e in page.evaluate("() => window.appsdkPreview.log") if e["kind"] == "host"]


def settled_calls(view, count: int) -> list[dict]:
    view.wait_for_function("(n) => window.board.settled.length >= n", arg=count, timeout=15_000)
    return view.evaluate("() => window.board.settled")


@NEEDS_CHROMIUM
def test_ask_before_changes_holds_a_destructive_tools_input_until_approved(page, preview) -> None:
    server = preview("delete-note", "note=n1", permissions="changes")
    view = open_page(page, server)
    bar = page.locator("#approval-bar")
    assert bar.is_visible()
    reason = "Ask before changes: it may change things (readOnlyHint false)"
    assert reason in page.locator("#approval-reason").inner_text()
    assert page.locator("#permissions").input_value() == "changes"
    view.wait_for_function("() => document.readyState === 'complete'")
    assert widget_input(view) == "none yet"
    assert f"held for approval: delete-note ({reason})" in log_lines(page)
    page.click("#approve")
    view.wait_for_function("() => document.getElementById('input').textContent.includes('n1')")
    assert json.loads(widget_input(view)) == {"note": "n1"}
    assert not bar.is_visible()
    assert "approved: delete-note" in log_lines(page)


@NEEDS_CHROMIUM
def test_ask_before_changes_does_not_hold_a_read_only_tool_but_always_ask_does(page, preview) -> None:
    server = preview("list-notes", "folder=inbox", permissions="changes")
    view = open_page(page, server)
    view.wait_for_function("() => document.getElementById('input').textContent.includes('inbox')")
    assert not page.locator("#approval-bar").is_visible()
    assert not [line for line in log_lines(page) if line.startswith("held for approval")]

    # The page's switch: Always ask holds even a read-only tool, and a reload of the page keeps the choice.
    page.select_option("#permissions", "always")
    page.wait_for_function("() => !document.getElementById('approval-bar').hidden")
    assert "Always ask: every call asks" in page.locator("#approval-reason").inner_text()
    page.reload()
    page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled")
    assert page.locator("#permissions").input_value() == "always"
    assert page.locator("#approval-bar").is_visible()
    assert "permissions=always" in page.url


@NEEDS_CHROMIUM
@pytest.mark.parametrize("via", ["openai", "bridge"])
def test_a_widgets_call_of_a_destructive_tool_waits_then_runs_on_allow_and_is_rejected_on_deny(page, preview, via):
    server = preview("list-notes", "folder=inbox", permissions="changes")
    view = open_page(page, server)
    view.wait_for_function("() => document.getElementById('input').textContent.includes('inbox')")
    before = counts(server).get("delete-note", 0)

    view.evaluate(f"() => window.board.call('delete-note', {{note: 'n2'}}, '{via}')")
    prompt = page.locator("#call-approvals li")
    prompt.wait_for()
    assert "delete-note (Ask before changes: it may change things (readOnlyHint false))" in prompt.inner_text()
    page.wait_for_timeout(300)
    assert view.evaluate("() => window.board.settled.length") == 0  # the widget's promise is still pending
    assert counts(server).get("delete-note", 0) == before  # and the tool has not run
    prompt.get_by_role("button", name="Allow").click()
    allowed = settled_calls(view, 1)[0]
    assert allowed["ok"]["note"] == "n2" and allowed["ok"]["calls"] == before + 1

    view.evaluate(f"() => window.board.call('delete-note', {{note: 'n3'}}, '{via}')")
    page.locator("#call-approvals li").get_by_role("button", name="Deny").click()
    denied = settled_calls(view, 2)[1]
    assert "the user denied delete-note (Ask before changes)" in denied["error"]
    if via == "bridge":
        assert denied["code"] == -32603  # a JSON-RPC error answers the view's tools/call
    assert counts(server)["delete-note"] == before + 1
    assert page.locator("#call-approvals li").count() == 0
    lines = log_lines(page)
    assert "held for approval: delete-note (Ask before changes: it may change things (readOnlyHint false))" in lines
    assert "approved: delete-note" in lines and "denied: delete-note" in lines

    # A read-only tool's call is not held in this mode.
    view.evaluate(f"() => window.board.call('list-notes', {{}}, '{via}')")
    assert settled_calls(view, 3)[2]["ok"]["tool"] == "list-notes"


# --- the workbench --------------------------------------------------------------------------------------


def run_in_bench(page, tool: str, index: int, *, held: bool = False) -> None:
    page.locator(f'#tool-list [data-tool="{tool}"]').click()
    page.click("#run-button")
    if held:  # the call waits for Approve in the widget's head: not done, not even made
        page.locator(".run").nth(index - 1).get_by_role("button", name="Approve").wait_for(timeout=20_000)
        return
    page.wait_for_function(
        "(n) => { const runs = window.appsdkWorkbench.runs();"
        " return runs.length >= n && runs[n - 1].status === 'done'; }",
        arg=index,
        timeout=20_000,
    )


@NEEDS_CHROMIUM
def test_the_workbench_mode_switch_holds_a_destructive_run_and_a_widgets_call_but_not_a_read_only_run(
    workbench_page, notes_app
) -> None:
    from appsdk_cli.workbench import Workbench

    page = workbench_page
    with Workbench(Target(url=notes_app.url)) as bench:
        page.goto(bench.url)
        page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
        assert page.locator("#permissions").input_value() == "never"  # the host's default
        page.locator("#permissions").select_option("changes")

        run_in_bench(page, "delete-note", 1, held=True)
        run = page.locator(".run").first
        head = run.locator(".host-frame").first
        host = run.locator(".host-frame iframe").first.content_frame
        view = host.frame_locator("iframe#widget").frame_locator("iframe")
        assert view.locator("#input").inner_text() == "none yet"
        held = bench.runs()[0]
        assert held.status == "running" and held.calls == 0 and held.result is None  # the tool has not run
        head.get_by_role("button", name="Approve").click()
        view.locator("#input", has_text="n1").wait_for(timeout=15_000)
        page.wait_for_function("() => window.appsdkWorkbench.runs()[0].status === 'done'", timeout=15_000)
        assert bench.runs()[0].result["structuredContent"]["note"] == "n1"
        assert not head.locator(".approval").is_visible()

        run_in_bench(page, "list-notes", 2)
        read_only = page.locator(".run").nth(1)
        read_view = read_only.locator(".host-frame iframe").first.content_frame
        read_view.frame_locator("iframe#widget").frame_locator("iframe").locator("#input", has_text="inbox").wait_for()
        assert not read_only.locator(".host-frame .approval").first.is_visible()

        # The widget's own call of a destructive tool waits in its frame, and the inspector's log says why.
        frame = read_only.locator(".host-frame iframe").first.element_handle().content_frame()
        widget_frame = frame.child_frames[0].child_frames[0]
        widget_frame.evaluate("() => window.board.call('delete-note', {note: 'w1'}, 'openai')")
        prompt = read_view.locator("#call-approvals li")
        prompt.wait_for(timeout=15_000)
        if shot := os.environ.get("APPSDK_PERMISSIONS_SHOT"):  # a picture of the prompt, for a human to look at
            page.screenshot(path=shot)
        prompt.get_by_role("button", name="Allow").click()
        widget_frame.wait_for_function("() => window.board.settled.length === 1", timeout=15_000)
        assert widget_frame.evaluate("() => window.board.settled[0].ok.note") == "w1"
        logged = page.evaluate("() => document.body.innerText")
        assert (
            "held for approval: delete-note (Ask before changes: it may change things (readOnlyHint false))" in logged
        )

        # Decline: the held call is cancelled and never made.
        run_in_bench(page, "delete-note", 3, held=True)
        page.locator(".run").nth(2).get_by_role("button", name="Decline").click()
        page.wait_for_function("() => window.appsdkWorkbench.runs()[2].status === 'cancelled'", timeout=15_000)
        assert bench.runs()[2].result is None and bench.runs()[2].calls == 0

        # The choice is remembered across a reload of the workbench.
        page.reload()
        page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
        assert page.locator("#permissions").input_value() == "changes"


def test_the_workbench_makes_a_call_its_mode_asks_about_only_once_approved(notes_app) -> None:
    import time

    from appsdk_cli.workbench import Workbench

    def settle(bench: Workbench, run_id: str, status: str) -> None:
        deadline = time.monotonic() + 15
        while bench.get_run(run_id).status != status:
            assert time.monotonic() < deadline, bench.get_run(run_id)
            time.sleep(0.05)

    with Workbench(Target(url=notes_app.url)) as bench:
        read_only = bench.start_run("list-notes", {}, permissions="changes")
        settle(bench, read_only.id, "done")  # not asked about: made at once
        with pytest.raises(RuntimeError, match="not waiting for approval"):
            bench.approve(read_only.id)

        held = bench.start_run("delete-note", {"note": "b1"}, permissions="changes")
        time.sleep(1.0)
        assert held.status == "running" and held.calls == 0 and held.result is None
        bench.approve(held.id)
        settle(bench, held.id, "done")
        assert held.result["structuredContent"]["note"] == "b1"

        declined = bench.start_run("delete-note", {"note": "b2"}, permissions="always")
        time.sleep(0.5)
        bench.cancel(declined.id)
        assert declined.status == "cancelled" and declined.result is None

        # The host's own default (never) asks about nothing.
        settle(bench, bench.start_run("delete-note", {"note": "b3"}).id, "done")


# --- `appsdk preview TOOL` under a mode that asks: the tool is not called before Approve ------------------


@NEEDS_CHROMIUM
def test_preview_makes_a_call_its_mode_asks_about_only_once_approved(page, notes_app) -> None:
    before = counted_by_the_server(notes_app.url).get("delete-note", 0)
    session = prepare(Target(url=notes_app.url), "delete-note", ["note=n7"], permissions="changes")
    assert session.deferred and session.pending
    server = PreviewServer(session, PreviewOptions(permissions="changes")).start()
    try:
        # Held: ChatGPT asks before it runs the tool.
        assert counted_by_the_server(notes_app.url).get("delete-note", 0) == before
        view = open_page(page, server)
        assert widget_input(view) == "none yet"
        assert counted_by_the_server(notes_app.url).get("delete-note", 0) == before
        page.click("#approve")
        view.wait_for_function("() => document.getElementById('input').textContent.includes('n7')")
        page.wait_for_function("() => window.appsdkPreview.log.some((e) => e.message.includes('runs now'))")
        view.wait_for_function("() => window.openai && window.openai.toolOutput !== null", timeout=15_000)
        assert counted_by_the_server(notes_app.url)["delete-note"] == before + 1
        assert view.evaluate("() => window.openai.toolResponseMetadata.status") == "completed"
    finally:
        server.close()


def counted_by_the_server(url: str) -> dict[str, int]:
    """The fixture's own counts, asked by a client of its own (the host's API would hold the ask itself)."""
    from appsdk_cli.remote import call_tool

    return call_tool(Target(url=url), "count", []).result["structuredContent"]


@NEEDS_CHROMIUM
def test_preview_makes_a_held_call_once_the_page_switches_to_a_mode_that_does_not_ask(page, notes_app) -> None:
    before = counted_by_the_server(notes_app.url).get("delete-note", 0)
    session = prepare(Target(url=notes_app.url), "delete-note", ["note=n8"], permissions="always")
    server = PreviewServer(session, PreviewOptions(permissions="always")).start()
    try:
        view = open_page(page, server)
        assert widget_input(view) == "none yet"
        assert counted_by_the_server(notes_app.url).get("delete-note", 0) == before
        page.select_option("#permissions", "never")
        page.wait_for_function("() => window.appsdkPreview.log.some((e) => e.message.includes('runs now'))")
        # The new view, loaded after the call was made, has the result in its document.
        page.wait_for_function(
            "() => window.appsdkPreview.log.some((e) => e.message.endsWith('→ tool-input, tool-result'))"
        )
        view_frame(page).wait_for_function("() => window.openai && window.openai.toolOutput !== null", timeout=15_000)
        assert counted_by_the_server(notes_app.url)["delete-note"] == before + 1
    finally:
        server.close()


def test_preview_calls_at_once_what_the_mode_does_not_ask_about(notes_app) -> None:
    session = prepare(Target(url=notes_app.url), "list-notes", ["folder=inbox"], permissions="changes")
    assert not session.deferred and session.result.get("structuredContent") is not None
