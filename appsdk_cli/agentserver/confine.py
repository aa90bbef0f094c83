"""The one rule for a path an agent hands `appsdk mcp`: it must stay inside the project the server was started for.

An agent's argument is untrusted input (a prompt it read may have put it there). So every path is resolved the
way the file system will follow it (symlinks included) and refused, with one line, when it lands outside.
"""

from __future__ import annotations

from pathlib import Path

from appsdk_cli.agentserver.untrusted import OwnWords


class OutsideProject(OwnWords):
    """A path argument that resolves outside the project: refused before anything reads or writes it."""


def inside(root: Path, given: str, *, what: str = "path") -> Path:
    """`given` (relative to `root`, or absolute) resolved, symlinks followed; OutsideProject when it is not
    `root` or below it."""
    if not isinstance(given, str) or "\x00" in given:
        raise OutsideProject(f"{what} {given!r} is not a path")
    candidate = Path(given).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        # strict=False: a file about to be written need not exist; every symlink that does exist is followed.
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as problem:  # a symlink loop
        raise OutsideProject(f"{what} {given!r} cannot be resolved: {problem}") from None
    if resolved != root and root not in resolved.parents:
        raise OutsideProject(
            f"{what} {given!r} is outside the project {root} (appsdk mcp works only inside the folder it was "
            "started for; start it in another folder to work there)"
        )
    return resolved
