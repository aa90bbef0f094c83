"""What tracing costs: `appsdk call --trace` against a plain call, the Tracer itself, and the traffic panel;
and what a big trace costs to read, to hold in the panel and to export.

    python benchmarks/trace.py [--rounds 15] [--only call,tracer,file,panel,scale] [--records 100000]

- `appsdk call list-books --url URL --json` with and without `--trace FILE`, alternating within each
  round, against the scaffolded book-club app (`python server.py` on a free port), 2026-07-28 era
  remembered from a warm-up. Goal: the traced call's median <= 1.15x the plain one's.
- Tracer(sink=FILE) recording 20,000 tools/call-sized messages in-process: messages per second.
- The traffic panel (workbench/static/traffic.js) in Debian's chromium: adding 5,000 and 50,000 records
  and drawing them. Goal: 5,000 within 200 ms.
- scale (issue #30), at --records (100,000: a 320 MB file of tools/call-sized records):
  - reading the file end to end, each reader in a process of its own (wall time, its peak RSS),
    alternating the order each round: `wc -l`; the old whole read (read_text, splitlines, json.loads
    each: what read_jsonl was); a json.loads a line streamed (the floor of any reader that parses);
    iter_trace; TraceIndex (built, then a page of 50 rows and 100 bodies opened at random).
    Goal: iter_trace and TraceIndex peak RSS flat in the records (< 100 MB), time <= 1.3x the floor.
  - the panel in chromium ingesting the same number of records (made and JSON.parse'd in the page,
    as the workbench gets them over SSE), each in a fresh page: the floor (made and parsed only), the
    panel's floor (the newest within the panel's bounds held in a plain array: what keeping them costs,
    the garbage collector's work included), the panel on main before the bounds (from git, `main:`
    when it is there) and this panel; time, and
    the JS heap after a garbage collection (CDP). Then each panel's export (what the Export button
    builds). Goal: the panel's heap flat in the records (< 150 MB).

Exits 1 if a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from conftest import serve_project, stop  # noqa: E402  (the same real servers the tests use)

from appsdk_cli import trace  # noqa: E402
from appsdk_cli.scaffold import WidgetFlavor, scaffold  # noqa: E402

APPSDK = Path(sys.executable).with_name("appsdk")
CALL_GOAL = 1.15
PANEL_GOAL_MS = 200.0


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {result.stderr.strip()}")
    return elapsed


def call_overhead(rounds: int, folder: Path) -> float:
    import os

    project = scaffold("book-club", folder, flavor=WidgetFlavor.MCP_APPS).path
    server = serve_project(project)
    env = {**os.environ, "APPSDK_HOME": str(folder / "home")}
    plain = [str(APPSDK), "call", "list-books", "--url", server.url, "--json"]
    traced = [*plain, "--trace", str(folder / "trace.jsonl")]
    try:
        timed(plain, env)  # the warm-up: the era (and tool list) remembered, as for a user's second call
        plain_times, traced_times = [], []
        for _ in range(rounds):
            plain_times.append(timed(plain, env))
            traced_times.append(timed(traced, env))
    finally:
        stop(server.process)
    lines = len(trace.read_jsonl(folder / "trace.jsonl"))
    p, t = statistics.median(plain_times), statistics.median(traced_times)
    ratio = t / p
    print(f"appsdk call              median {p * 1000:7.1f} ms")
    print(f"appsdk call --trace      median {t * 1000:7.1f} ms   ({lines} records)")
    print(f"ratio                    {ratio:.2f} (goal <= {CALL_GOAL})")
    return ratio


def tracer_throughput(folder: Path) -> None:
    request = {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "list-books", "arguments": {}}}
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"content": [{"type": "text", "text": "x" * 400}]}}
    with trace.Tracer(sink=folder / "throughput.jsonl") as tracer:
        started = time.perf_counter()
        for n in range(10_000):
            tracer("send", {**request, "id": n})
            tracer("receive", {**answer, "id": n})
        elapsed = time.perf_counter() - started
    print(f"Tracer to a file         {20_000 / elapsed:9,.0f} messages/s ({elapsed / 20_000 * 1e6:.0f} µs each)")


def panel(folder: Path) -> float:
    from preview_helpers import CHROMIUM
    from test_traffic_panel import PanelPage

    from appsdk_cli.browser.chromium import CHROMIUM_FLAGS

    if CHROMIUM is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    tracer = trace.Tracer()
    tracer("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list-books"}})
    tracer("receive", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}})
    tracer("receive", {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x" * 400}]}})
    page_server = PanelPage(tracer.jsonl())
    figures = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_FLAGS))
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.goto(page_server.url)
            page.wait_for_function("window.loaded === true")
            for count in (5_000, 50_000):
                figures[count] = page.evaluate(
                    """async (count) => {
                        const base = window.panel.records();
                        const copies = [];
                        for (let i = 0; i < count; i++) copies.push({ ...base[i % base.length], seq: i + 1, id: i });
                        window.panel.clear();
                        await new Promise((resolve) => requestAnimationFrame(resolve));
                        const started = performance.now();
                        for (const r of copies) window.panel.add(r);
                        document.querySelector('.traffic-viewport').getBoundingClientRect();
                        await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
                        return performance.now() - started;
                    }""",
                    count,
                )
            browser.close()
    finally:
        page_server.close()
    for count, ms in figures.items():
        goal = f"(goal <= {PANEL_GOAL_MS:.0f} ms)" if count == 5_000 else ""
        print(f"panel: {count:>6,} records added and drawn in {ms:6.0f} ms {goal}")
    return figures[5_000]


# --- scale: a big trace read, held in the panel, exported ------------------------------------------

ANSWER_TEXT = 6_200  # characters of an answer's text: a request and its answer average 3.2 kB a record


def generated_trace(path: Path, records: int) -> None:
    """`records` records as `appsdk call --trace` writes them: tools/call requests and their answers."""
    filler = "lorem ipsum dolor sit amet " * (ANSWER_TEXT // 27 + 1)
    with trace.Tracer(sink=path, max_bytes=1_000_000) as tracer:
        for n in range(records // 2):
            tracer("send", {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": f"tool-{n % 5000}"}})
            text = filler[n % 27 : n % 27 + ANSWER_TEXT]
            tracer("receive", {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": text}]}})


# Each reader ends by printing its peak resident memory, VmHWM: per address space, so unlike a child's
# ru_maxrss it does not count the benchmark's own pages the child was forked with.
PEAK = """
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]) // 1024)
"""

READERS: dict[str, str] = {
    # Each a program of its own, run as `python -c PROGRAM FILE`; prints what it read, so nothing is skipped.
    "python start": "import sys, json; from appsdk_cli import trace; print(0)\n",
    "old whole read": """
import sys, json
from pathlib import Path
text = Path(sys.argv[1]).read_text(encoding="utf-8")
records = [json.loads(line) for line in text.splitlines() if line.strip()]
print(len(records))
""",
    "json.loads a line (floor)": """
import sys, json
from appsdk_cli import trace  # started as the readers are
def read(path):  # in a function, as the readers are: its names are locals, not globals
    n = 0
    with open(path, "rb") as lines:
        for line in lines:
            json.loads(line)
            n += 1
    return n
print(read(sys.argv[1]))
""",
    "iter_trace": """
import sys
from appsdk_cli import trace
print(sum(1 for _ in trace.iter_trace(sys.argv[1])))
""",
    "TraceIndex + 100 bodies": """
import random, sys
from appsdk_cli import trace
index = trace.TraceIndex(sys.argv[1])
rows = index.page(len(index) // 2, 50)
bodies = [index.record(random.randrange(len(index)))["message"] for _ in range(100)]
print(len(index) if len(rows) == 50 and len(bodies) == 100 else -1)
""",
}


def run_measured(command: list[str]) -> tuple[float, str]:
    """Wall seconds, and what the process printed."""
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{command[:2]} failed: {result.stderr.strip()}")
    return elapsed, result.stdout.strip()


def file_reading(folder: Path, records: int, rounds: int) -> dict[str, tuple[float, float]]:
    path = folder / "big.jsonl"
    started = time.perf_counter()
    generated_trace(path, records)
    size_mb = path.stat().st_size / 1e6
    print(
        f"\n{records:,}-record trace: {size_mb:,.0f} MB, written by a Tracer in {time.perf_counter() - started:.1f} s"
    )
    commands = {"wc -l": ["wc", "-l", str(path)]}
    commands |= {name: [sys.executable, "-c", program + PEAK, str(path)] for name, program in READERS.items()}
    times: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, list[float]] = {name: [] for name in commands}
    for round_number in range(rounds):
        order = list(commands) if round_number % 2 == 0 else list(reversed(commands))
        for name in order:
            elapsed, out = run_measured(commands[name])
            counted = int(out.split()[0])
            peak = float(out.split()[1]) if name != "wc -l" else float("nan")
            if name not in ("wc -l", "python start") and counted != records:
                raise SystemExit(f"{name} read {counted} records, not {records}")
            times[name].append(elapsed)
            peaks[name].append(peak)
    floor = statistics.median(times["json.loads a line (floor)"])
    print(f"  load average {os.getloadavg()[0]:.1f}; median of {rounds} rounds, each reader in its own process")
    print(f"  {'reader':28} {'time':>8} {'x floor':>8} {'peak RSS':>10} {'x file':>7}")
    figures = {}
    for name in commands:
        t, m = statistics.median(times[name]), max(peaks[name])
        figures[name] = (t, m)
        memory = f"{m:8.0f} MB {m / size_mb:6.2f}x" if m == m else f"{'-':>11} {'-':>7}"  # wc's is not measured
        print(f"  {name:28} {t:7.2f}s {t / floor:7.2f}x {memory}")
    return figures


PANEL_PAGE_SCRIPT = """async ({ count, which, textLength }) => {
    // `count` records made and parsed in the page, as the workbench's page gets them over SSE.
    const text = "lorem ipsum dolor sit amet ".repeat(240).slice(0, textLength);
    let panel = null;
    const held = [];  // "hold": the newest records within the panel's bounds in a plain array, no panel
    let heldBytes = 0;
    if (which === "new" || which === "old") {
        const module = await import(which === "old" ? "/traffic-old.js" : "/traffic.js");
        const mount = document.createElement("div");
        mount.style.height = "600px";
        document.body.replaceChildren(mount);
        window.panel = null;
        panel = module.createTrafficPanel(mount, { filename: "trace.jsonl" });
    }
    const started = performance.now();
    for (let n = 0; n < count; n++) {
        const request = n % 2 === 0;
        const id = n >> 1;
        const line = JSON.stringify({
            time: new Date(1767225600000 + n).toISOString(), seq: n + 1, channel: "mcp",
            from: request ? "workbench" : "server", to: request ? "server" : "workbench",
            kind: request ? "request" : "response", method: "tools/call", id, size: request ? 90 : textLength + 60,
            ...(request ? {} : { duration_ms: 1.5 }),
            message: request
                ? { jsonrpc: "2.0", id, method: "tools/call", params: { name: `tool-${id % 5000}` } }
                : { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: text.slice(id % 27) + id }] } },
        });
        const record = JSON.parse(line);
        if (panel) panel.add(record);
        else if (which === "hold") {
            held.push(record);
            heldBytes += record.size;
            if (heldBytes > 32e6 || held.length > 20000) {
                let drop = 0;
                while (heldBytes > 0.9 * 32e6 || held.length - drop > 18000) heldBytes -= held[drop++].size;
                held.splice(0, drop);
            }
        }
        if (n % 5000 === 4999) await new Promise((resolve) => setTimeout(resolve, 0));  // frames get drawn
    }
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const ingest = performance.now() - started;
    window.kept = panel;
    window.held = held;
    return { ingest, kept: panel ? panel.records().length : held.length };
}"""

EXPORT_SCRIPT = """async () => {
    const started = performance.now();
    const blob = window.kept.exportBlob ? window.kept.exportBlob()
        : new Blob([window.kept.exportJsonLines()], { type: "application/x-ndjson" });
    return { ms: performance.now() - started, bytes: blob.size };
}"""


def old_panel_source() -> str | None:
    """traffic.js as it was before the panel had bounds (main's, when main has not got them yet)."""
    for ref in ("main", "HEAD~3"):
        shown = subprocess.run(
            ["git", "show", f"{ref}:appsdk_cli/workbench/static/traffic.js"], cwd=REPO, capture_output=True, text=True
        )
        if shown.returncode == 0 and "oldestToDrop" not in shown.stdout:
            return shown.stdout
    return None


def panel_at_scale(records: int, rounds: int) -> dict[str, dict[str, Any]]:
    from playwright.sync_api import sync_playwright
    from preview_helpers import CHROMIUM
    from test_traffic_panel import PanelPage

    from appsdk_cli.browser.chromium import CHROMIUM_FLAGS

    if CHROMIUM is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    old = old_panel_source()
    variants = ["floor", "hold", "new"] + (["old"] if old else [])
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    page_server = PanelPage("")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_FLAGS))
            for round_number in range(rounds):
                for which in variants if round_number % 2 == 0 else list(reversed(variants)):
                    context = browser.new_context(viewport={"width": 1200, "height": 800})
                    page = context.new_page()
                    if old:
                        page.route(
                            "**/traffic-old.js", lambda route: route.fulfill(body=old, content_type="text/javascript")
                        )
                    page.goto(page_server.url)
                    page.wait_for_function("window.loaded === true")
                    cdp = context.new_cdp_session(page)
                    figures = page.evaluate(
                        PANEL_PAGE_SCRIPT, {"count": records, "which": which, "textLength": ANSWER_TEXT}
                    )
                    cdp.send("HeapProfiler.collectGarbage")
                    figures["heap_mb"] = cdp.send("Runtime.getHeapUsage")["usedSize"] / 1e6
                    if which in ("new", "old"):
                        exported = page.evaluate(EXPORT_SCRIPT)
                        figures["export_ms"], figures["export_mb"] = exported["ms"], exported["bytes"] / 1e6
                    results[which].append(figures)
                    context.close()
            browser.close()
    finally:
        page_server.close()
    print(
        f"\nthe panel, {records:,} records made, parsed and added in the page (load average {os.getloadavg()[0]:.1f})"
    )
    floor = statistics.median(r["ingest"] for r in results["floor"])
    summary = {}
    names = {
        "floor": "made + parsed (floor)",
        "hold": "+ held in an array",
        "new": "this panel",
        "old": "panel before (main)",
    }
    for which in variants:
        rows = results[which]
        ingest = statistics.median(r["ingest"] for r in rows)
        heap = max(r["heap_mb"] for r in rows)
        line = f"  {names[which]:22} {ingest / 1000:6.2f} s ({ingest / floor:5.2f}x floor)  heap {heap:6.0f} MB"
        if which != "floor":
            line += f"  kept {rows[0]['kept']:>7,}"
        if which in ("new", "old"):
            export = statistics.median(r["export_ms"] for r in rows)
            line += f"  export {export:6.0f} ms ({rows[0]['export_mb']:.0f} MB)"
        print(line)
        summary[which] = {"ingest_ms": ingest, "heap_mb": heap}
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--scale-rounds", type=int, default=2, help="rounds of the scale figures (default 2)")
    parser.add_argument("--records", type=int, default=100_000, help="records of the scale figures")
    parser.add_argument("--only", default="call,tracer,panel,file,scale", help="comma-separated parts to run")
    arguments = parser.parse_args()
    parts = set(arguments.only.split(","))
    goals: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        if "call" in parts:
            ratio = call_overhead(arguments.rounds, folder)
            goals.append(("call --trace", ratio <= CALL_GOAL))
        if "tracer" in parts:
            tracer_throughput(folder)
        if "panel" in parts:
            goals.append(("panel", panel(folder) <= PANEL_GOAL_MS))
        if "file" in parts:
            read = file_reading(folder, arguments.records, arguments.scale_rounds)
            floor = read["json.loads a line (floor)"][0]
            for name in ("iter_trace", "TraceIndex + 100 bodies"):
                goals.append((f"{name} memory", read[name][1] < 100))
                goals.append((f"{name} time", read[name][0] <= 1.3 * floor))
        if "scale" in parts:
            held = panel_at_scale(arguments.records, arguments.scale_rounds)
            goals.append(("panel heap", held["new"]["heap_mb"] < 150))
    missed = [name for name, ok in goals if not ok]
    if missed:
        print(f"missed: {', '.join(missed)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
