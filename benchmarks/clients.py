"""Concurrent clients on one app: `appsdk dev` against plain uvicorn (keep-alive both), then a reload mid-run.

    python benchmarks/clients.py [--clients 1,10,50,200] [--seconds 4] [--rounds 2] [--reload-clients 10]

Each server serves its own fresh copy of the book-club scaffold on a free 127.0.0.1 port: `appsdk dev`
(as a user starts it) and `uvicorn --factory` on the same MCPServer (stateless JSON, as dev serves it,
no --reload). N clients (asyncio, one httpx connection each, kept alive) post tools/call list-books in
a loop for a fixed time. Each round runs dev then uvicorn at every N, the order alternating per round,
so drift hits both alike. Prints operations per second, p50 and p99 latency, errors (refused, reset,
non-200, JSON-RPC error), and the ratio of dev's operations per second to uvicorn's. Goal: >= 0.9x at
1, 10 and 50 clients (200 is reported), 0 errors.

Then the reload run: clients keep calling dev while the app's server.py is saved three times. Every
failed request counts, and so does a stale answer: the old title for a request sent after dev printed
its `reloaded` line. Goal: 0 of both.

The client runs on the same machine as the server and takes CPU of its own: compare the ratio, not the
absolute figures, and read them with the load average printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from conftest import free_port  # noqa: E402

from appsdk_cli.scaffold import scaffold  # noqa: E402

UVICORN_FACTORY = '''"""The scaffold's server as uvicorn --factory serves it: stateless JSON, like appsdk dev."""

from server import mcp


def create():
    return mcp.streamable_http_app(stateless_http=True, json_response=True)
'''
CALL = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list-books", "arguments": {}}}
)
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
GOAL = 0.9
GOAL_CLIENTS = (1, 10, 50)


@dataclass
class Server:
    name: str
    project: Path
    process: subprocess.Popen
    port: int
    stdout: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@dataclass
class Tally:
    seconds: float = 0.0
    cpu: float = 0.0  # CPU seconds the server's processes spent meanwhile
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_errors: list[str] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.first_errors) < 3:
            self.first_errors.append(what)

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    @property
    def cpu_per_call(self) -> float:
        return self.cpu / len(self.latencies) if self.latencies else float("nan")

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def title_of(response: httpx.Response) -> str:
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}")
    body = response.json()
    if "error" in body:
        raise RuntimeError(body["error"]["message"])
    if body["result"].get("isError"):
        raise RuntimeError("tool error")
    return body["result"]["structuredContent"]["books"][0]["title"]


async def one_client(
    client: httpx.AsyncClient, url: str, until: float, tally: Tally, answers: list[tuple[float, str]] | None
) -> None:
    while (started := time.perf_counter()) < until:
        try:
            response = await client.post(url, content=CALL, headers=HEADERS)
            title = title_of(response)
        except (httpx.HTTPError, RuntimeError, KeyError, ValueError) as problem:
            tally.error(f"{type(problem).__name__}: {problem}")
            continue
        tally.latencies.append(time.perf_counter() - started)
        if answers is not None:
            answers.append((started, title))


async def load(url: str, clients: int, seconds: float, answers: list[tuple[float, str]] | None = None) -> Tally:
    """`clients` connections, each opened (and used once) before the clock starts, then a loop each."""
    tally = Tally()
    # One TLS context for all: httpx builds one per client otherwise (tens of ms each, on our CPU).
    shared_tls = ssl.create_default_context()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    pool = [httpx.AsyncClient(limits=limits, timeout=30, verify=shared_tls) for _ in range(clients)]
    try:
        await asyncio.gather(*(client.post(url, content=CALL, headers=HEADERS) for client in pool))
        began = time.perf_counter()
        until = began + seconds
        await asyncio.gather(*(one_client(client, url, until, tally, answers) for client in pool))
        tally.seconds = time.perf_counter() - began
    finally:
        await asyncio.gather(*(client.aclose() for client in pool))
    return tally


def wait_serving(server: Server, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client() as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                raise SystemExit(f"{server.name} exited with {server.process.returncode}")
            try:
                title_of(client.post(server.url, content=CALL, headers=HEADERS, timeout=10))
                return
            except (httpx.HTTPError, RuntimeError, KeyError, ValueError):
                time.sleep(0.05)
    raise SystemExit(f"{server.name} did not serve within {timeout} s")


def start(name: str, root: Path) -> Server:
    project = scaffold("book-club", root / name).path
    port = free_port()
    stdout = root / f"{name}.out"
    if name == "appsdk dev":
        command = [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(port)]
    else:
        (project / "uvicorn_app.py").write_text(UVICORN_FACTORY, encoding="utf-8")
        command = [sys.executable, "-m", "uvicorn", "--factory", "uvicorn_app:create", "--app-dir", str(project)]
        command += ["--port", str(port), "--log-level", "warning"]
    with stdout.open("w") as out:
        process = subprocess.Popen(command, cwd=project, stdout=out, stderr=subprocess.DEVNULL)
    server = Server(name, project, process, port, stdout)
    wait_serving(server)
    return server


def cpu_seconds(pid: int) -> float:
    """User and system CPU of a process and its children (dev's supervisor and worker), from /proc.

    Less noisy than throughput on a shared machine: other load slows a server down, but does not make
    it spend more CPU per call."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pids = [pid]
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            pids += [int(child) for child in children.read_text().split()]
    for one in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def measured(server: Server, clients: int, seconds: float) -> Tally:
    before = cpu_seconds(server.process.pid)
    tally = asyncio.run(load(server.url, clients, seconds))
    tally.cpu = cpu_seconds(server.process.pid) - before
    return tally


def stop(server: Server) -> None:
    server.process.send_signal(signal.SIGINT)
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()


def merge(into: Tally, tally: Tally) -> None:
    into.seconds += tally.seconds
    into.cpu += tally.cpu
    into.latencies += tally.latencies
    into.errors += tally.errors
    into.first_errors += tally.first_errors[: 3 - len(into.first_errors)]


def throughput(servers: list[Server], counts: list[int], seconds: float, rounds: int) -> bool:
    totals = {(s.name, n): Tally() for s in servers for n in counts}
    loads: list[float] = []
    for round_number in range(rounds):
        order = servers if round_number % 2 == 0 else servers[::-1]
        for n in counts:
            for server in order:
                asyncio.run(load(server.url, n, 0.5))  # warm: connections open, caches filled
                merge(totals[(server.name, n)], measured(server, n, seconds))
                loads.append(os.getloadavg()[0])
    dev, uvicorn = servers
    print(f"{rounds} rounds x {seconds:g} s per server and client count, alternating")
    print(f"load average during the runs: {min(loads):.1f}-{max(loads):.1f} (this machine has {os.cpu_count()} cores)")
    ok = True
    for n in counts:
        ours, theirs = totals[(dev.name, n)], totals[(uvicorn.name, n)]
        for server, tally in ((dev, ours), (uvicorn, theirs)):
            print(
                f"  {n:>4} clients  {server.name:<11} {tally.rate:8.1f} ops/s"
                f"   p50 {tally.percentile(0.5) * 1000:7.1f} ms   p99 {tally.percentile(0.99) * 1000:7.1f} ms"
                f"   server CPU {tally.cpu_per_call * 1000:5.2f} ms/op"
                f"   errors {tally.errors}" + (f"   ({'; '.join(tally.first_errors)})" if tally.first_errors else "")
            )
        ratio = ours.rate / theirs.rate if theirs.rate else float("nan")
        cpu_ratio = theirs.cpu_per_call / ours.cpu_per_call if ours.cpu_per_call else float("nan")
        goal = f"goal >= {GOAL:g}x" if n in GOAL_CLIENTS else "reported"
        print(
            f"  {n:>4} clients  ratio dev/uvicorn: ops/s {ratio:.2f}x ({goal}); "
            f"calls per server CPU second {cpu_ratio:.2f}x"
        )
        if n in GOAL_CLIENTS and (ratio < GOAL or ours.errors):
            ok = False
    return ok


def reload_run(dev: Server, clients: int, saves: int = 3) -> bool:
    """Clients call dev throughout while server.py is saved `saves` times; count errors and stale answers."""
    server_py = dev.project / "server.py"
    answers: list[tuple[float, str]] = []
    reported: list[tuple[float, str]] = []  # (when dev's `reloaded` line was seen, the title it brought)

    async def edits() -> None:
        title = title_of(httpx.post(dev.url, content=CALL, headers=HEADERS, timeout=10))
        for edition in range(1, saves + 1):
            await asyncio.sleep(1.0)
            new = f"Edition {edition}"
            lines_before = dev.stdout.read_text().count("reloaded")
            server_py.write_text(server_py.read_text().replace(f'"{title}"', f'"{new}"', 1))
            while dev.stdout.read_text().count("reloaded") <= lines_before:
                await asyncio.sleep(0.005)
            reported.append((time.perf_counter(), new))
            title = new

    async def both() -> Tally:
        seconds = 1.0 * saves + 2.0
        tally, _ = await asyncio.gather(load(dev.url, clients, seconds, answers), edits())
        return tally

    tally = asyncio.run(both())
    # Titles in the order they went live: an answer may be newer than the last reported (a reload not yet
    # said), never older.
    order = {title: index for index, (_, title) in enumerate(reported)}
    stale: list[str] = []
    for started, title in answers:
        due = [index for index, (seen, _) in enumerate(reported) if seen < started]
        if due and order.get(title, -1) < due[-1]:
            seen, expected = reported[due[-1]]
            stale.append(f"{title!r} for a request sent {(started - seen) * 1000:.1f} ms after {expected!r}")
    print(
        f"reload run: {clients} clients for {tally.seconds:.1f} s, {saves} saves: {len(tally.latencies)} answers, "
        f"errors {tally.errors}, stale answers after a reported reload {len(stale)}   goal 0 and 0"
        f"   (load average {os.getloadavg()[0]:.1f})"
    )
    for line in tally.first_errors + stale[:3]:
        print(f"    {line}")
    return tally.errors == 0 and not stale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,10,50,200", help="client counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reload-clients", type=int, default=10, help="clients during the reload run (0: skip)")
    args = parser.parse_args()
    counts = [int(n) for n in args.clients.split(",") if n.strip()]
    root = Path(tempfile.mkdtemp(prefix="appsdk-bench-clients-"))
    for name in ("appsdk dev", "uvicorn"):
        (root / name).mkdir()
    servers: list[Server] = []
    try:
        servers = [start("appsdk dev", root), start("uvicorn", root)]
        print(f"tools/call list-books, N clients with one kept-alive connection each (python {sys.version.split()[0]})")
        ok = throughput(servers, counts, args.seconds, args.rounds)
        if args.reload_clients:
            ok = reload_run(servers[0], args.reload_clients) and ok
    finally:
        for server in servers:
            stop(server)
    print("  goal met" if ok else "  goal NOT met")
    if os.environ.get("APPSDK_BENCH_STRICT") and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
