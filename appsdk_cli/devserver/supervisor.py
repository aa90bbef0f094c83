"""The supervisor: owns the listening socket, runs the file watcher (watch.py), and forks a fresh worker per change.

Modelled on uvicorn's supervisors (the parent binds, the children serve on the inherited socket), with
one difference that makes reloads fast: the heavy stack (mcp, uvicorn, starlette, pydantic) is
imported once, here, and each worker is an `os.fork()` of this process. The supervisor never imports
the user's code, so every fork imports it fresh.

Nothing but the import stands between a save and the new code answering: the worker reports `ready`
as soon as the app is imported, and what dev says about the new code (tool changes, the contract
report, the start-up panel's suggestions) comes from a describer the worker forks (worker.py), read
here once the new worker already serves; the reload line, and the workbench's push, wait for it.
Once a reload is reported, a spare worker is forked ahead of the next save and imports the app's
libraries (worker.run_spare): the next save is handed to it, so the fork and the third-party imports
are off the path too.

Swap order: fork-new-then-retire-old. The new worker imports the app while the old one keeps serving;
once it is ready the old worker stops accepting (and says so), and only then does the new one start
accepting. Connections that arrive in between wait in the shared socket's backlog, so none is
refused; a single worker accepts at a time, and the retiring one hands its keep-alive connections to
the next (handoff.py), so a request sent after a reload is reported can only reach the new code. The
other order (stop, then fork) would make every request in the import window wait, and a broken save
would leave nothing to answer until the fork had failed.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import selectors
import shlex
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from appsdk_cli.appmeta import TOOL_CRASH, tool_crash
from appsdk_cli.auth.server import AuthConfig, DevAuthServer, json_error, refuse_exposed
from appsdk_cli.devserver import worker as worker_module
from appsdk_cli.devserver.contract_report import ContractReporter
from appsdk_cli.devserver.events import (
    AllowedHostAdded,
    AppBroken,
    AppExited,
    AppRestarted,
    AppsdkReplaced,
    AuthServerStarted,
    ContractReport,
    DevEvent,
    NewCodeServing,
    Observer,
    Reloaded,
    Started,
    Stopped,
    ToolChanges,
    ToolCrashed,
    Transport,
    WaitingForImport,
)
from appsdk_cli.devserver.handoff import HandoffPair
from appsdk_cli.devserver.hosts import parse_allowed_host, security_lists, url_host
from appsdk_cli.devserver.watch import ProjectWatcher
from appsdk_cli.errors import AppsdkError
from appsdk_cli.project import (
    AppTarget,
    DevState,
    app_target,
    lock_dev_project,
    port_holder,
    remove_dev_state,
    write_dev_state,
)
from appsdk_cli.snapshot.loader import IMPORT_FAILED, SERVES_ON_IMPORT_HINT

STOP_GRACE_SECONDS = 5.0
# How long a retired worker may still finish accepted requests once a newer reload needs its place.
RETIRE_GRACE_SECONDS = 1.0
BROKEN_HINT = "fix it and save: appsdk dev keeps watching and reloads on the next good save"
NO_RELOAD_HINT = "fix it and start appsdk dev again (with --no-reload it does not watch for saves)"
# An import still running after this long is said once, with the likeliest cause: the app serves by
# itself on import (uvicorn.run, a stdio loop) in a way the loader's guard on run() cannot see.
IMPORT_SLOW_SECONDS = 5.0
# A worker that dies while serving is started again by the next request; more deaths than this within
# the window look like a crash loop, which waits for a save instead.
RESTARTS_PER_WINDOW = 5
RESTART_WINDOW_SECONDS = 60.0
# How often the loop looks at the app's Python's site-packages (pip install): a stat of a folder or two.
PACKAGES_CHECK_SECONDS = 0.5
# A reload slower than this says where its time went, in one more line (Reloaded.slow).
SLOW_RELOAD_SECONDS = 0.5
# The signals whose handlers run() installs (_install_signals).
_HANDLED_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD})
_LISTENER = "listener"  # the selector's tag for the listening socket, watched while no worker serves

BoundHook = Callable[["Supervisor"], None]


@dataclass(frozen=True)
class DevConfig:
    project: Path
    host: str = "127.0.0.1"
    port: int = 8000
    reload: bool = True
    allowed_hosts: tuple[str, ...] = ()  # as given with --allow-host; checked by parse_allowed_host
    transport: Transport = Transport.STREAMABLE_HTTP
    # How long a replaced worker may finish requests it already accepted (a slow tool call).
    drain_seconds: float = 30.0
    # Run the development authorization server on the app's origin (the app declares [tool.appsdk.auth]).
    auth: AuthConfig | None = None
    # A tunnel will front this server: the only way the authorization server may listen beyond loopback.
    behind_tunnel: bool = False


@dataclass
class _Description:
    """The read end of a worker's describer pipe (worker.py): one `described` line, then end of file."""

    fd: int
    data: bytes = b""


@dataclass
class _Worker:
    pid: int
    channel: worker_module.Channel
    changed_files: tuple[str, ...]
    seen_at: float  # when the change that started it was seen
    description: _Description | None = None  # None once read to its end (or the worker died)
    state: str = "starting"  # (spare ->) starting -> ready -> serving -> retiring; or dead
    ok: bool = False
    tools: dict[str, str] | None = None
    contract: dict[str, Any] | None = None
    suggested: dict[str, Any] | None = None
    waiting_for: int | None = None  # pid of the worker whose "stopped" this one needs before `go`
    exit_code: int | None = None
    forked_at: float = field(default_factory=time.monotonic)
    slow_said: bool = False  # WaitingForImport was reported for it
    restart: bool = False  # started for a request after the serving worker died, not for a save
    timings: dict[str, Any] = field(default_factory=dict)  # the worker's ImportTimings, from `ready`
    ready_at: float | None = None
    serving_at: float | None = None
    announced: bool = False  # its Reloaded (or AppRestarted) was reported, or the Started panel covers it
    libraries: tuple[str, ...] = ()  # a spare's: what it imported ahead of the app

    @property
    def described(self) -> bool:
        return self.description is None


@dataclass
class _Pending:
    """Work handed to the supervisor's loop from signal handlers, the watcher and other threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    changes: set[str] = field(default_factory=set)
    hosts: list[str] = field(default_factory=list)
    stop_requests: int = 0
    public_url: tuple[str | None] | None = None  # set (as a 1-tuple) when the tunnel's URL changed


class Supervisor:
    """Serve one project over HTTP until stop(): bind, fork workers, reload on changes.

    `observer` receives every event (the renderer in the CLI, a list in a test). `on_bound` runs once
    the socket is bound and the first worker serves: the place to attach a tunnel, which can then call
    `add_allowed_host` from any thread.
    """

    def __init__(self, config: DevConfig, observer: Observer, on_bound: BoundHook | None = None) -> None:
        self.config = config
        self.project = config.project.resolve()
        self._observer = observer
        self._on_bound = on_bound
        self._extra_hosts: list[str] = list(config.allowed_hosts)
        security_lists(config.host, tuple(self._extra_hosts))  # bad --allow-host values fail before binding
        if config.auth is not None:
            refuse_exposed(config.host, config.behind_tunnel)
        self._auth: DevAuthServer | None = None
        self._sock: socket.socket | None = None
        self._handoff: HandoffPair | None = None  # opened by run(), before the first fork
        self._workers: dict[int, _Worker] = {}
        self._live: _Worker | None = None
        self._next: _Worker | None = None
        self._reload_queued: tuple[str, ...] | None = None
        self._restarts: deque[float] = deque()  # when each worker that died was started again
        self._listener_watched = False
        self._own_files = _installed_stamp()  # appsdk's own package as this process loaded it
        self._own_files_checked = time.monotonic()
        # While the app is broken: its Python's installed packages when it broke, and as last looked at.
        self._packages: tuple[tuple[str, int], ...] | None = None
        self._packages_seen: tuple[tuple[str, int], ...] | None = None
        self._packages_checked = time.monotonic()
        self._last_tools: dict[str, str] | None = None
        self._libraries: tuple[str, ...] = ()  # what the last good import loaded from outside the project
        self._spare: _Worker | None = None
        self._contract_reporter = ContractReporter(self.project)
        self._pending = _Pending()
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        self._selector = selectors.DefaultSelector()
        self._watcher = ProjectWatcher(self.project, self._on_changes)
        self._started = False
        self._dev_state_written = False
        self._project_lock: int | None = None  # held while we serve: one `appsdk dev` per project
        self._state_extra: dict[str, str] = {}  # more for .appsdk/dev.json: record_extra
        # This run's word in .appsdk/dev.json, repeated by every worker (asgi.DevIdentity) to whoever checks it.
        self._nonce = secrets.token_hex(16)

    # -- public -------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._sock is None:
            return self.config.port
        return self._sock.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://{url_host(self.config.host)}:{self.port}{self.config.transport.path}"

    @property
    def worker_pids(self) -> list[int]:
        return [w.pid for w in self._workers.values() if w.state != "dead"]

    def bind(self) -> None:
        """Open the listening socket; AppsdkError with one line when the port is taken."""
        if self._sock is not None:
            return
        host, port = self.config.host, self.config.port
        try:
            infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as problem:
            raise AppsdkError(f"cannot serve on host {host!r}: {problem.strerror}; try --host 127.0.0.1") from None
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            # Requests that arrive while workers swap wait here; uvicorn uses the same depth.
            sock.listen(2048)
        except OSError as problem:
            sock.close()
            if problem.errno == errno.EADDRINUSE:
                holder = port_holder(host, port)
                by = f" by {holder}" if holder else ""
                raise AppsdkError(
                    f"port {port} is already in use on {host}{by}; stop it, or let appsdk dev pick a free port"
                    " with --port 0"
                ) from None
            if problem.errno in (errno.EACCES, errno.EPERM):
                raise AppsdkError(f"not allowed to listen on port {port}; pick a port above 1023 with --port") from None
            raise AppsdkError(f"cannot listen on {host}:{port}: {problem.strerror}") from None
        sock.set_inheritable(True)
        self._sock = sock

    def claim(self) -> None:
        """Take the project (one `appsdk dev` per project) and its port, so `url` is final; run() does it
        too. AppsdkError with one line when another dev holds the project or the port is taken."""
        if self._project_lock is None:
            self._project_lock = lock_dev_project(self.project)
        try:
            self.bind()
        except BaseException:
            os.close(self._project_lock)
            self._project_lock = None
            raise

    def record_extra(self, key: str, value: str) -> None:
        """One more entry for .appsdk/dev.json's `extra` (the widget's Vite dev server, which the preview
        loads); before run()."""
        self._state_extra[key] = value

    def add_allowed_host(self, host: str) -> None:
        """Admit another Host (a tunnel's hostname) from now on, in this and every later worker. Thread-safe."""
        parse_allowed_host(host)
        with self._pending.lock:
            self._pending.hosts.append(host)
        self._wake()

    @property
    def local_origin(self) -> str:
        return f"http://{url_host(self.config.host)}:{self.port}"

    @property
    def auth_server(self) -> DevAuthServer | None:
        return self._auth

    def record_public_url(self, public_url: str | None) -> None:
        """Tell other commands (through .appsdk/dev.json) where a tunnel exposes this server. Thread-safe.

        With the authorization server, the public origin becomes the issuer and the public /mcp URL the
        token audience, and the app reloads to learn them.
        """
        self._write_dev_state(public_url)
        if self._auth is None:
            return
        with self._pending.lock:
            self._pending.public_url = (public_url,)
        self._wake()

    def stop(self) -> None:
        """Ask run() to stop everything and return. Thread-safe and signal-safe."""
        with contextlib.suppress(RuntimeError), self._pending.lock:
            self._pending.stop_requests += 1
        self._wake()

    def run(self, *, handle_signals: bool | None = None) -> None:
        """Serve until stop() (or SIGINT/SIGTERM when handling signals, the default on the main thread)."""
        if handle_signals is None:
            handle_signals = threading.current_thread() is threading.main_thread()
        self.claim()
        if self.config.auth is not None and self._auth is None:
            self._auth = DevAuthServer(self.config.auth, self.local_origin, self.config.transport.path)
        worker_module.preload()
        self._handoff = self._handoff or HandoffPair.open()
        previous = self._install_signals() if handle_signals else None
        try:
            self._selector.register(self._wake_r, selectors.EVENT_READ, None)
            # Watch before the first worker imports the app: a save made while it starts, or just after
            # the "serving" line, must still reload it (changes seen before then wait in _pending).
            if self.config.reload:
                self._watcher.start()
            self._start_first_worker()
            self._loop()
        finally:
            self._shutdown()
            if previous is not None:
                self._restore_signals(previous)
            # Only now: until the handlers are put back, every signal (a worker's SIGCHLD, a second
            # Ctrl-C) has Python write to this pipe, and a closed one makes that an error on the terminal,
            # or a write into whatever file took its number meanwhile.
            wake, (self._wake_r, self._wake_w) = (self._wake_r, self._wake_w), (-1, -1)
            for fd in wake:
                with contextlib.suppress(OSError):
                    os.close(fd)

    # -- the loop -----------------------------------------------------------------------------

    def _start_first_worker(self) -> None:
        target = app_target(self.project)
        first: _Worker | None = self._fork(target, None, (), time.monotonic())
        # A save while a slow first import hangs starts it over (_step): wait for whichever is newest.
        while not self._stop_requested():
            first = self._next or first
            if first is None or (first.state not in ("starting", "ready") and first.described):
                break
            self._step(timeout=0.5)
        if self._stop_requested() or first is None:
            return
        if first.state == "dead":
            raise AppsdkError(f"the app's process exited with code {first.exit_code} while starting")
        url = self.url
        self._write_dev_state(None)
        self._started = True
        self._emit(
            Started(
                url=url,
                transport=self.config.transport,
                app=target.describe(),
                project=self.project,
                reload=self.config.reload,
                app_ok=first.ok,
                pid=os.getpid(),
                tools=tuple(first.tools or ()),
                call_tool=(first.suggested or {}).get("call"),
                preview_tool=(first.suggested or {}).get("preview"),
                tunnel=self.config.behind_tunnel,
            )
        )
        if self._auth is not None:
            self._emit_auth()
        if self._on_bound is not None:
            self._on_bound(self)

    def _emit_auth(self) -> None:
        assert self._auth is not None
        config = self._auth.config
        self._emit(
            AuthServerStarted(
                issuer=self._auth.issuer,
                resource=self._auth.resource,
                users=config.users,
                scopes=config.scopes,
                auto_user=config.auto_user,
            )
        )

    def _apply_public_url(self, public_url: str | None) -> None:
        if self._auth is None:
            return
        origin = self.local_origin
        if public_url:
            parts = urlsplit(public_url)
            origin = f"{parts.scheme}://{parts.netloc}"
        if origin == self._auth.origin:
            return
        self._auth.set_origin(origin)
        self._write_dev_state(public_url)  # with the new issuer
        self._emit_auth()
        # The app reads its issuer and audience at import: a fresh worker picks up the new ones.
        self._reload(("the new tunnel URL",), time.monotonic())

    def _write_dev_state(self, public_url: str | None) -> None:
        state = DevState(
            url=self.url,
            host=self.config.host,
            port=self.port,
            pid=os.getpid(),
            transport=self.config.transport.value,
            public_url=public_url,
            nonce=self._nonce,
            extra={**self._state_extra, **({"auth_issuer": self._auth.issuer} if self._auth else {})},
        )
        write_dev_state(self.project, state)
        self._dev_state_written = True

    def _loop(self) -> None:
        while not self._stop_requested():
            self._step(timeout=0.5)

    def _step(self, timeout: float) -> None:
        request_waiting = False
        for key, _ in self._selector.select(timeout):
            if key.data is None:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self._wake_r, 4096):
                        pass
            elif key.data == _LISTENER:
                request_waiting = True
            elif isinstance(key.data, tuple):
                self._read_description(key.data[1])
            else:
                self._read_worker(key.data)
        self._reap()
        self._say_if_import_is_slow()
        self._say_if_appsdk_was_replaced()
        self._reload_if_packages_changed()
        # Until the first worker serves, saves wait and then apply to it; but a first import that hangs
        # (the app serves on import) may be fixed by a save, which must then start it over.
        hung = self._next is not None and self._next.slow_said and self._next.state == "starting"
        with self._pending.lock:
            hosts, self._pending.hosts = self._pending.hosts, []
            changes: set[str] = set()
            public_url = None
            if self._started or hung:
                changes, self._pending.changes = self._pending.changes, set()
            if self._started:
                public_url, self._pending.public_url = self._pending.public_url, None
        for host in hosts:
            self._allow_host(host)
        if public_url is not None:
            self._apply_public_url(public_url[0])
        if changes:
            self._reload(tuple(sorted(changes)), time.monotonic())
        elif request_waiting and self._listener_watched:
            self._restart()

    def _say_if_import_is_slow(self) -> None:
        worker = self._next
        if worker is None or worker.state != "starting" or worker.slow_said:
            return
        waited = time.monotonic() - worker.forked_at
        if waited >= IMPORT_SLOW_SECONDS:
            worker.slow_said = True
            try:
                target = app_target(self.project).describe()
            except AppsdkError:
                target = "the app"
            then = "save a fix to start over, Ctrl-C to stop" if self.config.reload else "Ctrl-C to stop"
            self._emit(WaitingForImport(target=target, seconds=waited, hint=SERVES_ON_IMPORT_HINT, then=then))

    def _say_if_appsdk_was_replaced(self) -> None:
        now = time.monotonic()
        if self._own_files is None or now - self._own_files_checked < 2.0:
            return
        self._own_files_checked = now
        if _installed_stamp() != self._own_files:
            self._own_files = None  # said once
            self._emit(AppsdkReplaced(package=Path(worker_module.__file__).resolve().parent.parent))

    def _reload_if_packages_changed(self) -> None:
        """A broken app imports again once packages were installed into its Python (a missing one, most
        often), as a save would do; a working one is left alone until the next save."""
        now = time.monotonic()
        if not (self.config.reload and self._started) or now - self._packages_checked < PACKAGES_CHECK_SECONDS:
            return
        live = self._live
        if live is None or live.state != "serving" or live.ok or self._next is not None:
            self._packages = self._packages_seen = None  # nothing to revive: no look until it breaks
            return
        self._packages_checked = now
        stamp = _site_packages_stamp()
        if self._packages is None:  # the first look since it broke is what an install changes
            self._packages = self._packages_seen = stamp
            return
        if stamp != self._packages_seen:
            self._packages_seen = stamp  # pip may still be writing: act once a look finds nothing new
            return
        if stamp == self._packages:
            return
        self._packages = stamp
        # The spare imported its libraries before the install: a fresh fork imports what is there now.
        spare, self._spare = self._spare, None
        if spare is not None:
            self._kill(spare)
        self._reload(("the installed packages",), now)

    def _restart(self) -> None:
        """A request waits and no worker serves (the last one died): start the app again for it."""
        self._watch_listener(False)
        now = time.monotonic()
        while self._restarts and now - self._restarts[0] > RESTART_WINDOW_SECONDS:
            self._restarts.popleft()
        if len(self._restarts) >= RESTARTS_PER_WINDOW:
            message = (
                f"the app's process died {len(self._restarts) + 1} times within {RESTART_WINDOW_SECONDS:g} s; "
                "not starting it again until you save a file"
            )
            self._emit(AppExited(exit_code=0, message=message))
            self._fork(None, message, (), now)
            return
        self._restarts.append(now)
        try:
            target = app_target(self.project)
        except AppsdkError as problem:
            self._fork(None, problem.message, (), now)
            return
        self._fork(target, None, (), now).restart = True

    def _watch_listener(self, watch: bool) -> None:
        """Whether the loop wakes for a connection waiting on the shared socket (only while none serves)."""
        if watch == self._listener_watched or self._sock is None:
            return
        if watch:
            self._selector.register(self._sock, selectors.EVENT_READ, _LISTENER)
        else:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(self._sock)
        self._listener_watched = watch

    def _stop_requested(self) -> bool:
        return self._pending.stop_requests > 0

    def _reload(self, changed: tuple[str, ...], seen_at: float) -> None:
        if self._next is not None:
            if self._next.state == "starting":
                # It may have read the files before this save: start over.
                self._kill(self._next)
                self._next = None
            else:
                # Mid-handoff: let it finish, then reload again.
                self._reload_queued = tuple(sorted({*(self._reload_queued or ()), *changed}))
                return
        self._make_room()
        try:
            target = app_target(self.project)
        except AppsdkError as problem:
            self._emit(AppBroken(summary=problem.message, traceback="", hint=BROKEN_HINT))
            self._fork(None, problem.message, changed, seen_at)
            return
        self._fork(target, None, changed, seen_at)

    def _make_room(self) -> None:
        """At most two workers alive: the one serving and the one about to be forked.

        A retired worker has stopped accepting and ended its event streams; what it still runs is a
        request or two it had accepted, normally done in milliseconds. Give those RETIRE_GRACE_SECONDS,
        then stop it: a save a second must not pile up workers (each holds a whole app in memory).
        """
        retiring = [w for w in self._workers.values() if w.state == "retiring"]
        if not retiring:
            return
        deadline = time.monotonic() + RETIRE_GRACE_SECONDS
        while time.monotonic() < deadline and any(w.pid in self._workers for w in retiring):
            time.sleep(0.01)
            self._reap()
        for worker in retiring:
            if worker.pid in self._workers:
                self._kill(worker)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(worker.pid, 0)
                worker.exit_code = -signal.SIGKILL
                self._on_exit(worker)

    def _read_worker(self, worker: _Worker) -> None:
        if worker.channel.read_fd < 0:  # reaped earlier in this same select batch
            return
        messages, closed = worker.channel.read_available()
        for message in messages:
            self._on_message(worker, message)
        if closed:
            self._selector.unregister(worker.channel.read_fd)
            os.close(worker.channel.read_fd)
            worker.channel.read_fd = -1
            self._reap()

    def _on_message(self, worker: _Worker, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "ready":
            self._on_ready(worker, message)
        elif kind == "serving":
            self._on_serving(worker)
        elif kind == "stopped":
            self._on_stopped_accepting(worker.pid)
        elif kind == "auth-http":
            self._answer_auth(worker, message)
        elif kind == "tool-crash":
            crash = tool_crash({"isError": True, "_meta": {TOOL_CRASH: message.get("crash")}})
            if crash is not None:
                self._emit(
                    ToolCrashed(tool=crash.tool, summary=crash.summary, frames=crash.frames, rerun_of=crash.rerun_of)
                )

    def _answer_auth(self, worker: _Worker, message: dict[str, Any]) -> None:
        if self._auth is None:
            reply = json_error("appsdk dev runs no authorization server for this app")
        else:
            try:
                reply = self._auth.handle(message)
            except Exception as problem:  # a bug here must not take the whole dev server down
                reply = json_error(f"the development authorization server failed: {type(problem).__name__}")
        self._send(worker, {"type": "auth-http-reply", "id": message.get("id"), **reply})

    def _read_description(self, worker: _Worker) -> None:
        description = worker.description
        if description is None:
            return
        try:
            while chunk := os.read(description.fd, 65536):
                description.data += chunk
        except BlockingIOError:
            return  # more to come
        except OSError:
            pass
        self._close_description(worker)
        line = description.data.strip()
        try:
            message = json.loads(line) if line else {}
        except ValueError:
            message = {}
        if message.get("type") == "described":
            worker.tools = message.get("tools")
            worker.contract = message.get("contract")
            worker.suggested = message.get("suggested")
        if worker.state == "serving" and worker is self._live:
            self._announce(worker)

    def _close_description(self, worker: _Worker) -> None:
        if worker.description is None:
            return
        fd, worker.description = worker.description.fd, None
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(fd)
        with contextlib.suppress(OSError):
            os.close(fd)

    def _on_ready(self, worker: _Worker, message: dict[str, Any]) -> None:
        worker.state = "ready"
        worker.ready_at = time.monotonic()
        worker.ok = bool(message.get("ok"))
        worker.timings = message.get("timings") or {}
        if worker.ok:
            self._libraries = tuple(message.get("libraries") or ())
        if message.get("missing") and not self._started:
            # Nothing to watch for: the command line (or pyproject) names something that isn't there.
            raise AppsdkError(str(message.get("summary")))
        if not worker.ok and not message.get("fallback"):
            summary = str(message.get("summary"))
            hint = BROKEN_HINT if self.config.reload else NO_RELOAD_HINT
            module = message.get("module")
            if module and self.config.reload:
                hint = _install_hint(str(module))
            self._emit(AppBroken(summary=summary, traceback=str(message.get("traceback", "")), hint=hint))
            if not self.config.reload:
                raise AppsdkError(f"{IMPORT_FAILED}: {summary}")
        live = self._live
        if live is not None and live.state == "serving":
            live.state = "retiring"
            worker.waiting_for = live.pid
            self._send(live, {"type": "retire"})
        else:
            self._send(worker, {"type": "go"})

    def _on_stopped_accepting(self, pid: int) -> None:
        waiting = self._next
        if waiting is not None and waiting.waiting_for == pid:
            waiting.waiting_for = None
            self._send(waiting, {"type": "go"})

    def _on_serving(self, worker: _Worker) -> None:
        worker.state = "serving"
        worker.serving_at = time.monotonic()
        if worker is not self._next:
            return
        replaced, self._live, self._next = self._live, worker, None
        if replaced is not None:
            self._announce(replaced)  # replaced before its describer finished: said without that news
        if worker.restart:
            # No save to report on: said as soon as it serves (its description only updates the tool list).
            self._emit(AppRestarted(seconds=worker.serving_at - worker.seen_at, app_ok=worker.ok))
        elif self._started and worker.ok:
            self._emit(NewCodeServing(changed_files=worker.changed_files, seconds=worker.serving_at - worker.seen_at))
        if worker.described:
            self._announce(worker)
        if self._reload_queued is not None:
            queued, self._reload_queued = self._reload_queued, None
            self._reload(queued, time.monotonic())

    def _announce(self, worker: _Worker) -> None:
        """Say that this worker serves the new code, once: with its tool changes and contract news when its
        describer has reported them (it normally has, unless a newer save replaced the worker first)."""
        if worker.announced or worker.serving_at is None:
            return
        worker.announced = True
        tool_changes: ToolChanges | None = None
        if worker.ok and worker.tools is not None:
            if self._last_tools is not None and worker.tools != self._last_tools:
                tool_changes = ToolChanges.between(self._last_tools, worker.tools)
            self._last_tools = worker.tools
        contract_report: ContractReport | None = None
        if worker.ok and worker.contract is not None:
            contract_report = self._contract_reporter.after_load(worker.contract)
        seconds = worker.serving_at - worker.seen_at
        if self._started and not worker.restart:
            self._emit(
                Reloaded(
                    changed_files=worker.changed_files,
                    seconds=seconds,
                    app_ok=worker.ok,
                    tools=tool_changes,
                    contract=contract_report,
                    slow=_slow_parts(worker) if seconds >= SLOW_RELOAD_SECONDS else (),
                    tool_names=(tuple(worker.tools) if worker.tools is not None else None) if worker.ok else (),
                )
            )
        if worker is self._live:
            self._fork_spare()

    def _on_exit(self, worker: _Worker) -> None:
        was, worker.state = worker.state, "dead"
        self._close_description(worker)
        if was == "serving" and not self._stop_requested():
            self._announce(worker)
        if worker.channel.read_fd >= 0:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(worker.channel.read_fd)
            os.close(worker.channel.read_fd)
            worker.channel.read_fd = -1
        with contextlib.suppress(OSError):
            os.close(worker.channel.write_fd)
        del self._workers[worker.pid]
        if worker is self._spare:
            self._spare = None
        if self._stop_requested() or was == "spare":
            return
        # A worker that died while retiring counts as having stopped accepting.
        self._on_stopped_accepting(worker.pid)
        if worker is self._next:
            self._next = None
            message = f"the app's process exited with code {worker.exit_code} while importing; fix it and save"
            self._emit(AppExited(exit_code=worker.exit_code or 0, message=message))
            if self._started:
                self._next = self._fork(None, message, worker.changed_files, worker.seen_at)
        elif worker is self._live and was == "serving":
            self._live = None
            if self._next is not None:
                return  # a reload is under way: its worker serves next
            message = f"the app's process {_ended(worker.exit_code)}; the next request starts it again"
            self._emit(AppExited(exit_code=worker.exit_code or 0, message=message))
            self._watch_listener(True)

    # -- workers ------------------------------------------------------------------------------

    def _fork(
        self, target: AppTarget | None, fallback: str | None, changed: tuple[str, ...], seen_at: float
    ) -> _Worker:
        self._watch_listener(False)  # the new worker answers whatever waits
        spec = self._spec(target, fallback)
        spare, self._spare = self._spare, None
        if spare is not None:
            if fallback is None and spare.state == "spare" and not self._shadowed(spare.libraries):
                spare.changed_files, spare.seen_at, spare.state = changed, seen_at, "starting"
                spare.forked_at = time.monotonic()  # for the import's clock: it starts now
                self._send(spare, {"type": "load", "spec": worker_module.spec_message(spec)})
                self._next = spare
                return spare
            self._kill(spare)  # reaped by _reap, silently
        worker = self._fork_process(lambda channel, described: worker_module.run(spec, self._sock, channel, described))
        worker.changed_files, worker.seen_at = changed, seen_at
        self._next = worker
        return worker

    def _fork_spare(self) -> None:
        """A worker for the next save, forked now: it imports the app's libraries while nothing waits."""
        if self._spare is not None or self._next is not None or not self.config.reload or self._stop_requested():
            return
        libraries, parent = self._libraries, os.getpid()
        environment = self._app_environment()
        with worker_module.spare_named() as name:
            spare = self._fork_process(
                lambda channel, described: worker_module.run_spare(
                    parent, libraries, environment, self._sock, channel, described, name
                )
            )
        spare.state, spare.libraries = "spare", libraries
        self._spare = spare

    def _shadowed(self, libraries: tuple[str, ...]) -> bool:
        """Whether the project now has a file by the name of a library the spare imported (the app's
        import would find that file first)."""
        tops = {name.partition(".")[0] for name in libraries}
        return any((self.project / f"{top}.py").exists() or (self.project / top).is_dir() for top in tops)

    def _fork_process(self, body: Callable[[worker_module.Channel, int], Any]) -> _Worker:
        assert self._sock is not None
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        described_r, described_w = os.pipe()
        # Unflushed output would be written twice: once by us, once by the fork.
        sys.stdout.flush()
        sys.stderr.flush()
        # Held back across the fork: the child must not run our handlers (they write to the wakeup pipe it
        # is about to close, and would swallow the SIGTERM that stops a spare just forked) before it has
        # put its own in place. What arrived meanwhile is then delivered to those.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HANDLED_SIGNALS)
        try:
            pid = os.fork()
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            raise
        if pid == 0:
            # Only what the worker uses stays open. A pipe another thread of ours had just opened (the
            # widget types' child's stdout, say) would otherwise be held by a spare that lives until the
            # next save, and whoever reads that pipe to its end would wait as long.
            keep = {0, 1, 2, self._sock.fileno(), to_worker_r, from_worker_w, described_w}
            if self._handoff is not None:
                keep |= {self._handoff.send_fd, self._handoff.receive_fd}
            _close_all_but(keep)
            worker_module.leave_signals_to_the_supervisor()
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            body(worker_module.Channel(to_worker_r, from_worker_w), described_w)
            os._exit(1)  # the bodies never return
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        os.close(to_worker_r)
        os.close(from_worker_w)
        os.close(described_w)
        os.set_blocking(from_worker_r, False)
        os.set_blocking(described_r, False)
        worker = _Worker(pid, worker_module.Channel(from_worker_r, to_worker_w), (), time.monotonic())
        worker.description = _Description(described_r)
        self._workers[pid] = worker
        self._selector.register(from_worker_r, selectors.EVENT_READ, worker)
        self._selector.register(described_r, selectors.EVENT_READ, ("described", worker))
        return worker

    def _app_environment(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._auth.app_environment(self.local_origin).items()) if self._auth else ()

    def _spec(self, target: AppTarget | None, fallback: str | None) -> worker_module.WorkerSpec:
        hosts, origins = security_lists(self.config.host, tuple(self._extra_hosts))
        return worker_module.WorkerSpec(
            project=self.project,
            module=target.module if target else "",
            attribute=target.attribute if target else "",
            target=target.describe() if target else "",
            transport=self.config.transport,
            bind_host=self.config.host,
            allowed_hosts=hosts,
            allowed_origins=origins,
            parent_pid=os.getpid(),
            fallback_message=fallback,
            # An SSE stream never finishes on its own and its session dies with the worker anyway.
            drain_seconds=1.0 if self.config.transport is Transport.SSE else self.config.drain_seconds,
            auth_server=self._auth is not None,
            environment=self._app_environment(),
            handoff=self._handoff,
            dev_nonce=self._nonce,
        )

    def _send(self, worker: _Worker, message: dict[str, Any]) -> None:
        # A worker that has just died cannot hear us; its exit is handled by _reap.
        with contextlib.suppress(BrokenPipeError, OSError):
            worker.channel.send(message)

    def _allow_host(self, host: str) -> None:
        if host in self._extra_hosts:
            return
        self._extra_hosts.append(host)
        rule = parse_allowed_host(host)
        for worker in self._workers.values():
            self._send(worker, {"type": "allow-host", "hosts": list(rule.hosts), "origins": list(rule.origins)})
        self._emit(AllowedHostAdded(host))

    def _kill(self, worker: _Worker) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.pid, signal.SIGKILL)

    def _reap(self) -> None:
        for worker in list(self._workers.values()):
            try:
                pid, status = os.waitpid(worker.pid, os.WNOHANG)
            except ChildProcessError:
                pid, status = worker.pid, 0
            if pid == 0:
                continue
            worker.exit_code = os.waitstatus_to_exitcode(status)
            self._on_exit(worker)

    def _shutdown(self) -> None:
        self._watcher.stop()
        for worker in self._workers.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        while self._workers and time.monotonic() < deadline:
            forced = self._pending.stop_requests > 1  # a second Ctrl-C: do not wait
            for worker in list(self._workers.values()):
                if forced:
                    self._kill(worker)
                with contextlib.suppress(ChildProcessError):
                    pid, _ = os.waitpid(worker.pid, os.WNOHANG)
                    if pid == 0:
                        continue
                self._forget(worker)
            time.sleep(0.02)
        for worker in list(self._workers.values()):
            self._kill(worker)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(worker.pid, 0)
            self._forget(worker)
        if self._auth is not None:
            self._auth.close()
        if self._dev_state_written:
            remove_dev_state(self.project, pid=os.getpid())
        if self._project_lock is not None:
            with contextlib.suppress(OSError):
                os.close(self._project_lock)
            self._project_lock = None
        if self._sock is not None:
            self._sock.close()
        if self._handoff is not None:
            self._handoff.close()
        self._selector.close()
        if self._started:
            self._emit(Stopped())

    def _forget(self, worker: _Worker) -> None:
        self._close_description(worker)
        for fd in (worker.channel.read_fd, worker.channel.write_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._workers.pop(worker.pid, None)

    # -- changes and signals -------------------------------------------------------------------

    def _on_changes(self, names: set[str]) -> None:
        """The watcher's thread hands over a burst of saves; the loop reloads."""
        with self._pending.lock:
            self._pending.changes |= names
        self._wake()

    def _wake(self) -> None:
        if self._wake_w < 0:  # stopped: the number may be another file's by now
            return
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"\0")

    def _install_signals(self) -> dict[int, Any]:
        def on_stop(signum: int, frame: object) -> None:
            self._pending.stop_requests += 1

        def on_child(signum: int, frame: object) -> None:
            pass  # the wakeup fd does the work: the loop reaps

        previous = {
            signal.SIGINT: signal.signal(signal.SIGINT, on_stop),
            signal.SIGTERM: signal.signal(signal.SIGTERM, on_stop),
            # The terminal closing stops the server as Ctrl-C would, with the same cleanup.
            signal.SIGHUP: signal.signal(signal.SIGHUP, on_stop),
            signal.SIGCHLD: signal.signal(signal.SIGCHLD, on_child),
        }
        previous[-1] = signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        return previous

    def _restore_signals(self, previous: dict[int, Any]) -> None:
        signal.set_wakeup_fd(previous.pop(-1))
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    def _emit(self, event: DevEvent) -> None:
        self._observer(event)


def _slow_parts(worker: _Worker) -> tuple[tuple[str, float], ...]:
    """Where a slow reload's time went, in the order it was spent: the parts a user can act on."""
    timings = worker.timings
    parts: list[tuple[str, float]] = []
    waited = worker.forked_at - worker.seen_at
    if waited >= 0.01:
        parts.append(("waiting for the worker before the last to finish", waited))
    imported = float(timings.get("import", 0.0))
    modules = int(timings.get("modules", 0))
    parts.append((f"importing the app's {modules} modules" if modules > 1 else "importing the app", imported))
    tools, registering = int(timings.get("tools", 0)), float(timings.get("register", 0.0))
    if registering >= 0.05:
        parts.append((f"of which registering {tools} tool{'s' if tools != 1 else ''} in mcp", registering))
    if worker.ready_at is not None:
        rest = worker.ready_at - worker.forked_at - imported
        if rest >= 0.01:
            parts.append(("starting the worker and building the app", rest))
        if worker.serving_at is not None and worker.serving_at - worker.ready_at >= 0.01:
            parts.append(("swapping with the old worker and starting to serve", worker.serving_at - worker.ready_at))
    return tuple(parts)


def _ended(exit_code: int | None) -> str:
    """How a worker ended, in words: "was killed by SIGKILL", "exited with code 3"."""
    if exit_code is not None and exit_code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-exit_code).name}"
    return f"exited with code {exit_code}"


def _install_hint(module: str) -> str:
    """What to do about an app that imports a module not installed: install it into the app's Python,
    named by its path (a pip on PATH may belong to another), and dev imports the app again by itself."""
    from appsdk_cli.invocation import shell_path

    top = module.partition(".")[0]
    python = shell_path(Path(sys.executable))
    return (
        f"install the package that provides {top!r} into the Python that runs the app: "
        f"{python} -m pip install {shlex.quote(top)}; appsdk dev imports the app again once it is installed "
        "(or fix the import and save)"
    )


def _site_packages_stamp() -> tuple[tuple[str, int], ...]:
    """The modification time of each of this Python's site-packages folders: installing or removing a
    package adds or removes an entry there (its .dist-info at least), which changes the folder's."""
    import site

    folders = list(getattr(site, "getsitepackages", list)())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    stamp: list[tuple[str, int]] = []
    for folder in folders:
        with contextlib.suppress(OSError):
            stamp.append((folder, os.stat(folder).st_mtime_ns))
    return tuple(stamp)


def _installed_stamp() -> tuple[int, int] | None:
    """Which appsdk_cli/__init__.py this process was loaded from, as (inode, mtime): a reinstall replaces it."""
    try:
        stat = (Path(worker_module.__file__).resolve().parent.parent / "__init__.py").stat()
    except OSError:
        return (0, 0)
    return (stat.st_ino, stat.st_mtime_ns)


def _close_all_but(keep: set[int]) -> None:
    start = 0
    for fd in sorted(keep):
        # Never an empty range: os.closerange(n, n) can close every descriptor from n up (close_range).
        if start < fd:
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, max(start + 1, os.sysconf("SC_OPEN_MAX")))
