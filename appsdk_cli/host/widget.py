"""The widget document: the resource's HTML with the host bootstrap injected first, under its CSP.

The host page asks for the document (`/api/widget`, on its own origin) and hands its HTML to the sandbox
proxy in `ui/notifications/sandbox-resource-ready`, as the MCP Apps spec has a web host do. The proxy
frames the view origin's copy of that same document (`/view?document=TOKEN`, this module's one route
there): the widget loads as a page of its own site (origins.py), not written into another, reaches the
host only through postMessage, and is under the Content-Security-Policy its resource declares, sent as a
response header as a real host sends it. The profile and device the page plays (profiles.py) and
window.openai's file store complete the document.

A document is one view of the call: the inline one, or the modal `window.openai.requestModal` opens
(modal.js on the host page). The modal's shows the call's template or another `ui://` template the server
lists, and its `window.openai.view` is `{mode: "modal", params}`: OpenAI's reference names `view` and
`requestModal({template, params})` without a shape for either, so this follows the peers (Skybridge's and
MCPJam's hosts: `view.mode`, `view.params`; the modal gets the same toolInput and toolOutput as the inline
view, and stays in displayMode "inline").
"""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from typing import Any

from appsdk_cli.client import McpClient, ProtocolError
from appsdk_cli.connection import signed_in
from appsdk_cli.host import files, profiles
from appsdk_cli.host.csp import HostCsp
from appsdk_cli.host.devwidget import vite_page
from appsdk_cli.host.handler import HttpError, Request, get
from appsdk_cli.host.run import DEFAULT_RUN, UnknownRun
from appsdk_cli.host.session import DISPLAY_MODES, THEMES, USER_AGENT, PreviewSession, WidgetTemplate, read_template
from appsdk_cli.host.state import HostState
from appsdk_cli.host.static import STATIC
from appsdk_cli.permissions import UnknownMode, decide, parse_mode

VIEW_MODES = ("inline", "modal")


def view_of(query: dict[str, str]) -> dict[str, Any]:
    """window.openai.view for the document: which view it is, and the params requestModal gave a modal."""
    mode = query.get("view", "inline")
    if mode not in VIEW_MODES:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"view must be {' or '.join(VIEW_MODES)}")
    params = None
    if mode == "modal" and query.get("viewParams"):
        try:
            params = json.loads(query["viewParams"])
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST, "viewParams must be JSON") from None
        if params is not None and not isinstance(params, dict):
            raise HttpError(HTTPStatus.BAD_REQUEST, "requestModal: params must be an object")
    return {"mode": mode, "params": params}


def registered_template(preview: PreviewSession, uri: str) -> WidgetTemplate:
    """A template requestModal names: a `ui://` resource the server lists, read as the call's was. Anything
    else is refused in one line, since ChatGPT renders only templates the app registered."""
    if not uri.startswith("ui://"):
        refused = f"requestModal: template must be a ui:// resource URI, not {uri[:200]!r}"
        raise HttpError(HTTPStatus.BAD_REQUEST, refused)

    def work(client: McpClient) -> WidgetTemplate:
        try:
            resources = client.list_resources()
        except ProtocolError:
            resources = []
        listed = next((r for r in resources if isinstance(r, dict) and r.get("uri") == uri), None)
        if listed is None:
            raise HttpError(
                HTTPStatus.NOT_FOUND, f"requestModal: {uri[:200]} is not a resource {preview.target.description} lists"
            )
        meta = listed.get("_meta") if isinstance(listed.get("_meta"), dict) else None
        return read_template(preview.target, uri, meta, client)

    return signed_in(preview.target, work)


def widget_document(host: HostState, query: dict[str, str]) -> tuple[str, str]:
    """The widget's HTML with the host bootstrap injected first, and its CSP header value."""
    run_id = query.get("run", DEFAULT_RUN)
    view = view_of(query)
    preview, current = host.view(run_id)
    named = query.get("template") or current.uri
    # The call's own template is re-read as every load re-reads it; another is the modal's, read afresh.
    template = host.template(run_id) if named == current.uri else registered_template(preview, named)
    options = host.options
    theme = query.get("theme") if query.get("theme") in THEMES else options.theme
    mode = query.get("displayMode") if query.get("displayMode") in DISPLAY_MODES else options.display_mode
    with_openai = query.get("openai", "1" if not options.bridge_only else "0") != "0"
    config: dict[str, Any] = {
        "parentOrigin": host.origins.proxy_origin,
        "openai": with_openai,
        "globals": {
            "toolInput": preview.arguments,
            "toolOutput": preview.result.get("structuredContent"),
            "toolResponseMetadata": tool_response_metadata(preview.result),
            "widgetState": host.widget_state(run_id),
            "theme": theme,
            "displayMode": mode,
            "locale": query.get("locale") or options.locale,
            "safeArea": {"insets": {"top": 0, "bottom": 0, "left": 0, "right": 0}},
            "userAgent": USER_AGENT,
            "view": view,
        },
    }
    # Absent where the profile bounds nothing (ChatGPT inline): window.openai.maxHeight is then undefined.
    if query.get("maxHeight", "").isdigit():
        config["globals"]["maxHeight"] = int(query["maxHeight"])
    # `appsdk dev`'s Vite, for hot module replacement, serves the call's own template only.
    vite = vite_page(host.record, preview, template) if named == current.uri else None
    csp = widget_extras(host, query, config, vite.csp(template.csp) if vite else template.csp)
    return inject_bootstrap(vite.page() if vite else template.html, config), csp


def tool_response_metadata(result: dict[str, Any]) -> dict[str, Any]:
    """window.openai.toolResponseMetadata for a tool result, as ChatGPT fills it in late 2026.

    OpenAI's current reference says it carries `status`, `call_tool_result` and `mcp_tool_result`, the last
    two being the whole MCP result (hidden `_meta` included); widgets in the wild read `_meta` and
    `structuredContent` from either. The reference does not list `status`'s values: "completed" and
    "failed" (an `isError` result) follow the Responses API's MCP call statuses. The result's own `_meta`
    keys stay at the top level as well, where widgets written to the older reference look for them.
    static/host/context.js `toolResponseMetadata` builds the same for a new result on the live page.
    """
    meta = result.get("_meta")
    envelope: dict[str, Any] = dict(meta) if isinstance(meta, dict) else {}
    envelope.update(
        status="failed" if result.get("isError") else "completed",
        call_tool_result=result,
        mcp_tool_result=result,
    )
    return envelope


def widget_extras(host: HostState, query: dict[str, str], config: dict[str, Any], csp: HostCsp) -> str:
    """Complete the widget document's bootstrap config for the profile and device, and return its CSP."""
    config["globals"].update(profiles.widget_globals(query))
    preview, _ = host.view(query.get("run", DEFAULT_RUN))
    config["approval"] = decide(permission_mode(query.get("permissions"), host), preview.tool_definition).ask
    if config["approval"]:
        # A tool that needs approval gets its input only once approved: nothing of the call until then.
        config["globals"].update(toolInput=None, toolOutput=None, toolResponseMetadata=None)
    config["escapeExits"] = True
    return profiles.widget_csp(csp, query, files.files_source(host.origins.files_origin))


def permission_mode(asked: object, host: HostState) -> str:
    """The permission mode a request names (the host page's choice), else the host's; HttpError if unknown."""
    if asked is None or asked == "":
        return host.options.permissions
    try:
        return parse_mode(asked)
    except UnknownMode as problem:
        raise HttpError(HTTPStatus.BAD_REQUEST, str(problem)) from None


def inject_bootstrap(html: str, config: dict[str, Any]) -> str:
    """Put the host bootstrap before anything of the widget's own, so window.openai exists when its scripts run."""
    # "<" escaped inside the JSON so no value can close the script element early.
    data = json.dumps(config, ensure_ascii=False).replace("<", "\\u003c").replace("\u2028", "\\u2028")
    script = (STATIC / "bootstrap.js").read_text(encoding="utf-8").replace("__APPSDK_CONFIG__", data)
    tag = f'<script data-appsdk-preview="bootstrap">\n{script}</script>\n'
    # After <head> (or <html>, or the doctype): a script ahead of the doctype would put the page in quirks mode.
    for pattern in (r"<head\b[^>]*>", r"<html\b[^>]*>", r"<!doctype[^>]*>"):
        found = re.search(pattern, html, flags=re.IGNORECASE)
        if found:
            return html[: found.end()] + "\n" + tag + html[found.end() :]
    return tag + html


def _view(request: Request) -> None:
    stored = request.host.stored_document(request.query.get("document", ""))
    if stored is None:
        raise HttpError(HTTPStatus.NOT_FOUND, "no such widget document (reload the host page)", plain=True)
    html, csp = stored
    request.send(HTTPStatus.OK, html.encode(), "text/html; charset=utf-8", {"Content-Security-Policy": csp})


def document_for_page(request: Request) -> None:
    """`GET /api/widget` on the host origin: the document the host page hands the proxy, and the token the
    view origin serves that same document by (/view?document=TOKEN), under its CSP."""
    host = request.host
    try:
        # Read first: a call that ends while the document is built is then said to be pending, and the
        # page sends its result again once the view connects (harmless), never the other way round.
        pending = host.view(request.query.get("run", DEFAULT_RUN))[0].pending
        html, csp = widget_document(host, request.query)
    except UnknownRun:
        raise HttpError(HTTPStatus.NOT_FOUND, "no such run") from None
    document = host.remember_document(html, csp)
    request.json(HTTPStatus.OK, {"html": html, "csp": csp, "document": document, "pending": pending})


# The view origin serves the documents the host page was handed, and nothing else.
ROUTES = (get("/view", _view),)
