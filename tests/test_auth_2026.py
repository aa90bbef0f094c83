"""Sign-in as ChatGPT and Codex do it in 2026, and the holes a hostile server could use, black-box.

The client: `appsdk call` against hostile fake servers on loopback (a PRM claiming another resource,
AS metadata naming another issuer, an authorization response from the wrong issuer or without the `iss`
its AS promised), and a CIMD sign-in end to end with the document served on loopback.
The development authorization server (`appsdk dev`): RFC 9207 `iss` on errors too, CIMD with `none` and
`private_key_jwt`, ChatGPT's callbacks, the redirect-URI schemes it refuses, a reused refresh token ending
the grant, and its state staying bounded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest
from conftest import INTEROP, appsdk, free_port, stop
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from test_auth import CALLBACK, Flow, auth_project, pkce
from test_dev import DevServer, start_dev

from appsdk_cli.auth.server import AuthConfig, DevAuthServer

BROWSER = f"{sys.executable} {INTEROP / 'scripted_browser.py'} %s"


# --- a loopback HTTP server whose every answer the test decides ------------------------------------------


class Loopback:
    """A real HTTP server on 127.0.0.1 (in a thread): `routes` maps "GET /path" to a function of the
    request giving (status, headers, body); every request is logged. `port`: a given one (0: any free one)."""

    def __init__(self, port: int = 0) -> None:
        self.routes: dict[str, Any] = {}
        self.log: list[str] = []
        self.headers: list[dict[str, str]] = []  # each request's, in the order of `log`
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                path = urlsplit(self.path).path
                owner.log.append(f"{method} {path}")
                owner.headers.append({name.lower(): value for name, value in self.headers.items()})
                route = owner.routes.get(f"{method} {path}")
                status, headers, payload = route(self, body) if route else (404, {}, b"not here")
                if isinstance(payload, dict | list):
                    payload = json.dumps(payload).encode()
                    headers = {"Content-Type": "application/json", **headers}
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.origin = f"http://127.0.0.1:{self._server.server_port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    server = Loopback()
    yield server
    server.close()


def fake_authorization_server(server: Loopback, *, issuer: str | None = None, iss: str | bool | None = True) -> None:
    """An AS that approves at once (a 302 straight back), at `server`; `issuer` is what its metadata says,
    `iss` what its authorization responses carry (True: the real issuer, None: nothing)."""
    real = server.origin

    def metadata(request: Any, body: bytes) -> tuple[int, dict, Any]:
        return (
            200,
            {},
            {
                "issuer": issuer or real,
                "authorization_endpoint": real + "/authorize",
                "token_endpoint": real + "/token",
                "registration_endpoint": real + "/register",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True,
            },
        )

    def authorize(request: Any, body: bytes) -> tuple[int, dict, Any]:
        query = {k: v[0] for k, v in parse_qs(urlsplit(request.path).query).items()}
        answer = {"code": "c-1", "state": query["state"]}
        if iss is True:
            answer["iss"] = real
        elif iss:
            answer["iss"] = iss
        return 302, {"Location": f"{query['redirect_uri']}?{urlencode(answer)}"}, b""

    server.routes.update(
        {
            "GET /.well-known/oauth-authorization-server": metadata,
            "POST /register": lambda r, b: (201, {}, {"client_id": "fake-client", **json.loads(b)}),
            "GET /authorize": authorize,
            "POST /token": lambda r, b: (200, {}, {"access_token": "stolen", "token_type": "Bearer"}),
        }
    )


def fake_protected_server(server: Loopback, prm: dict[str, Any]) -> str:
    """An MCP endpoint at `server` that answers 401 and names `prm` as its resource metadata."""
    url = server.origin + "/mcp"
    metadata_url = server.origin + "/.well-known/oauth-protected-resource/mcp"
    challenge = {"WWW-Authenticate": f'Bearer resource_metadata="{metadata_url}"'}
    server.routes["POST /mcp"] = lambda r, b: (401, challenge, {"error": "invalid_token"})
    server.routes["GET /.well-known/oauth-protected-resource/mcp"] = lambda r, b: (200, {}, prm)
    return url


def call_env(tmp_path: Path, log: Path | None = None) -> dict[str, str]:
    env = {"APPSDK_HOME": str(tmp_path / "home"), "APPSDK_URL": "", "BROWSER": BROWSER}
    if log is not None:
        env["SCRIPTED_BROWSER_LOG"] = str(log)
    return env


# --- the client refuses what a hostile server claims (issue 13, item 1) ------------------------------------


def test_a_resource_metadata_claiming_another_server_is_refused(loopback: Loopback, tmp_path: Path):
    """Server A says it is B (and names B's AS): no sign-in may start, nothing may reach B's AS."""
    victim = Loopback()
    try:
        fake_authorization_server(victim)
        url = fake_protected_server(
            loopback, {"resource": victim.origin + "/mcp", "authorization_servers": [victim.origin]}
        )
        log = tmp_path / "browser.log"
        result = appsdk("call", "anything", "--url", url, env=call_env(tmp_path, log))
        assert result.returncode == 1
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("error: refusing to sign in:") and "RFC 9728" in line
        assert f"it says it is {victim.origin}/mcp" in line
        assert victim.log == [] and not log.exists()
        assert not (tmp_path / "home" / "tokens").exists()
    finally:
        victim.close()


def test_authorization_server_metadata_naming_another_issuer_is_refused(loopback: Loopback, tmp_path: Path):
    fake_authorization_server(loopback, issuer="https://accounts.example.com")
    url = fake_protected_server(
        loopback, {"resource": loopback.origin + "/mcp", "authorization_servers": [loopback.origin]}
    )
    result = appsdk("call", "anything", "--url", url, env=call_env(tmp_path))
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert "says issuer 'https://accounts.example.com'" in line and "RFC 8414" in line
    assert "POST /register" not in loopback.log and "GET /authorize" not in loopback.log


@pytest.mark.parametrize(
    ("iss", "expected"),
    [("https://evil.example", "came back from https://evil.example"), (None, "came back without iss")],
)
def test_an_authorization_response_from_the_wrong_issuer_is_refused(
    loopback: Loopback, tmp_path: Path, iss: str | None, expected: str
):
    """RFC 9207: the AS promises `iss`; a response without it, or from another issuer, is a mix-up."""
    fake_authorization_server(loopback, iss=iss)
    url = fake_protected_server(
        loopback, {"resource": loopback.origin + "/mcp", "authorization_servers": [loopback.origin]}
    )
    result = appsdk("call", "anything", "--url", url, env=call_env(tmp_path, tmp_path / "browser.log"))
    assert result.returncode == 1
    assert expected in result.stderr and "Traceback" not in result.stderr
    assert "POST /token" not in loopback.log  # the code is never redeemed


def test_no_registration_and_no_client_id_says_which_to_use(loopback: Loopback, tmp_path: Path):
    fake_authorization_server(loopback)
    metadata = loopback.routes["GET /.well-known/oauth-authorization-server"]

    def without_registration(request: Any, body: bytes) -> tuple[int, dict, Any]:
        status, headers, value = metadata(request, body)
        del value["registration_endpoint"]
        return status, headers, {**value, "client_id_metadata_document_supported": True}

    loopback.routes["GET /.well-known/oauth-authorization-server"] = without_registration
    url = fake_protected_server(
        loopback, {"resource": loopback.origin + "/mcp", "authorization_servers": [loopback.origin]}
    )
    result = appsdk("call", "anything", "--url", url, env=call_env(tmp_path))
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert "offers no dynamic client registration" in line
    assert "--client-id URL" in line and "--client-id ID" in line


# --- the development authorization server ----------------------------------------------------------------


@pytest.fixture(scope="module")
def dev(tmp_path_factory) -> Iterator[DevServer]:
    server = start_dev(auth_project(tmp_path_factory.mktemp("auth2026")), "--auth-user", "ada")
    yield server
    stop(server.process)


@pytest.fixture
def flow(dev: DevServer) -> Flow:
    flow = Flow(dev.url)
    flow.discover()
    assert flow.register().status_code == 201
    return flow


def test_metadata_says_cimd_rfc9207_private_key_jwt_and_auto_approve(flow: Flow, tmp_path: Path):
    metadata = flow.metadata
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["client_id_metadata_document_supported"] is True
    assert "private_key_jwt" in metadata["token_endpoint_auth_methods_supported"]
    assert "RS256" in metadata["token_endpoint_auth_signing_alg_values_supported"]
    assert metadata["appsdk_auto_approve"] is True  # --auth-user ada
    consent = start_dev(auth_project(tmp_path))
    try:
        origin = consent.url.removesuffix("/mcp")
        without = httpx.get(origin + "/.well-known/oauth-authorization-server").json()
        assert "appsdk_auto_approve" not in without
    finally:
        stop(consent.process)


def test_error_responses_carry_iss_too(flow: Flow):
    """RFC 9207 §2: an error redirect names the issuer as well (mcp's handler leaves it out)."""
    _, challenge = pkce()
    for overrides in ({"scope": "books:delete"}, {"resource": "https://elsewhere.example/mcp"}):
        response = flow.authorize(challenge, **overrides)
        assert response.status_code == 302, response.text
        query = parse_qs(urlsplit(response.headers["location"]).query)
        assert "error" in query and query["iss"] == [flow.metadata["issuer"]] and query["state"] == ["st-1"]


def test_registration_refuses_redirect_uris_that_are_not_an_apps(flow: Flow):
    for uri in ("javascript:alert(document.domain)//", "data:text/html,<script>x</script>", "file:///etc/passwd"):
        refused = flow.register([uri])
        assert refused.status_code == 400, uri
        assert refused.json()["error"] == "invalid_redirect_uri"
    assert flow.register(["http://evil.example/callback"]).status_code == 400
    for uri in (
        "com.example.app:/oauth/callback",  # RFC 8252 private-use scheme
        "http://127.0.0.1:4567/callback",
        "https://chatgpt.com/connector_platform_oauth_redirect",
        "https://chatgpt.com/connector/oauth/abc123",
    ):
        assert flow.register([uri]).status_code == 201, uri


def test_registration_records_application_type(flow: Flow):
    for kind in ("native", "web"):
        body = {"client_name": "t", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
        answer = flow.http.post(flow.metadata["registration_endpoint"], json={**body, "application_type": kind})
        assert answer.status_code == 201 and answer.json()["application_type"] == kind


def test_a_reused_refresh_token_is_refused_and_ends_the_grant(flow: Flow):
    """OAuth 2.1 §4.3.1: once R1 was rotated to R2, R1 again means it leaked: both stop working."""
    first = flow.sign_in()
    rotated = flow.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert rotated.status_code == 200
    second = rotated.json()
    assert flow.call("whoami", {}, second["access_token"]).status_code == 200

    replay = flow.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    # The grant is gone: the rotated refresh token and the access token it brought no longer work.
    assert flow.token(grant_type="refresh_token", refresh_token=second["refresh_token"]).status_code == 400
    assert flow.call("whoami", {}, second["access_token"]).status_code == 401


# --- Client ID Metadata Documents ----------------------------------------------------------------------------


def serve_document(server: Loopback, document: dict[str, Any], cache_control: str = "max-age=60") -> str:
    url = server.origin + "/client.json"
    server.routes["GET /client.json"] = lambda r, b: (200, {"Cache-Control": cache_control}, document)
    return url


def test_cimd_sign_in_end_to_end_with_appsdk_call(dev: DevServer, loopback: Loopback, tmp_path: Path):
    """The user hosts a client metadata document (here on loopback) and passes its URL as --client-id:
    the dev AS fetches it, appsdk listens on the redirect URI it lists, no registration happens."""
    callback = f"http://127.0.0.1:{free_port()}/oauth/done"
    client_id = loopback.origin + "/client.json"
    serve_document(
        loopback,
        {
            "client_id": client_id,
            "client_name": "My CLI",
            "redirect_uris": [callback],
            "token_endpoint_auth_method": "none",
        },
    )
    env = call_env(tmp_path)
    result = appsdk("call", "whoami", "--url", dev.url, "--client-id", client_id, "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert '"subject": "ada"' in result.stdout
    (cache,) = (tmp_path / "home" / "tokens").iterdir()
    (grant,) = json.loads(cache.read_text())["grants"].values()
    assert grant["client_id"] == client_id
    # The AS fetched the document (and kept it: max-age=60); appsdk read it too, for its redirect URI.
    assert loopback.log.count("GET /client.json") == 2


def test_cimd_documents_are_validated_and_cached_by_their_headers(flow: Flow, loopback: Loopback):
    client_id = loopback.origin + "/client.json"
    document = {"client_id": client_id, "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
    serve_document(loopback, document, cache_control="no-store")
    flow.client_id = client_id
    verifier, challenge = pkce()
    code = flow.code(challenge)  # auto-approved, with iss (checked by Flow.code)
    assert flow.exchange(code, verifier).status_code == 200
    fetched = loopback.log.count("GET /client.json")
    flow.code(challenge)
    assert loopback.log.count("GET /client.json") > fetched  # no-store: fetched again

    for bad, reason in (
        ({**document, "client_id": "https://other.example/client.json"}, "not its own URL"),
        ({**document, "redirect_uris": ["javascript:alert(1)"]}, "private-use scheme"),
        ({**document, "token_endpoint_auth_method": "client_secret_post"}, "no shared secret"),
        ({**document, "token_endpoint_auth_method": "private_key_jwt"}, "no jwks"),
    ):
        serve_document(loopback, bad, cache_control="no-store")
        refused = flow.authorize(challenge)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_client"
        assert reason in refused.json()["error_description"]

    serve_document(loopback, document, cache_control="no-store")
    unlisted = flow.authorize(challenge, redirect_uri="http://127.0.0.1:9/elsewhere")
    assert unlisted.status_code == 400 and "not registered" in unlisted.text


def test_cimd_private_key_jwt_client_like_chatgpt(flow: Flow, loopback: Loopback):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = {**RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k1", "alg": "RS256", "use": "sig"}
    client_id = loopback.origin + "/client.json"
    loopback.routes["GET /jwks.json"] = lambda r, b: (200, {}, {"keys": [jwk]})
    serve_document(
        loopback,
        {
            "client_id": client_id,
            "client_name": "ChatGPT-like",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "private_key_jwt",
            "jwks_uri": loopback.origin + "/jwks.json",
        },
    )
    flow.client_id = client_id
    token_endpoint = flow.metadata["token_endpoint"]

    def assertion(signer: Any = key, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": client_id, "sub": client_id, "aud": token_endpoint, "iat": now, "exp": now + 60}
        return jwt.encode({"jti": uuid.uuid4().hex, **body, **claims}, signer, algorithm="RS256", headers={"kid": "k1"})

    def exchange(client_assertion: str | None) -> httpx.Response:
        verifier, challenge = pkce()
        form = {"grant_type": "authorization_code", "code": flow.code(challenge), "redirect_uri": CALLBACK}
        form.update({"client_id": client_id, "code_verifier": verifier})
        if client_assertion is not None:
            form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            form["client_assertion"] = client_assertion
        return flow.http.post(token_endpoint, data=form)

    good = assertion()
    accepted = exchange(good)
    assert accepted.status_code == 200, accepted.text
    assert flow.call("whoami", {}, accepted.json()["access_token"]).status_code == 200

    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for refused, why in (
        (exchange(None), "private_key_jwt"),
        (exchange(good), "already used"),
        (exchange(assertion(other_key)), "does not verify"),
        (exchange(assertion(aud="https://elsewhere.example/token")), "aud"),
        (exchange(assertion(exp=int(time.time()) - 120)), "expired"),
    ):
        assert refused.status_code == 401, refused.text
        assert refused.json()["error"] == "invalid_client" and why in refused.json()["error_description"]


# --- in process: what only a clock can show ----------------------------------------------------------------


def _http(server: DevAuthServer, method: str, path: str, **body: Any) -> dict[str, Any]:
    query, payload, headers = "", b"", []
    if method == "GET":
        query = urlencode(body)
    elif "json" in body:
        payload, headers = json.dumps(body["json"]).encode(), [("content-type", "application/json")]
    else:
        payload, headers = urlencode(body).encode(), [("content-type", "application/x-www-form-urlencoded")]
    request = {"method": method, "path": path, "query": query, "headers": headers}
    reply = server.handle({**request, "body": base64.b64encode(payload).decode()})
    return {**reply, "body": base64.b64decode(reply["body"]), "headers": dict(reply["headers"])}


def test_chatgpt_callbacks_work_when_tunnelled():
    """Behind a tunnel the issuer is the public https origin; ChatGPT's stable and per-connector callbacks
    are accepted, and the redirect names that issuer."""
    server = DevAuthServer(AuthConfig(scopes=("books:read",), auto_user="ada"), "http://127.0.0.1:8000")
    server.set_origin("https://abc123.ngrok.app")
    try:
        for callback in (
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "https://chatgpt.com/connector/oauth/c1",
        ):
            registered = _http(
                server, "POST", "/register", json={"redirect_uris": [callback], "token_endpoint_auth_method": "none"}
            )
            assert registered["status"] == 201, registered["body"]
            client_id = json.loads(registered["body"])["client_id"]
            challenge = base64.urlsafe_b64encode(hashlib.sha256(b"v" * 50).digest()).decode().rstrip("=")
            query = {"response_type": "code", "client_id": client_id, "redirect_uri": callback, "state": "s"}
            query |= {"code_challenge": challenge, "code_challenge_method": "S256", "resource": server.resource}
            answer = _http(server, "GET", "/authorize", **query)
            assert answer["status"] == 302
            location = answer["headers"]["location"]
            assert location.startswith(callback + "?")
            assert parse_qs(urlsplit(location).query)["iss"] == ["https://abc123.ngrok.app"]
    finally:
        server.close()


def test_state_stays_bounded_and_dead_things_expire():
    """+4 kB per registration, forever, before: now registrations past the cap, and everything expired,
    are swept (a clock moved forward stands in for the hours)."""
    now = [time.time()]
    server = DevAuthServer(AuthConfig(auto_user="ada"), "http://127.0.0.1:8000", clock=lambda: now[0])
    try:
        from appsdk_cli.auth.server import MAX_CLIENTS

        for _ in range(MAX_CLIENTS + 150):
            body = {"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
            assert _http(server, "POST", "/register", json=body)["status"] == 201
        assert server.state_size <= MAX_CLIENTS

        # A real grant, then time passes beyond every lifetime: codes, tokens, clients all go.
        body = {"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
        client_id = json.loads(_http(server, "POST", "/register", json=body)["body"])["client_id"]
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "s"}
        query |= {"code_challenge": challenge, "code_challenge_method": "S256"}
        location = _http(server, "GET", "/authorize", **query)["headers"]["location"]
        code = parse_qs(urlsplit(location).query)["code"][0]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK}
        assert _http(server, "POST", "/token", client_id=client_id, code_verifier=verifier, **form)["status"] == 200
        assert server.state_size > 0
        now[0] += 2 * 86400 + 3600
        _http(server, "GET", "/.well-known/oauth-authorization-server")
        assert server.state_size == 0
    finally:
        server.close()


# --- checks ----------------------------------------------------------------------------------------------


def test_check_accepts_an_authorization_server_with_cimd_and_no_registration(loopback: Loopback, tmp_path: Path):
    fake_authorization_server(loopback)
    metadata = loopback.routes["GET /.well-known/oauth-authorization-server"]

    def cimd_only(request: Any, body: bytes) -> tuple[int, dict, Any]:
        status, headers, value = metadata(request, body)
        del value["registration_endpoint"]
        return status, headers, {**value, "client_id_metadata_document_supported": True}

    loopback.routes["GET /.well-known/oauth-authorization-server"] = cimd_only
    url = fake_protected_server(
        loopback, {"resource": loopback.origin + "/mcp", "authorization_servers": [loopback.origin]}
    )
    result = appsdk("check", "--url", url, "--json", env=call_env(tmp_path))
    rules = [f["rule"] for f in json.loads(result.stdout)["findings"]]
    assert rules == ["APPS706"], result.stdout  # not APPS705, not APPS707 (it sends iss)
    assert result.returncode == 0

    loopback.routes["GET /.well-known/oauth-authorization-server"] = lambda r, b: (
        200,
        {},
        {k: v for k, v in cimd_only(r, b)[2].items() if k != "client_id_metadata_document_supported"},
    )
    lacking = appsdk("check", "--url", url, "--json", env=call_env(tmp_path))
    (finding,) = [f for f in json.loads(lacking.stdout)["findings"] if f["rule"] == "APPS705"]
    assert "client ID metadata documents" in finding["message"] and lacking.returncode == 1


def test_a_tool_that_only_needs_sign_in_is_not_told_to_succeed_with_no_arguments():
    from appsdk_cli.checks import run_rules
    from appsdk_cli.snapshot import Snapshot

    tools = [
        {"name": name, "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
        for name in ("shelf", "orders", "broken")
    ]
    challenge = 'Bearer error="insufficient_scope", scope="orders:read"'
    snapshot = Snapshot(
        mode="live",
        server="test",
        tools=tools,
        call_errors={"shelf": "test wants you to sign in: HTTP 401", "broken": "test answered HTTP 500"},
        sign_in_calls={"shelf": "books:read"},
        calls={
            "orders": {
                "isError": True,
                "content": [{"type": "text", "text": "needs orders:read"}],
                "_meta": {"mcp/www_authenticate": [challenge]},
            }
        },
    )
    findings = {f.target.split()[-1]: f for f in run_rules(snapshot).findings if f.rule.id == "APPS404"}
    assert "needs a sign-in with scope books:read" in findings["shelf"].message
    assert "needs a sign-in with scope orders:read" in findings["orders"].message
    for name in ("shelf", "orders"):
        assert "no arguments" not in findings[name].hint and "--token" in findings[name].hint
    assert "succeed with no arguments" in findings["broken"].hint


@pytest.mark.browser  # its --screenshot drives Chromium
def test_preview_signs_in_as_call_does_and_takes_token(dev: DevServer, tmp_path: Path):
    env = call_env(tmp_path, tmp_path / "browser.log")
    shot = tmp_path / "shot.png"
    result = appsdk("preview", "list-books", "--url", dev.url, "--screenshot", str(shot), env=env)
    assert result.returncode == 0, result.stderr
    assert "approves without a browser" in result.stderr and shot.stat().st_size > 1000
    assert not (tmp_path / "browser.log").exists()
    refused = appsdk(
        "preview", "list-books", "--url", dev.url, "--token", "not-a-token", "--screenshot", str(shot), env=env
    )
    assert refused.returncode == 1 and "refused the token" in refused.stderr
    assert "not-a-token" not in refused.stderr


def test_a_tunnelled_server_fetches_no_loopback_documents(loopback: Loopback):
    """Behind a tunnel anyone can name a client_id: an http://127.0.0.1 one would make the server probe
    local ports for them, so it is refused (https only) and never fetched."""
    client_id = serve_document(loopback, {"client_id": loopback.origin + "/client.json", "redirect_uris": [CALLBACK]})
    server = DevAuthServer(AuthConfig(auto_user="ada"), "http://127.0.0.1:8000")
    server.set_origin("https://abc123.ngrok.app")
    try:
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "s"}
        query |= {"code_challenge": "x" * 43, "code_challenge_method": "S256"}
        answer = _http(server, "GET", "/authorize", **query)
        assert answer["status"] == 400 and b"https only" in answer["body"]
        assert loopback.log == []
    finally:
        server.close()


def test_a_server_that_refuses_every_token_gets_one_sign_in_not_a_loop(loopback: Loopback, tmp_path: Path):
    fake_authorization_server(loopback)
    url = fake_protected_server(
        loopback, {"resource": loopback.origin + "/mcp", "authorization_servers": [loopback.origin]}
    )
    log = tmp_path / "browser.log"
    result = appsdk("tools", "--url", url, env=call_env(tmp_path, log))
    assert result.returncode == 1
    assert result.stderr.count("signing in to") == 1 and len(log.read_text().splitlines()) == 1
    assert result.stderr.strip().splitlines()[-1].startswith("error:") and "refused the token" in result.stderr
    assert loopback.log.count("POST /token") == 1
