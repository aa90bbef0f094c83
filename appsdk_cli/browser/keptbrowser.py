"""A headless Chromium kept for a short while between `appsdk preview --screenshot` commands.

Most of a screenshot command's time is not the browser: it is starting Playwright's driver (a Node
process) and importing Playwright, in a fresh process every time. So the first `--screenshot` starts a
small process of its own (detached: its own session, no terminal, cwd /) that holds Playwright and one
Chromium, and later commands send it what to shoot and get the image's bytes back. It exits after
APPSDK_KEPT_BROWSER_IDLE seconds (60 by default) without a shot, or as soon as its socket file is gone.

What keeps it this user's alone: it listens on a Unix socket in the private APPSDK_HOME (the folder 0700,
the socket 0600), it answers only peers of its own uid (SO_PEERCRED), and a client connects only to a
socket that is a socket, owned by it and 0600, whose server runs as its own uid. Never a DevTools TCP
port, which any local process could drive. It only loads the loopback URL of the host page the command
serves, and never writes the user's files: the command writes the image itself.

The socket's name carries appsdk's version (and its own code's change times), the Chromium and the
sandbox choice, so an upgraded appsdk (or another browser) never talks to a process started by another:
that one idles out on its own. Every request carries the version too, and a mismatch gets no shot.

Protocol: one connection per shot. The client sends one JSON line {version, url, viewport, type, quality,
timeout}; the server answers one JSON line, {ok: true, problems, length} followed by `length` bytes of
image, or {ok: false, kind, message, detail}.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appsdk_cli import __version__
from appsdk_cli.browser.capture import (
    VIEWPORT,
    Screenshot,
    ShotTarget,
    screenshot_from,
    write_shot,
)
from appsdk_cli.browser.chromium import ChromiumSandbox, cache_the_drivers_compiled_code
from appsdk_cli.browser.kept import KeptBrowser
from appsdk_cli.browser.screenshot import ComingPage
from appsdk_cli.errors import AppsdkError
from appsdk_cli.safewrite import open_in_place

KEEP_ENV = "APPSDK_KEEP_BROWSER"  # 0, no, false or off: every screenshot starts and stops its own browser
IDLE_ENV = "APPSDK_KEPT_BROWSER_IDLE"
DEFAULT_IDLE_SECONDS = 60.0
# What sun_path holds on Linux, less the terminating NUL.
_SOCKET_PATH_LIMIT = 107
_START_TIMEOUT = 20.0
_MAX_REQUEST = 64 * 1024
_PEERCRED = getattr(socket, "SO_PEERCRED", None)
# The modules the kept process runs (socket_path).
_KEPT_PROCESS_CODE = ("keptbrowser.py", "kept.py", "capture.py", "chromium.py", "screenshot.py")


class KeptBrowserUnavailable(Exception):
    """No kept browser can serve this shot: the command takes it in-process instead. `refused` says the
    socket found was not safe to use (the user is told); otherwise it is silent (say, a path too long)."""

    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


class KeptBrowserGone(Exception):
    """The kept process closed the connection without an answer (it was killed, or idled out just then)."""


def keeping_wanted(environ: dict[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    return environ.get(KEEP_ENV, "1").strip().lower() not in ("0", "no", "false", "off")


def idle_seconds(environ: dict[str, str] | None = None) -> float:
    environ = os.environ if environ is None else environ
    with contextlib.suppress(ValueError):
        return max(0.1, float(environ.get(IDLE_ENV, DEFAULT_IDLE_SECONDS)))
    return DEFAULT_IDLE_SECONDS


def socket_path(home: Path, chromium: str, sandbox_enabled: bool) -> Path:
    """Where the kept browser for this appsdk version, this Chromium and this sandbox choice listens. The
    code the kept process runs is in the name too (its files' change times), so an edited checkout, whose
    version stays the same, does not reach a process still running the code before the edit."""
    code = "\0".join(str(_changed_at(Path(__file__).with_name(name))) for name in _KEPT_PROCESS_CODE)
    which = hashlib.sha256(f"{chromium}\0{sandbox_enabled}\0{code}".encode()).hexdigest()[:10]
    return home / f"browser-{__version__}-{which}.sock"


def _changed_at(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


# --- the client: the `--screenshot` command ----------------------------------------------------------


@dataclass(frozen=True)
class KeptShot:
    data: bytes
    problems: tuple[str, ...]


def check_socket_is_ours(path: Path) -> None:
    """A socket, this user's, 0600: else KeptBrowserUnavailable(refused=True). FileNotFoundError if absent."""
    found = path.lstat()
    if not stat.S_ISSOCK(found.st_mode):
        raise KeptBrowserUnavailable(f"{path} is not a socket", refused=True)
    if found.st_uid != os.geteuid():
        raise KeptBrowserUnavailable(f"{path} belongs to uid {found.st_uid}, not to this user", refused=True)
    if stat.S_IMODE(found.st_mode) & 0o077:
        mode = oct(stat.S_IMODE(found.st_mode))
        raise KeptBrowserUnavailable(f"{path} is open to other users (mode {mode})", refused=True)


def _peer_uid(connection: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a Unix socket."""
    assert _PEERCRED is not None
    pid, uid, _gid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, _PEERCRED, struct.calcsize("3i")))
    return pid, uid


def _connect(path: Path) -> socket.socket | None:
    """A connection to a live kept browser at `path` that is ours; None when there is none (no file, or
    nobody listening: a stale socket). KeptBrowserUnavailable(refused=True) for a socket not safe to use."""
    try:
        check_socket_is_ours(path)
    except FileNotFoundError:
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        connection.close()
        return None
    except OSError:
        connection.close()
        raise
    _pid, uid = _peer_uid(connection)
    if uid != os.geteuid():
        connection.close()
        raise KeptBrowserUnavailable(f"the process listening on {path} runs as uid {uid}", refused=True)
    return connection


class KeptBrowserClient:
    """Finds the kept browser for (chromium, sandbox), starting one when there is none or it is stale."""

    def __init__(self, chromium: str, sandbox_enabled: bool, sandbox_reason: str = "") -> None:
        from appsdk_cli.home import home_location, private_home

        if _PEERCRED is None or not hasattr(socket, "AF_UNIX"):
            raise KeptBrowserUnavailable("this system cannot check who is at the other end of a socket")
        home = home_location()
        try:
            private_home(home)
        except OSError as problem:
            raise KeptBrowserUnavailable(f"no private home for the socket: {problem}") from None
        self.chromium = chromium
        self.sandbox_enabled = sandbox_enabled
        self.sandbox_reason = sandbox_reason
        self.home = home
        self.path = socket_path(home, chromium, sandbox_enabled)
        if len(os.fsencode(self.path)) > _SOCKET_PATH_LIMIT:
            raise KeptBrowserUnavailable(f"{self.path} is too long for a Unix socket")
        self._spawned: subprocess.Popen[bytes] | None = None

    def ensure(self) -> None:
        """A kept browser is listening (one is started if needed; it launches Chromium at once, so this may
        be called before the page to shoot is ready)."""
        connection = self._connection()
        connection.close()

    def _connection(self) -> socket.socket:
        import fcntl

        connection = _connect(self.path)
        if connection is not None:
            return connection
        # One command starts it; another arriving meanwhile waits for that one instead of starting its own.
        lock_path = self.home / "browser.lock"
        descriptor = open_in_place(lock_path, os.O_RDWR | os.O_CREAT, root=self.home, mode=0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            connection = _connect(self.path)
            if connection is not None:
                return connection
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # stale: its process is gone (we checked above that it is ours)
            return self._start()
        finally:
            os.close(descriptor)  # releases the lock

    def _start(self) -> socket.socket:
        cache_the_drivers_compiled_code()
        argv = [
            sys.executable,
            "-m",
            "appsdk_cli.browser.keptbrowser",
            str(self.path),
            self.chromium,
            "1" if self.sandbox_enabled else "0",
            self.sandbox_reason,
            str(idle_seconds()),
        ]
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,  # no terminal: a Ctrl-C in the command's terminal is not its business
            close_fds=True,
        )
        self._spawned = process
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise KeptBrowserUnavailable(f"the kept browser exited at start ({process.returncode})")
            connection = _connect(self.path)
            if connection is not None:
                return connection
            time.sleep(0.01)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise KeptBrowserUnavailable("the kept browser did not start in time")

    def shoot(self, url: str, *, kind: str, quality: int | None, viewport: dict[str, int], timeout: float) -> KeptShot:
        """The widget's frame at `url`, as `kind` bytes. One retry on a fresh process if the kept one went
        away without answering (killed, or idled out just as this connected)."""
        request = {
            "version": __version__,
            "url": url,
            "viewport": viewport,
            "type": kind,
            "quality": quality,
            "timeout": timeout,
        }
        for attempt in (1, 2):
            connection = self._connection()
            try:
                return _exchange(connection, request, self.chromium, timeout)
            except KeptBrowserGone:
                if attempt == 2:
                    raise AppsdkError("the kept browser went away twice while taking the screenshot") from None
            finally:
                connection.close()
        raise AssertionError("unreachable")


def shoot_kept(
    page_url: str | ComingPage, out: Path, *, chromium: str, sandbox: ChromiumSandbox, timeout: float
) -> Screenshot:
    """As take_screenshot, by the kept browser: it is found or started first, while `page_url` may still be
    coming (the tool called, the host started), then it shoots and this process writes `out`.
    KeptBrowserUnavailable when no kept browser can be had (the caller then shoots in-process)."""
    target = ShotTarget.of(out)
    client = KeptBrowserClient(chromium, sandbox.enabled, sandbox.reason)
    try:
        client.ensure()
    except OSError as problem:
        # Its home or socket cannot be used as it stands (a planted link, a folder not ours): no kept
        # browser, said, and the shot is taken without one.
        raise KeptBrowserUnavailable(f"the kept browser cannot start here: {problem}", refused=True) from None
    url = page_url.wait() if isinstance(page_url, ComingPage) else page_url
    shot = client.shoot(url, kind=target.kind, quality=target.quality, viewport=VIEWPORT, timeout=timeout)
    write_shot(target.out, shot.data)
    return screenshot_from(target.out, target.kind, chromium, shot.data, list(shot.problems))


def _exchange(connection: socket.socket, request: dict[str, Any], chromium: str, timeout: float) -> KeptShot:
    # Its own shot's timeouts are the kept browser's to enforce; this only bounds a process that hangs,
    # with room for another command's shot ahead of this one.
    connection.settimeout(2 * timeout + 30)
    try:
        connection.sendall(json.dumps(request).encode() + b"\n")
        reader = connection.makefile("rb")
        header_line = reader.readline(_MAX_REQUEST)
        if not header_line:
            raise KeptBrowserGone
        header = json.loads(header_line)
        if not header.get("ok"):
            kind = header.get("kind")
            if kind == "timeout":
                raise AppsdkError(f"the widget did not finish rendering within {timeout:g} s")
            if kind == "browser":
                raise AppsdkError(f"Chromium ({chromium}) failed: {header.get('message')}", detail=header.get("detail"))
            raise AppsdkError(f"the kept browser failed: {header.get('message')}", detail=header.get("detail"))
        data = reader.read(int(header["length"]))
        if len(data) != int(header["length"]):
            raise KeptBrowserGone
        return KeptShot(data, tuple(str(p) for p in header.get("problems") or ()))
    except (ConnectionResetError, BrokenPipeError):
        raise KeptBrowserGone from None
    except TimeoutError:
        raise AppsdkError(f"the kept browser did not answer within {2 * timeout + 30:g} s") from None


# --- the kept process --------------------------------------------------------------------------------


class _Keeper:
    """The process's state: the browser, how many shots are in flight, when the last one ended."""

    def __init__(self, path: Path, chromium: str, sandbox_enabled: bool, sandbox_reason: str, idle: float) -> None:
        self.path = path
        self.idle = idle
        self.browser = KeptBrowser(chromium, ChromiumSandbox(sandbox_enabled, sandbox_reason))
        self._lock = threading.Lock()
        self._busy = 0
        self._last = time.monotonic()

    def idle_over(self) -> bool:
        with self._lock:
            return self._busy == 0 and time.monotonic() - self._last > self.idle

    def handle(self, connection: socket.socket) -> None:
        with connection:
            _pid, uid = _peer_uid(connection)
            if uid != os.geteuid():
                return  # not this user: no answer at all
            with self._lock:
                self._busy += 1
            try:
                connection.settimeout(30)
                reader = connection.makefile("rb")
                request = json.loads(reader.readline(_MAX_REQUEST) or b"{}")
                connection.settimeout(None)
                connection.sendall(self._answer(request, connection))
            except (OSError, ValueError):
                pass  # the command went away (Ctrl-C) or sent nonsense: nothing to answer
            finally:
                with self._lock:
                    self._busy -= 1
                    self._last = time.monotonic()

    def _answer(self, request: dict[str, Any], connection: socket.socket) -> bytes:
        if request.get("version") != __version__:
            return _header(ok=False, kind="version", message=f"this kept browser is appsdk {__version__}")
        url = str(request.get("url", ""))
        if not url.startswith(("http://127.0.0.1:", "http://localhost:", "http://[::1]:")):
            return _header(ok=False, kind="refused", message="only the loopback host page is shot")
        options: dict[str, object] = {"type": "jpeg" if request.get("type") == "jpeg" else "png"}
        if options["type"] == "jpeg" and request.get("quality"):
            options["quality"] = int(request["quality"])
        timeout = float(request.get("timeout") or 30.0)
        viewport = request.get("viewport") or None
        try:
            with _watching_for_the_client_gone(connection) as abandoned:
                data, problems = self.browser.capture(
                    url, options, timeout=timeout, viewport=viewport, abandoned=abandoned
                )
        except Exception as problem:
            return _failure(problem)
        found = [str(p) for p in problems] if isinstance(problems, list) else []
        return _header(ok=True, problems=found, length=len(data)) + data


@contextlib.contextmanager
def _watching_for_the_client_gone(connection: socket.socket) -> Iterator[threading.Event]:
    """An event set once the client closes its end (it sends nothing after its request, so anything
    readable is the end), watched on a thread of its own while the shot is taken."""
    import select

    abandoned = threading.Event()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            readable, _, _ = select.select([connection], [], [], 0.2)
            if readable:
                with contextlib.suppress(OSError):
                    if connection.recv(1, socket.MSG_PEEK) == b"":
                        abandoned.set()
                        return
                done.wait(0.2)

    watcher = threading.Thread(target=watch, name="appsdk-kept-client", daemon=True)
    watcher.start()
    try:
        yield abandoned
    finally:
        done.set()
        watcher.join(timeout=1)


def _header(**fields: Any) -> bytes:
    return json.dumps(fields).encode() + b"\n"


def _failure(problem: Exception) -> bytes:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if isinstance(problem, PlaywrightTimeout):
        return _header(ok=False, kind="timeout", message=str(problem))
    first = (str(problem).strip().splitlines() or ["unknown error"])[0]
    kind = "browser" if isinstance(problem, PlaywrightError) else "failed"
    return _header(ok=False, kind=kind, message=first, detail=str(problem))


def _still_ours(path: Path, identity: tuple[int, int]) -> bool:
    try:
        found = path.lstat()
    except OSError:
        return False
    return (found.st_dev, found.st_ino) == identity


def serve(path: Path, chromium: str, sandbox_enabled: bool, sandbox_reason: str, idle: float) -> None:
    """Listen on `path` until idle for `idle` seconds or until the socket file is removed or replaced."""
    keeper = _Keeper(path, chromium, sandbox_enabled, sandbox_reason, idle)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)  # 0600 from the moment it exists
    try:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        listener.bind(str(path))
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    found = path.lstat()
    identity = (found.st_dev, found.st_ino)
    listener.listen(16)
    keeper.browser.start()  # Chromium launches now, while the first command still calls its tool
    listener.settimeout(0.25)
    try:
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                if not _still_ours(path, identity) or keeper.idle_over():
                    break
                continue
            connection.settimeout(None)
            threading.Thread(target=keeper.handle, args=(connection,), daemon=True).start()
    finally:
        # The file goes first, so no new command connects to a process on its way out.
        if _still_ours(path, identity):
            with contextlib.suppress(OSError):
                path.unlink()
        listener.close()
        keeper.browser.close()


def main(argv: list[str]) -> None:
    path, chromium, sandbox, reason, idle = argv
    import signal

    # Detached, but a SIGTERM (a logout, `kill`) still closes Chromium and the driver on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    serve(Path(path), chromium, sandbox == "1", reason, float(idle))


if __name__ == "__main__":
    main(sys.argv[1:])
