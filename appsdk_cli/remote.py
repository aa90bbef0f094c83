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
    # The protocol era (--protocol): "auto" negotiates, and remembers what each URL spoke in `eras`.
    protocol: str = AUTO
    eras: EraCache = field(default_factory=EraCache, repr=False, compare=False)
    # Answers a server's questions (MRTR input_required, elicitation/create); None: they are refused.
    elicit: Elicitor | None = field(default=None, repr=False, compare=False)
    # Shown progress and log notifications of a call as they arrive; None: they are dropped.
    notify: NotificationSink | None = field(default=None, repr=False, compare=False)

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
    protocol: str = AUTO,
    elicit: Elicitor | None = None,
    notify: NotificationSink | None = None,
) -> Target:
    """--stdio, else --url, else $APPSDK_URL, else the running `appsdk dev`, else the default URL."""
    if url and stdio:
        raise UsageError("give either --url or --stdio, not both")
    if token is not None and not token.strip():
        raise UsageError("--token is empty")
    if stdio is not None:
        if token is not None:
            raise UsageError("--token goes with an HTTP server, not --stdio")
        return Target(stdio=stdio, source="--stdio", timeout=timeout, protocol=protocol, elicit=elicit, notify=notify)
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
    )


_SOURCE_HINTS = {
    "default": "the default; start the app (`appsdk dev` or `python server.py`) or pass --url",
    "APPSDK_URL": "from $APPSDK_URL",
    ".appsdk/dev.json": "the running `appsdk dev`, from .appsdk/dev.json",
    "--url": "from --url",
    "--stdio": "from --stdio",
}


@contextmanager
def session(target: Target, *, scope: str | None = None) -> Iterator[McpClient]:
    """A connected client; a server we cannot reach becomes one line that says where we looked and why.

    A protected server gets the caller's --token, else the cached token for it; when it answers 401
    (and the caller allows a sign-in) appsdk signs in, caches the tokens and connects again.
    """
    from appsdk_cli.auth import client as oauth

    token = target.token
    if token is None and target.url is not None:
        token = oauth.usable_token(target.url, timeout=target.timeout)

    def signed_in(challenge: AuthRequired) -> str:
        """A fresh token after a 401, or the 401 itself when this command may not sign in."""
        if target.token is not None or target.url is None or target.sign_in is None:
            if target.token is None:
                challenge.message += "; sign in with `appsdk call` (it opens the browser) or pass --token"
            raise challenge
        oauth.forget(target.url)
        return oauth.sign_in(
            target.url,
            resource_metadata=challenge.resource_metadata,
            scope=scope or challenge.scope,
            timeout=target.timeout,
            notify=target.sign_in,
        )

    try:
        try:
            client = _connected(target, token, signed_in)
        except AuthRequired as challenge:
            # A remembered 2026-07-28 era sends nothing on connect, so a 401 can also come with the first
            # request: the client then asks signed_in itself and retries.
            client = _connected(target, signed_in(challenge), signed_in)
    except ConnectError as problem:
        if target.url and target.source != "--url":
            problem.message = f"{problem.message} ({_SOURCE_HINTS[target.source]})"
        raise
    try:
        yield client
    finally:
        client.transport.close()


def _connected(target: Target, token: str | None, on_unauthorized: Callable[[AuthRequired], str]) -> McpClient:
    client = connect(
        target.url,
        stdio=target.stdio,
        timeout=target.timeout,
        token=token,
        protocol=target.protocol,
        eras=target.eras,
        on_elicit=target.elicit,
        on_notification=target.notify,
        on_unauthorized=on_unauthorized,
    )
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


def call_tool(
    target: Target,
    name: str,
    words: list[str],
    args_json: str | None = None,
    meta: dict[str, Any] | None = None,
) -> CallOutcome:
    """List the tools, check and convert the arguments against the tool's inputSchema, then call it."""
    from appsdk_cli.toolargs import build_arguments

    with session(target) as client:
        tools = client.list_tools()
        tool = next((t for t in tools if t.get("name") == name), None)
        if tool is None and name in client.dropped_tools:
            raise UsageError(
                f"{name} is left out of tools/list in 2026-07-28 ({client.dropped_tools[name]});"
                " `--protocol 2025-11-25` calls it the old way, and `appsdk check` explains the rule"
            )
        if tool is None:
            raise _unknown("tool", name, [str(t.get("name")) for t in tools], target.description)
        arguments = build_arguments(name, tool.get("inputSchema"), words, args_json)
        result = client.call_tool(name, arguments, meta or None)
        era = client.era.label if client.era else ""
    scope = _relink_scope(result) if target.sign_in is not None and target.token is None else None
    if scope is not None:
        # The tool asked for more (insufficient_scope in `mcp/www_authenticate`): sign in again, as ChatGPT would.
        from appsdk_cli.auth import client as oauth

        assert target.url is not None
        oauth.forget(target.url)
        with session(target, scope=scope) as client:
            result = client.call_tool(name, arguments, meta or None)
    return CallOutcome(target, tool_meta(tool), arguments, result, era)


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

    with session(target) as client:
        tools = client.list_tools()
        era = client.era.label if client.era else ""
        dropped = dict(client.dropped_tools)
    report = probe_eras(target.url, timeout=target.timeout, token=_token_for(target)) if target.url else None
    return ToolsOutcome(target, tools, [tool_meta(t) for t in tools], era, report, dropped)


def _token_for(target: Target) -> str | None:
    if target.token is not None or target.url is None:
        return target.token
    from appsdk_cli.auth import client as oauth

    return oauth.usable_token(target.url, timeout=target.timeout)


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
