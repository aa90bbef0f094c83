"""Render a template from scaffolds/ into a new project folder, all or nothing.

The project is rendered into a temporary folder beside its target and renamed into place, so a
failure at any point leaves nothing behind.
"""

from __future__ import annotations

import keyword
import os
import re
import secrets
import shutil
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from appsdk_cli.errors import AppsdkError, UsageError

TEMPLATE = "book-club"
# `appsdk new --auth`: these files replace or join the template's (the protected resource server).
AUTH_OVERLAY = "book-club-auth"
_NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
# A template file named dot-X becomes .X: a real .gitignore inside the wheel would be dropped by
# packaging tools that honour ignore files.
_DOT_PREFIX = "dot-"
_SKIPPED = {"__pycache__", ".pytest_cache", ".appsdk", ".venv"}


class WidgetFlavor(StrEnum):
    """The widget resource's MIME type: which hosts render it."""

    MCP_APPS = "text/html;profile=mcp-app"
    SKYBRIDGE = "text/html+skybridge"


@dataclass(frozen=True)
class ScaffoldResult:
    name: str
    path: Path
    flavor: WidgetFlavor
    files: tuple[Path, ...]
    replaced_existing: bool
    auth: bool = False


def templates_root() -> Path:
    """The scaffolds folder: inside the installed wheel, or at the top of a source checkout."""
    packaged = Path(__file__).resolve().parent / "scaffolds"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / "scaffolds"
    if checkout.is_dir():
        return checkout
    raise AppsdkError("appsdk's templates are missing from this installation; reinstall appsdk-cli")


def validate_name(name: str) -> None:
    if not name:
        raise UsageError("the project name is empty; give a name such as book-club")
    if "/" in name or "\\" in name or name in {".", ".."} or ".." in name:
        raise UsageError(f"project name {name!r} is a path; give a plain name and use --path DIR for the folder")
    if not _NAME_PATTERN.fullmatch(name):
        raise UsageError(
            f"project name {name!r} is not allowed: start with a letter, then letters, digits, - or _ "
            "(at most 64 characters)"
        )
    if keyword.iskeyword(name) or keyword.iskeyword(name.replace("-", "_")):
        raise UsageError(f"project name {name!r} is a Python keyword; choose another name")


def scaffold(
    name: str,
    parent: Path,
    *,
    force: bool = False,
    flavor: WidgetFlavor = WidgetFlavor.MCP_APPS,
    auth: bool = False,
) -> ScaffoldResult:
    """Create parent/name from the book-club template (with auth: its OAuth-protected variant);
    raise AppsdkError and leave nothing on failure."""
    validate_name(name)
    sources = [templates_root() / TEMPLATE]
    if auth:
        sources.append(templates_root() / AUTH_OVERLAY)
    parent = parent.expanduser()
    target = parent / name
    if parent.exists() and not parent.is_dir():
        raise AppsdkError(f"{parent} is a file, not a folder; choose another --path")
    if target.exists() and not target.is_dir():
        raise AppsdkError(f"{target} already exists and is a file; choose another name or --path")
    occupied = target.is_dir() and any(target.iterdir())
    if occupied and not force:
        raise AppsdkError(f"{target} already exists and is not empty; choose another name, or pass --force")

    created_parents = _missing_ancestors(parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        # mkdir (not mkdtemp) so the project gets the user's usual permissions, not 0700.
        staging = parent / f".{name}.{secrets.token_hex(4)}.appsdk-new"
        staging.mkdir()
    except OSError as error:
        _remove_created(created_parents)
        raise AppsdkError(f"cannot create the project in {parent}: {error.strerror or error}") from error

    try:
        values = {"app_name": name, "widget_mime_type": flavor.value}
        files = sorted({path for source in sources for path in _render_tree(source, staging, values)})
        if occupied:
            _merge_into(staging, target, files)
        else:
            os.replace(staging, target)
    except OSError as error:
        raise AppsdkError(f"cannot write the project to {target}: {error.strerror or error}") from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not target.exists():
            _remove_created(created_parents)
    return ScaffoldResult(name, target, flavor, tuple(files), replaced_existing=occupied, auth=auth)


def _render_tree(source: Path, destination: Path, values: dict[str, str]) -> list[Path]:
    """Copy the template, filling {{key}} placeholders; return the relative paths written."""
    written: list[Path] = []
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if any(part in _SKIPPED for part in relative.parts) or path.suffix == ".pyc":
            continue
        relative = Path(*(_undot(part) for part in relative.parts))
        out = destination / relative
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", value)
        out.write_text(text, encoding="utf-8")
        shutil.copymode(path, out)
        written.append(relative)
    return written


def _undot(part: str) -> str:
    return "." + part[len(_DOT_PREFIX) :] if part.startswith(_DOT_PREFIX) else part


def _merge_into(staging: Path, target: Path, files: list[Path]) -> None:
    """--force into a non-empty folder: overwrite the template's files, keep every other file.

    Every destination is checked before the first write, so a clash (a folder where a file must go)
    fails without changing anything.
    """
    for relative in files:
        destination = target / relative
        for ancestor in [*reversed(relative.parents[:-1]), relative]:
            existing = target / ancestor
            must_be_dir = ancestor != relative
            if existing.exists() and existing.is_dir() != must_be_dir:
                kind = "a folder" if existing.is_dir() else "a file"
                raise AppsdkError(f"{existing} is {kind} in the way of the template; move it and try again")
        if destination.exists() and not os.access(destination, os.W_OK):
            raise AppsdkError(f"{destination} is not writable; nothing was changed")
    for relative in files:
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / relative, destination)


def _missing_ancestors(folder: Path) -> list[Path]:
    missing = []
    for candidate in [folder, *folder.parents]:
        if candidate.exists():
            break
        missing.append(candidate)
    return missing


def _remove_created(folders: list[Path]) -> None:
    for folder in folders:  # deepest first
        try:
            folder.rmdir()
        except OSError:
            break
