"""`appsdk preview` in a real browser: Debian's Chromium driven by Playwright, against real MCP servers.

The host page and the widget run exactly as a developer's browser runs them; the MCP servers are real
processes (the scaffolded book-club app and tests/fixtures/preview_app).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer, pid_alive
from preview_helpers import (
    CHROMIUM,
    NEEDS_CHROMIUM,
    command_of,
    decode_png,
    luminance_stats,
    marked_pids,
    view_frame,
    widget_view,
)

from appsdk_cli.connection import Target
from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

TITLES = ["Frankenstein", "Pride and Prejudice", "The Time Machine"]

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM


@pytest.fixture(autouse=True)
def kept_browsers_go_soon(monkeypatch) -> None:
    """A screenshot leaves a kept browser running (keptbrowser.py): here it idles out after 2 s (and
    conftest removes its socket after each test, which ends it at once)."""
    monkeypatch.setenv("APPSDK_KEPT_BROWSER_IDLE", "2")


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    yield context.new_page()
    context.close()


def serve(server: RunningServer, tool: str, words: list[str] | None = None, **options) -> PreviewServer:
    """The capability, without the CLI: prepare the call, then serve the host page."""
    session = prepare(Target(url=server.url), tool, words or [])
    return PreviewServer(session, PreviewOptions(**options)).start()


def open_page(page, preview: PreviewServer, **query: str):
    page.goto(preview.page_url(**query))
    page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled")
    return widget_view(page)


def host_log(page) -> list[dict]:
    return page.evaluate("() => window.appsdkPreview.log")


def wait_for_log(page, kind: str, text: str) -> None:
    page.wait_for_function(
        "([kind, text]) => window.appsdkPreview.log.some((e) => e.kind === kind && e.message.includes(text))",
        arg=[kind, text],
        timeout=10_000,
    )


def widget_eval(page, expression: str):
    """Evaluate inside the widget's frame (its own site, so not reachable from the host page's JS)."""
    return view_frame(page).evaluate(expression)


# --- the scaffold's widget ----------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="not a Debian machine: no dpkg to say who owns it")
def test_the_browser_these_tests_drive_is_debians_chromium():
    # A `chromium` on PATH may be a test tool's own download (a CI machine once had Playwright's there).
    owner = subprocess.run(["dpkg", "-S", os.path.realpath(CHROMIUM)], capture_output=True, text=True)
    assert owner.returncode == 0 and owner.stdout.startswith("chromium"), (
        f"{CHROMIUM} belongs to no Debian chromium package: {owner.stdout or owner.stderr}"
    )


def test_a_bordered_widget_gets_its_whole_measured_box_on_first_load(page, app_server):
    """The scaffold's widget prefers a border: drawn outside the frame, it takes nothing of the height the
    widget reported (a border on the frame ate 2 px, so the first load overflowed and scrolled)."""
    preview = serve(app_server, "list-books")
    try:
        open_page(page, preview)
        assert "border" in (page.locator("#stage").get_attribute("class") or "")
        outer, inner, width = page.locator("#widget").evaluate("(f) => [f.offsetHeight, f.clientHeight, f.clientWidth]")
        assert outer == inner and width == 768  # no border inside the frame's box
        scroll, view = widget_eval(page, "() => [document.documentElement.scrollHeight, window.innerHeight]")
        assert scroll <= view, (scroll, view)
    finally:
        preview.close()


def test_book_club_renders_through_window_openai(page, app_server):
    preview = serve(app_server, "list-books", ["month=June"])
    try:
        widget = open_page(page, preview)
        assert widget.locator("li .title").all_text_contents() == TITLES
        assert widget.locator("#count").text_content() == "3 books"
        assert widget_eval(page, "() => typeof window.openai") == "object"
        assert widget_eval(page, "() => window.openai.toolInput") == {"month": "June"}
        assert widget_eval(page, "() => window.openai.toolResponseMetadata.month") == "June"
        assert widget_eval(page, "() => [window.openai.displayMode, window.openai.locale]") == ["inline", "en-US"]
        # openai:set_globals: the host's theme switch reaches the widget, which restyles itself.
        assert widget.locator("html").get_attribute("data-theme") == "light"
        page.select_option("#theme", "dark")
        widget.locator("html[data-theme=dark]").wait_for(state="attached")
        assert widget_eval(page, "() => window.openai.theme") == "dark"
        # The widget reported its height, and the host sized the frame to it (the default is 150 px).
        assert page.locator("#widget").bounding_box()["height"] > 250
        assert not [e for e in host_log(page) if e["level"] == "error"]
    finally:
        preview.close()


def test_tool_response_metadata_carries_chatgpts_envelope_and_the_older_top_level_keys(page, app_server):
    """A widget written to the current reference reads the whole MCP result from toolResponseMetadata's
    call_tool_result / mcp_tool_result; one written to the older reference still finds _meta's keys on top."""
    preview = serve(app_server, "list-books", ["month=June"])
    try:
        open_page(page, preview)
        envelope = widget_eval(page, "() => window.openai.toolResponseMetadata")
        assert envelope["status"] == "completed"
        assert envelope["month"] == "June"  # the older reference: the result's _meta keys at the top level
        for key in ("call_tool_result", "mcp_tool_result"):
            whole = envelope[key]
            assert whole["_meta"]["month"] == "June"  # hidden _meta included
            assert [b["title"] for b in whole["structuredContent"]["books"]] == TITLES
            assert whole["content"] and whole["content"][0]["type"] == "text"
        # A new result for the live view (a re-run): the envelope follows it, a failure says so.
        failed = {"content": [{"type": "text", "text": "no such month"}], "isError": True, "_meta": {"month": "Smarch"}}
        page.evaluate("(result) => window.appsdkPreview.sendResult(result)", failed)
        view_frame(page).wait_for_function("() => window.openai.toolResponseMetadata.status === 'failed'")
        envelope = widget_eval(page, "() => window.openai.toolResponseMetadata")
        assert envelope["month"] == "Smarch" and envelope["mcp_tool_result"] == failed
    finally:
        preview.close()


def test_book_club_renders_through_the_bridge_alone(page, app_server):
    preview = serve(app_server, "list-books")
    try:
        widget = open_page(page, preview, openai="0")
        assert widget.locator("li .title").all_text_contents() == TITLES
        assert widget_eval(page, "() => typeof window.openai") == "undefined"
        messages = [e["message"] for e in host_log(page) if e["kind"] == "bridge"]
        assert messages[0].startswith("ui/initialize from book-list")
        assert messages[1].startswith("ui/notifications/initialized")
        page.select_option("#theme", "dark")  # ui/notifications/host-context-changed
        widget.locator("html[data-theme=dark]").wait_for(state="attached")
    finally:
        preview.close()


# --- the counter fixture: callTool, widget state, CSP, host log --------------------------------------


@pytest.mark.parametrize("api", ["openai", "bridge"])
def test_call_tool_round_trip_and_refusal(page, counter_app, api):
    preview = serve(counter_app, "show-counter", ["start=5"])
    try:
        widget = open_page(page, preview, openai="1" if api == "openai" else "0")
        assert widget.locator("#api").text_content() == api
        assert widget.locator("#count").text_content() == "5"
        widget.locator("#inc").click()
        widget.locator("#count", has_text="7").wait_for()
        wait_for_log(page, api, "increment →")
        # secret is not widget-accessible: the host refuses, the server never sees the call.
        widget.locator("#call-secret").click()
        widget.locator("#secret", has_text="refused").wait_for()
        assert "may not call 'secret'" in widget.locator("#secret").text_content()
        wait_for_log(page, api, "callTool secret refused")
    finally:
        preview.close()


def test_widget_state_survives_a_reload(page, counter_app):
    preview = serve(counter_app, "show-counter")
    try:
        widget = open_page(page, preview)
        assert widget.locator("#state").text_content() == "none"
        widget.locator("#save").click()
        widget.locator("#state", has_text="saved").wait_for()
        wait_for_log(page, "openai", "setWidgetState")
        page.reload()
        page.wait_for_function("() => window.appsdkPreview && window.appsdkPreview.settled")
        assert widget_view(page).locator("#state").text_content() == '{"saved":100}'
        assert widget_eval(page, "() => window.openai.widgetState") == {"saved": 100}
    finally:
        preview.close()


def test_undeclared_origin_is_blocked_by_the_csp_and_reported(page, counter_app):
    preview = serve(counter_app, "show-counter")
    try:
        widget = open_page(page, preview)
        widget.locator("#network").click()
        wait_for_log(page, "csp", "img-src")
        wait_for_log(page, "csp", "connect-src")
        blocked = [e["message"] for e in host_log(page) if e["kind"] == "csp"]
        assert all("127.0.0.1:7" in message for message in blocked), blocked
        # The declared origin got through the CSP (its port refused the connection, which is not a violation).
        assert not [message for message in blocked if "127.0.0.1:9" in message]
        # The same lines reach the preview server, which shows them in the terminal.
        deadline = time.monotonic() + 5
        while not [e for e in preview.log if e.kind == "csp"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [e for e in preview.log if e.kind == "csp" and "127.0.0.1:7" in e.message]
    finally:
        preview.close()


@pytest.mark.parametrize("api", ["1", "0"])
def test_a_widget_that_never_reports_its_height_is_sized_to_its_content(page, counter_app, api):
    preview = serve(counter_app, "show-tall")
    try:
        open_page(page, preview, openai=api)
        assert page.locator("#widget").bounding_box()["height"] == 420
    finally:
        preview.close()


def test_console_errors_and_host_calls_appear_in_the_log(page, counter_app):
    preview = serve(counter_app, "show-counter")
    try:
        widget = open_page(page, preview)
        wait_for_log(page, "console", "counter widget says hello")
        widget.locator("#follow").click()
        wait_for_log(page, "openai", "sendFollowUpMessage: Tell me more about the counter")
        widget.locator("#open").click()
        wait_for_log(page, "openai", "openExternal https://example.com/docs")
        assert page.locator("#log a[href='https://example.com/docs']").count() == 1
        widget.locator("#fullscreen").click()
        wait_for_log(page, "host", "display mode → fullscreen")
        assert page.locator("#stage").get_attribute("data-mode") == "fullscreen"
        widget.locator("#display", has_text="fullscreen").wait_for()  # set_globals told the widget
    finally:
        preview.close()


def test_bridge_messages_appear_in_the_log(page, counter_app):
    preview = serve(counter_app, "show-counter")
    try:
        widget = open_page(page, preview, openai="0")
        widget.locator("#follow").click()
        wait_for_log(page, "bridge", "ui/message (user): Tell me more about the counter")
        widget.locator("#open").click()
        wait_for_log(page, "bridge", "ui/open-link https://example.com/docs")
        widget.locator("#fullscreen").click()
        widget.locator("#display", has_text="fullscreen").wait_for()  # host-context-changed
        assert page.locator("#stage").get_attribute("data-mode") == "fullscreen"
    finally:
        preview.close()


# --- --screenshot, end to end through the CLI ----------------------------------------------------------


def _run_watching(
    args: list[str], marker: str, timeout: float = 60, chromium: str | None = None
) -> tuple[subprocess.CompletedProcess, dict[int, str]]:
    """Run the CLI and note every process it starts (found by an env marker), with its command line, while it runs."""
    env = {**os.environ, "APPSDK_TEST_MARK": marker}
    if chromium:
        env["APPSDK_CHROMIUM"] = chromium
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    seen: dict[int, str] = {}
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        # Read again each time: a process seen between its fork and its exec still shows its parent's
        # command line (the kept browser's first look was the CLI's own, once).
        for pid in marked_pids(f"APPSDK_TEST_MARK={marker}"):
            seen[pid] = command_of(pid) or seen.get(pid, "")
        time.sleep(0.02)
    stdout, stderr = process.communicate(timeout=10)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), seen


# Each Debian browser found: the preview picks chromium-headless-shell first, and plain chromium must work too.
DEBIAN_BROWSERS = [
    path
    for path in ("/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium")
    if os.access(path, os.X_OK)
]


@pytest.mark.parametrize("chromium", DEBIAN_BROWSERS or [CHROMIUM], ids=lambda path: Path(path or "none").name)
def test_screenshot_is_the_widget_frame_and_leaves_nothing_running(
    app_server, tmp_path: Path, chromium: str, monkeypatch
):
    """The shot is taken by a kept browser, which outlives the command only for its idle time (1 s here):
    after that, nothing the command started is left, Chromium and Playwright's driver included."""
    monkeypatch.setenv("APPSDK_KEPT_BROWSER_IDLE", "1")
    out = tmp_path / "widget.png"
    marker = uuid.uuid4().hex
    args = ["preview", "list-books", "--url", app_server.url, "--screenshot", str(out)]
    result, seen = _run_watching(args, marker, chromium=chromium)
    assert result.returncode == 0, result.stderr
    assert str(out) in result.stdout.replace("\n", "")

    width, height, rows = decode_png(out.read_bytes())
    # The inline frame is the 768 px chat column, as tall as the widget reported (three cards), not the page.
    assert width == 768 and 200 < height < 640, (width, height)
    mean, variance, colours = luminance_stats(rows)
    assert mean > 180, "a light-theme widget should be mostly light"
    assert variance > 200 and colours > 50, "the image is blank or nearly so"

    # While it ran: the CLI, the kept browser's process, Playwright's driver and Chromium. After its idle
    # time: none of them, and no socket.
    assert any(command.startswith(chromium) for command in seen.values()), seen
    assert any("playwright" in command for command in seen.values()), seen
    assert any("appsdk_cli.browser.keptbrowser" in command for command in seen.values()), seen
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (
        marked_pids(f"APPSDK_TEST_MARK={marker}") or any(pid_alive(pid) for pid in seen)
    ):
        time.sleep(0.1)
    assert not list(Path(os.environ["APPSDK_HOME"]).glob("browser-*.sock"))
    left = [pid for pid in seen if pid_alive(pid)]
    assert not left, {pid: seen[pid] for pid in left}
    assert not marked_pids(f"APPSDK_TEST_MARK={marker}")
    # The driver's compiled code is kept for the next screenshot (Node's compile cache, under APPSDK_HOME).
    assert any((Path(os.environ["APPSDK_HOME"]) / "node-compile-cache").rglob("*")), "no compile cache written"


def test_screenshot_runs_chromium_sandboxed_unless_it_cannot(app_server, tmp_path: Path):
    """The browser that renders a server's widget keeps its sandbox; only as root, where Chromium cannot start
    with it, is it turned off, and the user is told so in one line. Checked on the live browser's command line."""
    out = tmp_path / "widget.png"
    args = ["preview", "list-books", "--url", app_server.url, "--screenshot", str(out)]
    result, seen = _run_watching(args, uuid.uuid4().hex)
    assert result.returncode == 0, result.stderr
    assert out.is_file()
    browsers = [command for command in seen.values() if command.startswith(CHROMIUM)]
    assert browsers, seen
    said = [line for line in result.stderr.splitlines() if "without its sandbox" in line]
    if os.geteuid() == 0:
        assert all("--no-sandbox" in command for command in browsers), browsers
        assert said == ["running Chromium without its sandbox: appsdk runs as root here"], result.stderr
    else:
        assert not any("--no-sandbox" in command for command in browsers), browsers
        assert said == [], result.stderr


def test_screenshot_dark_bridge_only_differs(app_server, tmp_path: Path):
    out = tmp_path / "dark.png"
    result, _ = _run_watching(
        [
            "preview",
            "list-books",
            "--url",
            app_server.url,
            "--screenshot",
            str(out),
            "--theme",
            "dark",
            "--bridge-only",
        ],
        uuid.uuid4().hex,
    )
    assert result.returncode == 0, result.stderr
    _, _, rows = decode_png(out.read_bytes())
    mean, variance, _ = luminance_stats(rows)
    assert mean < 90 and variance > 200, (mean, variance)


def test_screenshot_without_chromium_says_how_to_install_it(app_server, tmp_path: Path):
    out = tmp_path / "none.png"
    marker = uuid.uuid4().hex
    env_args = ["preview", "list-books", "--url", app_server.url, "--screenshot", str(out)]
    process = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", *env_args],
        env={**os.environ, "APPSDK_CHROMIUM": str(tmp_path / "no-such-chromium"), "APPSDK_TEST_MARK": marker},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 1
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "apt-get install chromium" in lines[0], process.stderr
    assert "Traceback" not in process.stderr and not out.exists()
    assert not marked_pids(f"APPSDK_TEST_MARK={marker}")


def _shot_until_chromium(args: list[str], marker: str, *, own_group: bool) -> tuple[subprocess.Popen, dict[int, str]]:
    """Start `appsdk ARGS` with a browser of its own (the kept one is test_kept_browser's), and return once
    its Chromium runs, with every process it started so far and its command line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", *args],
        env={**os.environ, "APPSDK_TEST_MARK": marker, "APPSDK_KEEP_BROWSER": "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=own_group,  # its own group, which a terminal's Ctrl-C goes to
    )
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 30
    while not any("chrom" in c for c in seen.values()) and time.monotonic() < deadline:
        # Read again each time: before its exec a process shows its parent's command line.
        for pid in marked_pids(f"APPSDK_TEST_MARK={marker}"):
            seen[pid] = command_of(pid) or seen.get(pid, "")
        time.sleep(0.01)
    assert any("chrom" in c for c in seen.values()), "Chromium never started"
    return process, seen


def test_sigterm_during_a_screenshot_stops_the_browser_too(app_server, tmp_path: Path):
    marker = uuid.uuid4().hex
    needle = f"APPSDK_TEST_MARK={marker}"
    args = ["preview", "list-books", "--url", app_server.url, "--screenshot", str(tmp_path / "never.png")]
    process, seen = _shot_until_chromium(args, marker, own_group=False)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode in (1, 130), (process.returncode, stderr)
    assert "Traceback" not in stderr, stderr
    deadline = time.monotonic() + 5  # the browser's own children may take a moment to go with it
    while marked_pids(needle) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in seen if pid_alive(pid)], seen
    assert not marked_pids(needle)


@pytest.mark.parametrize("delay", [0.0, 0.3, 0.8])
def test_ctrl_c_during_a_screenshot_is_one_line_and_exit_130(app_server, tmp_path: Path, delay: float):
    """Ctrl-C as a terminal sends it, to the whole foreground group (appsdk, Playwright's driver, Chromium),
    at a few moments after Chromium starts: one line, exit 130, no asyncio noise, no process left."""
    marker = uuid.uuid4().hex
    needle = f"APPSDK_TEST_MARK={marker}"
    out = tmp_path / "never.png"
    args = ["preview", "list-books", "--url", app_server.url, "--screenshot", str(out)]
    process, seen = _shot_until_chromium(args, marker, own_group=True)
    time.sleep(delay)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    if process.returncode in (0, -signal.SIGINT):
        # The shot was done before the signal landed (the later delays, on a fast machine), or it landed
        # while the interpreter was already shutting down, where Python leaves SIGINT to the OS (a
        # shell shows that as 130 too): the image must then be whole, and the rest below holds as well.
        assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), (process.returncode, stderr)
    else:
        assert process.returncode == 130, (process.returncode, stderr)
        # Root's sandbox notice comes before Chromium starts; after the signal, one line.
        lines = [line for line in stderr.strip().splitlines() if not line.startswith("running Chromium without")]
        assert lines == ["interrupted (Ctrl-C): no screenshot was taken"], stderr
        assert not out.exists()
    assert "Future exception" not in stderr + stdout and "Traceback" not in stderr, stderr
    deadline = time.monotonic() + 5
    while marked_pids(needle) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in seen if pid_alive(pid)], seen
    assert not marked_pids(needle)


@pytest.fixture
def slow_tool_server() -> Iterator[RunningServer]:
    from conftest import free_port, serve, stop

    port = free_port()
    script = Path(__file__).parent / "fixtures" / "slow_tool_server.py"
    server = serve([sys.executable, str(script), "http", str(port), "60"], port)
    yield server
    stop(server.process)


def test_ctrl_c_while_the_tool_is_still_answering_stops_at_once(slow_tool_server, tmp_path: Path):
    """Chromium starts while the tool is called: Ctrl-C before the tool answered (here it takes a minute) is
    still one line and exit 130 at once, not once the call is over, and leaves nothing running."""
    marker = uuid.uuid4().hex
    needle = f"APPSDK_TEST_MARK={marker}"
    out = tmp_path / "never.png"
    args = ["preview", "long-report", "--url", slow_tool_server.url, "--screenshot", str(out)]
    process, seen = _shot_until_chromium(args, marker, own_group=True)
    time.sleep(0.5)
    os.killpg(process.pid, signal.SIGINT)
    signalled = time.monotonic()
    _, stderr = process.communicate(timeout=50)
    assert time.monotonic() - signalled < 15, "it waited for the tool's answer"
    assert process.returncode == 130, (process.returncode, stderr)
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("running Chromium without")]
    assert lines == ["interrupted (Ctrl-C): no screenshot was taken"], stderr
    assert not out.exists()
    deadline = time.monotonic() + 5
    while marked_pids(needle) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in seen if pid_alive(pid)], seen
