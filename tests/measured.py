"""appsdk run as a child whose peak memory is measured, for the tests that feed it a hostile server's bombs."""

from __future__ import annotations

import os
import subprocess
import sys
import time

# The child's address space is capped: run against code without the bound, a bomb fails fast (MemoryError)
# instead of taking over the shared machine.
ADDRESS_SPACE = 2 * 1024**3


def measured(
    *args: str, within: float, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], int]:
    """`appsdk ARGS` run under a parent of its own, which reports the child's peak RSS (KiB) on its last
    line; the result without that line, and the peak. It must end within `within` seconds, with no traceback."""
    probe = (
        "import resource, subprocess, sys\n"
        f"cap = lambda: resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE}))\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, preexec_fn=cap)\n"
        "sys.stdout.write(done.stdout)\n"
        "sys.stderr.write(done.stderr)\n"
        "sys.stderr.write(f'\\nRSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n')\n"
        "sys.exit(done.returncode)\n"
    )
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "appsdk_cli", *args],
        capture_output=True,
        text=True,
        timeout=within * 3,
        env={**os.environ, **(env or {})},
    )
    assert time.monotonic() - started < within
    *said, rss = result.stderr.rstrip().splitlines()
    assert rss.startswith("RSS "), result.stderr
    result.stderr = "\n".join(said).strip()
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result, int(rss.split()[1])
