"""Serves the app's skills/ folder over MCP: the Skills extension (SEP-2640, io.modelcontextprotocol/skills).

Each skills/<name>/ folder holding a SKILL.md is one skill. Every file in it is a resource at
skill://<name>/<path>, read with resources/read; `skills/list` and `skills/get` describe each skill
with its SKILL.md front matter and every file's sha256 digest and size, so a host (ChatGPT's skill
importer among them) can check that what it reads is what was listed.

This file is part of your app, not of appsdk: the deployed server serves its skills with it.
Wire it in server.py:

    skills = SkillsOverMcp(Path(__file__).parent / "skills")
    mcp = MCPServer(..., extensions=[skills], middleware=[skills.keep_capability])

Files are read on every request, so an edited file is served with its new digest at once; a new
skill or file is picked up when the server restarts (`appsdk dev` restarts it on any change in skills/).

Only regular files inside the folder are served: a symbolic link (to a .env, say) is neither listed nor
read, nor is anything in a linked folder, and a file swapped for a link after the listing is refused.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
import re
import stat
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, ResourceBinding
from mcp.server.mcpserver.resources import FunctionResource
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, PaginatedRequestParams, RequestParams
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
# How long a host may keep a listing before asking again (2026-07-28 results carry it; SEP-2640 requires it).
LISTING_TTL_MS = 60_000
_IGNORED = {"__pycache__", ".DS_Store"}


class GetSkillParams(RequestParams):
    uri: str


class SkillsOverMcp(Extension):
    """The skills under `folder`, found once at start; their bytes are read on every request."""

    identifier = SKILLS_EXTENSION

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._skills: dict[str, Path] = {}  # the SKILL.md URI -> the skill's folder
        if folder.is_dir():
            for skill_md in sorted(folder.glob(f"*/{SKILL_FILE}")):
                if skill_md.parent.is_symlink() or not _regular(skill_md):
                    continue  # a link could point anywhere: only what is really in skills/ is served
                front_matter(skill_md)  # a front matter this file cannot read fails at start, with its file
                self._skills[f"skill://{skill_md.parent.name}/{SKILL_FILE}"] = skill_md.parent

    def settings(self) -> dict[str, Any]:
        return {}  # no resources/directory/read: every skill's entry lists all its files

    def resources(self) -> Sequence[ResourceBinding]:
        return [
            ResourceBinding(
                FunctionResource(
                    uri=_file_uri(root, path),
                    name=path.name,
                    mime_type=_mime_type(path),
                    fn=partial(_read, path),
                )
            )
            for root in self._skills.values()
            for path in _files(root)
        ]

    def methods(self) -> Sequence[MethodBinding]:
        return [
            MethodBinding("skills/list", PaginatedRequestParams, self._list),
            MethodBinding("skills/get", GetSkillParams, self._get),
        ]

    async def _list(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> dict[str, Any]:
        skills = [_entry(uri, root) for uri, root in self._skills.items()]
        return _cacheable({"skills": skills}, ctx.protocol_version)

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: GetSkillParams) -> dict[str, Any]:
        root = self._skills.get(params.uri)
        if root is None:
            raise MCPError(code=INVALID_PARAMS, message=f"No skill is served at {params.uri}")
        return _cacheable({"skill": _entry(params.uri, root)}, ctx.protocol_version)

    async def keep_capability(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Put the extension back into a 2025-era initialize result.

        mcp 2.3 shapes an initialize result by the 2025 schema, which has no `capabilities.extensions`,
        so the declaration is dropped there; ChatGPT's importer reads it from there, so it must stay.
        (2026-07-28's server/discover keeps it without help.)
        """
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            capabilities = result.setdefault("capabilities", {})
            extensions = capabilities.get("extensions") or {}
            capabilities["extensions"] = {**extensions, SKILLS_EXTENSION: self.settings()}
        return result


def _entry(uri: str, root: Path) -> dict[str, Any]:
    resources = []
    for path in _files(root):
        data = _read_bytes(path)
        resources.append(
            {"uri": _file_uri(root, path), "digest": f"sha256:{hashlib.sha256(data).hexdigest()}", "size": len(data)}
        )
    return {"uri": uri, "frontmatter": front_matter(root / SKILL_FILE), "resources": resources}


def _cacheable(result: dict[str, Any], protocol_version: str | None) -> dict[str, Any]:
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        result.update(ttlMs=LISTING_TTL_MS, cacheScope="public")
    return result


def _files(root: Path) -> list[Path]:
    """The regular files under root; links are not followed, into folders or to files."""
    found = []
    for where, folders, names in os.walk(root, followlinks=False):
        folders[:] = [name for name in folders if name not in _IGNORED]
        found += [Path(where) / name for name in names if name not in _IGNORED and _regular(Path(where) / name)]
    return sorted(found)


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, refused (OSError) if it has become a link or anything but a regular file."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        return file.read()


def _file_uri(root: Path, path: Path) -> str:
    return f"skill://{root.name}/{path.relative_to(root).as_posix()}"


def _mime_type(path: Path) -> str:
    if path.suffix == ".md":
        return "text/markdown"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _read(path: Path) -> str | bytes:
    # Bytes, never read_text(): newline translation would change the bytes the digest covers.
    data = _read_bytes(path)
    if not _mime_type(path).startswith("text/"):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


# The front matter this file reads: `key: value` lines, and one level of nested `key: value` lines
# (metadata:). Lists, block scalars and flow collections are refused rather than served wrong.
_KEY = re.compile(r"(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):(?: +(?P<value>.*?))? *$")
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def front_matter(skill_md: Path) -> dict[str, Any]:
    """The YAML front matter at the top of a SKILL.md, as a dict; ValueError names the file and line."""
    lines = _read_bytes(skill_md).decode("utf-8-sig").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError(f"{skill_md}: a SKILL.md starts with a '---' line and YAML front matter")
    fields: dict[str, Any] = {}
    parent: dict[str, Any] | None = None
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return fields
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY.fullmatch(line)
        if match is None or (match["indent"] and parent is None):
            raise ValueError(f"{skill_md}:{number}: skills_mcp.py reads only `key: value` front matter lines")
        value = match["value"]
        if match["indent"]:
            assert parent is not None
            parent[match["key"]] = _scalar(value or "", skill_md, number)
        elif value is None:
            parent = fields[match["key"]] = {}
        else:
            parent = None
            fields[match["key"]] = _scalar(value, skill_md, number)
    raise ValueError(f"{skill_md}: the front matter has no closing '---' line")


def _scalar(text: str, skill_md: Path, number: int) -> Any:
    if text[:1] in {"[", "{", "|", ">", "&", "*", "!"} or text.startswith("- "):
        raise ValueError(f"{skill_md}:{number}: skills_mcp.py reads plain values only; quote this one")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return json.loads(text)
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if " #" in text:
        text = text.split(" #", 1)[0].rstrip()
    constants = {"true": True, "false": False, "null": None, "~": None}
    if text in constants:
        return constants[text]
    if _NUMBER.fullmatch(text):
        return json.loads(text)
    if ": " in text:
        raise ValueError(f"{skill_md}:{number}: a value holding ': ' must be quoted")
    return text
