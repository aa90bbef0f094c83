"""What tracing costs: `appsdk call --trace` against a plain call, the Tracer itself, and the traffic panel.

    python benchmarks/trace.py [--rounds 15]

- `appsdk call list-books --url URL --json` with and without `--trace FILE`, alternating within each
  round, against the scaffolded book-club app (`python server.py` on a free port), 2026-07-28 era
  remembered from a warm-up. Goal: the traced call's median <= 1.15x the plain one's.
- Tracer(sink=FILE) recording 20,000 tools/call-sized messages in-process: messages per second.
- The traffic panel (workbench/static/traffic.js) in Debian's chromium: adding 5,000 and 50,000 records
  and drawing them. Goal: 5,000 within 200 ms.

Exits 1 if a goal is missed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    from test_traffic_panel import CHROMIUM, PanelPage

    from appsdk_cli.preview.screenshot import CHROMIUM_FLAGS

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        ratio = call_overhead(rounds, folder)
        tracer_throughput(folder)
        panel_ms = panel(folder)
    missed = [
        name for name, ok in (("call --trace", ratio <= CALL_GOAL), ("panel", panel_ms <= PANEL_GOAL_MS)) if not ok
    ]
    if missed:
        print(f"missed: {', '.join(missed)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
