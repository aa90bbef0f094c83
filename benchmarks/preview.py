"""How long a whole `appsdk preview list-books --screenshot` takes, end to end, against its floor.

    python benchmarks/preview.py [--rounds 5] [--chromium PATH]

Against the scaffolded book-club app served by `python server.py` on a free port, runs, alternating
within each round so drift hits all alike:
  warm:  appsdk preview list-books --url URL --screenshot OUT.png   (this checkout's `appsdk`, a fresh
         process, with the APPSDK_HOME it already used: the kept browser the previous shot left running,
         and Node's compile cache of Playwright's driver)
  cold:  the same with a fresh, empty APPSDK_HOME each time (no kept browser: this one starts it)
  alone: the same as warm with --no-keep-browser (each shot starts and stops its own browser, as before
         the kept browser)
  the floor: a bare Playwright script in a fresh process that launches the same Chromium with the same
  flags, loads the widget's HTML with the tool's output already inlined, and screenshots it
and prints the medians, their ratios to the floor and the load average. appsdk's extra is what the
preview adds: the MCP calls, the host page, the second origin, waiting for the widget to settle.
Goals (issue #30): warm at most 1 s, cold at most 2 s. Exits 1 if one is missed. Every PNG is checked
to be a PNG.

The Chromium is the one `appsdk preview` finds (APPSDK_CHROMIUM, else Debian's chromium-headless-shell,
else chromium); --chromium picks one for both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from conftest import serve_project, stop  # noqa: E402  (the same real server the tests use)

from appsdk_cli.browser.capture import png_size  # noqa: E402
from appsdk_cli.browser.chromium import CHROMIUM_FLAGS, find_chromium  # noqa: E402
from appsdk_cli.scaffold import scaffold  # noqa: E402

WARM_GOAL_SECONDS = 1.0
COLD_GOAL_SECONDS = 2.0

FLOOR = """
import json, sys
from playwright.sync_api import sync_playwright
chromium, html, out, flags = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=chromium, headless=True, args=flags)
    page = browser.new_page(viewport={"width": 768, "height": 900})
    page.set_content(open(html).read())
    page.locator("body").screenshot(path=out)
    browser.close()
"""


def find_appsdk() -> list[str]:
    script = Path(sys.executable).parent / "appsdk"
    return [str(script)] if script.exists() else [sys.executable, "-m", "appsdk_cli"]


def timed(argv: list[str], out: Path, env: dict[str, str]) -> float:
    out.unlink(missing_ok=True)
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
    png_size(out.read_bytes())  # raises unless it is a PNG
    return elapsed


def floor_html(project: Path) -> str:
    """The widget with window.openai.toolOutput inlined: what a bare screenshot script would load."""
    widget = (project / "widgets" / "book-list.html").read_text(encoding="utf-8")
    stub = (
        "<script>window.openai = {theme: 'light', toolOutput: {books: ["
        "{title: 'Frankenstein', author: 'Mary Shelley'}, {title: 'Pride and Prejudice', author: 'Jane Austen'},"
        "{title: 'The Time Machine', author: 'H. G. Wells'}]}};</script>"
    )
    return widget.replace("<head>", "<head>" + stub, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chromium", help="the Chromium executable for both sides")
    options = parser.parse_args()
    chromium = options.chromium or find_chromium()
    env = {**os.environ, "APPSDK_CHROMIUM": chromium}

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        project = scaffold("book-club", work).path
        html = work / "floor.html"
        html.write_text(floor_html(project), encoding="utf-8")
        server = serve_project(project)
        # The warm rounds' home is ours too: when the folder goes, so does the browser kept in it.
        env["APPSDK_HOME"] = str(work / "home-warm")
        try:
            appsdk_argv = [*find_appsdk(), "preview", "list-books", "--url", server.url, "--screenshot"]
            flags = json.dumps(list(CHROMIUM_FLAGS))
            floor_argv = [sys.executable, "-c", FLOOR, chromium, str(html), str(work / "floor.png"), flags]
            # One untimed round each: the first launch pays for cold disk caches, not for appsdk.
            timed([*appsdk_argv, str(work / "warm.png")], work / "warm.png", env)
            timed(floor_argv, work / "floor.png", env)
            load_before = os.getloadavg()
            ours: list[float] = []
            cold: list[float] = []
            alone: list[float] = []
            floor: list[float] = []
            alone_argv = [*appsdk_argv[:-1], "--no-keep-browser", "--screenshot", str(work / "alone.png")]
            for round_number in range(options.rounds):
                ours.append(timed([*appsdk_argv, str(work / "shot.png")], work / "shot.png", env))
                fresh_home = {**env, "APPSDK_HOME": str(work / f"home-{round_number}")}
                cold.append(timed([*appsdk_argv, str(work / "cold.png")], work / "cold.png", fresh_home))
                # The cold round's kept browser goes (its socket removed), so it costs the next rounds nothing.
                for kept in (work / f"home-{round_number}").glob("browser-*.sock"):
                    kept.unlink()
                alone.append(timed(alone_argv, work / "alone.png", env))
                floor.append(timed(floor_argv, work / "floor.png", env))
            load_after = os.getloadavg()
            width, height = png_size((work / "shot.png").read_bytes())
        finally:
            stop(server.process)

    median, cold_median, floor_median = statistics.median(ours), statistics.median(cold), statistics.median(floor)
    print(f"chromium: {chromium}  ({os.cpu_count()} CPUs, {options.rounds} rounds)")
    print("load average: " + " -> ".join(" ".join(f"{x:.2f}" for x in load) for load in (load_before, load_after)))
    alone_median = statistics.median(alone)
    for what, times, goal in (("warm", ours, WARM_GOAL_SECONDS), ("cold", cold, COLD_GOAL_SECONDS)):
        runs = ", ".join(f"{t:.2f}" for t in times)
        middle = statistics.median(times)
        verdict = "met" if middle <= goal else "MISSED"
        print(f"appsdk preview list-books --screenshot, {what}: median {middle:.2f} s  (runs {runs})")
        print(f"  ratio to the floor {middle / floor_median:.2f}x; goal {goal:.0f} s: {verdict}")
    print(f"  wrote a {width}x{height} PNG of the widget frame")
    runs = ", ".join(f"{t:.2f}" for t in alone)
    print(f"--no-keep-browser (a browser of its own, as before): median {alone_median:.2f} s  (runs {runs})")
    print(f"  ratio to the floor {alone_median / floor_median:.2f}x; warm is {median / alone_median:.2f}x of it")
    print(f"bare Playwright screenshot (floor): median {floor_median:.2f} s")
    if median > WARM_GOAL_SECONDS or cold_median > COLD_GOAL_SECONDS:
        sys.exit(1)


if __name__ == "__main__":
    main()
