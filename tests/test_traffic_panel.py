"""The traffic panel (appsdk_cli/workbench/static/traffic.js) in Debian's chromium, fed a real trace.

The trace comes from `appsdk call --trace` against @modelcontextprotocol/server-everything: a failed
modern probe (an HTTP 400), the handshake, progress notifications, an elicitation and its answer. A tiny
page served by the test (not part of the product) mounts the panel and adds the trace's records.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import INTEROP, appsdk, free_port, serve, stop
from preview_helpers import NEEDS_CHROMIUM, decode_png, luminance_stats

from appsdk_cli import trace

STATIC = Path(__file__).resolve().parents[1] / "appsdk_cli" / "workbench" / "static"
EVERYTHING = INTEROP / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>traffic panel test page</title>
<link rel="stylesheet" href="/traffic.css">
<style>
  html, body { margin: 0; height: 100%; }
  body { padding: 16px; box-sizing: border-box; background: #eceef1; font-family: system-ui, sans-serif; }
  html[data-theme="dark"] body { background: #0e0f11; }
  #panel { height: 100%; }
</style>
</head>
<body>
<div id="panel"></div>
<script type="module">
  import { createTrafficPanel } from "/traffic.js";
  const theme = new URLSearchParams(location.search).get("theme") || "light";
  document.documentElement.dataset.theme = theme;
  // ?maxRecords=…&maxBytes=…: the panel's bounds, small enough for a test to pass them.
  const params = new URLSearchParams(location.search);
  const bounds = Object.fromEntries([...params].filter(([k]) => k.startsWith("max")).map(([k, v]) => [k, Number(v)]));
  window.panel = createTrafficPanel(document.getElementById("panel"), { filename: "trace.jsonl", ...bounds });
  const text = await (await fetch("/trace.jsonl")).text();
  for (const line of text.split("\\n")) if (line) window.panel.add(JSON.parse(line));
  window.loaded = true;
</script>
</body>
</html>
"""


class PanelPage:
    """Serves the page, the panel's two files, and one trace."""

    def __init__(self, trace_text: str) -> None:
        files = {
            "/": (PAGE.encode(), "text/html; charset=utf-8"),
            "/traffic.js": ((STATIC / "traffic.js").read_bytes(), "text/javascript"),
            "/traffic.css": ((STATIC / "traffic.css").read_bytes(), "text/css"),
            "/trace.jsonl": (trace_text.encode(), "application/x-ndjson"),
        }

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body, kind = files.get(self.path.split("?")[0], (b"not found", "text/plain"))
                self.send_response(200 if self.path.split("?")[0] in files else 404)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def real_trace(node_clients, tmp_path_factory) -> str:
    """JSON lines from two real `appsdk call --trace` runs against server-everything."""
    folder = tmp_path_factory.mktemp("panel")
    home = {"APPSDK_HOME": str(folder / "home")}
    port = free_port()
    server = serve(["node", str(EVERYTHING), "streamableHttp"], port, cwd=INTEROP, env={"PORT": str(port)})
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        slow, asked = folder / "slow.jsonl", folder / "asked.jsonl"
        first = appsdk(
            "call", "trigger-long-running-operation", "duration=1", "steps=3", "--url", url, "--trace", str(slow),
            env=home,
        )  # fmt: skip
        second = appsdk(
            "call", "trigger-elicitation-request", "--answer", "name=<img src=x onerror=window.pwned=1>",
            "--answer", "check=true", "--url", url, "--trace", str(asked), env=home,
        )  # fmt: skip
        assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    finally:
        stop(server.process)
    return slow.read_text(encoding="utf-8") + asked.read_text(encoding="utf-8")


@pytest.fixture
def page_server(real_trace) -> Iterator[PanelPage]:
    server = PanelPage(real_trace)
    yield server
    server.close()


def open_panel(browser, page_server: PanelPage, theme: str = "light", size=(1100, 720), query: str = ""):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{page_server.url}?theme={theme}{query}")
    page.wait_for_function("window.loaded === true")
    return context, page, errors


def visible_methods(page) -> list[str]:
    script = """rows => rows.sort((a, b) => a.dataset.index - b.dataset.index)
        .map(r => r.querySelector('.traffic-method-name').textContent)"""
    return page.eval_on_selector_all(".traffic-sizer .traffic-row", script)


def test_rows_filter_viewer_pairing_and_export(browser, page_server, real_trace, tmp_path: Path):
    records = list(trace.iter_jsonl(real_trace))
    context, page, errors = open_panel(browser, page_server)
    try:
        # Every record is a row, in order, and the toolbar counts them per channel.
        page.wait_for_function(f"document.querySelectorAll('.traffic-sizer .traffic-row').length === {len(records)}")
        assert visible_methods(page) == [r["method"] or "(unknown)" for r in records]
        assert page.text_content(".traffic-count") == f"{len(records)} messages"
        assert page.text_content(".traffic-toggle[data-channel=mcp] .traffic-toggle-count") == str(len(records))
        # The failed 2026-07-28 probe (HTTP 400) is marked as an error.
        assert page.locator(".traffic-row.is-error").count() >= 1
        first_error = page.locator(".traffic-row.is-error").first
        assert "server/discover" in first_error.text_content()

        # The text filter narrows to the progress notifications; "hide notifications" then hides them all.
        page.fill(".traffic-search", "notifications/progress")
        page.wait_for_function("document.querySelectorAll('.traffic-sizer .traffic-row').length === 3")
        assert page.text_content(".traffic-count") == f"3 of {len(records)}"
        page.check(".traffic-hide input")
        page.wait_for_function("document.querySelectorAll('.traffic-sizer .traffic-row').length === 0")
        assert page.is_visible("text=Nothing matches the filter.")
        page.uncheck(".traffic-hide input")
        page.fill(".traffic-search", "")
        # Switching the mcp channel off leaves nothing (this trace is all mcp); on again, all is back.
        page.click(".traffic-toggle[data-channel=mcp]")
        page.wait_for_function("document.querySelectorAll('.traffic-sizer .traffic-row').length === 0")
        page.click(".traffic-toggle[data-channel=mcp]")
        page.wait_for_function(f"document.querySelectorAll('.traffic-sizer .traffic-row').length === {len(records)}")

        # Clicking the long-running call's answer opens the JSON viewer on its message.
        answer_index = next(i for i, r in enumerate(records) if r["method"] == "tools/call" and r["kind"] == "response")
        page.click(f".traffic-row[data-index='{answer_index}']")
        assert page.is_visible(".traffic-detail")
        viewer = page.text_content(".traffic-json")
        assert "Long running operation completed" in viewer and '"content"' in viewer
        assert page.text_content(".traffic-detail-method") == "tools/call"
        # Its partner, the request, is marked in the timeline; the button goes there and back.
        request_index = max(
            i for i, r in enumerate(records[:answer_index]) if r["method"] == "tools/call" and r["kind"] == "request"
        )
        assert page.get_attribute(f".traffic-row[data-index='{request_index}']", "class").count("is-partner") == 1
        page.click(".traffic-partner")
        assert page.get_attribute(f".traffic-row[data-index='{request_index}']", "aria-selected") == "true"
        assert '"trigger-long-running-operation"' in page.text_content(".traffic-json")
        page.click(".traffic-partner")
        assert page.get_attribute(f".traffic-row[data-index='{answer_index}']", "aria-selected") == "true"
        # The keyboard moves the selection in the focused timeline; Escape closes the viewer.
        page.focus(".traffic-viewport")
        page.keyboard.press("ArrowUp")
        assert page.get_attribute(f".traffic-row[data-index='{answer_index - 1}']", "aria-selected") == "true"
        page.keyboard.press("Escape")
        assert not page.is_visible(".traffic-detail")

        # The elicitation answer carries markup from the command line: shown as text, never run.
        answer = next(
            i for i, r in enumerate(records) if r["method"] == "elicitation/create" and r["kind"] == "response"
        )
        page.click(f".traffic-row[data-index='{answer}']")
        assert "<img src=x onerror=window.pwned=1>" in page.text_content(".traffic-json")
        assert page.locator(".traffic-panel img").count() == 0
        assert page.evaluate("window.pwned") is None

        # Export: the download is exportJsonLines(), which parses back to the records, byte for byte the file.
        with page.expect_download() as download_info:
            page.click("text=Export")
        download = download_info.value
        assert download.suggested_filename == "trace.jsonl"
        saved = tmp_path / "exported.jsonl"
        download.save_as(saved)
        exported = saved.read_text(encoding="utf-8")
        assert exported == page.evaluate("window.panel.exportJsonLines()")
        assert list(trace.iter_jsonl(exported)) == records
        assert exported == real_trace
        assert page.evaluate("window.panel.records().length") == len(records)

        page.click("text=Clear")
        page.wait_for_function("document.querySelectorAll('.traffic-sizer .traffic-row').length === 0")
        assert page.evaluate("window.panel.exportJsonLines()") == "" and page.is_visible("text=No traffic yet.")
        assert errors == []
    finally:
        context.close()


def test_five_thousand_records_stay_few_rows_in_the_page(browser, page_server):
    context, page, errors = open_panel(browser, page_server)
    try:
        figures = page.evaluate(
            """async () => {
                const base = window.panel.records();
                const copies = [];
                for (let i = 0; i < 5000; i++) {
                    const r = structuredClone(base[i % base.length]);
                    r.seq = i + 1;
                    copies.push(r);
                }
                window.panel.clear();
                const started = performance.now();
                for (const r of copies) window.panel.add(r);
                await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
                const rows = document.querySelectorAll('.traffic-sizer .traffic-row').length;
                return { ms: performance.now() - started, rows };
            }"""
        )
        # Drawn incrementally: only the rows in view (and a margin) exist, whatever the count.
        assert 10 < figures["rows"] < 120, figures
        assert page.text_content(".traffic-count") == "5,000 messages"
        # It follows the newest record; scrolling to the top draws the first rows instead.
        last = page.eval_on_selector_all(
            ".traffic-sizer .traffic-row", "rows => Math.max(...rows.map(r => +r.dataset.index))"
        )
        assert last == 4999
        page.eval_on_selector(".traffic-viewport", "v => { v.scrollTop = 0; }")
        page.wait_for_function("document.querySelector(\".traffic-row[data-index='0']\") !== null")
        page.fill(".traffic-search", "elicitation/create")
        page.wait_for_function("document.querySelector('.traffic-count').textContent.includes(' of ')")
        count = page.text_content(".traffic-count")
        assert count.endswith("of 5,000") and int(count.split(" ")[0].replace(",", "")) > 0
        print(f"\n5,000 records added and drawn in {figures['ms']:.0f} ms ({figures['rows']} rows in the page)")
        assert errors == []
    finally:
        context.close()


ADD_COPIES = """async ({ count, text, firstSeq }) => {
    const base = window.panel.records().length ? window.panel.records() : window.seed;
    window.seed = base;
    for (let i = 0; i < count; i++) {
        const r = structuredClone(base[i % base.length]);
        r.seq = firstSeq + i;
        if (text) {
            r.message = { jsonrpc: "2.0", id: r.seq, result: { content: [{ type: "text", text }] } };
            r.size = JSON.stringify(r.message).length;
        }
        window.panel.add(r);
    }
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    return document.querySelectorAll('.traffic-sizer .traffic-row').length;
}"""


def test_past_its_bounds_the_panel_keeps_the_newest_and_says_how_many_went(browser, page_server, tmp_path: Path):
    context, page, errors = open_panel(browser, page_server, query="&maxRecords=1000&maxBytes=2000000")
    try:
        page.evaluate("window.seed = window.panel.records(); window.panel.clear()")
        rows = page.evaluate(ADD_COPIES, {"count": 30_000, "text": "", "firstSeq": 1})
        kept = page.evaluate("window.panel.records().map(r => r.seq)")
        # Trimmed in batches down to nine tenths: never more than the bound, the newest, none missing.
        assert 900 <= len(kept) <= 1000 and kept == list(range(30_001 - len(kept), 30_001))
        assert page.evaluate("window.panel.dropped()") == 30_000 - len(kept)
        assert page.text_content(".traffic-count") == f"{len(kept):,} messages"
        assert page.text_content(".traffic-dropped") == f"{30_000 - len(kept):,} earlier dropped"
        assert f"{30_000 - len(kept):,} earlier ones are not here" in page.get_attribute(".traffic-count", "title")
        assert f"({30_000 - len(kept):,} earlier ones were dropped)" in page.get_attribute(".traffic-primary", "title")
        assert 10 < rows < 120
        with page.expect_download() as download_info:
            page.click("text=Export")
        saved = tmp_path / "kept.jsonl"
        download_info.value.save_as(saved)
        assert [r["seq"] for r in trace.read_jsonl(saved)] == kept
        assert saved.read_text(encoding="utf-8") == page.evaluate("window.panel.exportJsonLines()")

        # Scrolled to the top: the oldest kept row. Looking at a row in the middle, more traffic trims
        # the oldest and the rows in view stay where they were.
        first = 30_000 - len(kept)
        page.eval_on_selector(".traffic-viewport", "v => { v.scrollTop = 0; }")
        page.wait_for_function(f"document.querySelector(\".traffic-row[data-index='{first}']\") !== null")
        page.eval_on_selector(".traffic-viewport", "v => { v.scrollTop = 400 * 26; }")
        middle = first + 420
        page.wait_for_selector(f".traffic-row[data-index='{middle}']")
        page.click(f".traffic-row[data-index='{middle}']")
        top_before = page.eval_on_selector(f".traffic-row[data-index='{middle}']", "r => r.getBoundingClientRect().top")
        page.evaluate(ADD_COPIES, {"count": 150, "text": "", "firstSeq": 30_001})
        assert page.evaluate("window.panel.dropped()") > 30_000 - len(kept)  # a trim happened
        top_after = page.eval_on_selector(f".traffic-row[data-index='{middle}']", "r => r.getBoundingClientRect().top")
        assert abs(top_after - top_before) < 1 and page.is_visible(".traffic-detail")

        # Big messages: the byte bound governs (2 MB of 50 kB answers is 40 of them).
        page.evaluate("window.panel.clear()")
        page.evaluate(ADD_COPIES, {"count": 500, "text": "x" * 50_000, "firstSeq": 1})
        sizes = page.evaluate("window.panel.records().map(r => r.size)")
        assert 30 <= len(sizes) <= 40 and sum(sizes) <= 2_000_000
        # A gap in the server's numbering (records it did not keep for this page) counts as dropped.
        page.evaluate("window.panel.clear()")
        page.evaluate(ADD_COPIES, {"count": 10, "text": "", "firstSeq": 1})
        page.evaluate(ADD_COPIES, {"count": 5, "text": "", "firstSeq": 20})
        assert page.text_content(".traffic-count") == "15 messages"
        assert page.text_content(".traffic-dropped") == "9 earlier dropped"
        page.evaluate("window.panel.clear()")
        page.wait_for_selector(".traffic-dropped", state="hidden")
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_screenshots_follow_the_theme(browser, page_server, real_trace, tmp_path: Path, theme):
    records = list(trace.iter_jsonl(real_trace))
    context, page, errors = open_panel(browser, page_server, theme)
    try:
        answer = next(i for i, r in enumerate(records) if r["method"] == "tools/call" and r["kind"] == "response")
        page.click(f".traffic-row[data-index='{answer}']")
        page.eval_on_selector(".traffic-viewport", "v => { v.scrollTop = 0; }")
        page.wait_for_function("document.querySelector(\".traffic-row[data-index='0']\") !== null")
        folder = Path(os.environ.get("APPSDK_TEST_SCREENSHOTS", tmp_path))
        folder.mkdir(parents=True, exist_ok=True)
        shot = page.screenshot(path=str(folder / f"traffic-{theme}.png"))
        _, _, rows = decode_png(shot)
        mean, variance, colours = luminance_stats(rows)
        assert colours > 20 and variance > 0
        assert (mean > 170) if theme == "light" else (mean < 80), mean
        background = page.eval_on_selector(
            ".traffic-viewport", "v => getComputedStyle(v.parentElement).backgroundColor"
        )
        assert background == ("rgb(255, 255, 255)" if theme == "light" else "rgb(23, 24, 27)")
        assert errors == []
    finally:
        context.close()
