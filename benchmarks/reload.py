"""Save -> change visible through /mcp: `appsdk dev` against `uvicorn --reload`, on the same app.

    python benchmarks/reload.py [--edits 12]                 the book-club scaffold
    python benchmarks/reload.py --modules 1,50,300           a generated app of N modules, one run per N
    python benchmarks/reload.py --tools 1000                 a generated app with N tools (each with schemas)
    python benchmarks/reload.py --baseline DIR               also time the appsdk_cli found in DIR (a
                                                             checkout of another commit), in the same rounds

Each server serves its own fresh copy of the app. The edits alternate between the servers: change the
first pick's title in server.py, then poll tools/call list-books as fast as the server answers until the
new title comes back. Every poll that fails (refused, reset, non-200, JSON-RPC error) is counted.
Prints median and p90 for each, the ratio of the medians to uvicorn's, the failed polls, and the load
average before and after. Goal on the scaffold: appsdk dev <= 0.10x uvicorn --reload (moonshot: 50 ms
p50), and zero failed polls.
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


SERVER = '''"""A generated app for the reload benchmark: {what}."""

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

{imports}

HINTS = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
mcp = MCPServer(name="generated", version="0.0.1", log_level="WARNING")


@mcp.tool(name="list-books", title="List books", annotations=HINTS)
def list_books() -> dict[str, Any]:
    """The club's next picks."""
    return {{"books": [{{"title": "Frankenstein", "modules": {modules}}}]}}


def register(index: int) -> None:
    def find(
        query: Annotated[str, Field(description=f"What tool {{index}} looks for")], limit: int = 10
    ) -> dict[str, Any]:
        return {{"tool": index, "query": query, "limit": limit}}

    mcp.tool(
        name=f"tool-{{index:04d}}", title=f"Tool {{index}}", description=f"Finds things, {{index}}.", annotations=HINTS
    )(find)


for number in range({tools}):
    register(number)
'''
# One of the app's own modules: a dataclass, a few functions and constants, as an app's helpers look.
MODULE = '''"""Helpers number {index} of the generated app."""

from __future__ import annotations

import dataclasses
import re

PATTERN = re.compile(r"^[a-z]+-{index}$")
LIMITS = {{"small": {index}, "large": {index} * 10}}


@dataclasses.dataclass(frozen=True)
class Record{index}:
    name: str
    size: int = {index}

    def label(self) -> str:
        return f"{{self.name}} ({{self.size}})"


def normalise(text: str) -> str:
    return " ".join(text.split()).lower()


def matches(text: str) -> bool:
    return bool(PATTERN.match(normalise(text)))


def total(records: list[Record{index}]) -> int:
    return sum(record.size for record in records)
'''


def generate(project: Path, modules: int, tools: int) -> Path:
    """An app of `modules` modules (server.py and modules - 1 helpers in helpers/) and `tools` tools
    besides list-books."""
    project.mkdir(parents=True)
    helpers = project / "helpers"
    helpers.mkdir()
    (helpers / "__init__.py").write_text("", encoding="utf-8")
    for index in range(modules - 1):
        (helpers / f"h{index:03d}.py").write_text(MODULE.format(index=index), encoding="utf-8")
    imports = "\n".join(f"from helpers import h{index:03d}  # noqa: F401" for index in range(modules - 1))
    what = f"{modules} modules, {tools + 1} tools"
    server = SERVER.format(what=what, imports=imports, modules=modules, tools=tools)
    (project / "server.py").write_text(server, encoding="utf-8")
    return project


def start(name: str, root: Path, app: tuple[int, int] | None, baseline: Path | None = None) -> Contender:
    project = scaffold("book-club", root / name).path if app is None else generate(root / name / "app", *app)
    port = free_port()
    env = None
    if name.startswith("appsdk dev"):
        command = [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(port)]
        if baseline is not None:
            # The other checkout's appsdk_cli comes first on sys.path (the same venv for everything else).
            env = {**os.environ, "PYTHONPATH": str(baseline)}
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
    process = subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    contender = Contender(name, project, process, port)
    wait_serving(contender)
    return contender


def summary(contender: Contender) -> tuple[float, float]:
    median = statistics.median(contender.seconds)
    p90 = statistics.quantiles(contender.seconds, n=10, method="inclusive")[8]
    return median, p90


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def run(edits: int, app: tuple[int, int] | None, baseline: Path | None) -> bool:
    root = Path(tempfile.mkdtemp(prefix="appsdk-bench-"))
    names = ["appsdk dev", *(["appsdk dev (baseline)"] if baseline else []), "uvicorn --reload"]
    for name in names:
        (root / name).mkdir()
    what = "the book-club scaffold" if app is None else f"a generated app of {app[0]} modules and {app[1] + 1} tools"
    load_before = load()
    contenders: list[Contender] = []
    try:
        for name in names:
            contenders.append(start(name, root, app, baseline if "baseline" in name else None))
        time.sleep(1.0)  # every watcher settled
        for edition in range(1, edits + 1):
            # Alternate who goes first, so neither always follows the same other server's reload.
            for contender in contenders if edition % 2 else reversed(contenders):
                measure_one_edit(contender, edition)
    finally:
        for contender in contenders:
            contender.process.send_signal(signal.SIGINT)
        for contender in contenders:
            try:
                contender.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                contender.process.kill()

    print(f"save -> visible through /mcp on {what}, {edits} edits each, alternating (python {sys.version.split()[0]})")
    print(f"  load average before {load_before}, after {load()}")
    uvicorn = summary(contenders[-1])[0]
    for contender in contenders:
        median, p90 = summary(contender)
        print(
            f"  {contender.name:<22} median {median * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms   "
            f"{median / uvicorn:5.2f}x uvicorn   failed polls {contender.failed} of {contender.polls}"
        )
    ours = summary(contenders[0])[0]
    ratio = ours / uvicorn
    goal = 0.10
    print(f"  ratio (appsdk dev / uvicorn --reload, medians): {ratio:.2f}x   goal <= {goal:.2f}x")
    ok = ratio <= goal and contenders[0].failed == 0
    print("  goal met" if ok else "  goal NOT met")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=12, help="edits per server (at least 10)")
    parser.add_argument("--modules", help="generated apps of these many modules, comma-separated (1,50,300)")
    parser.add_argument("--tools", type=int, default=0, help="tools in the generated app besides list-books")
    parser.add_argument("--baseline", type=Path, help="a checkout whose appsdk_cli to time as well")
    arguments = parser.parse_args()
    edits = max(10, arguments.edits)
    baseline = arguments.baseline.resolve() if arguments.baseline else None
    if arguments.modules:
        apps: list[tuple[int, int] | None] = [(int(n), arguments.tools) for n in arguments.modules.split(",")]
    elif arguments.tools:
        apps = [(1, arguments.tools)]
    else:
        apps = [None]
    results = [run(edits, app, baseline) for app in apps]
    if os.environ.get("APPSDK_BENCH_STRICT") and not all(results):
        sys.exit(1)


if __name__ == "__main__":
    main()
