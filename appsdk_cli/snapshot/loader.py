"""Import the user's app and find its server object: the one loader of `appsdk check` and `appsdk dev`.

Both run it in a process of their own (the check child, snapshot/inmemory.py; the dev worker, a fork),
and both say the same line about the same broken app:

- the target is not there (no such module, no such attribute, not a server): `TargetMissing`, whose
  text is the whole line and names what was looked for;
- the app raised while it was imported (a syntax error, an ImportError, anything at module level):
  the exception itself propagates, so the caller can also show its traceback, and `failure_line`
  (`IMPORT_FAILED: describe_failure(...)`) is the line: "the app failed to import: server.py:3:
  ModuleNotFoundError: No module named 'requests'".
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path
from typing import Any

IMPORT_FAILED = "the app failed to import"
_SET_APP = 'set [tool.appsdk] app = "module:attribute" in pyproject.toml'
# Folders inside a project that hold other people's code: a frame there does not say where to look.
_LIBRARY_PARTS = frozenset({"site-packages", "dist-packages", ".venv", "venv"})


class TargetMissing(Exception):
    """The module or attribute named by the app target does not exist, or is not a server (not a bug
    inside the app); the text is the one line for the user."""


def import_server(project: Path, module: str, attribute: str, looked_for: str) -> Any:
    """The server object at `module:attribute`, imported with the project first on sys.path.

    `looked_for` names the target as the user gave it ("server:mcp (the default)"). Raises
    TargetMissing, or whatever the app's own import raised (SyntaxError and SystemExit included).
    """
    if sys.path[:1] != [str(project)]:
        sys.path.insert(0, str(project))
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as problem:
        if problem.name and (module == problem.name or module.startswith(problem.name + ".")):
            raise TargetMissing(
                f"no module {module!r} in {project} (looked for {looked_for}): is this the app's folder? {_SET_APP}"
            ) from None
        raise
    if not hasattr(loaded, attribute):
        where = _where(getattr(loaded, "__file__", None) or module, project)
        raise TargetMissing(f"{where} has no attribute {attribute!r} (looked for {looked_for}); {_SET_APP}")
    server = getattr(loaded, attribute)

    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    if not isinstance(server, MCPServer | Server):
        raise TargetMissing(
            f"{module}:{attribute} is a {type(server).__name__}, not an MCPServer or a low-level mcp Server"
        )
    return server


def describe_failure(problem: BaseException, project: Path) -> str:
    """What the app raised while it was imported, in one line: where in the user's files, and what."""
    if isinstance(problem, SyntaxError) and problem.filename:
        return f"{_where(problem.filename, project)}:{problem.lineno}: {type(problem).__name__}: {problem.msg}"
    # The deepest frame in the project's own code says where to look; library frames do not.
    inside = [frame for frame in traceback.extract_tb(problem.__traceback__) if _in_project(frame.filename, project)]
    if inside:
        return f"{_where(inside[-1].filename, project)}:{inside[-1].lineno}: {first_line(problem)}"
    return first_line(problem)


def failure_line(problem: BaseException, project: Path) -> str:
    return f"{IMPORT_FAILED}: {describe_failure(problem, project)}"


def leaf(error: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups, which anyio task groups raise."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def first_line(error: BaseException) -> str:
    """`Type: the first line of its message`, or the type alone."""
    error = leaf(error)
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def _in_project(filename: str, project: Path) -> bool:
    try:
        relative = Path(filename).resolve().relative_to(project.resolve())
    except (ValueError, OSError):
        return False
    return not (_LIBRARY_PARTS & set(relative.parts))


def _where(filename: str, project: Path) -> str:
    """A file as the user knows it: relative to the project when inside it."""
    try:
        return str(Path(filename).resolve().relative_to(project.resolve()))
    except (ValueError, OSError):
        return filename
