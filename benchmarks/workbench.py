"""The workbench's live loop and its screenshots, against `appsdk preview --screenshot`.

    python benchmarks/workbench.py [--rounds 10] [--chromium PATH]

Scaffolds the book-club app, runs `appsdk dev` on it (this checkout's, a fresh process), opens the
workbench it prints in headless Chromium and runs list-books there. Then:
  save → re-rendered: each round writes the widget's HTML with a new heading and times, from the write,
  until the open workbench's widget shows it (the dev reload, the push, the template read afresh and the
  widget rendered again; the page itself is never reloaded). Goal: median ≤ 300 ms.
  warm screenshot: a PNG of the rendered widget's host frame from the running workbench. Goal: < 1 s.
  preview --screenshot: `appsdk preview list-books --screenshot OUT.png` end to end in a fresh process
  (connect, call, render, settle, capture). Goal: < 2 s.
Prints the medians, dev's own reload time (from its terminal lines), and the ratios between them.
Exits 1 if a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from conftest import free_port  # noqa: E402  (the same helpers the tests use)

from appsdk_cli.preview.screenshot import CHROMIUM_FLAGS, find_chromium, png_size  # noqa: E402
from appsdk_cli.scaffold import scaffold  # noqa: E402

GOALS = {"save → re-rendered": 0.300, "warm screenshot": 1.0, "preview --screenshot": 2.0}
HEADING = "Book club picks"


def appsdk() -> list[str]:
    script = Path(sys.executable).parent / "appsdk"
    return [str(script)] if script.exists() else [sys.executable, "-m", "appsdk_cli"]


class DevProcess:
    """`appsdk dev` in the background, its output kept (reload lines carry dev's own timing)."""

    def __init__(self, project: Path, port: int) -> None:
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
        self.process = subprocess.Popen(
            [*appsdk(), "dev", "--port", str(port)],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self.workbench = ""
        self.mcp = ""
        started = threading.Event()

        def read() -> None:
            for line in self.process.stdout:
                self.lines.append(line)
                if found := re.search(r"Workbench\s+(http://\S+/)", line):
                    self.workbench = found.group(1)
                if found := re.search(r"Serving\s+(http://\S+/mcp)", line):
                    self.mcp = found.group(1)
                if "Ctrl-C to stop" in line:
                    started.set()

        threading.Thread(target=read, daemon=True).start()
        if not started.wait(60) or not self.workbench:
            self.stop()
            raise SystemExit("appsdk dev did not start:\n" + "".join(self.lines))

    def reload_seconds(self) -> list[float]:
        return [float(m.group(1)) for line in self.lines if (m := re.search(r"reloaded in ([\d.]+) s", line))]

    def stop(self) -> None:
        self.process.send_signal(2)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--chromium", default=None)
    options = parser.parse_args()
    chromium = options.chromium or find_chromium()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as temp:
        project = scaffold("book-club", Path(temp)).path
        widget_file = project / "widgets" / "book-list.html"
        original = widget_file.read_text()
        assert HEADING in original, "the scaffold's widget heading moved; update HEADING"
        dev = DevProcess(project, free_port())
        saves: list[float] = []
        pushed: list[float] = []  # from the save to the page hearing of the reload
        warm: list[float] = []
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=list(CHROMIUM_FLAGS))
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(dev.workbench)
                page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
                page.click("#run-button")
                host = page.locator(".host-frame iframe").first
                widget = host.content_frame.frame_locator("#widget")
                widget.get_by_text("Frankenstein").wait_for(timeout=30_000)
                for round_ in range(options.rounds):
                    heading = f"{HEADING} (round {round_ + 1})"
                    started, wall = time.perf_counter(), time.time()
                    widget_file.write_text(original.replace(HEADING, heading))
                    widget.get_by_text(heading).wait_for(timeout=30_000)
                    saves.append(time.perf_counter() - started)
                    pushed.append(page.evaluate("() => window.appsdkWorkbench.lastReloadAt") / 1000 - wall)
                    # Let the watcher's debounce window close before the next save.
                    time.sleep(0.6)
                out = Path(temp) / "warm.png"
                for _ in range(options.rounds):
                    started = time.perf_counter()
                    host.screenshot(path=str(out))
                    warm.append(time.perf_counter() - started)
                png_size(out.read_bytes())  # a PNG, or this raises
                browser.close()
            end_to_end: list[float] = []
            shot = Path(temp) / "preview.png"
            for _ in range(max(3, options.rounds // 2)):
                shot.unlink(missing_ok=True)
                started = time.perf_counter()
                done = subprocess.run(
                    [*appsdk(), "preview", "list-books", "--url", dev.mcp, "--screenshot", str(shot)],
                    capture_output=True,
                    text=True,
                    env={**os.environ, "APPSDK_CHROMIUM": chromium},
                )
                end_to_end.append(time.perf_counter() - started)
                if done.returncode != 0:
                    raise SystemExit(f"appsdk preview --screenshot failed:\n{done.stdout}{done.stderr}")
                png_size(shot.read_bytes())
        finally:
            dev.stop()

    medians = {
        "save → re-rendered": statistics.median(saves),
        "warm screenshot": statistics.median(warm),
        "preview --screenshot": statistics.median(end_to_end),
    }
    reloads = dev.reload_seconds()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"chromium: {chromium}  ({os.cpu_count()} CPUs, load average {load}, {options.rounds} rounds)")
    print(
        f"save → widget re-rendered in the open workbench: median {medians['save → re-rendered'] * 1000:.0f} ms"
        f"  (runs {', '.join(f'{s * 1000:.0f}' for s in saves)} ms)"
    )
    if reloads:
        dev_part = statistics.median(reloads)
        print(f"  of which appsdk dev's own reload (save seen → new worker serving): median {dev_part * 1000:.0f} ms")
        share = dev_part / medians["save → re-rendered"]
        print(f"  ratio dev reload / save → re-rendered: {share:.2f}")
    push = statistics.median(pushed)
    print(
        f"  of which save → the page hears of the reload (SSE): median {push * 1000:.0f} ms;"
        f" then the widget re-rendered: median {(medians['save → re-rendered'] - push) * 1000:.0f} ms"
    )
    print(f"warm screenshot from the running workbench: median {medians['warm screenshot'] * 1000:.0f} ms")
    print(
        f"appsdk preview --screenshot end to end: median {medians['preview --screenshot']:.2f} s"
        f"  (runs {', '.join(f'{s:.2f}' for s in end_to_end)} s)"
    )
    ratio = medians["preview --screenshot"] / medians["warm screenshot"]
    print(f"ratio preview --screenshot / warm workbench screenshot: {ratio:.1f}x")
    missed = [name for name, goal in GOALS.items() if medians[name] > goal]
    for name, goal in GOALS.items():
        verdict = "met" if name not in missed else "MISSED"
        print(
            f"goal {name}: ≤ {goal * 1000:.0f} ms: {verdict}" if goal < 1 else f"goal {name}: < {goal:.0f} s: {verdict}"
        )
    if missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
