"""`appsdk new --template react`'s install as CI logs and interrupted users see it (issue 26, item 7):
progress in a log that is not a terminal, npm's cause rather than its "complete log" line, and Ctrl-C
taking back the half-made project so running `new` again works.

npm reaches no registry here: each test points it at one on 127.0.0.1 (refusing, or silent) with a
cache of its own, so nothing is fetched and nothing is slow.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import appsdk, free_port

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="NODE IS MISSING: `new --template react` installs with npm; CI has node",
)


def npm_env(tmp_path: Path, registry: str) -> dict[str, str]:
    return {
        "npm_config_registry": registry,
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_fetch_retries": "0",
        "npm_config_fetch_timeout": "60000",
    }


class SilentRegistry:
    """A registry that takes connections and never answers: an install that hangs until interrupted."""

    def __init__(self, url: str, asked: threading.Event) -> None:
        self.url = url
        self.asked = asked  # set once npm has connected: the install is under way


@pytest.fixture
def silent_registry() -> Iterator[SilentRegistry]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop, asked = threading.Event(), threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
                asked.set()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield SilentRegistry(f"http://127.0.0.1:{listener.getsockname()[1]}/", asked)
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_a_failed_install_says_npms_cause_and_the_log_shows_progress(tmp_path: Path):
    refused = f"http://127.0.0.1:{free_port()}/"  # nothing listens there
    result = appsdk("new", "shelf", "--template", "react", "--path", str(tmp_path), env=npm_env(tmp_path, refused))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    # Not a terminal: the install said it started, as a line (a spinner would have drawn nothing).
    assert lines[0] == "Installing the widget's packages (npm ci in web/)…", lines
    assert lines[-1].startswith("error: ") and "ECONNREFUSED" in lines[-1], lines
    assert "complete log" not in result.stderr and "Traceback" not in result.stderr
    assert (tmp_path / "shelf" / "server.py").is_file()  # the project is kept; the line says what to run


def test_ctrl_c_during_the_install_takes_the_project_back_and_new_runs_again(tmp_path: Path, silent_registry):
    env = {**os.environ, **npm_env(tmp_path, silent_registry.url), "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "appsdk_cli", "new", "shelf", "--template", "react", "--path", str(tmp_path)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # npm is waiting on the registry once it has connected: the moment a user gives up and hits Ctrl-C.
    assert silent_registry.asked.wait(120), "npm never asked the registry"
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert f"interrupted: removed the half-made project {tmp_path / 'shelf'}" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "shelf").exists()
    again = appsdk("new", "shelf", "--template", "react", "--no-install", "--path", str(tmp_path))
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "shelf" / "web" / "package.json").is_file()
