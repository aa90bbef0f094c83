"""What a check asks of a server beyond the lists: the same plan in live and PATH mode.

Pure functions over the listed tools and resources, so the in-memory child and the live collector
read the same widgets and call the same tools.
"""

from __future__ import annotations

from typing import Any

from appsdk_cli.appmeta import WIDGET_MIME_TYPES, tool_meta


def referenced_uris(tools: list[dict[str, Any]]) -> list[str]:
    """Every widget URI a tool names, under any of the three keys, in listing order."""
    uris: list[str] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        meta = tool_meta(tool)
        for uri in (meta.resource_uri, meta.output_template, meta.deprecated_resource_uri):
            if uri and uri not in uris:
                uris.append(uri)
    return uris


def is_widget_candidate(resource: dict[str, Any]) -> bool:
    """A listed resource the host would treat as a widget: a ui:// URI, or an HTML MIME type."""
    uri = str(resource.get("uri", ""))
    mime = str(resource.get("mimeType") or "")
    return uri.startswith("ui://") or mime in WIDGET_MIME_TYPES or mime.startswith("text/html")


def uris_to_read(tools: list[dict[str, Any]], resources: list[dict[str, Any]]) -> list[str]:
    """The widgets whose HTML and content `_meta` the rules need: referenced by a tool, or widget-like."""
    uris = referenced_uris(tools)
    for resource in resources:
        if isinstance(resource, dict) and is_widget_candidate(resource):
            uri = str(resource.get("uri", ""))
            if uri and uri not in uris:
                uris.append(uri)
    return uris


def needs_no_arguments(tool: dict[str, Any]) -> bool:
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return True
    required = schema.get("required")
    return not (isinstance(required, list) and required)


def tools_to_call(tools: list[dict[str, Any]]) -> list[str]:
    """Tools safe to call with `{}`: declared read-only (and not destructive), with no required arguments.

    Only these are called, in live mode too: a read-only hint is the server's promise that a call
    changes nothing.
    """
    names: list[str] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        meta = tool_meta(tool)
        safe = meta.read_only is True and meta.destructive is not True and needs_no_arguments(tool)
        if safe and meta.name and meta.name not in names:
            names.append(meta.name)
    return names


def skill_file_uris(entry: Any) -> list[str]:
    """The files a skills/list entry names (none for a "dynamic" skill), each once, at most as many as a
    host must accept: a listing cannot make a check read without end."""
    from appsdk_cli.mcpskills import MAX_FILES, files

    uris = [str(f.get("uri")) for f in files(entry) if f.get("uri")] if isinstance(entry, dict) else []
    return list(dict.fromkeys(uris))[:MAX_FILES]
