"""A whole `appsdk dev` session without the CLI: the supervisor, the workbench beside it, one observer.

The session runs in this process (on a thread, forking its workers from here); the observer is a list.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import pid_alive

from appsdk_cli.devserver import events
from appsdk_cli.devserver.session import DevSession, SessionConfig
from appsdk_cli.devserver.supervisor import DevConfig
from appsdk_cli.scaffold import scaffold

WAIT = 30.0


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return scaffold("book-club", tmp_path).path


def wait_for(condition: Callable[[], Any], message: str) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{message} not seen within {WAIT} s")


def first(seen: list[events.DevEvent], kind: type) -> Any:
    return next((event for event in seen if isinstance(event, kind)), None)


def test_a_session_reports_serving_a_reload_and_stop_to_its_observer(project: Path, capfd):
    seen: list[events.DevEvent] = []
    session = DevSession(SessionConfig(DevConfig(project=project, port=0)), seen.append)
    runner = threading.Thread(target=session.run, name="dev-session")
    runner.start()
    try:
        started = wait_for(lambda: first(seen, events.Started), "the Started event")
        assert started.app_ok and started.tools == ("list-books",)
        assert session.supervisor is not None and started.url == session.supervisor.url
        # The workbench listens beside the app, and the event names it for the start-up panel.
        assert started.workbench and started.workbench.startswith("http://127.0.0.1:")
        assert httpx.get(started.workbench, timeout=10).status_code == 200

        server_py = project / "server.py"
        server_py.write_text(
            server_py.read_text(encoding="utf-8") + '\n\n@mcp.tool()\ndef ping() -> str:\n    return "pong"\n',
            encoding="utf-8",
        )
        reloaded = wait_for(lambda: first(seen, events.Reloaded), "the Reloaded event")
        assert reloaded.app_ok and reloaded.changed_files == ("server.py",)
        assert reloaded.tools is not None and reloaded.tools.added == ("ping",)
        pids = session.supervisor.worker_pids
    finally:
        session.stop()
        runner.join(WAIT)
    assert not runner.is_alive()

    kinds = [type(event) for event in seen]
    assert kinds[0] is events.Started and kinds[-1] is events.Stopped
    assert kinds.index(events.Reloaded) > kinds.index(events.Started)
    assert not any(pid_alive(pid) for pid in pids)
    assert not (project / ".appsdk" / "dev.json").exists()
    # Everything went to the observer: the session itself printed nothing.
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_a_session_stopped_before_it_serves_returns_without_starting(project: Path):
    seen: list[events.DevEvent] = []
    session = DevSession(SessionConfig(DevConfig(project=project, port=0), workbench=False), seen.append)
    session.stop()
    runner = threading.Thread(target=session.run, name="dev-session")
    runner.start()
    runner.join(WAIT)
    assert not runner.is_alive()
    assert not any(isinstance(event, events.Started) for event in seen)
    assert not (project / ".appsdk" / "dev.json").exists()
