"""Save -> change visible through /mcp: `appsdk dev` against `uvicorn --reload`, on the same app.

    python benchmarks/reload.py [--edits 12]

Each server serves its own fresh copy of the book-club scaffold. The edits alternate between the two:
change the first pick's title, then poll tools/call list-books as fast as the server answers until the
new title comes back. Every poll that fails (refused, reset, non-200, JSON-RPC error) is counted.
Prints median and p90 for both, the ratio of the medians, and the failed polls. Goal: ratio <= 0.4
and zero failed polls for appsdk dev.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from appsdk_cli.scaffold import scaffold  # noqa: E402

UVICORN_FACTORY = '''"""The scaffold's server as uvicorn --factory serves it: stateless JSON, like appsdk dev."""

from server import mcp


def create():
    return mcp.streamable_http_app(stateless_http=True, json_response=True)
'''
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list-books", "arguments": {}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class Contender:
    name: str
    project: Path
    process: subprocess.Popen
    port: int
    title: str = "Frankenstein"
    seconds: list[float] = field(default_factory=list)
    failed: int = 0
    polls: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def first_title(client: httpx.Client, url: str) -> str:
    response = client.post(url, content=json.dumps(CALL), headers=HEADERS, timeout=10)
    response.raise_for_status()
    body = response.json()
    if "error" in body:
        raise RuntimeError(body["error"]["message"])
    return body["result"]["structuredContent"]["books"][0]["title"]


def wait_serving(contender: Contender, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client() as client:
        while time.monotonic() < deadline:
            if contender.process.poll() is not None:
                raise SystemExit(f"{contender.name} exited with {contender.process.returncode}")
            try:
                if first_title(client, contender.url) == contender.title:
                    return
            except (httpx.HTTPError, RuntimeError, KeyError, ValueError):
                time.sleep(0.05)
    raise SystemExit(f"{contender.name} did not serve within {timeout} s")


def measure_one_edit(contender: Contender, edition: int) -> None:
    server_py = contender.project / "server.py"
    new_title = f"Edition {edition:03d}"
    text = server_py.read_text(encoding="utf-8").replace(f'"{contender.title}"', f'"{new_title}"', 1)
    with httpx.Client() as client:
        saved = time.perf_counter()
        server_py.write_text(text, encoding="utf-8")
        while True:
            contender.polls += 1
            try:
                if first_title(client, contender.url) == new_title:
                    break
            except (httpx.HTTPError, RuntimeError, KeyError, ValueError):
                contender.failed += 1
            if time.perf_counter() - saved > 30:
                raise SystemExit(f"{contender.name}: edit {edition} not visible after 30 s")
        contender.seconds.append(time.perf_counter() - saved)
    contender.title = new_title
    # Let the server settle (uvicorn's old process exiting, our retired worker draining).
    time.sleep(0.4)


def start(name: str, root: Path) -> Contender:
    project = scaffold("book-club", root / name).path
    port = free_port()
    if name == "appsdk dev":
        command = [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(port)]
    else:
        (project / "uvicorn_app.py").write_text(UVICORN_FACTORY, encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "uvicorn_app:create",
            "--app-dir",
            str(project),
            "--reload",
            "--reload-dir",
            str(project),
            "--port",
            str(port),
            "--log-level",
            "warning",
        ]
    process = subprocess.Popen(command, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    contender = Contender(name, project, process, port)
    wait_serving(contender)
    return contender


def summary(contender: Contender) -> tuple[float, float]:
    median = statistics.median(contender.seconds)
    p90 = statistics.quantiles(contender.seconds, n=10, method="inclusive")[8]
    return median, p90


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=12, help="edits per server (at least 10)")
    edits = max(10, parser.parse_args().edits)
    root = Path(tempfile.mkdtemp(prefix="appsdk-bench-"))
    for name in ("appsdk dev", "uvicorn --reload"):
        (root / name).mkdir()
    contenders = [start("appsdk dev", root), start("uvicorn --reload", root)]
    try:
        time.sleep(1.0)  # both watchers settled
        for edition in range(1, edits + 1):
            for contender in contenders:
                measure_one_edit(contender, edition)
    finally:
        for contender in contenders:
            contender.process.send_signal(signal.SIGINT)
        for contender in contenders:
            try:
                contender.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                contender.process.kill()

    print(f"save -> visible through /mcp, {edits} edits each, alternating (python {sys.version.split()[0]})")
    for contender in contenders:
        median, p90 = summary(contender)
        print(
            f"  {contender.name:<17} median {median * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms   "
            f"failed polls {contender.failed} of {contender.polls}"
        )
    ours, theirs = (summary(c)[0] for c in contenders)
    ratio = ours / theirs
    print(f"  ratio (appsdk dev / uvicorn --reload, medians): {ratio:.2f}x   goal <= 0.40x")
    ok = ratio <= 0.4 and contenders[0].failed == 0
    print("  goal met" if ok else "  goal NOT met")
    if os.environ.get("APPSDK_BENCH_STRICT") and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
