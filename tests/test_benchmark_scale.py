"""benchmarks/scale.py runs and prints its table: one small size, two parts, one round (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_the_scale_benchmark_prints_each_figure_beside_its_peer() -> None:
    script = str(REPO / "benchmarks" / "scale.py")
    done = subprocess.run(
        [sys.executable, script, "--tools", "20", "--parts", "listing,check", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "20 tools (median of 1" in done.stdout
    for figure in ("tools", "tools --json", "check"):
        row = next(line.split() for line in lines if line.startswith(f"  {figure}  "))
        assert row[-1].endswith("x") and "Inspector" in row, row  # beside the Inspector CLI's tools/list
    assert "per-tool slopes: they need two sizes or more" in done.stdout
    assert "load average" in done.stdout
