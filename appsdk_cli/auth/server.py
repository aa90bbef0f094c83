"""The development authorization server `appsdk dev` runs for an app that declares auth.

It is an OAuth 2.1 authorization server for one resource, the app's `/mcp` URL, on the app's own origin
(so one tunnel serves both): RFC 8414 metadata, dynamic client registration (RFC 7591, public clients
included), the authorization-code grant with PKCE S256 only, a consent page where the developer picks a
test user (no passwords), refresh tokens (rotated), revocation (RFC 7009) and introspection (RFC 7662).
The protocol handlers are mcp's own (`mcp.server.auth`); this module is the provider behind them, the
consent page, the signing key and the few endpoints mcp does not have (JWKS, introspection).

Access tokens are JWTs (RS256) with `iss` (this origin), `aud` (the resource: the public `/mcp` URL when
tunnelled), `sub` (the test user), `scope`, `client_id`, `exp` and `jti`, so the app verifies them the way
it verifies a real identity provider's tokens: against the issuer's JWKS. Revocation is seen at once only
by a resource server that introspects; the scaffolded app does when `OAUTH_INTROSPECTION_URL` is set,
which `appsdk dev` sets.

Where it runs: in the `appsdk dev` supervisor, the one process that lives for the whole session, so
clients, grants and the key survive every reload; workers forward the authorization server's paths to
it over their pipe (see devserver/asgi.py, AuthForwarder). Its state lives in memory only and dies with the session.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import html
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken

from appsdk_cli.auth.clients import (
    JWT_BEARER_ASSERTION,
    AssertionVerifier,
    ClientRefused,
    DocumentCache,
    is_metadata_document_url,
    metadata_document_client,
    redirect_uri_problem,
)
from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.netloc import is_loopback_host

# The paths a worker hands to the authorization server; everything else is the app's.
AUTH_PATHS = (
    "/.well-known/oauth-authorization-server",
    "/.well-known/jwks.json",
    "/authorize",
    "/consent",
    "/token",
    "/register",
    "/revoke",
    "/introspect",
)
DEFAULT_USERS = ("ada", "grace")
# The app's own credentials for introspection, handed to it in the environment.
RESOURCE_SERVER_CLIENT_ID = "appsdk-dev-resource-server"
CODE_SECONDS = 60
PENDING_SECONDS = 600
MAX_BODY = 64 * 1024
# Bounds on what the server remembers: a registration nobody has used for this long, with no live
# grant, is dropped; past the caps the least recently used go first.
CLIENT_IDLE_SECONDS = 3600
MAX_CLIENTS = 500
MAX_PENDING = 200


@dataclass(frozen=True)
class AuthConfig:
    """`[tool.appsdk.auth]` in the project's pyproject.toml, plus `appsdk dev --auth-user`."""

    users: tuple[str, ...] = DEFAULT_USERS
    scopes: tuple[str, ...] = ()
    access_token_seconds: int = 300
    refresh_token_seconds: int = 86400
    auto_user: str | None = None  # approve every request as this user, without the consent page


def auth_config(appsdk_table: dict[str, Any], auto_user: str | None = None) -> AuthConfig | None:
    """The dev authorization server's settings, or None when the project declares no `[tool.appsdk.auth]`."""
    table = appsdk_table.get("auth")
    if table is None:
        if auto_user is not None:
            raise UsageError("--auth-user needs an app that declares [tool.appsdk.auth] (see `appsdk new --auth`)")
        return None
    where = "[tool.appsdk.auth] in pyproject.toml"
    if not isinstance(table, dict):
        raise AppsdkError(f"{where} must be a table")

    def names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = table.get(key, list(default))
        if not isinstance(value, list) or not all(isinstance(v, str) and v and " " not in v for v in value):
            raise AppsdkError(f"{where}: {key} must be a list of names without spaces")
        return tuple(value)

    def seconds(key: str, default: int) -> int:
        value = table.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise AppsdkError(f"{where}: {key} must be a whole number of seconds, at least 1")
        return value

    users = names("users", DEFAULT_USERS)
    if not users:
        raise AppsdkError(f"{where}: users must name at least one test user")
    if auto_user is not None and auto_user not in users:
        raise UsageError(f"--auth-user {auto_user!r} is not a test user; {where} lists {', '.join(users)}")
    return AuthConfig(
        users=users,
        scopes=names("scopes", ()),
        access_token_seconds=seconds("access_token_seconds", 300),
        refresh_token_seconds=seconds("refresh_token_seconds", 86400),
        auto_user=auto_user,
    )


def refuse_exposed(host: str, behind_tunnel: bool) -> None:
    """It signs anyone in as a test user without a password: never on a network address of its own."""
    if not is_loopback_host(host) and not behind_tunnel:
        raise UsageError(
            f"the development authorization server signs anyone in, so appsdk dev will not serve it on {host}; "
            "keep the default loopback --host, or put it behind --tunnel"
        )


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
class _Pending:
    client_id: str
    params: Any  # AuthorizationParams
    expires_at: float


@dataclass
class _State:
    """Everything the server remembers, in memory for one `appsdk dev` session."""

    clients: dict[str, Any] = field(default_factory=dict)  # client_id -> OAuthClientInformationFull
    client_seen: dict[str, float] = field(default_factory=dict)  # client_id -> when it was last used
    pending: dict[str, _Pending] = field(default_factory=dict)  # consent-page requests
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


class DevAuthServer:
    """The provider behind mcp's OAuth handlers, plus the app they make. Not thread-safe: one caller."""

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
        self._loop: asyncio.AbstractEventLoop | None = None
        self.origin = ""
        self._app: Any = None
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
        self._app = None

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
        self._state.pending[request] = _Pending(str(client.client_id), params, time.time() + PENDING_SECONDS)
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

    # -- HTTP ---------------------------------------------------------------------------------

    def asgi(self) -> Any:
        """The Starlette app for AUTH_PATHS (rebuilt when the origin changes)."""
        if self._app is None:
            self._app = self._build_app()
        return self._app

    def _build_app(self) -> Any:
        from mcp.server.auth.provider import construct_redirect_uri
        from mcp.server.auth.routes import build_metadata, create_auth_routes
        from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
        from pydantic import AnyHttpUrl
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
        from starlette.routing import Route

        scopes = list(self.config.scopes)
        registration = ClientRegistrationOptions(enabled=True, valid_scopes=scopes, default_scopes=scopes)
        revocation = RevocationOptions(enabled=True)
        issuer = AnyHttpUrl(self.issuer)
        from mcp.server.auth.handlers.authorize import AuthorizationHandler
        from mcp.server.auth.handlers.token import TokenHandler

        from appsdk_cli.auth.clients import ASSERTION_ALGORITHMS

        routes = [
            route
            for route in create_auth_routes(
                self, issuer, client_registration_options=registration, revocation_options=revocation
            )
            # Ours instead: mcp's revocation handler requires a client_secret field even from a public client;
            # its token and authorize handlers know neither private_key_jwt nor RFC 9207 `iss` on errors.
            if route.path not in ("/.well-known/oauth-authorization-server", "/revoke", "/token", "/authorize")
        ]
        metadata = build_metadata(issuer, None, registration, revocation).model_dump(mode="json", exclude_none=True)
        auth_methods = ["none", "client_secret_post", "client_secret_basic", "private_key_jwt"]
        metadata.update(
            # pydantic writes a path-less URL with a slash; RFC 8414 compares issuers as exact strings.
            issuer=self.issuer,
            token_endpoint_auth_methods_supported=auth_methods,
            token_endpoint_auth_signing_alg_values_supported=ASSERTION_ALGORITHMS,
            revocation_endpoint_auth_methods_supported=auth_methods,
            introspection_endpoint=self.issuer + "/introspect",
            introspection_endpoint_auth_methods_supported=["client_secret_basic"],
            jwks_uri=self.issuer + "/.well-known/jwks.json",
            authorization_response_iss_parameter_supported=True,  # RFC 9207
            client_id_metadata_document_supported=True,
            scopes_supported=scopes,
        )
        if self.config.auto_user is not None:
            # appsdk's own extension: approval needs no browser, so `appsdk call` may follow the redirect itself.
            metadata["appsdk_auto_approve"] = True
        authenticator = _ClientAuthenticator(self)
        token_handler = TokenHandler(self, authenticator)
        authorization_handler = AuthorizationHandler(self)

        def no_store(body: Any, status: int = 200) -> Response:
            return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})

        async def metadata_endpoint(request: Request) -> Response:
            return JSONResponse(metadata, headers={"Access-Control-Allow-Origin": "*"})

        async def jwks_endpoint(request: Request) -> Response:
            return JSONResponse(self.jwks(), headers={"Access-Control-Allow-Origin": "*"})

        async def consent_page(request: Request) -> Response:
            pending = self._state.pending.get(request.query_params.get("request", ""))
            if pending is None or pending.expires_at < time.time():
                return HTMLResponse(_page("This sign-in request has expired; start again from the app."), 400)
            client = await self.get_client(pending.client_id)
            return HTMLResponse(_consent_html(request.query_params["request"], client, pending, self))

        async def consent_submit(request: Request) -> Response:
            from mcp.server.auth.provider import construct_redirect_uri

            form = await request.form()
            key = str(form.get("request", ""))
            pending = self._state.pending.pop(key, None)  # one answer per request
            if pending is None or pending.expires_at < time.time():
                return HTMLResponse(_page("This sign-in request has expired; start again from the app."), 400)
            params = pending.params
            if form.get("action") != "approve":
                denied = construct_redirect_uri(
                    str(params.redirect_uri), error="access_denied", state=params.state, iss=self.issuer
                )
                return RedirectResponse(denied, 302)
            user = str(form.get("user", ""))
            if user not in self.config.users:
                return HTMLResponse(_page("Pick one of the test users."), 400)
            return RedirectResponse(self._approve(pending.client_id, params, user), 302)

        async def authorize(request: Request) -> Response:
            params = request.query_params if request.method == "GET" else await request.form()
            client_id = str(params.get("client_id") or "")
            if is_metadata_document_url(client_id):
                # Fetched here first so a bad document is refused with its reason, not as an unknown client.
                try:
                    await self._metadata_document_client(client_id)
                except ClientRefused as problem:
                    return no_store({"error": "invalid_client", "error_description": str(problem)}, 400)
            response = await authorization_handler.handle(request)
            location = response.headers.get("location", "")
            if response.status_code in (302, 303) and "://" in location.split("?")[0]:
                # RFC 9207 §2: every authorization response names the issuer, errors too.
                query = parse_qs(urlsplit(location).query)
                if ("code" in query or "error" in query) and "iss" not in query:
                    response.headers["location"] = construct_redirect_uri(location, iss=self.issuer)
            return response

        async def token(request: Request) -> Response:
            return await token_handler.handle(request)

        async def revoke(request: Request) -> Response:
            from mcp.server.auth.middleware.client_auth import AuthenticationError

            try:
                client = await authenticator.authenticate_request(request)
            except AuthenticationError as problem:
                return no_store({"error": "invalid_client", "error_description": problem.message}, 401)
            token = str((await request.form()).get("token", ""))
            if not token:
                return no_store({"error": "invalid_request", "error_description": "token is required"}, 400)
            found = await self.load_access_token(token) or await self.load_refresh_token(client, token)
            # RFC 7009 section 2.2: an unknown token, or another client's, is answered 200 all the same.
            if found is not None and found.client_id == client.client_id:
                await self.revoke_token(found)
            return Response(status_code=200, headers={"Cache-Control": "no-store"})

        async def introspect(request: Request) -> Response:
            if not self._resource_server(request.headers.get("authorization", "")):
                return JSONResponse(
                    {"error": "invalid_client"}, 401, headers={"WWW-Authenticate": 'Basic realm="introspection"'}
                )
            form = await request.form()
            claims = self.verify(str(form.get("token", "")))
            if claims is None:
                return no_store({"active": False})
            return no_store({"active": True, "token_type": "Bearer", **claims})

        routes += [
            Route("/authorize", authorize, methods=["GET", "POST"]),
            Route("/token", token, methods=["POST"]),
            Route("/.well-known/oauth-authorization-server", metadata_endpoint, methods=["GET"]),
            Route("/.well-known/jwks.json", jwks_endpoint, methods=["GET"]),
            Route("/consent", consent_page, methods=["GET"]),
            Route("/consent", consent_submit, methods=["POST"]),
            Route("/introspect", introspect, methods=["POST"]),
            Route("/revoke", revoke, methods=["POST"]),
        ]
        return Starlette(routes=routes)

    def _resource_server(self, header: str) -> bool:
        if not header.lower().startswith("basic "):
            return False
        try:
            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return False
        return client_id == RESOURCE_SERVER_CLIENT_ID and hmac.compare_digest(
            secret.encode(), self.resource_server_secret.encode()
        )

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one forwarded HTTP request synchronously: {method, path, query, headers, body} in,
        {status, headers, body} out (bodies base64). The supervisor calls this from its loop."""
        if self._loop is None:
            # Our own loop, not asyncio.run: that would touch the supervisor's signal handlers.
            self._loop = asyncio.new_event_loop()
        self.sweep()
        return self._loop.run_until_complete(call_asgi(self.asgi(), request))

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None


def _client_authenticator_base() -> type:
    from mcp.server.auth.middleware.client_auth import ClientAuthenticator

    return ClientAuthenticator


class _ClientAuthenticator(_client_authenticator_base()):  # type: ignore[misc]
    """mcp's client authentication (none, client_secret_post/basic) plus private_key_jwt (RFC 7523 §2.2),
    which metadata-document clients such as ChatGPT's prefer."""

    def __init__(self, server: DevAuthServer) -> None:
        super().__init__(server)
        self._server = server

    async def authenticate_request(self, request: Any) -> Any:
        from mcp.server.auth.middleware.client_auth import AuthenticationError

        form = await request.form()
        client_id = str(form.get("client_id") or "")
        assertion_type = form.get("client_assertion_type")
        if assertion_type is None:
            client = await self._server.get_client(client_id) if client_id else None
            if client is not None and client.token_endpoint_auth_method == "private_key_jwt":
                raise AuthenticationError("this client authenticates with private_key_jwt: send a client_assertion")
            return await super().authenticate_request(request)
        if assertion_type != JWT_BEARER_ASSERTION:
            raise AuthenticationError(f"client_assertion_type must be {JWT_BEARER_ASSERTION}")
        assertion = str(form.get("client_assertion") or "")
        if not client_id:
            import jwt

            try:
                client_id = str(jwt.decode(assertion, options={"verify_signature": False}).get("iss", ""))
            except jwt.PyJWTError:
                raise AuthenticationError("client_assertion is not a JWT") from None
        client = await self._server.get_client(client_id)
        if client is None:
            raise AuthenticationError("Invalid client_id")
        if client.token_endpoint_auth_method != "private_key_jwt":
            raise AuthenticationError(f"this client authenticates with {client.token_endpoint_auth_method}")
        issuer = self._server.issuer
        try:
            await self._server._assertions.verify(client, assertion, [issuer + "/token", issuer, issuer + "/"])
        except ClientRefused as problem:
            raise AuthenticationError(str(problem)) from None
        return client


async def call_asgi(app: Callable[..., Any], request: dict[str, Any]) -> dict[str, Any]:
    """Run one HTTP request through an ASGI app, in memory."""
    body = base64.b64decode(request.get("body", ""))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request["method"],
        "scheme": "http",
        "path": request["path"],
        "raw_path": request["path"].encode(),
        "query_string": request.get("query", "").encode(),
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in request.get("headers", [])],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
    }
    sent = False
    response: dict[str, Any] = {"status": 500, "headers": [], "body": b""}

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            response["status"] = message["status"]
            response["headers"] = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])]
        elif message["type"] == "http.response.body":
            response["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return {**response, "body": base64.b64encode(response["body"]).decode()}


def _page(message: str) -> str:
    return _html("appsdk dev sign-in", f"<p>{html.escape(message)}</p>")


def _html(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content='width=device-width'>"
        f"<title>{html.escape(title)}</title><style>body{{font:16px system-ui,sans-serif;max-width:34rem;"
        "margin:3rem auto;padding:0 1rem;color-scheme:light dark}label{display:block;margin:.4rem 0}"
        "button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}code{font-size:.9em}</style></head>"
        f"<body>{body}</body></html>"
    )


def _consent_html(request: str, client: Any, pending: _Pending, server: DevAuthServer) -> str:
    name = (client.client_name if client is not None else None) or pending.client_id
    if is_metadata_document_url(pending.client_id) and name != pending.client_id:
        name = f"{name} (by its metadata document at {pending.client_id})"  # the name is the document's own claim
    scopes = list(pending.params.scopes or server.config.scopes)
    redirect = urlsplit(str(pending.params.redirect_uri))
    users = "".join(
        f"<label><input type=radio name=user value='{html.escape(user, quote=True)}'"
        f"{' checked' if index == 0 else ''}> {html.escape(user)}</label>"
        for index, user in enumerate(server.config.users)
    )
    body = (
        "<h1>Sign in (development)</h1>"
        f"<p><b>{html.escape(name)}</b> wants to use <code>{html.escape(server.resource)}</code> as a test user"
        f"{' with ' + html.escape(', '.join(scopes)) if scopes else ''}. "
        f"It will be sent back to <code>{html.escape(redirect.scheme + '://' + redirect.netloc)}</code>.</p>"
        f"<form method=post action=/consent><input type=hidden name=request value='{html.escape(request, quote=True)}'>"
        f"<fieldset><legend>Sign in as</legend>{users}</fieldset><p>"
        "<button name=action value=approve>Approve</button><button name=action value=deny>Deny</button></p></form>"
        "<p><small>appsdk dev's authorization server: no passwords, test users only, tokens live in memory.</small></p>"
    )
    return _html("appsdk dev sign-in", body)


def json_error(message: str) -> dict[str, Any]:
    body = json.dumps({"error": "server_error", "error_description": message}).encode()
    return {"status": 500, "headers": [("content-type", "application/json")], "body": base64.b64encode(body).decode()}
