"""The stand-in ngrok agent, driven through pyngrok exactly like the real binary.

Real processes and sockets only: an upstream http.server on 127.0.0.1, the
stand-in agent started by pyngrok, and httpx clients that verify the tunnel's
TLS certificate against the stand-in's CA.
"""

import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from pyngrok import conf, ngrok, process
from pyngrok.conf import PyngrokConfig
from pyngrok.exception import PyngrokNgrokError, PyngrokNgrokHTTPError

STANDIN = str(Path(__file__).parent / "ngrok_standin" / "ngrok")
SECRET = "tok-SECRET-4f1c9e"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------------ upstream


class Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    release_second_event: threading.Event

    def log_message(self, format, *args):
        pass

    def _reply(self, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_GET(self):
        if self.path == "/sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._chunk(b"data: first\n\n")
            # Only continue once the client has seen the first event: proves the
            # proxy streams instead of buffering the whole response.
            released = self.server.release_second_event.wait(5)
            self._chunk(b"data: second\n\n" if released else b"data: timed-out\n\n")
            self._chunk(b"data: third\n\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        self._reply({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})

    def do_POST(self):
        if "chunked" in self.headers.get("Transfer-Encoding", ""):
            body = b""
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._reply({"body": body.decode(), "host": self.headers["Host"]})


@pytest.fixture
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    server.daemon_threads = True
    server.release_second_event = threading.Event()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


# ------------------------------------------------------------------- agent


@pytest.fixture(scope="session")
def cert_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ngrok-standin-certs")


@pytest.fixture(autouse=True)
def standin_env(monkeypatch, cert_dir):
    monkeypatch.setenv("NGROK_STANDIN_CERT_DIR", str(cert_dir))
    monkeypatch.delenv("NGROK_AUTHTOKEN", raising=False)
    monkeypatch.delenv("PYNGROK_NGROK_PATH", raising=False)
    yield
    # pyngrok keeps one process per ngrok_path in module globals.
    ngrok.kill(PyngrokConfig(ngrok_path=STANDIN))
    assert not process.is_process_running(STANDIN)


@pytest.fixture
def client(cert_dir):
    """httpx clients that trust only the stand-in's CA (ca.pem in the cert dir)."""
    clients = []

    def make() -> httpx.Client:
        verify = ssl.create_default_context(cafile=str(cert_dir / "ca.pem"))
        clients.append(httpx.Client(verify=verify, trust_env=False, timeout=10))
        return clients[-1]

    yield make
    for c in clients:
        c.close()


def write_config(path: Path, version: str, token: str | None = SECRET, web_addr: str | None = "auto") -> str:
    if web_addr == "auto":
        web_addr = f"127.0.0.1:{free_port()}"
    if version == "3":
        lines = ['version: "3"', "agent:"]
        lines += [f"    authtoken: {token}"] if token else []
        lines += [f"    web_addr: {web_addr}"] if web_addr else []
        if len(lines) == 2:
            lines.pop()
    else:
        lines = ['version: "2"']
        lines += [f"authtoken: {token}"] if token else []
        lines += [f"web_addr: {web_addr}"] if web_addr else []
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def pyngrok_config(tmp_path, version="3", **kwargs) -> PyngrokConfig:
    config_kwargs = {k: kwargs.pop(k) for k in ("token", "web_addr") if k in kwargs}
    config_path = write_config(tmp_path / f"ngrok-v{version}.yml", version, **config_kwargs)
    return PyngrokConfig(ngrok_path=STANDIN, config_path=config_path, config_version=version, **kwargs)


def host_of(url: str) -> str:
    return url.split("://", 1)[1]


# ------------------------------------------------------------------- tests


def test_version_is_reported_like_ngrok(tmp_path):
    ngrok_version, _ = ngrok.get_version(pyngrok_config(tmp_path))
    assert ngrok_version.startswith("3.")


@pytest.mark.parametrize("version", ["2", "3"])
def test_get_and_post_are_forwarded_with_the_public_host(tmp_path, upstream, client, version):
    # v2 config without web_addr: exercises the 4040-and-up default.
    cfg = pyngrok_config(tmp_path, version, web_addr=None if version == "2" else "auto")
    tunnel = ngrok.connect(upstream.server_address[1], pyngrok_config=cfg)

    assert tunnel.public_url.startswith("https://127.0.0.2:")
    assert tunnel.proto == "https"
    assert ngrok.get_ngrok_process(cfg).api_url.startswith("http://127.0.0.1:")
    http = client()
    seen = http.get(f"{tunnel.public_url}/host?x=1").json()
    assert seen["path"] == "/host?x=1"
    assert seen["headers"]["host"] == host_of(tunnel.public_url)
    assert seen["headers"]["x-forwarded-proto"] == "https"
    assert seen["headers"]["x-forwarded-host"] == host_of(tunnel.public_url)
    assert seen["headers"]["x-forwarded-for"].startswith("127.")

    echoed = http.post(f"{tunnel.public_url}/echo", content=b"hello through the tunnel").json()
    assert echoed == {"body": "hello through the tunnel", "host": host_of(tunnel.public_url)}
    chunked = http.post(f"{tunnel.public_url}/echo", content=iter([b"chunk-1 ", b"chunk-2"])).json()
    assert chunked["body"] == "chunk-1 chunk-2"


@pytest.mark.parametrize(
    "version,options",
    [
        ("2", {"host_header": "rewrite"}),
        ("3", {"upstream_host_header": "rewrite"}),
        (
            "3",
            {
                "traffic_policy": {
                    "on_http_request": [
                        {"actions": [{"type": "add-headers", "config": {"headers": {"host": "localhost:{port}"}}}]}
                    ]
                }
            },
        ),
    ],
    ids=["v2-host_header", "v3-upstream.host_header", "v3-traffic_policy"],
)
def test_host_header_rewrite_uses_the_upstream_address(tmp_path, upstream, client, version, options):
    port = upstream.server_address[1]
    if "upstream_host_header" in options:
        options = {"upstream": {"url": f"http://localhost:{port}", "host_header": "rewrite"}}
    elif "traffic_policy" in options:
        options = json.loads(json.dumps(options).replace("{port}", str(port)))
    cfg = pyngrok_config(tmp_path, version)
    tunnel = ngrok.connect(port, pyngrok_config=cfg, **options)

    seen = client().get(f"{tunnel.public_url}/host").json()
    assert seen["headers"]["host"] == f"localhost:{port}"
    assert seen["headers"]["x-forwarded-host"] == host_of(tunnel.public_url)


def test_event_stream_arrives_chunk_by_chunk(tmp_path, upstream, client):
    cfg = pyngrok_config(tmp_path, "3")
    tunnel = ngrok.connect(upstream.server_address[1], pyngrok_config=cfg)

    events = []
    with client().stream("GET", f"{tunnel.public_url}/sse") as response:
        assert response.headers["content-type"] == "text/event-stream"
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(line[len("data: ") :])
                if len(events) == 1:
                    # The stream is still open: a concurrent request must get through.
                    assert client().get(f"{tunnel.public_url}/host").status_code == 200
                upstream.release_second_event.set()
    assert events == ["first", "second", "third"]


def test_tunnels_are_listed_and_disconnect_stops_the_listener(tmp_path, upstream, client):
    cfg = pyngrok_config(tmp_path, "3")
    tunnel = ngrok.connect(upstream.server_address[1], pyngrok_config=cfg)
    assert client().get(f"{tunnel.public_url}/host").status_code == 200

    listed = ngrok.get_tunnels(cfg)
    assert [t.public_url for t in listed] == [tunnel.public_url]
    assert listed[0].upstream["url"] == f"http://localhost:{upstream.server_address[1]}"

    ngrok.disconnect(tunnel.public_url, cfg)
    assert ngrok.get_tunnels(cfg) == []
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", int(tunnel.public_url.rsplit(":", 1)[1])), timeout=2)


def test_v2_api_shape_and_errors(tmp_path, upstream):
    cfg = pyngrok_config(tmp_path, "2")
    tunnel = ngrok.connect(upstream.server_address[1], name="my-app", pyngrok_config=cfg)
    assert tunnel.uri == "/api/tunnels/my-app"
    assert tunnel.config == {"addr": f"http://localhost:{upstream.server_address[1]}", "inspect": True}

    with pytest.raises(PyngrokNgrokHTTPError) as dup:
        ngrok.connect(upstream.server_address[1], name="my-app", pyngrok_config=cfg)
    assert dup.value.status_code == 400
    assert json.loads(dup.value.body)["msg"] == "invalid tunnel configuration"

    api_url = ngrok.get_ngrok_process(cfg).api_url
    with pytest.raises(PyngrokNgrokHTTPError) as missing:
        ngrok.api_request(f"{api_url}/api/tunnels/nope", method="DELETE")
    assert missing.value.status_code == 404


@pytest.mark.parametrize("version,option", [("2", "domain"), ("2", "hostname"), ("3", "url")])
def test_domain_is_reported_and_reachable_through_the_local_url(tmp_path, upstream, client, version, option):
    cfg = pyngrok_config(tmp_path, version)
    value = "https://my-app.example.com" if option == "url" else "my-app.example.com"
    tunnel = ngrok.connect(upstream.server_address[1], pyngrok_config=cfg, **{option: value})

    assert tunnel.public_url == "https://my-app.example.com"
    local_url = tunnel.data["standin_local_url"]
    assert local_url.startswith("https://127.0.0.2:")
    seen = client().get(f"{local_url}/host", headers={"Host": "my-app.example.com"}).json()
    assert seen["headers"]["host"] == "my-app.example.com"


def test_plain_http_tunnel_and_unreachable_upstream(tmp_path):
    cfg = pyngrok_config(tmp_path, "2")
    tunnel = ngrok.connect(free_port(), bind_tls=False, pyngrok_config=cfg)
    assert tunnel.public_url.startswith("http://127.0.0.2:")
    response = httpx.get(f"{tunnel.public_url}/", trust_env=False, timeout=10)
    assert response.status_code == 502
    assert "ERR_NGROK_8012" in response.text


def test_ngrok_path_from_environment(tmp_path, monkeypatch, upstream, client):
    monkeypatch.setenv("PYNGROK_NGROK_PATH", STANDIN)
    config_path = write_config(tmp_path / "ngrok.yml", "2")
    cfg = PyngrokConfig(config_path=config_path, config_version="2")  # env read at construction
    assert cfg.ngrok_path == STANDIN

    tunnel = ngrok.connect(upstream.server_address[1], pyngrok_config=cfg)
    assert client().get(f"{tunnel.public_url}/host").status_code == 200


def test_authtoken_from_set_auth_token_and_from_environment(tmp_path, monkeypatch):
    # pyngrok writes its default (version 3) config, then runs `ngrok config add-authtoken`.
    cfg = PyngrokConfig(ngrok_path=STANDIN, config_path=str(tmp_path / "fresh" / "ngrok.yml"))
    ngrok.set_auth_token(SECRET, cfg)
    assert f'agent:\n    authtoken: "{SECRET}"' in Path(cfg.config_path).read_text()
    assert ngrok.get_ngrok_process(cfg).api_url
    ngrok.kill(cfg)

    # No token in config or PyngrokConfig: the agent reads NGROK_AUTHTOKEN itself.
    cfg = pyngrok_config(tmp_path, "2", token=None)
    monkeypatch.setenv("NGROK_AUTHTOKEN", SECRET)
    assert cfg.auth_token is None
    assert ngrok.get_ngrok_process(cfg).api_url


@pytest.mark.parametrize("token", [None, "reject-this-token"], ids=["missing", "rejected"])
def test_bad_authtoken_fails_with_err_ngrok_4018(tmp_path, token):
    cfg = pyngrok_config(tmp_path, "3", token=token)
    with pytest.raises(PyngrokNgrokError) as excinfo:
        ngrok.connect(8080, pyngrok_config=cfg)
    assert excinfo.value.ngrok_error_code == "ERR_NGROK_4018"
    assert not process.is_process_running(STANDIN)
    if token:
        assert all(token not in log.line for log in excinfo.value.ngrok_logs)


def test_crash_route_kills_the_agent_and_kill_leaves_no_process(tmp_path):
    cfg = pyngrok_config(tmp_path, "3")
    ngrok_process = ngrok.get_ngrok_process(cfg)
    crashed_pid = ngrok_process.proc.pid

    request = urllib.request.Request(f"{ngrok_process.api_url}/api/standin/crash", method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200
    assert ngrok_process.proc.wait(timeout=5) == 1
    assert not process.is_process_running(STANDIN)
    ngrok.kill(cfg)  # nothing left to kill; must not fail
    with pytest.raises(ProcessLookupError):
        os.kill(crashed_pid, 0)

    # A fresh agent, stopped the usual way.
    ngrok_process = ngrok.get_ngrok_process(cfg)
    pid = ngrok_process.proc.pid
    ngrok.kill(cfg)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_authtoken_never_appears_in_output(tmp_path, upstream, client):
    cfg = pyngrok_config(tmp_path, "3", auth_token=SECRET)  # passed as --authtoken too
    tunnel = ngrok.connect(upstream.server_address[1], pyngrok_config=cfg)
    client().get(f"{tunnel.public_url}/host")
    ngrok.disconnect(tunnel.public_url, cfg)
    deadline = time.monotonic() + 5
    logs = ngrok.get_ngrok_process(cfg).logs
    while not any("stopped tunnel" in log.line for log in logs) and time.monotonic() < deadline:
        time.sleep(0.02)
    lines = [log.line for log in logs]
    assert any('msg="stopped tunnel"' in line for line in lines)
    assert any('msg="join connections"' in line for line in lines)
    assert all(SECRET not in line for line in lines)


def test_sigterm_merged_configs_and_full_output(tmp_path):
    web_port = free_port()
    token_file = write_config(tmp_path / "token.yml", "3", web_addr=None)
    web_file = write_config(tmp_path / "web.yml", "3", token=None, web_addr=f"127.0.0.1:{web_port}")
    proc = subprocess.Popen(
        [STANDIN, "start", "--none", "--log", "stdout", "--config", token_file, "--config", web_file],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        while not any("tunnel session started" in line for line in lines):
            line = proc.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        assert any(f"addr=127.0.0.1:{web_port}" in line for line in lines)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=5)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert "received stop request" in out
    assert SECRET not in "".join(lines) + out


def test_default_pyngrok_config_uses_config_version_3():
    assert conf.PyngrokConfig().config_version == "3"
