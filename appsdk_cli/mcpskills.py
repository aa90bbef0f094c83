"""Skills over MCP (SEP-2640, the io.modelcontextprotocol/skills extension), as a host reads them.

What a skill entry must be and how a file is verified against it, as plain functions over wire dicts:
`appsdk check` judges a server by them, `appsdk read` verifies a skill file with them, the workbench
shows what they say. Nothing here talks to a server.

The spec: https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/stable/skills.mdx
The skill format it delegates to: https://agentskills.io/specification
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import Any

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
SPEC = "https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/stable/skills.mdx"
AGENT_SKILLS = "https://agentskills.io/specification"
# SEP-2640 "Limits": what every conforming host must accept, per skill.
MAX_FILES = 512
MAX_TOTAL_BYTES = 16 * 1024 * 1024
# Agent Skills: name 1-64 lowercase letters, digits and single hyphens; description 1-1024 characters.
MAX_NAME = 64
MAX_DESCRIPTION = 1024
NAME_PATTERN = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
DIGEST_PATTERN = re.compile(r"sha256:[0-9a-f]{64}")


def declared(capabilities: dict[str, Any] | None) -> bool:
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and SKILLS_EXTENSION in extensions


def digest(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def content_bytes(read_result: dict[str, Any] | None, uri: str) -> bytes | None:
    """The bytes a resources/read result carries for `uri`: text as UTF-8, a blob decoded; None if absent."""
    contents = read_result.get("contents") if isinstance(read_result, dict) else None
    items = [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
    item = next((c for c in items if c.get("uri") == uri), items[0] if len(items) == 1 else None)
    if item is None:
        return None
    if isinstance(item.get("text"), str):
        return item["text"].encode("utf-8")
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True)
        except ValueError:
            return None
    return None


def skill_name(uri: str) -> str:
    """The skill's name as its URI says it: the path segment before /SKILL.md."""
    path = uri.split("://", 1)[-1].removesuffix(f"/{SKILL_FILE}")
    return path.rsplit("/", 1)[-1]


def skill_root(uri: str) -> str:
    return uri.removesuffix(SKILL_FILE)


def files(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The entry's file list (empty when `resources` is "dynamic" or malformed)."""
    resources = entry.get("resources")
    return [r for r in resources if isinstance(r, dict)] if isinstance(resources, list) else []


def manifest_problems(entry: dict[str, Any]) -> list[str]:
    """What is wrong with an entry's `resources` as SEP-2640 defines it, one sentence each."""
    uri = str(entry.get("uri", ""))
    resources = entry.get("resources")
    if resources == "dynamic":
        return []
    if not isinstance(resources, list):
        return ['`resources` is neither a list of files nor "dynamic"; a host must not load the skill']
    problems = []
    uris = [str(r.get("uri", "")) for r in files(entry)]
    if uri not in uris:
        problems.append(f"the file list leaves out the skill's own {SKILL_FILE}")
    if len(set(uris)) != len(uris):
        problems.append("the file list names a file twice")
    outside = [u for u in uris if not u.startswith(skill_root(uri))]
    if outside:
        problems.append(f"{outside[0]} is outside the skill's folder {skill_root(uri)}")
    for file in files(entry):
        if not isinstance(file.get("digest"), str) or not DIGEST_PATTERN.fullmatch(file["digest"]):
            problems.append(f"{file.get('uri')} has no digest of the form sha256:<64 lowercase hex>")
        size = file.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            problems.append(f"{file.get('uri')} has no size in bytes")
    if len(uris) > MAX_FILES:
        problems.append(f"{len(uris)} files, above the {MAX_FILES} every host must accept")
    total = sum(f["size"] for f in files(entry) if isinstance(f.get("size"), int))
    if total > MAX_TOTAL_BYTES:
        problems.append(f"{total} bytes in all, above the {MAX_TOTAL_BYTES} (16 MiB) every host must accept")
    return problems


def front_matter_problems(entry: dict[str, Any]) -> list[str]:
    """What is wrong with the entry's `frontmatter` name and description (Agent Skills, SEP-2640)."""
    front = entry.get("frontmatter")
    if not isinstance(front, dict):
        return ["the entry has no `frontmatter` object"]
    problems = []
    name, description = front.get("name"), front.get("description")
    if not isinstance(name, str) or not name:
        problems.append("the front matter has no `name`")
    elif len(name) > MAX_NAME or not NAME_PATTERN.fullmatch(name):
        problems.append(
            f"name {name!r} is not an Agent Skills name: 1-{MAX_NAME} lowercase letters, digits and single hyphens"
        )
    elif name != skill_name(str(entry.get("uri", ""))):
        problems.append(f"name {name!r} differs from the skill's folder in its URI, {skill_name(str(entry['uri']))!r}")
    if not isinstance(description, str) or not description.strip():
        problems.append("the front matter has no `description`")
    elif len(description) > MAX_DESCRIPTION:
        problems.append(f"the description is {len(description)} characters, above {MAX_DESCRIPTION}")
    return problems


def parse_front_matter(text: str) -> dict[str, Any] | str:
    """A SKILL.md's YAML front matter as a dict, or one sentence saying why it cannot be read."""
    import yaml

    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return "it does not start with a '---' line and YAML front matter"
    end = next((i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---"), None)
    if end is None:
        return "its front matter has no closing '---' line"
    try:
        parsed = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as problem:
        return f"its front matter is not YAML: {str(problem).splitlines()[0]}"
    if not isinstance(parsed, dict):
        return "its front matter is not a mapping of fields"
    # YAML reads `1:` as the number 1; a listing in JSON can only say "1", so a host cannot match it.
    odd = [key for key in parsed if not isinstance(key, str)]
    if odd:
        return f"its front matter key {odd[0]!r} is not a string (quote it)"
    return parsed


@dataclass(frozen=True)
class FileVerdict:
    uri: str
    problem: str | None  # None: the bytes are what the entry lists


def verify_file(listed: dict[str, Any], data: bytes | None) -> FileVerdict:
    """Does a file's content match its entry's size and digest, as a host checks before using it?"""
    uri = str(listed.get("uri", ""))
    if data is None:
        return FileVerdict(uri, "resources/read returned no content for it")
    if isinstance(listed.get("size"), int) and listed["size"] != len(data):
        return FileVerdict(uri, f"it is {len(data)} bytes, the entry lists {listed['size']}")
    if listed.get("digest") != digest(data):
        return FileVerdict(uri, f"its bytes hash to {digest(data)}, the entry lists {listed.get('digest')}")
    return FileVerdict(uri, None)


# Where a skill's prose names a tool: a code span that starts with it (`list-books`, `when(month)`), or a
# `tool:` reference (tool: list-books). A bare word is English: a tool named `when` or `search` is not
# named by "Use when the user asks" or "search the picks".
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_TOOL_REFERENCE = re.compile(r"\btool:[ \t]*`?([^\s`,;()]+)", re.IGNORECASE)


def named_tools(text: str, tool_names: list[str]) -> list[str]:
    """The tools a skill's text names (in a code span or a `tool:` reference), in the order the server
    lists them."""
    named = {match.group(1).rstrip(".:") for match in _TOOL_REFERENCE.finditer(text)}
    for match in _CODE_SPAN.finditer(text):
        words = match.group(2).strip().split("(", 1)[0].split()
        if words:
            named.add(words[0])
    return [name for name in tool_names if name in named]


ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "openWorldHint")


def missing_hints(tool: dict[str, Any]) -> list[str]:
    """The behaviour hints a tool leaves to their defaults (a host then assumes the worst)."""
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    return [hint for hint in ANNOTATION_HINTS if not isinstance(annotations.get(hint), bool)]
