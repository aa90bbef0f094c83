"""Find and read a plugin's manifest exactly as Codex's loader does.

Codex (codex-rs core-plugins, and the plugins docs summarised in platform-2026.md §5):
- a root `plugin.json` is the manifest only when its `$schema` is an Agent Plugins schema; the
  supported 1.0.0 one makes it the base, any other agent-plugins.org version makes Codex reject the
  plugin (fail closed); a root `plugin.json` with another or no `$schema` is not a manifest at all;
- with an Agent Plugins base, `.codex-plugin/plugin.json` is read as an overlay on it;
- otherwise the first of `.codex-plugin/`, `.claude-plugin/`, `.cursor-plugin/` `plugin.json`;
- a manifest that is, or sits in, a symlink is rejected, and the search stops there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.plugin.tree import read_regular

CODEX_MANIFEST = ".codex-plugin/plugin.json"
MANIFEST_PATHS = (CODEX_MANIFEST, ".claude-plugin/plugin.json", ".cursor-plugin/plugin.json")
ROOT_MANIFEST = "plugin.json"
AGENT_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
AGENT_SCHEMA_PREFIX = "https://agent-plugins.org/schemas/"
# The closed Agent Plugins 1.0.0 set: any other key makes a strict client reject the file.
AGENT_FIELDS = frozenset(
    {
        "$schema",
        "name",
        "version",
        "description",
        "author",
        "homepage",
        "repository",
        "license",
        "keywords",
        "extensions",
    }
)
# What Codex reads from a manifest; anything else is ignored (usually a typo such as mcp_servers).
CODEX_FIELDS = frozenset(
    {
        "name",
        "version",
        "description",
        "author",
        "homepage",
        "repository",
        "license",
        "keywords",
        "skills",
        "hooks",
        "mcpServers",
        "apps",
        "interface",
    }
)
INTERFACE_FIELDS = frozenset(
    {
        "displayName",
        "shortDescription",
        "longDescription",
        "developerName",
        "category",
        "capabilities",
        "websiteURL",
        "privacyPolicyURL",
        "termsOfServiceURL",
        "defaultPrompt",
        "brandColor",
        "composerIcon",
        "logo",
        "logoDark",
        "screenshots",
    }
)
# Where Codex reads a plugin's MCP servers when its manifest names no file: `.mcp.json` at the plugin root
# (openai/codex, codex-rs/core-plugins/src/loader.rs: plugin_mcp_config_paths falls back to
# DEFAULT_MCP_CONFIG_FILE; a manifest's `mcpServers` path overrides it).
CODEX_DEFAULT_MCP_CONFIG = ".mcp.json"
# Where `appsdk plugin init` writes the app's server for Codex, named by the manifest's `mcpServers`. Not
# .mcp.json: in a project folder Claude Code reads .mcp.json as the project's own MCP servers (its
# "project" scope, code.claude.com/docs/en/mcp), so a coding agent opened in the app's folder was offered
# the app itself as one of its servers (and `claude mcp add --scope project` writes into the same file).
MCP_CONFIG = ".codex-mcp.json"
JSON_LIMIT = 16 * 1024 * 1024  # a manifest or marketplace file larger than this is not one
MARKETPLACE_PATHS = (
    ".agents/plugins/marketplace.json",
    ".agents/plugins/api_marketplace.json",
    ".claude-plugin/marketplace.json",
    ".cursor-plugin/marketplace.json",
)


@dataclass
class Discovery:
    """What Codex would load from one folder, and why it would refuse, if it would."""

    root: Path
    manifest: str | None = None  # the file Codex reads (relative), None when there is none
    base: str | None = None  # the root plugin.json under an Agent Plugins overlay
    data: dict[str, Any] = field(default_factory=dict)  # the merged manifest
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)  # each file read, as parsed
    rejected: str | None = None  # a relative path whose symlink makes Codex reject the plugin
    unreadable: dict[str, str] = field(default_factory=dict)  # relative path -> why it does not parse
    unsupported_schema: str | None = None
    ignored_root: bool = False  # a root plugin.json that is not an Agent Plugins manifest

    @property
    def found(self) -> bool:
        return self.manifest is not None and not self.rejected and not self.unreadable


def _linked_part(root: Path, relative: str) -> str | None:
    """The first component of root/relative that is a symlink (relative), or None."""
    current = root
    parts = Path(relative).parts
    for index, part in enumerate(parts):
        current = current / part
        if current.is_symlink():
            return "/".join(parts[: index + 1])
    return None


def _read_object(path: Path) -> dict[str, Any]:
    """The JSON object in path; ValueError with one line when it is not one (or not a regular file)."""
    data = read_regular(path, limit=JSON_LIMIT + 1)
    if len(data) > JSON_LIMIT:
        raise ValueError(f"is over {JSON_LIMIT // 1_048_576} MB, too large for a JSON manifest")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ValueError("is not UTF-8 text") from error
    except json.JSONDecodeError as error:
        raise ValueError(f"is not valid JSON (line {error.lineno}: {error.msg})") from error
    if not isinstance(value, dict):
        raise ValueError(f"holds a JSON {type(value).__name__}, not an object")
    return value


def discover(root: Path) -> Discovery:
    found = Discovery(root=root)
    if root.is_symlink():
        found.rejected = "."
        return found

    def load(relative: str) -> dict[str, Any] | None:
        try:
            data = _read_object(root / relative)
        except (OSError, ValueError) as error:
            found.unreadable[relative] = str(error) if isinstance(error, ValueError) else (error.strerror or str(error))
            return None
        found.sources[relative] = data
        return data

    root_file = root / ROOT_MANIFEST
    if root_file.is_symlink():
        found.rejected = ROOT_MANIFEST
        return found
    if root_file.is_file():
        try:
            schema = _read_object(root_file).get("$schema")
        except (OSError, ValueError):
            schema = None
        if isinstance(schema, str) and schema.startswith(AGENT_SCHEMA_PREFIX):
            found.manifest = found.base = ROOT_MANIFEST
            if schema != AGENT_SCHEMA:
                found.unsupported_schema = schema
            base = load(ROOT_MANIFEST) or {}
            merged = {key: value for key, value in base.items() if key != "$schema"}
            linked = _linked_part(root, CODEX_MANIFEST)
            if linked:
                found.rejected = linked
            elif (root / CODEX_MANIFEST).is_file():
                overlay = load(CODEX_MANIFEST)
                if overlay is not None:
                    merged.update(overlay)
                    found.manifest = CODEX_MANIFEST
            found.data = merged
            return found
        found.ignored_root = True
    for relative in MANIFEST_PATHS:
        linked = _linked_part(root, relative)
        if linked:
            found.rejected = linked
            found.manifest = relative
            return found
        if (root / relative).is_file():
            found.manifest = relative
            found.data = load(relative) or {}
            return found
    return found


def marketplace_files(root: Path) -> list[str]:
    """The marketplace files Codex would find in root (relative), in its order."""
    return [relative for relative in MARKETPLACE_PATHS if (root / relative).is_file()]


def read_json_object(path: Path) -> dict[str, Any]:
    return _read_object(path)
