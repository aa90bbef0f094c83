"""Issue 13 items 6, 8 and 12: the authtoken off the command line, an agent that dies with appsdk
(kill -9, SIGHUP), and pyngrok's Python `ngrok` wrapper skipped on PATH. Against the stand-in agent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import app_server, appsdk, pid_alive  # noqa: F401 - app_server is a fixture
from ngrok_standin import STANDIN_PATH
from test_tunnel import (  # noqa: F401 - fixtures
    TOKEN,
    children,
    read_json_line,
    start_tunnel,
    tree_command_lines,
    tunnel_env,
)


def agent_of(pid: int) -> tuple[int, Path | None]:
    """The ngrok agent among `pid`'s children, and the private config it was started with (if any)."""
    for child in children(pid):
        argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        if any(b"ngrok" in word for word in argv):
            config = Path(argv[argv.index(b"--config") + 1].decode()) if b"--config" in argv else None
            return child, config
    raise AssertionError(f"no ngrok agent under {pid}")


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_kill_9_of_tunnel_takes_the_agent_along(app_server, tunnel_env):  # noqa: F811
    process = start_tunnel(tunnel_env, "--port", str(app_server.port), "--json")
    read_json_line(process)
    agent, config = agent_of(process.pid)
    assert config is not None and not config.exists(), "the token file must not wait on disk"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    try:
        assert gone_within(agent, 5), "the ngrok agent outlived kill -9 of appsdk tunnel"
    finally:
        if pid_alive(agent):
            os.kill(agent, signal.SIGKILL)


def test_sighup_stops_the_tunnel_cleanly(app_server, tunnel_env):  # noqa: F811
    process = start_tunnel(tunnel_env, "--port", str(app_server.port), "--json")
    read_json_line(process)
    agent, config = agent_of(process.pid)
    process.send_signal(signal.SIGHUP)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert not pid_alive(agent)
    assert config is not None and not config.parent.exists(), "the private folder must be removed"


def test_kill_9_of_dev_tunnel_takes_the_agent_along(tmp_path, tunnel_env, monkeypatch):  # noqa: F811
    from test_dev import start_dev, wait_until

    from appsdk_cli.scaffold import scaffold

    for key, value in tunnel_env.items():
        monkeypatch.setenv(key, value)
    project = scaffold("book-club", tmp_path).path
    dev = start_dev(project, "--tunnel")
    wait_until(lambda: "https://" in dev.out(), message="the tunnel's URL")
    agent, _ = agent_of(dev.process.pid)
    workers = dev.worker_pids() - {agent}
    os.kill(dev.process.pid, signal.SIGKILL)
    dev.process.wait()
    try:
        assert gone_within(agent, 5), "the ngrok agent outlived kill -9 of appsdk dev --tunnel"
        for pid in workers:
            assert gone_within(pid, 5), f"worker {pid} outlived kill -9 of appsdk dev"
    finally:
        for pid in [agent, *workers]:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_authtoken_from_stdin_never_reaches_a_command_line(app_server, tunnel_env):  # noqa: F811
    env = {k: v for k, v in tunnel_env.items() if k != "NGROK_AUTHTOKEN"}
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "tunnel", "--port", str(app_server.port), "--json", "--authtoken", "-"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        process.stdin.write(TOKEN + "\n")
        process.stdin.close()
        opened = read_json_line(process)
        assert opened["mcp_url"].endswith("/mcp")
        assert not [line for line in tree_command_lines(process.pid) if TOKEN in line]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    out, err = process.stdout.read(), process.stderr.read()
    assert process.returncode == 0, err
    assert TOKEN not in out + err


def test_authtoken_from_stdin_is_the_one_used(app_server, tunnel_env):  # noqa: F811
    env = {k: v for k, v in tunnel_env.items() if k != "NGROK_AUTHTOKEN"}
    result = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "tunnel", "--port", str(app_server.port), "--authtoken", "-"],
        env=env,
        input="reject-this-token\n",  # the stand-in refuses tokens starting with "reject"
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "refused the authtoken" in result.stderr and "reject-this-token" not in result.stderr


def test_authtoken_dash_with_nothing_on_stdin_is_a_usage_error(app_server, tunnel_env):  # noqa: F811
    env = {k: v for k, v in tunnel_env.items() if k != "NGROK_AUTHTOKEN"}
    result = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "tunnel", "--port", str(app_server.port), "--authtoken", "-"],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "stdin" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [("tunnel", "--help"), ("dev", "--help")])
def test_help_says_the_authtoken_option_shows_in_ps(command):
    result = appsdk(*command)
    text = " ".join(result.stdout.split())
    assert "visible to other users in `ps`" in text and "NGROK_AUTHTOKEN" in text and "stdin" in text


# --- item 12 ----------------------------------------------------------------------------------------------


def pyngrok_wrapper(folder: Path) -> Path:
    """What pip puts in a venv's bin/ for pyngrok: a Python script named ngrok."""
    folder.mkdir()
    wrapper = folder / "ngrok"
    wrapper.write_text(
        f"#!{sys.executable}\nimport re\nimport sys\nfrom pyngrok.ngrok import main\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n"
    )
    wrapper.chmod(0o755)
    return wrapper


def test_pyngrok_wrapper_on_path_is_skipped(app_server, tunnel_env, tmp_path):  # noqa: F811
    wrapper = pyngrok_wrapper(tmp_path / "venv-bin")
    env = {k: v for k, v in tunnel_env.items() if k != "PYNGROK_NGROK_PATH"}
    env["PATH"] = os.pathsep.join([str(wrapper.parent), str(Path(STANDIN_PATH).parent), env["PATH"]])
    process = start_tunnel(env, "--port", str(app_server.port), "--json")
    try:
        opened = read_json_line(process)
        assert opened["mcp_url"].endswith("/mcp")
        agent, _ = agent_of(process.pid)
        assert Path(f"/proc/{agent}/cmdline").read_bytes().split(b"\0")[1].decode().endswith("ngrok_standin/ngrok")
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)


def test_only_the_wrapper_on_path_says_what_was_tried(app_server, tunnel_env, tmp_path):  # noqa: F811
    from pyngrok import conf

    if Path(conf.DEFAULT_NGROK_PATH).exists():
        pytest.skip(f"pyngrok has its own agent at {conf.DEFAULT_NGROK_PATH}, which wins over PATH")
    wrapper = pyngrok_wrapper(tmp_path / "venv-bin")
    env = {k: v for k, v in tunnel_env.items() if k != "PYNGROK_NGROK_PATH"}
    env["PATH"] = os.pathsep.join([str(wrapper.parent), "/usr/bin", "/bin"])
    result = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "tunnel", "--port", str(app_server.port)],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "skipped pyngrok's Python wrapper" in result.stderr and str(wrapper) in result.stderr, result.stderr
