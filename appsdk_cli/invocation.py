"""How a new terminal reaches this appsdk, so every "Next:" line works exactly as printed there; and where
this appsdk was installed from, so a new project installs the same one.

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


DISTRIBUTION = "appsdk-cli"


@dataclass(frozen=True)
class InstalledFrom:
    """Where this appsdk-cli was installed from, as a project that needs it requires it (PEP 508)."""

    requirement: str  # "appsdk-cli>=0.1" from a package index; "appsdk-cli @ <url>" from anywhere else
    url: str | None  # the folder, archive or VCS URL it came from; None from a package index
    from_index: str  # the requirement once appsdk-cli comes from an index: "appsdk-cli>=0.1"


def installed_from() -> InstalledFrom:
    """Read from PEP 610's direct_url.json, which pip writes for an install from a folder (`pip install .`,
    `-e .`), a VCS URL or an archive, and not for one from a package index.

    appsdk-cli is installed from a clone of its repository, not from an index, so a project that asks for
    plain `appsdk-cli` cannot be installed; it is pointed at the same source instead. An editable install's
    folder serves as well as a plain one: the project installs it from there as it stands."""
    import importlib.metadata
    import json

    try:
        distribution = importlib.metadata.distribution(DISTRIBUTION)
        recorded = distribution.read_text("direct_url.json")
        direct = json.loads(recorded) if recorded else None
    except (importlib.metadata.PackageNotFoundError, OSError, UnicodeDecodeError, ValueError):
        return InstalledFrom(DISTRIBUTION, None, DISTRIBUTION)  # run from a source tree, not installed
    release = re.match(r"\d+\.\d+", distribution.version or "")
    from_index = f"{DISTRIBUTION}>={release.group(0)}" if release else DISTRIBUTION
    url = direct.get("url") if isinstance(direct, dict) else None
    # pip writes URLs percent-encoded; one that is not cannot go into the project's pyproject.toml as is.
    if not isinstance(url, str) or not url or re.search(r"[\s\"'\\]", url):
        return InstalledFrom(from_index, None, from_index)
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        # The commit that is installed, so the project gets this appsdk and not a branch's later one.
        commit = vcs.get("commit_id")
        url = f"{vcs['vcs']}+{url}" + (f"@{commit}" if isinstance(commit, str) and commit else "")
    subdirectory = direct.get("subdirectory")
    if isinstance(subdirectory, str) and subdirectory:
        url += f"#subdirectory={subdirectory}"
    return InstalledFrom(f"{DISTRIBUTION} @ {url}", url, from_index)
