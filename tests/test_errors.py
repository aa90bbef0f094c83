"""Issue 13 item 11: inputs that used to print a Python traceback. Each is one line and a documented exit code;
a bad option or URL is exit 2 in every command."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import RunningServer, appsdk, appsdk_in_process, free_port, serve, stop, wait_for_port

from appsdk_cli.scaffold import scaffold

HOSTILE = Path(__file__).resolve().parent / "hostile.py"


@pytest.fixture(scope="module")
def hostile() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(HOSTILE), str(port)], port)
    yield server
    stop(server.process)


def one_line(result: subprocess.CompletedProcess, code: int, fragment: str = "") -> None:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 or lines[0].startswith(("error:", "Error:", "Usage:")), result.stderr
    assert fragment in result.stderr, result.stderr


# --- a server that behaves oddly -----------------------------------------------------------------------


def test_a_ping_from_the_server_mid_stream_is_answered(hostile):
    result = appsdk("tools", "--url", f"http://127.0.0.1:{hostile.port}/ping-first", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["tools"][0]["name"] == "evil"


def test_deeply_nested_json_from_the_server(hostile):
    one_line(appsdk("call", "deep", "--url", f"http://127.0.0.1:{hostile.port}/weird"), 1, "nested too deeply")


@pytest.mark.parametrize("words", [("node=1",), ("other=1",), ()])
def test_a_recursive_ref_schema(hostile, words):
    result = appsdk("call", "loop", *words, "--url", f"http://127.0.0.1:{hostile.port}/weird")
    assert result.returncode in (0, 2), result.stderr
    assert "Traceback" not in result.stderr


def test_check_of_a_recursive_ref_schema(hostile):
    result = appsdk("check", "--url", f"http://127.0.0.1:{hostile.port}/weird")
    assert result.returncode in (0, 1)
    assert "Traceback" not in result.stderr + result.stdout


def test_deeply_nested_json_on_the_command_line(hostile):
    deep = "[" * 50_000 + "]" * 50_000
    url = f"http://127.0.0.1:{hostile.port}/weird"
    one_line(appsdk("call", "deep", "--url", url, "--args", '{"a": ' + deep + "}"), 2, "nested too deeply")
    one_line(appsdk("call", "deep", "--url", url, "--meta", '{"a": ' + deep + "}"), 2, "nested too deeply")


# --- files that are not what they should be --------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def run_apps(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return appsdk("apps", *args, cwd=cwd, env={"APPSDK_HOME": str(home)}, timeout=20)


def test_a_fifo_as_apps_toml(home, tmp_path):
    os.mkfifo(home / "apps.toml")
    one_line(run_apps(home, tmp_path, "list"), 1, "not a regular file")
    one_line(run_apps(home, tmp_path, "add", "x", "--url", "http://127.0.0.1:1/mcp"), 1, "not a regular file")


def test_dev_zero_as_apps_toml(home, tmp_path):
    (home / "apps.toml").symlink_to("/dev/zero")
    one_line(run_apps(home, tmp_path, "list"), 1, "not a regular file")


def test_deeply_nested_toml(home, tmp_path):
    (home / "apps.toml").write_text("a = " + "[" * 20_000 + "]" * 20_000 + "\n")
    one_line(run_apps(home, tmp_path, "list"), 1, "nested too deeply")
    (home / "apps.toml").unlink()
    (home / "config.toml").write_text("a = " + "{b = " * 20_000 + "1" + "}" * 20_000 + "\n")
    one_line(run_apps(home, tmp_path, "installed"), 1, "nested too deeply")


def test_deeply_nested_pyproject(tmp_path):
    project = scaffold("book-club", tmp_path).path
    (project / "pyproject.toml").write_text("x = " + "[" * 20_000 + "]" * 20_000 + "\n")
    one_line(appsdk("check", str(project)), 1, "nested too deeply")
    one_line(appsdk("dev", str(project), "--port", str(free_port())), 1, "nested too deeply")


def test_an_uncreatable_appsdk_home(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = {"APPSDK_HOME": str(blocker / "home")}
    result = appsdk("apps", "add", "x", "--url", "http://127.0.0.1:1/mcp", cwd=tmp_path, env=env)
    one_line(result, 1, "APPSDK_HOME")
    one_line(appsdk("apps", "installed", cwd=tmp_path, env=env), 1, str(blocker))


# --- options ---------------------------------------------------------------------------------------------


URL_COMMANDS = [
    ("call", "x"),
    ("tools",),
    ("resources",),
    ("read", "ui://x"),
    ("check",),
    ("preview", "x", "--no-open"),
    ("tunnel",),
    ("apps", "add", "x"),
]


@pytest.mark.parametrize("command", URL_COMMANDS, ids=[" ".join(c[:2]) for c in URL_COMMANDS])
@pytest.mark.parametrize("url", ["notaurl", "ftp://127.0.0.1/mcp", "http://:80/mcp", "http://127.0.0.1:99999/mcp"])
def test_a_bad_url_is_exit_2_everywhere(command, url, tmp_path):
    one_line(appsdk_in_process(*command, "--url", url, cwd=tmp_path, env={"APPSDK_HOME": str(tmp_path)}), 2)


def test_a_bad_url_is_exit_2_from_the_real_command_line(tmp_path):
    one_line(appsdk("call", "x", "--url", "notaurl", cwd=tmp_path, env={"APPSDK_HOME": str(tmp_path)}), 2)


@pytest.mark.parametrize("command", [("tools",), ("call", "x"), ("resources",)])
def test_a_bad_appsdk_url_is_exit_2(command, tmp_path):
    one_line(appsdk_in_process(*command, cwd=tmp_path, env={"APPSDK_URL": "notaurl"}), 2, "APPSDK_URL")


def test_a_bad_appsdk_url_is_exit_2_from_the_real_command_line(tmp_path):
    one_line(appsdk("tools", cwd=tmp_path, env={"APPSDK_URL": "notaurl"}), 2, "APPSDK_URL")


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "-1", "0"])
@pytest.mark.parametrize(
    "command", [("tools",), ("check",), ("apps", "installed"), ("preview", "x")], ids=lambda c: " ".join(c)
)
def test_an_unusable_timeout_is_exit_2(command, value, tmp_path):
    one_line(appsdk_in_process(*command, "--timeout", value, cwd=tmp_path, env={"APPSDK_HOME": str(tmp_path)}), 2)


def test_an_unusable_timeout_is_exit_2_from_the_real_command_line(tmp_path):
    one_line(appsdk("tools", "--timeout", "nan", cwd=tmp_path, env={"APPSDK_HOME": str(tmp_path)}), 2)


# --- processes --------------------------------------------------------------------------------------------


def test_a_browser_dropping_its_connection_to_the_preview(hostile):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "preview", "evil", "--url", hostile.url, "--no-open", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, process)
        for path in ("/", "/session.json", "/static/host.js", "/widget"):
            for _ in range(3):
                sock = socket.create_connection(("127.0.0.1", port))
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                # Reset, not close: the server's write then fails as a dropped browser tab makes it fail.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(
            f"POST /api/call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
        )
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        time.sleep(1)
        # Still serving.
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=10).status_code == 200
    finally:
        stop(process)
    stderr = process.stderr.read()
    assert "Traceback" not in stderr, stderr


def test_sigterm_to_the_process_group_of_appsdk_dev(tmp_path):
    project = scaffold("book-club", tmp_path).path
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "dev", "--port", str(port)],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process)
        # An open GET stream and a request in flight, as a host would have.
        httpx.post(
            f"http://127.0.0.1:{port}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
            timeout=10,
        )
        time.sleep(0.5)
        os.killpg(process.pid, signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, err
    assert "Traceback" not in out + err, out + err
    assert "appsdk dev stopped" in out
