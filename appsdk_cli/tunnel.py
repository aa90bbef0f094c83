"""An ngrok HTTPS tunnel to the local MCP server, driven through pyngrok.

Three things pyngrok does by default that a developer tool must not:
- it passes the authtoken as `--authtoken` on the agent's command line, where `ps` shows it; we hand
  the token over in a private config file instead and clear pyngrok's copy;
- it forwards the public Host header, which the server's DNS-rebinding check refuses (421); we ask
  the agent to rewrite Host to the local address, so any local server works behind the tunnel,
  whether `appsdk dev` or a plain `python server.py`, and a foreign Host sent straight to the
  server is still refused;
- it downloads ngrok when the binary is missing; offline, that fails with a long traceback, so we
  look for an installed ngrok first and explain how to point at one;
- its agent outlives a `kill -9` of the Python process (keeping the app public): we start it with
  PR_SET_PDEATHSIG, so Linux stops it when we die, and remove the token file once it has started.

pyngrok also installs a Python `ngrok` console script into the venv; it is not the agent (starting it
as one fails with "unable to start"), so the PATH search skips it.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from appsdk_cli.errors import AppsdkError
from appsdk_cli.safewrite import open_in_place, write_file

if TYPE_CHECKING:
    from pyngrok.conf import PyngrokConfig
    from pyngrok.ngrok import NgrokTunnel

AUTHTOKEN_HELP = (
    "get an ngrok authtoken at https://dashboard.ngrok.com/get-started/your-authtoken, then pass "
    "--authtoken TOKEN, set NGROK_AUTHTOKEN, or run `ngrok config add-authtoken TOKEN`"
)
MISSING_TOKEN_CODE = "ERR_NGROK_4018"


class TunnelError(AppsdkError):
    """The tunnel could not be opened or proven to work."""


@dataclass(frozen=True)
class TunnelEndpoints:
    public_url: str  # https://abc.ngrok-free.app
    mcp_url: str  # public_url + the local path, e.g. /mcp
    local_url: str  # http://127.0.0.1:8000/mcp

    def as_json(self) -> dict[str, str]:
        return {"public_url": self.public_url, "mcp_url": self.mcp_url, "local_url": self.local_url}


@dataclass(frozen=True)
class TunnelSettings:
    local_url: str
    authtoken: str | None = None
    domain: str | None = None
    region: str | None = None
    ngrok_path: str | None = None  # default: $PYNGROK_NGROK_PATH, pyngrok's own copy, or ngrok on PATH
    ngrok_config: str | None = None  # default: ngrok's own config file
    startup_timeout: int = 15


def configured_domain(config: dict) -> str | None:
    """`[tool.appsdk.tunnel] domain` from a project's config table, if set."""
    table = config.get("tunnel", {})
    domain = table.get("domain") if isinstance(table, dict) else None
    return domain if isinstance(domain, str) and domain else None


def default_ngrok_config_path() -> Path:
    from pyngrok import conf

    return Path(conf.DEFAULT_NGROK_CONFIG_PATH)


def read_authtoken(value: str | None) -> str | None:
    """--authtoken as given; `-` reads it from stdin (prompting, unechoed, on a terminal), so it never
    appears on a command line."""
    if value != "-":
        return value
    from appsdk_cli.errors import UsageError

    if sys.stdin.isatty():
        import getpass

        token = getpass.getpass("ngrok authtoken: ")
    else:
        token = sys.stdin.readline()
    token = token.strip()
    if not token:
        raise UsageError("--authtoken - read no token from stdin; pipe it in, e.g. `pass ngrok | appsdk tunnel ...`")
    return token


def is_pyngrok_wrapper(path: str) -> bool:
    """Whether `path` is pyngrok's Python console script (`from pyngrok.ngrok import main`), not the agent."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(2048)
    except OSError:
        return False
    # pip's console-script shape: a shebang, then `from pyngrok.ngrok import main`.
    return head.startswith(b"#!") and re.search(rb"^\s*from pyngrok(\.ngrok)? import main\b", head, re.M) is not None


def ngrok_on_path() -> tuple[str | None, list[str]]:
    """The first ngrok on PATH that is the real agent, and the pyngrok wrappers skipped on the way."""
    skipped: list[str] = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = shutil.which("ngrok", path=folder) if folder else None
        if candidate is None or candidate in skipped:
            continue
        if is_pyngrok_wrapper(candidate):
            skipped.append(candidate)
            continue
        return candidate, skipped
    return None, skipped


def resolve_ngrok_path(explicit: str | None = None) -> str:
    """$PYNGROK_NGROK_PATH, else pyngrok's installed copy, else an ngrok on PATH (not pyngrok's Python
    wrapper), else pyngrok's default location (where pyngrok will try to download it)."""
    if explicit:
        return explicit
    from_env = os.environ.get("PYNGROK_NGROK_PATH")
    if from_env:
        return from_env
    from pyngrok import conf

    if Path(conf.DEFAULT_NGROK_PATH).exists():
        return conf.DEFAULT_NGROK_PATH
    return ngrok_on_path()[0] or conf.DEFAULT_NGROK_PATH


def ngrok_search_summary(chosen: str) -> str:
    """What was tried to find the agent, for an error message."""
    from pyngrok import conf

    tried = [f"$PYNGROK_NGROK_PATH ({os.environ.get('PYNGROK_NGROK_PATH') or 'unset'})"]
    tried.append(f"pyngrok's copy at {conf.DEFAULT_NGROK_PATH} (missing)")
    _, skipped = ngrok_on_path()
    wrappers = f"; skipped pyngrok's Python wrapper {', '.join(skipped)}, which is not the agent" if skipped else ""
    tried.append(f"ngrok on PATH (none{wrappers})")
    if os.environ.get("PYNGROK_NGROK_PATH"):
        return f"tried {chosen}"
    return "tried " + ", ".join(tried)


def preflight(settings: TunnelSettings) -> tuple[str, str | None, Path]:
    """What a tunnel needs before anything starts: the agent, and an authtoken (given, in $NGROK_AUTHTOKEN,
    or in ngrok's config file). `appsdk dev --tunnel` asks first, so a missing token fails in a second,
    not after the server, Vite and the workbench have started. Returns (agent path, token or None when
    ngrok's config file has one, that config file)."""
    ngrok_path = resolve_ngrok_path(settings.ngrok_path)
    token = settings.authtoken or os.environ.get("NGROK_AUTHTOKEN") or None
    user_config = Path(settings.ngrok_config) if settings.ngrok_config else default_ngrok_config_path()
    if not authtoken_configured(token, user_config):
        raise TunnelError(f"no ngrok authtoken found: {AUTHTOKEN_HELP}")
    if not Path(ngrok_path).exists() and not os.access(Path(ngrok_path).parent, os.W_OK):
        raise TunnelError(
            f"no ngrok agent at {ngrok_path} ({ngrok_search_summary(ngrok_path)}); install ngrok and put it "
            "on PATH, or set PYNGROK_NGROK_PATH=/path/to/ngrok"
        )
    return ngrok_path, token, user_config


def authtoken_configured(token: str | None = None, config: Path | None = None) -> bool:
    """Would a tunnel find an authtoken: `token` (given), $NGROK_AUTHTOKEN, or ngrok's config file (`config`,
    else ngrok's default one)."""
    if token or os.environ.get("NGROK_AUTHTOKEN"):
        return True
    return _config_has_authtoken(config or default_ngrok_config_path())


def _config_has_authtoken(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    for line in text.splitlines():
        key, _, value = line.strip().partition(":")
        if key == "authtoken" and value.strip().strip("\"'"):
            return True
    return False


class Tunnel:
    """One ngrok agent and one HTTPS tunnel to a local server. Use as a context manager.

    Not thread-safe by design: one owner opens, watches and closes it.
    """

    def __init__(self, settings: TunnelSettings) -> None:
        self.settings = settings
        self._private_dir: Path | None = None
        self._pyngrok_config: PyngrokConfig | None = None
        self._tunnel: NgrokTunnel | None = None
        self.endpoints: TunnelEndpoints | None = None
        self._token: str | None = None

    # -- lifecycle ------------------------------------------------------------------------------------

    def __enter__(self) -> Tunnel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def open(self) -> TunnelEndpoints:
        """Start the agent and the tunnel; raise TunnelError with a one-line reason on failure."""
        from pyngrok import ngrok
        from pyngrok.exception import PyngrokError, PyngrokNgrokError, PyngrokNgrokInstallError

        config = self._build_pyngrok_config()
        local = urlsplit(self.settings.local_url)
        options: dict[str, object] = {"bind_tls": True, "host_header": "rewrite"}
        if self.settings.domain:
            options["domain"] = self.settings.domain
        try:
            with self._agent_stderr_captured(), _agent_dies_with_us():
                self._tunnel = ngrok.connect(
                    f"{local.hostname}:{local.port or 80}", "http", pyngrok_config=config, **options
                )
        except PyngrokNgrokInstallError as error:
            self.close()
            raise TunnelError(
                f"could not download the ngrok agent to {config.ngrok_path} ({_first_line(error)}; "
                f"{ngrok_search_summary(config.ngrok_path)}); install ngrok and put it on PATH, "
                "or set PYNGROK_NGROK_PATH=/path/to/ngrok",
                detail=self._redact(str(error)),
            ) from None
        except PyngrokNgrokError as error:
            self.close()
            code = getattr(error, "ngrok_error_code", None) or ""
            if code == MISSING_TOKEN_CODE or MISSING_TOKEN_CODE in str(error):
                raise TunnelError(f"ngrok refused the authtoken (missing or invalid): {AUTHTOKEN_HELP}") from None
            raise TunnelError(
                f"the ngrok agent failed: {self._redact(_first_line(error))}",
                detail=self._redact(f"{error}\n{self._agent_stderr()}"),
            ) from None
        except (PyngrokError, OSError) as error:
            self.close()
            raise TunnelError(
                f"could not start the ngrok agent at {config.ngrok_path}: {self._redact(_first_line(error))}",
                detail=self._redact(str(error)),
            ) from None
        # The agent has read its config: the token need not wait on disk for a `kill -9` to leave it there.
        self._remove_private_config()
        public_url = (self._tunnel.public_url or "").rstrip("/")
        if public_url.startswith("http://"):
            public_url = "https://" + public_url[len("http://") :]
        path = local.path or "/"
        self.endpoints = TunnelEndpoints(public_url, public_url + path, self.settings.local_url)
        return self.endpoints

    def agent_alive(self) -> bool:
        from pyngrok import process

        return self._pyngrok_config is not None and process.is_process_running(self._pyngrok_config.ngrok_path)

    def reopen(self) -> tuple[TunnelEndpoints, bool]:
        """After the agent died: start it again; return the endpoints and whether the URL changed."""
        before = self.endpoints
        self._stop_agent()
        self._tunnel = None
        if self._token is not None:
            self._write_private_config(self._token)  # removed once the last agent had started
        endpoints = self.open()
        return endpoints, before is None or before.public_url != endpoints.public_url

    def close(self) -> None:
        self._stop_agent()
        self._tunnel = None
        if self._private_dir is not None:
            shutil.rmtree(self._private_dir, ignore_errors=True)
            self._private_dir = None

    def _stop_agent(self) -> None:
        if self._pyngrok_config is None:
            return
        from pyngrok import ngrok

        # kill() ends the agent process and waits for it; its tunnels go with it.
        ngrok.kill(pyngrok_config=self._pyngrok_config)

    # -- configuration ----------------------------------------------------------------------------------

    def _build_pyngrok_config(self) -> PyngrokConfig:
        if self._pyngrok_config is not None:
            return self._pyngrok_config
        from pyngrok.conf import PyngrokConfig

        _quiet_pyngrok_logs()
        settings = self.settings
        ngrok_path, token, user_config = preflight(settings)
        if token:
            config_path = str(self._write_private_config(token))
            self._token = token
            # The agent inherits our environment, and ngrok lets $NGROK_AUTHTOKEN override its config
            # file, which would silently replace an explicit --authtoken.
            os.environ.pop("NGROK_AUTHTOKEN", None)
        else:
            config_path = str(user_config)
        config = PyngrokConfig(
            ngrok_path=ngrok_path,
            config_path=config_path,
            region=settings.region,
            startup_timeout=settings.startup_timeout,
            # /api/tunnels takes host_header=rewrite; see the module docstring.
            config_version="2",
        )
        # PyngrokConfig copies $NGROK_AUTHTOKEN into auth_token, which it would put on the command line.
        config.auth_token = None
        self._pyngrok_config = config
        return config

    def _remove_private_config(self) -> None:
        if self._private_dir is not None and self._token is not None:
            (self._private_dir / "ngrok.yml").unlink(missing_ok=True)

    def _write_private_config(self, token: str) -> Path:
        """A config only this user can read, holding the token, removed once the agent has started."""
        self._private_dir = self._private_dir or Path(tempfile.mkdtemp(prefix="appsdk-ngrok-"))
        path = self._private_dir / "ngrok.yml"
        text = f'version: "2"\nauthtoken: {_yaml_quote(token)}\n'
        if self.settings.region:
            text += f"region: {_yaml_quote(self.settings.region)}\n"
        return write_file(path, text, root=self._private_dir, mode=0o600, sync=False)

    @contextmanager
    def _agent_stderr_captured(self) -> Iterator[None]:
        """Send the agent's stderr to a private log instead of our terminal.

        pyngrok pipes only the agent's stdout; a real agent also prints fatal errors (such as a refused
        token) to stderr, which would break our one-line errors. The agent inherits file descriptor 2,
        so point fd 2 at the log while pyngrok starts it, and keep our own stderr (and the spinner) on
        a duplicate of the terminal meanwhile.
        """
        log_dir = self._private_dir or Path(tempfile.mkdtemp(prefix="appsdk-ngrok-"))
        self._private_dir = log_dir
        log_fd = open_in_place(log_dir / "agent-stderr.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, root=log_dir)
        sys.stderr.flush()
        saved_fd = os.dup(2)
        saved_stream = sys.stderr
        terminal = os.fdopen(os.dup(saved_fd), "w", buffering=1, encoding=getattr(saved_stream, "encoding", None))
        os.dup2(log_fd, 2)
        sys.stderr = terminal
        try:
            yield
        finally:
            terminal.flush()
            sys.stderr = saved_stream
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            os.close(log_fd)
            terminal.close()

    def _agent_stderr(self) -> str:
        if self._private_dir is None:
            return ""
        try:
            return (self._private_dir / "agent-stderr.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "[authtoken]") if self._token else text


_PR_SET_PDEATHSIG = 1


@contextmanager
def _agent_dies_with_us() -> Iterator[None]:
    """Start the agent with PR_SET_PDEATHSIG, so that Linux sends it SIGTERM when the thread that
    started it dies, however it dies (kill -9 included). pyngrok has no hook for Popen's preexec_fn,
    so its module's `subprocess` is shadowed for the duration of the start."""
    if not sys.platform.startswith("linux"):
        yield
        return
    import ctypes
    import signal
    import subprocess

    from pyngrok import process as pyngrok_process

    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork: the child only calls into it
    parent = os.getpid()

    def tie_to_parent() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # we died before prctl took effect
            os._exit(1)

    class _Subprocess:
        def __getattr__(self, name: str) -> object:
            return getattr(subprocess, name)

        @staticmethod
        def Popen(*args: object, **kwargs: object) -> subprocess.Popen:
            kwargs.setdefault("preexec_fn", tie_to_parent)
            return subprocess.Popen(*args, **kwargs)  # type: ignore[call-overload]

    original = pyngrok_process.subprocess
    pyngrok_process.subprocess = _Subprocess()  # type: ignore[assignment]
    try:
        yield
    finally:
        pyngrok_process.subprocess = original


def _quiet_pyngrok_logs() -> None:
    """pyngrok logs every agent line at INFO; a root handler (MCPServer installs one) would print them."""
    logger = logging.getLogger("pyngrok")
    logger.propagate = False
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())


def _yaml_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def check_mcp(url: str, *, timeout: float = 10.0) -> str:
    """Prove `url` answers an MCP initialize; return the server's name.

    Over HTTPS, TLS is verified against the system trust store: OpenSSL's defaults honour SSL_CERT_FILE
    and SSL_CERT_DIR, which is how a local certificate is trusted. Verification is never turned off.
    """
    from appsdk_cli.client import AuthRequired, HttpTransport, McpClient

    # ngrok's free tier answers browsers with a warning page; this header skips it.
    transport = HttpTransport(url, timeout=timeout, headers={"ngrok-skip-browser-warning": "1"})
    try:
        with McpClient(transport) as client:
            assert client.server is not None
            return client.server.name
    except AuthRequired as challenge:
        if challenge.resource_metadata:
            # A protected app (RFC 9728 challenge): answering it proves the tunnel reaches the MCP endpoint.
            return "a protected MCP server (sign-in required)"
        raise TunnelError(f"{url} did not answer an MCP initialize: {challenge.message}") from None
    except AppsdkError as problem:
        raise TunnelError(f"{url} did not answer an MCP initialize: {problem.message}", detail=problem.detail) from None


def watch(
    tunnel: Tunnel,
    on_restart: Callable[[TunnelEndpoints, bool], None],
    *,
    interval: float = 0.5,
    stop: threading.Event | None = None,
) -> None:
    """Keep the tunnel up until `stop` is set (or KeyboardInterrupt): restart a dead agent and report
    each restart as on_restart(endpoints, url_changed)."""
    stop = stop or threading.Event()
    while not stop.wait(interval):
        if not tunnel.agent_alive():
            endpoints, changed = tunnel.reopen()
            on_restart(endpoints, changed)
