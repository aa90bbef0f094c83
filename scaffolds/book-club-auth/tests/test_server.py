"""Tests for the book club app and its sign-in.

The tool and widget tests talk to the server in-process with the MCP client. The sign-in tests serve
it over HTTP as `python server.py` does, in front of a stand-in identity provider: a signing key this
test makes, published as a JWKS on 127.0.0.1, and tokens signed with it.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import anyio
import jwt
import pytest
import server
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client

PROJECT = Path(__file__).resolve().parent.parent
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def run(coroutine_function):
    return anyio.run(coroutine_function)


def test_tools_declare_what_sign_in_they_need():
    async def body():
        async with Client(server.mcp) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = run(body)
    assert tools["list-books"].meta["openai/outputTemplate"] == server.WIDGET_URI
    assert tools["list-books"].meta["securitySchemes"] == [{"type": "oauth2", "scopes": ["books:read"]}]
    assert tools["suggest-book"].meta["securitySchemes"] == [{"type": "oauth2", "scopes": ["books:write"]}]
    assert tools["whoami"].annotations.read_only_hint is True


def test_widget_resource_is_served_with_its_csp():
    async def body():
        async with Client(server.mcp) as client:
            return await client.read_resource(server.WIDGET_URI)

    content = run(body).contents[0]
    assert content.mime_type == server.WIDGET_MIME_TYPE
    assert "ui" in content.meta and "openai/widgetCSP" in content.meta


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class IdentityProvider:
    """A stand-in for your real one: publishes a JWKS and signs tokens."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        keys = json.dumps({"keys": [{**jwk, "kid": "test", "use": "sig", "alg": "RS256"}]}).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(keys)

            def log_message(self, *args: object) -> None:
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.http.server_port}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def token(self, audience: str, scope: str = "books:read", expires_in: int = 300) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": "ada", "aud": audience, "scope": scope, "iat": now}
        return jwt.encode({**claims, "exp": now + expires_in}, self.key, algorithm="RS256", headers={"kid": "test"})


@pytest.fixture(scope="module")
def signed_in_server():
    idp = IdentityProvider()
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    environment = {"PORT": str(port), "OAUTH_ISSUER": idp.issuer, "OAUTH_JWKS_URL": idp.issuer + "/jwks"}
    process = subprocess.Popen(
        [sys.executable, "server.py"], cwd=PROJECT, env={**os.environ, **environment}, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield idp, url
    process.terminate()
    process.wait(timeout=10)
    idp.http.shutdown()


@dataclass
class Answer:
    status_code: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


def fetch(url: str, body: dict | None = None, headers: dict[str, str] | None = None) -> Answer:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return Answer(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


def call(url: str, token: str | None, tool: str, arguments: dict | None = None) -> Answer:
    headers = {**HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments or {}}}
    return fetch(url, body, headers)


def test_without_a_token_the_server_says_where_to_sign_in(signed_in_server):
    idp, url = signed_in_server
    response = call(url, None, "whoami")
    assert response.status_code == 401
    metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert f'resource_metadata="{metadata_url}"' in response.headers["www-authenticate"]
    metadata = fetch(metadata_url).json()
    assert metadata["resource"] == url and metadata["authorization_servers"] == [idp.issuer]


def test_whoami_names_the_signed_in_user(signed_in_server):
    idp, url = signed_in_server
    result = call(url, idp.token(audience=url), "whoami").json()["result"]
    assert result["structuredContent"]["subject"] == "ada"


def test_tokens_for_another_audience_or_expired_are_refused(signed_in_server):
    idp, url = signed_in_server
    assert call(url, idp.token(audience="https://other.example/mcp"), "whoami").status_code == 401
    assert call(url, idp.token(audience=url, expires_in=-10), "whoami").status_code == 401


def test_a_missing_scope_asks_the_host_to_sign_in_again(signed_in_server):
    idp, url = signed_in_server
    arguments = {"title": "Emma", "author": "Jane Austen"}
    refused = call(url, idp.token(audience=url), "suggest-book", arguments).json()["result"]
    assert refused["isError"] is True
    assert 'error="insufficient_scope"' in refused["_meta"]["mcp/www_authenticate"][0]
    allowed = call(url, idp.token(audience=url, scope="books:read books:write"), "suggest-book", arguments)
    assert allowed.json()["result"]["structuredContent"]["suggestions"][-1]["by"] == "ada"
