"""What `call`, `tools`, `resources` and `read` ask of a running server, as result objects.

The capability behind those commands, usable without the CLI: find the server, check the request
against what the server declares, send it, and hand back what came back for the renderers to show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from appsdk_cli.appmeta import ResourceMeta, ToolMeta, resource_meta, tool_meta
from appsdk_cli.client import (
    AUTO,
    DEFAULT_TIMEOUT,
    AuthRequired,
    ConnectError,
    Elicitor,
    EraCache,
    McpClient,
    NotificationSink,
    ProtocolError,
    connect,
    modern,
    parse_bearer_challenge,
)
from appsdk_cli.client.modern import HEADER_MISMATCH
from appsdk_cli.client.toolcache import ToolCache, ToolList, cache_key
from appsdk_cli.errors import UsageError

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """Which server to talk to, and how we picked it (said in error messages)."""

    url: str | None = None
    source: str = "--url"  # "--url", "APPSDK_URL", ".appsdk/dev.json", "default" or "--stdio"
    stdio: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    # A bearer token given by the caller (--token): sent as is, never replaced by a sign-in.
    token: str | None = field(default=None, repr=False)
    # Told about an interactive sign-in (the renderer); None: a 401 is an error, no browser opens.
    sign_in: Callable[[str], None] | None = field(default=None, repr=False, compare=False)
    # Who appsdk is at the authorization server (--client-id): a pre-registered id or a CIMD URL.
    client_id: str | None = None
    # The protocol era (--protocol): "auto" negotiates, and remembers what each URL spoke in `eras`.
    protocol: str = AUTO
    eras: EraCache = field(default_factory=EraCache, repr=False, compare=False)
    # Answers a server's questions (MRTR input_required, elicitation/create); None: they are refused.
    elicit: Elicitor | None = field(default=None, repr=False, compare=False)
    # Shown progress and log notifications of a call as they arrive; None: they are dropped.
    notify: NotificationSink | None = field(default=None, repr=False, compare=False)
    # Hears every MCP message of the session (--trace): a trace.Tracer, or any (direction, message) callable.
    trace: Any = field(default=None, repr=False, compare=False)

    @property
    def description(self) -> str:
        return f"`{self.stdio}` (stdio)" if self.stdio else f"{self.url}"


def resolve_target(
    url: str | None,
    stdio: str | None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: Path | None = None,
    token: str | None = None,
    sign_in: Callable[[str], None] | None = None,
    client_id: str | None = None,
    protocol: str = AUTO,
    elicit: Elicitor | None = None,
    notify: NotificationSink | None = None,
    trace: Any = None,
) -> Target:
    """--stdio, else --url, else $APPSDK_URL, else the running `appsdk dev`, else the default URL."""
    if url and stdio:
        raise UsageError("give either --url or --stdio, not both")
    if token is not None and not token.strip():
        raise UsageError("--token is empty")
    if client_id is not None and (not client_id.strip() or token is not None):
        raise UsageError("--client-id is empty" if not client_id.strip() else "give either --token or --client-id")
    if stdio is not None:
        if token is not None:
            raise UsageError("--token goes with an HTTP server, not --stdio")
        return Target(
            stdio=stdio, source="--stdio", timeout=timeout, protocol=protocol, elicit=elicit, notify=notify, trace=trace
        )
    from appsdk_cli.project import resolve_server_url

    location = resolve_server_url(url, cwd)
    return Target(
        url=location.url,
        source=location.source,
        timeout=timeout,
        token=token,
        sign_in=sign_in,
        protocol=protocol,
        elicit=elicit,
        notify=notify,
        client_id=client_id,
        trace=trace,
    )


_SOURCE_HINTS = {
    "default": "the default; start the app (`appsdk dev` or `python server.py`) or pass --url",
    "APPSDK_URL": "from $APPSDK_URL",
    ".appsdk/dev.json": "the running `appsdk dev`, from .appsdk/dev.json",
    "--url": "from --url",
    "--stdio": "from --stdio",
}


def _may_sign_in(target: Target) -> bool:
    return target.token is None and target.url is not None and target.sign_in is not None


def _sign_in(target: Target, challenge: AuthRequired) -> str:
    from appsdk_cli.auth import client as oauth

    assert target.url is not None and target.sign_in is not None
    return oauth.sign_in(
        target.url,
        resource_metadata=challenge.resource_metadata,
        scope=challenge.scope,
        timeout=target.timeout,
        notify=target.sign_in,
        client_id=target.client_id,
    )


@contextmanager
def session(
    target: Target, *, challenge: AuthRequired | None = None, sign_in_on_connect: bool = True
) -> Iterator[McpClient]:
    """A connected client; a server we cannot reach becomes one line that says where we looked and why.

    A protected server gets the caller's --token, else the cached token for it; when it answers 401
    (and the caller allows a sign-in) appsdk signs in, caches the tokens and connects again. `challenge`:
    a request already asked for a sign-in (or for more scopes), so sign in for it first.
    """
    token = target.token
    if challenge is not None and _may_sign_in(target):
        token = _sign_in(target, challenge)
    elif token is None and target.url is not None:
        token = _cached_token(target)
    for secret in (target.token, token):
        if secret and hasattr(target.trace, "add_secret"):
            target.trace.add_secret(secret)

    try:
        try:
            client = _connected(target, token)
        except AuthRequired as refused:
            if not _may_sign_in(target):
                if target.token is None:
                    refused.message += "; sign in with `appsdk call` (it opens the browser) or pass --token"
                raise
            if challenge is not None or not sign_in_on_connect:
                raise  # signed in just now and still refused, or the caller signs in: it decides
            token = _sign_in(target, refused)
            if hasattr(target.trace, "add_secret"):
                target.trace.add_secret(token)
            client = _connected(target, token)
    except ConnectError as problem:
        if target.url and target.source != "--url":
            problem.message = f"{problem.message} ({_SOURCE_HINTS.get(target.source, f'from {target.source}')})"
        raise
    try:
        yield client
    finally:
        client.transport.close()


def _connected(target: Target, token: str | None) -> McpClient:
    client = connect(
        target.url,
        stdio=target.stdio,
        timeout=target.timeout,
        token=token,
        protocol=target.protocol,
        eras=target.eras,
        on_elicit=target.elicit,
        on_notification=target.notify,
        trace=target.trace,
    )
    return client.__enter__()  # the handshake; the transport is closed if it fails


MAX_SIGN_INS = 3  # per command: a first sign-in, a step-up, and one more for a server that moves the goalposts


def signed_in(target: Target, work: Callable[[McpClient], T]) -> T:
    """Run `work` in a session; when a request in it asks for a sign-in (401) or more scopes (403
    insufficient_scope), sign in and run it again. The same challenge twice is not retried: the server
    would only ask again (a retry limit, as the MCP spec asks of clients)."""
    seen: set[tuple[str | None, str | None]] = set()
    challenge: AuthRequired | None = None
    while True:
        try:
            with session(target, challenge=challenge, sign_in_on_connect=False) as client:
                return work(client)
        except AuthRequired as asked:
            key = (asked.error, asked.scope)
            if not _may_sign_in(target) or key in seen or len(seen) >= MAX_SIGN_INS:
                raise
            seen.add(key)
            challenge = asked


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
    from appsdk_cli.toolargs import build_arguments

    cache = tools_cache if tools_cache is not None else ToolCache()
    relinked: set[str] = set()

    def work(client: McpClient) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
        key = cache_key(target.url, client.era.version, client.authorization) if target.url and client.era else None
        remembered = cache.get(key) if key else None
        tool = (
            next((t for t in client.admit_tools(remembered.tools) if t.get("name") == name), None)
            if remembered
            else None
        )
        arguments: dict[str, Any] | None = None
        if tool is not None:
            try:
                arguments = build_arguments(name, tool.get("inputSchema"), words, args_json)
            except UsageError:
                tool = None  # perhaps the tool has changed since: its fresh schema decides
        if tool is None or arguments is None:
            tool = _listed_tool(client, target, name, cache, key)
            arguments = build_arguments(name, tool.get("inputSchema"), words, args_json)
            result = client.call_tool(name, arguments, meta or None)
        else:
            tool, arguments, result = _call_with_fresh_definition(
                client,
                target,
                tool,
                arguments,
                meta,
                cache,
                key,
                lambda schema: build_arguments(name, schema, words, args_json),
            )
        if key and client.tools_changed:
            cache.forget(key)
        scope = _relink_scope(result) if _may_sign_in(target) else None
        if scope is not None and scope not in relinked:
            # The tool asked for more (insufficient_scope in `mcp/www_authenticate`): sign in again, as ChatGPT would.
            relinked.add(scope)
            asked = f"{name} asks for scope {scope}"
            raise AuthRequired(asked, resource_metadata=None, scope=scope, error="insufficient_scope", detail=None)
        return tool, arguments, result, client.era.label if client.era else ""

    tool, arguments, result, era = signed_in(target, work)
    return CallOutcome(target, tool_meta(tool), arguments, result, era)


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
        result = client.call_tool(name, arguments, meta or None)
    except ProtocolError as problem:
        if isinstance(problem, AuthRequired) or problem.code not in STALE_DEFINITION_ERRORS:
            raise
        fresh = _listed_tool(client, target, name, cache, key)
        arguments = rebuild(fresh.get("inputSchema"))
        return fresh, arguments, client.call_tool(name, arguments, meta or None)
    if result.get("isError") is not True:
        return tool, arguments, result
    fresh = _listed_tool(client, target, name, cache, key)
    if fresh == tool:
        return tool, arguments, result
    fresh_arguments = rebuild(fresh.get("inputSchema"))
    changed_headers = modern.header_map(fresh.get("inputSchema")) != modern.header_map(tool.get("inputSchema"))
    if fresh_arguments == arguments and not changed_headers:
        return fresh, arguments, result
    return fresh, fresh_arguments, client.call_tool(name, fresh_arguments, meta or None)


def _relink_scope(result: dict[str, Any]) -> str | None:
    """The scope a tool's error result asks the user to sign in again for, if it asks."""
    meta = result.get("_meta") if result.get("isError") is True else None
    challenges = meta.get("mcp/www_authenticate") if isinstance(meta, dict) else None
    if isinstance(challenges, str):
        challenges = [challenges]
    for challenge in challenges if isinstance(challenges, list) else []:
        params = parse_bearer_challenge(str(challenge)) or {}
        if params.get("error") == "insufficient_scope" and params.get("scope"):
            return params["scope"]
    return None


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


def list_tools(target: Target) -> ToolsOutcome:
    from appsdk_cli.client.probe import probe_eras

    def work(client: McpClient) -> tuple[list[dict[str, Any]], str, dict[str, str]]:
        listed = client.list_tools()
        if target.url and client.era:  # the next `appsdk call` can go straight to the tool
            key = cache_key(target.url, client.era.version, client.authorization)
            ToolCache().remember(key, ToolList(listed, dict(client.dropped_tools)))
        return listed, client.era.label if client.era else "", dict(client.dropped_tools)

    tools, era, dropped = signed_in(target, work)
    report = None
    if target.url:
        report = probe_eras(target.url, timeout=target.timeout, token=_token_for(target), trace=target.trace)
    return ToolsOutcome(target, tools, [tool_meta(t) for t in tools], era, report, dropped)


def _token_for(target: Target) -> str | None:
    if target.token is not None or target.url is None:
        return target.token
    return _cached_token(target)


def _cached_token(target: Target) -> str | None:
    """The cached sign-in for the target's server, refreshed if it has run out; None if there is none."""
    from appsdk_cli.auth import tokens

    assert target.url is not None
    if not tokens.cache_path(target.url).exists():
        return None  # most servers: no sign-in, and the OAuth client need not even load
    from appsdk_cli.auth import client as oauth

    return oauth.usable_token(target.url, timeout=target.timeout)


@dataclass
class ResourcesOutcome:
    target: Target
    resources: list[dict[str, Any]]
    metas: list[ResourceMeta] = field(default_factory=list)


def list_resources(target: Target) -> ResourcesOutcome:
    resources = signed_in(target, lambda client: client.list_resources())
    return ResourcesOutcome(target, resources, [resource_meta(r) for r in resources])


@dataclass
class ReadOutcome:
    target: Target
    uri: str
    result: dict[str, Any]  # the ReadResourceResult, as on the wire


def read_resource(target: Target, uri: str) -> ReadOutcome:
    return ReadOutcome(target, uri, signed_in(target, lambda client: _read(client, target, uri)))


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
