"""What a crashing tool tells its developer under `appsdk dev`, while the result stays what production sends.

mcp 2.x answers a tool that raised anything but `ToolError` with only "Error executing tool NAME", on
purpose: an exception's text may hold secrets. So the result is left exactly as it is, and beside it:

- the worker's terminal (through the supervisor) gets a few lines: the exception and the user's own frames,
  in place of mcp's boxed dump of every frame;
- a request from a loopback Host that no proxy forwarded (appsdk call, preview, a local inspector; never
  one through the tunnel, which rewrites Host to the local address but adds X-Forwarded-*)
  gets the same facts in the result's `_meta["appsdk/crash"]` (appmeta.TOOL_CRASH), for `call` and
  `preview` to show.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import UnexpectedResourceError, UnexpectedToolError
from mcp.types import CallToolResult

from appsdk_cli.appmeta import MAX_RERUN_OF, RERUN_OF, TOOL_CRASH
from appsdk_cli.netloc import allowed_host_header, is_forwarding_header

MAX_MESSAGE = 500
MAX_FRAMES = 6
# Set by the middleware around one tools/call; the wrapped call_tool drops the crash it saw into it.
_pending: ContextVar[list[dict[str, Any]] | None] = ContextVar("appsdk_tool_crash", default=None)
# Set by the middleware too: the workbench's words for the call it makes again after a save (RERUN_OF).
_rerun_of: ContextVar[str | None] = ContextVar("appsdk_rerun_of", default=None)


def _root_cause(problem: BaseException) -> BaseException:
    """The user's exception under mcp's wrappers (a nested tool or resource crash wraps twice)."""
    seen = 0
    while isinstance(problem, UnexpectedToolError | UnexpectedResourceError) and problem.__cause__ and seen < 10:
        problem, seen = problem.__cause__, seen + 1
    return problem


def _user_file(filename: str, project: Path) -> str | None:
    """The path relative to the project, for the user's own files only (not a venv inside the project)."""
    try:
        relative = Path(filename).resolve().relative_to(project)
    except (ValueError, OSError):
        return None
    if {"site-packages", "dist-packages"} & set(relative.parts):
        return None
    return str(relative)


def describe_crash(tool: str, problem: BaseException, project: Path) -> dict[str, Any]:
    """The crash as plain JSON: exception type and message, and the user's frames, innermost last."""
    cause = _root_cause(problem)
    frames = []
    for frame in traceback.extract_tb(cause.__traceback__):
        relative = _user_file(frame.filename, project)
        if relative is not None:
            frames.append({"file": relative, "line": frame.lineno, "function": frame.name, "code": frame.line or ""})
    message = str(cause)
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    crash: dict[str, Any] = {"tool": tool, "type": type(cause).__name__, "message": message}
    crash["frames"] = frames[-MAX_FRAMES:]
    if frames:
        crash |= {"file": frames[-1]["file"], "line": frames[-1]["line"], "function": frames[-1]["function"]}
    return crash


# What a proxy adds to a request it forwards. `appsdk dev --tunnel` has ngrok rewrite Host to the local
# address (any local server then works behind it), so Host alone cannot tell a tunnelled request apart.
def _from_loopback(request: Any) -> bool:
    if request is None:
        return True
    headers = getattr(request, "headers", {})
    if any(value and is_forwarding_header(str(name)) for name, value in headers.items()):
        return False
    return allowed_host_header(str(headers.get("host", "")))


def _rerun_words(ctx: Any) -> str | None:
    """Which call the workbench made again (its request _meta RERUN_OF), from a loopback caller only."""
    params = ctx.params if isinstance(ctx.params, Mapping) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), Mapping) else {}
    words = meta.get(RERUN_OF)
    if not isinstance(words, str) or not words or not _from_loopback(ctx.request):
        return None
    return words[:MAX_RERUN_OF]


def _with_crash(result: Any, crash: dict[str, Any]) -> Any:
    if isinstance(result, CallToolResult) and result.is_error:
        return result.model_copy(update={"meta": {**(result.meta or {}), TOOL_CRASH: crash}})
    if isinstance(result, dict) and result.get("isError") is True:
        meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
        return {**result, "_meta": {**meta, TOOL_CRASH: crash}}
    return result


class _DropReportedCrashes(logging.Filter):
    """mcp logs a tool crash as a boxed traceback of every frame; the compact report replaces it."""

    def filter(self, record: logging.LogRecord) -> bool:
        problem = record.exc_info[1] if record.exc_info else None
        return not isinstance(problem, UnexpectedToolError)


def report_tool_crashes(server: MCPServer, project: Path, report: Callable[[dict[str, Any]], None]) -> None:
    """Wire the crash report into one server: `report` gets each crash; loopback callers get it in `_meta`."""
    original = server.call_tool

    async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await original(name, arguments, context)
        except UnexpectedToolError as problem:
            crash = describe_crash(name, problem, project)
            rerun_of = _rerun_of.get()
            if rerun_of:
                crash["rerunOf"] = rerun_of
            report(crash)
            pending = _pending.get()
            if pending is not None:
                pending.append(crash)
            raise

    async def attach_crash(ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        pending: list[dict[str, Any]] = []
        token = _pending.set(pending)
        rerun_token = _rerun_of.set(_rerun_words(ctx))
        try:
            result = await call_next(ctx)
        finally:
            _rerun_of.reset(rerun_token)
            _pending.reset(token)
        if pending and _from_loopback(ctx.request):
            return _with_crash(result, pending[0])
        return result

    # MCPServer's tools/call handler calls self.call_tool, so the instance attribute wraps every call.
    server.call_tool = call_tool  # type: ignore[method-assign]
    server.middleware.append(attach_crash)
    logging.getLogger("mcp.server.mcpserver.server").addFilter(_DropReportedCrashes())
