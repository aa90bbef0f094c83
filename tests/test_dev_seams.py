"""Issue 26, where `appsdk dev` meets a new user's app and the other commands: real `appsdk dev` processes
on 127.0.0.1, driven as a user would (a save, a kill, `appsdk call`), read from the terminal's lines."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import appsdk, free_port, pid_alive, stop
from test_dev import DevServer, edit, start_dev, title_now, wait_until

from appsdk_cli.scaffold import scaffold

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return scaffold("book-club", tmp_path).path


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def all_gone(pids: set[int]) -> bool:
    return not any(pid_alive(pid) for pid in pids)


# --- item 2: an app that starts its own server on import ------------------------------------------------


def test_mcp_run_at_import_is_one_line_within_seconds_and_a_save_fixes_it(project: Path):
    server = project / "server.py"
    append(server, "\nmcp.run()\n")
    began = time.monotonic()
    dev = start_dev(project)  # the panel comes up: dev keeps watching for the fix
    try:
        line = wait_until(
            lambda: next((t for t in dev.err().splitlines() if "starts the server on import" in t), None),
            timeout=15,
            message="the serves-on-import line",
        )
        assert time.monotonic() - began < 15
        assert line.startswith("the app failed to import: server.py:")
        assert "mcp.run() starts the server on import; put that call under `if __name__ == '__main__':`" in line
        assert "Traceback" not in dev.err()  # the line names the call; a traceback would add nothing
        # Requests are answered, with the same line, not left hanging.
        answer = httpx.post(dev.url, json=LIST, headers=ACCEPT, timeout=10)
        assert "starts the server on import" in answer.text
        edit(server, "\nmcp.run()\n", "\n")
        wait_until(lambda: _title_or_none(dev.url) == "Frankenstein", message="the fixed app serves")
        workers = dev.worker_pids()
    finally:
        stop(dev.process)
    assert dev.process.returncode == 0
    wait_until(lambda: all_gone(workers), timeout=10, message="no worker left behind")


def test_an_import_that_blocks_is_said_within_seconds_and_a_save_starts_it_over(project: Path):
    """A server started some other way (here: a wait that never ends) cannot be refused by the loader:
    dev's clock says it, with the loader's hint, and keeps waiting; the fix's save starts the import over."""
    server = project / "server.py"
    blocker = "\nimport threading\n\nthreading.Event().wait()\n"
    append(server, blocker)
    port = free_port()
    logs = project.parent / "logs"
    logs.mkdir()
    with (logs / "out").open("w") as out, (logs / "err").open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(port)], stdout=out, stderr=err
        )
    try:
        # From the worker's fork: the interpreter's own start-up is slow on a loaded machine, dev's clock is not.
        wait_until(lambda: DevServer(process, project, port, Path(), Path()).worker_pids(), message="the worker")
        began = time.monotonic()
        wait_until(lambda: "has not finished after" in (logs / "err").read_text(), message="the slow line")
        assert time.monotonic() - began < 15
        text = (logs / "err").read_text()
        assert "does it start the server on import? put mcp.run() under `if __name__ == '__main__':`" in text
        assert "appsdk dev keeps waiting" in text and process.poll() is None
        edit(server, blocker, "\n")
        wait_until(lambda: "Ctrl-C to stop" in (logs / "out").read_text(), message="the panel after the fix")
        assert title_now(f"http://127.0.0.1:{port}/mcp") == "Frankenstein"
        workers = DevServer(process, project, port, logs / "out", logs / "err").worker_pids()
    finally:
        stop(process)
    wait_until(lambda: all_gone(workers), timeout=10, message="no worker left behind")


def test_a_hung_first_import_stops_on_ctrl_c_without_orphans(project: Path):
    append(project / "server.py", "\nimport threading\n\nthreading.Event().wait()\n")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        workers = wait_until(
            lambda: DevServer(process, project, port, Path(), Path()).worker_pids(), message="the worker importing"
        )
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=15)
    finally:
        stop(process)
    assert process.returncode in (0, 130), err
    wait_until(lambda: all_gone(workers), timeout=10, message="no worker left behind")


# --- item 9: a worker that dies; a server that crashes mid-call ---------------------------------------------


def test_a_killed_worker_is_started_again_by_the_next_request(project: Path):
    dev = start_dev(project)
    try:
        (worker,) = dev.app_pids()
        os.kill(worker, signal.SIGKILL)
        wait_until(lambda: "the next request starts it again" in dev.err(), message="the exit line")
        assert "was killed by SIGKILL" in dev.err() and "save a file" not in dev.err()
        assert title_now(dev.url) == "Frankenstein"  # the next request, answered by a fresh worker
        assert "restarted" in dev.out()
        assert worker not in dev.worker_pids()
    finally:
        stop(dev.process)


def test_a_crash_loop_waits_for_a_save(project: Path):
    """Each death is restarted by a request, up to a bound; past it dev says so and waits for a save."""
    dev = start_dev(project)
    try:
        for _ in range(6):
            pids = dev.worker_pids()
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            wait_until(lambda p=pids: all_gone(p), message="the worker died")
            httpx.post(dev.url, json=LIST, headers=ACCEPT, timeout=20)
        wait_until(lambda: "not starting it again until you save a file" in dev.err(), message="the bound")
        answer = httpx.post(dev.url, json=LIST, headers=ACCEPT, timeout=20)
        assert "not starting it again until you save a file" in answer.text
        append(dev.project / "server.py", "\n# saved\n")
        wait_until(lambda: _title_or_none(dev.url) == "Frankenstein", message="a save restarts it")
    finally:
        stop(dev.process)


def _title_or_none(url: str) -> str | None:
    try:
        return title_now(url)
    except Exception:
        return None


def test_call_says_the_server_crashed_mid_call_and_does_not_send_it_twice(project: Path):
    append(
        project / "server.py",
        '\n\n@mcp.tool()\ndef die() -> str:\n    """Exit the process mid-call."""\n    import os\n\n    os._exit(3)\n',
    )
    dev = start_dev(project)
    try:
        result = appsdk("call", "die", cwd=project)
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert lines[0].startswith(f"error: the MCP server at {dev.url} crashed mid-call")
        assert "without answering tools/call die" in lines[0]
        assert "the appsdk dev terminal says why" in lines[0]
        assert "Remote end closed" not in lines[0]
        wait_until(lambda: "exited with code 3" in dev.err(), message="the dev terminal's line")
        time.sleep(1)
        assert dev.err().count("exited with code 3") == 1, "the call was sent again after the crash"
        follow = appsdk("call", "list-books", cwd=project)
        assert follow.returncode == 0 and "Frankenstein" in follow.stdout
    finally:
        stop(dev.process)


# --- item 11: the test command reinstalls appsdk under a running dev ---------------------------------------


def test_appsdk_reinstalled_under_a_running_dev_keeps_serving_and_says_so(project: Path, tmp_path: Path):
    """appsdk runs from a copy of its package, which is then removed as `pip install` would: reloads and
    the workbench's API keep working, and the terminal says once why to restart."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "appsdk_cli", site / "appsdk_cli", ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    with (logs / "out").open("w") as out, (logs / "err").open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(port)],
            stdout=out,
            stderr=err,
            cwd=tmp_path,
            env=env,
        )
    dev = DevServer(process, project, port, logs / "out", logs / "err")
    try:
        wait_until(lambda: "Ctrl-C to stop" in dev.out(), message="the panel")
        bench = re.search(r"Workbench\s+(http://127\.0\.0\.1:\d+/)", dev.out()).group(1)
        shutil.rmtree(site / "appsdk_cli")
        wait_until(lambda: "appsdk itself was reinstalled under this running dev" in dev.err(), message="the line")
        edit(project / "server.py", "Frankenstein", "Dracula")
        wait_until(lambda: _title_or_none(dev.url) == "Dracula", message="the reload after the reinstall")
        tools = httpx.get(f"{bench}api/tools", timeout=20)
        assert tools.status_code == 200 and "list-books" in tools.text
        started = httpx.post(
            f"{bench}api/runs",
            json={"tool": "list-books", "arguments": {}},
            headers={"Origin": bench.rstrip("/")},
            timeout=20,
        )
        assert started.status_code == 202, started.text
        assert "Traceback" not in dev.err() and "failed to import" not in dev.err()
    finally:
        stop(process)


# --- smaller findings ---------------------------------------------------------------------------------------


def test_no_reload_on_a_broken_app_does_not_promise_to_watch(project: Path):
    (project / "server.py").write_text("def broken(:\n", encoding="utf-8")
    result = appsdk("dev", str(project), "--no-reload", "--port", str(free_port()), timeout=60)
    assert result.returncode == 1
    assert "keeps watching" not in result.stderr
    assert "start appsdk dev again (with --no-reload it does not watch for saves)" in result.stderr


def test_next_lines_name_a_tool_that_works_as_printed(project: Path):
    """`aardvark` sorts first but destroys things; `by-author` needs an argument; neither has a widget."""
    append(
        project / "server.py",
        "\n\n@mcp.tool(annotations={'destructiveHint': True})\ndef aardvark() -> str:\n"
        '    """Delete everything."""\n    return "gone"\n\n\n'
        "@mcp.tool(annotations={'readOnlyHint': True})\ndef by_author(author: str) -> str:\n"
        '    """Books by one author."""\n    return author\n',
    )
    dev = start_dev(project)
    try:
        out = dev.out()
    finally:
        stop(dev.process)
    commands = [line.split("#")[0].strip() for line in out.splitlines()]
    assert "appsdk call list-books" in commands and "appsdk preview list-books" in commands, out
    assert not [c for c in commands if c.startswith(("appsdk call", "appsdk preview")) and "list-books" not in c]


def test_writing_the_contract_file_does_not_reload(project: Path):
    dev = start_dev(project)
    try:
        (project / "appsdk.contract.json").write_text(json.dumps({"appsdkContract": 1}), encoding="utf-8")
        time.sleep(2)
        assert "reloaded" not in dev.out()
        append(project / "server.py", "\n# a real save\n")
        wait_until(lambda: "reloaded" in dev.out(), message="a source save still reloads")
    finally:
        stop(dev.process)


def test_the_apps_log_lines_read_as_devs_own(project: Path):
    append(
        project / "server.py",
        "\n\nimport logging\n\n\n@mcp.tool()\ndef noisy() -> str:\n"
        '    """Log a warning."""\n    logging.getLogger("bookclub").warning("about to answer")\n    return "ok"\n',
    )
    dev = start_dev(project)
    try:
        assert appsdk("call", "noisy", cwd=project).returncode == 0
        wait_until(lambda: "about to answer" in dev.err(), message="the app's log line")
        line = next(t for t in dev.err().splitlines() if "about to answer" in t)
    finally:
        stop(dev.process)
    assert line == "warning: bookclub: about to answer"
