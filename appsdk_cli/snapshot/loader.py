"""Import the user's app and find its server object: the one loader of `appsdk check` and `appsdk dev`.

Both run it in a process of their own (the check child, snapshot/inmemory.py; the dev worker, a fork),
and both say the same line about the same broken app:

- the target is not there (no such module, no such attribute, not a server): `TargetMissing`, whose
  text is the whole line and names what was looked for;
- the app raised while it was imported (a syntax error, an ImportError, anything at module level):
  the exception itself propagates, so the caller can also show its traceback, and `failure_line`
  (`IMPORT_FAILED: describe_failure(...)`) is the line: "the app failed to import: server.py:3:
  ModuleNotFoundError: No module named 'requests'".
- the app starts its own server while it is imported (`mcp.run()` at module level, a common first
  mistake): `run()` and its async forms raise `ServesOnImport` during the import instead of blocking, so
  the same line names the call: "the app failed to import: server.py:40: mcp.run() starts the server on
  import; put that call under `if __name__ == '__main__':`". An app that blocks
  some other way (uvicorn.run, a loop of its own) is caught by its caller's clock, with `SERVES_ON_IMPORT_HINT`.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

IMPORT_FAILED = "the app failed to import"
_SET_APP = 'set [tool.appsdk] app = "module:attribute" in pyproject.toml'
# Folders inside a project that hold other people's code: a frame there does not say where to look.
_LIBRARY_PARTS = frozenset({"site-packages", "dist-packages", ".venv", "venv"})
MAIN_GUARD = "put that call under `if __name__ == '__main__':`"
# What a caller adds when an import does not return in time: most often a server started on import
# in a way the guard below cannot see (uvicorn.run, a stdio loop of another library).
SERVES_ON_IMPORT_HINT = f"does it start the server on import? {MAIN_GUARD.replace('that call', 'mcp.run()')}"
_RUNNERS = ("run", "run_stdio_async", "run_sse_async", "run_streamable_http_async")


class ServesOnImport(Exception):
    """The app called its server's run() while being imported: under appsdk, which serves the app
    itself, that would block the import (stdio waits on the terminal, HTTP takes a port of its own)."""


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
        with _refusing_run(), _own_argv(project, module):
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


@contextmanager
def _refusing_run() -> Iterator[None]:
    """While the app is imported, its server's run() (and the async forms) raise ServesOnImport."""
    from mcp.server.mcpserver import MCPServer

    def refuse(name: str) -> Any:
        def refused(self: Any, *args: Any, **kwargs: Any) -> Any:
            raise ServesOnImport(f"it starts its server on import (.{name}() at module level); {MAIN_GUARD}")

        return refused

    originals = {name: MCPServer.__dict__[name] for name in _RUNNERS if name in MCPServer.__dict__}
    for name in originals:
        setattr(MCPServer, name, refuse(name))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(MCPServer, name, original)


@contextmanager
def _own_argv(project: Path, module: str) -> Iterator[None]:
    """While the app is imported, sys.argv is what `python server.py` would give it: a `main()` called at
    module level then parses no arguments of appsdk's (argparse's usage line and SystemExit: 2) and reaches
    its run(), which is refused like a run() at module level."""
    saved = sys.argv
    sys.argv = [str(project / (module.replace(".", "/") + ".py"))]
    try:
        yield
    finally:
        sys.argv = saved


def describe_failure(problem: BaseException, project: Path) -> str:
    """What the app raised while it was imported, in one line: where in the user's files, and what."""
    if isinstance(problem, SyntaxError) and problem.filename:
        return f"{_where(problem.filename, project)}:{problem.lineno}: {type(problem).__name__}: {problem.msg}"
    what = str(problem) if isinstance(problem, ServesOnImport) else first_line(problem)
    # The deepest frame in the project's own code says where to look; library frames do not.
    inside = [frame for frame in traceback.extract_tb(problem.__traceback__) if _in_project(frame.filename, project)]
    if inside:
        frame = inside[-1]
        if isinstance(problem, ServesOnImport):
            # The call to guard is the one at module level (`main()`), not the run() inside the function it calls.
            frame = next((f for f in reversed(inside) if f.name == "<module>"), frame)
            if frame.line:
                what = f"{frame.line.strip()} starts the server on import; {MAIN_GUARD}"
        return f"{_where(frame.filename, project)}:{frame.lineno}: {what}"
    return what


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
