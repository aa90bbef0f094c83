"""`appsdk plugin check`: the PLUG rules over a plugin folder (and any marketplace file in it).

Families (the digit after PLUG): 1 the manifest as Codex finds and reads it, 2 the listing (`interface`)
under the final-submission limits, 3 assets, 4 marketplace files, 5 the package archive rules.
The report is `appsdk check`'s CheckReport, so it renders and exits the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from appsdk_cli.checks.model import CheckReport, Finding, Rule, Severity
from appsdk_cli.netloc import is_this_machine
from appsdk_cli.plugin import images
from appsdk_cli.plugin.manifest import (
    AGENT_FIELDS,
    AGENT_SCHEMA,
    CODEX_DEFAULT_MCP_CONFIG,
    CODEX_FIELDS,
    INTERFACE_FIELDS,
    MANIFEST_PATHS,
    Discovery,
    discover,
    marketplace_files,
    read_json_object,
)
from appsdk_cli.plugin.tree import MAX_DEPTH, MAX_ENTRIES, NotAFile, PackageTree, read_regular, walk_package
from appsdk_cli.snapshot.model import Snapshot

E, W = Severity.ERROR, Severity.WARNING
LOADER = "Codex's plugin loader (openai/codex core-plugins)"
SUBMISSION = "the directory's final-submission checks (plugins/deploy/submission-errors)"

MANIFEST_MISSING = Rule(
    "PLUG101",
    "manifest-missing",
    E,
    f"No manifest where Codex looks: {', '.join(MANIFEST_PATHS)}, or a root plugin.json with the Agent Plugins $schema",
    f'{LOADER}: without one the folder is not a plugin ("does not contain a supported manifest")',
)
MANIFEST_INVALID = Rule(
    "PLUG102",
    "manifest-invalid",
    E,
    "A manifest that is not a JSON object",
    f"{LOADER}: it fails to parse and is skipped",
)
ROOT_MANIFEST_IGNORED = Rule(
    "PLUG103",
    "root-manifest-ignored",
    W,
    "A root plugin.json without the Agent Plugins `$schema`",
    f"{LOADER}: a root plugin.json counts only with $schema {AGENT_SCHEMA}; this one is ignored",
)
AGENT_SCHEMA_UNSUPPORTED = Rule(
    "PLUG104",
    "agent-schema-unsupported",
    E,
    "A root plugin.json with an Agent Plugins `$schema` version Codex does not support",
    f"{LOADER}: an unknown agent-plugins.org schema fails closed, the plugin is rejected",
)
AGENT_FIELDS_CLOSED = Rule(
    "PLUG105",
    "agent-manifest-closed-set",
    E,
    "A root Agent Plugins plugin.json with keys outside the closed 1.0.0 set",
    "The Agent Plugins 1.0.0 schema is closed (additionalProperties: false): strict clients reject the file; "
    "put Codex fields (interface, mcpServers, skills) in the .codex-plugin/plugin.json overlay",
)
MANIFEST_SYMLINK = Rule(
    "PLUG106",
    "manifest-symlink",
    E,
    "A manifest that is, or sits in, a symlink",
    f"{LOADER}: a linked manifest path is rejected and the search stops",
)
NAME_INVALID = Rule(
    "PLUG107",
    "name-invalid",
    E,
    "`name` missing, not kebab-case, or longer than 64 characters",
    f"It is the plugin's id in Codex and the directory; {SUBMISSION}: ≤64 of [A-Za-z0-9_-], starting alphanumeric",
)
VERSION_INVALID = Rule(
    "PLUG108",
    "version-invalid",
    E,
    "`version` missing, not semver, or longer than 64 characters",
    f"{SUBMISSION}: a semantic version of at most 64 characters; Codex caches installs per version",
)
DESCRIPTION_MISSING = Rule(
    "PLUG109",
    "description-missing",
    W,
    "No `description`",
    "Codex and the directory show it wherever the plugin is listed",
)
PATH_INVALID = Rule(
    "PLUG110",
    "manifest-path-invalid",
    E,
    "A manifest path (`skills`, `hooks`, `mcpServers`, `apps`, an asset) that does not start with ./, is ./ alone, "
    "leaves the plugin with .., or names nothing",
    f"{LOADER}: such a path is ignored with only a log line, so the component silently never loads",
)
MCP_CONFIG_INVALID = Rule(
    "PLUG111",
    "mcp-config-invalid",
    E,
    "A `.mcp.json` (or inline `mcpServers`) without servers, or a server with neither a url nor a command",
    f"{LOADER}: the plugin installs without its MCP server",
)
MCP_URL_NOT_PUBLIC = Rule(
    "PLUG112",
    "mcp-url-not-public",
    W,
    "An MCP server URL that is not public https (a localhost or plain-http address)",
    "Codex on this machine can reach it; ChatGPT and the directory need a public https /mcp (submission requirements)",
)
FIELD_UNKNOWN = Rule(
    "PLUG113",
    "manifest-field-unknown",
    W,
    "A manifest or `interface` key Codex does not read (often a typo: mcp_servers, display_name)",
    f"{LOADER}: unknown keys are ignored, so the setting has no effect",
)
MANIFEST_DIR_CLUTTER = Rule(
    "PLUG114",
    "manifest-dir-clutter",
    W,
    "Files other than plugin.json inside .codex-plugin/",
    "Codex's plugin docs: plugin.json is the only file that belongs there; skills, .mcp.json and assets live at "
    "the plugin root",
)
INTERFACE_FIELD_MISSING = Rule(
    "PLUG201",
    "interface-field-missing",
    E,
    "An `interface` field the directory listing needs is missing or empty (displayName, shortDescription, "
    "longDescription, developerName, category, websiteURL, privacyPolicyURL, termsOfServiceURL, logo)",
    f"{SUBMISSION}: the listing is refused without them",
)
LISTING_TOO_LONG = Rule(
    "PLUG202",
    "listing-too-long",
    E,
    "A listing text over its limit: displayName 30, shortDescription 30, longDescription 4000, developerName 80, "
    "capabilities 20 of 120",
    f"{SUBMISSION}: the limits of the final submission",
)
URL_NOT_HTTPS = Rule(
    "PLUG203",
    "url-not-https",
    E,
    "A listing URL (interface URLs, homepage, author.url) that is not https, or longer than 1024 characters",
    f"{SUBMISSION}: URLs must be https, at most 1024 characters",
)
URL_PLACEHOLDER = Rule(
    "PLUG204",
    "url-placeholder",
    W,
    "A listing URL still pointing at a placeholder (example.com, REPLACE-ME), as `appsdk plugin init` writes them",
    "Reviewers open every URL; replace each with your real page before submitting",
)
BRAND_COLOUR = Rule(
    "PLUG205",
    "brand-color-contrast",
    E,
    "`brandColor` not a #RRGGBB colour, or with contrast under 2:1 against #FFFFFF or #212121",
    f"{SUBMISSION}: the colour must stay legible on ChatGPT's light and dark backgrounds",
)
PROMPTS_INVALID = Rule(
    "PLUG206",
    "default-prompt-invalid",
    E,
    "`defaultPrompt`: more than 3, one over 128 characters, empty, repeated, not a string, or with an @mention",
    f"{SUBMISSION}: ≤3 distinct starter prompts of ≤128 characters, no @mentions; {LOADER} drops the others",
)
SCREENSHOTS_WITHOUT_UI = Rule(
    "PLUG207",
    "screenshots-without-ui",
    E,
    "`screenshots` on a plugin with no UI (no `apps`, and `Interactive` not among the capabilities)",
    f"{SUBMISSION}: screenshots are accepted only when the plugin has UI",
)
ASSET_MISSING = Rule(
    "PLUG301",
    "asset-missing",
    E,
    "A logo, composerIcon or screenshot file that does not exist",
    f"{LOADER}: nothing shows",
)
ASSET_TYPE = Rule(
    "PLUG302",
    "asset-type",
    E,
    "An asset that is not PNG, JPEG, WebP or SVG (by its bytes), or a screenshot that is not a PNG under ./assets/",
    f"{SUBMISSION}: the accepted asset types",
)
ASSET_SIZE = Rule(
    "PLUG303",
    "asset-dimensions",
    E,
    "A logo (or logoDark) that is not square, or a raster one under 48 or over 4096 px",
    f"{SUBMISSION}: a square logo of 48–4096 px",
)
ASSET_TOO_LARGE = Rule("PLUG304", "asset-too-large", E, "An asset over 5 MB", f"{SUBMISSION}: assets are at most 5 MB")
MARKETPLACE_INVALID = Rule(
    "PLUG401",
    "marketplace-invalid",
    E,
    "A marketplace file that is not JSON, or lacks `name` or the `plugins` list, or whose policy values Codex "
    "does not know",
    f"{LOADER}: the whole marketplace fails to load",
)
MARKETPLACE_SOURCE = Rule(
    "PLUG402",
    "marketplace-source-invalid",
    E,
    'A marketplace entry whose local `source.path` does not start with ./, is "./" itself, leaves the root, or '
    "names a folder without a manifest",
    f'{LOADER}: the entry is skipped with a log line only ("./" is silently rejected)',
)
MARKETPLACE_ENTRY = Rule(
    "PLUG403",
    "marketplace-entry-incomplete",
    W,
    "A marketplace entry without `policy` or `category`, or whose name differs from its plugin's manifest",
    "Codex fills in defaults (AVAILABLE, ON_INSTALL) and shows the plugin uncategorised; a name mismatch makes "
    "`codex plugin add NAME@MARKETPLACE` look for the wrong plugin",
)
ARCHIVE_SYMLINK = Rule(
    "PLUG501",
    "archive-symlink",
    E,
    "A symlink inside the plugin folder",
    "Package archive rules (as transcribed by MCPJam, unconfirmed): no symlinks",
)
ARCHIVE_PATH = Rule(
    "PLUG502",
    "archive-path-invalid",
    E,
    "A file name with a backslash or a .. component",
    "Package archive rules (as transcribed by MCPJam, unconfirmed): no backslashes, no ..",
)
ARCHIVE_APP_JSON = Rule(
    "PLUG503",
    "archive-app-json",
    W,
    "An `.app.json` in the plugin folder (`plugin pack` refuses to pack it)",
    "Codex reads it, but the package archive rules forbid it in an uploaded package: the app is linked in the "
    "submission portal instead",
)
ARCHIVE_LIMITS = Rule(
    "PLUG504",
    "archive-too-large",
    E,
    "More than 5000 files, or more than 512 MB before compression",
    "Package archive rules (as transcribed by MCPJam, unconfirmed): ≤5000 entries, ≤512 MB expanded, ≤100 MB "
    "compressed",
)
ARCHIVE_SPECIAL = Rule(
    "PLUG505",
    "archive-not-a-file",
    E,
    "A FIFO, socket or device (or an entry that cannot be read) inside the plugin folder",
    "A package holds regular files only, and appsdk never opens anything else: reading a FIFO waits for a "
    "writer, for good",
)
ARCHIVE_TOO_DEEP = Rule(
    "PLUG506",
    "archive-too-deep",
    E,
    f"Folders nested more than {MAX_DEPTH} deep inside the plugin folder",
    "appsdk stops walking there, so it cannot say what the package would hold; such trees are generated or "
    "copied output, not a plugin",
)
RULES: tuple[Rule, ...] = (
    MANIFEST_MISSING,
    MANIFEST_INVALID,
    ROOT_MANIFEST_IGNORED,
    AGENT_SCHEMA_UNSUPPORTED,
    AGENT_FIELDS_CLOSED,
    MANIFEST_SYMLINK,
    NAME_INVALID,
    VERSION_INVALID,
    DESCRIPTION_MISSING,
    PATH_INVALID,
    MCP_CONFIG_INVALID,
    MCP_URL_NOT_PUBLIC,
    FIELD_UNKNOWN,
    MANIFEST_DIR_CLUTTER,
    INTERFACE_FIELD_MISSING,
    LISTING_TOO_LONG,
    URL_NOT_HTTPS,
    URL_PLACEHOLDER,
    BRAND_COLOUR,
    PROMPTS_INVALID,
    SCREENSHOTS_WITHOUT_UI,
    ASSET_MISSING,
    ASSET_TYPE,
    ASSET_SIZE,
    ASSET_TOO_LARGE,
    MARKETPLACE_INVALID,
    MARKETPLACE_SOURCE,
    MARKETPLACE_ENTRY,
    ARCHIVE_SYMLINK,
    ARCHIVE_PATH,
    ARCHIVE_APP_JSON,
    ARCHIVE_LIMITS,
    ARCHIVE_SPECIAL,
    ARCHIVE_TOO_DEEP,
)

KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# semver.org's own grammar.
SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
NAME_LIMIT = VERSION_LIMIT = 64
TEXT_LIMITS = {"displayName": 30, "shortDescription": 30, "longDescription": 4000, "developerName": 80}
CAPABILITIES_LIMIT, CAPABILITY_LIMIT = 20, 120
PROMPTS_LIMIT, PROMPT_LIMIT = 3, 128
URL_LIMIT = 1024
URL_FIELDS = ("websiteURL", "privacyPolicyURL", "termsOfServiceURL")
REQUIRED_INTERFACE = (
    "displayName",
    "shortDescription",
    "longDescription",
    "developerName",
    "category",
    "websiteURL",
    "privacyPolicyURL",
    "termsOfServiceURL",
    "logo",
)
BACKGROUNDS = {"#FFFFFF": (255, 255, 255), "#212121": (0x21, 0x21, 0x21)}
MIN_CONTRAST = 2.0
LOGO_MIN, LOGO_MAX = 48, 4096
ASSET_BYTES = 5 * 1024 * 1024
ENTRIES_LIMIT = 5000
EXPANDED_LIMIT = 512 * 1024 * 1024
COMPRESSED_LIMIT = 100 * 1024 * 1024
INSTALL_POLICIES = ("NOT_AVAILABLE", "AVAILABLE", "INSTALLED_BY_DEFAULT")
AUTH_POLICIES = ("ON_INSTALL", "ON_USE")
PLACEHOLDER_MARK = "REPLACE-ME"
_PLACEHOLDER_HOSTS = ("example.com", "example.org", "example.net")


def is_placeholder_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return PLACEHOLDER_MARK.lower() in url.lower() or any(
        host == h or host.endswith("." + h) for h in _PLACEHOLDER_HOSTS
    )


def check_plugin(root: Path, *, strict: bool = False) -> CheckReport:
    """Every PLUG rule over one folder: a plugin, a marketplace root, or both."""
    root = root.resolve()
    from appsdk_cli.errors import UsageError

    if not root.is_dir():
        raise UsageError(f"{root} is not a folder; give the plugin's folder")
    found = discover(root)
    markets = marketplace_files(root)
    findings: list[Finding] = []
    if found.manifest is not None or not markets:
        findings += _manifest_findings(found)
    for relative in markets:
        findings += _marketplace_findings(root, relative)
    if found.found:
        findings += archive_findings(walk_package(root, skip=set()))
    # The walk and an asset may both refuse the same FIFO: one line each.
    findings = list(dict.fromkeys(findings))
    findings.sort(key=lambda f: (0 if f.severity is Severity.ERROR else 1, f.rule.id, f.target))
    name = found.data.get("name") if isinstance(found.data.get("name"), str) else None
    subject = f"plugin {name} in {root}" if name else str(root)
    if markets and found.manifest is None:
        subject = f"marketplace {', '.join(markets)} in {root}"
    return CheckReport(Snapshot(mode="plugin", server=str(root)), findings, strict=strict, subject=subject)


def _manifest_findings(found: Discovery) -> Iterator[Finding]:
    root = found.root
    if found.rejected:
        yield Finding(
            MANIFEST_SYMLINK,
            f"manifest {found.rejected}",
            f"{found.rejected} is a symlink, so Codex rejects the plugin",
            "replace the link with the real file (or folder)",
        )
        return
    for relative, why in found.unreadable.items():
        yield Finding(MANIFEST_INVALID, f"manifest {relative}", f"{relative} {why}", "make it one JSON object")
    if found.unsupported_schema:
        yield Finding(
            AGENT_SCHEMA_UNSUPPORTED,
            "manifest plugin.json",
            f"plugin.json declares $schema {found.unsupported_schema}, which Codex does not support",
            f'use "$schema": "{AGENT_SCHEMA}"',
        )
    if found.manifest is None:
        extra = " (a root plugin.json is there but has no Agent Plugins $schema, so it does not count)"
        yield Finding(
            MANIFEST_MISSING,
            "plugin",
            f"no plugin manifest in {root}" + (extra if found.ignored_root else ""),
            "run `appsdk plugin init` to write .codex-plugin/plugin.json",
        )
        return
    if found.unreadable:
        return
    if found.ignored_root:
        yield Finding(
            ROOT_MANIFEST_IGNORED,
            "manifest plugin.json",
            f"plugin.json has no Agent Plugins $schema, so Codex reads {found.manifest} instead",
            f'add "$schema": "{AGENT_SCHEMA}" (and keep only its fields), or remove plugin.json',
        )
    if found.base:
        extra_keys = sorted(set(found.sources.get(found.base, {})) - AGENT_FIELDS)
        if extra_keys:
            yield Finding(
                AGENT_FIELDS_CLOSED,
                "manifest plugin.json",
                f"plugin.json (Agent Plugins 1.0.0) has keys outside its closed set: {', '.join(extra_keys)}",
                "move them to .codex-plugin/plugin.json, which Codex reads as an overlay",
            )
    data = found.data
    where = f"manifest {found.manifest}"
    yield from _identity(data, where)
    yield from _unknown_fields(data, where, base=found.base)
    yield from _paths(root, data, where)
    yield from _mcp(root, data, where)
    clutter = (
        sorted(p.name for p in (root / ".codex-plugin").iterdir() if p.name != "plugin.json")
        if (root / ".codex-plugin").is_dir()
        else []
    )
    if clutter:
        yield Finding(
            MANIFEST_DIR_CLUTTER,
            "manifest .codex-plugin",
            f".codex-plugin/ holds {', '.join(clutter)} besides plugin.json",
            "move them to the plugin root and point the manifest at ./NAME",
        )
    interface = data.get("interface")
    if not isinstance(interface, dict):
        yield Finding(
            INTERFACE_FIELD_MISSING,
            where,
            f"{found.manifest} has no interface object, so the listing has no name, description or logo",
            "run `appsdk plugin init --force` to fill one in, or add it by hand",
        )
        return
    yield from _listing(data, interface, where)
    yield from _assets(root, interface, where, has_ui=_has_ui(data, interface))


def _identity(data: dict[str, Any], where: str) -> Iterator[Finding]:
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        yield Finding(NAME_INVALID, where, "the manifest has no name", 'add "name": "my-plugin" (kebab-case)')
    elif len(name) > NAME_LIMIT or not KEBAB.fullmatch(name):
        suggestion = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:NAME_LIMIT] or "my-plugin"
        yield Finding(
            NAME_INVALID,
            where,
            f"name {name!r} is not kebab-case of at most {NAME_LIMIT} characters",
            f'use lower-case letters, digits and single hyphens, e.g. "{suggestion}"',
        )
    version = data.get("version")
    if not isinstance(version, str) or not version.strip():
        yield Finding(VERSION_INVALID, where, "the manifest has no version", 'add "version": "0.1.0"')
    elif len(version) > VERSION_LIMIT or not SEMVER.fullmatch(version):
        yield Finding(
            VERSION_INVALID,
            where,
            f"version {version!r} is not a semantic version of at most {VERSION_LIMIT} characters",
            'use MAJOR.MINOR.PATCH, e.g. "1.0.0" or "1.0.0-beta.1"',
        )
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        yield Finding(DESCRIPTION_MISSING, where, "the manifest has no description", "add one clear sentence")


def _unknown_fields(data: dict[str, Any], where: str, *, base: str | None) -> Iterator[Finding]:
    known = CODEX_FIELDS | ({"extensions"} if base else set())
    unknown = sorted(key for key in data if key not in known and not key.startswith("$"))
    interface = data.get("interface")
    if isinstance(interface, dict):
        unknown += sorted(f"interface.{key}" for key in interface if key not in INTERFACE_FIELDS)
    if unknown:
        yield Finding(
            FIELD_UNKNOWN,
            where,
            f"Codex ignores {', '.join(unknown)}",
            "check the spelling against the manifest fields (camelCase: mcpServers, displayName, websiteURL)",
        )


def _path_problem(root: Path, value: str, *, folder_ok: bool = True) -> str | None:
    """Why Codex would ignore this manifest path, or None when it resolves to something inside root."""
    if not value.startswith("./"):
        return "does not start with ./"
    rest = value[2:]
    if not rest.strip("/"):
        return "is ./ itself"
    parts = PurePosixPath(rest).parts
    if ".." in parts or "\\" in value:
        return "leaves the plugin folder"
    target = root / rest
    if not target.exists():
        return "names nothing in the plugin folder"
    if target.is_dir() and not folder_ok:
        return "names a folder, not a file"
    return None


def _paths(root: Path, data: dict[str, Any], where: str) -> Iterator[Finding]:
    for key in ("skills", "hooks", "mcpServers", "apps"):
        value = data.get(key)
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str):
                continue  # an inline object (hooks, mcpServers) is not a path
            problem = _path_problem(root, item, folder_ok=key == "skills")
            if problem:
                yield Finding(
                    PATH_INVALID,
                    where,
                    f"{key} {item!r} {problem}, so Codex ignores it",
                    'give a path inside the plugin that starts with "./", e.g. "./skills/"',
                )


def _mcp(root: Path, data: dict[str, Any], where: str) -> Iterator[Finding]:
    declared = data.get("mcpServers")
    config_target = where
    if isinstance(declared, dict):
        servers: Any = declared.get("mcpServers", declared)
        label = "mcpServers"
    else:
        relative = declared[2:] if isinstance(declared, str) and declared.startswith("./") else None
        if isinstance(declared, str) and (relative is None or _path_problem(root, declared)):
            return  # already reported as a bad path
        path = root / (relative or CODEX_DEFAULT_MCP_CONFIG)
        if not path.is_file():
            return  # a plugin without an MCP server (skills only) is fine
        label = path.relative_to(root).as_posix()
        config_target = f"mcp {label}"
        try:
            servers = read_json_object(path).get("mcpServers")
        except (OSError, ValueError) as error:
            yield Finding(MCP_CONFIG_INVALID, config_target, f"{label} {error}", 'write {"mcpServers": {...}}')
            return
    if not isinstance(servers, dict) or not servers:
        yield Finding(
            MCP_CONFIG_INVALID,
            config_target,
            f"{label} declares no servers",
            'write {"mcpServers": {"my-app": {"type": "streamable_http", "url": "https://…/mcp"}}}',
        )
        return
    for name, server in servers.items():
        url = server.get("url") if isinstance(server, dict) else None
        command = server.get("command") if isinstance(server, dict) else None
        if not (isinstance(url, str) and url.strip()) and not (isinstance(command, str) and command.strip()):
            yield Finding(
                MCP_CONFIG_INVALID,
                config_target,
                f"{label}: server {name!r} has neither a url nor a command",
                'give it "url": "https://…/mcp" (and "type": "streamable_http")',
            )
            continue
        if isinstance(url, str):
            parts = urlsplit(url)
            if parts.scheme != "https" or is_this_machine(parts.hostname or ""):
                yield Finding(
                    MCP_URL_NOT_PUBLIC,
                    config_target,
                    f"{label}: server {name!r} is at {url}, which only this machine can reach",
                    "for ChatGPT and the directory, set its url to the public https /mcp address (your tunnel's "
                    "reserved domain, or the deployment's)",
                )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _listing(data: dict[str, Any], interface: dict[str, Any], where: str) -> Iterator[Finding]:
    missing = [key for key in REQUIRED_INTERFACE if _text(interface.get(key)) is None]
    if missing:
        yield Finding(
            INTERFACE_FIELD_MISSING,
            where,
            f"interface lacks {', '.join(missing)}",
            "fill them in (appsdk plugin init writes every one, URLs as placeholders)",
        )
    for key, limit in TEXT_LIMITS.items():
        value = _text(interface.get(key))
        if value is not None and len(value) > limit:
            yield Finding(
                LISTING_TOO_LONG,
                where,
                f"interface.{key} is {len(value)} characters, over the limit of {limit}",
                f"shorten it to {limit}, e.g. {value[:limit].rstrip()!r}",
            )
    capabilities = interface.get("capabilities")
    if isinstance(capabilities, list):
        long_ones = [c for c in capabilities if isinstance(c, str) and len(c) > CAPABILITY_LIMIT]
        if len(capabilities) > CAPABILITIES_LIMIT or long_ones:
            yield Finding(
                LISTING_TOO_LONG,
                where,
                f"interface.capabilities has {len(capabilities)} entries ({len(long_ones)} over "
                f"{CAPABILITY_LIMIT} characters); the limit is {CAPABILITIES_LIMIT} of {CAPABILITY_LIMIT}",
                "keep the few that describe the plugin (Interactive, Read, Write)",
            )
    urls = [(f"interface.{key}", interface.get(key)) for key in URL_FIELDS]
    urls.append(("homepage", data.get("homepage")))
    author = data.get("author")
    if isinstance(author, dict):
        urls.append(("author.url", author.get("url")))
    for key, value in urls:
        url = _text(value)
        if url is None:
            continue
        if urlsplit(url).scheme != "https" or not urlsplit(url).hostname or len(url) > URL_LIMIT:
            yield Finding(
                URL_NOT_HTTPS,
                where,
                f"{key} {url[:80]!r} is not an https URL of at most {URL_LIMIT} characters",
                "use the https address of the page",
            )
        elif is_placeholder_url(url):
            yield Finding(URL_PLACEHOLDER, where, f"{key} is still the placeholder {url}", "put your real page here")
    colour = interface.get("brandColor")
    if colour is not None:
        rgb = images.hex_colour(colour) if isinstance(colour, str) else None
        if rgb is None:
            yield Finding(BRAND_COLOUR, where, f"brandColor {colour!r} is not a #RRGGBB colour", 'e.g. "#10A37F"')
        else:
            weak = [f"{name} {images.contrast(rgb, bg):.2f}:1" for name, bg in BACKGROUNDS.items()]
            if any(images.contrast(rgb, bg) < MIN_CONTRAST for bg in BACKGROUNDS.values()):
                yield Finding(
                    BRAND_COLOUR,
                    where,
                    f"brandColor {colour} contrasts {' and '.join(weak)}; each must be at least 2:1",
                    "pick a mid-tone (e.g. #10A37F, #2F6FEB): not near-white and not near-black",
                )
    yield from _prompts(interface.get("defaultPrompt"), where)


def _prompts(value: Any, where: str) -> Iterator[Finding]:
    if value is None:
        return
    prompts = [value] if isinstance(value, str) else value
    if not isinstance(prompts, list):
        yield Finding(
            PROMPTS_INVALID, where, "interface.defaultPrompt is not a list of strings", "give up to 3 strings"
        )
        return
    problems: list[str] = []
    if len(prompts) > PROMPTS_LIMIT:
        problems.append(f"{len(prompts)} prompts (at most {PROMPTS_LIMIT})")
    seen: set[str] = set()
    for index, prompt in enumerate(prompts):
        if not isinstance(prompt, str):
            problems.append(f"#{index + 1} is not a string")
            continue
        text = " ".join(prompt.split())
        if not text:
            problems.append(f"#{index + 1} is empty")
        elif len(text) > PROMPT_LIMIT:
            problems.append(f"#{index + 1} is {len(text)} characters (at most {PROMPT_LIMIT})")
        if re.search(r"(^|\s)@\w", text):
            problems.append(f"#{index + 1} has an @mention")
        if text.lower() in seen:
            problems.append(f"#{index + 1} repeats an earlier prompt")
        seen.add(text.lower())
    if problems:
        yield Finding(
            PROMPTS_INVALID,
            where,
            f"interface.defaultPrompt: {'; '.join(problems)}",
            "keep up to 3 distinct prompts of at most 128 characters, without @mentions",
        )


def _has_ui(data: dict[str, Any], interface: dict[str, Any]) -> bool:
    capabilities = interface.get("capabilities")
    interactive = isinstance(capabilities, list) and "Interactive" in capabilities
    return bool(data.get("apps")) or interactive


def _assets(root: Path, interface: dict[str, Any], where: str, *, has_ui: bool) -> Iterator[Finding]:
    screenshots = interface.get("screenshots")
    screenshots = [s for s in screenshots if isinstance(s, str)] if isinstance(screenshots, list) else []
    if screenshots and not has_ui:
        yield Finding(
            SCREENSHOTS_WITHOUT_UI,
            where,
            f"{len(screenshots)} screenshot(s) on a plugin with no UI",
            'remove them, or declare the UI ("Interactive" in interface.capabilities, for an app with widgets)',
        )
    assets = [(key, interface.get(key)) for key in ("logo", "logoDark", "composerIcon")]
    assets += [("screenshots", shot) for shot in screenshots]
    for key, value in assets:
        if not isinstance(value, str) or not value.strip() or value.startswith(("https://", "http://")):
            continue  # absent (PLUG201 says so) or remote
        target = f"asset {value}"
        problem = _path_problem(root, value, folder_ok=False)
        if problem:
            rule = ASSET_MISSING if problem.startswith("names") else PATH_INVALID
            yield Finding(
                rule,
                target,
                f"interface.{key} {value!r} {problem}",
                'put the file under ./assets/ and name it "./assets/…"',
            )
            continue
        path = root / value[2:]
        try:
            head = read_regular(path, root=root, limit=ASSET_BYTES)
        except NotAFile as refusal:
            if refusal.leaves:
                yield Finding(
                    ARCHIVE_SYMLINK,
                    target,
                    f"interface.{key} {value} {refusal}",
                    'put the real file under ./assets/ and name it "./assets/…"',
                )
            else:
                yield special_file_finding(PurePosixPath(value[2:]), refusal.kind)
            continue
        except OSError as error:
            yield Finding(
                ASSET_MISSING,
                target,
                f"interface.{key} {value} cannot be read: {error.strerror or error}",
                "make it readable",
            )
            continue
        info = images.sniff(head)
        size = path.stat().st_size
        if size > ASSET_BYTES:
            yield Finding(
                ASSET_TOO_LARGE,
                target,
                f"interface.{key} {value} is {size / 1_048_576:.1f} MB, over 5 MB",
                "export it smaller",
            )
        if info is None:
            yield Finding(
                ASSET_TYPE, target, f"interface.{key} {value} is not a PNG, JPEG, WebP or SVG image", "export it as PNG"
            )
            continue
        if key == "screenshots" and (info.kind != "png" or not value.startswith("./assets/")):
            yield Finding(
                ASSET_TYPE,
                target,
                f"screenshot {value} is a {info.kind.upper()}"
                + ("" if value.startswith("./assets/") else " outside ./assets/"),
                "screenshots are PNG files under ./assets/",
            )
        # The limits are the logo's; a composer icon is small by design, and an SVG has no pixel size.
        if key in ("logo", "logoDark") and info.width is not None and info.height is not None:
            width, height = info.width, info.height
            out_of_range = info.kind != "svg" and not (LOGO_MIN <= width <= LOGO_MAX)
            if width != height or out_of_range:
                yield Finding(
                    ASSET_SIZE,
                    target,
                    f"interface.{key} {value} is {width:g}×{height:g}; it must be square"
                    + ("" if info.kind == "svg" else f", {LOGO_MIN}–{LOGO_MAX} px"),
                    "export a square image, e.g. 512×512",
                )


def _marketplace_findings(root: Path, relative: str) -> Iterator[Finding]:
    target = f"marketplace {relative}"
    try:
        market = read_json_object(root / relative)
    except (OSError, ValueError) as error:
        yield Finding(MARKETPLACE_INVALID, target, f"{relative} {error}", "make it one JSON object")
        return
    plugins = market.get("plugins")
    if not _text(market.get("name")) or not isinstance(plugins, list):
        missing = [
            k for k, ok in (("name", _text(market.get("name"))), ("plugins", isinstance(plugins, list))) if not ok
        ]
        yield Finding(
            MARKETPLACE_INVALID,
            target,
            f"{relative} lacks {' and '.join(missing)}",
            'write {"name": "…", "interface": {"displayName": "…"}, "plugins": [...]}',
        )
        return
    for index, entry in enumerate(plugins):
        if not isinstance(entry, dict):
            yield Finding(
                MARKETPLACE_INVALID,
                target,
                f"{relative}: plugins[{index}] is not an object",
                "give each entry an object",
            )
            continue
        name = _text(entry.get("name")) or f"plugins[{index}]"
        policy = entry.get("policy")
        if isinstance(policy, dict):
            bad = [
                f"{key} {policy[key]!r}"
                for key, allowed in (("installation", INSTALL_POLICIES), ("authentication", AUTH_POLICIES))
                if key in policy and policy[key] not in allowed
            ]
            if bad:
                yield Finding(
                    MARKETPLACE_INVALID,
                    target,
                    f"{relative}: {name} has policy {', '.join(bad)}, which Codex cannot read",
                    f"installation is one of {', '.join(INSTALL_POLICIES)}; "
                    f"authentication one of {', '.join(AUTH_POLICIES)}",
                )
        incomplete = [key for key in ("policy", "category") if key not in entry]
        if incomplete:
            yield Finding(
                MARKETPLACE_ENTRY,
                target,
                f"{relative}: {name} has no {' or '.join(incomplete)}",
                'add "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"} and a "category"',
            )
        source = entry.get("source")
        path = source.get("path") if isinstance(source, dict) and source.get("source") == "local" else source
        if isinstance(source, dict) and source.get("source") != "local":
            continue  # git and url sources are fetched by Codex; nothing local to check
        if not isinstance(path, str):
            yield Finding(
                MARKETPLACE_SOURCE,
                target,
                f"{relative}: {name} has no local source path",
                'give "source": {"source": "local", "path": "./plugins/NAME"}',
            )
            continue
        problem = _path_problem(root, path)
        if problem is None and not discover(root / path[2:]).found:
            problem = "names a folder without a plugin manifest"
        if problem:
            yield Finding(
                MARKETPLACE_SOURCE,
                target,
                f"{relative}: {name} source.path {path!r} {problem}",
                'put the plugin in its own folder under the marketplace root, e.g. "./plugins/NAME"',
            )
            continue
        listed = discover(root / path[2:]).data.get("name")
        if isinstance(listed, str) and _text(entry.get("name")) and listed != entry.get("name"):
            yield Finding(
                MARKETPLACE_ENTRY,
                target,
                f"{relative}: entry {entry.get('name')!r} points at plugin {listed!r}",
                "use the plugin's manifest name for the entry",
            )


def special_file_finding(relative: PurePosixPath, kind: str) -> Finding:
    """One line for a FIFO, socket or device, the same from the walk and from an asset that names it."""
    return Finding(
        ARCHIVE_SPECIAL,
        f"file {relative}",
        f"{relative} is {kind}; appsdk reads only regular files",
        "replace it with the real file, or delete it",
    )


def archive_findings(tree: PackageTree) -> Iterator[Finding]:
    for link in tree.links:
        leaves = link in tree.leaving
        yield Finding(
            ARCHIVE_SYMLINK,
            f"file {link}",
            f"{link} is a symlink" + (" leading out of the plugin folder" if leaves else ""),
            "replace it with the real file, or delete it",
        )
    for relative, kind in tree.special.items():
        yield special_file_finding(relative, kind)
    for relative, why in tree.unreadable.items():
        yield Finding(
            ARCHIVE_SPECIAL,
            f"file {relative}",
            f"{relative or '.'} cannot be read: {why}",
            "make it readable, or move it out of the plugin folder",
        )
    if tree.too_deep is not None:
        yield Finding(
            ARCHIVE_TOO_DEEP,
            f"file {tree.too_deep}",
            f"{tree.too_deep.parts[0]}/… goes more than {MAX_DEPTH} folders deep; appsdk stopped there",
            "keep generated or copied trees out of the plugin folder",
        )
    for relative in tree.files:
        name = str(relative)
        if "\\" in name or ".." in relative.parts:
            yield Finding(ARCHIVE_PATH, f"file {name}", f"file name {name!r} has a backslash or ..", "rename it")
        if relative.name == ".app.json":
            yield Finding(
                ARCHIVE_APP_JSON,
                f"file {name}",
                f"{name} would go into the package",
                "delete it (and the manifest's apps entry); link the app in the submission portal",
            )
    if tree.too_many:
        yield Finding(
            ARCHIVE_LIMITS,
            "plugin",
            f"the plugin folder holds more than {MAX_ENTRIES} files and folders; appsdk stopped counting there",
            "keep build output, data and dependencies out of the plugin folder",
        )
    elif len(tree.files) > ENTRIES_LIMIT or tree.size > EXPANDED_LIMIT:
        yield Finding(
            ARCHIVE_LIMITS,
            "plugin",
            f"the package would hold {len(tree.files)} files, {tree.size / 1_048_576:.0f} MB",
            "keep build output, data and dependencies out of the plugin folder",
        )
