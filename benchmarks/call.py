"""How long a whole `appsdk call list-books` process takes, against its peers, on one local server.

    python benchmarks/call.py [--rounds 15] [--fastmcp PATH] [--inspector PATH] [--setup]

Runs, alternating within each round so drift hits everyone alike:
  appsdk call list-books --url URL --json       (this checkout's `appsdk`, next to this Python), in each
      protocol era: auto (2026-07-28, the era remembered from the warm-up, as a user's second call
      is), --protocol 2025-11-25 (the handshake) and --protocol 2024-11-05 (HTTP+SSE, against the same
      app under `appsdk dev --transport sse`)
  fastmcp call URL list-books --json            (PyPI fastmcp, in a venv of its own)
  node INSPECTOR_LAUNCHER --cli URL --transport http --method tools/call --tool-name list-books, with
      --protocol-era modern and with its default (the 2025 handshake)
  appsdk --help   against   fastmcp --help
against the scaffolded book-club app served by `python server.py` on a free port, and prints the
medians and ratios with the goals: call (2026-07-28) <= 0.4x the Inspector CLI's in the same era, and
<= 0.3x fastmcp's; call (handshake) <= 0.8x the Inspector CLI's in the same era; --help <= 0.1x
fastmcp's. Exits 1 if a goal is missed.

Peers:
- fastmcp pins its own mcp version, so it lives in a separate venv: `--fastmcp PATH` to its `fastmcp`
  executable, else `fastmcp` on PATH, else /tmp/venv-fastmcp/bin/fastmcp. With `--setup` a missing
  venv is created there (`python3 -m venv /tmp/venv-fastmcp && /tmp/venv-fastmcp/bin/pip install fastmcp`).
- The Inspector CLI is run with node directly on its launcher (npx adds ~0.5 s of its own):
  `--inspector PATH` to `clients/launcher/build/index.js`, else the one under tests/interop/node_modules
  (with `--setup`, `npm install` there first if it is missing).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from conftest import free_port, serve_project, stop, wait_for_port  # noqa: E402  (the same real servers the tests use)

from appsdk_cli.scaffold import WidgetFlavor, scaffold  # noqa: E402

FASTMCP_VENV = Path("/tmp/venv-fastmcp")
INTEROP = REPO / "tests" / "interop"
INSPECTOR = INTEROP / "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
GOALS = {
    "call 2026-07-28 vs Inspector CLI modern": 0.4,
    "call 2026-07-28 vs fastmcp": 0.3,
    "call handshake vs Inspector CLI": 0.8,
    "--help vs fastmcp": 0.1,
}


def find_fastmcp(given: str | None, setup: bool) -> Path:
    if given:
        return Path(given)
    on_path = shutil.which("fastmcp")
    if on_path:
        return Path(on_path)
    executable = FASTMCP_VENV / "bin" / "fastmcp"
    if not executable.exists() and setup:
        subprocess.run([sys.executable, "-m", "venv", str(FASTMCP_VENV)], check=True)
        subprocess.run([str(FASTMCP_VENV / "bin" / "pip"), "install", "--quiet", "fastmcp"], check=True)
    if not executable.exists():
        sys.exit(f"fastmcp not found: pass --fastmcp PATH, or --setup to install it in {FASTMCP_VENV}")
    return executable


def find_inspector(given: str | None, setup: bool) -> Path:
    if given:
        return Path(given)
    if not INSPECTOR.exists() and setup:
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=INTEROP, check=True)
    if not INSPECTOR.exists():
        sys.exit("the Inspector CLI is not installed: pass --inspector PATH, or --setup to npm install it")
    return INSPECTOR


def find_appsdk() -> list[str]:
    # The console script, as a user runs it; `python -m appsdk_cli` only if there is none.
    script = Path(sys.executable).parent / "appsdk"
    return [str(script)] if script.exists() else [sys.executable, "-m", "appsdk_cli"]


def timed(argv: list[str], expect: str | None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or (expect and expect not in done.stdout):
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--fastmcp", help="path to the fastmcp executable (in a venv of its own)")
    parser.add_argument("--inspector", help="path to the Inspector's clients/launcher/build/index.js")
    parser.add_argument("--setup", action="store_true", help="install missing peers (fastmcp venv, npm packages)")
    options = parser.parse_args()

    fastmcp = find_fastmcp(options.fastmcp, options.setup)
    inspector = find_inspector(options.inspector, options.setup)
    appsdk = find_appsdk()
    node = shutil.which("node") or sys.exit("node is not installed")

    with tempfile.TemporaryDirectory() as folder:
        project = scaffold("book-club", Path(folder), flavor=WidgetFlavor.MCP_APPS).path
        # The era cache lives under APPSDK_HOME: a fresh one, warmed by the first round of each command.
        os.environ["APPSDK_HOME"] = str(Path(folder) / "home")
        server = serve_project(project)
        sse_port = free_port()
        sse_dev = subprocess.Popen(
            [*appsdk, "dev", str(project), "--port", str(sse_port), "--transport", "sse", "--no-reload"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(sse_port, sse_dev)
            url = server.url
            sse_url = f"http://127.0.0.1:{sse_port}/sse"
            inspector_call = ["--cli", url, "--transport", "http", "--method", "tools/call", "--tool-name"]
            call = [*appsdk, "call", "list-books", "--json", "--url"]
            commands: dict[str, tuple[list[str], str | None]] = {
                "appsdk call 2026-07-28": ([*call, url], "Frankenstein"),
                "appsdk call handshake": ([*call, url, "--protocol", "2025-11-25"], "Frankenstein"),
                "appsdk call HTTP+SSE": ([*call, sse_url, "--protocol", "2024-11-05"], "Frankenstein"),
                "fastmcp call": ([str(fastmcp), "call", url, "list-books", "--json"], "Frankenstein"),
                "Inspector CLI modern": (
                    [node, str(inspector), *inspector_call, "list-books", "--protocol-era", "modern"],
                    "Frankenstein",
                ),
                "Inspector CLI": ([node, str(inspector), *inspector_call, "list-books"], "Frankenstein"),
                "appsdk --help": ([*appsdk, "--help"], "call"),
                "fastmcp --help": ([str(fastmcp), "--help"], None),
            }
            for argv, expect in commands.values():  # warm the disk caches; check each works
                timed(argv, expect)
            # Other processes share the CPUs: the load average goes with every figure.
            load_before = os.getloadavg()
            times: dict[str, list[float]] = {name: [] for name in commands}
            names = list(commands)
            for round_number in range(options.rounds):
                # Rotate the order each round, so no command always runs right after the same other one.
                shift = round_number % len(names)
                for name in names[shift:] + names[:shift]:
                    times[name].append(timed(*commands[name]))
            load_after = os.getloadavg()
        finally:
            stop(server.process)
            stop(sse_dev)

    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{options.rounds} rounds, alternating, on {url} ({os.cpu_count()} CPUs)")
    print(f"  load average (1, 5, 15 min): before {_load(load_before)}, after {_load(load_after)}")
    for name, value in medians.items():
        spread = f"{min(times[name]):.3f}-{max(times[name]):.3f}"
        print(f"  {name:<24} median {value:.3f} s   (min-max {spread} s)")
    ratios = {
        "call 2026-07-28 vs Inspector CLI modern": medians["appsdk call 2026-07-28"] / medians["Inspector CLI modern"],
        "call 2026-07-28 vs fastmcp": medians["appsdk call 2026-07-28"] / medians["fastmcp call"],
        "call handshake vs Inspector CLI": medians["appsdk call handshake"] / medians["Inspector CLI"],
        "--help vs fastmcp": medians["appsdk --help"] / medians["fastmcp --help"],
    }
    missed = 0
    for name, ratio in ratios.items():
        ok = ratio <= GOALS[name]
        missed += not ok
        print(f"  {name:<40} {ratio:.2f}x   goal <= {GOALS[name]}x   {'ok' if ok else 'MISSED'}")
    return 1 if missed else 0


def _load(averages: tuple[float, float, float]) -> str:
    return ", ".join(f"{value:.2f}" for value in averages)


if __name__ == "__main__":
    sys.exit(main())
