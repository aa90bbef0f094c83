"""PATH mode, the parent side: run snapshot/inmemory.py in a child process and read back its Snapshot.

A child, not an import into appsdk: the app's module-level code (logging setup, globals, a stray
`mcp.run()`) cannot disturb appsdk, a crash is contained, and a hang can be killed. No port is opened.
The child uses the same interpreter as appsdk, so the app's dependencies must be importable there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import appsdk_cli
from appsdk_cli.errors import AppsdkError
from appsdk_cli.proctree import TailReader, kill_tree
from appsdk_cli.project import AppTarget
from appsdk_cli.safewrite import write_file
from appsdk_cli.snapshot.loader import SERVES_ON_IMPORT_HINT
from appsdk_cli.snapshot.model import Snapshot

# What --verbose can show of the app's own output (prints, logs, a traceback): its last 64 kB.
OUTPUT_KEPT_BYTES = 64 * 1024

# `-c` puts the project folder (the child's cwd) first on sys.path; appsdk itself is appended so a
# source checkout works too, after anything the app would import.
_BOOTSTRAP = "import sys; sys.path.append({root!r}); from appsdk_cli.snapshot.inmemory import main; main()"


def _last_step(progress: Path) -> str:
    try:
        lines = progress.read_text(encoding="utf-8").splitlines()
    except OSError:
        return "starting"
    return lines[-1] if lines else "starting"


def collect_path(app: AppTarget, *, timeout: float, call_tools: bool = True) -> Snapshot:
    """Import the app in a child and collect its Snapshot in memory; failures are one-line AppsdkErrors."""
    root = str(Path(appsdk_cli.__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory(prefix="appsdk-check-") as scratch:
        folder = Path(scratch)
        result, progress = folder / "result.json", folder / "progress.txt"
        write_file(progress, b"", root=folder, sync=False)
        request = {
            "project": str(app.project),
            "module": app.module,
            "attribute": app.attribute,
            "target": app.describe(),
            "result": str(result),
            "progress": str(progress),
            "timeout": timeout,
            "call_tools": call_tools,
        }
        # The app's output goes through a pipe of which only the tail is kept: an app that prints
        # without end must not fill the disk (a file grew by ~200 MB a second). Its own session, so
        # whatever it starts is stopped with it (proctree.kill_tree).
        read_end, write_end = os.pipe()
        hold_read, hold_write = os.pipe()
        request["hold_fd"] = hold_read
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP.format(root=root), json.dumps(request)],
                cwd=app.project,
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(hold_read,),
            )
        except OSError:
            os.close(read_end)
            os.close(hold_write)
            raise
        finally:
            os.close(write_end)
            os.close(hold_read)
        output = TailReader(read_end, OUTPUT_KEPT_BYTES)
        try:
            _watch(process, progress, result, timeout)
        except AppsdkError as problem:
            kill_tree(process)
            problem.detail = output.text()  # what it printed before it hung, for --verbose
            raise
        finally:
            kill_tree(process)
            os.close(hold_write)
        if not result.is_file():
            raise AppsdkError(
                f"checking {app.spec} crashed (exit {process.returncode}) while {_last_step(progress)}",
                detail=output.text(),
            )
        outcome = json.loads(result.read_text(encoding="utf-8"))
        if not outcome.get("ok"):
            raise AppsdkError(str(outcome.get("error")), detail=output.text())
        return Snapshot.from_json(outcome["snapshot"])


def _watch(process: subprocess.Popen[bytes], progress: Path, result: Path, timeout: float) -> None:
    """Wait for the child's result (it then waits to be stopped) or its exit; raise once a step has
    made no progress for `timeout` seconds."""
    size, changed = -1, time.monotonic()
    while True:
        try:
            process.wait(timeout=0.05)
            return
        except subprocess.TimeoutExpired:
            if result.is_file():
                return
        now = time.monotonic()
        current = progress.stat().st_size
        if current != size:
            size, changed = current, now
        elif now - changed > timeout:
            step = _last_step(progress)
            hint = ""
            if step.startswith("importing"):
                hint = f" ({SERVES_ON_IMPORT_HINT})"
            raise AppsdkError(f"{step} did not finish within {timeout:g} s{hint}")
