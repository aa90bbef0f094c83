"""What `call`, `tools`, `resources` and `read` ask of a running server, as result objects.

The capability behind those commands, usable without the CLI: check the request against what the
server declares, send it, and hand back what came back for the renderers to show. Which server, the
session and the sign-in around it are connection.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from appsdk_cli import mcpskills
from appsdk_cli.appmeta import ResourceMeta, ToolMeta, resource_meta, tool_meta, ui_extension
from appsdk_cli.client import AuthRequired, McpClient, ProtocolError, modern
from appsdk_cli.client.modern import HEADER_MISMATCH
from appsdk_cli.client.toolcache import ToolCache, ToolList, cache_key
from appsdk_cli.connection import Target, signed_in, step_up, token_for
from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.mcpskills import FileVerdict


def close_matches(word: str, choices: list[str]) -> list[str]:
    import difflib

    return difflib.get_close_matches(word, choices, n=3, cutoff=0.5)


def _unknown(kind: str, name: str, choices: list[str], where: str) -> UsageError:
    matches = close_matches(name, choices)
    if matches:
        return UsageError(f"{where} has no {kind} {name!r}; did you mean {', '.join(matches)}?")
    if choices:
        shown = ", ".join(choices[:10]) + (", ..." if len(choices) > 10 else "")
        return UsageError(f"{where} has no {kind} {name!r}; it has {shown}")
    return UsageError(f"{where} has no {kind}s at all")


def request_meta(
    *,
    locale: str | None = None,
    user_agent: str | None = None,
    user_location: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The request `_meta` hints ChatGPT sends with a tool call (hints only, never authorization)."""
    meta: dict[str, Any] = dict(extra or {})
    if locale:
        meta["openai/locale"] = locale
    if user_agent:
        meta["openai/userAgent"] = user_agent
    if user_location:
        meta["openai/userLocation"] = user_location
    return meta


@dataclass
class CallOutcome:
    target: Target
    tool: ToolMeta
    arguments: dict[str, Any]
    result: dict[str, Any]  # the CallToolResult, as on the wire
    era: str = ""  # the protocol era the call went out in, e.g. "2026-07-28 (stateless)"

    @property
    def is_error(self) -> bool:
        return self.result.get("isError") is True

    def error_text(self) -> str:
        """The first text block of an isError result, for the one-line message."""
        for block in self.result.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
                return str(block["text"]).strip().splitlines()[0]
        return "no text content"


# JSON-RPC errors that refuse a tools/call before the tool runs: safe to resend after a fresh tools/list.
INVALID_PARAMS = -32602
STALE_DEFINITION_ERRORS = (INVALID_PARAMS, HEADER_MISMATCH)


def call_tool(
    target: Target,
    name: str,
    words: list[str],
    args_json: str | None = None,
    meta: dict[str, Any] | None = None,
    *,
    tools_cache: ToolCache | None = None,
) -> CallOutcome:
    """Check and convert the arguments against the tool's inputSchema, then call it.

    The definition comes from the tool list remembered for this server (client/toolcache.py), so a
    warm call is one request; tools/list is asked only when that list may be stale: the tool is not in
    it, the words do not fit its schema, or the server's answer suggests the definition changed (see
    `_call_with_fresh_definition`).
    """
    import time

    from appsdk_cli.schemawalk import Budget
    from appsdk_cli.toolargs import build_arguments

    # Building the arguments walks a schema the server wrote: it ends within --timeout, however hostile.
    deadline = time.monotonic() + target.timeout

    def build(schema: Any) -> dict[str, Any]:
        return build_arguments(name, schema, words, args_json, budget=Budget(deadline=deadline))

    cache = tools_cache if tools_cache is not None else ToolCache()
    relinked: set[str] = set()

    def work(client: McpClient) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
        key = (
            cache_key(target.url, client.era.version, client.authorization, ui=target.ui)
            if target.url and client.era
            else None
        )
        remembered = cache.get(key) if key else None
        tool = (
            next((t for t in client.admit_tools(remembered.tools) if t.get("name") == name), None)
            if remembered
            else None
        )
        arguments: dict[str, Any] | None = None
        if tool is not None:
            try:
                arguments = build(tool.get("inputSchema"))
            except UsageError:
                tool = None  # perhaps the tool has changed since: its fresh schema decides
        if tool is None or arguments is None:
            tool = _listed_tool(client, target, name, cache, key)
            arguments = build(tool.get("inputSchema"))
            result = client.call_tool(name, arguments, meta or None, as_task=runs_as_task(client, tool))
        else:
            tool, arguments, result = _call_with_fresh_definition(
                client,
                target,
                tool,
                arguments,
                meta,
                cache,
                key,
                build,
            )
        if key and client.tools_changed:
            cache.forget(key)
        step_up(target, name, result, relinked)
        return tool, arguments, result, client.era.label if client.era else ""

    tool, arguments, result, era = signed_in(target, work)
    return CallOutcome(target, tool_meta(tool), arguments, result, era)


def runs_as_task(client: McpClient, tool: dict[str, Any]) -> bool:
    """Whether to send the call as an MCP task (`appsdk call` and the workbench both ask this): only a tool
    that runs no other way (taskSupport "required") is; where the server offers no tasks (or in 2026-07-28,
    which has none), that is said before sending, since a plain tools/call is refused (-32601)."""
    execution = tool.get("execution") if isinstance(tool.get("execution"), dict) else {}
    if execution.get("taskSupport") != "required":
        return False
    name = tool.get("name")
    if client.modern:
        raise AppsdkError(
            f'{name} runs only as an MCP task (its execution.taskSupport is "required"), which appsdk runs in'
            " the 2025-11-25 handshake; pass --protocol 2025-11-25"
        )
    if not client.offers_tool_tasks():
        raise AppsdkError(
            f'{name} runs only as an MCP task (its execution.taskSupport is "required"), but the server does'
            " not offer tasks (no tasks.requests.tools.call capability)"
        )
    return True


def _listed_tool(client: McpClient, target: Target, name: str, cache: ToolCache, key: str | None) -> dict[str, Any]:
    """The tool's definition from a fresh tools/list (remembered for the next call), or a UsageError."""
    tools = client.list_tools()
    if key:
        cache.remember(key, ToolList(tools, dict(client.dropped_tools)))
    tool = next((t for t in tools if t.get("name") == name), None)
    if tool is None and name in client.dropped_tools:
        raise UsageError(
            f"{name} is left out of tools/list in 2026-07-28 ({client.dropped_tools[name]});"
            " `--protocol 2025-11-25` calls it the old way, and `appsdk check` explains the rule"
        )
    if tool is None:
        raise _unknown("tool", name, [str(t.get("name")) for t in tools], target.description)
    return tool


def _call_with_fresh_definition(
    client: McpClient,
    target: Target,
    tool: dict[str, Any],
    arguments: dict[str, Any],
    meta: dict[str, Any] | None,
    cache: ToolCache,
    key: str | None,
    rebuild: Callable[[Any], dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Call with a remembered definition; when the answer says it may be stale, list again and resend once.

    A JSON-RPC invalid-params or header-mismatch error refused the request before the tool ran, so it is
    resent with the fresh definition. An isError result may be a refusal of arguments built from an old
    schema (servers report input validation that way since 2025-11-25) or the tool's own failure: it is
    resent only if the fresh definition builds different arguments or headers; if the tool is gone, it
    is the usual unknown-tool error.
    """
    name = str(tool.get("name"))
    try:
        result = client.call_tool(name, arguments, meta or None, as_task=runs_as_task(client, tool))
    except ProtocolError as problem:
        if isinstance(problem, AuthRequired) or problem.code not in STALE_DEFINITION_ERRORS:
            raise
        fresh = _listed_tool(client, target, name, cache, key)
        arguments = rebuild(fresh.get("inputSchema"))
        return fresh, arguments, client.call_tool(name, arguments, meta or None, as_task=runs_as_task(client, fresh))
    if result.get("isError") is not True:
        return tool, arguments, result
    fresh = _listed_tool(client, target, name, cache, key)
    if fresh == tool:
        return tool, arguments, result
    fresh_arguments = rebuild(fresh.get("inputSchema"))
    changed_headers = modern.header_map(fresh.get("inputSchema")) != modern.header_map(tool.get("inputSchema"))
    if fresh_arguments == arguments and not changed_headers:
        return fresh, arguments, result
    return (
        fresh,
        fresh_arguments,
        client.call_tool(name, fresh_arguments, meta or None, as_task=runs_as_task(client, fresh)),
    )


@dataclass
class ToolsOutcome:
    target: Target
    tools: list[dict[str, Any]]  # as on the wire
    metas: list[ToolMeta] = field(default_factory=list)
    era: str = ""  # the era this listing came in
    # Which eras the server speaks (client.probe.EraReport), for HTTP servers; None over stdio.
    eras: Any = None
    # Tools a 2026-07-28 client must leave out (invalid x-mcp-header), with why.
    dropped: dict[str, str] = field(default_factory=dict)
    # The server's own MCP Apps extension settings (capabilities.extensions, from server/discover or
    # initialize); None when it declares none, which most servers that serve widgets do not.
    server_ui: dict[str, Any] | None = None
    # Skills over MCP (SEP-2640): the skills/list entries, or None when the server declares no skills.
    skills: list[dict[str, Any]] | None = None
    skills_error: str = ""  # skills/list failed although the server declares the extension


def list_skills(target: Target) -> ToolsOutcome:
    """The server's skills alone (the workbench's list): a ToolsOutcome whose tools are left empty."""

    def work(client: McpClient) -> ToolsOutcome:
        outcome = ToolsOutcome(target, [])
        _add_skills(client, outcome)
        return outcome

    return signed_in(target, work)


def _add_skills(client: McpClient, outcome: ToolsOutcome) -> None:
    if not client.declares_skills:
        return
    try:
        outcome.skills = client.list_skills()
    except AuthRequired:
        raise
    except ProtocolError as problem:
        outcome.skills, outcome.skills_error = [], problem.message


def list_tools(target: Target) -> ToolsOutcome:
    from appsdk_cli.client.probe import probe_eras

    def work(client: McpClient) -> ToolsOutcome:
        listed = client.list_tools()
        if target.url and client.era:  # the next `appsdk call` can go straight to the tool
            key = cache_key(target.url, client.era.version, client.authorization, ui=target.ui)
            ToolCache().remember(key, ToolList(listed, dict(client.dropped_tools)))
        era = client.era.label if client.era else ""
        outcome = ToolsOutcome(target, listed, [tool_meta(t) for t in listed], era, None, dict(client.dropped_tools))
        outcome.server_ui = ui_extension(client.server_capabilities())
        _add_skills(client, outcome)
        return outcome

    outcome = signed_in(target, work)
    if target.url:
        outcome.eras = probe_eras(target.url, timeout=target.timeout, token=token_for(target), trace=target.trace)
    return outcome


@dataclass
class ResourcesOutcome:
    target: Target
    resources: list[dict[str, Any]]
    metas: list[ResourceMeta] = field(default_factory=list)
    # resources/templates/list, as on the wire: URI templates (RFC 6570) a client fills in to read.
    templates: list[dict[str, Any]] = field(default_factory=list)


def list_resources(target: Target) -> ResourcesOutcome:
    resources, templates = signed_in(target, lambda client: (client.list_resources(), _templates(client)))
    return ResourcesOutcome(target, resources, [resource_meta(r) for r in resources], templates)


def _templates(client: McpClient) -> list[dict[str, Any]]:
    """The server's resource templates; none when it will not list them (many servers have no such method,
    and a refusal of this secondary list must not cost the listing of the resources themselves)."""
    try:
        return client.list_resource_templates()
    except AuthRequired:
        raise
    except ProtocolError:
        return []


@dataclass
class ReadOutcome:
    target: Target
    uri: str
    result: dict[str, Any]  # the ReadResourceResult, as on the wire
    # A file of a skill the server lists (SEP-2640): its skills/list entry and the bytes checked against it.
    skill: dict[str, Any] | None = None
    verdict: FileVerdict | None = None


def read_resource(target: Target, uri: str) -> ReadOutcome:
    def work(client: McpClient) -> ReadOutcome:
        outcome = ReadOutcome(target, uri, _read(client, target, uri))
        if client.declares_skills:
            outcome.skill, outcome.verdict = _verified(client, uri, outcome.result)
        return outcome

    return signed_in(target, work)


def _verified(client: McpClient, uri: str, result: dict[str, Any]) -> tuple[dict[str, Any] | None, FileVerdict | None]:
    """A skill file, checked as a host checks it before use: its bytes against its listed digest and size."""
    try:
        entries = client.list_skills()
    except AuthRequired:
        raise
    except ProtocolError:
        return None, None  # no listing to hold the file to; the read itself stands
    for entry in entries:
        listed = (
            next((f for f in mcpskills.files(entry) if f.get("uri") == uri), None) if isinstance(entry, dict) else None
        )
        if listed is not None:
            return entry, mcpskills.verify_file(listed, mcpskills.content_bytes(result, uri))
    return None, None


def _read(client: McpClient, target: Target, uri: str) -> dict[str, Any]:
    try:
        return client.read_resource(uri)
    except AuthRequired:
        raise
    except ProtocolError:
        # The server only says "failed"; if the URI is not one it lists, say which ones are close.
        try:
            listed = [str(r.get("uri")) for r in client.list_resources()]
        except ProtocolError:
            listed = []
        if listed and uri not in listed:
            raise _unknown("resource", uri, listed, target.description) from None
        raise
