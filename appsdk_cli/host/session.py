"""What the host shows for a run: the call, its result, the widget template, the tools a widget may call.

A `PreviewSession` is a plain object: `appsdk preview TOOL` fills one with `preview.prepare()`, the
workbench fills one per run that has a widget. `read_template` reads a widget resource the way a host
reads it; `call_from_widget` and friends pass a widget's requests on to the real server, refused where
a host would refuse them.
"""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass, field
from typing import Any

from appsdk_cli.appmeta import (
    WIDGET_MIME_TYPES,
    Bridge,
    ToolMeta,
    tool_meta,
)
from appsdk_cli.client import McpClient, ProtocolError
from appsdk_cli.connection import Target, session, signed_in, step_up
from appsdk_cli.errors import AppsdkError
from appsdk_cli.host.csp import HostCsp, host_csp
from appsdk_cli.permissions import DEFAULT_MODE

THEMES = ("light", "dark")
DISPLAY_MODES = ("inline", "pip", "fullscreen")
# What ChatGPT on a desktop browser says about itself in window.openai.userAgent and the bridge's hostContext.
USER_AGENT = {"device": {"type": "desktop"}, "capabilities": {"hover": True, "touch": False}}


@dataclass(frozen=True)
class PreviewOptions:
    """How the host presents the widget at first; the page can change theme and display mode later."""

    theme: str = "light"
    display_mode: str = "inline"
    locale: str = "en-US"
    # Withhold window.openai, so a portable widget must use the MCP Apps bridge (as in non-ChatGPT hosts).
    bridge_only: bool = False
    # Play a host without widgets (noui.py): no MCP Apps extension offered, no frame, the text the model gets.
    no_ui: bool = False
    profile: str = "chatgpt"  # the host played (profiles.py): chatgpt, mcp-apps or claude
    device: str = "desktop"  # desktop, tablet or mobile
    time_zone: str | None = None  # hostContext.timeZone; None: the browser's own
    # ChatGPT's permission mode the host plays (permissions.py): which calls wait for the user's approval.
    permissions: str = DEFAULT_MODE


@dataclass(frozen=True)
class WidgetTemplate:
    uri: str
    html: str
    mime_type: str | None
    meta: dict[str, Any]  # the resource _meta: the listing's, overlaid by the read contents'
    csp: HostCsp


@dataclass
class PreviewSession:
    target: Target
    tool: ToolMeta
    arguments: dict[str, Any]
    result: dict[str, Any]  # the CallToolResult, as on the wire
    template: WidgetTemplate
    # Per bridge, the tools the widget may call through the host (appmeta's rule, from tools/list).
    widget_tools: dict[Bridge, frozenset[str]]
    warnings: list[str] = field(default_factory=list)
    # The tool exactly as tools/list gave it: the bridge's hostContext.toolInfo.tool is a complete MCP Tool.
    tool_definition: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)  # tools/list, for fileParams on widget calls
    # The call is still in flight (the workbench shows the widget at once, as ChatGPT does): the view gets
    # tool-input now and tool-result when the answer comes (PreviewServer.complete_run), or tool-cancelled.
    pending: bool = False
    # The call is not made yet: the permission mode asks first (permissions.py), as ChatGPT asks before it
    # runs the tool. The view shows with tool-input held; approving makes the call (/api/rerun).
    deferred: bool = False
    # The call as a host without widgets got it (noui.py): the result it was made beside, and the answer.
    text_only: tuple[dict[str, Any], dict[str, Any]] | None = field(default=None, repr=False)
    text_only_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def state_key(self) -> str:
        """Widget state belongs to one tool rendering one template (ChatGPT keeps it per widget instance)."""
        return f"{self.tool.name}\n{self.template.uri}"


def prefers_border(meta: dict[str, Any]) -> bool:
    ui = meta.get("ui") if isinstance(meta.get("ui"), dict) else {}
    return ui.get("prefersBorder") is True or meta.get("openai/widgetPrefersBorder") is True


def widget_tools(tools: list[dict[str, Any]]) -> dict[Bridge, frozenset[str]]:
    metas = [tool_meta(t) for t in tools if isinstance(t, dict)]
    return {bridge: frozenset(m.name for m in metas if m.widget_may_call(bridge)) for bridge in Bridge}


def _pick_contents(result: dict[str, Any], uri: str) -> dict[str, Any] | None:
    contents = [c for c in result.get("contents") or [] if isinstance(c, dict)]
    return next((c for c in contents if c.get("uri") == uri), contents[0] if contents else None)


def listing_meta(client: McpClient, uri: str) -> dict[str, Any] | None:
    """The `_meta` the server's resource listing gives `uri` (read_template overlays the read contents' on
    it); None when the server lists no resources or not this one."""
    try:
        resources = client.list_resources()
    except ProtocolError:
        resources = []
    listed = next((r for r in resources if isinstance(r, dict) and r.get("uri") == uri), None)
    return listed.get("_meta") if listed and isinstance(listed.get("_meta"), dict) else None


def template_warnings(template: WidgetTemplate) -> list[str]:
    """What is wrong with a widget template for ChatGPT: a MIME type it will not render, and a CSP whose
    two declarations disagree."""
    warnings: list[str] = []
    if template.mime_type not in WIDGET_MIME_TYPES:
        warnings.append(
            f"{template.uri} is served as {template.mime_type or 'no MIME type'}, not"
            f" {' or '.join(WIDGET_MIME_TYPES)}; ChatGPT will not render it"
        )
    if template.csp.disagreement:
        warnings.append(template.csp.disagreement)
    return warnings


def read_template(
    target: Target, uri: str, listed_meta: dict[str, Any] | None = None, client: McpClient | None = None
) -> WidgetTemplate:
    """Read the widget resource and build its CSP; a missing or non-HTML resource is one clear line.
    `client`: a session already open to the server (the workbench reads the template in its call's)."""
    if client is None:
        with session(target) as fresh:
            return read_template(target, uri, listed_meta, fresh)
    try:
        result = client.read_resource(uri)
    except ProtocolError as problem:
        raise AppsdkError(
            f"the widget {uri} could not be read from {target.description}: {problem.message}"
            " (does the server register a resource with that URI?)",
            detail=problem.detail,
        ) from None
    item = _pick_contents(result, uri)
    if item is None:
        raise AppsdkError(f"{target.description} returned no contents for the widget {uri}")
    if isinstance(item.get("text"), str):
        html = item["text"]
    elif isinstance(item.get("blob"), str):
        try:
            html = base64.b64decode(item["blob"]).decode("utf-8")
        except ValueError as problem:
            raise AppsdkError(f"the widget {uri} is a blob that is not UTF-8 HTML: {problem}") from None
    else:
        raise AppsdkError(f"the widget {uri} has neither text nor blob contents")
    meta = dict(listed_meta or {})
    if isinstance(item.get("_meta"), dict):
        meta.update(item["_meta"])
    mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else None
    return WidgetTemplate(uri=uri, html=html, mime_type=mime, meta=meta, csp=host_csp(meta))


_REFUSALS = {
    Bridge.MCP_APPS: 'over the MCP Apps bridge a tool is callable when its _meta.ui.visibility lists "app"'
    " (the default, when it has none)",
    Bridge.OPENAI: 'window.openai.callTool needs _meta["openai/widgetAccessible"] = true (or a _meta.ui.visibility'
    ' that lists "app")',
}


def call_from_widget(
    preview: PreviewSession, name: str, arguments: dict[str, Any], bridge: Bridge, trace: Any = None
) -> dict[str, Any]:
    """A widget's tools/call or window.openai.callTool, forwarded to the real server; refused, per the
    bridge it came over, for tools the widget may not call. `trace`: hears the call's MCP messages."""
    if name not in preview.widget_tools[bridge]:
        raise PermissionError(f"the widget may not call {name!r}: {_REFUSALS[bridge]}")
    asked: set[str] = set()

    def work(client: McpClient) -> dict[str, Any]:
        if trace is not None:
            client.trace = trace
        result = client.call_tool(name, arguments)
        step_up(preview.target, name, result, asked)
        return result

    # A fresh session per call (the dev server may have reloaded between clicks), signed in as `appsdk call`
    # is: a 401 signs in and the call goes again, a result asking for more scope steps up.
    return signed_in(preview.target, work)


def read_from_widget(preview: PreviewSession, uri: str, trace: Any = None) -> dict[str, Any]:
    """A widget's resources/read, forwarded to the real server."""

    def work(client: McpClient) -> dict[str, Any]:
        if trace is not None:
            client.trace = trace
        return client.read_resource(uri)

    return signed_in(preview.target, work)


# The listings a view may page through over the bridge (hostCapabilities.serverResources).
FORWARDED_LISTS = ("resources/list", "resources/templates/list")


def forward_from_widget(
    preview: PreviewSession, method: str, params: dict[str, Any] | None, trace: Any = None
) -> dict[str, Any]:
    """A view's resources/list or resources/templates/list, one page, passed through to the server."""
    if method not in FORWARDED_LISTS:
        raise PermissionError(f"the preview does not forward {method} from a widget")

    def work(client: McpClient) -> dict[str, Any]:
        if trace is not None:
            client.trace = trace
        return client.request(method, params or None)

    return signed_in(preview.target, work)
