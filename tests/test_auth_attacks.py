"""Issue 25 items 5, 9, 10 and 13, each tried as the attacker would, each with the honest use beside it.

5. A hostile server takes the loopback port of a server the user signed in to: it must get no cached
   token (nor the refresh token, at its /token), and the user one line; the real server still gets it.
9. A hostile page frames the dev authorization server's consent page: no page of it may be framed.
10. `/authorize?client_id=<any URL>` (an <img> on any site): the dev AS fetches only plausible client
    documents, bounded in time and rate, and quotes nothing it fetched; a proper CIMD client still signs in.
13. A `private_key_jwt` assertion valid for ten years is refused; a short one is still accepted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
from conftest import appsdk, free_port, stop
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from test_auth import CALLBACK, Flow, auth_project, pkce
from test_auth_2026 import Loopback, _http, call_env, fake_protected_server, serve_document
from test_dev import start_dev

from appsdk_cli.auth.clients import MAX_FETCHES
from appsdk_cli.auth.server import AUTH_PATHS, AuthConfig, DevAuthServer

WITHHELD = "is not the one you signed in to"
NO_STORE = {"Cache-Control": "no-store"}


# --- 5: a cached sign-in goes only to the server it was made with --------------------------------------------


def test_a_server_that_takes_the_port_gets_no_cached_sign_in(tmp_path: Path):
    """The user signs in to `appsdk dev` on a port; it stops, and another process takes the port. Each
    attempt is made twice: with the access token run out (31 s tokens count as run out at once, so the
    refresh token would go to <origin>/token, which the newcomer answers too), and with it still fresh
    (it would go straight to the newcomer's /mcp). Logging out then must not revoke there either."""
    port = free_port()
    project = auth_project(tmp_path, access_token_seconds=31)
    env = call_env(tmp_path)
    dev = start_dev(project, "--auth-user", "ada", port=port)
    try:
        assert appsdk("call", "whoami", "--url", dev.url, env=env).returncode == 0
        # Honest: the cached sign-in (refreshed) goes to the server it was made with, with no word said.
        again = appsdk("call", "whoami", "--url", dev.url, "--json", env=env)
        assert again.returncode == 0, again.stderr
        assert '"subject": "ada"' in again.stdout
        assert "signing in" not in again.stderr and WITHHELD not in again.stderr
    finally:
        stop(dev.process)
    (cache,) = (tmp_path / "home" / "tokens").iterdir()
    (grant,) = json.loads(cache.read_text())["grants"].values()
    held = [grant["access_token"], grant["refresh_token"]]

    hostile = Loopback(port)
    try:
        url = hostile.origin + "/mcp"
        assert url == dev.url
        attempts = {
            # It claims nothing: it only asks for a token.
            "asks": lambda: hostile.routes.update(
                {"POST /mcp": lambda r, b: (401, {"WWW-Authenticate": "Bearer"}, {"error": "invalid_token"})}
            ),
            # It publishes resource metadata for this URL, naming its own authorization server.
            "claims": lambda: fake_protected_server(
                hostile, {"resource": url, "authorization_servers": ["http://127.0.0.1:9"]}
            ),
        }
        for age, (attack, arrange) in [(age, attack) for age in ("run out", "fresh") for attack in attempts.items()]:
            name = f"{attack}, token {age}"
            hostile.routes.clear()
            arrange()
            if age == "fresh":
                cached = json.loads(cache.read_text())
                for tokens in cached["grants"].values():
                    tokens["expires_at"] = time.time() + 3600
                cache.write_text(json.dumps(cached))
            result = appsdk("call", "whoami", "--url", url, env=env)
            # Neither the access token nor, at its /token, the refresh token reached it.
            assert not [h for h in hostile.headers if "authorization" in h], (name, hostile.log)
            assert "POST /token" not in hostile.log, name
            sent = json.dumps(hostile.headers)
            assert not [secret for secret in held if secret in sent], name
            # The user is told why, in one line, and how to forget the sign-in; no token is shown.
            assert result.returncode == 1, (name, result.stdout, result.stderr)
            assert result.stderr.count(WITHHELD) == 1, (name, result.stderr)
            assert f"appsdk auth logout --url {url}" in result.stderr
            assert "Traceback" not in result.stderr
            for secret in held:
                assert secret not in result.stdout + result.stderr
        # The user takes the line's advice while the newcomer holds the port: the grant is forgotten, and
        # the revocation, which would carry the refresh token to <origin>/revoke, is not sent.
        hostile.routes["POST /revoke"] = lambda r, b: (200, {}, b"")
        out = appsdk("auth", "logout", "--url", url, "--json", env=env)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["loggedOut"][0]["revoked"] is False
        assert "POST /revoke" not in hostile.log and not list((tmp_path / "home" / "tokens").iterdir())
    finally:
        hostile.close()

    # The real server back on its port (a new session: the old grant is dead there): sign-in still works.
    dev.stdout_path.parent.rename(dev.stdout_path.parent.with_name("first-session"))
    dev = start_dev(project, "--auth-user", "ada", port=port)
    try:
        back = appsdk("call", "whoami", "--url", dev.url, "--json", env=env)
        assert back.returncode == 0, back.stderr
        assert '"subject": "ada"' in back.stdout and WITHHELD not in back.stderr
    finally:
        stop(dev.process)


# --- 9: no page of the dev authorization server can be framed ----------------------------------------------


def _assert_never_framed(headers: dict[str, str], where: str) -> None:
    lowered = {k.lower(): v for k, v in headers.items()}
    assert lowered.get("x-frame-options") == "DENY", where
    assert "frame-ancestors 'none'" in lowered.get("content-security-policy", ""), where


def _consent_request(server: DevAuthServer) -> str:
    body = {"client_name": "test client", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
    client_id = json.loads(_http(server, "POST", "/register", json=body)["body"])["client_id"]
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "s"}
    query |= {"code_challenge": pkce()[1], "code_challenge_method": "S256"}
    answer = _http(server, "GET", "/authorize", **query)
    assert answer["status"] == 302 and answer["headers"]["location"].startswith("/consent?request=")
    return answer["headers"]["location"]


def test_every_answer_of_the_authorization_server_refuses_to_be_framed(tmp_path: Path):
    """Every path, both methods, pages and errors: in process, and through `appsdk dev`'s forwarding
    (where a foreign Host is refused before the authorization server sees it)."""
    server = DevAuthServer(AuthConfig(), "http://127.0.0.1:8000")
    try:
        consent = _consent_request(server)
        page = _http(server, "GET", consent.split("?")[0], request=consent.split("=", 1)[1])
        assert page["status"] == 200 and b"Approve" in page["body"]  # the honest page still shows
        _assert_never_framed(page["headers"], "the consent page")
        for path in AUTH_PATHS:
            for method in ("GET", "POST"):
                _assert_never_framed(_http(server, method, path)["headers"], f"{method} {path}")
    finally:
        server.close()

    dev = start_dev(auth_project(tmp_path))
    try:
        origin = dev.url.removesuffix("/mcp")
        with httpx.Client(timeout=30) as http:
            for path in AUTH_PATHS:
                for method in ("GET", "POST"):
                    answer = http.request(method, origin + path)
                    _assert_never_framed(dict(answer.headers), f"{method} {path} via appsdk dev")
            foreign = http.get(origin + "/consent", headers={"Host": "evil.example"})
            assert foreign.status_code >= 400
            _assert_never_framed(dict(foreign.headers), "a refused Host")
    finally:
        stop(dev.process)


# --- 10: /authorize makes the dev AS fetch only plausible client documents, and quote nothing ----------------


def _authorize(server: DevAuthServer, client_id: str) -> dict[str, Any]:
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "s"}
    query |= {"code_challenge": pkce()[1], "code_challenge_method": "S256"}
    return _http(server, "GET", "/authorize", **query)


class _Listener:
    """A TCP port that counts who connects (an https fetch to it would connect before failing)."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._socket.close()


def test_client_ids_make_the_authorization_server_fetch_nothing_implausible_nor_echo_it():
    recorder = Loopback()
    listener = _Listener()
    server = DevAuthServer(AuthConfig(auto_user="ada"), "http://127.0.0.1:8000")
    try:
        # Honest: a proper metadata-document client signs in.
        good = serve_document(recorder, {"client_id": recorder.origin + "/client.json", "redirect_uris": [CALLBACK]})
        signed_in = _authorize(server, good)
        assert signed_in["status"] == 302 and "code=" in signed_in["headers"]["location"]

        # Implausible client ids: refused without a fetch, or even a connection.
        for client_id in (
            recorder.origin + "/client.json?x=1",
            recorder.origin + "/a/../client.json",
            f"http://user:pw@127.0.0.1:{urlsplit(recorder.origin).port}/client.json",
            f"https://127.0.0.1:{listener.port}/client.json",
            f"https://localhost:{listener.port}/client.json",
            "https://10.0.0.1/client.json",
            "https://router.local/client.json",
        ):
            refused = _authorize(server, client_id)
            assert refused["status"] == 400, client_id
            assert json.loads(refused["body"])["error"] == "invalid_client", client_id
        assert recorder.log == ["GET /client.json"] and listener.connections == 0

        # What answers at a URL is never quoted back: not its status, nor a word of its body.
        answers: dict[str, tuple[int, Any]] = {
            "/status": (418, b"internal-secret-1"),
            "/text": (200, b"internal-secret-2 not json"),
            "/named": (200, {"client_id": "internal-secret-3", "redirect_uris": [CALLBACK]}),
            "/redirects": (200, {"redirect_uris": ["javascript:internal-secret-4"]}),
        }
        for path, (status, answer) in answers.items():
            client_id = recorder.origin + path
            body = {"client_id": client_id, **answer} if isinstance(answer, dict) else answer
            recorder.routes[f"GET {path}"] = lambda r, b, status=status, body=body: (status, NO_STORE, body)
            refused = _authorize(server, client_id)
            assert refused["status"] == 400 and json.loads(refused["body"])["error"] == "invalid_client"
            assert b"internal-secret" not in refused["body"] and b"418" not in refused["body"], path

        # A document that drips forever is given up within the fetch's one deadline.
        def drip(request: Any, body: bytes) -> tuple[int, dict, bytes]:
            request.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 999\r\n\r\n")
            for _ in range(12):
                request.wfile.write(b" ")
                request.wfile.flush()
                time.sleep(1)
            return 200, {}, b""

        recorder.routes["GET /drip"] = drip
        started = time.monotonic()
        slow = _authorize(server, recorder.origin + "/drip")
        assert slow["status"] == 400 and json.loads(slow["body"])["error"] == "invalid_client"
        assert time.monotonic() - started < 8

        # A flood of client ids (as many <img> tags as a page likes): the fetches are rate limited.
        before = len(recorder.log)
        for index in range(3 * MAX_FETCHES):
            _authorize(server, f"{recorder.origin}/flood-{index}.json")
        assert len(recorder.log) - before <= MAX_FETCHES
        # The proper client, whose document is kept as its headers allow, still signs in.
        again = _authorize(server, good)
        assert again["status"] == 302 and "code=" in again["headers"]["location"]
    finally:
        server.close()
        listener.close()
        recorder.close()


# --- 13: a client assertion lives minutes, not years ---------------------------------------------------------


def test_a_client_assertion_valid_for_ten_years_is_refused():
    recorder = Loopback()
    server = DevAuthServer(AuthConfig(auto_user="ada"), "http://127.0.0.1:8000")
    try:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = {**RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k1", "alg": "RS256", "use": "sig"}
        client_id = recorder.origin + "/client.json"
        document = {
            "client_id": client_id,
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "private_key_jwt",
        }
        serve_document(recorder, {**document, "jwks": {"keys": [jwk]}})
        token_endpoint = server.issuer + "/token"

        def exchange(lifetime: int) -> dict[str, Any]:
            verifier = secrets.token_urlsafe(48)
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            query = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "s"}
            query |= {"code_challenge": challenge, "code_challenge_method": "S256"}
            location = _http(server, "GET", "/authorize", **query)["headers"]["location"]
            code = parse_qs(urlsplit(location).query)["code"][0]
            now = int(time.time())
            claims = {"iss": client_id, "sub": client_id, "aud": token_endpoint, "jti": uuid.uuid4().hex}
            assertion = jwt.encode(
                {**claims, "iat": now, "exp": now + lifetime}, key, algorithm="RS256", headers={"kid": "k1"}
            )
            form = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK}
            form |= {"code_verifier": verifier, "client_id": client_id, "client_assertion": assertion}
            form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            answer = _http(server, "POST", "/token", **form)
            return {"status": answer["status"], **json.loads(answer["body"])}

        ten_years = exchange(10 * 365 * 86400)
        assert ten_years["status"] == 401 and ten_years["error"] == "invalid_client"
        assert "lives too long" in ten_years["error_description"]
        assert exchange(3600)["status"] == 401  # an hour is too long as well
        accepted = exchange(60)
        assert accepted["status"] == 200 and accepted["access_token"], accepted
        assert exchange(300)["status"] == 200  # the most it may be
    finally:
        server.close()
        recorder.close()


# --- 9, in a real browser (last: Playwright's loop, alive for the rest of the module, would stop the
# in-process authorization server above from running its own) --------------------------------------------


def test_a_hostile_page_cannot_frame_the_consent_page(tmp_path: Path, browser: Any):
    """In Chromium: a page on another loopback port frames a live consent page; the frame stays empty.
    The same page opened on its own still offers Approve."""
    dev = start_dev(auth_project(tmp_path))
    hostile = Loopback()
    try:
        flow = Flow(dev.url)
        flow.discover()
        assert flow.register().status_code == 201
        first = flow.authorize(pkce()[1])
        consent_url = dev.url.replace("/mcp", first.headers["location"])
        frame = f"<!doctype html><title>win a prize</title><iframe src='{consent_url}'></iframe>".encode()
        hostile.routes["GET /prize"] = lambda r, b: (200, {"Content-Type": "text/html"}, frame)

        page = browser.new_page()
        try:
            page.goto(hostile.origin + "/prize", wait_until="load")
            framed = [f for f in page.frames if f != page.main_frame]
            assert framed, "the iframe is there"
            for child in framed:
                try:
                    content = child.content()
                except Exception:  # a frame the browser blocked may have no document to read
                    content = ""
                assert "Approve" not in content
            page.goto(consent_url, wait_until="load")
            assert page.locator("button[value=approve]").count() == 1
        finally:
            page.close()
    finally:
        hostile.close()
        stop(dev.process)


def test_the_consent_page_is_styled_and_keeps_its_headers(tmp_path: Path, browser: Any):
    """In Chromium: the consent page and its one-line page carry their inline style (nothing else loads,
    as the CSP says) and still refuse every frame."""
    dev = start_dev(auth_project(tmp_path))
    try:
        flow = Flow(dev.url)
        flow.discover()
        assert flow.register().status_code == 201
        consent_url = dev.url.replace("/mcp", flow.authorize(pkce()[1]).headers["location"])
        for scheme in ("light", "dark"):
            page = browser.new_page(color_scheme=scheme)
            loaded: list[str] = []
            page.on("request", lambda request, loaded=loaded: loaded.append(request.url))
            try:
                response = page.goto(consent_url, wait_until="load")
                assert response is not None and response.status == 200
                _assert_never_framed(response.headers, "the consent page")
                assert "style-src 'unsafe-inline'" in response.headers["content-security-policy"]
                assert loaded == [consent_url], loaded  # one self-contained document
                look = page.evaluate(
                    """() => {
                        const style = (selector) => getComputedStyle(document.querySelector(selector));
                        const approve = style("button[value=approve]"), deny = style("button[value=deny]");
                        return {page: style("body").backgroundColor, card: style("main").borderTopLeftRadius,
                                approve: approve.backgroundColor, deny: deny.backgroundColor,
                                chosen: style("label:has(input:checked)").backgroundColor,
                                other: style("label:has(input:not(:checked))").backgroundColor};
                    }"""
                )
                assert look["page"] != "rgba(0, 0, 0, 0)" and look["card"] == "14px", look
                assert look["approve"] not in (look["deny"], "rgb(239, 239, 239)"), look  # not the default button
                assert look["chosen"] != look["other"], look  # the picked test user is marked
            finally:
                page.close()
        page = browser.new_page()
        try:
            response = page.goto(dev.url.replace("/mcp", "/consent?request=gone"), wait_until="load")
            assert response is not None and response.status >= 400
            _assert_never_framed(response.headers, "the one-line page")
            assert page.evaluate("getComputedStyle(document.querySelector('main')).borderTopLeftRadius") == "14px"
        finally:
            page.close()
    finally:
        stop(dev.process)
