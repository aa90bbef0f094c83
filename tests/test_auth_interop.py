"""The protected scaffold and the development authorization server, driven by clients no one here wrote:
the mcp Python SDK's own OAuth client (`mcp.client.auth.OAuthClientProvider`), which discovers, registers,
runs the code flow with PKCE and calls tools by itself; and the official TypeScript SDK client calling
with a bearer token. None of appsdk's client code is involved in either."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from conftest import stop
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from test_auth import Flow, auth_project
from test_dev import DevServer, start_dev

REDIRECT = "http://127.0.0.1:9/sdk-callback"


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture(scope="module")
def dev(tmp_path_factory) -> Iterator[DevServer]:
    server = start_dev(auth_project(tmp_path_factory.mktemp("interop")), "--auth-user", "grace")
    yield server
    stop(server.process)


def test_the_mcp_sdk_oauth_client_signs_in_and_calls(dev: DevServer, tmp_path: Path):
    redirected: dict[str, str] = {}

    async def redirect_handler(authorization_url: str) -> None:
        # The "browser": --auth-user makes /authorize redirect straight back with the code.
        async with httpx2.AsyncClient(follow_redirects=False) as browser:
            response = await browser.get(authorization_url)
        assert response.status_code == 302
        redirected.update({k: v[0] for k, v in parse_qs(urlsplit(response.headers["location"]).query).items()})

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(
            code=redirected["code"], state=redirected.get("state"), iss=redirected.get("iss")
        )

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=dev.url,
        client_metadata=OAuthClientMetadata(
            client_name="mcp python sdk",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )

    async def body() -> tuple[list[str], dict, dict]:
        async with (
            httpx2.AsyncClient(auth=provider, timeout=30) as http,
            Client(streamable_http_client(dev.url, http_client=http)) as client,
        ):
            names = [tool.name for tool in (await client.list_tools()).tools]
            me = await client.call_tool("whoami", {})
            books = await client.call_tool("list-books", {})
        return names, me.structured_content, books.structured_content

    names, me, books = anyio.run(body)
    assert names == ["list-books", "whoami", "suggest-book"]
    assert me["subject"] == "grace"
    assert len(books["books"]) == 3
    assert storage.client is not None and storage.client.client_secret is None  # registered as a public client
    assert storage.tokens is not None and storage.tokens.refresh_token
    assert storage.tokens.access_token not in dev.out() + dev.err()


@pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not installed here; this part needs them to run the TypeScript SDK client",
)
def test_the_typescript_sdk_client_calls_with_a_bearer_token(dev: DevServer, node_clients: Path):
    flow = Flow(dev.url)
    flow.discover()
    assert flow.register().status_code == 201
    token = flow.sign_in()["access_token"]

    def typescript(*args: str, bearer: str | None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **({"MCP_BEARER_TOKEN": bearer} if bearer else {})}
        return subprocess.run(
            ["node", "sdk-client.mjs", dev.url, *args],
            cwd=node_clients,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    signed_in = typescript("whoami", "{}", bearer=token)
    assert signed_in.returncode == 0, signed_in.stderr
    answer = json.loads(signed_in.stdout)
    assert "whoami" in answer["tools"]
    assert answer["call"]["structuredContent"]["subject"] == "grace"

    refused = typescript("whoami", "{}", bearer=None)
    assert refused.returncode != 0
    assert "401" in refused.stderr or "Unauthorized" in refused.stderr
