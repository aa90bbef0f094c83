"""`appsdk tools` on servers with many tools: the human listing beside its own --json, in one run.

    python benchmarks/listing.py [--tools 1000,5000] [--rounds 3]

Serves tests/fixtures/many_tools.py with N generated tools (each with input and output schemas) and
times whole `appsdk tools` processes against it, alternating within each round: the default human
listing (one line per tool past 50), `--all` (every entry in full) and `--json`, the peer: what the
same listing costs without rendering. Prints the medians and each human listing's ratio to --json
(#30 measured the full listing at 6.5x its --json at 5,000 tools).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "many_tools.py"
APPSDK = [sys.executable, "-m", "appsdk_cli"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port: int, process: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the generated server exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit("the generated server did not start")


def timed(args: list[str], home: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([*APPSDK, *args], capture_output=True, text=True, env={**os.environ, "APPSDK_HOME": home})
    if done.returncode != 0:
        raise SystemExit(f"appsdk {' '.join(args)} failed: {done.stderr.strip()}")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="1000,5000")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    import tempfile

    for count in [int(n) for n in options.tools.split(",")]:
        port = free_port()
        server = subprocess.Popen([sys.executable, str(FIXTURE), str(port), str(count)], stderr=subprocess.DEVNULL)
        try:
            wait_for(port, server)
            url = f"http://127.0.0.1:{port}/mcp"
            kinds = {"tools": ["tools", "--url", url], "tools --all": ["tools", "--url", url, "--all"]}
            kinds["tools --json"] = ["tools", "--url", url, "--json"]
            times: dict[str, list[float]] = {kind: [] for kind in kinds}
            with tempfile.TemporaryDirectory() as home:
                timed(kinds["tools --json"], home)  # warm-up: the era and tool list remembered, as a user's second run
                for _ in range(options.rounds):
                    for kind, args in kinds.items():
                        times[kind].append(timed(args, home))
            peer = statistics.median(times["tools --json"])
            print(f"{count} tools (median of {options.rounds}):")
            for kind, spent in times.items():
                median = statistics.median(spent)
                ratio = "" if kind == "tools --json" else f"  {median / peer:.2f}x --json"
                print(f"  {kind:<14} {median:6.2f} s{ratio}")
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"load average: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
