"""`appsdk tunnel` against the stand-in ngrok agent, which pyngrok drives like the real one and which
really forwards HTTPS traffic (see tests/ngrok_standin/ngrok)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import RunningServer, pid_alive, stop
from ngrok_standin import CERT_DIR_ENV, STANDIN_PATH

TOKEN = "2secretTokenValue_abcdef123456"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def tunnel_env(tmp_path: Path) -> dict[str, str]:
    """An environment where ngrok is the stand-in, trusted through SSL_CERT_FILE, with no real config."""
    home = tmp_path / "home"
    home.mkdir()
    cert_dir = tmp_path / "certs"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PYNGROK_NGROK_PATH": STANDIN_PATH,
        CERT_DIR_ENV: str(cert_dir),
        "SSL_CERT_FILE": str(cert_dir / "ca.pem"),
        "NGROK_AUTHTOKEN": TOKEN,
        "NO_COLOR": "1",
    }
    env.pop("APPSDK_URL", None)
    return env


def start_tunnel(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "tunnel", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_json_line(process: subprocess.Popen, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    line = process.stdout.readline()
    if not line:
        raise AssertionError(f"appsdk tunnel printed nothing: {process.stderr.read()}")
    assert time.monotonic() < deadline
    return json.loads(line)


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def all_command_lines() -> list[str]:
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
    return lines


def tree_command_lines(root: int) -> list[str]:
    """Command lines of `root` and all its descendants: what `ps` shows for the process under test
    (other suites may run beside this one, so the whole machine is not ours to judge)."""
    lines, todo = [], [root]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError):
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        todo += children(pid)
    return lines


def tls_client(env: dict[str, str]) -> httpx.Client:
    return httpx.Client(verify=ssl.create_default_context(cafile=env["SSL_CERT_FILE"]), timeout=10)


def call_list_books(client: httpx.Client, mcp_url: str) -> dict:
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list-books", "arguments": {}}}
    response = client.post(mcp_url, json=call, headers=ACCEPT)
    assert response.status_code == 200, response.text
    return response.json()["result"]


@pytest.fixture
def running_tunnel(app_server: RunningServer, tunnel_env: dict[str, str]) -> Iterator[tuple]:
    process = start_tunnel(tunnel_env, "--port", str(app_server.port), "--json")
    try:
        first = read_json_line(process)
        yield process, first
    finally:
        stop(process)


def test_tunnel_forwards_mcp_over_verified_https(running_tunnel, app_server, tunnel_env):
    _, opened = running_tunnel
    assert set(opened) >= {"public_url", "mcp_url", "local_url"}
    assert opened["public_url"].startswith("https://127.0.0.2:")
    assert opened["mcp_url"] == opened["public_url"] + "/mcp"
    assert opened["local_url"] == app_server.url
    assert opened["verified"] is True, "the through-the-tunnel MCP initialize should have passed"

    with tls_client(tunnel_env) as client:
        result = call_list_books(client, opened["mcp_url"])
    assert result["structuredContent"]["books"][0]["title"] == "Frankenstein"

    # The server's DNS-rebinding check still refuses a foreign Host sent straight to it.
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    direct = httpx.post(app_server.url, json=ping, headers={**ACCEPT, "Host": "evil.example"})
    assert direct.status_code == 421

    # The token is on no command line of appsdk or its agent (pyngrok's default would put it there).
    process, _ = running_tunnel
    lines = tree_command_lines(process.pid)
    assert any("ngrok" in line for line in lines)
    assert not [line for line in lines if TOKEN in line]


def test_public_host_alone_would_be_refused(app_server, tunnel_env):
    """Why the tunnel rewrites Host: the public host ngrok forwards is not one the server allows."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    response = httpx.post(app_server.url, json=ping, headers={**ACCEPT, "Host": "127.0.0.2:443"})
    assert response.status_code == 421


def test_human_output_and_ctrl_c_cleanup(app_server, tunnel_env):
    process = start_tunnel(tunnel_env, "--port", str(app_server.port))
    try:
        lines = []
        # The whole block is printed before the tunnel is watched; Ctrl-C only after it is all there.
        while not any("Ctrl-C" in line for line in lines):
            line = process.stdout.readline()
            assert line, process.stderr.read()
            lines.append(line)
        mcp_url = next(line.strip() for line in lines if line.strip().startswith("https://"))
        assert mcp_url.endswith("/mcp")
        agents = children(process.pid)
        assert agents, "the ngrok agent should be a child of appsdk tunnel"
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    text = "".join(lines) + out + err
    assert process.returncode == 0, err
    assert "Developer mode" in text and "Refresh" in text
    assert TOKEN not in text
    assert "Traceback" not in err
    for pid in agents:
        assert not pid_alive(pid), f"ngrok agent {pid} survived Ctrl-C"


def test_sigterm_stops_agent_and_removes_private_config(running_tunnel):
    process, _ = running_tunnel
    agents = children(process.pid)
    assert len(agents) == 1
    cmdline = Path(f"/proc/{agents[0]}/cmdline").read_bytes().split(b"\0")
    config = Path(cmdline[cmdline.index(b"--config") + 1].decode())
    # The agent read it at start; a token file left on disk is one a `kill -9` would leave behind.
    assert not config.exists(), "the private config holding the token must be gone once the agent runs"
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=20)
    assert process.returncode == 0
    assert not pid_alive(agents[0])
    assert not config.exists(), "the private config holding the token must be removed"


def test_agent_crash_is_restarted_and_reported(running_tunnel, tunnel_env):
    process, opened = running_tunnel
    (agent,) = children(process.pid)
    os.kill(agent, signal.SIGKILL)
    restarted = read_json_line(process)
    assert restarted["restarted"] is True
    assert restarted["url_changed"] is (restarted["public_url"] != opened["public_url"])
    with tls_client(tunnel_env) as client:
        result = call_list_books(client, restarted["mcp_url"])
    assert len(result["structuredContent"]["books"]) == 3


def test_domain_from_flag_and_project_config(app_server, tunnel_env, tmp_path):
    """A reserved domain is requested from the agent; the stand-in reports it verbatim (it does not
    resolve here, so the self-check fails and says so, and the tunnel stays up)."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.appsdk.tunnel]\ndomain = "books.example.dev"\n')
    for args, cwd, expected in [
        (["--domain", "flag.example.dev"], None, "flag.example.dev"),
        ([], project, "books.example.dev"),
    ]:
        process = start_tunnel(tunnel_env, "--port", str(app_server.port), "--json", *args, cwd=cwd)
        try:
            opened = read_json_line(process)
        finally:
            stop(process)
        assert opened["public_url"] == f"https://{expected}"
        assert opened["verified"] is False
        assert "failed an MCP initialize" in process.stderr.read()


def run_tunnel(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "tunnel", *args], env=env, capture_output=True, text=True, timeout=60
    )


def assert_one_line_error(result: subprocess.CompletedProcess, code: int, fragment: str) -> None:
    assert result.returncode == code, result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert TOKEN not in result.stdout + result.stderr


def test_missing_token(app_server, tunnel_env):
    env = {k: v for k, v in tunnel_env.items() if k != "NGROK_AUTHTOKEN"}
    result = run_tunnel(env, "--port", str(app_server.port))
    assert_one_line_error(result, 1, "dashboard.ngrok.com")
    assert "NGROK_AUTHTOKEN" in result.stderr


def test_rejected_token_is_not_printed(app_server, tunnel_env):
    rejected = "reject-" + TOKEN
    result = run_tunnel(tunnel_env, "--port", str(app_server.port), "--authtoken", rejected)
    assert_one_line_error(result, 1, "refused the authtoken")
    assert rejected not in result.stdout + result.stderr


def test_token_from_ngrok_config_file(app_server, tunnel_env):
    env = {k: v for k, v in tunnel_env.items() if k != "NGROK_AUTHTOKEN"}
    config = Path(env["HOME"]) / ".config" / "ngrok" / "ngrok.yml"
    config.parent.mkdir(parents=True)
    config.write_text(f'version: "2"\nauthtoken: {TOKEN}\n')
    process = start_tunnel(env, "--port", str(app_server.port), "--json")
    try:
        opened = read_json_line(process)
        assert opened["verified"] is True
        assert not [line for line in tree_command_lines(process.pid) if TOKEN in line]
    finally:
        stop(process)


def test_missing_ngrok_binary_offline(app_server, tunnel_env, tmp_path):
    env = {**tunnel_env, "PYNGROK_NGROK_PATH": str(tmp_path / "bin" / "ngrok")}
    (tmp_path / "bin").mkdir()
    result = run_tunnel(env, "--port", str(app_server.port))
    assert_one_line_error(result, 1, "PYNGROK_NGROK_PATH")


def test_local_server_not_running(tunnel_env):
    from conftest import free_port

    result = run_tunnel(tunnel_env, "--port", str(free_port()))
    assert_one_line_error(result, 1, "nothing answers MCP")


def test_port_and_url_together_is_usage_error(tunnel_env):
    result = run_tunnel(tunnel_env, "--port", "8000", "--url", "http://127.0.0.1:8000/mcp")
    assert_one_line_error(result, 2, "not both")


# -- appsdk dev --tunnel --------------------------------------------------------------------------------


def tunnel_title(env: dict[str, str], mcp_url: str) -> str | None:
    try:
        with tls_client(env) as client:
            return call_list_books(client, mcp_url)["structuredContent"]["books"][0]["title"]
    except (httpx.HTTPError, AssertionError, KeyError):
        return None


def test_dev_tunnel_keeps_its_url_across_reloads(tmp_path, tunnel_env, monkeypatch):
    from test_dev import edit, start_dev, wait_until

    from appsdk_cli.scaffold import scaffold

    for key, value in tunnel_env.items():
        monkeypatch.setenv(key, value)
    project = scaffold("book-club", tmp_path).path
    dev = start_dev(project, "--tunnel")
    try:
        mcp_url = wait_until(
            lambda: next((ln.strip() for ln in dev.out().splitlines() if ln.startswith("https://")), None),
            message="the tunnel's URL in appsdk dev's output",
        )
        assert mcp_url.startswith("https://127.0.0.2:") and mcp_url.endswith("/mcp")
        # The tunnel is open already: no "appsdk tunnel" among the next steps, and ChatGPT's steps instead.
        assert "appsdk tunnel" not in dev.out() and "appsdk call list-books" in dev.out()
        wait_until(lambda: "Ctrl-C closes the tunnel" in dev.out(), message="ChatGPT's steps after the URL")
        assert "chatgpt.com/plugins" in dev.out() and "Settings → Security and login" in dev.out()
        state = json.loads((project / ".appsdk" / "dev.json").read_text())
        assert state["public_url"] + "/mcp" == mcp_url
        assert tunnel_title(tunnel_env, mcp_url) == "Frankenstein"

        edit(project / "server.py", '"Frankenstein"', '"Dracula"')
        wait_until(lambda: tunnel_title(tunnel_env, mcp_url) == "Dracula", message="the edit, through the tunnel")
        edit(project / "server.py", '"Dracula"', '"Carmilla"')
        wait_until(lambda: tunnel_title(tunnel_env, mcp_url) == "Carmilla", message="a second edit, same URL")
        assert json.loads((project / ".appsdk" / "dev.json").read_text())["public_url"] == state["public_url"]

        agents = [pid for pid in children(dev.process.pid) if "ngrok" in Path(f"/proc/{pid}/cmdline").read_text()]
        assert len(agents) == 1
        workers = dev.worker_pids() - set(agents)
        assert not [line for line in tree_command_lines(dev.process.pid) if TOKEN in line]
    finally:
        dev.process.send_signal(signal.SIGINT)
        dev.process.wait(timeout=30)
    assert dev.process.returncode == 0, dev.err()
    for pid in [*agents, *workers]:
        assert not pid_alive(pid), f"process {pid} survived Ctrl-C"
    assert not (project / ".appsdk" / "dev.json").exists()
    assert TOKEN not in dev.out() + dev.err()


def test_dev_tunnel_without_token_fails_cleanly(tmp_path, tunnel_env):
    from conftest import free_port

    from appsdk_cli.scaffold import scaffold

    env = {k: v for k, v in tunnel_env.items() if k != "NGROK_AUTHTOKEN"}
    project = scaffold("book-club", tmp_path).path
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(free_port()), "--tunnel"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "dashboard.ngrok.com" in result.stderr and "Traceback" not in result.stderr
    # Checked before anything starts: one line, nothing served, no worker, no wait for the tunnel to fail.
    assert result.stderr.strip().count("\n") == 0 and result.stderr.startswith("error: no ngrok authtoken found")
    assert "127.0.0.1" not in result.stdout and time.monotonic() - started < 10
    assert not [line for line in all_command_lines() if str(project) in line], "a worker outlived appsdk dev"
    assert not (project / ".appsdk" / "dev.json").exists()


def test_dev_domain_without_tunnel_is_usage_error(tmp_path):
    from conftest import appsdk

    from appsdk_cli.scaffold import scaffold

    project = scaffold("book-club", tmp_path).path
    result = appsdk("dev", str(project), "--domain", "x.example.dev")
    assert result.returncode == 2 and "--tunnel" in result.stderr


def test_dev_tunnel_with_auth_binds_tokens_to_the_public_url(tmp_path, tunnel_env, monkeypatch):
    """Behind the tunnel the issuer is the public origin and the token audience the public /mcp URL."""
    import base64

    from test_auth import Flow, auth_project
    from test_dev import start_dev, wait_until

    for key, value in tunnel_env.items():
        monkeypatch.setenv(key, value)
    project = auth_project(tmp_path)
    dev = start_dev(project, "--tunnel", "--auth-user", "ada")
    try:
        mcp_url = wait_until(
            lambda: next((ln.strip() for ln in dev.out().splitlines() if ln.startswith("https://")), None),
            message="the tunnel's URL in appsdk dev's output",
        )
        origin = mcp_url.removesuffix("/mcp")
        wait_until(lambda: f"development authorization server at {origin}" in dev.out(), message="the public issuer")
        flow = Flow(mcp_url, http=tls_client(tunnel_env))

        def discovered() -> bool:
            # The app reloads to learn its public audience: until the new worker serves, the old one
            # still names the local issuer.
            try:
                flow.discover()
            except AssertionError:
                return False
            return flow.resource == mcp_url

        wait_until(discovered, message="the public resource in the protected resource metadata")
        # The reload line follows the new worker's first answers (it waits for the app's description).
        wait_until(lambda: "reloaded in" in dev.out(), message="the reload line")
        assert "(the new tunnel URL)" in dev.out() and "((" not in dev.out()
        assert flow.metadata["issuer"] == origin
        assert flow.metadata["token_endpoint"] == origin + "/token"
        assert flow.register().status_code == 201
        token = flow.sign_in()["access_token"]
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        assert claims["aud"] == mcp_url and claims["iss"] == origin
        assert flow.call("whoami", {}, token).json()["result"]["structuredContent"]["subject"] == "ada"
        # The same token works on the local URL: the app's audience is the public URL either way.
        assert Flow(dev.url).call("whoami", {}, token).status_code == 200
        assert json.loads((project / ".appsdk" / "dev.json").read_text())["extra"]["auth_issuer"] == origin
        assert token not in dev.out() + dev.err()
    finally:
        dev.process.send_signal(signal.SIGINT)
        dev.process.wait(timeout=30)
    assert dev.process.returncode == 0, dev.err()
