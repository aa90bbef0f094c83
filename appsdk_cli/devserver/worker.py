"""One worker: a fork of the supervisor that imports the user's app and serves it on the inherited socket.

It runs only in a child made by `os.fork()`: mcp, uvicorn and starlette are already in memory, so a
reload costs little more than importing the user's own modules, and those are always read fresh
because the supervisor never imports them.

The conversation with the supervisor is one JSON object per line over two pipes:

    worker -> supervisor   ready {ok, timings | summary, traceback, missing, module}   serving   stopped
                           auth-http {id, method, path, query, headers, body}
                           tool-crash {crash: {tool, type, message, file, line, function, frames}}
    describer -> supervisor   described {tools, contract, suggested}   (its own pipe, then it exits)
    supervisor -> worker   go   retire   allow-host {host, origins}   auth-http-reply {id, status, headers, body}
    supervisor -> spare    load {spec}   (then as a worker)

`ready` is sent once the app is imported (or failed to import); the worker then waits for `go` before
it accepts connections, so the supervisor decides when the previous worker stops accepting.

Nothing but the import stands between a save and the new worker accepting: what dev says about the
new code (each tool's fingerprint, the release contract, the tools the start-up panel suggests) is
read by the describer, a fork of the worker made right after the import, on the other core, while the
worker swaps in and serves. It writes one `described` line on a pipe of its own, or closes it unsaid.

A spare (run_spare) is a worker forked ahead of the next save: it has already imported the libraries
the last worker's import loaded from outside the project, and waits for `load` to import the app, so
a save pays for the app's own modules only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import hashlib
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from appsdk_cli.devserver.asgi import ASGIApp, AuthForwarder, DevIdentity, StreamCloser, fallback_app
from appsdk_cli.devserver.events import Transport
from appsdk_cli.devserver.handoff import ConnectionHandoff, HandoffPair
from appsdk_cli.snapshot.loader import (
    IMPORT_FAILED,
    ServesOnImport,
    TargetMissing,
    describe_failure,
    import_server,
    leaf,
)

_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
# A spare's process name (/proc/PID/comm) until it becomes a worker: it holds no app, and `ps` says so.
SPARE_NAME = "appsdk-spare"


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs, fixed at fork time."""

    project: Path
    module: str
    attribute: str
    target: str  # how to name the target in an error: "server:mcp (the default)"
    transport: Transport
    bind_host: str
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    parent_pid: int
    # Set when the supervisor already knows the app cannot run: serve this error without importing.
    fallback_message: str | None = None
    # How long a retired worker may finish requests it already accepted before it is stopped.
    drain_seconds: float = 30.0
    # Set when the supervisor runs the development authorization server: its paths are forwarded there.
    auth_server: bool = False
    # Set in the worker's environment before the app is imported (the dev authorization server's settings).
    environment: tuple[tuple[str, str], ...] = ()
    # Where a retiring worker sends its open connections and the next one takes them (handoff.py).
    handoff: HandoffPair | None = None
    # The supervisor's per-run nonce (.appsdk/dev.json), told to loopback callers who ask (asgi.DevIdentity).
    dev_nonce: str = ""


@dataclass
class LoadedApp:
    asgi: ASGIApp
    server: MCPServer  # imported, to be described after the swap (describe())
    timings: ImportTimings
    libraries: tuple[str, ...] = ()  # modules the import loaded from outside the project, in order


@dataclass
class ImportTimings:
    """Where a worker's import went, for the line dev prints after a slow reload."""

    import_seconds: float = 0.0  # the app's own import, tool registration included
    modules: int = 0  # the app's modules that import loaded (files under the project)
    register_seconds: float = 0.0  # inside mcp's tool decorator (add_tool), part of import_seconds
    tools: int = 0  # tools registered during the import
    build_seconds: float = 0.0  # crash capture and the ASGI app, after the import

    def as_message(self) -> dict[str, float | int]:
        return {
            "import": round(self.import_seconds, 4),
            "modules": self.modules,
            "register": round(self.register_seconds, 4),
            "tools": self.tools,
            "build": round(self.build_seconds, 4),
        }


class Channel:
    """Newline-delimited JSON over a pair of pipe ends."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            written = os.write(self.write_fd, data)
            data = data[written:]

    def read_available(self) -> tuple[list[dict[str, Any]], bool]:
        """The complete messages readable now, and whether the other end has closed."""
        closed = False
        try:
            chunk = os.read(self.read_fd, 65536)
            if not chunk:
                closed = True
            self._buffer += chunk
        except BlockingIOError:
            pass
        *lines, self._buffer = self._buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()], closed

    def wait_for(self, kind: str, on_other: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
        """Block until a message of this kind arrives (it), or the other end closes (None)."""
        os.set_blocking(self.read_fd, True)
        try:
            while True:
                messages, closed = self.read_available()
                for index, message in enumerate(messages):
                    if message.get("type") == kind:
                        # Anything after it is read by the event loop later; keep it buffered.
                        rest = b"".join((json.dumps(m) + "\n").encode() for m in messages[index + 1 :])
                        self._buffer = rest + self._buffer
                        return message
                    on_other(message)
                if closed:
                    return None
        finally:
            os.set_blocking(self.read_fd, False)


def run(spec: WorkerSpec, sock: socket.socket, channel: Channel, describe_fd: int) -> NoReturn:
    """The body of a forked worker. Never returns: the fork must not unwind into the supervisor's stack.

    `describe_fd` is the write end of the describer's pipe to the supervisor (see the module's doc).
    """
    inherited = frozenset(sys.modules)

    def body() -> int:
        _become_worker(spec)
        return _main(spec, sock, channel, describe_fd, inherited)

    _exit_with(body)


def run_spare(
    parent_pid: int,
    libraries: tuple[str, ...],
    environment: tuple[tuple[str, str], ...],
    sock: socket.socket,
    channel: Channel,
    describe_fd: int,
    name: str,
) -> NoReturn:
    """The body of a spare worker: import `libraries` now, then wait for `load {spec}` and be that worker.

    Nothing of the app is imported before `load`: the spare only takes on what the last worker imported
    from outside the project (the app's third-party packages), which a save does not change. It is
    forked as SPARE_NAME (spare_named) and takes `name`, a worker's, when it loads the app. The app's
    `environment` is set first, so a library that reads a setting when it is imported sees the one the
    app runs with.
    """
    inherited = frozenset(sys.modules)

    def body() -> int:
        _die_with_parent(parent_pid)
        leave_signals_to_the_supervisor()
        os.environ.update(dict(environment))
        _import_libraries(libraries)
        message = channel.wait_for("load", lambda _: None)  # allow-host: the spec brings the current lists
        if message is None:
            return 0
        _set_process_name(name)
        spec = spec_from_message(message["spec"])
        _become_worker(spec)
        return _main(spec, sock, channel, describe_fd, inherited)

    _exit_with(body)


def _exit_with(body: Callable[[], int]) -> NoReturn:
    code = 1
    try:
        code = body()
    except BaseException:
        # The worker's own stderr, as the app's prints are: this fork is about to exit, and the pipe to
        # the supervisor may be what failed, so the terminal is the one place left to say why.
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


@contextlib.contextmanager
def spare_named() -> Iterator[str]:
    """Name this process SPARE_NAME for a moment, so a spare forked meanwhile bears that name from its
    first instant (`ps`, and tests, never see it as a worker holding the app); yields the usual name."""
    try:
        name = Path("/proc/self/comm").read_text(encoding="utf-8").strip()
    except OSError:
        name = ""
    _set_process_name(SPARE_NAME)
    try:
        yield name
    finally:
        _set_process_name(name)


def _set_process_name(name: str) -> None:
    if name and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def _import_libraries(names: tuple[str, ...]) -> None:
    import importlib

    for name in names:
        if name in sys.modules:
            continue
        # Best effort: a module that only imports in the app's context is imported with the app instead.
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def spec_message(spec: WorkerSpec) -> dict[str, Any]:
    """The spec as JSON, for a spare's `load`."""
    fields = dataclasses.asdict(spec)
    return fields | {"project": str(spec.project), "transport": spec.transport.value}


def spec_from_message(fields: dict[str, Any]) -> WorkerSpec:
    return WorkerSpec(
        **fields
        | {
            "project": Path(fields["project"]),
            "transport": Transport(fields["transport"]),
            "allowed_hosts": tuple(fields["allowed_hosts"]),
            "allowed_origins": tuple(fields["allowed_origins"]),
            "environment": tuple((str(key), str(value)) for key, value in fields["environment"]),
            "handoff": HandoffPair(**fields["handoff"]) if fields.get("handoff") else None,
        }
    )


def leave_signals_to_the_supervisor() -> None:
    # Ctrl-C reaches the whole process group; the supervisor decides how the workers stop (SIGTERM).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # likewise a closing terminal
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)


def _become_worker(spec: WorkerSpec) -> None:
    _die_with_parent(spec.parent_pid)
    leave_signals_to_the_supervisor()
    os.environ.update(dict(spec.environment))
    # Python's usual .pyc check is mtime-in-seconds plus size: two same-size saves within a second would
    # load stale bytecode written by the import itself. The describer writes hash-checked ones instead
    # (cache_bytecode), which the next worker's import verifies against the source it reads.
    sys.dont_write_bytecode = True


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to kill this worker if the supervisor dies, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The supervisor may have died before prctl took effect.
    if os.getppid() != parent_pid:
        os._exit(1)


def preload() -> None:
    """Import, in the supervisor, what every worker would otherwise import after each fork."""
    import mcp.server.lowlevel
    import mcp.server.sse
    import mcp.server.streamable_http_manager
    import pydantic  # noqa: F401
    import uvicorn.lifespan.on
    import uvicorn.protocols.http.h11_impl  # noqa: F401

    with contextlib.suppress(ImportError):
        import mcp.server.apps  # noqa: F401
    # appsdk's own modules a worker imports after the fork: in memory already, a reload keeps working
    # when appsdk is reinstalled under a running dev (the test command's `pip install` in the same venv).
    import appsdk_cli.appmeta
    import appsdk_cli.contract.record
    import appsdk_cli.snapshot.crashes
    import appsdk_cli.snapshot.inmemory  # noqa: F401


def _main(spec: WorkerSpec, sock: socket.socket, channel: Channel, describe_fd: int, inherited: frozenset[str]) -> int:
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(spec.allowed_hosts),
        allowed_origins=list(spec.allowed_origins),
    )
    loaded: LoadedApp | None = None
    if spec.fallback_message is not None:
        app = fallback_app(spec.fallback_message, security)
        channel.send({"type": "ready", "ok": False, "fallback": True})
    else:
        try:
            loaded = load_app(
                spec, security, lambda crash: channel.send({"type": "tool-crash", "crash": crash}), inherited
            )
        except TargetMissing as problem:
            message = str(problem)
            app = fallback_app(message, security)
            channel.send({"type": "ready", "ok": False, "missing": True, "summary": message, "traceback": ""})
        except BaseException as problem:  # a broken app can raise anything at import, SystemExit included
            summary = describe_failure(problem, spec.project)
            app = fallback_app(f"{IMPORT_FAILED}: {summary}; fix it and save", security)
            # The line names the call that started a server on import; its traceback adds nothing.
            trace = "" if isinstance(problem, ServesOnImport) else user_traceback(problem)
            # A module that is not installed: the supervisor names the Python to install it into.
            missing = leaf(problem)
            module = missing.name if isinstance(missing, ModuleNotFoundError) else None
            channel.send({"type": "ready", "ok": False, "summary": summary, "traceback": trace, "module": module})
        else:
            app = loaded.asgi
            channel.send(
                {
                    "type": "ready",
                    "ok": True,
                    "timings": loaded.timings.as_message(),
                    "libraries": list(loaded.libraries),
                }
            )
    # While the supervisor retires the old worker: the describer forks off (its pipe, closed here either way).
    if loaded is not None:
        _start_describer(loaded.server, describe_fd, (sock.fileno(), channel.read_fd, channel.write_fd), spec.project)
    else:
        os.close(describe_fd)

    forwarder = AuthForwarder(channel) if spec.auth_server else None
    if forwarder is not None:
        app = forwarder.wrap(app, security)
    app = DevIdentity(str(spec.project), spec.parent_pid, spec.dev_nonce).wrap(app)

    def apply(message: dict[str, Any]) -> None:
        _apply_message(message, security)

    if channel.wait_for("go", apply) is None:
        return 0
    _quiet_logging()
    handoff = ConnectionHandoff(spec.handoff)
    return asyncio.run(_serve(app, sock, channel, security, spec.drain_seconds, forwarder, handoff))


def load_app(
    spec: WorkerSpec,
    security: Any,
    on_crash: Callable[[dict[str, Any]], None] | None = None,
    inherited: frozenset[str] = frozenset(),
) -> LoadedApp:
    """Import the target and build its ASGI app; TargetMissing when the target itself is not there.

    `on_crash` gets each tool crash (snapshot/crashes.py), which the supervisor shows in a few lines.
    Nothing else happens here: what dev reports about the app is read by describe(), after the swap.
    `inherited` names the modules the supervisor had loaded: the others are the app's and its libraries'.
    """
    timings = ImportTimings()
    before = set(sys.modules)
    started = time.perf_counter()
    with _timing_tool_registration(timings):
        server = import_server(spec.project, spec.module, spec.attribute, spec.target)
    imported = time.perf_counter()
    timings.import_seconds = imported - started
    timings.modules = sum(1 for name in set(sys.modules) - before if _in_project(name, spec.project))
    libraries = tuple(name for name in sys.modules if name not in inherited and not _in_project(name, spec.project))
    if not isinstance(server, MCPServer):
        # Serving needs what only MCPServer has (sse_app, the tool list, the crash report).
        raise TargetMissing(
            f"{spec.module}:{spec.attribute} is a low-level mcp Server; appsdk dev serves an MCPServer "
            "(mcp.server.mcpserver)"
        )
    if on_crash is not None:
        from appsdk_cli.snapshot.crashes import report_tool_crashes

        report_tool_crashes(server, spec.project, on_crash)
    if spec.transport is Transport.SSE:
        asgi = server.sse_app(transport_security=security, host=spec.bind_host)
    else:
        asgi = server.streamable_http_app(
            stateless_http=True, json_response=True, transport_security=security, host=spec.bind_host
        )
    timings.build_seconds = time.perf_counter() - imported
    return LoadedApp(asgi=asgi, server=server, timings=timings, libraries=libraries)


@contextlib.contextmanager
def _timing_tool_registration(timings: ImportTimings) -> Iterator[None]:
    """Count the tools the import registers, and the time spent inside mcp registering them (a pydantic
    model and a schema per tool): a slow reload can then say how much of the import was that."""
    try:
        from mcp.server.mcpserver.tools.tool_manager import ToolManager

        original = ToolManager.__dict__["add_tool"]
    except (ImportError, KeyError):  # another mcp: no figure, the import is still timed as a whole
        yield
        return

    def add_tool(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            timings.register_seconds += time.perf_counter() - started
            timings.tools += 1

    ToolManager.add_tool = add_tool  # type: ignore[method-assign]
    try:
        yield
    finally:
        ToolManager.add_tool = original  # type: ignore[method-assign]


def _in_project(name: str, project: Path) -> bool:
    """Whether this loaded module is one of the app's own files (under the project, not in its venv); a
    namespace package (a folder without __init__.py) by where it was found."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if path is None:
        path = next(iter(getattr(module, "__path__", None) or ()), "")
    return _is_project_file(str(path), project)


def _is_project_file(path: str, project: Path) -> bool:
    if not path.startswith(str(project) + os.sep):
        return False
    return not any(f"{os.sep}{part}{os.sep}" in path for part in ("site-packages", ".venv", "venv"))


def describe(server: MCPServer) -> dict[str, Any]:
    """What dev reports about the imported app: each tool's fingerprint, the release contract (None when
    it could not be read) and the tools the start-up panel suggests."""
    descriptors = asyncio.run(_tool_descriptors(server))
    return {
        "tools": _tool_fingerprints(descriptors),
        "contract": _contract(server),
        "suggested": suggested_tools(descriptors),
    }


def _start_describer(server: MCPServer, describe_fd: int, inherited: tuple[int, ...], project: Path) -> None:
    """Fork a child that describes the app to the supervisor on `describe_fd`, then exits; close it here.

    A fork, not a thread: the contract reads every tool's schemas (seconds with a thousand tools), which
    would otherwise take the worker's CPU, and the GIL, from the first requests to the new code. It is
    forked before the worker's lifespan runs, so it sees the app exactly as the import left it.
    """
    worker_pid = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            _die_with_parent(worker_pid)
            for fd in inherited:
                with contextlib.suppress(OSError):
                    os.close(fd)
            message = {"type": "described", **describe(server)}
            data = (json.dumps(message) + "\n").encode()
            while data:
                data = data[os.write(describe_fd, data) :]
            os.close(describe_fd)
            cache_bytecode(project)
        except BaseException:
            traceback.print_exc()  # the reload line then goes without its tool and contract news
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(0)
    os.close(describe_fd)
    # Reap it when it is done (a thread blocked in waitpid holds no GIL): no zombie per reload.
    threading.Thread(target=_reap_quietly, args=(pid,), name="appsdk-describer-reaper", daemon=True).start()


def cache_bytecode(project: Path) -> None:
    """Write a hash-checked .pyc for each of the app's modules whose bytecode is missing or stale.

    The next worker then compiles only the files that changed (a quarter of the import of an app of
    small modules): the import checks such a .pyc against a hash of the source it reads, never against
    the file's mtime, so a save within the same second cannot load stale code. Best effort.
    """
    import importlib.util
    import py_compile

    for module in list(sys.modules.values()):
        source = getattr(module, "__file__", None) or ""
        cached = getattr(module, "__cached__", None)
        if not (cached and source.endswith(".py") and _is_project_file(source, project)):
            continue
        with contextlib.suppress(OSError, SyntaxError, ValueError, py_compile.PyCompileError):
            if _checked_pyc_matches(cached, importlib.util.source_hash(Path(source).read_bytes())):
                continue
            py_compile.compile(
                source, cfile=cached, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH
            )


def _checked_pyc_matches(cached: str, source_hash: bytes) -> bool:
    """Whether `cached` is a hash-checked .pyc of exactly this source (its 16-byte header says so)."""
    import importlib.util

    try:
        with open(cached, "rb") as file:
            header = file.read(16)
    except OSError:
        return False
    flags = int.from_bytes(header[4:8], "little")
    return header[:4] == importlib.util.MAGIC_NUMBER and flags == 0b11 and header[8:16] == source_hash


def _reap_quietly(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _contract(server: Any) -> dict[str, Any] | None:
    """The release contract, read with `appsdk check`'s in-memory collector (runs the app's lifespan once
    more; no tool is called), so each reload can say what a change does to a published app."""
    from appsdk_cli.contract.record import record
    from appsdk_cli.snapshot.inmemory import collect

    try:
        snapshot = asyncio.run(collect(server, description="", timeout=10.0, call_tools=False, step=lambda _: None))
    except Exception:
        return None  # the app serves anyway; the reload line falls back to the tool names
    return record(snapshot)


async def _tool_descriptors(server: Any) -> list[dict[str, Any]]:
    return [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in await server.list_tools()]


def _tool_fingerprints(descriptors: list[dict[str, Any]]) -> dict[str, str]:
    """One hash per tool over everything a host caches: name, schemas, annotations, _meta, texts."""
    fingerprints: dict[str, str] = {}
    for descriptor in descriptors:
        encoded = json.dumps(descriptor, sort_keys=True, separators=(",", ":")).encode()
        fingerprints[str(descriptor.get("name"))] = hashlib.sha256(encoded).hexdigest()
    return fingerprints


def suggested_tools(descriptors: list[dict[str, Any]]) -> dict[str, str | None]:
    """The tool a newcomer can `call` as printed (no required arguments; read-only, not destructive,
    first), and the one to `preview` (it has a widget; the same preferences): None when there is none."""
    from appsdk_cli.appmeta import tool_meta

    def required(descriptor: dict[str, Any]) -> bool:
        schema = descriptor.get("inputSchema")
        return bool(isinstance(schema, dict) and schema.get("required"))

    def rank(descriptor: dict[str, Any]) -> tuple[bool, bool, bool, str]:
        meta = tool_meta(descriptor)
        # False sorts first: no required argument, read-only, not destructive, then by name.
        return (required(descriptor), meta.read_only is not True, meta.destructive is not False, meta.name)

    ranked = sorted(descriptors, key=rank)
    callable_now = [d for d in ranked if not required(d)]
    with_widget = [d for d in ranked if tool_meta(d).template]
    return {
        "call": str(callable_now[0]["name"]) if callable_now else None,
        "preview": str(with_widget[0]["name"]) if with_widget else None,
    }


def user_traceback(problem: BaseException) -> str:
    """The traceback without our own and importlib's frames: the user's code is what they need to see."""
    here = str(Path(__file__).resolve().parent.parent)
    frames = [
        frame
        for frame in traceback.extract_tb(problem.__traceback__)
        if not frame.filename.startswith((here, "<frozen importlib"))
        and not frame.filename.endswith(("importlib/__init__.py",))
    ]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)] if frames else []
    return "".join([*lines, *traceback.format_exception_only(type(problem), problem)])


def _apply_message(message: dict[str, Any], security: Any) -> None:
    if message.get("type") == "allow-host":
        for host in message.get("hosts", []):
            if host not in security.allowed_hosts:
                security.allowed_hosts.append(host)
        for origin in message.get("origins", []):
            if origin not in security.allowed_origins:
                security.allowed_origins.append(origin)


def _quiet_logging() -> None:
    # MCPServer sets the root logger to INFO; mcp's per-request chatter would drown the dev console.
    # The app's own loggers keep whatever level the app chose; warnings (a rejected Host) still show.
    for name in ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "sse_starlette"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # MCPServer also gives the root logger (when the app did not configure one) a rich handler that
    # stamps each line with its own date and a right-aligned file:line: in dev's terminal, among lines
    # without timestamps, say it as dev does ("warning: bookclub: ..."). The app's own handlers stay.
    from rich.logging import RichHandler

    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, RichHandler):
            root.removeHandler(handler)
            plain = logging.StreamHandler(sys.stderr)
            plain.setLevel(handler.level)
            plain.setFormatter(_DevLogFormat())
            root.addHandler(plain)


class _DevLogFormat(logging.Formatter):
    """A log record as dev's own lines read: `warning: LOGGER: message`, a traceback below when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        text = f"{record.levelname.lower()}: {record.name}: {record.message}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


async def _serve(
    app: ASGIApp,
    sock: socket.socket,
    channel: Channel,
    security: Any,
    drain_seconds: float,
    forwarder: AuthForwarder | None,
    handoff: ConnectionHandoff,
) -> int:
    streams = StreamCloser()
    config = uvicorn.Config(
        streams.wrap(app),
        log_config=None,
        log_level="warning",
        access_log=False,
        http=handoff.protocol_class(),
        ws="none",
        lifespan="auto",
        timeout_graceful_shutdown=5,
    )

    def on_started() -> None:
        handoff.start_taking(server)
        channel.send({"type": "serving"})

    server = WorkerServer(config, on_started=on_started)
    shutdown_noise = _ShutdownNoise()
    logging.getLogger("uvicorn.error").addFilter(shutdown_noise)
    loop = asyncio.get_running_loop()
    # SIGTERM asks for a graceful stop, however often it comes: a `kill -TERM -PGID` reaches the worker
    # and then the supervisor's own SIGTERM follows; escalating on the second would cancel the app's
    # lifespan mid-shutdown (a traceback). A forced stop is the supervisor's SIGKILL.
    loop.add_signal_handler(signal.SIGTERM, server.request_exit)
    tasks: set[asyncio.Task[None]] = set()

    def on_message() -> None:
        messages, closed = channel.read_available()
        for message in messages:
            if message.get("type") == "retire":
                shutdown_noise.replaced = True
                task = loop.create_task(_retire(server, sock, channel, drain_seconds, streams, handoff))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            elif message.get("type") == "auth-http-reply" and forwarder is not None:
                forwarder.resolve(message)
            else:
                _apply_message(message, security)
        if closed:
            loop.remove_reader(channel.read_fd)
            if forwarder is not None:
                forwarder.fail_all()
            server.stop()

    loop.add_reader(channel.read_fd, on_message)
    on_message()  # messages that arrived with `go`
    await server.serve(sockets=[sock])
    return 0


async def _retire(
    server: WorkerServer,
    sock: socket.socket,
    channel: Channel,
    drain_seconds: float,
    streams: StreamCloser,
    handoff: ConnectionHandoff,
) -> None:
    """Stop accepting, hand the idle keep-alive connections to the next worker, tell the supervisor (so
    the next worker may start), end the event streams, then finish what was accepted (and hand over
    those connections too)."""
    # Only stop watching the listening fd. asyncio.Server.close() would be a race: a connection
    # accept()ed in this loop step gets its transport one step later, and a closed Server refuses to
    # attach it, so the client would see a reset. uvicorn closes the Server after the drain.
    asyncio.get_running_loop().remove_reader(sock.fileno())
    handoff.retire(server.server_state.connections)
    channel.send({"type": "stopped"})
    # An open GET /mcp (or /sse) stream never ends by itself and would keep this worker, with the old
    # code, alive for the whole drain: end it now; the client reconnects, to the new worker.
    streams.close_all()
    # asyncio builds the protocol for an accepted connection one loop step after accept(): give
    # those a moment to register before judging that nothing is left.
    await asyncio.sleep(0.05)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + drain_seconds
    while server.server_state.connections and loop.time() < deadline:
        await asyncio.sleep(0.01)
    server.stop()


class _ShutdownNoise(logging.Filter):
    """uvicorn's words when it stops a worker that still runs a call, in one line of dev's.

    A sync tool still sleeping when its worker stops (its client pressed Ctrl-C, then a save replaced the
    code) outlives uvicorn's graceful shutdown: uvicorn cancels the request's task and logs that, then the
    cancelled task's whole stack (thirty frames of mcp and anyio) as an error in the application. The
    cancel is uvicorn's own doing, so that traceback says nothing about the app and is dropped.
    """

    # uvicorn's message (server.py) when the graceful shutdown's time is up; its one argument is the count.
    CANCEL = "Cancel %s running task(s), timeout graceful shutdown exceeded"

    def __init__(self) -> None:
        super().__init__()
        self.replaced = False  # the supervisor retired this worker for newer code (a save)
        self.cancelled = False  # uvicorn has said it cancels what still runs: its tracebacks follow

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == self.CANCEL and record.args:
            count = record.args[0] if isinstance(record.args, tuple) else record.args
            calls = "1 call" if count == 1 else f"{count} calls"
            where = "the code before the save" if self.replaced else "the app as its worker stopped"
            record.msg, record.args = f"stopped {calls} still running in {where}", ()
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.name = "appsdk dev"
            self.cancelled = True
            return True
        # Only the tasks uvicorn itself cancelled: an app's own cancellation while serving is still said.
        exception = record.exc_info[1] if record.exc_info else None
        return not (self.cancelled and isinstance(exception, asyncio.CancelledError))


class WorkerServer(uvicorn.Server):
    """uvicorn's Server, minus its signal handling (the supervisor owns signals), plus a started hook."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._on_started()

    def request_exit(self) -> None:
        self.should_exit = True

    def stop(self) -> None:
        """Graceful the first time; a second request skips waiting for connections."""
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True
