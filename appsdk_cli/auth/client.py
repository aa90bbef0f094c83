"""Sign in to a protected MCP server the way ChatGPT and Codex do in 2026.

On a 401 (or a 403 `insufficient_scope`) the server's challenge names its Protected Resource Metadata
(RFC 9728; else the path-based, then the root well-known URL is tried), which names the authorization
server; appsdk reads that server's metadata (RFC 8414) and runs the authorization-code flow with PKCE
S256: the browser opens the authorization page and comes back to a one-shot listener on 127.0.0.1.

What is checked before anything is sent (mix-up and token-theft defences):
- the PRM's `resource` must be the server connected to (RFC 9728 §3.3): a server at A cannot get the
  user signed in for B and receive B's token;
- the AS metadata's `issuer` must be the issuer asked for (RFC 8414 §3.3);
- the authorization response's `iss` must be that issuer, and must be there when the AS says it sends
  it (RFC 9207).

Who appsdk is to the authorization server, in this order: `--client-id` (a client registered there
beforehand, its secret in $APPSDK_CLIENT_SECRET if it has one, or the https URL of a Client ID Metadata
Document the user hosts), else dynamic client registration (RFC 7591, `application_type: native`), else
one line saying which of the two the user needs.

An AS that says `appsdk_auto_approve` (appsdk dev --auth-user) approves without a page, so appsdk follows
its redirect itself and no browser is needed. Tokens go to the cache (tokens.py); step-up asks for the
scopes already granted plus the challenged ones. Tokens never reach the terminal.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from appsdk_cli import httpguard
from appsdk_cli.auth.tokens import CachedTokens, cache_path, forget, load, save
from appsdk_cli.errors import AppsdkError
from appsdk_cli.netloc import reaches_127_0_0_1

CALLBACK_PATH = "/callback"
CLIENT_SECRET_ENV = "APPSDK_CLIENT_SECRET"
Notify = Callable[[str], None]

__all__ = [
    "CachedTokens",
    "SignInError",
    "authorization_server_metadata",
    "forget",
    "get_json",
    "load",
    "resource_problem",
    "sign_in",
    "usable_token",
]


class SignInError(AppsdkError):
    """Signing in failed (exit 1): the message says at which step and why."""


class AuthServerUnreachable(SignInError):
    """The authorization server did not answer in time, or at all: no verdict on the grant, so it is kept."""


def usable_token(server_url: str, *, timeout: float, root: Path | None = None) -> str | None:
    """A cached access token for this server (from the issuer used last), refreshed if it has run out."""
    cached = load(server_url, root=root)
    if cached is None:
        return None
    if cached.fresh():
        return cached.access_token
    refreshed = refresh(server_url, cached, timeout=timeout, root=root)
    return refreshed.access_token if refreshed else None


def refresh(server_url: str, cached: CachedTokens, *, timeout: float, root: Path | None = None) -> CachedTokens | None:
    """Trade the refresh token for new tokens (rotated); None (and the grant dropped) if that is refused.

    Raises AuthServerUnreachable, keeping the grant, when the issuer does not answer within `timeout`."""

    if not cached.refresh_token:
        forget(server_url, cached.issuer, root)
        return None
    form = {"grant_type": "refresh_token", "refresh_token": cached.refresh_token, "resource": cached.resource}
    try:
        with httpguard.httpx_client(timeout, follow_redirects=False) as http:
            answer = _token_request(http, cached.token_endpoint, form, _Client.of(cached), "refresh token")
    except AuthServerUnreachable as problem:
        raise AuthServerUnreachable(f"{problem}; your sign-in is kept, try again when it answers") from None
    except SignInError:
        forget(server_url, cached.issuer, root)
        return None
    tokens = _cached(cached, answer, cached.scopes)
    save(server_url, tokens, root)
    return tokens


# -- discovery ----------------------------------------------------------------------------------


def resource_problem(resource: Any, server_url: str) -> str | None:
    """Why a PRM's `resource` is not the server at `server_url` (RFC 9728 §3.3), or None when it is.

    Same scheme, host and port; the resource's path is the server's or a parent of it on a segment
    boundary (a root-level PRM names the origin, as MCP allows)."""
    if not isinstance(resource, str) or not resource:
        return "it names no resource"
    left, right = urlsplit(resource), urlsplit(server_url)
    same_origin = (
        left.scheme.lower() == right.scheme.lower()
        and (left.hostname or "").lower() == (right.hostname or "").lower()
        and (left.port or _default_port(left.scheme)) == (right.port or _default_port(right.scheme))
    )
    own, asked = left.path.rstrip("/"), right.path.rstrip("/")
    if same_origin and not left.query and (own == asked or asked.startswith(own + "/")):
        return None
    return f"it says it is {resource}"


def _default_port(scheme: str) -> int | None:
    return {"http": 80, "https": 443}.get(scheme.lower())


def protected_resource_metadata(http: Any, server_url: str, challenge_url: str | None) -> tuple[dict[str, Any], str]:
    """The PRM and where it was read: the challenge's URL, else path-based, else root well-known."""
    if challenge_url:
        return get_json(http, challenge_url, "protected resource metadata"), challenge_url
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    candidates = [f"{origin}/.well-known/oauth-protected-resource{parts.path.rstrip('/')}"]
    if parts.path.rstrip("/"):
        candidates.append(f"{origin}/.well-known/oauth-protected-resource")
    last: SignInError | None = None
    for url in candidates:
        try:
            return get_json(http, url, "protected resource metadata"), url
        except SignInError as problem:
            last = problem
    assert last is not None
    raise last


def authorization_server_metadata(http: Any, issuer: str, *, verify_issuer: bool = True) -> dict[str, Any]:
    """RFC 8414 metadata for `issuer`; refuses a document that names another issuer (§3.3)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    # RFC 8414 section 3.1 inserts the well-known segment before the issuer's path; OIDC appends it.
    candidates = [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]
    for url in dict.fromkeys(candidates):
        try:
            metadata = get_json(http, url, "authorization server metadata")
        except SignInError:
            continue
        said = metadata.get("issuer")
        # Exact, as RFC 8414 says, but for the trailing slash URL libraries add to a path-less issuer.
        if verify_issuer and (not isinstance(said, str) or said.rstrip("/") != issuer.rstrip("/")):
            raise SignInError(
                f"refusing to sign in: the authorization server metadata at {url} says issuer {said!r}, "
                f"not {issuer} (RFC 8414 §3.3: it may be impersonating another server)"
            )
        return metadata
    raise SignInError(f"no authorization server metadata found for {issuer}")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _legacy_metadata(http: Any, origin: str) -> dict[str, Any]:
    """MCP 2025-03-26, for a server with no resource metadata: its origin is its authorization server, and
    without metadata there the default endpoints apply (that spec's §2.3.3; PKCE was mandatory in it)."""
    url = f"{origin}/.well-known/oauth-authorization-server"
    try:
        metadata = get_json(http, url, "authorization server metadata")
    except SignInError:
        metadata = None
    if metadata is not None:
        said = metadata.get("issuer")
        # That spec put the metadata at the origin whatever the issuer's path; another origin is refused.
        if not isinstance(said, str) or _origin(said) != origin:
            raise SignInError(
                f"refusing to sign in: the authorization server metadata at {url} says issuer {said!r}, "
                f"which is not on {origin} (RFC 8414 §3.3)"
            )
        return metadata
    return {
        "issuer": origin,
        "authorization_endpoint": origin + "/authorize",
        "token_endpoint": origin + "/token",
        "registration_endpoint": origin + "/register",
        "code_challenge_methods_supported": ["S256"],
    }


def get_json(http: Any, url: str, what: str) -> dict[str, Any]:
    import httpx

    try:
        response = http.get(url, headers={"Accept": "application/json"})
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


# -- who appsdk is to the authorization server ----------------------------------------------------


class _Client:
    """appsdk's identity at one authorization server, and how it authenticates at the token endpoint."""

    def __init__(self, client_id: str, secret: str | None = None, method: str = "none") -> None:
        self.client_id = client_id
        self.secret = secret
        self.method = method

    @classmethod
    def of(cls, cached: CachedTokens) -> _Client:
        return cls(cached.client_id, cached.client_secret, cached.auth_method)

    def apply(self, form: dict[str, str]) -> dict[str, str]:
        """The token request's headers; the form gains client_id (and the secret, for client_secret_post)."""
        if self.method == "client_secret_basic" and self.secret is not None:
            from urllib.parse import quote

            pair = f"{quote(self.client_id, safe='')}:{quote(self.secret, safe='')}"
            return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
        form["client_id"] = self.client_id
        if self.method == "client_secret_post" and self.secret is not None:
            form["client_secret"] = self.secret
        return {}


def _secret_method(metadata: dict[str, Any]) -> str:
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    return "client_secret_basic" if "client_secret_basic" in supported else "client_secret_post"


def _given_client(
    http: Any, client_id: str, metadata: dict[str, Any], issuer: str, notify: Notify
) -> tuple[_Client, str | None]:
    """--client-id: a metadata document URL (and the loopback redirect URI it lists), or a pre-registered id."""
    if client_id.startswith(("https://", "http://")):
        if not metadata.get("client_id_metadata_document_supported"):
            raise SignInError(
                f"{issuer} does not accept client metadata documents (no client_id_metadata_document_supported); "
                "pass the id of a client registered there as --client-id"
            )
        try:
            document = get_json(http, client_id, "client metadata document")
        except SignInError as problem:
            # The authorization server may still reach it where appsdk cannot; it will say if not.
            notify(f"could not read {client_id} ({problem.message}); using a loopback callback on a free port")
            return _Client(client_id), None
        loopback = [
            str(u)
            for u in document.get("redirect_uris") or []
            # Our callback listens on 127.0.0.1 alone, so only a redirect URI that reaches it will do.
            if urlsplit(str(u)).scheme == "http" and reaches_127_0_0_1(urlsplit(str(u)).hostname or "")
        ]
        if not loopback:
            raise SignInError(
                f"the client metadata document at {client_id} lists no loopback redirect URI; "
                "add one like http://127.0.0.1:8976/callback so appsdk can receive the sign-in"
            )
        return _Client(client_id), loopback[0]
    secret = os.environ.get(CLIENT_SECRET_ENV) or None
    return _Client(client_id, secret, _secret_method(metadata) if secret else "none"), None


def _register(http: Any, metadata: dict[str, Any], issuer: str, redirect_uri: str) -> _Client:
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    method = "none" if "none" in supported else _secret_method(metadata)
    import httpx

    try:
        registered = http.post(
            str(metadata["registration_endpoint"]),
            json={
                "client_name": "appsdk",
                "redirect_uris": [redirect_uri],
                "token_endpoint_auth_method": method,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "application_type": "native",  # a CLI on a loopback callback (MCP 2026-07-28)
            },
        )
    except httpx.HTTPError as problem:
        raise SignInError(f"cannot reach {issuer}'s registration endpoint: {problem}") from None
    if registered.status_code not in (200, 201):
        raise SignInError(f"{issuer} refused to register appsdk: {_oauth_error(registered)}")
    try:
        answer = registered.json()
        client_id = str(answer["client_id"])
    except (ValueError, KeyError, TypeError):
        raise SignInError(f"{issuer}'s registration answer has no client_id") from None
    secret = answer.get("client_secret")
    given = answer.get("token_endpoint_auth_method")
    if secret and given in (None, "none"):
        given = _secret_method(metadata)
    return _Client(client_id, str(secret) if secret else None, str(given or method))


def _no_client_line(issuer: str, metadata: dict[str, Any]) -> str:
    if metadata.get("client_id_metadata_document_supported"):
        return (
            f"{issuer} offers no dynamic client registration: pass --client-id URL (a client metadata document you "
            "host, listing a loopback redirect URI) or --client-id ID (a client registered there)"
        )
    return (
        f"{issuer} offers neither dynamic client registration nor client metadata documents: register a client "
        f"there with redirect URI http://127.0.0.1/callback and pass --client-id ID (a secret in ${CLIENT_SECRET_ENV})"
    )


# -- the flow -----------------------------------------------------------------------------------


def sign_in(
    server_url: str,
    *,
    resource_metadata: str | None,
    scope: str | None,
    timeout: float,
    notify: Notify,
    client_id: str | None = None,
    root: Path | None = None,
    open_browser: Callable[[str], object] | None = None,
) -> str:
    """The whole flow, from the challenge to a cached access token (returned)."""

    with httpguard.httpx_client(timeout, follow_redirects=False) as http:
        try:
            prm, prm_url = protected_resource_metadata(http, server_url, resource_metadata)
        except SignInError:
            if resource_metadata:
                raise
            prm, prm_url = {}, ""
        if prm_url:
            problem = resource_problem(prm.get("resource"), server_url)
            if problem:
                raise SignInError(
                    f"refusing to sign in: the resource metadata at {prm_url} is not for {server_url}: {problem} "
                    "(RFC 9728 §3.3: a server may only ask for tokens for itself)"
                )
            resource = str(prm["resource"])
            servers = prm.get("authorization_servers")
            if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
                raise SignInError(f"{server_url}'s resource metadata names no authorization server")
            issuer = servers[0]
            metadata = authorization_server_metadata(http, issuer)
        else:
            metadata = _legacy_metadata(http, _origin(server_url))
            resource, issuer = server_url, str(metadata["issuer"])
        if "S256" not in (metadata.get("code_challenge_methods_supported") or []):
            raise SignInError(f"{issuer} does not support PKCE S256; appsdk will not sign in without it")
        for endpoint in ("authorization_endpoint", "token_endpoint"):
            if not metadata.get(endpoint):
                raise SignInError(f"{issuer}'s metadata has no {endpoint}")

        previous = load(server_url, issuer, root)
        scopes = _scopes(scope, previous, prm)
        redirect_uri = None
        if client_id:
            client, redirect_uri = _given_client(http, client_id, metadata, issuer, notify)
        elif not metadata.get("registration_endpoint"):
            raise SignInError(_no_client_line(issuer, metadata))
        else:
            client = None
        with _CallbackListener(redirect_uri) as listener:
            if client is None:
                client = _register(http, metadata, issuer, listener.redirect_uri)
            verifier = secrets.token_urlsafe(64)
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            state = secrets.token_urlsafe(24)
            query = {
                "response_type": "code",
                "client_id": client.client_id,
                "redirect_uri": listener.redirect_uri,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "state": state,
                "resource": resource,
                **({"scope": " ".join(scopes)} if scopes else {}),
            }
            authorize_url = f"{metadata['authorization_endpoint']}?{urlencode(query)}"
            answer = (
                _auto_approved(http, authorize_url, listener.redirect_uri)
                if metadata.get("appsdk_auto_approve") is True
                else None
            )
            if answer is not None:
                notify(f"signing in to {resource}: {issuer} approves without a browser (appsdk dev --auth-user)")
            else:
                notify(f"signing in to {resource}: opening {authorize_url} in your browser")
                wait = max(timeout, 120.0)
                if not _open(authorize_url, open_browser):
                    notify(f"no browser could be started here: open that URL yourself (waiting {wait:.0f} s)")
                answer = listener.wait(timeout=wait)

        if answer.get("state") != state:
            raise SignInError("the sign-in came back with the wrong state; try again")
        _check_iss(answer, metadata, issuer)
        if "error" in answer:
            raise SignInError(f"{issuer} refused the sign-in: {answer.get('error_description') or answer['error']}")
        form = {
            "grant_type": "authorization_code",
            "code": answer.get("code", ""),
            "redirect_uri": listener.redirect_uri,
            "code_verifier": verifier,
            "resource": resource,
        }
        reply = _token_request(http, str(metadata["token_endpoint"]), form, client, "code")
    base = CachedTokens(
        resource=resource,
        issuer=issuer,
        token_endpoint=str(metadata["token_endpoint"]),
        client_id=client.client_id,
        access_token="",
        refresh_token=None,
        expires_at=None,
        client_secret=client.secret,
        auth_method=client.method,
        revocation_endpoint=metadata.get("revocation_endpoint"),
    )
    tokens = _cached(base, reply, scopes)
    save(server_url, tokens, root)
    notify(f"signed in to {resource} at {issuer}; tokens cached in {cache_path(server_url, root)}")
    return tokens.access_token


def _scopes(challenged: str | None, previous: CachedTokens | None, prm: dict[str, Any]) -> list[str]:
    """The challenge's scopes plus those already granted (step-up); else what the PRM lists; else none."""
    asked = (challenged or "").split()
    if not asked and previous is None:
        listed = prm.get("scopes_supported")
        return [str(s) for s in listed] if isinstance(listed, list) else []
    return list(dict.fromkeys((previous.scopes if previous else []) + asked))


def _check_iss(answer: dict[str, str], metadata: dict[str, Any], issuer: str) -> None:
    """RFC 9207: the response names the issuer it came from; required when the AS says it sends it."""
    said = answer.get("iss")
    if said is None:
        if metadata.get("authorization_response_iss_parameter_supported") is True:
            raise SignInError(
                f"the sign-in came back without iss, though {issuer} says it sends one (RFC 9207); refusing it"
            )
        return
    if said != metadata.get("issuer") and said.rstrip("/") != issuer.rstrip("/"):
        raise SignInError(f"the sign-in came back from {said}, not {issuer} (RFC 9207 mix-up defence); refusing it")


def _auto_approved(http: Any, authorize_url: str, redirect_uri: str) -> dict[str, str] | None:
    """Follow an auto-approving AS's redirect without a browser; None to fall back to the browser."""
    from urllib.parse import urljoin

    import httpx

    url = authorize_url
    with contextlib.suppress(httpx.HTTPError):
        for _ in range(5):
            response = http.get(url)
            location = response.headers.get("location")
            if response.status_code not in (301, 302, 303, 307, 308) or not location:
                return None
            url = urljoin(url, location)
            if url.split("?")[0] == redirect_uri:
                return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    return None


def _token_request(http: Any, endpoint: str, form: dict[str, str], client: _Client, what: str) -> dict[str, Any]:
    import httpx

    headers = client.apply(form)
    try:
        response = http.post(endpoint, data=form, headers=headers)
    except httpx.HTTPError as problem:
        raise AuthServerUnreachable(f"cannot reach {endpoint}: {problem}") from None
    if response.status_code != 200:
        raise SignInError(f"{endpoint} refused the {what}: {_oauth_error(response)}")
    try:
        answer = response.json()
    except ValueError:
        raise SignInError(f"{endpoint} answered the {what} with something that is not JSON") from None
    if not isinstance(answer, dict) or not answer.get("access_token"):
        raise SignInError(f"{endpoint} answered without an access token")
    return answer


def _cached(base: CachedTokens, answer: dict[str, Any], asked: list[str]) -> CachedTokens:
    expires_in = answer.get("expires_in")
    granted = answer.get("scope")
    return CachedTokens(
        resource=base.resource,
        issuer=base.issuer,
        token_endpoint=base.token_endpoint,
        client_id=base.client_id,
        access_token=str(answer["access_token"]),
        # RFC 6749 §6: a refresh answer without a new refresh token leaves the old one valid.
        refresh_token=answer.get("refresh_token") or base.refresh_token,
        expires_at=time.time() + float(expires_in) if isinstance(expires_in, int | float) else None,
        scopes=str(granted).split() if isinstance(granted, str) and granted else list(asked),
        client_secret=base.client_secret,
        auth_method=base.auth_method,
        revocation_endpoint=base.revocation_endpoint,
    )


def revoke(cached: CachedTokens, *, timeout: float) -> bool:
    """Ask the issuer to end the grant (RFC 7009, the refresh token if there is one); False if it could not."""
    import httpx

    if not cached.revocation_endpoint:
        return False
    form = {"token": cached.refresh_token or cached.access_token}
    headers = _Client.of(cached).apply(form)
    try:
        with httpguard.httpx_client(timeout, follow_redirects=False) as http:
            return http.post(cached.revocation_endpoint, data=form, headers=headers).status_code == 200
    except httpx.HTTPError:
        return False


def _oauth_error(response: Any) -> str:
    try:
        body = response.json()
        return str(body.get("error_description") or body.get("error") or f"HTTP {response.status_code}")
    except (ValueError, AttributeError):
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
    """A one-shot HTTP listener on 127.0.0.1 for the authorization server's redirect (on the port and path
    of `redirect_uri` when one is given, e.g. the one a client metadata document lists)."""

    def __init__(self, redirect_uri: str | None = None) -> None:
        import http.server

        self._answer: dict[str, str] | None = None
        self._done = threading.Event()
        wanted = urlsplit(redirect_uri) if redirect_uri else None
        path = (wanted.path or CALLBACK_PATH) if wanted else CALLBACK_PATH
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != path:
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

        port = (wanted.port or 80) if wanted else 0
        try:
            self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        except OSError as problem:
            where = f"127.0.0.1:{port}"
            raise SignInError(f"cannot listen on {where} for the sign-in's redirect: {problem.strerror}") from None
        host = wanted.hostname if wanted else "127.0.0.1"
        self.redirect_uri = f"http://{host}:{self._server.server_port}{path}"
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


@dataclass(frozen=True)
class LoggedOut:
    server: str
    issuer: str
    revoked: bool  # the issuer confirmed it ended the grant (RFC 7009); else it was only forgotten here


def logout(server_url: str | None, *, timeout: float, root: Path | None = None) -> list[LoggedOut]:
    """Forget the cached sign-ins for one server (or all), asking each issuer to revoke them first."""
    from appsdk_cli.auth.tokens import every_server, server_key

    servers = [c for c in every_server(root) if server_url is None or c.server == server_key(server_url)]
    done = []
    for cached in servers:
        for issuer, tokens in cached.grants.items():
            done.append(LoggedOut(cached.server, issuer, revoke(tokens, timeout=timeout)))
        forget(cached.server, root=root)
    if server_url is None:
        from appsdk_cli.auth.tokens import forget_everything

        forget_everything(root)  # also files no server entry could be read from
    return done
