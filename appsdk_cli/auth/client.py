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

Each step has its own module, and this one runs them in order: discovery.py (the resource's and the
authorization server's metadata), registration.py (who appsdk is to that server: `--client-id`, a client
metadata document or dynamic registration), callback.py (the browser and the loopback listener). The
flow, refresh and logout stay here, as does the exchange they share at the token endpoint.

An AS that says `appsdk_auto_approve` (appsdk dev --auth-user) approves without a page, so appsdk follows
its redirect itself and no browser is needed. Tokens go to the cache (tokens.py); step-up asks for the
scopes already granted plus the challenged ones. Tokens never reach the terminal.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from appsdk_cli import httpguard
from appsdk_cli.auth.callback import CallbackListener, open_in_browser
from appsdk_cli.auth.discovery import (
    authorization_server_metadata,
    grant_problem,
    legacy_metadata,
    origin_of,
    protected_resource_metadata,
    resource_problem,
)
from appsdk_cli.auth.registration import ClientCredentials, given_client, no_client_line, register
from appsdk_cli.auth.signin_errors import AuthServerUnreachable, SignInError, SignInNeedsBrowser, oauth_error
from appsdk_cli.auth.tokens import CachedTokens, cache_path, forget, load, save

Notify = Callable[[str], None]

# The flow's own names, its errors and the cache entries it returns, for the modules that call it.
__all__ = [
    "AuthServerUnreachable",
    "CachedTokens",
    "LoggedOut",
    "SignInError",
    "SignInNeedsBrowser",
    "forget",
    "load",
    "logout",
    "refresh",
    "revoke",
    "sign_in",
]


def refresh(server_url: str, cached: CachedTokens, *, timeout: float, root: Path | None = None) -> CachedTokens | None:
    """Trade the refresh token for new tokens (rotated); None (and the grant dropped) if that is refused.

    Raises AuthServerUnreachable, keeping the grant, when the issuer does not answer within `timeout`."""

    if not cached.refresh_token:
        forget(server_url, cached.issuer, root)
        return None
    form = {"grant_type": "refresh_token", "refresh_token": cached.refresh_token, "resource": cached.resource}
    try:
        with httpguard.httpx_client(timeout, follow_redirects=False) as http:
            answer = _token_request(http, cached.token_endpoint, form, ClientCredentials.of(cached), "refresh token")
    except AuthServerUnreachable as problem:
        raise AuthServerUnreachable(f"{problem}; your sign-in is kept, try again when it answers") from None
    except SignInError:
        forget(server_url, cached.issuer, root)
        return None
    tokens = _cached(cached, answer, cached.scopes)
    save(server_url, tokens, root)
    return tokens


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
    browser: bool = True,
) -> str:
    """The whole flow, from the challenge to a cached access token (returned).

    `browser`: False when no browser may open now; only an authorization server that approves without a
    page (appsdk dev --auth-user) signs in then, any other raises SignInNeedsBrowser before registering."""

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
            metadata = authorization_server_metadata(http, issuer, server_url=server_url)
        else:
            metadata = legacy_metadata(http, origin_of(server_url))
            resource, issuer = server_url, str(metadata["issuer"])
        if "S256" not in (metadata.get("code_challenge_methods_supported") or []):
            raise SignInError(f"{issuer} does not support PKCE S256; appsdk will not sign in without it")
        for endpoint in ("authorization_endpoint", "token_endpoint"):
            if not metadata.get(endpoint):
                raise SignInError(f"{issuer}'s metadata has no {endpoint}")

        if not browser and metadata.get("appsdk_auto_approve") is not True:
            raise SignInNeedsBrowser(f"{resource} wants you to sign in, on {issuer}'s sign-in page")
        previous = load(server_url, issuer, root)
        scopes = _scopes(scope, previous, prm)
        redirect_uri = None
        if client_id:
            client, redirect_uri = given_client(http, client_id, metadata, issuer, notify)
        elif not metadata.get("registration_endpoint"):
            raise SignInError(no_client_line(issuer, metadata))
        else:
            client = None
        with CallbackListener(redirect_uri) as listener:
            if client is None:
                client = register(http, metadata, issuer, listener.redirect_uri)
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
            elif not browser:
                raise SignInNeedsBrowser(f"{resource} wants you to sign in, on {issuer}'s sign-in page")
            else:
                notify(f"signing in to {resource}: opening {authorize_url} in your browser")
                wait = max(timeout, 120.0)
                if not open_in_browser(authorize_url, open_browser):
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
        resource_metadata=prm_url,
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


def _token_request(
    http: Any, endpoint: str, form: dict[str, str], client: ClientCredentials, what: str
) -> dict[str, Any]:
    import httpx

    headers = client.apply(form)
    try:
        response = http.post(endpoint, data=form, headers=headers)
    except httpx.HTTPError as problem:
        raise AuthServerUnreachable(f"cannot reach {endpoint}: {problem}") from None
    if response.status_code != 200:
        raise SignInError(f"{endpoint} refused the {what}: {oauth_error(response)}")
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
        resource_metadata=base.resource_metadata,
    )


def revoke(cached: CachedTokens, *, timeout: float) -> bool:
    """Ask the issuer to end the grant (RFC 7009, the refresh token if there is one); False if it could not."""
    import httpx

    if not cached.revocation_endpoint:
        return False
    form = {"token": cached.refresh_token or cached.access_token}
    headers = ClientCredentials.of(cached).apply(form)
    try:
        with httpguard.httpx_client(timeout, follow_redirects=False) as http:
            return http.post(cached.revocation_endpoint, data=form, headers=headers).status_code == 200
    except httpx.HTTPError:
        return False


def _may_revoke(server_url: str, cached: CachedTokens, timeout: float) -> bool:
    """Whether the revocation, which carries the refresh token, may go where the grant says.

    To an issuer on another origin, yes. To one on the server's own origin (`appsdk dev`'s) only while the
    server there shows the resource metadata the grant was made under, as release.py asks before any
    cached token is sent: whatever took the port since must not collect the refresh token."""
    if not cached.revocation_endpoint or origin_of(cached.revocation_endpoint) != origin_of(server_url):
        return True
    try:
        with httpguard.httpx_client(timeout, follow_redirects=False) as http:
            prm, _ = protected_resource_metadata(http, server_url, None)
    except SignInError:
        return False
    return grant_problem(prm, server_url, cached.resource, cached.issuer) is None


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
            revoked = _may_revoke(cached.server, tokens, timeout) and revoke(tokens, timeout=timeout)
            done.append(LoggedOut(cached.server, issuer, revoked))
        forget(cached.server, root=root)
    if server_url is None:
        from appsdk_cli.auth.tokens import forget_everything

        forget_everything(root)  # also files no server entry could be read from
    return done
