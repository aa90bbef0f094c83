"""appsdk dev around the app's processes: a call still running when a save replaces its code, and a
package installed after an import failed for its lack (#36)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import appsdk, stop
from test_dev import start_dev, wait_until

from appsdk_cli.scaffold import scaffold


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return scaffold("book-club", tmp_path).path


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_a_save_while_an_interrupted_sync_call_still_runs_says_one_line(project: Path, tmp_path: Path):
    """A sync tool sleeps; its caller presses Ctrl-C; a save replaces the code while the tool still
    sleeps. The old worker stops it when uvicorn's graceful shutdown is up: one line, no traceback."""
    started = tmp_path / "started"
    append(
        project / "server.py",
        "\n\n@mcp.tool()\ndef slow() -> str:\n"
        '    """Sleep a long while."""\n    import pathlib\n    import time\n\n'
        f"    pathlib.Path({str(started)!r}).write_text('yes')\n    time.sleep(30)\n    return 'done'\n",
    )
    dev = start_dev(project)
    try:
        call = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "call", "slow"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(started.exists, message="the tool running")
        call.send_signal(signal.SIGINT)
        _, said = call.communicate(timeout=30)
        assert call.returncode != 0 and "interrupted" in said, said
        append(project / "server.py", "\n# saved while slow() sleeps\n")
        wait_until(lambda: "reloaded" in dev.out(), message="the reload")
        wait_until(lambda: "stopped 1 call" in dev.err(), timeout=30, message="the old worker's line")
        assert appsdk("call", "list-books", cwd=project).returncode == 0  # the new code serves
    finally:
        stop(dev.process)
    err = dev.err()
    assert "Traceback" not in err and "CancelledError" not in err and "graceful shutdown" not in err, err
    assert [line for line in err.splitlines() if line.strip()] == [
        "warning: appsdk dev: stopped 1 call still running in the code before the save"
    ], err
