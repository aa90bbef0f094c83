"""`appsdk dev`'s reload path: what a reload does after the swap, and what it says when it is slow.

Real dev processes on 127.0.0.1, a real MCP client; no timing is asserted beyond "a line appears".
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import time
from pathlib import Path

import pytest
from conftest import pid_alive, stop
from test_dev import WAIT, edit, start_dev, title_becomes, wait_until

SERVER = '''"""An app for the reload-path tests: its tool reports VALUE from values.py."""

from typing import Any

import slow  # noqa: F401
import values
from mcp.server.mcpserver import MCPServer

mcp = MCPServer(name="reload-path", version="0.0.1", log_level="WARNING")


@mcp.tool(name="list-books")
def list_books() -> dict[str, Any]:
    """The value, as a book title."""
    return {"books": [{"title": values.VALUE}]}
'''


def value_app(root: Path, *, import_seconds: float = 0.0) -> Path:
    project = root / "app"
    project.mkdir()
    (project / "server.py").write_text(SERVER, encoding="utf-8")
    (project / "values.py").write_text('VALUE = "aaaa"\n', encoding="utf-8")
    (project / "slow.py").write_text(f"import time\n\ntime.sleep({import_seconds})\n", encoding="utf-8")
    return project


@pytest.fixture
def slow_app(tmp_path: Path) -> Path:
    return value_app(tmp_path, import_seconds=0.8)


def test_a_slow_reload_says_in_one_line_that_the_import_took_the_time(slow_app: Path):
    server = start_dev(slow_app, "--no-workbench")
    try:
        edit(slow_app / "values.py", '"aaaa"', '"bbbb"')
        wait_until(lambda: title_becomes(server.url, "bbbb"), message="the edited value through /mcp")
        line = wait_until(lambda: _line(server.out(), "slow reload"), message="the slow reload line")
        # One line: how long, then the import (the app's 3 modules) with its own figure.
        assert re.fullmatch(r"slow reload \(\d+\.\d\d s\): .*importing the app's 3 modules \d+\.\d\d s.*", line), line
        seconds = float(re.search(r"importing the app's 3 modules (\d+\.\d\d) s", line)[1])
        assert seconds >= 0.7
        assert _line(server.out(), "reloaded in") is not None
    finally:
        stop(server.process)


def test_a_fast_reload_says_nothing_more(tmp_path: Path):
    project = value_app(tmp_path)
    server = start_dev(project, "--no-workbench")
    try:
        edit(project / "values.py", '"aaaa"', '"bbbb"')
        wait_until(lambda: title_becomes(server.url, "bbbb"), message="the edited value through /mcp")
        wait_until(lambda: _line(server.out(), "reloaded in"), message="the reload line")
        out = server.out()
        seconds = float(re.search(r"reloaded in (\d+\.\d\d) s", out)[1])
        if seconds < 0.5:  # a loaded machine can make any reload slow; then the line is right to appear
            assert "slow reload" not in out
    finally:
        stop(server.process)


def test_a_same_size_save_with_the_same_mtime_is_never_served_from_stale_bytecode(tmp_path: Path):
    """The describer caches the app's bytecode for the next worker; a save that keeps the file's size and
    its mtime (what two saves within one second look like to Python's usual .pyc check) must still be
    served as saved."""
    project = value_app(tmp_path)
    values = project / "values.py"
    stamp = values.stat().st_mtime_ns
    server = start_dev(project, "--no-workbench")
    try:
        cached = Path(importlib.util.cache_from_source(str(values)))
        for value in ("bbbb", "cccc", "dddd"):
            # Each worker's describer leaves a hash-checked .pyc of the source it imported: the next
            # save's same size and mtime would make a timestamp .pyc of it look current.
            source = values.read_bytes()
            wait_until(lambda s=source: _hash_checked(cached, s), message=f"a hash-checked {cached.name}")
            values.write_text(f'VALUE = "{value}"\n', encoding="utf-8")
            os.utime(values, ns=(stamp, stamp))
            wait_until(lambda v=value: title_becomes(server.url, v), message=f"{value} through /mcp")
    finally:
        stop(server.process)


def test_the_describer_is_reaped_after_each_reload(tmp_path: Path):
    project = value_app(tmp_path)
    server = start_dev(project, "--no-workbench")
    try:
        for value in ("bbbb", "cccc"):
            edit(project / "values.py", f'"{_previous(value)}"', f'"{value}"')
            wait_until(lambda v=value: title_becomes(server.url, v), message=f"{value} through /mcp")
        wait_until(lambda: server.out().count("reloaded in") == 2, message="both reload lines")
        # The serving worker's describer has written its description and exited: nothing is left
        # under it, not even a zombie.
        wait_until(
            lambda: all(not _children(worker) for worker in server.app_pids()),
            timeout=WAIT,
            message="no process left under the workers",
        )
    finally:
        stop(server.process)


def _previous(value: str) -> str:
    return {"bbbb": "aaaa", "cccc": "bbbb"}[value]


def _children(pid: int) -> set[int]:
    children: set[int] = set()
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children |= {int(child) for child in listing.read_text().split()}
        except OSError:
            continue
    return children


def _hash_checked(cached: Path, source: bytes) -> bool:
    """Whether `cached` is a hash-checked .pyc of exactly `source`."""
    try:
        header = cached.read_bytes()[:16]
    except OSError:
        return False
    return int.from_bytes(header[4:8], "little") == 0b11 and header[8:16] == importlib.util.source_hash(source)


def _line(out: str, start: str) -> str | None:
    for line in out.splitlines():
        if line.startswith(start):
            return line
    time.sleep(0.05)
    return None


def test_a_spare_worker_takes_the_next_save_and_dies_with_a_killed_supervisor(tmp_path: Path):
    """Once a reload is reported, a spare is forked ahead of the next save (the app's libraries imported,
    nothing of the app); that save is handed to it, and a new spare follows. Like every worker, it goes
    when the supervisor is killed."""
    project = value_app(tmp_path)
    server = start_dev(project, "--no-workbench")
    try:
        (spare,) = wait_until(server.spare_pids, message="a spare after the first start")
        edit(project / "values.py", '"aaaa"', '"bbbb"')
        wait_until(lambda: title_becomes(server.url, "bbbb"), message="the edited value through /mcp")
        assert wait_until(lambda: spare in server.app_pids(), message="the spare serving") is True
        (second,) = wait_until(server.spare_pids, message="the next spare")
        assert second != spare
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=WAIT)
        wait_until(lambda: not pid_alive(second) and not pid_alive(spare), message="no worker left behind")
    finally:
        stop(server.process)


def test_a_spare_imports_the_apps_libraries_with_the_environment_the_app_runs_with(tmp_path: Path, monkeypatch):
    """A library that reads a setting when it is imported (outside the project, so the spare imports it
    ahead of the next save) sees the dev authorization server's settings, as in the first worker."""
    from test_auth import Flow, auth_project

    library = tmp_path / "site"
    library.mkdir()
    (library / "issuer_probe.py").write_text('import os\n\nISSUER = os.environ.get("OAUTH_ISSUER", "unset")\n')
    monkeypatch.setenv("PYTHONPATH", str(library))
    project = auth_project(tmp_path)
    server_py = project / "server.py"
    server_py.write_text(
        server_py.read_text()
        + '\n\nimport issuer_probe  # noqa: E402\n\n\n@mcp.tool(name="issuer-probe")\n'
        + 'def issuer_probe_tool() -> str:\n    """The issuer the library saw."""\n    return issuer_probe.ISSUER\n'
    )
    dev = start_dev(project, "--auth-user", "ada", "--no-workbench")
    try:
        flow = Flow(dev.url)
        flow.discover()
        assert flow.register().status_code == 201
        token = flow.sign_in()["access_token"]

        def issuer() -> str:
            answer = flow.call("issuer-probe", {}, token).json()["result"]
            return answer["content"][0]["text"]

        first = issuer()
        assert first.startswith("http://127.0.0.1:"), first
        # Two saves: the second is sure to be served by a spare forked after a reload.
        for save in (1, 2):
            server_py.write_text(server_py.read_text() + f"\n# save {save}\n")
            wait_until(lambda save=save: dev.out().count("reloaded") >= save, message=f"reload {save}")
            assert issuer() == first
    finally:
        stop(dev.process)
