"""The contract file: what a reviewed snapshot of the app holds, recorded from one check Snapshot.

Stable and diff-friendly: objects keyed by tool name and resource URI, keys sorted, two-space indent,
one trailing newline, nothing that changes from run to run (no URL, mode, timestamp or TTL). The same
app therefore records the same bytes in PATH and live mode, on any machine.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from appsdk_cli.appmeta import (
    OPENAI_WIDGET_CSP,
    OPENAI_WIDGET_DOMAIN,
    UI_EXTENSION,
    host_read_meta,
    resource_meta,
    widget_csp,
)
from appsdk_cli.errors import AppsdkError
from appsdk_cli.snapshot.model import Snapshot

FORMAT = 1
FORMAT_KEY = "appsdkContract"
DEFAULT_FILE = "appsdk.contract.json"
COMMENT = "Recorded by `appsdk snapshot`; `appsdk check --against` compares a server with it. Commit it."
# Protocol versions by era; a version not listed here is recorded under its own name.
MODERN_VERSIONS = ("2026-07-28",)


def era_of(version: str) -> str:
    """'modern' for the 2026-07-28 protocol (no handshake), 'legacy' for the 2025 initialize handshake."""
    if version in MODERN_VERSIONS:
        return "modern"
    if version[:4].isdigit() and version < MODERN_VERSIONS[0]:
        return "legacy"
    return version


def _present(value: dict[str, Any]) -> dict[str, Any]:
    return {key: item for key, item in value.items() if item is not None and item != {}}


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    return _present(
        {
            "title": tool.get("title"),
            "description": tool.get("description"),
            "annotations": tool.get("annotations"),
            "inputSchema": tool.get("inputSchema"),
            "outputSchema": tool.get("outputSchema"),
            "_meta": host_read_meta(tool),
        }
    )


def _widget_meta(resource: dict[str, Any], contents: list[dict[str, Any]]) -> dict[str, Any]:
    """What a host reads of a widget's `_meta`: the listing's, overridden by the content item's."""
    meta = dict(host_read_meta(resource))
    for item in contents:
        for key, value in host_read_meta(item).items():
            if key == "ui" and isinstance(value, dict) and isinstance(meta.get("ui"), dict):
                meta["ui"] = {**meta["ui"], **value}
            else:
                meta[key] = value
    return meta


def _html_hash(contents: list[dict[str, Any]]) -> str | None:
    bodies = [item.get("text", item.get("blob")) for item in contents if isinstance(item, dict)]
    bodies = [body for body in bodies if isinstance(body, str)]
    if not bodies:
        return None
    return "sha256:" + hashlib.sha256("\0".join(bodies).encode("utf-8")).hexdigest()


UNREADABLE = "unreadable"  # the widget's resources/read failed when the contract was recorded


def _resource(resource: dict[str, Any], read: dict[str, Any] | None, read_failed: bool) -> dict[str, Any]:
    contents = [c for c in (read or {}).get("contents") or [] if isinstance(c, dict)]
    meta = _widget_meta(resource, contents)
    csp = widget_csp(meta)
    # CSP and domain are recorded once, read the way hosts read them; the rest of _meta as sent.
    ui = meta.get("ui")
    if isinstance(ui, dict):
        ui = {k: v for k, v in ui.items() if k not in ("csp", "domain")}
        meta = {**meta, "ui": ui} if ui else {k: v for k, v in meta.items() if k != "ui"}
    meta = {k: v for k, v in meta.items() if k not in (OPENAI_WIDGET_CSP, OPENAI_WIDGET_DOMAIN)}
    listed = resource_meta(resource)
    content_mime = next((c.get("mimeType") for c in contents if isinstance(c.get("mimeType"), str)), None)
    return _present(
        {
            "name": listed.name,
            "title": listed.title,
            "description": listed.description,
            "mimeType": listed.mime_type,
            "contentMimeType": content_mime if content_mime != listed.mime_type else None,
            "csp": _present(
                {
                    style: {kind: sorted(set(origins)) for kind, origins in sorted(table.items())}
                    if table is not None
                    else None
                    for style, table in (("ui", csp.ui), ("openai", csp.openai))
                }
            )
            or None,
            "domain": resource_meta({"_meta": _widget_meta(resource, contents)}).domain,
            "html": UNREADABLE if read_failed else _html_hash(contents),
            "_meta": meta,
        }
    )


def _template(template: dict[str, Any]) -> dict[str, Any]:
    return _present(
        {
            "name": template.get("name"),
            "title": template.get("title"),
            "description": template.get("description"),
            "mimeType": template.get("mimeType"),
            "_meta": host_read_meta(template),
        }
    )


def record(snapshot: Snapshot) -> dict[str, Any]:
    """The contract of what a server sent: server, protocol eras, tools, resources, templates."""
    tools = {str(tool.get("name")): _tool(tool) for tool in snapshot.unique_tools()}
    resources: dict[str, Any] = {}
    for resource in snapshot.resources:
        uri = resource.get("uri") if isinstance(resource, dict) else None
        if isinstance(uri, str) and uri not in resources:
            resources[uri] = _resource(resource, snapshot.reads.get(uri), uri in snapshot.read_errors)
    templates: dict[str, Any] = {}
    for template in snapshot.resource_templates:
        uri = template.get("uriTemplate") if isinstance(template, dict) else None
        if isinstance(uri, str) and uri not in templates:
            templates[uri] = _template(template)
    protocol: dict[str, list[str]] = {}
    for version in snapshot.protocol_versions:
        protocol.setdefault(era_of(version), []).append(version)
    return {
        "$comment": COMMENT,
        FORMAT_KEY: FORMAT,
        "server": _present(
            {
                "name": snapshot.server_name,
                "version": snapshot.server_version or None,
                "instructions": snapshot.instructions,
                # MCP Apps as the server declares it under capabilities.extensions, when it does.
                "extensions": {UI_EXTENSION: snapshot.server_ui} if snapshot.server_ui is not None else None,
            }
        ),
        # The newest version of each era: what a host of that era negotiates.
        "protocol": {era: [max(versions)] for era, versions in protocol.items()},
        "tools": tools,
        "resources": resources,
        "resourceTemplates": templates,
    }


def dumps(contract: dict[str, Any]) -> str:
    """The file's exact text: sorted keys, two-space indent, one trailing newline."""
    return json.dumps(contract, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load(path: Path) -> dict[str, Any]:
    """Read a contract file; a missing, unreadable or foreign file is one line saying what to do."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AppsdkError(f"{path} does not exist: record it first with `appsdk snapshot -o {path}`") from None
    except OSError as problem:
        raise AppsdkError(f"cannot read {path}: {problem.strerror}") from None
    try:
        contract = json.loads(text)
    except json.JSONDecodeError as problem:
        raise AppsdkError(
            f"{path} is not valid JSON (line {problem.lineno}): record it again with `appsdk snapshot -o {path}`"
        ) from None
    if not isinstance(contract, dict) or FORMAT_KEY not in contract:
        raise AppsdkError(
            f"{path} is not an appsdk contract (no {FORMAT_KEY!r} key): record one with `appsdk snapshot`"
        )
    if contract[FORMAT_KEY] != FORMAT:
        raise AppsdkError(
            f"{path} is contract format {contract[FORMAT_KEY]!r}; this appsdk reads format {FORMAT}: upgrade appsdk"
        )
    for key in ("server", "protocol", "tools", "resources", "resourceTemplates"):
        if not isinstance(contract.get(key, {}), dict):
            raise AppsdkError(f"{path}: {key!r} must be an object; record it again with `appsdk snapshot`")
    return contract
