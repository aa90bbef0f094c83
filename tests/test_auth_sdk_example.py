"""`appsdk call` signs in to the MCP Python SDK's own OAuth example (examples/servers/simple-auth, which
.ci/run takes from the pinned mcp 2.3.0 sdist into tests/interop/mcp-simple-auth): an authorization
server built on the SDK's auth routes, which register appsdk as a confidential client
(client_secret_basic) and read client_id from the token request's form only. Before appsdk sent it
there too, the token request failed "Missing client_id".

The example's login page stands in for a person: the $BROWSER script posts its demo credentials."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import appsdk, free_port, stop, wait_for_port

EXAMPLE = Path(__file__).resolve().parent / "interop" / "mcp-simple-auth"


def _start(module: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE)}
    return subprocess.Popen(
        [sys.executable, "-m", module, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


@pytest.fixture
def sdk_example() -> Iterator[str]:
    """The example's authorization server and resource server on free loopback ports; the MCP URL."""
    pytest.importorskip("pydantic_settings", reason="the SDK example needs pydantic-settings (the test extra)")
    if not (EXAMPLE / "mcp_simple_auth").is_dir():
        missing = f"the MCP SDK's OAuth example is missing: expected it at {EXAMPLE} (.ci/run fetches it)"
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    as_port, rs_port = free_port(), free_port()
    authorization = _start("mcp_simple_auth.auth_server", "--port", str(as_port))
    resource = None
    try:
        wait_for_port(as_port, authorization)
        resource = _start(
            "mcp_simple_auth.server", "--port", str(rs_port), "--auth-server", f"http://localhost:{as_port}"
        )
        wait_for_port(rs_port, resource)
        yield f"http://localhost:{rs_port}/mcp"
    finally:
        for process in (resource, authorization):
            if process is not None:
                stop(process)


def login_browser(tmp_path: Path) -> tuple[Path, Path]:
    """$BROWSER for webbrowser: opens the authorization URL, signs in on the example's login page with its
    demo credentials, and follows the redirect back to appsdk's loopback callback."""
    log = tmp_path / "browser.log"
    script = tmp_path / "browser"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, httpx\n"
        "from urllib.parse import parse_qs, urljoin, urlsplit\n"
        f"open({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n"
        "url = sys.argv[1]\n"
        "login = urljoin(url, httpx.get(url).headers['location'])\n"
        "state = parse_qs(urlsplit(login).query)['state'][0]\n"
        "form = {'state': state, 'username': 'demo_user', 'password': 'demo_password'}\n"
        "back = httpx.post(urljoin(login, '/login/callback'), data=form)\n"
        "httpx.get(back.headers['location'])\n"
    )
    script.chmod(0o755)
    return script, log


def test_call_signs_in_to_the_mcp_sdk_oauth_example(sdk_example: str, tmp_path: Path):
    browser, log = login_browser(tmp_path)
    env = {"APPSDK_HOME": str(tmp_path / "home"), "BROWSER": str(browser)}

    first = appsdk("call", "get_time", "--url", sdk_example, "--json", env=env, timeout=90)
    assert first.returncode == 0, first.stderr
    assert "Missing client_id" not in first.stderr
    assert '"current_time"' in first.stdout
    assert "signed in to" in first.stderr and log.read_text().count("\n") == 1

    # The cached token, sent as the example's resource server asks: no second sign-in.
    again = appsdk("call", "get_time", "--url", sdk_example, "--json", env=env, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "signing in" not in again.stderr and log.read_text().count("\n") == 1
