"""Sign-in for {{app_name}}: this server is an OAuth 2.1 resource server, and this module checks its tokens.

ChatGPT finds the authorization server through this server's Protected Resource Metadata
(/.well-known/oauth-protected-resource/mcp, served by mcp), signs the user in there, and then sends
every request with `Authorization: Bearer <access token>`. A token is accepted only when it is a JWT
signed by a key in the issuer's JWKS, issued by OAUTH_ISSUER, for this server (its `aud` is
OAUTH_AUDIENCE, by default OAUTH_RESOURCE), and not expired. When OAUTH_INTROSPECTION_URL is set the
authorization server is also asked (RFC 7662) whether the token is still active, so a revoked token
stops working at once instead of when it expires.

Configuration (environment variables; `appsdk dev` sets them for its development sign-in server):

    OAUTH_ISSUER              the authorization server's issuer URL, e.g. https://your-tenant.us.auth0.com/
    OAUTH_RESOURCE            this server's public MCP URL, e.g. https://books.example.com/mcp
    OAUTH_AUDIENCE            the `aud` your provider puts in access tokens (default: OAUTH_RESOURCE)
    OAUTH_JWKS_URL            where the signing keys are (default: the issuer's metadata `jwks_uri`)
    OAUTH_INTROSPECTION_URL   optional RFC 7662 endpoint, with OAUTH_CLIENT_ID / OAUTH_CLIENT_SECRET
"""

from __future__ import annotations

import base64
import json
import os
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

import anyio
import jwt  # PyJWT, installed with mcp
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.types import CallToolResult, TextContent

READ = "books:read"  # every request needs it (AuthSettings.required_scopes)
WRITE = "books:write"  # only suggest-book needs it
SCOPES = [READ, WRITE]


@dataclass(frozen=True)
class OAuthSettings:
    issuer: str
    resource: str
    audience: str
    jwks_url: str | None
    introspection_url: str | None
    client_id: str | None
    client_secret: str | None

    @classmethod
    def from_environment(cls, port: int) -> OAuthSettings:
        # The defaults match `appsdk dev` on its default port, so the app imports without any configuration.
        resource = os.environ.get("OAUTH_RESOURCE", f"http://127.0.0.1:{port}/mcp")
        return cls(
            issuer=os.environ.get("OAUTH_ISSUER", f"http://127.0.0.1:{port}"),
            resource=resource,
            audience=os.environ.get("OAUTH_AUDIENCE", resource),
            jwks_url=os.environ.get("OAUTH_JWKS_URL"),
            introspection_url=os.environ.get("OAUTH_INTROSPECTION_URL"),
            client_id=os.environ.get("OAUTH_CLIENT_ID"),
            client_secret=os.environ.get("OAUTH_CLIENT_SECRET"),
        )

    @property
    def resource_metadata_url(self) -> str:
        return str(build_resource_metadata_url(self.resource))  # type: ignore[arg-type]


class JwtVerifier:
    """mcp's TokenVerifier: returns the token's details, or None (mcp then answers 401 with a challenge)."""

    def __init__(self, settings: OAuthSettings) -> None:
        self.settings = settings
        self._keys: jwt.PyJWKClient | None = None

    async def verify_token(self, token: str) -> AccessToken | None:
        # PyJWKClient and urllib block; a thread keeps the server answering meanwhile.
        return await anyio.to_thread.run_sync(self._verify, token)

    def _verify(self, token: str) -> AccessToken | None:
        try:
            key = self._jwks().get_signing_key_from_jwt(token).key
            claims = jwt.decode(
                token,
                key,
                algorithms=["RS256", "ES256"],
                issuer=self.settings.issuer,
                audience=self.settings.audience,
                options={"require": ["exp", "sub", "iss", "aud"]},
            )
        except (jwt.PyJWTError, OSError):
            return None
        if self.settings.introspection_url and not self._active(token):
            return None
        scopes = claims.get("scope", claims.get("scp", ""))
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id", claims.get("azp", ""))),
            scopes=scopes.split() if isinstance(scopes, str) else list(scopes),
            expires_at=int(claims["exp"]),
            resource=self.settings.resource,
            subject=str(claims["sub"]),
            claims=claims,
        )

    def _jwks(self) -> jwt.PyJWKClient:
        if self._keys is None:
            self._keys = jwt.PyJWKClient(self.settings.jwks_url or self._discover_jwks_url(), cache_keys=True)
        return self._keys

    def _discover_jwks_url(self) -> str:
        issuer = self.settings.issuer.rstrip("/")
        for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            try:
                with urllib.request.urlopen(issuer + path, timeout=10) as response:
                    return str(json.load(response)["jwks_uri"])
            except (OSError, ValueError, KeyError):
                continue
        raise OSError(f"no jwks_uri in {issuer}'s metadata; set OAUTH_JWKS_URL")

    def _active(self, token: str) -> bool:
        """RFC 7662: ask the authorization server whether the token is still live (not revoked)."""
        request = urllib.request.Request(
            str(self.settings.introspection_url),
            data=urllib.parse.urlencode({"token": token, "token_type_hint": "access_token"}).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        )
        if self.settings.client_id:
            credentials = f"{self.settings.client_id}:{self.settings.client_secret or ''}".encode()
            request.add_header("Authorization", "Basic " + base64.b64encode(credentials).decode())
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.load(response).get("active") is True
        except (OSError, ValueError):
            return False


def security_schemes(*scopes: str) -> list[dict[str, Any]]:
    """What a tool declares in `_meta.securitySchemes`: it needs a signed-in user with these scopes."""
    return [{"type": "oauth2", "scopes": list(scopes)}]


def current_user() -> AccessToken | None:
    """The verified token of the request being handled (None over stdio or in-memory tests)."""
    return get_access_token()


def missing_scope(settings: OAuthSettings, scope: str) -> CallToolResult | None:
    """None when the token has `scope`; else the error result that asks ChatGPT to link the account again.

    `_meta["mcp/www_authenticate"]` carries the same challenge an HTTP 401 would: ChatGPT reads it and
    runs the sign-in again for the missing scope.
    """
    token = current_user()
    if token is not None and scope in token.scopes:
        return None
    challenge = (
        f'Bearer resource_metadata="{settings.resource_metadata_url}", error="insufficient_scope", '
        f'scope="{" ".join(SCOPES)}", error_description="this needs the {scope} permission"'
    )
    return CallToolResult(
        content=[TextContent(type="text", text=f"Sign in again and allow {scope} to do this.")],
        is_error=True,
        meta={"mcp/www_authenticate": [challenge]},
    )
