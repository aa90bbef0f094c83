"""Issue 13 items 9, 13 and 14 for `appsdk dev`: retired workers do not pile up, one dev per project,
projects found from a sub-folder, and --port 80's Host without a port."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from conftest import appsdk, free_port, pid_alive, stop, wait_for_port
from test_dev import edit, start_dev, wait_until

from appsdk_cli.scaffold import scaffold

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return scaffold("book-club", tmp_path).path


def open_stream(port: int) -> socket.socket:
    """A GET /mcp event stream, as a host keeps open for server-initiated messages."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    return sock


def ended_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes the stream within `seconds` (reads until EOF)."""
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except TimeoutError:
        return False
    except OSError:
        return True
    return False


# --- item 9 -----------------------------------------------------------------------------------------------


def test_retired_workers_do_not_pile_up(project: Path):
    dev = start_dev(project)
    streams: list[socket.socket] = []
    most = 0
    sampling = True

    def sample() -> None:
        nonlocal most
        while sampling:
            alive = [pid for pid in dev.app_pids() if pid_alive(pid)]
            most = max(most, len(alive))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        for round_number in range(8):
            streams.append(open_stream(dev.port))
            time.sleep(0.3)  # the stream is accepted by the serving worker
            server = project / "server.py"
            server.write_text(server.read_text() + f"\n# save {round_number}\n")
            wait_until(lambda n=round_number: dev.out().count("reloaded") > n, message=f"reload {round_number}")
            time.sleep(0.5)
        # Every stream but the newest was held by a worker that has since been retired: each was ended.
        for sock in streams[:-1]:
            assert ended_within(sock, 5), "a retired worker kept its GET /mcp stream open"
        assert httpx.post(dev.url, json=LIST, headers=ACCEPT, timeout=10).status_code == 200
    finally:
        sampling = False
        sampler.join()
        for sock in streams:
            sock.close()
        stop(dev.process)
    assert most <= 2, f"{most} workers were alive at once"


def test_a_slow_request_on_a_retired_worker_still_finishes(project: Path):
    """Ending streams must not cut ordinary requests: a tool call in flight at the reload completes."""
    server = project / "server.py"
    text = server.read_text()
    server.write_text(
        text + '\n\n@mcp.tool()\ndef slow_echo(text: str) -> str:\n    """Echo, slowly."""\n'
        "    import time\n\n    time.sleep(0.6)\n    return text\n"
    )
    dev = start_dev(project)
    try:
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow_echo", "arguments": {}}}
        call["params"]["arguments"] = {"text": "still here"}
        outcome: dict = {}

        def slow_call() -> None:
            outcome["response"] = httpx.post(dev.url, json=call, headers=ACCEPT, timeout=30)

        caller = threading.Thread(target=slow_call)
        caller.start()
        time.sleep(0.2)
        edit(server, '"""Echo, slowly."""', '"""Echo, slowly (edited)."""')
        caller.join(30)
        response = outcome["response"]
        assert response.status_code == 200
        assert "still here" in json.dumps(response.json())
    finally:
        stop(dev.process)


# --- item 13 ----------------------------------------------------------------------------------------------


def test_a_second_dev_in_the_same_project_is_refused(project: Path):
    first = start_dev(project)
    try:
        state = project / ".appsdk" / "dev.json"
        recorded = state.read_text()
        second = appsdk("dev", str(project), "--port", str(free_port()), timeout=60)
        assert second.returncode == 1, second.stdout + second.stderr
        assert "already running" in second.stderr and str(first.process.pid) in second.stderr
        assert "Traceback" not in second.stderr
        # The first one's record is untouched, and it still serves.
        assert state.read_text() == recorded
        assert httpx.post(first.url, json=LIST, headers=ACCEPT, timeout=10).status_code == 200
    finally:
        stop(first.process)
    assert not state.exists()


def test_dev_json_naming_a_live_process_that_is_not_appsdk_dev_is_ignored(project: Path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folder = project / ".appsdk"
        folder.mkdir(exist_ok=True)
        stale = {"url": "http://127.0.0.1:9/mcp", "host": "127.0.0.1", "port": 9, "pid": sleeper.pid}
        (folder / "dev.json").write_text(json.dumps(stale))
        # `call` does not send requests to port 9, and `dev` starts.
        result = appsdk("tools", cwd=project, env={"APPSDK_URL": ""})
        assert "127.0.0.1:9/" not in result.stderr, result.stderr
        dev = start_dev(project)
        try:
            assert json.loads((folder / "dev.json").read_text())["pid"] == dev.process.pid
        finally:
            stop(dev.process)
    finally:
        sleeper.kill()
        sleeper.wait()


# --- item 14 ----------------------------------------------------------------------------------------------


def test_dev_and_check_from_a_sub_folder_find_the_project(project: Path):
    widgets = project / "widgets"
    assert widgets.is_dir()
    port = free_port()
    env = {**os.environ}
    env.pop("APPSDK_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "dev", "--port", str(port)],
        cwd=widgets,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, process)
        wait_until(lambda: (project / ".appsdk" / "dev.json").is_file())
        # `call` from the same sub-folder finds it through dev.json.
        result = appsdk("tools", "--json", cwd=widgets, env={"APPSDK_URL": ""})
        assert result.returncode == 0, result.stderr
        assert "list-books" in result.stdout
    finally:
        stop(process)
    checked = appsdk("check", "--json", cwd=widgets, env={"APPSDK_URL": ""})
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["summary"]["mode"] == "path"
    assert json.loads(checked.stdout)["summary"]["tools"] >= 1


def _port_80_free() -> bool:
    try:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", 80))
    except OSError:
        return False
    return True


def test_a_host_header_without_a_port_is_accepted():
    """What a client sends to port 80 (the default port is dropped), checked by the rules the worker uses."""
    import anyio
    from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
    from starlette.requests import Request

    from appsdk_cli.devserver.hosts import security_lists

    hosts, origins = security_lists("127.0.0.1")
    middleware = TransportSecurityMiddleware(
        TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=list(hosts), allowed_origins=list(origins)
        )
    )

    def verdict(host: str, origin: str | None = None):
        headers = [(b"host", host.encode()), (b"content-type", b"application/json")]
        if origin:
            headers.append((b"origin", origin.encode()))
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "query_string": b""}
        return anyio.run(middleware.validate_request, Request(scope), True)

    assert verdict("127.0.0.1") is None
    assert verdict("localhost", "http://localhost") is None
    assert verdict("evil.example") is not None  # DNS-rebinding protection still holds
    assert verdict("127.0.0.1", "http://evil.example") is not None


@pytest.mark.skipif(not _port_80_free(), reason="port 80 is taken or not ours to bind")
def test_dev_on_port_80_answers_clients(project: Path):
    dev = start_dev(project, port=80)
    try:
        response = httpx.post("http://127.0.0.1/mcp", json=LIST, headers=ACCEPT, timeout=10)
        assert response.status_code == 200, response.text
        result = appsdk("tools", "--url", "http://localhost/mcp", "--json")
        assert result.returncode == 0, result.stderr
    finally:
        stop(dev.process)


def _open_files(pid: int) -> set[str]:
    """What this process's descriptors above stdio point at (`socket:[inode]`, `pipe:[inode]`, a path)."""
    targets = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        if int(fd.name) > 2:
            with contextlib.suppress(OSError):
                targets.add(os.readlink(fd))
    return targets


def test_workers_and_the_spare_hold_none_of_the_supervisors_own_descriptors(project: Path):
    """A fork holds only what it uses: not the watcher, not the workbench's sockets, not the pipes the
    supervisor's threads open (a spare holding one made the widget types' child seem to run until the
    next save)."""
    dev = start_dev(project)
    try:
        edit(project / "server.py", '"Frankenstein"', '"Dracula"')
        wait_until(lambda: "reloaded" in dev.out() and dev.spare_pids(), message="a reload and its spare")
        supervisor = _open_files(dev.process.pid)
        assert "anon_inode:inotify" in supervisor  # the watcher, which the forks must not hold
        watcher = {"anon_inode:inotify", "anon_inode:[eventfd]"}
        for pid in dev.worker_pids():
            # Every fork holds all of ours until its first act closes what it does not use (a spare seen
            # just after its fork still does): it must have closed them within moments, and for good.
            wait_until(lambda pid=pid: not watcher & _open_files(pid), message=f"fork {pid} closing the watcher's")
            files = _open_files(pid)
            assert not watcher & files, (pid, files)
            # Shared with the supervisor: the listening socket, the handoff pair, the two pipes of the
            # worker's channel and its description's pipe. (Every epoll reads "anon_inode:[eventpoll]",
            # its own included, so that name tells nothing.)
            held = (files & supervisor) - {"anon_inode:[eventpoll]"}
            sockets = {target for target in held if target.startswith("socket:")}
            pipes = {target for target in held if target.startswith("pipe:")}
            assert held == sockets | pipes and len(sockets) <= 3 and len(pipes) <= 3, (pid, held)
    finally:
        stop(dev.process)
