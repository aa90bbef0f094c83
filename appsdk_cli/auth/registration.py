"""Who appsdk is to an authorization server, and how it proves it at the token endpoint.

In this order: `--client-id` (a client registered there beforehand, its secret in $APPSDK_CLIENT_SECRET if
it has one, or the https URL of a Client ID Metadata Document the user hosts), else dynamic client
registration (RFC 7591, `application_type: native`), else one line saying which of the two the user needs.

Not clients.py, which is the other side: who the development authorization server accepts as a client.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from appsdk_cli.auth.discovery import get_json
from appsdk_cli.auth.signin_errors import SignInError, oauth_error
from appsdk_cli.auth.tokens import CachedTokens
from appsdk_cli.netloc import reaches_127_0_0_1

CLIENT_SECRET_ENV = "APPSDK_CLIENT_SECRET"


class ClientCredentials:
    """appsdk's identity at one authorization server, and how it authenticates at the token endpoint."""

    def __init__(self, client_id: str, secret: str | None = None, method: str = "none") -> None:
        self.client_id = client_id
        self.secret = secret
        self.method = method

    @classmethod
    def of(cls, cached: CachedTokens) -> ClientCredentials:
        return cls(cached.client_id, cached.client_secret, cached.auth_method)

    def apply(self, form: dict[str, str]) -> dict[str, str]:
        """The token request's headers; the form gains client_id (and the secret, for client_secret_post).

        client_id goes in the form with client_secret_basic too (RFC 6749 §4.1.3 allows it): servers built
        on the MCP Python SDK read it from the form only and answer "Missing client_id" without it."""
        form["client_id"] = self.client_id
        if self.method == "client_secret_basic" and self.secret is not None:
            from urllib.parse import quote

            pair = f"{quote(self.client_id, safe='')}:{quote(self.secret, safe='')}"
            return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
        if self.method == "client_secret_post" and self.secret is not None:
            form["client_secret"] = self.secret
        return {}


def _secret_method(metadata: dict[str, Any]) -> str:
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    return "client_secret_basic" if "client_secret_basic" in supported else "client_secret_post"


def given_client(
    http: Any, client_id: str, metadata: dict[str, Any], issuer: str, notify: Callable[[str], None]
) -> tuple[ClientCredentials, str | None]:
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
            return ClientCredentials(client_id), None
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
        return ClientCredentials(client_id), loopback[0]
    secret = os.environ.get(CLIENT_SECRET_ENV) or None
    return ClientCredentials(client_id, secret, _secret_method(metadata) if secret else "none"), None


def register(http: Any, metadata: dict[str, Any], issuer: str, redirect_uri: str) -> ClientCredentials:
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
        raise SignInError(f"{issuer} refused to register appsdk: {oauth_error(registered)}")
    try:
        answer = registered.json()
        client_id = str(answer["client_id"])
    except (ValueError, KeyError, TypeError):
        raise SignInError(f"{issuer}'s registration answer has no client_id") from None
    secret = answer.get("client_secret")
    given = answer.get("token_endpoint_auth_method")
    if secret and given in (None, "none"):
        given = _secret_method(metadata)
    return ClientCredentials(client_id, str(secret) if secret else None, str(given or method))


def no_client_line(issuer: str, metadata: dict[str, Any]) -> str:
    if metadata.get("client_id_metadata_document_supported"):
        return (
            f"{issuer} offers no dynamic client registration: pass --client-id URL (a client metadata document you "
            "host, listing a loopback redirect URI) or --client-id ID (a client registered there)"
        )
    return (
        f"{issuer} offers neither dynamic client registration nor client metadata documents: register a client "
        f"there with redirect URI http://127.0.0.1/callback and pass --client-id ID (a secret in ${CLIENT_SECRET_ENV})"
    )
