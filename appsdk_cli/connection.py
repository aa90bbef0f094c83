"""The one door to a server: which server a command means, the session to it, and the sign-in around it.

`remote.py` (call, tools, resources, read) and every other capability that talks to a running server
(check's live mode, snapshot, preview, the workbench) come through here. Like httpx's auth flow, the
sign-in drives a connected client from outside: `client/` speaks MCP and never imports `auth/`, and the
sign-in strategy (auth/client.py) is loaded only when a server asks for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from appsdk_cli.client import (
    AUTO,
    DEFAULT_TIMEOUT,
    AuthRequired,
    ConnectError,
    Elicitor,
    EraCache,
    McpClient,
    NotificationSink,
    ServerDropped,
    connect,
)
from appsdk_cli.errors import AppsdkError, UsageError

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
    # May that sign-in open the browser now? False (the workbench listing in the background): only an
    # authorization server that approves without a page (appsdk dev --auth-user) signs in, others raise
    # auth's SignInNeedsBrowser and the caller offers a way to sign in.
    browser: bool = field(default=True, compare=False)
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
    # Offer the MCP Apps extension, as a host that renders widgets (--no-ui: a host without widgets).
    ui: bool = True

    @property
    def description(self) -> str:
        return f"`{self.stdio}` (stdio)" if self.stdio else f"{self.url}"


# --- which server: the one rule ---------------------------------------------------------------------


@dataclass(frozen=True)
class ServerLocation:
    url: str
    source: str  # "--url", "APPSDK_URL", ".appsdk/dev.json" or "default"


def find_server(url: str | None, cwd: Path | None = None, ceiling: Path | None = None) -> ServerLocation | None:
    """--url, else $APPSDK_URL, else the running `appsdk dev` of the project at `cwd`; None when none is given.

    The one "which server" rule: `locate_server` adds the default URL for call, tools, preview and
    tunnel; `appsdk check` and `snapshot` fall back to the code on disk instead."""
    from appsdk_cli.project import check_server_url, find_dev_state

    if url:
        return ServerLocation(check_server_url(url), "--url")
    from_env = os.environ.get("APPSDK_URL")
    if from_env:
        return ServerLocation(check_server_url(from_env, "$APPSDK_URL"), "APPSDK_URL")
    state = find_dev_state(cwd or Path.cwd(), ceiling)
    if state is not None:
        return ServerLocation(state.url, ".appsdk/dev.json")
    return None


def locate_server(url: str | None, cwd: Path | None = None, ceiling: Path | None = None) -> ServerLocation:
    """`find_server`, else the default URL (where `appsdk dev` and a scaffolded server listen).

    The default is only a guess: when another project's `appsdk dev` serves it, this project's answers
    would silently come from that app, so it is refused (an explicit --url or $APPSDK_URL to it is not)."""
    from appsdk_cli.project import DEFAULT_URL

    found = find_server(url, cwd, ceiling)
    if found is not None:
        return found
    _refuse_another_projects_dev(DEFAULT_URL, cwd or Path.cwd(), ceiling)
    return ServerLocation(DEFAULT_URL, "default")


def _refuse_another_projects_dev(url: str, cwd: Path, ceiling: Path | None = None) -> None:
    """An AppsdkError when `cwd` is in a project and another project's running `appsdk dev` serves `url`.

    Outside any project there is no "this app" to confuse with that one, so the default stays usable."""
    from appsdk_cli.project import find_project, running_dev_for_url

    here = find_project(cwd, ceiling)
    if not ((here / "pyproject.toml").is_file() or (here / "server.py").is_file()):
        return
    owner = running_dev_for_url(url)
    if owner is None or owner[0].resolve() == here:
        return
    # That dev holds the default port, so this project's needs another: --port 0 picks a free one, and
    # .appsdk/dev.json then leads call, tools and preview to it.
    raise AppsdkError(
        f"{url} is served by the `appsdk dev` of another project ({owner[0]}); start this project's with"
        f" `appsdk dev --port 0` (that one holds the port), or pass --url {url} to use that one"
    )


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
    ui: bool = True,
    ceiling: Path | None = None,
) -> Target:
    """--stdio, else `locate_server` (--url, $APPSDK_URL, the running `appsdk dev`, the default URL)."""
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
            stdio=stdio,
            source="--stdio",
            timeout=timeout,
            protocol=protocol,
            elicit=elicit,
            notify=notify,
            trace=trace,
            ui=ui,
        )
    location = locate_server(url, cwd, ceiling)
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
        ui=ui,
    )


_SOURCE_HINTS = {
    "default": "the default; start the app (`appsdk dev` or `python server.py`) or pass --url",
    "APPSDK_URL": "from $APPSDK_URL",
    ".appsdk/dev.json": "the running `appsdk dev`, from .appsdk/dev.json",
    "--url": "from --url",
    "--stdio": "from --stdio",
}


# --- the session and the sign-in around it --------------------------------------------------------------


def may_sign_in(target: Target) -> bool:
    """Whether a 401 or 403 insufficient_scope may open the browser: no --token, HTTP, and someone to tell."""
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
        browser=target.browser,
    )


@contextmanager
def session(
    target: Target, *, challenge: AuthRequired | None = None, sign_in_on_connect: bool = True
) -> Iterator[McpClient]:
    """A connected client; a server we cannot reach becomes one line that says where we looked and why.

    A protected server gets the caller's --token, else the cached token for it, but only once the server
    shows it is the resource that token was issued for (auth/release.py: up front, else in answer to its
    401). When it answers 401 (and the caller allows a sign-in) appsdk signs in, caches the tokens and
    connects again. `challenge`: a request already asked for a sign-in (or for more scopes), so sign in
    for it first.
    """
    token = target.token
    withheld: str | None = None
    if challenge is not None and may_sign_in(target):
        token = _sign_in(target, challenge)
    elif token is None and target.url is not None:
        token, withheld = _cached_token(target)
    _hide(target, target.token, token)

    try:
        try:
            client = _connected(target, token)
        except AuthRequired as refused:
            client = None
            if withheld is not None:
                # The server asks for a token: its challenge may show it is the one the cached sign-in is for.
                token, withheld = _cached_token(target, refused)
                _hide(target, token)
                if token is not None:
                    try:
                        client = _connected(target, token)
                    except AuthRequired as again:
                        refused = again
            if client is None:
                client = _answer_challenge(target, refused, withheld, sign_in=challenge is None and sign_in_on_connect)
                withheld = None  # said with the challenge's answer
    except ConnectError as problem:
        if target.url and target.source != "--url":
            problem.message = f"{problem.message} ({_SOURCE_HINTS.get(target.source, f'from {target.source}')})"
        raise
    if withheld is not None and target.sign_in is not None:
        target.sign_in(withheld)  # a server that never asked: it works without the sign-in, but say why
    try:
        yield client
    except ServerDropped as dropped:
        from appsdk_cli.project import running_dev_for_url

        if target.url and running_dev_for_url(target.url) is not None:
            dropped.message += "; the appsdk dev terminal says why, and the next request starts the app again"
        raise
    finally:
        client.transport.close()


def _answer_challenge(target: Target, refused: AuthRequired, withheld: str | None, *, sign_in: bool) -> McpClient:
    """A 401 no cached token answers: sign in (when allowed), else the refusal, saying why a sign-in was withheld."""
    if withheld is not None and target.sign_in is not None:
        target.sign_in(withheld)
    if not may_sign_in(target):
        if withheld is not None and target.sign_in is None:
            refused.message += f"; {withheld}"
        if target.token is None:
            refused.message += "; sign in with `appsdk call` (it opens the browser) or pass --token"
        raise refused
    if not sign_in:
        raise refused  # signed in just now and still refused, or the caller signs in: it decides
    token = _sign_in(target, refused)
    _hide(target, token)
    return _connected(target, token)


def _hide(target: Target, *secrets: str | None) -> None:
    """Keep tokens out of the --trace output."""
    for secret in secrets:
        if secret and hasattr(target.trace, "add_secret"):
            target.trace.add_secret(secret)


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
        ui=target.ui,
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
            if not may_sign_in(target) or key in seen or len(seen) >= MAX_SIGN_INS:
                raise
            seen.add(key)
            challenge = asked


def step_up_scope(result: dict[str, Any]) -> str | None:
    """The scope a tool's error result asks the user to sign in again for (insufficient_scope in
    `_meta["mcp/www_authenticate"]`, as ChatGPT reads it), if it asks."""
    from appsdk_cli.client import parse_bearer_challenge

    meta = result.get("_meta") if result.get("isError") is True else None
    challenges = meta.get("mcp/www_authenticate") if isinstance(meta, dict) else None
    if isinstance(challenges, str):
        challenges = [challenges]
    for challenge in challenges if isinstance(challenges, list) else []:
        params = parse_bearer_challenge(str(challenge)) or {}
        if params.get("error") == "insufficient_scope" and params.get("scope"):
            return params["scope"]
    return None


def step_up(target: Target, name: str, result: dict[str, Any], asked: set[str]) -> None:
    """Inside `signed_in`'s work: when the tool's result asks for more scope, raise the challenge that makes
    `signed_in` sign in for it and run the work again, as ChatGPT would; once per scope (`asked`)."""
    scope = step_up_scope(result) if may_sign_in(target) else None
    if scope is not None and scope not in asked:
        asked.add(scope)
        asked_for = f"{name} asks for scope {scope}"
        raise AuthRequired(asked_for, resource_metadata=None, scope=scope, error="insufficient_scope", detail=None)


def token_for(target: Target) -> str | None:
    """The token a request outside the session should carry (the era probe): --token, else the cached one
    if the server shows it is the one it was issued for."""
    if target.token is not None or target.url is None:
        return target.token
    return _cached_token(target)[0]


def _cached_token(target: Target, challenge: AuthRequired | None = None) -> tuple[str | None, str | None]:
    """The cached sign-in the target's server may have, refreshed if it has run out, or why it may not:
    (token, None), (None, why), or (None, None) when there is none."""
    from appsdk_cli.auth import tokens

    assert target.url is not None
    if not tokens.cache_path(target.url).exists():
        return None, None  # most servers: no sign-in, and the OAuth client need not even load
    from appsdk_cli.auth import release

    answer = release.cached_token(
        target.url,
        timeout=target.timeout,
        resource_metadata=challenge.resource_metadata if challenge else None,
        challenged=challenge is not None,
    )
    return answer.token, answer.withheld
