"""What `appsdk preview TOOL` shows: the tool called once, its widget template, the tools a widget may call.

`prepare()` calls the tool (arguments parsed exactly like `appsdk call`, through remote.call_tool), then
reads the widget resource the tool names and the tools a widget may call. The result is the host's
plain `PreviewSession`, which the preview server, a test or a script can use without the CLI.
"""

from __future__ import annotations

from appsdk_cli.appmeta import crash_hint, tool_crash, without_tool_crash
from appsdk_cli.connection import Target, session
from appsdk_cli.errors import AppsdkError
from appsdk_cli.host.session import PreviewSession, listing_meta, read_template, template_warnings, widget_tools
from appsdk_cli.permissions import DEFAULT_MODE, decide
from appsdk_cli.remote import call_tool, request_meta


def prepare(
    target: Target,
    tool_name: str,
    words: list[str],
    args_json: str | None = None,
    *,
    locale: str | None = None,
    permissions: str = DEFAULT_MODE,
) -> PreviewSession:
    """Call the tool as ChatGPT would, then fetch its widget and the tools the widget may call.

    When the permission mode asks before this tool (permissions.py), the tool is not called: as in
    ChatGPT, the widget shows with its input held, and approving it in the page makes the call."""
    if permissions != DEFAULT_MODE:
        held = _held_for_approval(target, tool_name, words, args_json, permissions)
        if held is not None:
            return held
    outcome = call_tool(target, tool_name, words, args_json, request_meta(locale=locale))
    uri = outcome.tool.template
    if not uri:
        raise AppsdkError(
            f"{tool_name} declares no widget (no _meta.ui.resourceUri or openai/outputTemplate), so there is nothing"
            f" to preview; `appsdk call {tool_name}` shows its result"
        )
    warnings: list[str] = []
    if outcome.tool.templates_disagree:
        warnings.append(
            f"ui.resourceUri {outcome.tool.resource_uri} differs from openai/outputTemplate"
            f" {outcome.tool.output_template}; previewing {uri}"
        )
    if outcome.is_error:
        hint = crash_hint(outcome.error_text(), tool_crash(outcome.result))
        warnings.append(
            f"{tool_name} returned isError ({outcome.error_text()}); the widget gets that result"
            + (f". Hint: {hint}" if hint else "")
        )
    # remote.call_tool keeps its tool listing to itself, so a second session lists tools and resources.
    with session(target) as client:
        tools = client.list_tools()
        listed = listing_meta(client, uri)
    template = read_template(target, uri, listed)
    warnings.extend(template_warnings(template))
    definition = next((t for t in tools if isinstance(t, dict) and t.get("name") == tool_name), None)
    return PreviewSession(
        target=target,
        tool=outcome.tool,
        arguments=outcome.arguments,
        result=without_tool_crash(outcome.result),  # what production would send the widget
        template=template,
        widget_tools=widget_tools(tools),
        warnings=warnings,
        tool_definition=definition or {"name": tool_name, "inputSchema": {"type": "object"}},
        tools=[t for t in tools if isinstance(t, dict)],
    )


def _held_for_approval(
    target: Target, tool_name: str, words: list[str], args_json: str | None, mode: str
) -> PreviewSession | None:
    """The session of a call the mode asks about, with its arguments checked but the tool not called;
    None when the mode lets it run (or the tool is not listed: call_tool then says so as usual)."""
    import time

    from appsdk_cli.appmeta import tool_meta
    from appsdk_cli.schemawalk import Budget
    from appsdk_cli.toolargs import build_arguments

    with session(target) as client:
        tools = client.list_tools()
        definition = next((t for t in tools if isinstance(t, dict) and t.get("name") == tool_name), None)
        if definition is None or not decide(mode, definition).ask:
            return None
        meta = tool_meta(definition)
        uri = meta.template
        if not uri:
            return None  # no widget: call_tool's path says there is nothing to preview
        listed = listing_meta(client, uri)
    deadline = time.monotonic() + target.timeout
    arguments = build_arguments(
        tool_name, definition.get("inputSchema"), words, args_json, budget=Budget(deadline=deadline)
    )
    template = read_template(target, uri, listed)
    return PreviewSession(
        target=target,
        tool=meta,
        arguments=arguments,
        result={"content": []},
        template=template,
        widget_tools=widget_tools(tools),
        warnings=template_warnings(template),
        tool_definition=definition,
        tools=[t for t in tools if isinstance(t, dict)],
        pending=True,
        deferred=True,
    )
