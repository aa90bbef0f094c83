"""OAuth 2.1 sign-in, black-box over HTTP: `appsdk new --auth` served by `appsdk dev` and its development
authorization server, driven step by step with httpx the way ChatGPT drives it.

discovery (401 -> protected resource metadata -> authorization server metadata) -> registration of a
public client -> authorize with PKCE S256 (`--auth-user`, or the consent page) -> token -> tools/call ->
refresh -> revoke -> 401; and every refusal: another audience, expired, revoked, PKCE plain or missing,
a redirect URI that is not registered exactly, a code used twice, a non-loopback host.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from conftest import appsdk, free_port, stop, wait_for_port
from test_dev import DevServer, start_dev

from appsdk_cli.scaffold import scaffold

CALLBACK = "http://127.0.0.1:9/callback"  # never contacted: the test reads the redirect's Location
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


@dataclass
class Flow:
    """One client's view of a protected app: what it discovered and the tokens it holds."""

    mcp_url: str
    http: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30, follow_redirects=False))
    resource: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    client_id: str = ""
    seen_tokens: list[str] = field(default_factory=list)

    def mcp(self, method: str, params: dict[str, Any] | None = None, token: str | None = None) -> httpx.Response:
        headers = dict(MCP_HEADERS)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        body = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params else {})}
        return self.http.post(self.mcp_url, json=body, headers=headers)

    def call(self, tool: str, arguments: dict[str, Any], token: str) -> httpx.Response:
        return self.mcp("tools/call", {"name": tool, "arguments": arguments}, token)

    def discover(self) -> None:
        challenge = self.mcp("tools/list")
        assert challenge.status_code == 401
        header = challenge.headers["www-authenticate"]
        assert header.startswith("Bearer ")
        metadata_url = re.search(r'resource_metadata="([^"]+)"', header).group(1)
        prm = self.http.get(metadata_url).json()
        self.resource = prm["resource"]
        issuer = prm["authorization_servers"][0]
        self.metadata = self.http.get(issuer.rstrip("/") + "/.well-known/oauth-authorization-server").json()
        assert self.metadata["issuer"] == issuer

    def register(self, redirect_uris: list[str] | None = None) -> httpx.Response:
        response = self.http.post(
            self.metadata["registration_endpoint"],
            json={
                "client_name": "test client",
                "redirect_uris": redirect_uris or [CALLBACK],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            },
        )
        if response.status_code == 201:
            self.client_id = response.json()["client_id"]
        return response

    def authorize(self, challenge: str, **overrides: str) -> httpx.Response:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": CALLBACK,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "st-1",
            "scope": "books:read",
            "resource": self.resource,
            **overrides,
        }
        return self.http.get(self.metadata["authorization_endpoint"], params={k: v for k, v in params.items() if v})

    def code(self, challenge: str, **overrides: str) -> str:
        response = self.authorize(challenge, **overrides)
        assert response.status_code == 302, response.text
        location = response.headers["location"]
        assert location.startswith(CALLBACK + "?")
        query = parse_qs(urlsplit(location).query)
        assert query["state"] == ["st-1"]
        assert query["iss"] == [self.metadata["issuer"]]
        return query["code"][0]

    def token(self, **form: str) -> httpx.Response:
        response = self.http.post(self.metadata["token_endpoint"], data={"client_id": self.client_id, **form})
        if response.status_code == 200:
            self.seen_tokens += [response.json()["access_token"], response.json()["refresh_token"]]
        return response

    def exchange(self, code: str, verifier: str) -> httpx.Response:
        return self.token(grant_type="authorization_code", code=code, redirect_uri=CALLBACK, code_verifier=verifier)

    def sign_in(self, scope: str = "books:read") -> dict[str, Any]:
        verifier, challenge = pkce()
        response = self.exchange(self.code(challenge, scope=scope), verifier)
        assert response.status_code == 200, response.text
        return response.json()


def auth_project(tmp_path: Path, **settings: Any) -> Path:
    project = scaffold("book-club", tmp_path, auth=True).path
    if settings:
        pyproject = project / "pyproject.toml"
        extra = "".join(f"{key} = {value}\n" for key, value in settings.items())
        pyproject.write_text(pyproject.read_text() + extra)
    return project


@pytest.fixture(scope="module")
def dev(tmp_path_factory) -> Iterator[DevServer]:
    server = start_dev(auth_project(tmp_path_factory.mktemp("auth")), "--auth-user", "ada")
    yield server
    stop(server.process)


@pytest.fixture
def flow(dev: DevServer) -> Flow:
    flow = Flow(dev.url)
    flow.discover()
    assert flow.register().status_code == 201
    return flow


def test_the_whole_flow_discovery_to_revocation(dev: DevServer):
    flow = Flow(dev.url)
    flow.discover()
    assert flow.resource == dev.url
    assert flow.metadata["code_challenge_methods_supported"] == ["S256"]
    assert "none" in flow.metadata["token_endpoint_auth_methods_supported"]
    assert {"authorization_code", "refresh_token"} <= set(flow.metadata["grant_types_supported"])

    registered = flow.register()
    assert registered.status_code == 201
    assert registered.json().get("client_secret") is None  # a public client, as ChatGPT registers

    tokens = flow.sign_in()
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] > 0

    listed = flow.mcp("tools/list", token=tokens["access_token"]).json()["result"]["tools"]
    schemes = {tool["name"]: tool["_meta"]["securitySchemes"] for tool in listed}
    assert schemes["suggest-book"] == [{"type": "oauth2", "scopes": ["books:write"]}]
    assert schemes["list-books"] == [{"type": "oauth2", "scopes": ["books:read"]}]

    me = flow.call("whoami", {}, tokens["access_token"]).json()["result"]
    assert me["structuredContent"]["subject"] == "ada"
    assert me["structuredContent"]["scopes"] == ["books:read"]

    # A scope the token lacks: an error result that asks the host to link the account again.
    refused = flow.call("suggest-book", {"title": "Emma", "author": "Jane Austen"}, tokens["access_token"]).json()
    assert refused["result"]["isError"] is True
    (challenge,) = refused["result"]["_meta"]["mcp/www_authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'resource_metadata="' + dev.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp") in challenge
    writer = flow.sign_in(scope="books:read books:write")
    allowed = flow.call("suggest-book", {"title": "Emma", "author": "Jane Austen"}, writer["access_token"]).json()
    assert allowed["result"]["structuredContent"]["suggestions"][-1]["by"] == "ada"

    # Refresh rotates: the new pair works, the old refresh token is spent.
    refreshed = flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    new = refreshed.json()
    assert new["access_token"] != tokens["access_token"]
    assert flow.call("whoami", {}, new["access_token"]).status_code == 200
    spent = flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert spent.status_code == 400 and spent.json()["error"] == "invalid_grant"

    # Revocation: the access token stops working at once, and with it the whole grant.
    revoked = flow.http.post(
        flow.metadata["revocation_endpoint"], data={"token": new["access_token"], "client_id": flow.client_id}
    )
    assert revoked.status_code == 200
    after = flow.call("whoami", {}, new["access_token"])
    assert after.status_code == 401
    assert "resource_metadata=" in after.headers["www-authenticate"]
    gone = flow.token(grant_type="refresh_token", refresh_token=new["refresh_token"])
    assert gone.status_code == 400

    # Nothing printed or logged a token.
    logs = dev.out() + dev.err()
    for token in flow.seen_tokens:
        assert token not in logs


def test_the_consent_page_picks_a_test_user(tmp_path: Path):
    server = start_dev(auth_project(tmp_path))
    try:
        flow = Flow(server.url)
        flow.discover()
        flow.register()
        verifier, challenge = pkce()
        first = flow.authorize(challenge)
        assert first.status_code == 302 and first.headers["location"].startswith("/consent?request=")
        page = flow.http.get(server.url.replace("/mcp", first.headers["location"]))
        assert page.status_code == 200
        assert "ada" in page.text and "grace" in page.text and "test client" in page.text
        request = parse_qs(urlsplit(first.headers["location"]).query)["request"][0]
        consent_url = server.url.replace("/mcp", "/consent")
        approved = flow.http.post(consent_url, data={"request": request, "user": "grace", "action": "approve"})
        assert approved.status_code == 302 and approved.headers["location"].startswith(CALLBACK)
        code = parse_qs(urlsplit(approved.headers["location"]).query)["code"][0]
        tokens = flow.exchange(code, verifier).json()
        me = flow.call("whoami", {}, tokens["access_token"]).json()["result"]["structuredContent"]
        assert me["subject"] == "grace"
        # A consent request is answered once; a denial goes back to the client as access_denied.
        again = flow.http.post(consent_url, data={"request": request, "user": "ada", "action": "approve"})
        assert again.status_code == 400
        second = flow.authorize(pkce()[1])
        request = parse_qs(urlsplit(second.headers["location"]).query)["request"][0]
        denied = flow.http.post(consent_url, data={"request": request, "action": "deny"})
        assert parse_qs(urlsplit(denied.headers["location"]).query)["error"] == ["access_denied"]
    finally:
        stop(server.process)


# --- refusals ----------------------------------------------------------------------------------------


def test_no_token_or_a_forged_one_gets_401(flow: Flow):
    assert flow.mcp("tools/list").status_code == 401
    assert flow.mcp("tools/list", token="not-a-jwt").status_code == 401
    real = flow.sign_in()["access_token"]
    header, payload, signature = real.split(".")
    forged = f"{header}.{payload}.{signature[::-1]}"
    assert flow.mcp("tools/list", token=forged).status_code == 401


def test_pkce_plain_and_a_missing_challenge_are_refused(flow: Flow):
    verifier, _ = pkce()
    plain = flow.authorize(verifier, code_challenge_method="plain")
    query = parse_qs(urlsplit(plain.headers["location"]).query)
    assert query["error"] == ["invalid_request"] and "code" not in query
    missing = flow.authorize("")
    assert "code" not in parse_qs(urlsplit(missing.headers.get("location", "")).query)
    assert missing.status_code in (302, 400)


def test_a_missing_or_wrong_code_verifier_is_refused(flow: Flow):
    challenge = pkce()[1]
    code = flow.code(challenge)
    without = flow.token(grant_type="authorization_code", code=code, redirect_uri=CALLBACK)
    assert without.status_code == 400 and without.json()["error"] == "invalid_request"
    wrong = flow.exchange(code, pkce()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"


def test_redirect_uris_must_match_a_registered_one_exactly(flow: Flow):
    challenge = pkce()[1]
    for near_miss in (CALLBACK + "/x", CALLBACK + "?next=evil", CALLBACK.replace("/callback", "/callbacks")):
        response = flow.authorize(challenge, redirect_uri=near_miss)
        # Never a redirect to an unregistered address: the error is shown, not sent.
        assert response.status_code == 400, near_miss
        assert "location" not in response.headers
    # Registration refuses redirect URIs that could leak a code: plain http off loopback, fragments.
    assert flow.register(["http://evil.example/callback"]).status_code == 400
    assert flow.register([CALLBACK + "#frag"]).status_code == 400


def test_an_authorization_code_works_once(flow: Flow):
    verifier, challenge = pkce()
    code = flow.code(challenge)
    first = flow.exchange(code, verifier)
    assert first.status_code == 200
    replay = flow.exchange(code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    # The replay also revokes what the first exchange issued (OAuth 2.1 section 4.1.3).
    assert flow.mcp("tools/list", token=first.json()["access_token"]).status_code == 401


def test_a_token_for_another_resource_is_refused(flow: Flow):
    refused = flow.authorize(pkce()[1], resource="http://127.0.0.1:1/mcp")
    assert parse_qs(urlsplit(refused.headers["location"]).query)["error"] == ["invalid_target"]


def test_an_expired_token_gets_401(tmp_path: Path):
    server = start_dev(auth_project(tmp_path, access_token_seconds=3), "--auth-user", "ada")
    try:
        flow = Flow(server.url)
        flow.discover()
        flow.register()
        token = flow.sign_in()["access_token"]
        assert flow.mcp("tools/list", token=token).status_code == 200
        time.sleep(4.2)
        assert flow.mcp("tools/list", token=token).status_code == 401
    finally:
        stop(server.process)


def serve_app(project: Path, **environment: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "server.py"],
        cwd=project,
        env={**os.environ, "PORT": str(port), **environment},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_for_port(port, process)
    return process, f"http://127.0.0.1:{port}/mcp"


def test_a_token_for_another_audience_gets_401(dev: DevServer, flow: Flow, tmp_path: Path):
    """The same app run by `python server.py`, trusting the dev server's keys: only the audience differs."""
    token = flow.sign_in()["access_token"]
    origin = dev.url.removesuffix("/mcp")
    trust = {"OAUTH_ISSUER": origin, "OAUTH_JWKS_URL": origin + "/.well-known/jwks.json"}
    project = auth_project(tmp_path)
    other, other_url = serve_app(project, **trust)  # its audience is its own /mcp URL
    same, same_url = serve_app(project, **trust, OAUTH_AUDIENCE=dev.url)  # the control: dev's audience
    try:
        assert Flow(other_url).mcp("tools/list", token=token).status_code == 401
        assert Flow(same_url).mcp("tools/list", token=token).status_code == 200
    finally:
        stop(other)
        stop(same)


def test_refuses_a_non_loopback_host_without_the_tunnel(tmp_path: Path):
    project = auth_project(tmp_path)
    port = free_port()
    result = appsdk("dev", str(project), "--host", "0.0.0.0", "--port", str(port), timeout=30)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "signs anyone in" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (project / ".appsdk" / "dev.json").exists()


def test_auth_user_must_be_a_test_user_and_needs_an_auth_app(tmp_path: Path):
    project = auth_project(tmp_path)
    unknown = appsdk("dev", str(project), "--auth-user", "mallory", "--port", str(free_port()), timeout=30)
    assert unknown.returncode == 2 and "ada, grace" in unknown.stderr
    plain = scaffold("plain", tmp_path).path
    without = appsdk("dev", str(plain), "--auth-user", "ada", "--port", str(free_port()), timeout=30)
    assert without.returncode == 2 and "[tool.appsdk.auth]" in without.stderr


def test_new_auth_scaffold_depends_on_mcp_only_and_its_tests_pass(tmp_path: Path):
    import tomllib

    result = appsdk("new", "reading-room", "--auth", "--path", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    project = tmp_path / "reading-room"
    config = tomllib.loads((project / "pyproject.toml").read_text())
    assert [d.split(">")[0] for d in config["project"]["dependencies"]] == ["mcp"]
    assert config["tool"]["appsdk"]["auth"]["users"] == ["ada", "grace"]
    assert "auth.py" in result.stdout and '"auth": true' in result.stdout
    assert b"{{" not in b"".join(p.read_bytes() for p in project.rglob("*") if p.is_file())
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "6 passed" in tests.stdout


# --- appsdk call against a protected server ----------------------------------------------------------


def test_call_with_token_and_a_refused_token(dev: DevServer, flow: Flow, tmp_path: Path):
    token = flow.sign_in()["access_token"]
    env = {"APPSDK_HOME": str(tmp_path / "home")}
    result = appsdk("call", "whoami", "--url", dev.url, "--token", token, "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert '"subject": "ada"' in result.stdout
    assert token not in result.stdout + result.stderr

    bad = appsdk("call", "whoami", "--url", dev.url, "--token", "not-a-token", "--verbose", env=env)
    assert bad.returncode == 1
    assert bad.stderr.startswith("error:") and "refused the token: HTTP 401" in bad.stderr
    assert "not-a-token" not in bad.stdout + bad.stderr and "Traceback" not in bad.stderr
    # With --token nothing is signed in or cached behind the caller's back.
    assert not (tmp_path / "home" / "tokens").exists()


def fake_browser(tmp_path: Path) -> tuple[Path, Path]:
    """$BROWSER for webbrowser: follows the authorization page's redirect (to appsdk's callback) and logs each URL."""
    log = tmp_path / "browser.log"
    script = tmp_path / "browser"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, urllib.request\n"
        f"open({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n"
        "urllib.request.urlopen(sys.argv[1], timeout=30).read()\n"
    )
    script.chmod(0o755)
    return script, log


def test_call_signs_in_on_401_caches_refreshes_and_relinks(dev: DevServer, tmp_path: Path):
    """Under `appsdk dev --auth-user` the AS says it auto-approves, so `appsdk call` signs in with no
    browser at all ($BROWSER is a script that would log any page it was asked to open)."""
    home = tmp_path / "home"
    browser, log = fake_browser(tmp_path)
    env = {"APPSDK_HOME": str(home), "BROWSER": str(browser)}

    first = appsdk("call", "whoami", "--url", dev.url, "--json", env=env)
    assert first.returncode == 0, first.stderr
    assert '"subject": "ada"' in first.stdout and '"scopes": ["books:read"]' in first.stdout
    assert "approves without a browser" in first.stderr
    assert not log.exists()
    (cache,) = (home / "tokens").iterdir()
    assert cache.stat().st_mode & 0o777 == 0o600
    cached = json.loads(cache.read_text())
    origin = dev.url.removesuffix("/mcp")
    assert cached["server"] == dev.url and cached["current"] == origin
    grant = cached["grants"][origin]  # keyed by (server, issuer)
    assert grant["resource"] == dev.url and grant["scopes"] == ["books:read"]
    for secret in (grant["access_token"], grant["refresh_token"]):
        assert secret not in first.stdout + first.stderr + dev.out() + dev.err()

    again = appsdk("call", "list-books", "--url", dev.url, "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert "signing in" not in again.stderr  # the cached token: no second sign-in

    # The tool needs books:write: the error result's challenge makes appsdk sign in again for it, asking
    # for what it had plus what the tool wants (step-up unions the scopes).
    write = appsdk("call", "suggest-book", "title=Emma", "author=Jane Austen", "--url", dev.url, "--json", env=env)
    assert write.returncode == 0, write.stderr
    assert '"by": "ada"' in write.stdout
    assert json.loads(cache.read_text())["grants"][origin]["scopes"] == ["books:read", "books:write"]

    # A revoked token: the server answers 401 and appsdk signs in again by itself.
    grant = json.loads(cache.read_text())["grants"][origin]
    httpx.post(origin + "/revoke", data={"token": grant["access_token"], "client_id": grant["client_id"]})
    after = appsdk("call", "whoami", "--url", dev.url, "--json", env=env)
    assert after.returncode == 0, after.stderr
    assert "signing in" in after.stderr and not log.exists()

    status = appsdk("auth", "status", "--json", env=env)
    (row,) = json.loads(status.stdout)["signIns"]
    assert row["server"] == dev.url and row["issuer"] == origin and row["refreshable"] is True
    assert grant["refresh_token"] not in status.stdout and "access_token" not in status.stdout
    out = appsdk("auth", "logout", "--url", dev.url, env=env)
    assert out.returncode == 0 and "revoked and forgotten" in out.stdout, out.stdout + out.stderr
    assert not list((home / "tokens").iterdir())
    assert "No cached sign-ins" in appsdk("auth", "status", env=env).stdout


def test_call_refreshes_an_expired_token_without_the_browser(tmp_path: Path):
    server = start_dev(auth_project(tmp_path, access_token_seconds=31), "--auth-user", "grace")
    try:
        home = tmp_path / "home"
        env = {"APPSDK_HOME": str(home)}
        assert appsdk("call", "whoami", "--url", server.url, env=env).returncode == 0
        # 31 s tokens count as expired at once (appsdk refreshes 30 s early): this call must refresh.
        (cache,) = (home / "tokens").iterdir()
        before = json.loads(cache.read_text())["grants"]
        time.sleep(1.1)
        refreshed = appsdk("call", "whoami", "--url", server.url, "--json", env=env)
        assert refreshed.returncode == 0, refreshed.stderr
        assert '"subject": "grace"' in refreshed.stdout
        assert "signing in" not in refreshed.stderr
        after = json.loads(cache.read_text())["grants"]
        (issuer,) = after
        assert after[issuer]["refresh_token"] != before[issuer]["refresh_token"]
    finally:
        stop(server.process)


def test_check_sees_the_protected_scaffold_as_chatgpt_would(dev: DevServer, flow: Flow, tmp_path: Path):
    """The sign-in rules (APPS7xx) pass on the scaffold: without a token only discovery is checked (and
    it says so); with one, the tools are checked too; in PATH mode the declarations are."""
    env = {"APPSDK_URL": "", "APPSDK_HOME": str(tmp_path / "home")}
    anonymous = appsdk("check", "--url", dev.url, "--json", env=env)
    report = json.loads(anonymous.stdout)
    assert anonymous.returncode == 0, anonymous.stdout + anonymous.stderr
    assert [f["rule"] for f in report["findings"]] == ["APPS706"]

    token = flow.sign_in()["access_token"]
    signed_in = appsdk("check", "--url", dev.url, "--token", token, "--json", env=env)
    report = json.loads(signed_in.stdout)
    assert signed_in.returncode == 0, signed_in.stdout
    assert not [f for f in report["findings"] if f["severity"] == "error" or f["rule"].startswith("APPS7")]
    assert report["summary"]["tools"] == 3 and "whoami" in report["summary"]["called"]
    assert token not in signed_in.stdout + signed_in.stderr

    in_memory = appsdk("check", str(dev.project), "--json", env=env)
    assert in_memory.returncode == 0, in_memory.stdout
    assert not [f for f in json.loads(in_memory.stdout)["findings"] if f["rule"].startswith("APPS7")]


def test_tools_lists_each_tools_arguments_and_scopes(dev: DevServer, tmp_path: Path):
    browser, _ = fake_browser(tmp_path)
    env = {"APPSDK_HOME": str(tmp_path / "home"), "BROWSER": str(browser), "COLUMNS": "200"}
    result = appsdk("tools", "--url", dev.url, env=env)
    assert result.returncode == 0, result.stderr
    suggest = result.stdout.split("suggest-book", 1)[1]
    assert "arguments:" in suggest
    assert "title   string, required  The book's title." in suggest
    assert "author  string, required  The book's author." in suggest
    assert "sign-in: OAuth, scopes books:write" in suggest
    listing = result.stdout.split("list-books", 1)[1].split("suggest-book", 1)[0]
    assert "month  string | null, optional, default null  The month to show picks for" in listing
    assert "sign-in: OAuth, scopes books:read" in listing
    whoami = result.stdout.split("whoami", 1)[1].split("\n\n", 1)[0]
    assert "arguments: none" in whoami
