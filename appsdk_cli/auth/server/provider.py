"""The OAuth provider behind mcp's handlers: registered clients, pending sign-ins, codes, tokens and grants.

Access tokens are JWTs (RS256) with `iss` (this origin), `aud` (the resource: the public `/mcp` URL when
tunnelled), `sub` (the test user), `scope`, `client_id`, `exp` and `jti`, so the app verifies them the way
it verifies a real identity provider's tokens: against the issuer's JWKS. Revocation is seen at once only
by a resource server that introspects; the scaffolded app does when `OAUTH_INTROSPECTION_URL` is set,
which `appsdk dev` sets.

Its state lives in memory only, for one `appsdk dev` session, and is kept bounded (`sweep`).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken

from appsdk_cli.auth.clients import (
    AssertionVerifier,
    ClientRefused,
    DocumentCache,
    is_metadata_document_url,
    metadata_document_client,
    redirect_uri_problem,
)
from appsdk_cli.auth.server.config import AuthConfig
from appsdk_cli.netloc import is_loopback_host

# The app's own credentials for introspection, handed to it in the environment.
RESOURCE_SERVER_CLIENT_ID = "appsdk-dev-resource-server"
CODE_SECONDS = 60
PENDING_SECONDS = 600
# Bounds on what the server remembers: a registration nobody has used for this long, with no live
# grant, is dropped; past the caps the least recently used go first.
CLIENT_IDLE_SECONDS = 3600
MAX_CLIENTS = 500
MAX_PENDING = 200


def same_resource(a: str | None, b: str) -> bool:
    """RFC 8707 resources compare as URLs: scheme and host case-insensitively, a trailing slash aside."""
    if not a:
        return False
    left, right = urlsplit(a), urlsplit(b)
    return (
        left.scheme.lower() == right.scheme.lower()
        and left.netloc.lower() == right.netloc.lower()
        and left.path.rstrip("/") == right.path.rstrip("/")
        and left.query == right.query
    )


class _Code(AuthorizationCode):
    pass


class _Refresh(RefreshToken):
    grant: str  # every token from one sign-in shares it, so revoking one ends them all


class _AccessWithGrant(AccessToken):
    grant: str


@dataclass
class Pending:
    """A sign-in waiting on the consent page."""

    client_id: str
    params: Any  # AuthorizationParams
    expires_at: float


@dataclass
class _State:
    """Everything the server remembers, in memory for one `appsdk dev` session."""

    clients: dict[str, Any] = field(default_factory=dict)  # client_id -> OAuthClientInformationFull
    client_seen: dict[str, float] = field(default_factory=dict)  # client_id -> when it was last used
    pending: dict[str, Pending] = field(default_factory=dict)  # consent-page requests
    codes: dict[str, Any] = field(default_factory=dict)  # code -> _Code
    used_codes: dict[str, tuple[str, float]] = field(default_factory=dict)  # code -> (grant, until), for replays
    refresh: dict[str, Any] = field(default_factory=dict)  # refresh token -> _Refresh
    # A rotated-away refresh token -> (grant, until): presenting it again means it leaked (OAuth 2.1 §4.3.1).
    spent_refresh: dict[str, tuple[str, float]] = field(default_factory=dict)
    access: dict[str, str] = field(default_factory=dict)  # jti -> grant id
    access_expiry: dict[str, float] = field(default_factory=dict)  # jti -> exp
    revoked_grants: dict[str, float] = field(default_factory=dict)  # grant -> until when it must stay refused

    def size(self) -> int:
        """How many things are remembered, all kinds together (what the bounds keep in check)."""
        return (
            sum(
                len(part)
                for part in (self.clients, self.pending, self.codes, self.used_codes, self.refresh, self.spent_refresh)
            )
            + len(self.access)
            + len(self.revoked_grants)
        )


class DevAuthProvider:
    """The provider behind mcp's OAuth handlers (their OAuthAuthorizationServerProvider), with the signing key
    and the state it keeps. Not thread-safe: one caller."""

    def __init__(
        self, config: AuthConfig, origin: str, mcp_path: str = "/mcp", clock: Callable[[], float] = time.time
    ) -> None:
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.config = config
        self._clock = clock
        self._documents = DocumentCache(clock, loopback_http=self._on_loopback)
        self._assertions = AssertionVerifier(self._documents, clock)
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key_id = secrets.token_hex(8)
        # The app presents these to /introspect (RFC 7662 lets the server require client auth).
        self.resource_server_secret = secrets.token_urlsafe(32)
        self._state = _State()
        self._mcp_path = mcp_path
        self.origin = ""
        self.set_origin(origin)

    # -- configuration ------------------------------------------------------------------------

    @property
    def issuer(self) -> str:
        return self.origin

    @property
    def resource(self) -> str:
        """The audience of every token: the app's /mcp URL on the current (public, when tunnelled) origin."""
        return self.origin + self._mcp_path

    def _on_loopback(self) -> bool:
        return is_loopback_host(urlsplit(self.origin).hostname or "")

    def set_origin(self, origin: str) -> None:
        """Serve as `origin` from now on (the tunnel's, once it opens). Issued grants are kept."""
        self.origin = origin.rstrip("/")

    def app_environment(self, local_origin: str) -> dict[str, str]:
        """What the app reads to trust this server; the key and introspection are fetched locally, never
        through the tunnel."""
        return {
            "OAUTH_ISSUER": self.issuer,
            "OAUTH_RESOURCE": self.resource,
            "OAUTH_JWKS_URL": local_origin + "/.well-known/jwks.json",
            "OAUTH_INTROSPECTION_URL": local_origin + "/introspect",
            "OAUTH_CLIENT_ID": RESOURCE_SERVER_CLIENT_ID,
            "OAUTH_CLIENT_SECRET": self.resource_server_secret,
        }

    # -- tokens -------------------------------------------------------------------------------

    def jwks(self) -> dict[str, Any]:
        from jwt.algorithms import RSAAlgorithm

        jwk = RSAAlgorithm.to_jwk(self._key.public_key(), as_dict=True)
        return {"keys": [{**jwk, "kid": self.key_id, "use": "sig", "alg": "RS256"}]}

    def _issue(self, client_id: str, subject: str, scopes: list[str], resource: str, grant: str) -> Any:
        import jwt
        from mcp.shared.auth import OAuthToken

        now = int(time.time())
        jti = secrets.token_urlsafe(16)
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": resource,
            "iat": now,
            "exp": now + self.config.access_token_seconds,
            "jti": jti,
            "client_id": client_id,
            "scope": " ".join(scopes),
        }
        access = jwt.encode(claims, self._key, algorithm="RS256", headers={"kid": self.key_id})
        self._state.access[jti] = grant
        self._state.access_expiry[jti] = claims["exp"]
        refresh = secrets.token_urlsafe(32)
        self._state.refresh[refresh] = _Refresh(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + self.config.refresh_token_seconds,
            resource=resource,
            subject=subject,
            grant=grant,
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.config.access_token_seconds,
            scope=" ".join(scopes) or None,
            refresh_token=refresh,
        )

    def verify(self, token: str) -> dict[str, Any] | None:
        """The claims of a live access token this server issued (signature, issuer, expiry, not revoked)."""
        import jwt

        try:
            claims = jwt.decode(
                token,
                self._key.public_key(),
                algorithms=["RS256"],
                issuer=self.issuer,
                options={"verify_aud": False, "require": ["exp", "iat", "jti", "sub"]},
            )
        except jwt.PyJWTError:
            return None
        grant = self._state.access.get(str(claims.get("jti")))
        if grant is None or grant in self._state.revoked_grants:
            return None
        return claims

    def _revoke_grant(self, grant: str) -> None:
        # Kept as long as any token of the grant could still be presented.
        self._state.revoked_grants[grant] = self._clock() + max(
            self.config.access_token_seconds, self.config.refresh_token_seconds
        )
        for token, refresh in list(self._state.refresh.items()):
            if refresh.grant == grant:
                del self._state.refresh[token]

    def sweep(self) -> None:
        """Forget what is dead: expired requests, codes and tokens, and registrations nobody uses."""
        now = self._clock()
        state = self._state
        for table, alive in (
            (state.pending, lambda p: p.expires_at >= now),
            (state.codes, lambda c: c.expires_at >= now),
            (state.used_codes, lambda u: u[1] >= now),
            (state.refresh, lambda r: r.expires_at is None or r.expires_at >= now),
            (state.spent_refresh, lambda s: s[1] >= now),
            (state.access_expiry, lambda exp: exp >= now - 60),
            (state.revoked_grants, lambda until: until >= now),
        ):
            for key in [k for k, v in table.items() if not alive(v)]:
                del table[key]
        for jti in [j for j in state.access if j not in state.access_expiry]:
            del state.access[jti]
        while len(state.pending) > MAX_PENDING:
            del state.pending[next(iter(state.pending))]
        busy = (
            {r.client_id for r in state.refresh.values()}
            | {c.client_id for c in state.codes.values()}
            | {p.client_id for p in state.pending.values()}
        )
        # Oldest first; clients last seen at the same instant go in registration order (the dict's), so the
        # client registered a moment ago is never the one evicted at the cap.
        idle = sorted(
            (state.client_seen.get(c, 0.0), order, c) for order, c in enumerate(state.clients) if c not in busy
        )
        excess = len(state.clients) - MAX_CLIENTS
        for index, (seen, _, client_id) in enumerate(idle):
            if seen < now - CLIENT_IDLE_SECONDS or index < excess:
                state.clients.pop(client_id, None)
                state.client_seen.pop(client_id, None)

    @property
    def state_size(self) -> int:
        return self._state.size()

    async def _metadata_document_client(self, client_id: str) -> Any:
        return await metadata_document_client(self._documents, client_id, self.config.scopes)

    # -- OAuthAuthorizationServerProvider -----------------------------------------------------

    async def get_client(self, client_id: str) -> Any:
        if is_metadata_document_url(client_id):
            try:
                return await self._metadata_document_client(client_id)
            except ClientRefused:
                return None
        client = self._state.clients.get(client_id)
        if client is not None:
            self._state.client_seen[client_id] = self._clock()
        return client

    async def register_client(self, client_info: Any) -> None:
        from mcp.server.auth.provider import RegistrationError

        for uri in client_info.redirect_uris or []:
            problem = redirect_uri_problem(str(uri))
            if problem:
                raise RegistrationError("invalid_redirect_uri", problem)
        if client_info.token_endpoint_auth_method == "private_key_jwt" and not (
            client_info.jwks or client_info.jwks_uri
        ):
            raise RegistrationError("invalid_client_metadata", "private_key_jwt needs jwks or jwks_uri")
        self._state.clients[str(client_info.client_id)] = client_info
        self._state.client_seen[str(client_info.client_id)] = self._clock()
        self.sweep()  # the newest registration is the last one a full table gives up

    async def authorize(self, client: Any, params: Any) -> str:
        from mcp.server.auth.provider import AuthorizeError

        if params.resource is not None and not same_resource(params.resource, self.resource):
            raise AuthorizeError("invalid_target", f"this server issues tokens for {self.resource} only")
        if self.config.auto_user is not None:
            return self._approve(str(client.client_id), params, self.config.auto_user)
        self._expire_pending()
        request = secrets.token_urlsafe(24)
        self._state.pending[request] = Pending(str(client.client_id), params, time.time() + PENDING_SECONDS)
        # Relative, so the consent page opens on whichever origin (local or tunnel) the browser used.
        return f"/consent?request={request}"

    def _approve(self, client_id: str, params: Any, user: str) -> str:
        from mcp.server.auth.provider import construct_redirect_uri

        code = secrets.token_urlsafe(32)
        scopes = list(params.scopes) if params.scopes else list(self.config.scopes)
        self._state.codes[code] = _Code(
            code=code,
            scopes=scopes,
            expires_at=time.time() + CODE_SECONDS,
            client_id=client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=self.resource,
            subject=user,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.issuer)

    def _expire_pending(self) -> None:
        now = time.time()
        for key in [k for k, p in self._state.pending.items() if p.expires_at < now]:
            del self._state.pending[key]

    async def load_authorization_code(self, client: Any, authorization_code: str) -> Any:
        replayed = self._state.used_codes.get(authorization_code)
        if replayed is not None:
            # OAuth 2.1 §4.1.3: a code used twice revokes what the first use issued.
            self._revoke_grant(replayed[0])
            return None
        code = self._state.codes.get(authorization_code)
        if code is None or code.client_id != client.client_id:
            return None
        return code

    async def exchange_authorization_code(self, client: Any, authorization_code: Any) -> Any:
        self._state.codes.pop(authorization_code.code, None)
        grant = secrets.token_hex(8)
        self._state.used_codes[authorization_code.code] = (grant, self._clock() + self.config.refresh_token_seconds)
        return self._issue(
            str(client.client_id),
            str(authorization_code.subject),
            list(authorization_code.scopes),
            str(authorization_code.resource),
            grant,
        )

    async def load_refresh_token(self, client: Any, refresh_token: str) -> Any:
        spent = self._state.spent_refresh.get(refresh_token)
        if spent is not None:
            # OAuth 2.1 §4.3.1: a rotated refresh token used again was stolen, by whoever holds it now or
            # by whoever used it first; end the whole grant so neither keeps access.
            self._revoke_grant(spent[0])
            return None
        refresh = self._state.refresh.get(refresh_token)
        if refresh is None or refresh.client_id != client.client_id or refresh.grant in self._state.revoked_grants:
            return None
        return refresh

    async def exchange_refresh_token(self, client: Any, refresh_token: Any, scopes: list[str]) -> Any:
        # Rotation: the old refresh token is spent, and remembered as spent for as long as it would have lived.
        self._state.refresh.pop(refresh_token.token, None)
        until = float(refresh_token.expires_at or self._clock() + self.config.refresh_token_seconds)
        self._state.spent_refresh[refresh_token.token] = (refresh_token.grant, until)
        return self._issue(
            str(client.client_id), str(refresh_token.subject), scopes, str(refresh_token.resource), refresh_token.grant
        )

    async def load_access_token(self, token: str) -> Any:
        claims = self.verify(token)
        if claims is None:
            return None
        access = AccessToken(
            token=token,
            client_id=str(claims["client_id"]),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=int(claims["exp"]),
            resource=str(claims["aud"]),
            subject=str(claims["sub"]),
        )
        # revoke_token() needs the grant; AccessToken has no field for it.
        return _AccessWithGrant(**access.model_dump(), grant=self._state.access[str(claims["jti"])])

    async def revoke_token(self, token: Any) -> None:
        # Revoking either token of a grant ends the whole grant: the client signed out.
        self._revoke_grant(token.grant)
