"""PATH mode, the parent side: run checks/inmemory.py in a child process and read back its Snapshot.

A child, not an import into appsdk: the app's module-level code (logging setup, globals, a stray
`mcp.run()`) cannot disturb appsdk, a crash is contained, and a hang can be killed. No port is opened.
The child uses the same interpreter as appsdk, so the app's dependencies must be importable there.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import appsdk_cli
from appsdk_cli.checks.model import Snapshot
from appsdk_cli.errors import AppsdkError
from appsdk_cli.project import AppTarget

# `-c` puts the project folder (the child's cwd) first on sys.path; appsdk itself is appended so a
# source checkout works too, after anything the app would import.
_BOOTSTRAP = "import sys; sys.path.append({root!r}); from appsdk_cli.checks.inmemory import main; main()"


def _tail(log: Path, limit: int = 4000) -> str:
    try:
        return log.read_bytes()[-limit:].decode("utf-8", "replace")
    except OSError:
        return ""


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
        result, progress, log = folder / "result.json", folder / "progress.txt", folder / "child.log"
        progress.touch()
        request = {
            "project": str(app.project),
            "module": app.module,
            "attribute": app.attribute,
            "result": str(result),
            "progress": str(progress),
            "timeout": timeout,
            "call_tools": call_tools,
        }
        with log.open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP.format(root=root), json.dumps(request)],
                cwd=app.project,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
            try:
                _watch(process, progress, timeout)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        if not result.is_file():
            raise AppsdkError(
                f"checking {app.spec} crashed (exit {process.returncode}) while {_last_step(progress)}",
                detail=_tail(log),
            )
        outcome = json.loads(result.read_text(encoding="utf-8"))
        if not outcome.get("ok"):
            raise AppsdkError(str(outcome.get("error")), detail=_tail(log))
        return Snapshot.from_json(outcome["snapshot"])


def _watch(process: subprocess.Popen[bytes], progress: Path, timeout: float) -> None:
    """Wait for the child; kill it once a step has made no progress for `timeout` seconds."""
    size, changed = -1, time.monotonic()
    while True:
        try:
            process.wait(timeout=0.05)
            return
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        current = progress.stat().st_size
        if current != size:
            size, changed = current, now
        elif now - changed > timeout:
            step = _last_step(progress)
            hint = ""
            if step.startswith("importing"):
                hint = " (does it start the server on import? put mcp.run() under `if __name__ == '__main__':`)"
            raise AppsdkError(f"{step} did not finish within {timeout:g} s{hint}")
