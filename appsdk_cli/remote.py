"""What `call`, `tools`, `resources` and `read` ask of a running server, as result objects.

The capability behind those commands, usable without the CLI: find the server, check the request
against what the server declares, send it, and hand back what came back for the renderers to show.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.appmeta import ResourceMeta, ToolMeta, resource_meta, tool_meta
from appsdk_cli.client import (
    DEFAULT_TIMEOUT,
    AuthRequired,
    ConnectError,
    McpClient,
    ProtocolError,
    connect,
    parse_bearer_challenge,
)
from appsdk_cli.errors import UsageError


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
        return Target(stdio=stdio, source="--stdio", timeout=timeout)
    from appsdk_cli.project import resolve_server_url

    location = resolve_server_url(url, cwd)
    return Target(
        url=location.url, source=location.source, timeout=timeout, token=token, sign_in=sign_in, client_id=client_id
    )


_SOURCE_HINTS = {
    "default": "the default; start the app (`appsdk dev` or `python server.py`) or pass --url",
    "APPSDK_URL": "from $APPSDK_URL",
    ".appsdk/dev.json": "the running `appsdk dev`, from .appsdk/dev.json",
    "--url": "from --url",
    "--stdio": "from --stdio",
}


@contextmanager
def session(target: Target, *, step_up: str | None = None) -> Iterator[McpClient]:
    """A connected client; a server we cannot reach becomes one line that says where we looked and why.

    A protected server gets the caller's --token, else the cached token for it; when it answers 401
    (and the caller allows a sign-in) appsdk signs in, caches the tokens and connects again. `step_up`:
    a tool asked for these scopes, so sign in again for them (plus those already granted) first.
    """
    from appsdk_cli.auth import client as oauth

    token = target.token
    if token is None and target.url is not None and step_up is None:
        token = oauth.usable_token(target.url, timeout=target.timeout)
    try:
        try:
            client = _connected(target, token)
        except AuthRequired as challenge:
            if target.token is not None or target.url is None or target.sign_in is None:
                if target.token is None:
                    challenge.message += "; sign in with `appsdk call` (it opens the browser) or pass --token"
                raise
            token = oauth.sign_in(
                target.url,
                resource_metadata=challenge.resource_metadata,
                scope=step_up or challenge.scope,
                timeout=target.timeout,
                notify=target.sign_in,
                client_id=target.client_id,
            )
            client = _connected(target, token)
    except ConnectError as problem:
        if target.url and target.source != "--url":
            problem.message = f"{problem.message} ({_SOURCE_HINTS[target.source]})"
        raise
    try:
        yield client
    finally:
        client.transport.close()


def _connected(target: Target, token: str | None) -> McpClient:
    client = connect(target.url, stdio=target.stdio, timeout=target.timeout, token=token)
    return client.__enter__()  # the handshake; the transport is closed if it fails


def close_matches(word: str, choices: list[str]) -> list[str]:
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

    @property
    def is_error(self) -> bool:
        return self.result.get("isError") is True

    def error_text(self) -> str:
        """The first text block of an isError result, for the one-line message."""
        for block in self.result.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
                return str(block["text"]).strip().splitlines()[0]
        return "no text content"


def call_tool(
    target: Target,
    name: str,
    words: list[str],
    args_json: str | None = None,
    meta: dict[str, Any] | None = None,
) -> CallOutcome:
    """List the tools, check and convert the arguments against the tool's inputSchema, then call it."""
    from appsdk_cli.toolargs import build_arguments

    may_sign_in = target.sign_in is not None and target.token is None and target.url is not None
    scope = None
    with session(target) as client:
        tools = client.list_tools()
        tool = next((t for t in tools if t.get("name") == name), None)
        if tool is None:
            raise _unknown("tool", name, [str(t.get("name")) for t in tools], target.description)
        arguments = build_arguments(name, tool.get("inputSchema"), words, args_json)
        try:
            result = client.call_tool(name, arguments, meta or None)
        except AuthRequired as challenge:
            # HTTP 403 insufficient_scope (or a 401) on the call itself: step up once, as ChatGPT would.
            if not may_sign_in or not challenge.scope:
                raise
            scope = challenge.scope
        else:
            scope = _relink_scope(result) if may_sign_in else None
    if scope is not None:
        # The tool asked for more (insufficient_scope, in HTTP or in `mcp/www_authenticate`): sign in again.
        with session(target, step_up=scope) as client:
            result = client.call_tool(name, arguments, meta or None)
    return CallOutcome(target, tool_meta(tool), arguments, result)


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


def list_tools(target: Target) -> ToolsOutcome:
    with session(target) as client:
        tools = client.list_tools()
    return ToolsOutcome(target, tools, [tool_meta(t) for t in tools])


@dataclass
class ResourcesOutcome:
    target: Target
    resources: list[dict[str, Any]]
    metas: list[ResourceMeta] = field(default_factory=list)


def list_resources(target: Target) -> ResourcesOutcome:
    with session(target) as client:
        resources = client.list_resources()
    return ResourcesOutcome(target, resources, [resource_meta(r) for r in resources])


@dataclass
class ReadOutcome:
    target: Target
    uri: str
    result: dict[str, Any]  # the ReadResourceResult, as on the wire


def read_resource(target: Target, uri: str) -> ReadOutcome:
    with session(target) as client:
        try:
            result = client.read_resource(uri)
        except ProtocolError:
            # The server only says "failed"; if the URI is not one it lists, say which ones are close.
            try:
                listed = [str(r.get("uri")) for r in client.list_resources()]
            except ProtocolError:
                listed = []
            if listed and uri not in listed:
                raise _unknown("resource", uri, listed, target.description) from None
            raise
    return ReadOutcome(target, uri, result)
