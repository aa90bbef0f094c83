"""`appsdk dev`: real processes on 127.0.0.1, driven by the real MCP client and httpx."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from conftest import appsdk, free_port, pid_alive, stop
from mcp import Client
from mcp.shared.exceptions import MCPError

from appsdk_cli.devserver.worker import SPARE_NAME
from appsdk_cli.project import running_dev_for_url
from appsdk_cli.scaffold import scaffold

WAIT = 30.0  # generous: a change must show within this, but it normally takes well under a second


@dataclass
class DevServer:
    process: subprocess.Popen
    project: Path
    port: int
    stdout_path: Path
    stderr_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def out(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def err(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def worker_pids(self) -> set[int]:
        """The supervisor's children, as the kernel sees them."""
        pids: set[int] = set()
        for children in Path(f"/proc/{self.process.pid}/task").glob("*/children"):
            try:
                pids |= {int(p) for p in children.read_text().split()}
            except OSError:
                continue
        return pids

    def app_pids(self) -> set[int]:
        """The workers that hold the app: not the spare, forked ahead of the next save, which holds none of it."""
        return {pid for pid in self.worker_pids() if process_name(pid) != SPARE_NAME}

    def spare_pids(self) -> set[int]:
        return {pid for pid in self.worker_pids() if process_name(pid) == SPARE_NAME}


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def wait_until(condition: Callable[[], Any], timeout: float = WAIT, message: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{message} not met within {timeout} s")


def start_dev(project: Path, *args: str, port: int | None = None) -> DevServer:
    port = port or free_port()
    logs = project.parent / f"dev-{port}"
    logs.mkdir()
    stdout_path, stderr_path = logs / "stdout", logs / "stderr"
    with stdout_path.open("w") as out, stderr_path.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(port), *args],
            stdout=out,
            stderr=err,
        )
    server = DevServer(process, project, port, stdout_path, stderr_path)
    state = project / ".appsdk" / "dev.json"

    def serving() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"appsdk dev exited with {process.returncode}: {server.err()}")
        recorded = state.is_file() and json.loads(state.read_text())["pid"] == process.pid
        return recorded and "Ctrl-C to stop" in server.out()

    wait_until(serving, message="dev.json from the running server")
    return server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return scaffold("book-club", tmp_path).path


@pytest.fixture
def dev(project: Path) -> Iterator[DevServer]:
    server = start_dev(project)
    yield server
    stop(server.process)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def mcp_error(problem: BaseException) -> MCPError | None:
    """The MCPError inside whatever the client raised (it arrives wrapped in task-group exception groups)."""
    if isinstance(problem, MCPError):
        return problem
    if isinstance(problem, BaseExceptionGroup):
        for inner in problem.exceptions:
            found = mcp_error(inner)
            if found is not None:
                return found
    return None


async def first_title(url: str) -> str:
    async with Client(url) as client:
        result = await client.call_tool("list-books", {})
    assert not result.is_error
    return result.structured_content["books"][0]["title"]


def title_now(url: str) -> str:
    return anyio.run(first_title, url)


def title_becomes(url: str, expected: str) -> bool:
    try:
        return title_now(url) == expected
    except Exception:
        return False


# -- serving ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_serves_list_books_and_records_itself_in_dev_json(dev: DevServer, anyio_backend):
    async with Client(dev.url) as client:
        tools = await client.list_tools()
        result = await client.call_tool("list-books", {"month": "June"})
    assert [tool.name for tool in tools.tools] == ["list-books"]
    assert result.structured_content["books"][0] == {"title": "Frankenstein", "author": "Mary Shelley"}
    assert "for June" in result.content[0].text

    state = json.loads((dev.project / ".appsdk" / "dev.json").read_text())
    assert state["url"] == dev.url and state["pid"] == dev.process.pid and state["port"] == dev.port
    out = dev.out()
    assert dev.url in out and "appsdk call" in out and "appsdk tunnel" in out
    # What to type in a second terminal: the app's own tool, from the project folder.
    assert "appsdk call list-books" in out and "appsdk preview list-books" in out
    assert f"cd {dev.project}" in out or "cd ~/" in out


def test_dev_json_disappears_on_exit(dev: DevServer):
    state = dev.project / ".appsdk" / "dev.json"
    assert state.is_file()
    # Found by its URL too, from any folder (this test's is not the project's): the preview's HMR uses it.
    found = running_dev_for_url(dev.url)
    assert found is not None and found[0] == dev.project.resolve() and found[1].pid == dev.process.pid
    index = list((Path(os.environ["APPSDK_HOME"]) / "dev").iterdir())
    assert len(index) == 1
    dev.process.send_signal(signal.SIGINT)
    assert dev.process.wait(timeout=WAIT) == 0
    assert not state.exists()
    assert running_dev_for_url(dev.url) is None and not index[0].exists()


def test_sse_transport_serves_an_event_stream(project: Path):
    server = start_dev(project, "--transport", "sse")
    try:
        assert f"http://127.0.0.1:{server.port}/sse" in server.out()
        with (
            httpx.Client() as client,
            client.stream("GET", f"http://127.0.0.1:{server.port}/sse", timeout=10) as response,
        ):
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            first = next(response.iter_lines())
            assert first.startswith("event: endpoint")
    finally:
        stop(server.process)


# -- hot reload ---------------------------------------------------------------------------------


def test_code_change_is_live_without_refresh_notice(dev: DevServer):
    assert title_now(dev.url) == "Frankenstein"
    edit(dev.project / "server.py", '"Frankenstein"', '"Dracula"')
    wait_until(lambda: title_becomes(dev.url, "Dracula"), message="the edited pick through /mcp")
    wait_until(lambda: "reloaded" in dev.out(), message="the reload line")
    assert "Refresh" not in dev.out()
    assert dev.process.poll() is None


@pytest.mark.anyio
async def test_widget_change_is_served_by_the_next_read(dev: DevServer, anyio_backend):
    async def widget_text() -> str:
        async with Client(dev.url) as client:
            result = await client.read_resource("ui://widget/book-list.html")
        return result.contents[0].text

    assert "Book club picks</h1>" in await widget_text()
    edit(dev.project / "widgets" / "book-list.html", "Book club picks</h1>", "Our next reads</h1>")
    with anyio.fail_after(WAIT):
        while "Our next reads</h1>" not in await widget_text():
            await anyio.sleep(0.05)


def test_tool_list_change_asks_for_a_refresh_once(dev: DevServer):
    server_py = dev.project / "server.py"
    edit(server_py, "Lists the book club's next three reading picks", "Lists the next three picks")
    wait_until(lambda: "Refresh" in dev.out(), message="the Refresh notice")
    assert dev.out().count("release contract changed") == 1
    assert "needs review: tool `list-books`'s description changed" in dev.out()
    assert dev.out().count("press Refresh on the plugin") == 1

    # Code only: the next reload says nothing about the tool list.
    reloads = dev.out().count("reloaded")
    edit(server_py, '"Frankenstein"', '"Dracula"')
    wait_until(lambda: title_becomes(dev.url, "Dracula"), message="the code-only change")
    wait_until(lambda: dev.out().count("reloaded") > reloads, message="the second reload line")
    assert dev.out().count("release contract changed") == 1
    assert dev.out().count("press Refresh on the plugin") == 1


def test_reload_classifies_contract_changes_like_check_against(dev: DevServer):
    """A breaking edit says so on its reload, with what to do; a widget edit says it goes live at once."""
    edit(dev.project / "server.py", 'name="list-books"', 'name="list-picks"')
    wait_until(lambda: "release contract changed" in dev.out(), message="the classified reload")
    out = dev.out()
    assert "breaking: tool `list-books` is gone, apparently renamed to `list-picks`" in out
    assert "keep `list-books`" in out
    assert "needs review: tool `list-picks` is new" in out
    assert out.count("press Refresh on the plugin") == 1

    edit(dev.project / "widgets" / "book-list.html", "Book club picks</h1>", "Our next reads</h1>")
    wait_until(lambda: "the widget HTML of ui://widget/book-list.html changed" in dev.out(), message="the live line")
    latest = dev.out().rsplit("reloaded", 1)[1]
    assert "the widget HTML of ui://widget/book-list.html changed: goes live at once, no review" in latest
    assert "breaking" not in latest and "Refresh" not in latest


@pytest.mark.anyio
async def test_broken_save_answers_with_a_clear_error_then_recovers(dev: DevServer, anyio_backend):
    server_py = dev.project / "server.py"
    good = server_py.read_text(encoding="utf-8")
    server_py.write_text(good + "\nbroken = (\n", encoding="utf-8")

    async def error_while_broken() -> MCPError | None:
        # A hang guard, not a timing goal: the error must come back rather than the request waiting.
        with anyio.fail_after(10):
            try:
                async with Client(dev.url) as client:
                    await client.call_tool("list-books", {})
            except BaseException as problem:
                found = mcp_error(problem)
                if found is None:
                    raise
                return found
        return None

    with anyio.fail_after(WAIT):
        while (problem := await error_while_broken()) is None:
            await anyio.sleep(0.05)
    assert problem.error.code == -32603
    assert re.search(r"the app failed to import: server\.py:\d+: SyntaxError", problem.error.message)
    assert "fix it and save" in problem.error.message
    err = dev.err()
    assert "Traceback" in err or "SyntaxError" in err
    assert "hint:" in err and "keeps watching" in err
    assert "appsdk_cli" not in err  # the user's frames only

    server_py.write_text(good.replace('"Frankenstein"', '"Dracula"'), encoding="utf-8")
    with anyio.fail_after(WAIT):
        while True:
            try:
                if await first_title(dev.url) == "Dracula":
                    break
            except Exception:
                pass
            await anyio.sleep(0.05)
    assert dev.process.poll() is None  # the same `appsdk dev`, never restarted


def test_exception_at_import_names_the_line(dev: DevServer):
    server_py = dev.project / "server.py"
    edit(server_py, "mcp = MCPServer(", 'raise RuntimeError("no database")\nmcp = MCPServer(')
    wait_until(lambda: "the app failed to import" in dev.err(), message="the import failure")
    assert re.search(r"server\.py:\d+: RuntimeError: no database", dev.err())


def test_requests_during_reloads_all_succeed(dev: DevServer):
    """A client hammering /mcp while the app reloads five times: nothing is refused or lost."""
    failures: list[str] = []
    titles: set[str] = set()
    done = threading.Event()

    def hammer() -> None:
        async def loop() -> None:
            for _ in range(2000):  # bounded, in case `done` never comes
                if done.is_set():
                    return
                try:
                    titles.add(await first_title(dev.url))
                except Exception as problem:
                    failures.append(repr(mcp_error(problem) or problem))

        anyio.run(loop)

    worker = threading.Thread(target=hammer)
    worker.start()
    try:
        server_py = dev.project / "server.py"
        current = "Frankenstein"
        for n in range(5):
            new = f"Edition {n}"
            edit(server_py, f'"{current}"', f'"{new}"')
            current = new
            wait_until(lambda new=new: new in titles, message=f"{new} seen by the hammering client")
    finally:
        done.set()
        worker.join(timeout=WAIT)
    assert failures == []
    assert {f"Edition {n}" for n in range(5)} <= titles


# -- failures a user can cause --------------------------------------------------------------------


def test_port_in_use_is_one_line_and_exit_1(project: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = appsdk("dev", str(project), "--port", str(port), timeout=60)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"port {port} is already in use" in lines[0] and "--port" in lines[0]
    assert not (project / ".appsdk" / "dev.json").exists()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("nope:mcp", "no module 'nope'"),
        ("server:nope", "has no attribute 'nope'"),
        ("server:PICKS", "not an MCPServer"),
    ],
)
def test_missing_app_target_names_what_was_looked_for(project: Path, spec: str, expected: str):
    edit(project / "pyproject.toml", 'app = "server:mcp"', f'app = "{spec}"')
    result = appsdk("dev", str(project), "--port", str(free_port()), timeout=60)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert expected in lines[0] and spec in lines[0] and "Traceback" not in result.stderr


def test_no_server_py_names_the_default_target(tmp_path: Path):
    result = appsdk("dev", str(tmp_path), "--port", str(free_port()), timeout=60)
    assert result.returncode == 1
    assert "server:mcp (the default)" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_bad_command_lines_exit_2(project: Path):
    assert appsdk("dev", str(project), "--transport", "carrier-pigeon").returncode == 2
    assert appsdk("dev", str(project), "--port", "70000").returncode == 2
    bad_host = appsdk("dev", str(project), "--allow-host", "a b", "--port", str(free_port()))
    assert bad_host.returncode == 2 and "--allow-host" in bad_host.stderr
    missing = appsdk("dev", str(project / "nowhere"))
    assert missing.returncode == 2 and "nowhere" in missing.stderr


def test_broken_app_with_no_reload_exits_1(project: Path):
    (project / "server.py").write_text("def broken(:\n", encoding="utf-8")
    result = appsdk("dev", str(project), "--no-reload", "--port", str(free_port()), timeout=60)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: the app failed to import: server.py:1: SyntaxError")
    assert not (project / ".appsdk" / "dev.json").exists()


def test_wildcard_host_warns(project: Path):
    server = start_dev(project, "--host", "0.0.0.0")
    try:
        assert "warning:" in server.err() and "0.0.0.0" in server.err()
        assert title_now(server.url) == "Frankenstein"
    finally:
        stop(server.process)


# -- DNS-rebinding protection -------------------------------------------------------------------


def post_list(url: str, host: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Host": host, "Accept": "application/json, text/event-stream"}
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_foreign_host_is_refused_unless_allowed(project: Path):
    plain = start_dev(project)
    try:
        assert post_list(plain.url, "evil.example").status_code == 421
        assert post_list(plain.url, f"127.0.0.1:{plain.port}").status_code != 421
    finally:
        stop(plain.process)
    allowed = start_dev(project, "--allow-host", "abc.tunnel.example")
    try:
        assert post_list(allowed.url, "abc.tunnel.example").status_code == 200  # tunnels send no port
        assert post_list(allowed.url, "abc.tunnel.example:443").status_code == 200
        assert post_list(allowed.url, "evil.example").status_code == 421
    finally:
        stop(allowed.process)


# -- stopping -----------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_every_worker(project: Path, signum: int):
    server = start_dev(project)
    try:
        pids = set(server.worker_pids())
        edit(project / "server.py", '"Frankenstein"', '"Dracula"')  # a reload: a retired and a new worker
        wait_until(lambda: title_becomes(server.url, "Dracula"), message="the reload")
        pids |= server.worker_pids()
        assert pids
        server.process.send_signal(signum)
        assert server.process.wait(timeout=WAIT) == 0
        wait_until(lambda: not any(pid_alive(p) for p in pids), timeout=10, message="every worker gone")
        assert not (project / ".appsdk" / "dev.json").exists()
    finally:
        stop(server.process)


@contextlib.contextmanager
def sigchld_storm(targets: Callable[[], set[int]]) -> Iterator[None]:
    """SIGCHLD every 0.2 ms to each process `targets()` names, while the block runs (SIGCHLD, since a
    process that does not handle it ignores it)."""
    storming = threading.Event()

    def storm() -> None:
        while not storming.is_set():
            for pid in targets():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCHLD)
            time.sleep(0.0002)

    stormer = threading.Thread(target=storm, daemon=True)
    stormer.start()
    try:
        yield
    finally:
        storming.set()
        stormer.join()


def assert_stopped_quietly(server: DevServer) -> None:
    assert server.process.wait(timeout=WAIT) == 0
    assert "stopped" in server.out()
    assert "wakeup fd" not in server.err() + server.out(), server.err()
    assert "Traceback" not in server.err() + server.out(), server.err()


def test_signals_that_arrive_while_dev_stops_are_taken_quietly(project: Path):
    # Python writes a byte to dev's wakeup pipe for every signal. The pipe was closed before the signal
    # handlers were put back, so a worker's SIGCHLD in between printed "Exception ignored when trying to
    # write to the signal wakeup fd ... Bad file descriptor" (or wrote into whatever took the number).
    # A storm of SIGCHLD from here covers every moment of the stop.
    server = start_dev(project)
    try:
        with sigchld_storm(lambda: {server.process.pid}):
            server.process.send_signal(signal.SIGINT)
            server.process.wait(timeout=WAIT)
    finally:
        stop(server.process)
    assert_stopped_quietly(server)


def test_a_worker_forked_into_a_storm_of_signals_prints_nothing(project: Path):
    # A fork starts with the supervisor's signal handlers and wakeup pipe, and closes the pipe before it puts
    # its own handlers in place: a signal in between (Ctrl-C reaches the whole group; the stop's SIGTERM
    # meets a spare just forked) printed "Exception ignored ... signal wakeup fd ... Bad file descriptor".
    # SIGCHLD to dev and each of its children, through saves that fork workers and spares, covers that moment.
    server = start_dev(project)
    try:
        with sigchld_storm(lambda: server.worker_pids() | {server.process.pid}):
            for old, new in (("Frankenstein", "Dracula"), ("Dracula", "Emma"), ("Emma", "Middlemarch")):
                edit(project / "server.py", f'"{old}"', f'"{new}"')
                wait_until(lambda new=new: title_becomes(server.url, new), message=f"the reload to {new}")
            server.process.send_signal(signal.SIGINT)
            server.process.wait(timeout=WAIT)
    finally:
        stop(server.process)
    assert_stopped_quietly(server)


def test_workers_die_with_a_killed_supervisor(project: Path):
    server = start_dev(project)
    pids = server.worker_pids()
    assert pids
    server.process.kill()
    server.process.wait(timeout=WAIT)
    wait_until(lambda: not any(pid_alive(p) for p in pids), timeout=10, message="workers gone after SIGKILL")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=1).close()


# -- the capability, without the CLI ------------------------------------------------------------


def test_supervisor_in_process_reports_events_and_admits_hosts_at_run_time(project: Path):
    from appsdk_cli.devserver.events import AllowedHostAdded, Started, Stopped
    from appsdk_cli.devserver.supervisor import DevConfig, Supervisor

    events: list[Any] = []
    bound = threading.Event()
    supervisor = Supervisor(DevConfig(project=project, port=0), observer=events.append, on_bound=lambda _: bound.set())
    runner = threading.Thread(target=supervisor.run)
    runner.start()
    try:
        assert bound.wait(WAIT)
        started = next(e for e in events if isinstance(e, Started))
        assert started.app_ok and started.url == supervisor.url and supervisor.port != 0
        assert post_list(supervisor.url, "late.example").status_code == 421

        supervisor.add_allowed_host("late.example")
        wait_until(lambda: any(isinstance(e, AllowedHostAdded) for e in events), message="the host event")
        wait_until(lambda: post_list(supervisor.url, "late.example").status_code == 200, message="late host")
        supervisor.record_public_url("https://late.example/mcp")
        state = json.loads((project / ".appsdk" / "dev.json").read_text())
        assert state["public_url"] == "https://late.example/mcp" and state["url"] == supervisor.url
        pids = supervisor.worker_pids
    finally:
        supervisor.stop()
        runner.join(WAIT)
    assert not runner.is_alive()
    assert isinstance(events[-1], Stopped)
    assert not any(pid_alive(p) for p in pids)
    assert not (project / ".appsdk" / "dev.json").exists()


def test_parse_allowed_host():
    from appsdk_cli.devserver.hosts import parse_allowed_host, security_lists
    from appsdk_cli.errors import UsageError

    assert parse_allowed_host("abc.ngrok.app").hosts == ("abc.ngrok.app:*", "abc.ngrok.app")
    assert parse_allowed_host("https://abc.ngrok.app/").hosts == ("abc.ngrok.app:*", "abc.ngrok.app")
    assert parse_allowed_host("abc.ngrok.app:8443").hosts == ("abc.ngrok.app:8443",)
    assert parse_allowed_host("::1").hosts == ("[::1]:*", "[::1]")
    for bad in ("", "a b", "https://x.example/path", "x.example:port"):
        with pytest.raises(UsageError):
            parse_allowed_host(bad)
    hosts, _ = security_lists("0.0.0.0", ("x.example",))
    assert hosts[:3] == ("127.0.0.1:*", "localhost:*", "[::1]:*") and "x.example" in hosts


def test_help_keeps_dev_light():
    result = appsdk("dev", "--help")
    assert result.returncode == 0 and "--allow-host" in result.stdout and "--no-reload" in result.stdout


def test_the_tunnel_is_offered_as_a_next_step_only_with_an_ngrok_token(tmp_path: Path, monkeypatch):
    """#36: without an ngrok authtoken `appsdk tunnel` is one error line, so dev's second-terminal lines do
    not offer it as ready; they say how to set a token. With one ($NGROK_AUTHTOKEN or ngrok's config file
    in the home folder), the line is there."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("NGROK_AUTHTOKEN", raising=False)
    tunnel_line = re.compile(r"^  (\S+/)?appsdk tunnel( +# an HTTPS URL for ChatGPT)?$", re.MULTILINE)

    without = start_dev(scaffold("without", tmp_path).path)
    try:
        said = without.out()
    finally:
        stop(without.process)
    assert not tunnel_line.search(said), said
    assert "`appsdk tunnel` gives an HTTPS URL once ngrok has a token" in said and "NGROK_AUTHTOKEN" in said, said

    config = home / ".config" / "ngrok" / "ngrok.yml"
    config.parent.mkdir(parents=True)
    config.write_text('version: "2"\nauthtoken: not-a-real-token\n')
    with_token = start_dev(scaffold("token", tmp_path).path)
    try:
        said = with_token.out()
    finally:
        stop(with_token.process)
    assert tunnel_line.search(said) and "once ngrok has a token" not in said, said
