"""`appsdk app-server`: the Codex app-server `app/*` methods over stdio JSONL.

The wire is Codex's: JSON-RPC 2.0 shapes without the "jsonrpc" member, one message per line. Requests run
concurrently, each on a thread of its own (bounded), because one app/list may wait on a slow app server
for seconds while an app/read is answered from the cache. Input never crashes the server: a line that is
not JSON is logged and dropped; a request of the wrong shape gets an error reply; then the next line is read.
"""

from __future__ import annotations

import json
import platform
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from appsdk_cli import __version__
from appsdk_cli.apps.service import AppsService, BadCursor, RefreshFailed, TooManyAppIds
from appsdk_cli.apps.tomlfile import RegistryFileError
from appsdk_cli.errors import AppsdkError

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_CONCURRENT_REQUESTS = 32
LIST_UPDATED = "app/list/updated"
U32_MAX = 2**32 - 1


class RequestError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(detail: str) -> RequestError:
    return RequestError(INVALID_REQUEST, f"Invalid request: {detail}")


# --- params, checked the way serde would: missing optional fields and nulls are fine, wrong types are not ---


def _params(message: dict[str, Any], *, required: bool = False) -> dict[str, Any]:
    params = message.get("params")
    if params is None:
        if required:
            raise invalid("missing field `params`")
        return {}
    if not isinstance(params, dict):
        raise invalid(f"params must be an object, not {_kind(params)}")
    return params


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _optional(params: dict[str, Any], key: str, kind: type | tuple[type, ...], expected: str) -> Any:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise invalid(f"`{key}` must be {expected}, not a boolean")
    if not isinstance(value, kind):
        raise invalid(f"`{key}` must be {expected}, not {_kind(value)}")
    return value


def _flag(params: dict[str, Any], key: str) -> bool:
    return bool(_optional(params, key, bool, "a boolean"))


def _check_thread(params: dict[str, Any]) -> None:
    thread_id = _optional(params, "threadId", str, "a string")
    if thread_id is not None:
        # appsdk has no threads, so every thread id is unknown (Codex's answer for an unknown one).
        raise RequestError(INVALID_REQUEST, f"thread not found: {thread_id}")


def _string_list(params: dict[str, Any], key: str) -> list[str]:
    if key not in params or params[key] is None:
        raise invalid(f"missing field `{key}`")
    value = params[key]
    if not isinstance(value, list):
        raise invalid(f"`{key}` must be an array of strings, not {_kind(value)}")
    for item in value:
        if not isinstance(item, str):
            raise invalid(f"`{key}` must be an array of strings; it holds {_kind(item)}")
    return value


# --- the server ----------------------------------------------------------------------------------------


@dataclass
class Session:
    """What one client (there is one per stdio server) told us in initialize, and what we last sent it."""

    initialized: bool = False
    client_name: str | None = None
    opt_out: frozenset[str] = frozenset()
    last_list: list[dict[str, Any]] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def user_agent(client_name: str, client_version: str) -> str:
    system = f"{platform.system()} {platform.release()}; {platform.machine()}"
    return f"appsdk/{__version__} ({system}) {client_name}/{client_version}"


def platform_names() -> tuple[str, str]:
    """(family, os) as Rust's std::env::consts spells them, which is what Codex reports."""
    if sys.platform.startswith("win"):
        return "windows", "windows"
    return "unix", {"darwin": "macos"}.get(sys.platform, sys.platform.rstrip("0123456789"))


class AppServer:
    def __init__(
        self,
        service: AppsService,
        *,
        stdin: IO[bytes],
        stdout: IO[bytes],
        log: Callable[[str], None],
        max_concurrent: int = MAX_CONCURRENT_REQUESTS,
    ) -> None:
        self.service = service
        self.stdin = stdin
        self.stdout = stdout
        self.log = log
        self.session = Session()
        self._write_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._workers: set[threading.Thread] = set()
        self._workers_lock = threading.Lock()
        self._closed = threading.Event()

    # -- output --

    def _write(self, message: dict[str, Any]) -> None:
        try:
            text = json.dumps(message, ensure_ascii=False, allow_nan=False)
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from the input, echoed back: escape it instead
            data = json.dumps(message, ensure_ascii=True, allow_nan=False).encode("ascii")
        except (ValueError, TypeError, RecursionError) as problem:
            self.log(f"could not encode a message for {message.get('id', message.get('method'))!r}: {problem}")
            return
        with self._write_lock:
            if self._closed.is_set():
                return
            try:
                self.stdout.write(data + b"\n")
                self.stdout.flush()
            except (BrokenPipeError, OSError, ValueError):
                self._closed.set()  # the client is gone; the reader stops at the next line

    def respond(self, request_id: Any, result: dict[str, Any]) -> None:
        self._write({"id": request_id, "result": result})

    def fail(self, request_id: Any, code: int, message: str) -> None:
        self._write({"id": request_id, "error": {"code": code, "message": message}})

    def notify(self, method: str, params: dict[str, Any]) -> None:
        if method in self.session.opt_out:
            return
        self._write({"method": method, "params": params, "emittedAtMs": int(time.time() * 1000)})

    def list_updated(self, data: list[dict[str, Any]]) -> None:
        """Send the full merged list, unless it is what this client last got."""
        with self.session.lock:
            if data == self.session.last_list:
                return
            self.session.last_list = data
            self.notify(LIST_UPDATED, {"data": data})

    # -- input --

    def serve(self) -> None:
        """Read until stdin closes, then let the requests in flight finish."""
        while not self._closed.is_set():
            line = self._read_line()
            if line is None:
                break
            if line.strip():
                self.handle_line(line)
        with self._workers_lock:
            workers = list(self._workers)
        for worker in workers:
            worker.join()

    def _read_line(self) -> bytes | None:
        line = self.stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            return None
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            # Too long to be a request we would answer: skip to the end of it without holding it in memory.
            while line and not line.endswith(b"\n"):
                line = self.stdin.readline(MAX_LINE_BYTES)
            self.log(f"dropped a line longer than {MAX_LINE_BYTES} bytes")
            return b"\n"
        return line

    def handle_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as problem:
            self.log(f"dropped a line that is not JSON: {str(problem)[:200]}")
            return
        if not isinstance(message, dict):
            self.log(f"dropped a JSON {_kind(message).split()[-1]} that is not a message object")
            return
        request_id = message.get("id")
        has_id = "id" in message and isinstance(request_id, int | str) and not isinstance(request_id, bool)
        if "id" in message and not has_id:
            self.log(f"dropped a message whose id is {_kind(request_id)}, not a string or an integer")
            return
        method = message.get("method")
        if not isinstance(method, str):
            if has_id and ("result" in message or "error" in message):
                return  # a response; we never ask the client anything, so there is nothing to match it to
            if has_id:
                self.fail(request_id, INVALID_REQUEST, "Invalid request: missing or non-string `method`")
            else:
                self.log("dropped a message without a method or an id")
            return
        if not has_id:
            self.on_notification(method)
            return
        self.on_request(request_id, method, message)

    def on_notification(self, method: str) -> None:
        if method != "initialized":
            self.log(f"ignored the notification {method[:100]!r}")

    def on_request(self, request_id: int | str, method: str, message: dict[str, Any]) -> None:
        if method == "initialize":
            # Answered in the reader thread, so every later line sees the session it set up.
            self._guard(request_id, method, lambda: self.initialize(message))
            return
        if not self.session.initialized:
            self.fail(request_id, INVALID_REQUEST, "Not initialized")
            return
        handler = self.handlers().get(method)
        if handler is None:
            self.fail(request_id, INVALID_REQUEST, f"Invalid request: unknown method `{method[:200]}`")
            return
        self._slots.acquire()
        worker = threading.Thread(
            target=self._run, args=(request_id, method, handler, message), name=f"request-{method}", daemon=True
        )
        with self._workers_lock:
            self._workers.add(worker)
        worker.start()

    def _run(self, request_id: Any, method: str, handler: Callable[[dict[str, Any]], Any], message: Any) -> None:
        try:
            self._guard(request_id, method, lambda: handler(message))
        finally:
            self._slots.release()
            with self._workers_lock:
                self._workers.discard(threading.current_thread())

    def _guard(self, request_id: Any, method: str, work: Callable[[], dict[str, Any]]) -> None:
        """Run one request; whatever goes wrong becomes an error reply, never a dead server."""
        try:
            result = work()
        except RequestError as problem:
            self.fail(request_id, problem.code, problem.message)
        except Exception as problem:
            self.fail(request_id, *self._error_for(method, problem))
        else:
            self.respond(request_id, result)

    def _error_for(self, method: str, problem: Exception) -> tuple[int, str]:
        if isinstance(problem, BadCursor):
            return INVALID_REQUEST, problem.message
        if isinstance(problem, TooManyAppIds):
            return INVALID_PARAMS, problem.message
        if isinstance(problem, RefreshFailed):
            return INTERNAL_ERROR, problem.message
        if isinstance(problem, RegistryFileError):
            return INTERNAL_ERROR, f"failed to load the apps registry: {problem.message}"
        if isinstance(problem, AppsdkError):
            return INTERNAL_ERROR, f"failed to handle {method}: {problem.message}"
        self.log(f"{method} failed:\n{traceback.format_exc()}")
        return INTERNAL_ERROR, f"failed to handle {method}: internal error ({type(problem).__name__})"

    # -- the methods --

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {"app/installed": self.app_installed, "app/list": self.app_list, "app/read": self.app_read}

    def initialize(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.session.initialized:
            raise RequestError(INVALID_REQUEST, "Already initialized")
        params = _params(message, required=True)
        client = params.get("clientInfo")
        if not isinstance(client, dict):
            raise invalid("missing field `clientInfo`" if client is None else "`clientInfo` must be an object")
        name = client.get("name")
        version = client.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            raise invalid("`clientInfo` needs string fields `name` and `version`")
        _optional(client, "title", str, "a string")
        capabilities = _optional(params, "capabilities", dict, "an object") or {}
        opt_out = _optional(capabilities, "optOutNotificationMethods", list, "an array of strings") or []
        if not all(isinstance(item, str) for item in opt_out):
            raise invalid("`optOutNotificationMethods` must be an array of strings")
        self.session.client_name = name
        self.session.opt_out = frozenset(opt_out)
        self.session.initialized = True
        family, os_name = platform_names()
        return {
            "userAgent": user_agent(name, version),
            "codexHome": str(self.service.paths.home),
            "platformFamily": family,
            "platformOs": os_name,
        }

    def app_installed(self, message: dict[str, Any]) -> dict[str, Any]:
        params = _params(message)
        force_refresh = _flag(params, "forceRefresh")
        _check_thread(params)
        return self.service.installed(force_refresh=force_refresh).wire()

    def app_list(self, message: dict[str, Any]) -> dict[str, Any]:
        params = _params(message)
        cursor = _optional(params, "cursor", str, "a string")
        limit = _optional(params, "limit", int, "a non-negative integer")
        if limit is not None and not 0 <= limit <= U32_MAX:
            raise invalid(f"`limit` must be a non-negative integer below 2^32, not {limit}")
        force_refetch = _flag(params, "forceRefetch")
        _check_thread(params)
        result = self.service.list(cursor=cursor, limit=limit, force_refetch=force_refetch, on_update=self.list_updated)
        return result.wire()

    def app_read(self, message: dict[str, Any]) -> dict[str, Any]:
        params = _params(message, required=True)
        app_ids = _string_list(params, "appIds")
        include_tools = _flag(params, "includeTools")
        _check_thread(params)
        return self.service.read(app_ids, include_tools=include_tools).wire()
