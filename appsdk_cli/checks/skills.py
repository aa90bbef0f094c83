"""Skills over MCP (SEP-2640): are the server's skills what a skill importer can load?

A host such as ChatGPT imports a server's skills only through `skills/list`, fetches each file with
`resources/read`, and refuses a file whose bytes do not match the listed sha256 digest and size, a
SKILL.md whose front matter differs from the listing, or a skill over the per-skill limits. These rules
fetch what such an importer fetches (snapshot/) and judge it the same way.

Sources: SEP-2640 (mcpskills.SPEC) and the Agent Skills format it delegates to (mcpskills.AGENT_SKILLS).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from appsdk_cli import mcpskills
from appsdk_cli.checks.model import Finding, Rule, Severity
from appsdk_cli.snapshot.model import Snapshot

SPEC = mcpskills.SPEC
AGENT_SKILLS = mcpskills.AGENT_SKILLS

LIST_FAILS = Rule(
    "APPS001",
    "skills-list-fails",
    Severity.ERROR,
    "The server declares the skills extension but `skills/list` fails",
    f"A server declaring io.modelcontextprotocol/skills must answer skills/list; importers list skills "
    f"through it and nothing else: {SPEC}#listing-skills",
)
GET_FAILS = Rule(
    "APPS002",
    "skill-get-fails",
    Severity.ERROR,
    "A listed skill that `skills/get` does not return, or returns differently from the listing",
    f"A server must answer skills/get for every skill it serves, with the same entry the listing has: "
    f"{SPEC}#getting-a-skill",
)
DIGEST_MISMATCH = Rule(
    "APPS003",
    "skill-digest-mismatch",
    Severity.ERROR,
    "A skill file whose bytes do not match the sha256 digest or size its entry lists, or that cannot be read",
    f"A host must verify every file it reads against the entry and must not use content that fails: "
    f"{SPEC}#integrity-and-verification",
)
MANIFEST_INVALID = Rule(
    "APPS004",
    "skill-manifest-invalid",
    Severity.ERROR,
    "A skill entry whose file list is incomplete or malformed (no SKILL.md, no digest or size) or over the limits",
    f"The file list must be complete, each file with a sha256:<hex> digest and a size, within 512 files "
    f"and 16 MiB a skill: {SPEC}#resources",
)
FRONT_MATTER = Rule(
    "APPS005",
    "skill-front-matter",
    Severity.ERROR,
    "A skill whose name or description breaks the Agent Skills rules, or whose SKILL.md says otherwise than "
    "the listing",
    f"The name (1-64 lowercase letters, digits, hyphens) is the skill's folder in its URI; the description "
    f"is 1-1024 characters; a host compares the served front matter field by field and refuses a "
    f"difference: {AGENT_SKILLS}, {SPEC}#frontmatter-verification",
)
TOOL_HINTS = Rule(
    "APPS006",
    "skill-tool-hints-implicit",
    Severity.ERROR,
    "A skill names a tool (in a code span or a `tool:` reference) that leaves `readOnlyHint`, `destructiveHint` "
    "or `openWorldHint` unset",
    "A skill tells the model to call the tools it names; an unset hint means the worst (may write, may "
    "destroy, reaches outside), so a host confirms each such call with the user and the skill's steps stall: "
    "https://modelcontextprotocol.io/specification/2025-11-25/schema#toolannotations",
)
DYNAMIC = Rule(
    "APPS007",
    "skill-dynamic",
    Severity.WARNING,
    'A skill whose `resources` is "dynamic": no digests to verify',
    f"Hosts may decline a skill whose content cannot be verified or bound to the user's approval: {SPEC}#resources",
)
FOLDER_NOT_SERVED = Rule(
    "APPS008",
    "skills-not-served",
    Severity.WARNING,
    "The project has a skills/ folder, but the server does not declare the skills extension",
    "Hosts import a server's skills only through skills/list, which a server offers only once it declares "
    f"io.modelcontextprotocol/skills: {SPEC}#capability-negotiation",
)
FILE_LINKED = Rule(
    "APPS009",
    "skill-file-linked",
    Severity.ERROR,
    "A file or folder in the project's skills/ that is a symbolic link (or not a regular file)",
    "A server that follows it serves whatever it points at (a .env, a key) as part of a skill; skills_mcp.py "
    "serves only regular files inside skills/, and Codex rejects a plugin whose files are links for the same "
    "reason (PLUG rules)",
)
RULES = (
    LIST_FAILS,
    GET_FAILS,
    DIGEST_MISMATCH,
    MANIFEST_INVALID,
    FRONT_MATTER,
    TOOL_HINTS,
    DYNAMIC,
    FOLDER_NOT_SERVED,
    FILE_LINKED,
)

_SERVER = "server"


def skill_target(uri: str) -> str:
    return f"skill {uri}"


def check(snapshot: Snapshot) -> Iterator[Finding]:
    if not snapshot.skills_declared:
        return
    if snapshot.skills_error:
        yield Finding(
            LIST_FAILS,
            _SERVER,
            f"skills/list failed: {snapshot.skills_error}",
            "serve skills/list (skills_mcp.py in a new app does), or stop declaring io.modelcontextprotocol/skills",
        )
        return
    tool_names = [str(t.get("name")) for t in snapshot.unique_tools()]
    tools = {str(t.get("name")): t for t in snapshot.unique_tools()}
    for entry in snapshot.skills:
        if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
            yield Finding(MANIFEST_INVALID, _SERVER, "skills/list holds an entry without a uri", "give each a uri")
            continue
        yield from _entry(snapshot, entry, tool_names, tools)


def _entry(
    snapshot: Snapshot, entry: dict[str, Any], tool_names: list[str], tools: dict[str, dict[str, Any]]
) -> Iterator[Finding]:
    uri = entry["uri"]
    target = skill_target(uri)
    yield from _got(snapshot, entry)
    for problem in mcpskills.front_matter_problems(entry):
        yield Finding(FRONT_MATTER, target, f"{uri}: {problem}", _front_matter_fix(uri))
    if entry.get("resources") == "dynamic":
        yield Finding(DYNAMIC, target, f"{uri} lists no files to verify", "serve fixed files and list their digests")
    for problem in mcpskills.manifest_problems(entry):
        yield Finding(MANIFEST_INVALID, target, f"{uri}: {problem}", "list every file once with its digest and size")
    for listed in mcpskills.files(entry):
        file_uri = str(listed.get("uri", ""))
        if file_uri in snapshot.skill_read_errors:
            verdict = mcpskills.FileVerdict(file_uri, f"resources/read failed: {snapshot.skill_read_errors[file_uri]}")
        elif file_uri in snapshot.skill_reads:
            data = mcpskills.content_bytes(snapshot.skill_reads[file_uri], file_uri)
            verdict = mcpskills.verify_file(listed, data)
        else:
            continue  # beyond what a host must read (mcpskills.MAX_FILES): the manifest rule says so
        if verdict.problem:
            yield Finding(
                DIGEST_MISMATCH,
                target,
                f"{file_uri}: {verdict.problem}",
                "list the digest and size of the bytes resources/read sends (sha256 of the raw file, not of "
                "re-encoded text)",
            )
    skill_md = mcpskills.content_bytes(snapshot.skill_reads.get(uri), uri)
    if skill_md is None:
        return
    text = skill_md.decode("utf-8", errors="replace")
    served = mcpskills.parse_front_matter(text)
    if isinstance(served, str):
        message = f"{uri}: the served {mcpskills.SKILL_FILE}: {served}"
        yield Finding(FRONT_MATTER, target, message, _front_matter_fix(uri))
    elif isinstance(entry.get("frontmatter"), dict) and served != entry["frontmatter"]:
        differing = sorted(k for k in {*served, *entry["frontmatter"]} if served.get(k) != entry["frontmatter"].get(k))
        yield Finding(
            FRONT_MATTER,
            target,
            f"{uri}: the served front matter and the listing's differ in {', '.join(differing)}",
            "build the listing's frontmatter from the file itself, verbatim",
        )
    for name in mcpskills.named_tools(text, tool_names):
        missing = mcpskills.missing_hints(tools[name])
        if missing:
            yield Finding(
                TOOL_HINTS,
                target,
                f"{uri} names tool {name}, which leaves {', '.join(missing)} unset",
                f"declare all three in {name}'s annotations, e.g. "
                '{"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false}',
            )


def _got(snapshot: Snapshot, entry: dict[str, Any]) -> Iterator[Finding]:
    uri = entry["uri"]
    fix = "answer skills/get for every listed skill with the entry skills/list gives (skills_mcp.py does)"
    if uri in snapshot.skill_get_errors:
        yield Finding(GET_FAILS, skill_target(uri), f"skills/get {uri} failed: {snapshot.skill_get_errors[uri]}", fix)
        return
    got = snapshot.skill_gets.get(uri)
    if got is None:
        return
    skill = got.get("skill") if isinstance(got, dict) else None
    if not isinstance(skill, dict):
        yield Finding(GET_FAILS, skill_target(uri), f"skills/get {uri} answered without a `skill` entry", fix)
    elif skill != entry:
        differing = sorted(k for k in {*skill, *entry} if skill.get(k) != entry.get(k))
        yield Finding(
            GET_FAILS,
            skill_target(uri),
            f"skills/get {uri} and skills/list differ in {', '.join(differing)}",
            fix,
        )


def _front_matter_fix(uri: str) -> str:
    name = mcpskills.skill_name(uri)
    return (
        f"start skills/{name}/SKILL.md with front matter: ---, name: {name}, description: what it does and when "
        "to use it (at most 1024 characters), ---"
    )


def folder_findings(project: Path, snapshot: Snapshot) -> list[Finding]:
    """The project's own skills/ folder (only the project's files tell): a link or other non-regular file in
    it, and skills the server does not serve."""
    folder = project / "skills"
    if folder.is_symlink() or not folder.is_dir():
        return []
    findings = list(_linked(folder))
    if snapshot.skills_declared or not any(folder.glob(f"*/{mcpskills.SKILL_FILE}")):
        return findings
    return [
        *findings,
        Finding(
            FOLDER_NOT_SERVED,
            _SERVER,
            f"{folder} holds skills, but the server does not declare {mcpskills.SKILLS_EXTENSION}",
            "serve them: copy skills_mcp.py from a new app (`appsdk new`), then skills = SkillsOverMcp(folder) "
            "and MCPServer(..., extensions=[skills], middleware=[skills.keep_capability])",
        ),
    ]


def _linked(folder: Path) -> Iterator[Finding]:
    """Every entry under `folder` that is a link or not a regular file or folder; links are not followed."""
    for where, folders, names in os.walk(folder, followlinks=False):
        for name in sorted(folders + names):
            path = Path(where) / name
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                continue
            shown = path.relative_to(folder.parent).as_posix()
            what = f"a symbolic link to {os.readlink(path)}" if stat.S_ISLNK(mode) else "not a regular file"
            yield Finding(
                FILE_LINKED,
                f"file {shown}",
                f"{shown} is {what}; a skill may hold only regular files inside skills/",
                f"replace {shown} with a copy of the file itself, or remove it (never link a secret into skills/)",
            )
