"""At scale: each figure of #30 beside its peer measured in the same run, and how it grows.

    python benchmarks/scale.py [--tools 100,1000,5000] [--parts listing,check,against,call,reload,clients]
                               [--rounds 3] [--modules 1,50,300] [--clients 1,10,50,200]

Parts (all by default; pick some so a run fits in minutes):
  listing  `appsdk tools` (the human listing) and `appsdk tools --json`, against the MCP Inspector CLI's
           tools/list of the same server
  check    `appsdk check`, against the Inspector's tools/list (what fetching the tools alone costs)
  against  `appsdk check --against` a contract recorded when every tool had another name, against
           `appsdk check` of the same server
  call     a cold `appsdk call` (a fresh APPSDK_HOME: no remembered era or tool list), against the
           Inspector's tools/call
  reload   `appsdk dev` save -> visible against `uvicorn --reload`, apps of --modules modules: runs
           benchmarks/reload.py --modules (skipped, saying why, if this checkout's has no --modules)
  clients  `appsdk dev` under 1..200 concurrent clients against uvicorn: runs benchmarks/clients.py
           (skipped, saying why, if it is absent)

The servers are tests/fixtures/many_tools.py with N generated tools, each with input and output schemas
(the renamed one is the same server under the tool-name prefix "old"). Within each round the commands
run one after another, the order rotating per round, so drift and the other processes on the machine
hit each alike; the medians are printed with the load average. Then, per figure, the slope between
sizes in milliseconds per tool (from each command's fastest run) and how much steeper each step is than
the one before it: a step that turns superlinear shows as a growth well above 1x. Exits 1 if a goal is
missed (check at 5,000 tools <= 10 s; check --against's cost per tool at most 2x from one size to the
next, i.e. linear, where #30 found it worse than quadratic).
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "many_tools.py"
INSPECTOR = REPO / "tests/interop/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
PARTS = ("listing", "check", "against", "call", "reload", "clients")
CHECK_GOAL_SECONDS = {5000: 10.0}  # #30: check at 5,000 tools took 58 s


def appsdk_command() -> list[str]:
    # The console script, as a user runs it; `python -m appsdk_cli` only if there is none.
    script = Path(sys.executable).parent / "appsdk"
    return [str(script)] if script.exists() else [sys.executable, "-m", "appsdk_cli"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


@contextmanager
def generated_server(tools: int, prefix: str = "tool") -> Iterator[str]:
    """tests/fixtures/many_tools.py with `tools` tools on a free port; yields its MCP URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE), str(port), str(tools), prefix],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600  # registering 5,000 tools takes a while under load
        while True:
            if process.poll() is not None:
                sys.exit(f"the generated server ({tools} tools) exited with {process.returncode}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                sys.exit(f"the generated server ({tools} tools) did not start")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Command:
    argv: list[str]
    expect: str | None = None  # a text stdout must hold, so a failure is not timed as a fast success
    ok_codes: tuple[int, ...] = (0,)
    cold_home: bool = False  # a fresh APPSDK_HOME for each run
    seconds: list[float] = field(default_factory=list)

    def run(self, home: str) -> float:
        with tempfile.TemporaryDirectory() as fresh:
            env = {**os.environ, "APPSDK_HOME": fresh if self.cold_home else home}
            started = time.perf_counter()
            done = subprocess.run(self.argv, capture_output=True, text=True, env=env, timeout=1800)
            elapsed = time.perf_counter() - started
        if done.returncode not in self.ok_codes or (self.expect and self.expect not in done.stdout):
            sys.exit(f"{' '.join(self.argv)} failed ({done.returncode}):\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
        return elapsed

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def fastest(self) -> float:
        return min(self.seconds)


# Each figure and the peer it is shown beside.
PEERS = {
    "tools": "Inspector tools/list",
    "tools --json": "Inspector tools/list",
    "check": "Inspector tools/list",
    "check --against (all renamed)": "check",
    "call (cold)": "Inspector tools/call",
}


def commands_for(parts: set[str], url: str, contract: Path | None) -> dict[str, Command]:
    appsdk = appsdk_command()
    node = shutil.which("node")
    inspector = [node, str(INSPECTOR), "--cli", url, "--transport", "http"] if node and INSPECTOR.exists() else None
    commands: dict[str, Command] = {}
    if "listing" in parts:
        commands["tools"] = Command([*appsdk, "tools", "--url", url], expect="tool-0000")
        commands["tools --json"] = Command([*appsdk, "tools", "--url", url, "--json"], expect='"tool-0000"')
    if "check" in parts or "against" in parts:
        commands["check"] = Command([*appsdk, "check", "--url", url], ok_codes=(0, 1))
    if "against" in parts and contract is not None:
        commands["check --against (all renamed)"] = Command(
            [*appsdk, "check", "--against", str(contract), "--url", url], expect="apparently renamed to", ok_codes=(1,)
        )
    if "call" in parts:
        commands["call (cold)"] = Command(
            [*appsdk, "call", "tool-0000", "query=books", "--url", url, "--json"], expect='"books"', cold_home=True
        )
    if inspector is not None and parts & {"listing", "check"}:
        commands["Inspector tools/list"] = Command([*inspector, "--method", "tools/list"], expect='"tool-0000"')
    if inspector is not None and "call" in parts:
        commands["Inspector tools/call"] = Command(
            [*inspector, "--method", "tools/call", "--tool-name", "tool-0000", "--tool-arg", "query=books"],
            expect='"books"',
        )
    return commands


def measure_size(tools: int, parts: set[str], rounds: int) -> dict[str, Command]:
    with tempfile.TemporaryDirectory() as folder:
        home = str(Path(folder) / "home")
        contract = None
        if "against" in parts:
            contract = Path(folder) / "appsdk.contract.json"
            with generated_server(tools, prefix="old") as old_url:
                recorded = subprocess.run(
                    [*appsdk_command(), "snapshot", "--url", old_url, "-o", str(contract)],
                    capture_output=True,
                    text=True,
                    env={**os.environ, "APPSDK_HOME": home},
                )
            if recorded.returncode != 0:
                sys.exit(f"recording the renamed contract failed: {recorded.stderr.strip()}")
        with generated_server(tools) as url:
            commands = commands_for(parts, url, contract)
            for command in commands.values():  # each works; the era and tool list remembered, as a second run
                command.run(home)
            names = list(commands)
            for round_number in range(rounds):
                shift = round_number % len(names)
                for name in names[shift:] + names[:shift]:
                    commands[name].seconds.append(commands[name].run(home))
    return commands


def print_size(tools: int, commands: dict[str, Command], rounds: int) -> None:
    print(f"\n{tools} tools (median of {rounds}; load average {load()}):")
    print(f"  {'figure':<30} {'seconds':>8}   {'peer':<22} {'seconds':>8}  ratio")
    for name, command in commands.items():
        peer = commands.get(PEERS.get(name, ""))
        if peer is None:
            if name not in PEERS.values():
                print(f"  {name:<30} {command.median:8.3f}")
            continue
        print(
            f"  {name:<30} {command.median:8.3f}   {PEERS[name]:<22} {peer.median:8.3f}  "
            f"{command.median / peer.median:5.2f}x"
        )
    for name in dict.fromkeys(PEERS.values()):
        if name in commands and name not in PEERS:
            print(f"  {name:<30} {commands[name].median:8.3f}   (peer)")


def print_slopes(results: dict[int, dict[str, Command]]) -> None:
    sizes = sorted(results)
    if len(sizes) < 2:
        print("\nper-tool slopes: they need two sizes or more (--tools 100,1000)")
        return
    steps = list(itertools.pairwise(sizes))
    # From each command's fastest run: the other processes on a shared machine only ever add time, so the
    # minimum is the steadiest estimate of what the work itself costs.
    print("\nper-tool slopes from the fastest runs, ms per tool between sizes (growth: over the step before):")
    print(f"  {'figure':<30} " + "  ".join(f"{f'{a}->{b}':>18}" for a, b in steps))
    names = [name for name in results[sizes[0]] if all(name in results[size] for size in sizes)]
    for name in names:
        cells, previous = [], None
        for a, b in steps:
            slope = (results[b][name].fastest - results[a][name].fastest) / (b - a) * 1000
            growth = f" ({slope / previous:4.1f}x)" if previous and previous > 0 and slope > 0 else "       "
            cells.append(f"{slope:9.3f}{growth}")
            previous = slope
        print(f"  {name:<30} " + "  ".join(f"{cell:>18}" for cell in cells))


def check_goals(results: dict[int, dict[str, Command]]) -> bool:
    met = True
    for tools, commands in sorted(results.items()):
        goal = CHECK_GOAL_SECONDS.get(tools)
        if goal is not None and "check" in commands:
            ok = commands["check"].median <= goal
            met &= ok
            print(f"  goal: check at {tools} tools <= {goal:g} s: {commands['check'].median:.2f} s, {_verdict(ok)}")
    # #30: --against grew worse than quadratically with renamed tools; linear means its cost per tool
    # does not climb as the server grows (2x leaves room for the noise of a loaded machine).
    name = "check --against (all renamed)"
    sizes = sorted(tools for tools, commands in results.items() if name in commands)
    for smaller, larger in itertools.pairwise(sizes):
        per_tool = [results[size][name].median / size for size in (smaller, larger)]
        growth = per_tool[1] / per_tool[0]
        ok = growth <= 2.0
        met &= ok
        print(
            f"  goal: check --against per tool at {larger} tools <= 2x its cost at {smaller}: "
            f"{growth:.2f}x, {_verdict(ok)}"
        )
    return met


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def run_script(name: str, args: list[str], needs: str | None = None) -> None:
    """Another benchmark of #30, run as it is (its own output printed as it comes), or why not."""
    script = REPO / "benchmarks" / name
    if not script.exists():
        print(f"\n{name}: skipped, benchmarks/{name} is not in this checkout")
        return
    if needs is not None:
        usage = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True)
        if needs not in usage.stdout:
            print(f"\n{name}: skipped, this checkout's benchmarks/{name} has no {needs} option")
            return
    print(f"\n{name} {' '.join(args)} (load average {load()}):", flush=True)
    done = subprocess.run([sys.executable, str(script), *args])
    if done.returncode != 0:
        print(f"{name} exited with {done.returncode}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="100,1000,5000", help="generated server sizes, comma-separated")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modules", default="1,50,300", help="app sizes for the reload part")
    parser.add_argument("--edits", type=int, default=10, help="edits per server for the reload part")
    parser.add_argument("--clients", default="1,10,50,200", help="client counts for the clients part")
    options = parser.parse_args()
    parts = {part.strip() for part in options.parts.split(",") if part.strip()}
    unknown = parts - set(PARTS)
    if unknown:
        parser.error(f"unknown part {', '.join(sorted(unknown))}: pick from {', '.join(PARTS)}")
    if not (shutil.which("node") and INSPECTOR.exists()):
        print("the Inspector CLI is missing (tests/interop/node_modules): its figures are left out")

    results: dict[int, dict[str, Command]] = {}
    tool_parts = parts & {"listing", "check", "against", "call"}
    if tool_parts:
        print(f"generated servers: {options.tools} tools; load average {load()} ({os.cpu_count()} CPUs)")
        for tools in [int(n) for n in options.tools.split(",")]:
            results[tools] = measure_size(tools, tool_parts, options.rounds)
            print_size(tools, results[tools], options.rounds)
        print_slopes(results)
    met = check_goals(results) if results else True
    if "reload" in parts:
        run_script("reload.py", ["--modules", options.modules, "--edits", str(options.edits)], needs="--modules")
    if "clients" in parts:
        run_script("clients.py", ["--clients", options.clients])
    print(f"\nload average at the end: {load()}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
