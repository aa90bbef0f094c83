"""The host without its UI: what a host that renders no widgets gets for the run's call.

Such a host offers no MCP Apps extension (`io.modelcontextprotocol/ui` under `capabilities.extensions`),
so a server may list its tools and answer differently (SEP-2133: an extension degrades gracefully; mcp's
`client_supports_apps`, ext-apps' `getUiCapability`). So the run's tool is called again, with the same
arguments, over a session of its own that withholds the extension, and the page shows what the model
gets (the result's content) beside a line on what the server did differently.

POST /api/no-ui    (?run=ID) → {tool, result, appMeta, differences}: the tool as listed without the
                   extension (null: not listed), the result, the app's own _meta in it, and what differs
                   from the widget host's answer
"""

from __future__ import annotations

import json
from dataclasses import replace
from http import HTTPStatus
from typing import Any

from appsdk_cli.appmeta import app_meta_of_result, tool_meta, without_tool_crash
from appsdk_cli.client import McpClient
from appsdk_cli.connection import signed_in, step_up
from appsdk_cli.host.handler import HttpError, Request, post
from appsdk_cli.host.run import DEFAULT_RUN, UnknownRun
from appsdk_cli.host.session import PreviewSession


def _same(left: Any, right: Any) -> bool:
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


def differences(
    preview: PreviewSession, tools: list[dict[str, Any]], tool: dict[str, Any] | None, result: dict[str, Any]
) -> list[str]:
    """What the server did for a host without widgets that it did not do for the widget host."""
    name = preview.tool.name
    said: list[str] = []
    if tool is None:
        said.append(f"it does not list {name} to a host without widgets")
    else:
        meta = tool_meta(tool)
        if preview.tool.template and not meta.template:
            said.append(f"it lists {name} without a widget")
        if meta.description != preview.tool.description:
            said.append(f"it describes {name} differently")
    ui_names = {str(t.get("name")) for t in preview.tools if isinstance(t, dict)}
    plain_names = {str(t.get("name")) for t in tools if isinstance(t, dict)}
    if preview.tools and ui_names - plain_names:
        said.append(f"it leaves out {', '.join(sorted(ui_names - plain_names))}")
    if preview.tools and plain_names - ui_names:
        said.append(f"it adds {', '.join(sorted(plain_names - ui_names))}")
    for key in ("content", "structuredContent"):
        if not _same(result.get(key), preview.result.get(key)):
            said.append(f"its result has other {key}")
    # The protocol's own keys (2026-07-28 stamps serverInfo on every result) are not the app's answer.
    if not _same(app_meta_of_result(result), app_meta_of_result(preview.result)):
        said.append("its result has other _meta")
    return said


def call_without_ui(preview: PreviewSession, trace: Any = None) -> dict[str, Any]:
    """The run's tool called as a host without widgets calls it: listed, then called, in one session."""
    target = replace(preview.target, ui=False)
    name = preview.tool.name
    asked: set[str] = set()

    def work(client: McpClient) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        if trace is not None:
            client.trace = trace
        tools = client.list_tools()
        result = client.call_tool(name, preview.arguments)
        step_up(target, name, result, asked)
        return tools, result

    tools, result = signed_in(target, work)
    result = without_tool_crash(result)
    tool = next((t for t in tools if isinstance(t, dict) and t.get("name") == name), None)
    return {
        "tool": tool,
        "result": result,
        "appMeta": app_meta_of_result(result),
        "differences": differences(preview, tools, tool, result),
    }


def text_only(preview: PreviewSession, trace: Any = None) -> dict[str, Any]:
    """`call_without_ui` once per result of the run: the workbench's frames (one per profile) and page
    reloads share it, and a re-run (a new result) calls again."""
    with preview.text_only_lock:
        kept = preview.text_only
        if kept is not None and kept[0] is preview.result:
            return kept[1]
        answer = call_without_ui(preview, trace)
        preview.text_only = (preview.result, answer)
        return answer


def _no_ui(request: Request) -> None:
    body = request.body or {}
    run_id = request.query.get("run") or (body.get("run") if isinstance(body.get("run"), str) else DEFAULT_RUN)
    try:
        preview = request.host.view(run_id)[0]
    except UnknownRun:
        raise HttpError(HTTPStatus.NOT_FOUND, f"no run {run_id!r} here") from None
    trace = request.host.trace_for(run_id) if request.host.trace_for is not None else None
    request.json(HTTPStatus.OK, text_only(preview, trace))


ROUTES = (post("/api/no-ui", _no_ui),)
