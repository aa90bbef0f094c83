"""Shared helpers: real processes on 127.0.0.1, found by free port, always cleaned up."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from appsdk_cli.scaffold import WidgetFlavor, scaffold

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def appsdk_home_of_the_run(tmp_path_factory) -> Iterator[Path]:
    """The suite never reads or writes the developer's ~/.appsdk; module-wide servers get this one."""
    home = tmp_path_factory.mktemp("appsdk-home")
    previous = os.environ.get("APPSDK_HOME")
    os.environ["APPSDK_HOME"] = str(home)
    yield home
    if previous is None:
        os.environ.pop("APPSDK_HOME", None)
    else:
        os.environ["APPSDK_HOME"] = previous


@pytest.fixture(autouse=True)
def appsdk_home_of_the_test(tmp_path_factory, monkeypatch) -> Path:
    """Each test its own APPSDK_HOME: a URL's remembered era or tool list (ports are reused over a run)
    never reaches another test's server."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("APPSDK_HOME", str(home))
    return home


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen | None = None, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"process exited with {process.returncode} before port {port} opened")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listened on port {port} within {timeout} s")


def stop(process: subprocess.Popen, timeout: float = 10.0) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone for our purposes once its state is Z.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def appsdk(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60):
    """Run the real `appsdk` command line in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "appsdk_cli", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@dataclass
class RunningServer:
    process: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


def serve(
    command: list[str], port: int, *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> RunningServer:
    """Start a server process that will listen on `port`; wait until it does (its stderr on failure)."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
    except AssertionError:
        stop(process)
        raise AssertionError(process.stderr.read().decode()) from None
    return RunningServer(process, port)


def serve_project(project: Path) -> RunningServer:
    """Start `python server.py` in a scaffolded project, as its README says, on a free port."""
    port = free_port()
    return serve([sys.executable, "server.py"], port, cwd=project, env={"PORT": str(port)})


@pytest.fixture(params=[WidgetFlavor.MCP_APPS, WidgetFlavor.SKYBRIDGE], ids=["mcp-apps", "skybridge"])
def book_club(request, tmp_path: Path) -> Path:
    """A freshly scaffolded book-club app, in each widget flavor."""
    return scaffold("book-club", tmp_path, flavor=request.param).path


@pytest.fixture
def book_club_server(book_club: Path) -> Iterator[RunningServer]:
    server = serve_project(book_club)
    yield server
    stop(server.process)


@pytest.fixture
def app_server(tmp_path: Path) -> Iterator[RunningServer]:
    """The scaffolded app (MCP Apps flavor) served by `python server.py`, for tests of other commands."""
    server = serve_project(scaffold("book-club", tmp_path).path)
    yield server
    stop(server.process)


FIXTURES = Path(__file__).resolve().parent / "fixtures"


def serve_fixture(script: str, *args: str, env: dict[str, str] | None = None) -> RunningServer:
    """Serve a tests/fixtures server over HTTP on a free port: `python SCRIPT http PORT ARGS...`."""
    port = free_port()
    return serve([sys.executable, str(FIXTURES / script), "http", str(port), *args], port, env=env)


@pytest.fixture(scope="module")
def eras_app() -> Iterator[RunningServer]:
    """tests/fixtures/eras_server.py: stateless streamable HTTP with JSON answers, both eras."""
    server = serve_fixture("eras_server.py")
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def eras_stateful() -> Iterator[RunningServer]:
    """tests/fixtures/eras_server.py with sessions and event-stream answers (2025 elicitation)."""
    server = serve_fixture("eras_server.py", "--stateful")
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def trip_app() -> Iterator[RunningServer]:
    """tests/fixtures/workbench_app.py: every kind of form field, a widget, files and slow tools."""
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "workbench_app.py"), str(port)], port)
    yield server
    stop(server.process)


# --- the apps registry and `appsdk app-server` ---------------------------------------------------------


@dataclass
class Fleet:
    """tests/fixtures/apps_fleet.py: small MCP apps in one process, one per path."""

    process: subprocess.Popen
    port: int

    def url(self, app: str) -> str:
        return f"http://127.0.0.1:{self.port}/{app}/mcp"


@pytest.fixture(scope="session")
def fleet() -> Iterator[Fleet]:
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "apps_fleet.py"), str(port), "--slow-seconds", "30"], port)
    yield Fleet(server.process, port)
    stop(server.process)


def dead_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    return f"http://127.0.0.1:{free_port()}/mcp"


@dataclass
class AppsHome:
    """An APPSDK_HOME and a working folder outside any project, for one test."""

    home: Path
    cwd: Path

    @property
    def env(self) -> dict[str, str]:
        return {"APPSDK_HOME": str(self.home)}

    def register(self, apps: dict[str, str], **names: str) -> None:
        """Write apps.toml by hand (the tests of `apps add` check appsdk's own writer)."""
        lines = []
        for app_id, url in apps.items():
            lines += [f"[apps.{app_id}]", f'url = "{url}"', f'name = "{names.get(app_id, app_id.title())}"', ""]
        (self.home / "apps.toml").write_text("\n".join(lines), encoding="utf-8")

    def config(self, text: str, name: str = "config.toml") -> None:
        (self.home / name).write_text(text, encoding="utf-8")

    def run(self, *args: str, timeout: float = 60):
        return appsdk(*args, cwd=self.cwd, env=self.env, timeout=timeout)


@pytest.fixture
def apps_home(tmp_path: Path) -> AppsHome:
    home = tmp_path / "home"
    cwd = tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    return AppsHome(home, cwd)


# --- the independent Node clients (tests/interop) ------------------------------------------------------

INTEROP = Path(__file__).resolve().parent / "interop"
INSPECTOR = (
    INTEROP / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
)


@pytest.fixture(scope="session")
def node_clients() -> Path:
    if not INSPECTOR.is_file() or not (INTEROP / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        # `npm install`, not `npm ci`: an optional dependency in this tree is missing from some registries.
        installed = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund"], cwd=INTEROP, capture_output=True, text=True, timeout=600
        )
        assert installed.returncode == 0, installed.stdout + installed.stderr
    return INTEROP


@pytest.fixture(scope="module")
def counter_app() -> Iterator[RunningServer]:
    """tests/fixtures/preview_app: a counter whose widget calls tools, keeps state and trips its CSP."""
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "preview_app" / "server.py"), str(port)], port)
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's Chromium, headless, through Playwright, with the preview's own flags: one per test file."""
    from preview_helpers import CHROMIUM

    from appsdk_cli.preview.screenshot import CHROMIUM_FLAGS

    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')"
    )
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium-headless-shell)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_FLAGS))
        yield launched
        launched.close()
