"""The workbench at scale: `appsdk preview`'s workbench on a generated server of 100, 1,000 and 5,000 tools.

    python benchmarks/workbench_scale.py [--tools 100,1000,5000] [--runs 30] [--baseline CHECKOUT]

For each size, tests/fixtures/many_tools.py serves N tools (each with input and output schemas), and
`appsdk preview --url` serves the workbench on it (this checkout's, a fresh process). Then:
  one run: POST /api/runs for one tool, until its `run` event says done (the page's path), beside the
  peer measured in the same rounds: the same call made straight to the server in a fresh MCP session
  (connect, call), so the ratio is what the workbench adds.
  server RSS after 1, 3 and 30 runs (VmRSS of the preview process): flat in the number of runs is the goal.
  first event: the bytes of the hello a page opened after the runs gets (bounded, not growing with runs).
  clicking a tool: in headless Chromium, from the click on a tool in the list to the next frame painted
  with its form (goal at 5,000 tools: well under 200 ms), beside the same click at the smallest size.
`--baseline CHECKOUT` (a checkout with its own .venv, e.g. /work/main) measures the same against it,
the two alternating size by size, so before and after share the machine's load.
Prints each figure, its ratio to its peer, and the load average.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FIXTURE = REPO / "tests" / "fixtures" / "many_tools.py"
RSS_AFTER = (1, 3, 30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port} after {seconds:.0f} s")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


class Events:
    """/api/events as the page reads it: (event, data) pairs on a queue; the hello's size kept."""

    def __init__(self, port: int) -> None:
        self.queue: Queue[tuple[str, Any]] = Queue()
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.connection.request("GET", "/api/events")
        self.response = self.connection.getresponse()
        self.hello_bytes = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        event, data = "", b""
        try:
            for line in self.response:
                if line.startswith(b"event: "):
                    event = line[7:].strip().decode()
                elif line.startswith(b"data: "):
                    data = line[6:].rstrip(b"\n")
                elif line == b"\n" and event:
                    if event == "hello":
                        self.hello_bytes = len(data)
                    self.queue.put((event, json.loads(data)))
                    event, data = "", b""
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        self.connection.close()


class Workbench:
    """`appsdk preview --url` serving the workbench, from a checkout's own venv."""

    def __init__(self, checkout: Path, mcp_url: str) -> None:
        self.port = free_port()
        appsdk = checkout / ".venv" / "bin" / "appsdk"
        self.process = subprocess.Popen(
            [str(appsdk), "preview", "--url", mcp_url, "--port", str(self.port), "--no-open"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
            cwd=checkout,
        )
        # Serving once it said so: by then it has listed the tools (its first use).
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(b"Open:"):
                break
        else:
            raise SystemExit(f"appsdk preview --url {mcp_url} stopped before serving")
        threading.Thread(target=self.process.stdout.read, daemon=True).start()  # the rest, unread, never blocks it
        self.origin = f"http://127.0.0.1:{self.port}"
        self.events = Events(self.port)
        event, _ = self.events.queue.get(timeout=120)
        assert event == "hello", event

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        headers = {"Content-Type": "application/json", "Origin": self.origin}
        connection.request("POST", path, body=json.dumps(body), headers=headers)
        answer = json.loads(connection.getresponse().read())
        connection.close()
        return answer

    def run(self, tool: str) -> float:
        """One run, from the POST to its `run` event saying it ended (the page's view of it)."""
        started = time.perf_counter()
        run_id = self.post("/api/runs", {"tool": tool, "arguments": {"query": "books"}})["run"]["id"]
        while True:
            try:
                event, data = self.events.queue.get(timeout=600)
            except Empty:
                raise SystemExit(f"run {run_id} never ended") from None
            if event == "run" and data["id"] == run_id and data["status"] != "running":
                if data["status"] != "done":
                    raise SystemExit(f"run {run_id}: {data['status']}: {data.get('error')}")
                return time.perf_counter() - started

    def hello_bytes(self) -> int:
        fresh = Events(self.port)
        fresh.queue.get(timeout=600)
        size = fresh.hello_bytes
        fresh.close()
        return size

    def stop(self) -> None:
        self.events.close()
        self.process.send_signal(2)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def direct_call(mcp_url: str, tool: str) -> float:
    """The peer: the same call straight to the server, in a fresh session (connect, call)."""
    from appsdk_cli.connection import Target, session

    started = time.perf_counter()
    with session(Target(url=mcp_url)) as client:
        client.call_tool(tool, {"query": "books"})
    return time.perf_counter() - started


def click_times(url: str, tools: int, chromium: str, rounds: int) -> list[float]:
    """Seconds from the click on a tool in the list to the next frame, its form drawn."""
    from playwright.sync_api import sync_playwright

    from appsdk_cli.browser.chromium import CHROMIUM_FLAGS

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=list(CHROMIUM_FLAGS))
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url)
        page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready", timeout=600_000)
        page.wait_for_function(f"() => document.querySelectorAll('#tool-list .tool-item').length === {tools}")
        for round_ in range(rounds):
            name = f"tool-{(tools - 1 - round_ * 7) % tools:04d}"
            seconds = page.evaluate(
                """async (name) => {
                    const item = document.querySelector(`#tool-list [data-tool="${name}"]`);
                    const started = performance.now();
                    item.click();
                    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
                    if (document.getElementById("tool-name").textContent !== name) throw new Error("not selected");
                    return (performance.now() - started) / 1000;
                }""",
                name,
            )
            times.append(seconds)
        browser.close()
    return times


def measure(checkout: Path, tools: int, runs: int, chromium: str | None, clicks: int) -> dict[str, Any]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(FIXTURE), str(port), str(tools)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    mcp_url = f"http://127.0.0.1:{port}/mcp"
    figures: dict[str, Any] = {"runs": [], "direct": [], "rss": {}}
    try:
        wait_port(port, 120)
        bench = Workbench(checkout, mcp_url)
        try:
            figures["rss"][0] = rss_mb(bench.process.pid)
            for number in range(1, runs + 1):
                tool = f"tool-{(number * 37) % tools:04d}"
                # The run and its peer alternate, so both see the same load.
                figures["runs"].append(bench.run(tool))
                figures["direct"].append(direct_call(mcp_url, tool))
                if number in RSS_AFTER:
                    figures["rss"][number] = rss_mb(bench.process.pid)
            figures["hello"] = bench.hello_bytes()
            if chromium:
                figures["clicks"] = click_times(f"{bench.origin}/", tools, chromium, clicks)
        finally:
            bench.stop()
    finally:
        server.terminate()
        server.wait(10)
    return figures


def report(label: str, tools: int, figures: dict[str, Any], click_peer: float | None) -> None:
    runs, direct = figures["runs"], figures["direct"]
    run_median, direct_median = statistics.median(runs), statistics.median(direct)
    print(f"[{label}] {tools} tools  (load average {load()})")
    print(
        f"  one run: median {run_median * 1000:.0f} ms"
        f" (first {figures['runs'][0] * 1000:.0f} ms, max {max(runs) * 1000:.0f} ms);"
        f" the same call direct: {direct_median * 1000:.0f} ms; ratio {run_median / direct_median:.2f}"
    )
    rss = figures["rss"]
    after = ", ".join(f"{count} run{'s' * (count != 1)}: {rss[count]:.0f} MB" for count in RSS_AFTER if count in rss)
    last = max(rss)
    growth = (rss[last] - rss[1]) / max(1, last - 1)
    print(f"  server RSS: at start {rss[0]:.0f} MB; after {after}; {growth:+.2f} MB per run after the first")
    print(f"  first event of a page opened after {last} runs: {figures['hello'] / 1024:.0f} KB")
    if "clicks" in figures:
        click = statistics.median(figures["clicks"])
        ratio = f"; ratio to the smallest size {click / click_peer:.1f}" if click_peer else ""
        print(f"  clicking a tool: median {click * 1000:.0f} ms (max {max(figures['clicks']) * 1000:.0f} ms){ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="100,1000,5000", help="sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--clicks", type=int, default=7)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to measure beside this one")
    parser.add_argument("--no-browser", action="store_true", help="leave out clicking a tool")
    parser.add_argument("--chromium", default=None)
    options = parser.parse_args()
    chromium = None
    if not options.no_browser:
        from appsdk_cli.browser.chromium import find_chromium

        chromium = options.chromium or find_chromium()
    checkouts = [("this", REPO)] + ([("baseline", options.baseline.resolve())] if options.baseline else [])
    print(f"{os.cpu_count()} CPUs, load average {load()}; {options.runs} runs per size")
    click_peers: dict[str, float] = {}
    for tools in (int(size) for size in re.split(r"[,\s]+", options.tools) if size):
        for label, checkout in checkouts:
            figures = measure(checkout, tools, options.runs, chromium, options.clicks)
            report(label, tools, figures, click_peers.get(label))
            if "clicks" in figures:
                click_peers.setdefault(label, statistics.median(figures["clicks"]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
