"""The development authorization server `appsdk dev` runs for an app that declares auth.

It is an OAuth 2.1 authorization server for one resource, the app's `/mcp` URL, on the app's own origin
(so one tunnel serves both): RFC 8414 metadata, dynamic client registration (RFC 7591, public clients
included), the authorization-code grant with PKCE S256 only, a consent page where the developer picks a
test user (no passwords), refresh tokens (rotated), revocation (RFC 7009) and introspection (RFC 7662).
The protocol handlers are mcp's own (`mcp.server.auth`); this package is the provider behind them, the
consent page, the signing key and the few endpoints mcp does not have (JWKS, introspection).

Access tokens are JWTs (RS256) with `iss` (this origin), `aud` (the resource: the public `/mcp` URL when
tunnelled), `sub` (the test user), `scope`, `client_id`, `exp` and `jti`, so the app verifies them the way
it verifies a real identity provider's tokens: against the issuer's JWKS. Revocation is seen at once only
by a resource server that introspects; the scaffolded app does when `OAUTH_INTROSPECTION_URL` is set,
which `appsdk dev` sets.

Where it runs: in the `appsdk dev` supervisor, the one process that lives for the whole session, so
clients, grants and the key survive every reload; workers forward the authorization server's paths to
it over their pipe (see devserver/asgi.AuthForwarder). Its state lives in memory only and dies with the session.

One module per concept: `config` (what `[tool.appsdk.auth]` asks for, and where the server may run),
`provider` (clients, codes, tokens and grants), `consent` (the pages a person sees) and `app` (the HTTP
app over the provider, its client authentication and the requests a worker forwards).
"""

from appsdk_cli.auth.server.app import AUTH_PATHS, MAX_BODY, DevAuthServer, call_asgi, json_error, never_framed
from appsdk_cli.auth.server.config import DEFAULT_USERS, AuthConfig, auth_config, refuse_exposed
from appsdk_cli.auth.server.provider import (
    CLIENT_IDLE_SECONDS,
    CODE_SECONDS,
    MAX_CLIENTS,
    MAX_PENDING,
    PENDING_SECONDS,
    RESOURCE_SERVER_CLIENT_ID,
    same_resource,
)

__all__ = [
    "AUTH_PATHS",
    "CLIENT_IDLE_SECONDS",
    "CODE_SECONDS",
    "DEFAULT_USERS",
    "MAX_BODY",
    "MAX_CLIENTS",
    "MAX_PENDING",
    "PENDING_SECONDS",
    "RESOURCE_SERVER_CLIENT_ID",
    "AuthConfig",
    "DevAuthServer",
    "auth_config",
    "call_asgi",
    "json_error",
    "never_framed",
    "refuse_exposed",
    "same_resource",
]
