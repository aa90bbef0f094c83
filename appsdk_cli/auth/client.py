"""Sign in to a protected MCP server the way ChatGPT does, and keep the tokens per server.

On a 401 the server's challenge names its Protected Resource Metadata (RFC 9728), which names the
authorization server; appsdk reads that server's metadata (RFC 8414), registers itself as a public
client (RFC 7591, `token_endpoint_auth_method: none`), and runs the authorization-code flow with PKCE
S256: the browser opens the authorization page and comes back to a one-shot listener on 127.0.0.1.
The tokens are cached under APPSDK_HOME/tokens/, one file per resource, mode 0600; an expired access
token is refreshed with the refresh token before a new sign-in is asked for.

Tokens never reach the terminal: messages name servers and URLs, never a token.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from appsdk_cli.errors import AppsdkError

TOKENS_DIR = "tokens"
CALLBACK_PATH = "/callback"
EXPIRY_MARGIN = 30  # refresh a token this many seconds before it runs out
Notify = Callable[[str], None]


class SignInError(AppsdkError):
    """Signing in failed (exit 1): the message says at which step and why."""


@dataclass
class CachedTokens:
    resource: str
    issuer: str
    token_endpoint: str
    client_id: str
    access_token: str
    refresh_token: str | None
    expires_at: float | None

    def fresh(self) -> bool:
        return self.expires_at is None or self.expires_at > time.time() + EXPIRY_MARGIN


def home() -> Path:
    configured = os.environ.get("APPSDK_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".appsdk"


def cache_path(server_url: str, root: Path | None = None) -> Path:
    digest = hashlib.sha256(_resource_key(server_url).encode()).hexdigest()[:32]
    return (root or home()) / TOKENS_DIR / f"{digest}.json"


def _resource_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def load(server_url: str, root: Path | None = None) -> CachedTokens | None:
    try:
        return CachedTokens(**json.loads(cache_path(server_url, root).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def save(server_url: str, tokens: CachedTokens, root: Path | None = None) -> Path:
    """Written 0600 from the first byte (never readable by others, not even briefly), then renamed into place."""
    path = cache_path(server_url, root)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(asdict(tokens), handle)
    os.replace(temporary, path)
    return path


def forget(server_url: str, root: Path | None = None) -> None:
    cache_path(server_url, root).unlink(missing_ok=True)


def usable_token(server_url: str, *, timeout: float, root: Path | None = None) -> str | None:
    """A cached access token for this server, refreshed if it has run out; None if there is none."""
    cached = load(server_url, root)
    if cached is None:
        return None
    if cached.fresh():
        return cached.access_token
    refreshed = refresh(server_url, cached, timeout=timeout, root=root)
    return refreshed.access_token if refreshed else None


def refresh(server_url: str, cached: CachedTokens, *, timeout: float, root: Path | None = None) -> CachedTokens | None:
    """Trade the refresh token for new tokens (rotated); None (and the cache dropped) if that is refused."""
    if not cached.refresh_token:
        forget(server_url, root)
        return None
    form = {
        "grant_type": "refresh_token",
        "refresh_token": cached.refresh_token,
        "client_id": cached.client_id,
        "resource": cached.resource,
    }
    try:
        answer = _post_form(cached.token_endpoint, form, timeout)
    except SignInError:
        forget(server_url, root)
        return None
    tokens = _cached(cached.resource, cached.issuer, cached.token_endpoint, cached.client_id, answer)
    save(server_url, tokens, root)
    return tokens


def sign_in(
    server_url: str,
    *,
    resource_metadata: str | None,
    scope: str | None,
    timeout: float,
    notify: Notify,
    root: Path | None = None,
    open_browser: Callable[[str], object] | None = None,
) -> str:
    """The whole flow, from the 401's challenge to a cached access token (returned)."""
    import httpx

    with httpx.Client(timeout=timeout, follow_redirects=True) as http:
        prm = get_json(http, resource_metadata or default_metadata_url(server_url), "protected resource metadata")
        resource = str(prm.get("resource") or server_url)
        servers = prm.get("authorization_servers") or []
        if not servers:
            raise SignInError(f"{server_url}'s resource metadata names no authorization server")
        issuer = str(servers[0])
        metadata = authorization_server_metadata(http, issuer)
        if "S256" not in (metadata.get("code_challenge_methods_supported") or []):
            raise SignInError(f"{issuer} does not support PKCE S256; appsdk will not sign in without it")
        for endpoint in ("authorization_endpoint", "token_endpoint"):
            if not metadata.get(endpoint):
                raise SignInError(f"{issuer}'s metadata has no {endpoint}")
        if not metadata.get("registration_endpoint"):
            raise SignInError(f"{issuer} offers no dynamic client registration; appsdk cannot register itself")

        with _CallbackListener() as listener:
            registered = http.post(
                str(metadata["registration_endpoint"]),
                json={
                    "client_name": "appsdk",
                    "redirect_uris": [listener.redirect_uri],
                    "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                },
            )
            if registered.status_code not in (200, 201):
                raise SignInError(f"{issuer} refused to register appsdk: {_oauth_error(registered)}")
            client_id = str(registered.json()["client_id"])
            verifier = secrets.token_urlsafe(64)
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            state = secrets.token_urlsafe(24)
            scopes = scope or " ".join(prm.get("scopes_supported") or [])
            query = {
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": listener.redirect_uri,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "state": state,
                "resource": resource,
                **({"scope": scopes} if scopes else {}),
            }
            authorize_url = f"{metadata['authorization_endpoint']}?{urlencode(query)}"
            notify(f"signing in to {resource}: opening {authorize_url} in your browser")
            wait = max(timeout, 120.0)
            if not _open(authorize_url, open_browser):
                notify(f"no browser could be started here: open that URL yourself (waiting {wait:.0f} s)")
            answer = listener.wait(timeout=wait)

        if answer.get("state") != state:
            raise SignInError("the sign-in came back with the wrong state; try again")
        if "error" in answer:
            raise SignInError(f"{issuer} refused the sign-in: {answer.get('error_description') or answer['error']}")
        if answer.get("iss") not in (None, metadata.get("issuer")):
            raise SignInError(f"the sign-in came back from {answer['iss']}, not {metadata.get('issuer')}")  # RFC 9207
        form = {
            "grant_type": "authorization_code",
            "code": answer.get("code", ""),
            "redirect_uri": listener.redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": resource,
        }
        tokens = _cached(
            resource, issuer, str(metadata["token_endpoint"]), client_id, _post_form_with(http, form, metadata)
        )
    save(server_url, tokens, root)
    notify(f"signed in to {resource}; tokens cached in {cache_path(server_url, root)}")
    return tokens.access_token


def _cached(resource: str, issuer: str, token_endpoint: str, client_id: str, answer: dict[str, Any]) -> CachedTokens:
    if not answer.get("access_token"):
        raise SignInError(f"{token_endpoint} answered without an access token")
    expires_in = answer.get("expires_in")
    return CachedTokens(
        resource=resource,
        issuer=issuer,
        token_endpoint=token_endpoint,
        client_id=client_id,
        access_token=str(answer["access_token"]),
        refresh_token=answer.get("refresh_token"),
        expires_at=time.time() + float(expires_in) if isinstance(expires_in, int | float) else None,
    )


def default_metadata_url(server_url: str) -> str:
    parts = urlsplit(server_url)
    return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path.rstrip('/')}"


def authorization_server_metadata(http: Any, issuer: str) -> dict[str, Any]:
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    # RFC 8414 section 3.1 inserts the well-known segment before the issuer's path; OIDC appends it.
    candidates = [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]
    for url in candidates:
        with contextlib.suppress(SignInError):
            return get_json(http, url, "authorization server metadata")
    raise SignInError(f"no authorization server metadata found for {issuer}")


def get_json(http: Any, url: str, what: str) -> dict[str, Any]:
    import httpx

    try:
        response = http.get(url)
    except httpx.HTTPError as problem:
        raise SignInError(f"cannot read the {what} at {url}: {problem}") from None
    if response.status_code != 200:
        raise SignInError(f"the {what} at {url} answered HTTP {response.status_code}")
    try:
        value = response.json()
    except ValueError:
        raise SignInError(f"the {what} at {url} is not JSON") from None
    if not isinstance(value, dict):
        raise SignInError(f"the {what} at {url} is not a JSON object")
    return value


def _post_form_with(http: Any, form: dict[str, str], metadata: dict[str, Any]) -> dict[str, Any]:
    response = http.post(str(metadata["token_endpoint"]), data=form)
    if response.status_code != 200:
        raise SignInError(f"{metadata['token_endpoint']} refused the code: {_oauth_error(response)}")
    return dict(response.json())


def _post_form(url: str, form: dict[str, str], timeout: float) -> dict[str, Any]:
    import httpx

    try:
        response = httpx.post(url, data=form, timeout=timeout)
    except httpx.HTTPError as problem:
        raise SignInError(f"cannot reach {url}: {problem}") from None
    if response.status_code != 200:
        raise SignInError(f"{url} refused: {_oauth_error(response)}")
    return dict(response.json())


def _oauth_error(response: Any) -> str:
    try:
        body = response.json()
        return str(body.get("error_description") or body.get("error") or f"HTTP {response.status_code}")
    except ValueError:
        return f"HTTP {response.status_code}"


def _open(url: str, open_browser: Callable[[str], object] | None) -> bool:
    """Open the sign-in page; False when no browser could be started (the caller says what to do)."""
    if open_browser is not None:
        open_browser(url)
        return True
    import webbrowser

    # $BROWSER is honoured, so a script can answer the page itself.
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


class _CallbackListener:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization server's redirect."""

    def __init__(self) -> None:
        import http.server

        self._answer: dict[str, str] | None = None
        self._done = threading.Event()
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != CALLBACK_PATH:
                    self.send_error(404)
                    return
                if not listener._done.is_set():
                    listener._answer = {k: v[0] for k, v in parse_qs(parts.query).items()}
                    listener._done.set()
                body = b"<!doctype html><p>Signed in. You can close this tab and go back to the terminal.</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass  # the query holds the authorization code

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.redirect_uri = f"http://127.0.0.1:{self._server.server_port}{CALLBACK_PATH}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="appsdk-oauth-callback", daemon=True)

    def __enter__(self) -> _CallbackListener:
        self._thread.start()
        return self

    def wait(self, timeout: float) -> dict[str, str]:
        if not self._done.wait(timeout):
            raise SignInError(f"the sign-in did not finish within {timeout:g} s; run the command again")
        assert self._answer is not None
        return self._answer

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
