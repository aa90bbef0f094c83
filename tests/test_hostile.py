"""Issue 13 items 2, 3 and 7, black-box: the real `appsdk` against a hostile server on loopback (tests/hostile.py)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer, appsdk, free_port, serve, stop

from appsdk_cli import httpguard
from appsdk_cli.auth.client import AuthServerUnreachable, refresh, revoke
from appsdk_cli.auth.tokens import CachedTokens, load, save

HOSTILE = Path(__file__).resolve().parent / "hostile.py"
TOKEN = "tok_secret_for_origin_A"


@pytest.fixture
def hostile_log(tmp_path: Path) -> Path:
    return tmp_path / "requests.jsonl"


def _start(log: Path) -> RunningServer:
    port = free_port()
    return serve([sys.executable, str(HOSTILE), str(port)], port, env={"HOSTILE_LOG": str(log)})


@pytest.fixture
def hostile(hostile_log: Path) -> Iterator[RunningServer]:
    server = _start(hostile_log)
    yield server
    stop(server.process)


@pytest.fixture
def elsewhere(hostile_log: Path) -> Iterator[RunningServer]:
    """A second origin (another port) that logs what reaches it."""
    server = _start(hostile_log)
    yield server
    stop(server.process)


def requests_seen(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# --- item 2: the bearer token stays with its origin -------------------------------------------------------


def test_token_is_not_sent_across_origins_on_redirect(hostile, elsewhere, hostile_log):
    target = f"http://127.0.0.1:{elsewhere.port}/mcp"
    url = f"http://127.0.0.1:{hostile.port}/redirect?to={target}"
    result = appsdk("tools", "--url", url, "--token", TOKEN, "--json")
    assert result.returncode == 0, result.stderr
    seen = requests_seen(hostile_log)
    on_first = [r for r in seen if r["port"] == hostile.port]
    on_second = [r for r in seen if r["port"] == elsewhere.port]
    assert on_first and all(r["authorization"] == f"Bearer {TOKEN}" for r in on_first)
    assert on_second, "the redirect was not followed"
    assert all(r["authorization"] is None for r in on_second), on_second
    assert TOKEN not in result.stdout + result.stderr


def test_token_is_kept_on_a_same_origin_redirect(hostile, hostile_log):
    url = f"http://127.0.0.1:{hostile.port}/redirect?to=/mcp"
    result = appsdk("tools", "--url", url, "--token", TOKEN, "--json")
    assert result.returncode == 0, result.stderr
    followed = [r for r in requests_seen(hostile_log) if r["path"] == "/mcp"]
    assert followed and all(r["authorization"] == f"Bearer {TOKEN}" for r in followed)


def test_https_to_http_redirect_is_refused():
    with pytest.raises(httpguard.UnsafeRedirect, match="from https to http"):
        httpguard.redirect("https://a.example/mcp", "http://a.example/mcp", {"Authorization": "Bearer x"})
    # Scheme, host or port changing drops credentials; the same origin keeps them.
    headers = {"Authorization": "Bearer x", "Accept": "a"}
    assert "Authorization" not in httpguard.redirect("http://a.example/mcp", "https://a.example/mcp", headers)[1]
    assert "Authorization" not in httpguard.redirect("https://a.example/mcp", "https://b.example/mcp", headers)[1]
    assert "Authorization" not in httpguard.redirect("https://a.example/mcp", "https://a.example:8443/x", headers)[1]
    assert httpguard.redirect("https://a.example/mcp", "https://A.example:443/mcp/", headers)[1] == headers


def test_httpx_client_refuses_downgrade_and_drops_token(hostile, elsewhere, hostile_log):
    import httpx

    with httpguard.httpx_client(5) as http:
        target = f"http://127.0.0.1:{elsewhere.port}/mcp"
        response = http.post(
            f"http://127.0.0.1:{hostile.port}/redirect?to={target}",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        assert response.status_code == 200
    on_second = [r for r in requests_seen(hostile_log) if r["port"] == elsewhere.port]
    assert on_second and on_second[0]["authorization"] is None
    with httpguard.httpx_client(5) as http, pytest.raises((httpguard.UnsafeRedirect, httpx.HTTPError)):
        http.post(f"http://127.0.0.1:{hostile.port}/redirect?to=ftp://127.0.0.1/x", json={})


# --- item 3: terminal escapes from a server are shown, not obeyed ---------------------------------------


def _has_raw_controls(text: str) -> bool:
    return any(ch in text for ch in ("\x1b", "\x07", "\x9b"))


@pytest.mark.parametrize(
    "args",
    [
        ("tools",),
        ("call", "evil"),
        ("resources",),
        ("read", "ui://widget/evil.html"),
    ],
    ids=["tools", "call", "resources", "read"],
)
def test_human_output_escapes_terminal_controls(hostile, args):
    result = appsdk(*args, "--url", hostile.url, env={"NO_COLOR": "1", "TERM": "dumb"})
    assert result.returncode == 0, result.stderr
    assert not _has_raw_controls(result.stdout), repr(result.stdout)
    assert not _has_raw_controls(result.stderr), repr(result.stderr)
    assert "\\x1b]52" in result.stdout or "\\x1b[2J" in result.stdout  # shown, visibly


def test_json_output_stays_exact(hostile):
    from hostile import HOSTILE_TEXT

    result = appsdk("call", "evil", "--url", hostile.url, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["content"][0]["text"] == HOSTILE_TEXT


def test_errors_from_a_server_are_escaped(hostile):
    # The tool name comes back in the "did you mean" line; an isError text reaches the error line.
    result = appsdk("call", "evil\x1b]52;c;eA==\x07", "--url", hostile.url)
    assert result.returncode == 2
    assert not _has_raw_controls(result.stderr), repr(result.stderr)


# --- item 7: --timeout bounds the whole answer ----------------------------------------------------------


@pytest.mark.parametrize("path", ["/drip-json", "/drip-sse", "/drip-headers"])
@pytest.mark.parametrize("command", [("tools",), ("call", "evil"), ("check",)], ids=["tools", "call", "check"])
def test_a_dripping_server_does_not_hold_the_timeout(hostile, path, command):
    url = f"http://127.0.0.1:{hostile.port}{path}"
    started = time.monotonic()
    result = appsdk(*command, "--url", url, "--timeout", "3", timeout=30)
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stdout + result.stderr
    assert "within 3 s" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    # The process start costs a second or so on a busy machine; one answer may take up to 3 s.
    assert elapsed < 9, elapsed


def test_preview_honours_the_timeout(hostile):
    url = f"http://127.0.0.1:{hostile.port}/drip-json"
    started = time.monotonic()
    result = appsdk("preview", "evil", "--url", url, "--timeout", "3", "--no-open", timeout=30)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "within 3 s" in result.stderr
    assert time.monotonic() - started < 9


# --- sign-in obeys the same deadline, and a silent authorization server costs no one their grant -----------


def _expired_grant(token_endpoint: str) -> CachedTokens:
    return CachedTokens(
        resource="http://127.0.0.1:9/mcp",
        issuer="http://127.0.0.1:9",
        token_endpoint=token_endpoint,
        client_id="client-1",
        access_token="expired-access",
        refresh_token="refresh-secret",
        expires_at=time.time() - 60,
        revocation_endpoint=token_endpoint,
    )


def test_refresh_against_a_dripping_token_endpoint_ends_on_time_and_keeps_the_grant(hostile, tmp_path):
    server_url = "http://127.0.0.1:9/mcp"
    save(server_url, _expired_grant(f"http://127.0.0.1:{hostile.port}/drip-token"), tmp_path)
    started = time.monotonic()
    with pytest.raises(AuthServerUnreachable) as raised:
        refresh(server_url, load(server_url, root=tmp_path), timeout=1.5, root=tmp_path)
    assert time.monotonic() - started < 6
    assert "your sign-in is kept" in str(raised.value)
    assert "refresh-secret" not in str(raised.value)
    kept = load(server_url, root=tmp_path)
    assert kept is not None and kept.refresh_token == "refresh-secret"


def test_a_refused_refresh_token_is_dropped(hostile, tmp_path):
    server_url = "http://127.0.0.1:9/mcp"
    save(server_url, _expired_grant(f"http://127.0.0.1:{hostile.port}/refuse-token"), tmp_path)
    assert refresh(server_url, load(server_url, root=tmp_path), timeout=5, root=tmp_path) is None
    assert load(server_url, root=tmp_path) is None


def test_revocation_against_a_dripping_endpoint_ends_on_time(hostile):
    started = time.monotonic()
    assert revoke(_expired_grant(f"http://127.0.0.1:{hostile.port}/drip-token"), timeout=1.5) is False
    assert time.monotonic() - started < 6
