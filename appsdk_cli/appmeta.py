"""Apps SDK / MCP Apps metadata read off tools and resources: one truth for call, check, preview, apps.

Works on the wire shape (camelCase dicts, `_meta` as sent), so any client's results fit, and nothing
heavy is imported. Where the MCP Apps key and ChatGPT's `openai/*` alias both exist, both are kept:
a disagreement between them is something a developer needs to see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OUTPUT_TEMPLATE = "openai/outputTemplate"
INVOKING = "openai/toolInvocation/invoking"
INVOKED = "openai/toolInvocation/invoked"
OPENAI_VISIBILITY = "openai/visibility"
WIDGET_ACCESSIBLE = "openai/widgetAccessible"
DEPRECATED_RESOURCE_URI = "ui/resourceUri"  # the flat key from early MCP Apps drafts
WIDGET_MIME_TYPES = ("text/html;profile=mcp-app", "text/html+skybridge")


def _meta(item: dict[str, Any]) -> dict[str, Any]:
    meta = item.get("_meta")
    return meta if isinstance(meta, dict) else {}


def _ui(meta: dict[str, Any]) -> dict[str, Any]:
    ui = meta.get("ui")
    return ui if isinstance(ui, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class ToolMeta:
    name: str
    title: str | None
    description: str | None
    resource_uri: str | None  # _meta.ui.resourceUri (MCP Apps)
    output_template: str | None  # _meta["openai/outputTemplate"] (ChatGPT)
    deprecated_resource_uri: str | None  # _meta["ui/resourceUri"]
    invoking: str | None
    invoked: str | None
    read_only: bool | None  # None: the server did not say
    destructive: bool | None
    open_world: bool | None
    idempotent: bool | None
    ui_visibility: tuple[str, ...] | None  # ["model", "app"] by default
    openai_visibility: str | None  # "public" / "private"
    widget_accessible: bool | None
    has_output_schema: bool

    @property
    def template(self) -> str | None:
        """The widget the tool renders with: the standard key first, then ChatGPT's, then the deprecated one."""
        return self.resource_uri or self.output_template or self.deprecated_resource_uri

    @property
    def templates_disagree(self) -> bool:
        return bool(self.resource_uri and self.output_template and self.resource_uri != self.output_template)

    @property
    def model_visible(self) -> bool:
        if self.openai_visibility == "private":
            return False
        return self.ui_visibility is None or "model" in self.ui_visibility


def tool_meta(tool: dict[str, Any]) -> ToolMeta:
    meta = _meta(tool)
    ui = _ui(meta)
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}

    def hint(key: str) -> bool | None:
        value = annotations.get(key)
        return value if isinstance(value, bool) else None

    visibility = ui.get("visibility")
    accessible = meta.get(WIDGET_ACCESSIBLE)
    return ToolMeta(
        name=str(tool.get("name", "")),
        title=_text(tool.get("title")) or _text(annotations.get("title")),
        description=_text(tool.get("description")),
        resource_uri=_text(ui.get("resourceUri")),
        output_template=_text(meta.get(OUTPUT_TEMPLATE)),
        deprecated_resource_uri=_text(meta.get(DEPRECATED_RESOURCE_URI)),
        invoking=_text(meta.get(INVOKING)),
        invoked=_text(meta.get(INVOKED)),
        read_only=hint("readOnlyHint"),
        destructive=hint("destructiveHint"),
        open_world=hint("openWorldHint"),
        idempotent=hint("idempotentHint"),
        ui_visibility=tuple(str(v) for v in visibility) if isinstance(visibility, list) else None,
        openai_visibility=_text(meta.get(OPENAI_VISIBILITY)),
        widget_accessible=accessible if isinstance(accessible, bool) else None,
        has_output_schema=isinstance(tool.get("outputSchema"), dict),
    )


@dataclass(frozen=True)
class ResourceMeta:
    uri: str
    name: str | None
    title: str | None
    description: str | None
    mime_type: str | None
    has_csp: bool  # ui.csp or openai/widgetCSP
    domain: str | None  # ui.domain or openai/widgetDomain

    @property
    def is_widget(self) -> bool:
        return self.mime_type in WIDGET_MIME_TYPES


def resource_meta(resource: dict[str, Any]) -> ResourceMeta:
    meta = _meta(resource)
    ui = _ui(meta)
    return ResourceMeta(
        uri=str(resource.get("uri", "")),
        name=_text(resource.get("name")),
        title=_text(resource.get("title")),
        description=_text(resource.get("description")),
        mime_type=_text(resource.get("mimeType")),
        has_csp=isinstance(ui.get("csp"), dict) or isinstance(meta.get("openai/widgetCSP"), dict),
        domain=_text(ui.get("domain")) or _text(meta.get("openai/widgetDomain")),
    )
