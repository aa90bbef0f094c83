"""`appsdk plugin init`: make an app a plugin, from what the project and its server say about it.

Writes `.codex-plugin/plugin.json` (identity from pyproject.toml and the server; `interface` from the
server's tools and widgets; URLs as marked placeholders), `.codex-mcp.json` pointing at the app's /mcp URL, and
`assets/logo.png`, a generated placeholder. Every file is written whole and renamed into place.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.plugin import images
from appsdk_cli.plugin.manifest import CODEX_MANIFEST, MCP_CONFIG
from appsdk_cli.plugin.rules import (
    BACKGROUNDS,
    KEBAB,
    MIN_CONTRAST,
    NAME_LIMIT,
    PLACEHOLDER_MARK,
    PROMPT_LIMIT,
    PROMPTS_LIMIT,
    SEMVER,
    TEXT_LIMITS,
)
from appsdk_cli.safewrite import write_file

LOGO = "assets/logo.png"
LOGO_SIZE = 512
DEFAULT_CATEGORY = "Productivity"
# Clearly fake and on a reserved domain (RFC 2606), so `plugin check` can tell they were never replaced.
PLACEHOLDER_SITE = f"https://{PLACEHOLDER_MARK.lower()}.example.com"
# Mid-tones that keep 2:1 against both #FFFFFF and #212121; the plugin's name picks one.
PALETTE = ("#10A37F", "#2F6FEB", "#B5508F", "#C2571A", "#7A5AE0", "#0E8A9E", "#5C7C2E", "#D0374F")


@dataclass(frozen=True)
class InitResult:
    root: Path
    name: str
    files: tuple[str, ...]  # relative, in the order written
    mcp_url: str
    mcp_url_source: str  # "--url", "[tool.appsdk.tunnel] domain" or "the local dev URL"
    server_source: str  # where the tools were read from
    placeholders: tuple[str, ...] = field(default_factory=tuple)  # manifest fields left for the user


def _kebab(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:NAME_LIMIT].strip("-")


def _shorten(text: str, limit: int) -> str:
    """Whole words, no trailing punctuation, at most `limit` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0]
    return (cut if len(cut) <= limit else text[:limit]).rstrip(" ,;:-—(")


def _project_table(root: Path) -> dict[str, Any]:
    import tomllib

    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    except tomllib.TOMLDecodeError as error:
        raise AppsdkError(f"{path} is not valid TOML: {error}") from error
    return table if isinstance(table, dict) else {}


def _server_snapshot(root: Path, server_url: str | None, timeout: float) -> tuple[Any, str]:
    """What the server lists (no tool is called): --server, else the app imported in memory (it sees every
    tool even when the app signs users in), else the project's running `appsdk dev`."""
    from appsdk_cli.connection import Target
    from appsdk_cli.project import app_target, find_dev_state
    from appsdk_cli.snapshot.live import collect_live
    from appsdk_cli.snapshot.local import collect_path

    if server_url is not None:
        return collect_live(Target(url=server_url, source="--server", timeout=timeout), call_tools=False), server_url
    app = app_target(root)
    try:
        return collect_path(app, timeout=timeout, call_tools=False), f"{app.spec} (imported in memory)"
    except AppsdkError as problem:
        state = find_dev_state(root)
        if state is not None:
            target = Target(url=state.url, source=".appsdk/dev.json", timeout=timeout)
            return collect_live(target, call_tools=False), state.url
        # Not every plugin's server is Python in this folder: a running one will do as well.
        raise AppsdkError(
            f"{problem.message}; to read a running server instead, give --server http://…/mcp", detail=problem.detail
        ) from problem


def mcp_url_for(root: Path, url: str | None) -> tuple[str, str]:
    """The /mcp URL for .codex-mcp.json: --url, else the reserved tunnel domain, else the local dev URL."""
    from appsdk_cli.project import DEFAULT_URL, read_config
    from appsdk_cli.tunnel import configured_domain

    if url:
        if not re.match(r"https?://[^/\s]+", url):
            raise UsageError(f"--url {url!r} is not an http(s) URL; give the app's /mcp address")
        return url, "--url"
    domain = configured_domain(read_config(root))
    if domain:
        host = re.sub(r"^https?://", "", domain).rstrip("/")
        return f"https://{host}/mcp", "[tool.appsdk.tunnel] domain"
    return DEFAULT_URL, "the local dev URL"


def brand_colour(name: str) -> str:
    colour = PALETTE[zlib.crc32(name.encode()) % len(PALETTE)]
    rgb = images.hex_colour(colour)
    assert rgb and all(images.contrast(rgb, bg) >= MIN_CONTRAST for bg in BACKGROUNDS.values())
    return colour


def build_manifest(project: dict[str, Any], snapshot: Any, *, folder: str, category: str) -> dict[str, Any]:
    from appsdk_cli.appmeta import tool_meta

    raw_name = str(project.get("name") or snapshot.server_name or folder)
    name = raw_name if KEBAB.fullmatch(raw_name) and len(raw_name) <= NAME_LIMIT else _kebab(raw_name)
    if not name:
        raise AppsdkError(f"cannot make a plugin name out of {raw_name!r}; set [project] name in pyproject.toml")
    version = str(project.get("version") or "")
    version = version if SEMVER.fullmatch(version) else "0.1.0"
    display = _shorten(" ".join(word.capitalize() for word in name.split("-")), TEXT_LIMITS["displayName"])
    tools = [tool for tool in snapshot.unique_tools()]
    metas = [tool_meta(tool) for tool in tools]
    description = str(project.get("description") or "").strip()
    if not description and snapshot.instructions:
        description = snapshot.instructions.strip().split("\n")[0]
    if not description:
        description = f"{display}: an app for ChatGPT and Codex."
    visible = [(tool, meta) for tool, meta in zip(tools, metas, strict=True) if meta.model_visible]
    titles = [str(tool.get("title") or meta.name) for tool, meta in visible]
    widget_titles = [str(tool.get("title")) for tool, meta in visible if meta.template and tool.get("title")]
    short_source = next((t for t in widget_titles if len(t) <= TEXT_LIMITS["shortDescription"]), description)
    long_parts = [description]
    for tool, meta in visible:
        what = str(tool.get("description") or "").strip()
        if what:
            long_parts.append(f"{tool.get('title') or meta.name}: {what}")
    authors = project.get("authors")
    author = authors[0] if isinstance(authors, list) and authors and isinstance(authors[0], dict) else {}
    developer = str(author.get("name") or display)
    capabilities = []
    if any(meta.template for meta in metas):
        capabilities.append("Interactive")
    if any(meta.read_only is True for meta in metas):
        capabilities.append("Read")
    if any(meta.read_only is not True for meta in metas):
        capabilities.append("Write")
    prompts: list[str] = []
    for title in titles:
        prompt = _shorten(title.replace("@", ""), PROMPT_LIMIT)
        if prompt and prompt.lower() not in {p.lower() for p in prompts}:
            prompts.append(prompt)
    manifest: dict[str, Any] = {
        "name": name,
        "version": version,
        "description": description,
    }
    if author.get("name"):
        manifest["author"] = {key: str(author[key]) for key in ("name", "email") if author.get(key)}
    manifest |= {
        "mcpServers": f"./{MCP_CONFIG}",
        "interface": {
            "displayName": display,
            "shortDescription": _shorten(short_source, TEXT_LIMITS["shortDescription"]),
            "longDescription": _shorten(" ".join(long_parts), TEXT_LIMITS["longDescription"]),
            "developerName": _shorten(developer, TEXT_LIMITS["developerName"]),
            "category": category,
            "capabilities": capabilities,
            "websiteURL": f"{PLACEHOLDER_SITE}/",
            "privacyPolicyURL": f"{PLACEHOLDER_SITE}/privacy",
            "termsOfServiceURL": f"{PLACEHOLDER_SITE}/terms",
            "defaultPrompt": prompts[:PROMPTS_LIMIT],
            "brandColor": brand_colour(name),
            "composerIcon": f"./{LOGO}",
            "logo": f"./{LOGO}",
        },
    }
    if not prompts:
        del manifest["interface"]["defaultPrompt"]
    return manifest


def _write(root: Path, path: Path, data: bytes) -> None:
    write_file(root / path, data, root=root)


def init_plugin(
    root: Path,
    *,
    url: str | None = None,
    server_url: str | None = None,
    category: str = DEFAULT_CATEGORY,
    force: bool = False,
    timeout: float = 30.0,
) -> InitResult:
    root = root.resolve()
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder; give the app's project folder")
    if not category.strip():
        raise UsageError("--category is empty; give one such as Productivity")
    existing = [p for p in (CODEX_MANIFEST, MCP_CONFIG, LOGO) if (root / p).exists()]
    if existing and not force:
        raise AppsdkError(f"{', '.join(existing)} already exist in {root}; pass --force to overwrite them")
    mcp_url, url_source = mcp_url_for(root, url)
    snapshot, server_source = _server_snapshot(root, server_url, timeout)
    manifest = build_manifest(_project_table(root), snapshot, folder=root.name, category=category.strip())
    name = manifest["name"]
    config = {"mcpServers": {name: {"type": "streamable_http", "url": mcp_url}}}
    rgb = images.hex_colour(manifest["interface"]["brandColor"])
    assert rgb is not None
    try:
        _write(root, LOGO, images.placeholder_logo(LOGO_SIZE, rgb))
        _write(root, MCP_CONFIG, (json.dumps(config, indent=2) + "\n").encode())
        _write(root, CODEX_MANIFEST, (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode())
    except OSError as error:
        raise AppsdkError(f"cannot write the plugin files into {root}: {error.strerror or error}") from error
    placeholders = (
        "interface.websiteURL",
        "interface.privacyPolicyURL",
        "interface.termsOfServiceURL",
        f"{LOGO} (a generated logo)",
    )
    return InitResult(
        root,
        name,
        (CODEX_MANIFEST, MCP_CONFIG, LOGO),
        mcp_url,
        url_source,
        server_source,
        placeholders,
    )
