"""How long `appsdk test`'s rendered-widget tests take: one warm test, and the scaffold's whole suite.

    python benchmarks/apptest.py [--rounds 20]

In a freshly scaffolded book-club app:
  warm:  one pytest session runs the same rendered-widget test rounds+1 times (render list-books in the
         chatgpt profile, read the three titles); the first pays for the app, the host and Chromium, and
         the rest are each one reset kept page, one tool call, one settled widget. The median of
         the warm ones (pytest's own per-test time, from its JUnit report) against the goal, 300 ms.
  floor: the browser's own floor for the same work, measured before and after the warm run: a bare
         Playwright script in the same Chromium with the same flags loads the widget's HTML with the tool's
         output already inlined into one kept page and reads the three titles, rounds+1 times (the first
         dropped); no host, no MCP call, no second origin.
  suite: `python -m pytest` in the project, as its README says: first run (writes the four snapshots)
         and second run (compares with them), wall clock against the goal, 10 s, for the second.
Exits 1 if a goal is missed. Chromium as the plugin finds it ($APPSDK_CHROMIUM, else the system's).
The load average is printed with the figures: on a shared machine, read the ratio to the floor.
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
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from appsdk_cli.browser.chromium import CHROMIUM_FLAGS, find_chromium  # noqa: E402
from appsdk_cli.scaffold import scaffold  # noqa: E402

WARM_GOAL_SECONDS = 0.300
SUITE_GOAL_SECONDS = 10.0

WARM_TEST = """
import pytest

@pytest.mark.parametrize("round", range({count}))
def test_render(render_widget, round):
    widget = render_widget("list-books", {{"month": "June"}})
    assert widget.texts(".title") == ["Frankenstein", "Pride and Prejudice", "The Time Machine"]
"""


FLOOR = """
import json, statistics, sys, time
from playwright.sync_api import sync_playwright
chromium, html, rounds, flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
content = open(html).read()
times = []
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=chromium, headless=True, args=flags)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    for _ in range(rounds + 1):
        started = time.perf_counter()
        page.set_content(content)
        titles = page.locator(".title").all_inner_texts()
        times.append(time.perf_counter() - started)
        assert titles == ["Frankenstein", "Pride and Prejudice", "The Time Machine"], titles
    browser.close()
print(statistics.median(times[1:]))
"""


def floor_html(project: Path) -> str:
    """The widget with window.openai.toolOutput inlined: what a bare script would load."""
    widget = (project / "widgets" / "book-list.html").read_text(encoding="utf-8")
    stub = (
        "<script>window.openai = {theme: 'light', toolOutput: {books: ["
        "{title: 'Frankenstein', author: 'Mary Shelley'}, {title: 'Pride and Prejudice', author: 'Jane Austen'},"
        "{title: 'The Time Machine', author: 'H. G. Wells'}]}};</script>"
    )
    return widget.replace("<head>", "<head>" + stub, 1)


def floor_run(html: Path, rounds: int) -> float:
    flags = json.dumps(list(CHROMIUM_FLAGS) + (["--no-sandbox"] if os.geteuid() == 0 else []))
    argv = [sys.executable, "-c", FLOOR, os.environ.get("APPSDK_CHROMIUM") or find_chromium(), str(html), str(rounds)]
    done = subprocess.run([*argv, flags], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        sys.exit(f"the floor script failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def pytest_run(project: Path, *args: str) -> float:
    environment = {k: v for k, v in os.environ.items() if k != "CI"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"pytest failed in {project}:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="appsdk-bench-test-") as folder:
        project = scaffold("book-club", Path(folder)).path
        bench = project / "tests" / "test_bench_warm.py"
        bench.write_text(WARM_TEST.format(count=options.rounds + 1))
        report = Path(folder) / "warm.xml"
        html = Path(folder) / "floor.html"
        html.write_text(floor_html(project), encoding="utf-8")
        load_before = os.getloadavg()
        floors = [floor_run(html, options.rounds)]
        pytest_run(project, str(bench.relative_to(project)), f"--junitxml={report}")
        floors.append(floor_run(html, options.rounds))
        load_after = os.getloadavg()
        times = [float(case.get("time") or 0) for case in ElementTree.parse(report).getroot().iter("testcase")]
        warm = times[1:]
        bench.unlink()
        first_suite = pytest_run(project)
        second_suite = pytest_run(project)
    median = statistics.median(warm)
    print(f"one rendered-widget test, warm: median {median * 1000:.0f} ms of {len(warm)}", end="")
    print(f" (min {min(warm) * 1000:.0f}, max {max(warm) * 1000:.0f}; the first, cold: {times[0]:.2f} s)")
    floor = statistics.mean(floors)
    print(
        f"  the browser's floor (bare Playwright, widget inlined, one kept page): {floor * 1000:.0f} ms"
        f" (before {floors[0] * 1000:.0f}, after {floors[1] * 1000:.0f}); ratio {median / floor:.1f}x"
    )
    print("  load average: " + " -> ".join(" ".join(f"{x:.2f}" for x in load) for load in (load_before, load_after)))
    print(f"  goal {WARM_GOAL_SECONDS * 1000:.0f} ms: {'met' if median <= WARM_GOAL_SECONDS else 'MISSED'}")
    print(f"the scaffold's whole suite: {second_suite:.1f} s (first run, writing its snapshots: {first_suite:.1f} s)")
    print(f"  goal {SUITE_GOAL_SECONDS:.0f} s: {'met' if second_suite <= SUITE_GOAL_SECONDS else 'MISSED'}")
    return 0 if median <= WARM_GOAL_SECONDS and second_suite <= SUITE_GOAL_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
