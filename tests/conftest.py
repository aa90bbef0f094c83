"""Shared helpers: real processes on 127.0.0.1, found by free port, always cleaned up."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import io
import itertools
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from appsdk_cli.scaffold import WidgetFlavor, scaffold

REPO = Path(__file__).resolve().parent.parent

# --- lanes: which tests drive Chromium, third-party programs, or take long --------------------------------
# Applied here rather than in each file, from what a test uses, so a new browser or interop test is marked
# by the fixture it asks for. The quick lane: pytest -m "not browser and not interop and not slow".

BROWSER_MODULES = {
    "test_preview_browser",
    "test_preview_hostapi",
    "test_preview_spec",
    "test_preview_real_apps",
    "test_traffic_panel",
    "test_workbench_browser",
    "test_workbench_auth",
    "test_conformance",
}
INTEROP_MODULES = {
    "test_interop",
    "test_eras_interop",
    "test_auth_interop",
    "test_auth_sdk_example",
    "test_auth_conformance",
    "test_conformance",
    "test_real_servers",
    "test_preview_real_apps",
    "test_react",  # the React template's npm packages and Vite
}
# Files whose every test takes seconds of its own (npm installs, builds, a wheel, long waits by design),
# and the tests that took 15 s or more in a full serial run on a shared 2-core machine (--durations).
SLOW_MODULES = {"test_react", "test_tunnel_lifetimes", "test_dev_lifetimes"}
SLOW_TESTS = {
    "test_wheel_carries_the_scaffolds",
    "test_readme_ci_job_fails_a_pull_request_only_on_a_breaking_change",
    "test_needs_review_pair_passes_and_lists_what_waits_for_review",
    "test_goes_live_pair_passes_with_the_caching_note",
    "test_live_mode_reports_what_path_mode_reports",
    "test_scaffold_contract_round_trips_byte_for_byte",
    "test_next_lines_work_as_typed_in_a_new_terminal",
    "test_foreign_host_is_refused_unless_allowed",
    "test_dev_serves_both_eras_and_sse",
    "test_generated_tests_pass",
}


# First: xdist's worker reads the xdist_group marks (into the node ids) in its own hook of this name.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    grouping = config.pluginmanager.hasplugin("xdist")
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        skip_reasons = " ".join(str(mark.kwargs.get("reason", "")) for mark in item.iter_markers("skipif"))
        if module in BROWSER_MODULES or "browser" in item.fixturenames or "Chromium" in skip_reasons:
            item.add_marker(pytest.mark.browser)
        if module in INTEROP_MODULES or "node_clients" in item.fixturenames:
            item.add_marker(pytest.mark.interop)
        if module in SLOW_MODULES or item.originalname in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        # Under xdist (--dist loadgroup) the tests of a file that share a module-scoped fixture (a Chromium,
        # a server, a conformance run) stay on one worker, so it is set up once, not once per worker.
        if grouping and any(defs[-1].scope == "module" for defs in item._fixtureinfo.name2fixturedefs.values() if defs):
            item.add_marker(pytest.mark.xdist_group(module))
            # xdist sets `loadgroup` on its workers only; a run without -n has no such option.
            if getattr(config.option, "loadgroup", False) and hasattr(item, "_id"):
                # xdist 3.8 suffixes the group to item._nodeid, which pytest 9.2 no longer reads (it reads
                # item._id), so the mark alone groups nothing: the suffix is written where pytest reads it.
                from _pytest.nodeid import coerce_node_id

                item._id = coerce_node_id(f"{item.nodeid}@{module}")


# --- a browser test that fails says what its page showed ------------------------------------------------

_PAGE_DUMP_LIMIT = 8000
# Each frame of the page: its address, and what a host page and a widget's view hold. Run inside each frame,
# so it reads only that frame's own globals; anything missing is left out.
_FRAME_FACTS = """() => {
  const facts = { readyState: document.readyState };
  const preview = window.appsdkPreview;
  if (preview) {
    const state = preview.state ? preview.state() : null;
    facts.host = {
      settled: preview.settled,
      bridge: preview.bridge,
      problems: preview.problems ? preview.problems() : null,
      state: state && { profile: state.profile, displayMode: state.displayMode, noUi: state.noUi },
      log: (preview.log || []).slice(-25).map((e) => `${e.kind} ${e.level}: ${e.message}`),
    };
  }
  if (window.appsdkWorkbench && window.appsdkWorkbench.runs) {
    facts.runs = window.appsdkWorkbench.runs()
      .map((r) => ({ id: r.id, status: r.status, calls: r.calls, widget: r.widget }));
  }
  if (!preview && !window.appsdkWorkbench && document.body) facts.text = document.body.innerText.slice(0, 400);
  return facts;
}"""


def _page_facts(page) -> str:
    import json

    lines = []
    for frame in page.frames:
        try:
            facts = json.dumps(frame.evaluate(_FRAME_FACTS), default=str)
        except Exception as error:  # a frame navigating or detached as we look
            facts = f"(unreadable: {str(error).splitlines()[0]})"
        lines.append(f"{frame.url[:160]}\n  {facts}")
    return "\n".join(lines)[-_PAGE_DUMP_LIMIT:]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    page = getattr(item, "funcargs", {}).get("workbench_page")
    if report.when != "call" or not report.failed or page is None:
        return
    try:
        facts = _page_facts(page)
    except Exception as error:  # the page itself gone: the failure says enough
        facts = f"(the page could not be read: {error})"
    report.sections.append(("what the page showed when the test failed", facts))


# --- no process outlives the run: not on failure, not on Ctrl-C, not on SIGTERM -----------------------------


class _Sweep:
    """The processes this pytest started, as last seen, swept at exit.

    Looked at again when a signal arrives, before anything dies: under xdist a worker that is stopped
    mid-test takes no fixture teardown with it, and its servers, orphaned, are no longer our descendants
    by then. A process is remembered with its start time, so a pid the kernel has since given to someone
    else is never signalled."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[str, int]] = {}  # pid -> (start time, process group)

    @staticmethod
    def _started(pid: int) -> str | None:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):
            return None

    def look(self) -> None:
        from appsdk_cli.proctree import descendants

        for pid in descendants(os.getpid()):
            started = self._started(pid)
            with contextlib.suppress(OSError):
                if started is not None:
                    self.seen[pid] = (started, os.getpgid(pid))

    def end(self) -> None:
        """SIGTERM, then SIGKILL, every process still running that this pytest started, with its process
        group (fixture servers run in sessions of their own, so what they started goes with them)."""
        self.look()
        own_group = os.getpgid(0)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            alive = [pid for pid, (started, _) in self.seen.items() if self._started(pid) == started]
            if not alive:
                return
            for group in {self.seen[pid][1] for pid in alive} - {own_group}:
                with contextlib.suppress(OSError):
                    os.killpg(group, sig)
            for pid in alive:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 3
            while sig == signal.SIGTERM and time.monotonic() < deadline and any(pid_alive(pid) for pid in alive):
                time.sleep(0.05)


_SWEEP = _Sweep()


def _interrupted(signum, frame) -> None:
    # As Ctrl-C: pytest stops, tears its fixtures down (stopping their servers) and exits; atexit sweeps
    # what is left, including what a worker stopped mid-test left orphaned.
    _SWEEP.look()
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config) -> None:
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGINT, _interrupted)
    atexit.register(_SWEEP.end)


def pytest_unconfigure(config) -> None:
    _SWEEP.end()


# --- one machine, several pytest workers: ports and installs they must not share ------------------------

WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
# Below Linux's ephemeral range (32768+), where no client connection takes a port from under a server;
# a slice to each worker, so two workers never pick the same one, walked from a random start (other runs
# on the machine) and round robin (a port comes back only after the whole slice, so no test meets the
# previous tenant's TIME_WAIT or remembered era).
_SLICE = 2000
_FIRST = 16000 + _SLICE * (WORKER % 8)
_START = random.randrange(_SLICE)
_PORTS = itertools.cycle([*range(_FIRST + _START, _FIRST + _SLICE), *range(_FIRST, _FIRST + _START)])


def run_owning_port_8000(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run `command` where 127.0.0.1:8000 (appsdk's default URL) is its own: in a network namespace of its
    own (unshare -rn) where one can be made, else on this machine's port 8000 under a lock, skipping when
    another process holds it."""
    isolated = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$0" "$@"']
    options = {"capture_output": True, "text": True, **kwargs}
    if shutil.which("unshare") and shutil.which("ip") and subprocess.run([*isolated, "true"]).returncode == 0:
        return subprocess.run([*isolated, *command], **options)  # type: ignore[call-overload]
    with machine_lock("appsdk-port-8000"), socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", 8000))
        except OSError:
            pytest.skip("port 8000 is taken and no network namespace can be made (unshare -rn)")
        probe.close()
        return subprocess.run(command, **options)  # type: ignore[call-overload]


@contextlib.contextmanager
def machine_lock(name: str) -> Iterator[None]:
    """Held while one worker installs something the others then use (a venv, node_modules, a build)."""
    with open(Path(tempfile.gettempdir()) / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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
def appsdk_home_of_the_test(tmp_path_factory, monkeypatch) -> Iterator[Path]:
    """Each test its own APPSDK_HOME: a URL's remembered era or tool list (ports are reused over a run)
    never reaches another test's server. A browser a --screenshot kept there ends with the test: removing
    its socket file stops it (appsdk_cli/browser/keptbrowser.py)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("APPSDK_HOME", str(home))
    yield home
    for kept in home.glob("browser-*.sock"):
        kept.unlink(missing_ok=True)


def free_port() -> int:
    """A port nothing listens on, from this worker's own range (the next free one, round robin)."""
    for port in itertools.islice(_PORTS, _SLICE):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port in this worker's range")


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


def appsdk_in_process(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
    """The `appsdk` command line run inside this process: the same main(), exit code, stdout and stderr as
    `appsdk(...)`, without starting an interpreter. For the many one-line error cases; the real child keeps
    a test for each mode and exit code."""
    from appsdk_cli.cli import main

    out, err = io.StringIO(), io.StringIO()
    code: int = 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["appsdk", *args])
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        if cwd is not None:
            patch.chdir(cwd)
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        try:
            main()
        except SystemExit as exited:
            code = exited.code if isinstance(exited.code, int) else (0 if exited.code is None else 1)
    return subprocess.CompletedProcess(["appsdk", *args], code, out.getvalue(), err.getvalue())


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
        # A group of its own: an interrupted run ends the server and whatever it started (killpg).
        start_new_session=True,
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


class ServedScaffolds:
    """One `python server.py` of the scaffolded book-club per widget flavor, started when first asked for
    and kept for the session: the scaffold keeps no state, and the tests that use it only read from it."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._servers: dict[WidgetFlavor, RunningServer] = {}

    def of(self, flavor: WidgetFlavor) -> RunningServer:
        if flavor not in self._servers:
            self._servers[flavor] = serve_project(
                scaffold("book-club", self._folder / flavor.name.lower(), flavor=flavor).path
            )
        server = self._servers[flavor]
        assert server.process.poll() is None, f"the shared {flavor.value} scaffold server exited"
        return server

    def stop(self) -> None:
        for server in self._servers.values():
            stop(server.process)


@pytest.fixture(scope="session")
def served_scaffolds(tmp_path_factory) -> Iterator[ServedScaffolds]:
    served = ServedScaffolds(tmp_path_factory.mktemp("served-scaffolds"))
    yield served
    served.stop()


@pytest.fixture
def book_club_server(request, book_club: Path, served_scaffolds: ServedScaffolds) -> RunningServer:
    """The scaffold of book_club's flavor, served (the session's one: the same files as book_club's)."""
    return served_scaffolds.of(request.node.callspec.params["book_club"])


@pytest.fixture
def app_server(served_scaffolds: ServedScaffolds) -> RunningServer:
    """The scaffolded app (MCP Apps flavor) served by `python server.py`, for tests of other commands."""
    return served_scaffolds.of(WidgetFlavor.MCP_APPS)


FIXTURES = Path(__file__).resolve().parent / "fixtures"


def serve_fixture(script: str, *args: str, env: dict[str, str] | None = None) -> RunningServer:
    """Serve a tests/fixtures server over HTTP on a free port: `python SCRIPT http PORT ARGS...`."""
    port = free_port()
    return serve([sys.executable, str(FIXTURES / script), "http", str(port), *args], port, env=env)


# The eras and workbench fixture servers keep no state a test could trip over (cancelled calls are told
# apart by their seconds), so each starts once per session, not once per file that uses it.
@pytest.fixture(scope="session")
def eras_app() -> Iterator[RunningServer]:
    """tests/fixtures/eras_server.py: stateless streamable HTTP with JSON answers, both eras."""
    server = serve_fixture("eras_server.py")
    yield server
    stop(server.process)


@pytest.fixture(scope="session")
def eras_stateful() -> Iterator[RunningServer]:
    """tests/fixtures/eras_server.py with sessions and event-stream answers (2025 elicitation)."""
    server = serve_fixture("eras_server.py", "--stateful")
    yield server
    stop(server.process)


@pytest.fixture(scope="session")
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
    with machine_lock("appsdk-tests-interop-npm"):
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

    from appsdk_cli.browser.chromium import CHROMIUM_FLAGS

    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')"
    )
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium-headless-shell)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_FLAGS))
        yield launched
        launched.close()


@pytest.fixture
def workbench_page(browser) -> Iterator[object]:
    """A page of the workbench at the README's 1280×800 that fails the test if the page threw (also
    where a test file's own `page` fixture is another one)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, f"the workbench page threw: {errors}"


@pytest.fixture
def page(workbench_page) -> object:
    """The workbench page, under the name most browser tests use."""
    return workbench_page


@pytest.fixture
def trip_bench(trip_app: RunningServer) -> Iterator[object]:
    """A workbench on the trip planner (tests/fixtures/workbench_app.py)."""
    from appsdk_cli.connection import Target
    from appsdk_cli.workbench import Workbench

    with Workbench(Target(url=trip_app.url)) as bench:
        yield bench
