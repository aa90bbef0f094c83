"""Issue 13 item 10: `appsdk check PATH` on an app that prints without end and starts helpers at import:
what is kept of its output is bounded, and no process it started outlives the check."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import pid_alive

from appsdk_cli.scaffold import scaffold

HELPER = (
    "import subprocess, sys, os\n"
    "_helper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
    "_loner = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(300)'])\n"
    "open(os.environ['PIDS_FILE'], 'w').write(f'{_helper.pid} {_loner.pid}')\n"
)


def folder_bytes(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            total += path.stat().st_size if path.is_file() else 0
        except OSError:
            continue
    return total


def run_check(project: Path, tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess, int]:
    """`appsdk check PATH`, with its temp dir watched: the largest it grew to while the check ran."""
    env = {**os.environ, "TMPDIR": str(tmp), "PIDS_FILE": str(project / "pids.txt"), "NO_COLOR": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "check", str(project), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    largest = 0
    watching = True

    def watch() -> None:
        nonlocal largest
        while watching:
            largest = max(largest, folder_bytes(tmp))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = process.communicate(timeout=60)
    finally:
        watching = False
        watcher.join()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), largest


def started_pids(project: Path) -> list[int]:
    return [int(pid) for pid in (project / "pids.txt").read_text().split()]


def test_an_app_printing_forever_is_bounded_and_its_helpers_are_stopped(tmp_path):
    project = scaffold("book-club", tmp_path / "p").path
    server = project / "server.py"
    server.write_text(server.read_text() + "\n" + HELPER + "\nwhile True:\n    print('x' * 4096, flush=True)\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    result, largest = run_check(project, tmp, "--timeout", "5", "--verbose")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "did not finish within 5 s" in result.stderr
    assert "Traceback" not in result.stderr.split("\n", 1)[0]
    # What was kept is the tail only: --verbose shows at most ~64 kB of it, the temp dir stayed small.
    assert len(result.stderr) < 200_000
    assert "earlier bytes of output not kept" in result.stderr
    assert largest < 1_000_000, f"the temp dir grew to {largest} bytes"
    time.sleep(0.5)
    for pid in started_pids(project):
        assert not pid_alive(pid), f"process {pid}, started by the checked app, outlived the check"


def test_helpers_of_an_app_that_checks_fine_are_stopped_too(tmp_path):
    project = scaffold("book-club", tmp_path / "p").path
    server = project / "server.py"
    server.write_text(server.read_text() + "\n" + HELPER)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    result, _ = run_check(project, tmp)
    assert result.returncode == 0, result.stdout + result.stderr
    time.sleep(0.5)
    for pid in started_pids(project):
        assert not pid_alive(pid), f"process {pid}, started by the checked app, outlived the check"
