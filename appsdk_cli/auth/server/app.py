"""The development authorization server over HTTP: the provider with the Starlette app mcp's OAuth handlers
make (plus ours for metadata, JWKS, consent, token, authorize, revocation and introspection), the client
authentication those share (private_key_jwt included), and the in-memory request and response a worker
forwards to it from the supervisor."""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from appsdk_cli.auth.clients import JWT_BEARER_ASSERTION, ClientRefused, is_metadata_document_url
from appsdk_cli.auth.server.config import AuthConfig
from appsdk_cli.auth.server.consent import consent_html, page
from appsdk_cli.auth.server.provider import RESOURCE_SERVER_CLIENT_ID, DevAuthProvider

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
MAX_BODY = 64 * 1024


class DevAuthServer(DevAuthProvider):
    """The provider behind mcp's OAuth handlers, plus the app they make. Not thread-safe: one caller."""

    def __init__(
        self, config: AuthConfig, origin: str, mcp_path: str = "/mcp", clock: Callable[[], float] = time.time
    ) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._app: Any = None
        super().__init__(config, origin, mcp_path, clock)

    def set_origin(self, origin: str) -> None:
        """Serve as `origin` from now on (the tunnel's, once it opens). Issued grants are kept."""
        super().set_origin(origin)
        self._app = None

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
                return HTMLResponse(page("This sign-in request has expired; start again from the app."), 400)
            client = await self.get_client(pending.client_id)
            return HTMLResponse(consent_html(request.query_params["request"], client, pending, self))

        async def consent_submit(request: Request) -> Response:
            from mcp.server.auth.provider import construct_redirect_uri

            form = await request.form()
            key = str(form.get("request", ""))
            pending = self._state.pending.pop(key, None)  # one answer per request
            if pending is None or pending.expires_at < time.time():
                return HTMLResponse(page("This sign-in request has expired; start again from the app."), 400)
            params = pending.params
            if form.get("action") != "approve":
                denied = construct_redirect_uri(
                    str(params.redirect_uri), error="access_denied", state=params.state, iss=self.issuer
                )
                return RedirectResponse(denied, 302)
            user = str(form.get("user", ""))
            if user not in self.config.users:
                return HTMLResponse(page("Pick one of the test users."), 400)
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
        return never_framed(Starlette(routes=routes))

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


# On every answer, pages and errors alike: a page of this server inside another site's frame is one click
# from granting a token (clickjacking), and none of its pages runs a script or loads anything but its style.
NEVER_FRAMED = (
    (
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
    ),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
)


def never_framed(app: Callable[..., Any]) -> Callable[..., Any]:
    """`app`, its every response carrying NEVER_FRAMED (in place of any value the handler set)."""
    names = {name.encode() for name, _ in NEVER_FRAMED}
    added = [(name.encode(), value.encode()) for name, value in NEVER_FRAMED]

    async def guarded(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        async def send_guarded(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": kept + added}
            await send(message)

        await app(scope, receive, send_guarded if scope["type"] == "http" else send)

    return guarded


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


def json_error(message: str) -> dict[str, Any]:
    body = json.dumps({"error": "server_error", "error_description": message}).encode()
    headers = [("content-type", "application/json"), *NEVER_FRAMED]
    return {"status": 500, "headers": headers, "body": base64.b64encode(body).decode()}
