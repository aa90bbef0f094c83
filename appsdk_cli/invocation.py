"""How a new terminal reaches this appsdk, so every "Next:" line works exactly as printed there.

A new terminal starts in the home folder with the login PATH: an activated virtual environment is not
on it, and a relative folder means something else. So the hints name folders from `~` (or absolutely),
and when this appsdk lives in a virtual environment that a new terminal would not find, they start
with the line that activates it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_SHELL_SAFE = re.compile(r"[A-Za-z0-9_./~+-]+")


@dataclass(frozen=True)
class Invocation:
    setup: str | None  # the line to type first in a new terminal (activate appsdk's venv), or None
    appsdk: str  # how to type appsdk after it
    python: str  # the Python appsdk (and so `appsdk dev`) runs the app in

    def lines(self, *commands: str) -> list[str]:
        """The setup line (if any), then the commands."""
        return ([self.setup] if self.setup else []) + list(commands)


def shell_path(path: Path, environ: Mapping[str, str] | None = None) -> str:
    """`path` as a new terminal can type it: absolute, from `~` when under the home folder, quoted if need be."""
    environ = os.environ if environ is None else environ
    path = Path(os.path.abspath(path))
    home = environ.get("HOME")
    text = str(path)
    if home and home != "/":
        try:
            relative = path.relative_to(home)
        except ValueError:
            pass
        else:
            text = "~" if str(relative) == "." else f"~/{relative}"
    if _SHELL_SAFE.fullmatch(text):
        return text
    return shlex.quote(str(path))


def fresh_shell(environ: Mapping[str, str] | None = None) -> Invocation:
    """How a new terminal types this appsdk (the interpreter running now) and its Python."""
    environ = os.environ if environ is None else environ
    bin_dir = Path(sys.executable).parent
    script = bin_dir / "appsdk"
    in_venv = sys.prefix != sys.base_prefix
    # What a new terminal's PATH lacks: the bin folder an activation put in front.
    active = environ.get("VIRTUAL_ENV")
    path = [p for p in environ.get("PATH", "").split(os.pathsep) if p]
    if active:
        path = [p for p in path if Path(p) != Path(active) / "bin"]
    found = shutil.which("appsdk", path=os.pathsep.join(path))
    if found and script.exists() and _same_file(Path(found), script):
        return Invocation(None, "appsdk", "python3" if not in_venv else shell_path(Path(sys.executable), environ))
    activate = bin_dir / "activate"
    if in_venv and activate.is_file() and script.exists():
        return Invocation(f". {shell_path(activate, environ)}", "appsdk", "python")
    python = shell_path(Path(sys.executable), environ)
    appsdk = shell_path(script, environ) if script.exists() else f"{python} -m appsdk_cli"
    return Invocation(None, appsdk, python)


def this_terminal(environ: Mapping[str, str] | None = None) -> Invocation:
    """How the terminal that runs appsdk now types it again: `appsdk` when its PATH finds this one (an active
    virtual environment included), else by its path."""
    environ = os.environ if environ is None else environ
    script = Path(sys.executable).parent / "appsdk"
    found = shutil.which("appsdk", path=environ.get("PATH", ""))
    if found and script.exists() and _same_file(Path(found), script):
        return Invocation(None, "appsdk", "python")
    python = shell_path(Path(sys.executable), environ)
    return Invocation(None, shell_path(script, environ) if script.exists() else f"{python} -m appsdk_cli", python)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or os.path.samefile(a, b)
    except OSError:
        return False


def pip_install(requirement: str, environ: Mapping[str, str] | None = None) -> str:
    """The command, as typed in this terminal, that installs `requirement` into the Python appsdk runs in."""
    environ = os.environ if environ is None else environ
    active = environ.get("VIRTUAL_ENV")
    if active and _same_file(Path(active), Path(sys.prefix)):
        return f"pip install {shlex.quote(requirement)}"
    return f"{shell_path(Path(sys.executable), environ)} -m pip install {shlex.quote(requirement)}"
