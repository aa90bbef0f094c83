"""Apps SDK / MCP Apps metadata read off tools and resources: one truth for call, check, preview, apps.

Works on the wire shape (camelCase dicts, `_meta` as sent), so any client's results fit, and nothing
heavy is imported. Where the MCP Apps key and ChatGPT's `openai/*` alias both exist, both are kept:
a disagreement between them is something a developer needs to see.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

OUTPUT_TEMPLATE = "openai/outputTemplate"
INVOKING = "openai/toolInvocation/invoking"
INVOKED = "openai/toolInvocation/invoked"
OPENAI_VISIBILITY = "openai/visibility"
WIDGET_ACCESSIBLE = "openai/widgetAccessible"
DEPRECATED_RESOURCE_URI = "ui/resourceUri"  # the flat key from early MCP Apps drafts
MCP_APP_MIME_TYPE = "text/html;profile=mcp-app"
WIDGET_MIME_TYPES = (MCP_APP_MIME_TYPE, "text/html+skybridge")
# The MCP Apps extension (SEP-1865, negotiated under SEP-2133's `capabilities.extensions`): a client that
# renders widgets lists this id with the MIME types it renders; a server may list it to say it serves apps.
UI_EXTENSION = "io.modelcontextprotocol/ui"
DEFAULT_UI_VISIBILITY = ("model", "app")  # MCP Apps: a tool without _meta.ui.visibility


class Bridge(StrEnum):
    """How a widget asks its host to call a tool; each has its own rule for which tools it may call."""

    MCP_APPS = "mcp-apps"  # the standard bridge: a `tools/call` request posted to the host
    OPENAI = "openai"  # ChatGPT's window.openai.callTool

    @property
    def label(self) -> str:
        return "MCP Apps bridge" if self is Bridge.MCP_APPS else "window.openai.callTool"


def ui_client_capability() -> dict[str, Any]:
    """What a host that renders MCP Apps widgets puts under `capabilities.extensions` (a fresh dict)."""
    return {UI_EXTENSION: {"mimeTypes": [MCP_APP_MIME_TYPE]}}


def ui_extension(capabilities: Any) -> dict[str, Any] | None:
    """The MCP Apps settings in a capabilities object (a client's or a server's), or None when it lists
    none (ext-apps' `getUiCapability`)."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, dict) else None
    return settings if isinstance(settings, dict) else None


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

    @property
    def visibility(self) -> tuple[str, ...]:
        """`_meta.ui.visibility` as MCP Apps hosts read it: absent means ["model", "app"]."""
        return DEFAULT_UI_VISIBILITY if self.ui_visibility is None else self.ui_visibility

    def widget_may_call(self, bridge: Bridge) -> bool:
        """The one rule for which tools a widget may call, per bridge.

        The MCP Apps bridge follows `ui.visibility` alone (its default lists "app"). ChatGPT's
        window.openai.callTool needs `openai/widgetAccessible: true`, or an explicit `ui.visibility`
        naming "app": the default does not count there.
        """
        if bridge is Bridge.MCP_APPS:
            return "app" in self.visibility
        return self.widget_accessible is True or (self.ui_visibility is not None and "app" in self.ui_visibility)

    @property
    def widget_callable(self) -> bool:
        """Some widget may call it, over at least one bridge."""
        return any(self.widget_may_call(bridge) for bridge in Bridge)


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


# --- a widget's CSP, in both key styles (check judges it; preview enforces it) ---

OPENAI_WIDGET_CSP = "openai/widgetCSP"
OPENAI_WIDGET_DOMAIN = "openai/widgetDomain"
# The kinds of outside origin a widget may reach, and each key style's name for the list. Only the
# OpenAI style has redirect_domains; only the MCP Apps style has baseUriDomains.
UI_CSP_KEYS = {
    "connect": "connectDomains",
    "resource": "resourceDomains",
    "frame": "frameDomains",
    "base_uri": "baseUriDomains",
}
OPENAI_CSP_KEYS = {
    "connect": "connect_domains",
    "resource": "resource_domains",
    "frame": "frame_domains",
    "redirect": "redirect_domains",
}


def _domains(table: dict[str, Any], keys: dict[str, str]) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for kind, key in keys.items():
        value = table.get(key)
        if isinstance(value, list):
            found[kind] = tuple(str(v) for v in value if isinstance(v, str))
    return found


@dataclass(frozen=True)
class WidgetCsp:
    """A widget's CSP as each key style declares it: kind ("connect", "resource", ...) -> origins.

    None for a style means that key is absent; an empty dict means the key is there with no lists.
    """

    ui: dict[str, tuple[str, ...]] | None  # from _meta.ui.csp (MCP Apps)
    openai: dict[str, tuple[str, ...]] | None  # from _meta["openai/widgetCSP"] (ChatGPT)

    @property
    def declared(self) -> bool:
        return self.ui is not None or self.openai is not None

    def allowed(self, kind: str) -> tuple[str, ...]:
        """The origins of one kind that either style allows (hosts read one or the other)."""
        return (*(self.ui or {}).get(kind, ()), *(self.openai or {}).get(kind, ()))


def widget_csp(meta: dict[str, Any]) -> WidgetCsp:
    """The CSP in a resource's (or resource content item's) `_meta`."""
    ui_csp = _ui(meta).get("csp")
    openai_csp = meta.get(OPENAI_WIDGET_CSP)
    return WidgetCsp(
        ui=_domains(ui_csp, UI_CSP_KEYS) if isinstance(ui_csp, dict) else None,
        openai=_domains(openai_csp, OPENAI_CSP_KEYS) if isinstance(openai_csp, dict) else None,
    )


# The `_meta` keys a host reads off a tool or resource: the MCP Apps `ui` object and its flat
# `ui/*` forerunners, ChatGPT's `openai/*` keys, and the Apps SDK's securitySchemes mirror. Anything
# else in `_meta` (a framework's own bookkeeping) no host looks at.
# Claude gives a view an origin of its own under this domain, named from the connector's URL: a
# resource's `ui.domain` must be exactly that name, or absent; any other value and Claude renders no
# widget at all (measured: github.com/modelcontextprotocol/ext-apps/pull/735, issues 671 there and 165
# in anthropics/claude-ai-mcp). ChatGPT instead reads an https origin of the app's own.
CLAUDE_WIDGET_DOMAIN_SUFFIX = ".claudemcpcontent.com"


def claude_widget_domain(connector_url: str) -> str:
    """The only `ui.domain` Claude accepts for a connector at this URL (the /mcp endpoint, as given to Claude)."""
    import hashlib

    return hashlib.sha256(connector_url.encode()).hexdigest()[:32] + CLAUDE_WIDGET_DOMAIN_SUFFIX


def claude_domain_problem(ui_domain: object, connector_url: str | None) -> tuple[str, bool] | None:
    """Why Claude would not accept this `ui.domain` for the connector URL, and whether it renders nothing
    because of it (True) or only might, the URL here not being the one Claude will be given (False).
    None: absent, or exactly the derived name."""
    if ui_domain is None or ui_domain == "":
        return None
    value = str(ui_domain)
    bare = value.split("://", 1)[-1].rstrip("/")
    expected = claude_widget_domain(connector_url) if connector_url else None
    if expected is not None and bare == expected:
        return None
    rule = f"it accepts only sha256 of the connector URL (32 hex digits) + {CLAUDE_WIDGET_DOMAIN_SUFFIX}, or none"
    if bare.endswith(CLAUDE_WIDGET_DOMAIN_SUFFIX):
        where = f"{expected} for {connector_url}" if expected else "a name derived from the connector URL"
        return f"ui.domain {value!r} is not the one Claude derives here ({where}); {rule}", False
    for_url = f" (for {connector_url}: {expected})" if expected else " (appsdk check --url YOUR-PUBLIC-URL names it)"
    return f"Claude renders no widget whose ui.domain is {value!r}: {rule}{for_url}", True


HOST_READ_META_PREFIXES = ("openai/", "ui/")
HOST_READ_META_KEYS = ("ui", "securitySchemes")


def host_read_meta(item: dict[str, Any]) -> dict[str, Any]:
    """The part of an item's `_meta` hosts read (what a reviewed snapshot of it holds)."""
    return {
        key: value
        for key, value in _meta(item).items()
        if key in HOST_READ_META_KEYS or key.startswith(HOST_READ_META_PREFIXES)
    }


def misplaced_widget_keys(tool: dict[str, Any]) -> list[str]:
    """Resource-only keys (CSP, widget domain) found in a tool's `_meta`, where hosts never look for them."""
    meta = _meta(tool)
    ui = _ui(meta)
    found = [f"ui.{key}" for key in ("csp", "domain") if key in ui]
    found += [key for key in (OPENAI_WIDGET_CSP, OPENAI_WIDGET_DOMAIN) if key in meta]
    return found


# --- a tool crash, as `appsdk dev` reports it beside the result (snapshot/crashes.py writes it) ---

TOOL_CRASH = "appsdk/crash"  # appsdk's own result _meta key; only `appsdk dev`, only to loopback callers
# The workbench's own request _meta key on a call it makes again by itself after a save (which call, why), so
# `appsdk dev`'s terminal says a crash it reports again is that re-run's, not a new call's.
RERUN_OF = "appsdk/rerunOf"
MAX_RERUN_OF = 300


@dataclass(frozen=True)
class ToolCrash:
    tool: str
    type: str  # the exception's class name
    message: str
    file: str | None  # the user's innermost frame, relative to the project
    line: int | None
    function: str | None
    frames: tuple[tuple[str, int, str, str], ...]  # (file, line, function, code), innermost last
    rerun_of: str | None = None  # the call the workbench made again by itself (RERUN_OF), if it was one

    @property
    def summary(self) -> str:
        """One line, e.g. KeyError: 'june' (server.py:103 in picks_for)."""
        text = f"{self.type}: {self.message}" if self.message else self.type
        if self.file:
            text += f" ({self.file}:{self.line}" + (f" in {self.function})" if self.function else ")")
        return text


def tool_crash(result: dict[str, Any]) -> ToolCrash | None:
    """The crash `appsdk dev` put beside an isError result, if any."""
    crash = _meta(result).get(TOOL_CRASH) if result.get("isError") is True else None
    if not isinstance(crash, dict) or not isinstance(crash.get("type"), str):
        return None
    frames = []
    for frame in crash.get("frames") if isinstance(crash.get("frames"), list) else []:
        if isinstance(frame, dict) and isinstance(frame.get("file"), str) and isinstance(frame.get("line"), int):
            frames.append((frame["file"], frame["line"], str(frame.get("function", "")), str(frame.get("code", ""))))
    line = crash.get("line")
    return ToolCrash(
        tool=str(crash.get("tool", "")),
        type=crash["type"],
        message=str(crash.get("message", "")),
        file=_text(crash.get("file")),
        line=line if isinstance(line, int) else None,
        function=_text(crash.get("function")),
        rerun_of=_text(crash.get("rerunOf")),
        frames=tuple(frames),
    )


def without_tool_crash(result: dict[str, Any]) -> dict[str, Any]:
    """The result as production would send it: appsdk's crash key removed (and `_meta` with it, if it was all)."""
    meta = _meta(result)
    if TOOL_CRASH not in meta:
        return result
    rest = {key: value for key, value in meta.items() if key != TOOL_CRASH}
    stripped = {key: value for key, value in result.items() if key != "_meta"}
    return {**stripped, "_meta": rest} if rest else stripped


def is_protocol_meta_key(key: str) -> bool:
    """Whether a `_meta` key is reserved for MCP itself: since 2025-11-25 a prefix whose second label is
    `modelcontextprotocol` or `mcp` (`io.modelcontextprotocol/serverInfo`); 2025-06-18 reserved such a label
    anywhere but last (`modelcontextprotocol.io/`). Servers of both revisions are out there."""
    prefix, slash, _ = key.partition("/")
    if not slash:
        return False
    labels = prefix.split(".")
    reserved = ("modelcontextprotocol", "mcp")
    return (len(labels) > 1 and labels[1] in reserved) or any(label in reserved for label in labels[:-1])


def app_meta_of_result(result: dict[str, Any]) -> dict[str, Any]:
    """What of a result's `_meta` the app put there for its widget: the protocol's own keys and appsdk's
    crash report left out (the 2026-07-28 era adds serverInfo to every result; that is not the app's data)."""
    return {key: value for key, value in _meta(without_tool_crash(result)).items() if not is_protocol_meta_key(key)}


def error_text(result: dict[str, Any]) -> str:
    """The first line of a result's first text block: what a failed tool said."""
    for block in result.get("content") if isinstance(result.get("content"), list) else []:
        if isinstance(block, dict) and block.get("type") == "text" and str(block.get("text") or "").strip():
            return str(block["text"]).strip().splitlines()[0]
    return ""


def crash_hint(error_text: str, crash: ToolCrash | None) -> str | None:
    """What to tell a developer beside a crashed tool's result, or None when the result says it all."""
    if crash is not None:
        return (
            f"the model sees only {error_text!r}; the tool raised {crash.summary}. "
            "Raise ToolError(...) for text it should read"
        )
    if error_text.startswith("Error executing tool ") and ":" not in error_text:
        # mcp 2.x's answer to any exception but ToolError; the server's log has the traceback.
        return (
            "the server hid the exception (mcp does, for anything but ToolError): its log has the traceback, "
            "or run it under `appsdk dev` to see it here"
        )
    return None
