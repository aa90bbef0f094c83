"""The browser `appsdk preview --screenshot` keeps between commands (appsdk_cli/browser/keptbrowser.py).

Real commands against the scaffolded app, the real kept process and Chromium; each test has its own
APPSDK_HOME (conftest), so its own kept browser, removed at the end (its socket file goes, it exits).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import pid_alive
from preview_helpers import CHROMIUM, NEEDS_CHROMIUM, command_of, decode_png, marked_pids

from appsdk_cli import __version__
from appsdk_cli.browser.keptbrowser import socket_path

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM

KEPT = "appsdk_cli.browser.keptbrowser"


@pytest.fixture
def home(appsdk_home_of_the_test: Path, monkeypatch) -> Path:
    monkeypatch.setenv("APPSDK_KEPT_BROWSER_IDLE", "30")
    monkeypatch.setenv("APPSDK_CHROMIUM", str(CHROMIUM))
    return appsdk_home_of_the_test  # conftest removes its socket afterwards, which ends its kept browser


def shoot(url: str, out: Path, marker: str, **extra_env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "APPSDK_TEST_MARK": marker, **extra_env}
    args = ["preview", "list-books", "--url", url, "--screenshot", str(out)]
    return subprocess.run(
        [sys.executable, "-m", "appsdk_cli", *args], env=env, capture_output=True, text=True, timeout=90
    )


def kept_pids(home: Path) -> set[int]:
    """The kept-browser processes serving this home (their command line names its socket)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            command = command_of(int(entry.name))
            if KEPT in command and str(home) in command:
                found.add(int(entry.name))
    return found


def sockets_held(pid: int) -> int:
    """How many sockets this process holds: the kept browser's listener, plus one per command it serves."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            count += os.readlink(fd).startswith("socket:")
    return count


def wait_until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def assert_a_widget_png(result: subprocess.CompletedProcess, out: Path) -> None:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    width, height, _ = decode_png(out.read_bytes())
    assert width == 768 and 200 < height < 640, (width, height)


def expected_socket(home: Path) -> Path:
    return socket_path(home, str(CHROMIUM), os.geteuid() != 0)


def test_a_second_shot_reuses_the_kept_browser_and_removing_its_socket_ends_it(app_server, home, tmp_path):
    first = shoot(app_server.url, tmp_path / "one.png", uuid.uuid4().hex)
    assert_a_widget_png(first, tmp_path / "one.png")
    kept = kept_pids(home)
    assert len(kept) == 1, kept
    sock = expected_socket(home)
    assert sock.is_socket() and (sock.stat().st_mode & 0o777) == 0o600
    assert (home.stat().st_mode & 0o777) == 0o700

    second = shoot(app_server.url, tmp_path / "two.png", uuid.uuid4().hex)
    assert_a_widget_png(second, tmp_path / "two.png")
    assert kept_pids(home) == kept  # the same process took it

    (pid,) = kept
    sock.unlink()
    assert wait_until(lambda: not pid_alive(pid), 10), "the kept browser outlived its socket"


def test_a_killed_kept_browser_is_replaced_without_a_word(app_server, home, tmp_path):
    marker = uuid.uuid4().hex
    assert_a_widget_png(shoot(app_server.url, tmp_path / "one.png", marker), tmp_path / "one.png")
    (pid,) = kept_pids(home)
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: not pid_alive(pid), 10)
    assert expected_socket(home).exists()  # stale: nobody listens on it any more

    again = shoot(app_server.url, tmp_path / "two.png", uuid.uuid4().hex)
    assert_a_widget_png(again, tmp_path / "two.png")
    assert again.stderr.strip() in ("", "running Chromium without its sandbox: appsdk runs as root here"), again.stderr
    replacement = kept_pids(home)
    assert len(replacement) == 1 and pid not in replacement, replacement
    # What the killed one had started (its driver, its Chromium) does not stay behind either.
    assert wait_until(lambda: not (marked_pids(f"APPSDK_TEST_MARK={marker}")), 15), [
        command_of(p) for p in marked_pids(f"APPSDK_TEST_MARK={marker}")
    ]


def test_two_commands_at_once_both_get_their_shot_from_one_kept_browser(app_server, home, tmp_path):
    env = {**os.environ, "APPSDK_TEST_MARK": uuid.uuid4().hex}
    argv = [sys.executable, "-m", "appsdk_cli", "preview", "list-books", "--url", app_server.url, "--screenshot"]
    processes = [
        subprocess.Popen(
            [*argv, str(tmp_path / f"{n}.png")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    for n, process in enumerate(processes):
        stdout, stderr = process.communicate(timeout=90)
        assert_a_widget_png(
            subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), tmp_path / f"{n}.png"
        )
    assert len(kept_pids(home)) == 1


def _listening_socket(path: Path) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    listener.setblocking(False)
    return listener


@pytest.mark.parametrize("how", ["open to others", "someone else's"])
def test_a_socket_not_safe_to_use_is_refused_and_the_shot_taken_alone(app_server, home, tmp_path, how):
    if how == "someone else's" and os.geteuid() != 0:
        pytest.skip("only root can give a socket to another user")
    sock = expected_socket(home)
    listener = _listening_socket(sock)
    try:
        if how == "open to others":
            sock.chmod(0o666)
        else:
            sock.chmod(0o600)
            os.chown(sock, 65534, 65534)
        marker = uuid.uuid4().hex
        result = shoot(app_server.url, tmp_path / "alone.png", marker)
        assert_a_widget_png(result, tmp_path / "alone.png")
        said = [line for line in result.stderr.splitlines() if "kept browser" in line]
        assert len(said) == 1 and "not using the kept browser" in said[0], result.stderr
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected to it
        assert not kept_pids(home)
        assert wait_until(lambda: not marked_pids(f"APPSDK_TEST_MARK={marker}"), 10)
    finally:
        listener.close()
        sock.unlink(missing_ok=True)


def test_the_kept_browser_exits_after_its_idle_time_leaving_no_chromium(app_server, home, tmp_path, monkeypatch):
    monkeypatch.setenv("APPSDK_KEPT_BROWSER_IDLE", "1")
    marker = uuid.uuid4().hex
    assert_a_widget_png(shoot(app_server.url, tmp_path / "one.png", marker), tmp_path / "one.png")
    needle = f"APPSDK_TEST_MARK={marker}"
    still = {pid: command_of(pid) for pid in marked_pids(needle)}
    assert any(KEPT in command for command in still.values()), still
    assert any(command.startswith(str(CHROMIUM)) for command in still.values()), still
    assert wait_until(lambda: not marked_pids(needle), 20), [command_of(p) for p in marked_pids(needle)]
    assert not expected_socket(home).exists()


def test_a_kept_browser_of_another_version_answers_no_shot(app_server, home, tmp_path):
    """The socket's name carries the version, and so does every request: a process left by another appsdk
    refuses it rather than shoot with code the command does not match."""
    assert_a_widget_png(shoot(app_server.url, tmp_path / "one.png", uuid.uuid4().hex), tmp_path / "one.png")
    assert __version__ in expected_socket(home).name
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(str(expected_socket(home)))
        request = {"version": "0.0.0-other", "url": app_server.url, "type": "png", "timeout": 5}
        connection.sendall(json.dumps(request).encode() + b"\n")
        answer = json.loads(connection.makefile("rb").readline())
    assert answer["ok"] is False and answer["kind"] == "version", answer


def test_no_keep_browser_leaves_nothing_running(app_server, home, tmp_path):
    marker = uuid.uuid4().hex
    env = {**os.environ, "APPSDK_TEST_MARK": marker}
    args = ["preview", "list-books", "--url", app_server.url, "--screenshot", str(tmp_path / "a.png")]
    result = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", *args, "--no-keep-browser"], env=env, capture_output=True, text=True
    )
    assert_a_widget_png(result, tmp_path / "a.png")
    assert not kept_pids(home) and not list(home.glob("browser-*.sock"))
    assert wait_until(lambda: not marked_pids(f"APPSDK_TEST_MARK={marker}"), 5)
    keep_off = shoot(app_server.url, tmp_path / "b.png", marker, APPSDK_KEEP_BROWSER="0")
    assert_a_widget_png(keep_off, tmp_path / "b.png")
    assert not kept_pids(home)


PEER_OF_ANOTHER_USER = """
import json, socket, sys
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect(sys.argv[1])
request = {"version": sys.argv[2], "url": sys.argv[3], "type": "png", "timeout": 5}
try:
    connection.sendall(json.dumps(request).encode() + b"\\n")
    connection.settimeout(20)
    print(repr(connection.recv(100)))
except (BrokenPipeError, ConnectionResetError):  # closed on us before or while we sent: no answer either
    print(repr(b""))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can connect as another user")
def test_the_kept_browser_answers_no_other_user_even_through_an_opened_socket(app_server, home, tmp_path, monkeypatch):
    """The folder and the socket keep other users out; were both opened, the kept browser still checks its
    peer's uid (SO_PEERCRED) and closes without a word."""
    import shutil
    import tempfile

    # A home the other user can reach (pytest's own folders are root's alone).
    reachable = Path(tempfile.mkdtemp(prefix="appsdk-kept-"))
    reachable.chmod(0o711)
    home = reachable / "home"
    monkeypatch.setenv("APPSDK_HOME", str(home))
    assert_a_widget_png(shoot(app_server.url, tmp_path / "one.png", uuid.uuid4().hex), tmp_path / "one.png")
    sock = expected_socket(home)
    home.chmod(0o711)
    sock.chmod(0o666)
    try:
        stranger = subprocess.run(
            ["/usr/bin/python3", "-c", PEER_OF_ANOTHER_USER, str(sock), __version__, app_server.url],
            user=65534,
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
        )
    finally:
        sock.unlink(missing_ok=True)  # which also ends the kept browser
        shutil.rmtree(reachable, ignore_errors=True)
    assert stranger.returncode == 0, stranger.stderr
    assert stranger.stdout.strip() == "b''", stranger.stdout  # closed, no image


@pytest.mark.parametrize("delay", [0.2, 0.5])
def test_ctrl_c_during_a_kept_shot_is_one_line_and_the_kept_browser_serves_the_next(app_server, home, tmp_path, delay):
    """Ctrl-C as a terminal sends it, to the command's whole group: the kept browser has a session of its
    own, so it is not hit; the command says one line and exits 130 with no image; the next shot is taken
    by the same kept browser."""
    assert_a_widget_png(shoot(app_server.url, tmp_path / "one.png", uuid.uuid4().hex), tmp_path / "one.png")
    kept = kept_pids(home)
    (kept_pid,) = kept
    idle = sockets_held(kept_pid)
    out = tmp_path / "never.png"
    args = ["preview", "list-books", "--url", app_server.url, "--screenshot", str(out)]
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    # `delay` after the command reached the kept browser, not after it was spawned: on a loaded machine
    # a fixed time from the spawn can land while Python is still importing, before there is a shot.
    wait_until(lambda: process.poll() is not None or sockets_held(kept_pid) > idle, timeout=30)
    time.sleep(delay)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    if process.returncode in (0, -signal.SIGINT):
        # The shot was done before the signal landed, or it landed as the interpreter shut down (the OS's
        # SIGINT then, 130 in a shell): the image is whole, and the kept browser still serves the next.
        width, height, _ = decode_png(out.read_bytes())
        assert width == 768 and 200 < height < 640, (width, height)
    else:
        assert process.returncode == 130, (process.returncode, stderr)
        lines = [line for line in stderr.strip().splitlines() if not line.startswith("running Chromium without")]
        assert lines == ["interrupted (Ctrl-C): no screenshot was taken"], stderr
        assert not out.exists()
    assert "Future exception" not in stderr + stdout and "Traceback" not in stderr, stderr
    # The stopped command's shot, if it had begun, is dropped, not waited on until its 30 s timeout.
    started = time.monotonic()
    assert_a_widget_png(shoot(app_server.url, tmp_path / "two.png", uuid.uuid4().hex), tmp_path / "two.png")
    assert time.monotonic() - started < 15, "the next shot waited for the abandoned one"
    assert kept_pids(home) == kept
