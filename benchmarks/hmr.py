"""Save -> widget updated in the preview by hot module replacement, beside save -> server reloaded (`appsdk dev`).

    python benchmarks/hmr.py [--edits 10]

Scaffolds `appsdk new --template react` (npm ci from its lock), runs `appsdk dev` on it and opens the
preview in headless Chromium. Widget edits change the heading in web/src/BookList.tsx; the time is from
just before the write to the moment a MutationObserver inside the widget sees the new heading (both
clocks are this machine's wall clock). A vote clicked before the first edit must survive every one
(no page reload, React state kept). Server edits change the first pick's title in server.py and poll
tools/call until it comes back, as benchmarks/reload.py does. Prints median and p90 of both; goal: the
HMR median <= 200 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from appsdk_cli.browser.chromium import CHROMIUM_FLAGS, find_chromium  # noqa: E402

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list-books", "arguments": {}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
WATCH_HEADING = """() => new Promise((resolve) => {
  const seen = () => document.querySelector("h1")?.textContent;
  window.__headings = window.__headings || [];
  if (!window.__observer) {
    window.__observer = new MutationObserver(() => window.__headings.push([seen(), Date.now()]));
    window.__observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  }
  resolve(true);
})"""


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for {what}")


def first_title(url: str) -> str | None:
    try:
        response = httpx.post(url, content=json.dumps(CALL), headers=HEADERS, timeout=5)
        return response.json()["result"]["structuredContent"]["books"][0]["title"]
    except (httpx.HTTPError, KeyError, ValueError):
        return None


def summary(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[min(len(ms) - 1, round(0.9 * (len(ms) - 1)))]
    return f"{name:<34} median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms   ({len(ms)} saves)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=10)
    edits = parser.parse_args().edits
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("needs Chromium (apt-get install chromium)")

    from playwright.sync_api import sync_playwright

    from appsdk_cli.connection import Target
    from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

    with tempfile.TemporaryDirectory(prefix="appsdk-hmr-") as scratch:
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "appsdk_cli", "new", "shelf", "--template", "react", "--path", scratch],
            check=True,
            capture_output=True,
        )
        print(f"appsdk new --template react, npm ci included: {time.monotonic() - started:.1f} s")
        project = Path(scratch) / "shelf"
        dev = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "dev", "--port", "0"],
            cwd=project,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            state_file = project / ".appsdk" / "dev.json"
            wait_until(state_file.is_file, 120, "appsdk dev")
            state = json.loads(state_file.read_text())
            wait_until((project / "web" / "dist" / "index.html").is_file, 120, "the first build")
            os.chdir(project)
            preview = PreviewServer(prepare(Target(url=state["url"]), "list-books", []), PreviewOptions()).start()
            source = project / "web" / "src" / "BookList.tsx"
            original = source.read_text()
            hmr: list[float] = []
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=list(CHROMIUM_FLAGS))
                page = browser.new_page()
                page.goto(preview.page_url())
                widget = page.frame_locator("#widget")
                widget.locator("li", has_text="Frankenstein").wait_for(timeout=60000)
                widget.locator("button.vote").first.click()
                frame = next(f for f in page.frames if "/widget" in f.url)
                frame.evaluate("window.__loadedOnce = true")
                frame.evaluate(WATCH_HEADING)
                for number in range(edits):
                    heading = f"Picks, take {number}"
                    time.sleep(0.3)  # let the previous update's watchers settle
                    saved_at = time.time() * 1000
                    source.write_text(original.replace("<h1>Book club picks</h1>", f"<h1>{heading}</h1>"))
                    seen = wait_until(
                        lambda heading=heading: next(
                            (at for text, at in frame.evaluate("window.__headings") if text == heading), None
                        ),
                        30,
                        f"the widget to show {heading!r}",
                    )
                    hmr.append((seen - saved_at) / 1000)
                if not frame.evaluate("window.__loadedOnce") or not widget.locator(
                    "button.vote"
                ).first.inner_text().endswith("1"):
                    raise SystemExit("the widget was reloaded or lost its state: that is not HMR")
                browser.close()
            source.write_text(original)
            preview.close()

            server = project / "server.py"
            text = server.read_text()
            reload: list[float] = []
            for number in range(edits):
                title = f"Frankenstein {number}"
                saved_at = time.monotonic()
                server.write_text(text.replace('"title": "Frankenstein"', f'"title": "{title}"'))
                wait_until(lambda title=title: first_title(state["url"]) == title, 60, f"the server to serve {title!r}")
                reload.append(time.monotonic() - saved_at)
                time.sleep(0.3)
            server.write_text(text)
        finally:
            dev.send_signal(signal.SIGINT)
            dev.wait(timeout=30)
    print(summary("save .tsx -> widget updated (HMR)", hmr))
    print(summary("save .py -> server reloaded", reload))
    median = statistics.median(hmr) * 1000
    print(f"HMR goal <= 200 ms: {'met' if median <= 200 else 'NOT met'} ({median:.0f} ms); state kept, no reload")


if __name__ == "__main__":
    main()
