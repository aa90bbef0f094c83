"""appsdk's pytest plugin (the `pytest11` entry point `appsdk`): the app under test and its rendered widgets.

Fixtures:
    app                 the app under test, started once per session (`--appsdk-url`, `--appsdk-stdio`,
                        $APPSDK_URL, else the project's `[tool.appsdk] app`, served by a child process)
    render_widget       render_widget(tool, arguments) or render_widget(tool, data="state.json") → a
                        RenderedWidget (testing/widget.py) in the host profile, theme, mode and device
                        of the test's `hosts` case, or those given as keywords
Marker:
    @pytest.mark.hosts(profiles=[...], themes=[...], modes=[...], devices=[...])   one test per case
Options:
    --appsdk-url URL, --appsdk-stdio CMD, --appsdk-update-snapshots

pytest imports this module when it starts, in every project with appsdk installed: so it imports pytest
and the standard library only, and appsdk's host, client and Playwright when a fixture is first used.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

_WRITTEN = pytest.StashKey[list]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("appsdk", "appsdk: the app under test and its widgets")
    group.addoption("--appsdk-url", default=None, help="test the MCP server at this URL instead of the project's app")
    group.addoption("--appsdk-stdio", default=None, help="test the MCP server this command starts on stdio")
    group.addoption(
        "--appsdk-include-writes",
        action="store_true",
        default=False,
        help="the smoke suite calls tools that do not say readOnlyHint: true too",
    )
    # `appsdk test`'s own: where each test's outcome goes, as JSON (not in --help).
    group.addoption("--appsdk-summary", default=None, help=argparse.SUPPRESS)
    group.addoption(
        "--appsdk-update-snapshots",
        action="store_true",
        default=False,
        help="rewrite the widget snapshots in __snapshots__/ with what renders now",
    )


class _Outcomes:
    """Each test's outcome and first line of why, written as JSON at the end for `appsdk test`'s summary.

    Each failure is said once: pytest's FAILURES and ERRORS sections say why, and `appsdk test`'s summary
    lists the tests that failed after them, so pytest's own short summary of failures and errors (the same
    ids with their message cut to the terminal's width) is left out. With pytest's sections turned off
    (--tb=no), the summary says why instead (`details`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tests: dict[str, dict[str, str]] = {}
        self.details = True

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.details = session.config.getoption("tbstyle", "auto") != "no"
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if self.details and isinstance(getattr(reporter, "reportchars", None), str):
            reporter.reportchars = "".join(char for char in reporter.reportchars if char not in "fE")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        known = self.tests.get(report.nodeid)
        if report.failed:
            if known is None or known["outcome"] not in ("failed", "error"):
                outcome = "failed" if report.when == "call" else "error"
                self.tests[report.nodeid] = {"outcome": outcome, "line": _first_line(report)}
        elif report.skipped and known is None:
            self.tests[report.nodeid] = {"outcome": "skipped", "line": _first_line(report)}
        elif report.when == "call" and report.passed and known is None:
            self.tests[report.nodeid] = {"outcome": "passed", "line": ""}

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        from appsdk_cli.safewrite import write_file  # this plugin imports only pytest at load

        found = {"exit": int(exitstatus), "tests": self.tests, "details": self.details}
        write_file(self.path, json.dumps(found), root=self.path.parent)


def _first_line(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):  # a skip: (file, line, reason)
        text = str(report.longrepr[2])
    else:
        crash = getattr(report.longrepr, "reprcrash", None)
        text = str(crash.message) if crash is not None else str(report.longrepr or "")
    lines = text.strip().splitlines()
    return (lines[0] if lines else "").removeprefix("Failed: ").removeprefix("Skipped: ")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hosts(*profiles, profiles=, themes=, modes=, devices=): render the test's widget in each host case (appsdk)",
    )
    config.stash[_WRITTEN] = []
    summary = config.getoption("appsdk_summary", None)
    if summary:
        config.pluginmanager.register(_Outcomes(Path(summary)), "appsdk-outcomes")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("hosts")
    if marker is not None and "appsdk_host" in metafunc.fixturenames:
        from appsdk_cli.testing.matrix import host_cases

        try:
            cases = host_cases(*marker.args, **marker.kwargs)
        except ValueError as problem:
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: {problem}") from None
        metafunc.parametrize("appsdk_host", cases, ids=[case.id for case in cases])
    if "appsdk_smoke_case" in metafunc.fixturenames:
        _smoke_cases(metafunc)


def _smoke_cases(metafunc: pytest.Metafunc) -> None:
    """One case per widget tool and profile (smoke.smoke_cases, skips saying why included); a server that
    cannot be listed is one failing case saying so (a failed run, exit 1, not pytest's usage error)."""
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.testing.smoke import SmokeCase, smoke_cases

    config = metafunc.config
    try:
        tools = _app(config).tools()
    except AppsdkError as problem:
        metafunc.parametrize("appsdk_smoke_case", [SmokeCase("server", "", problem=str(problem))], ids=["server"])
        return
    cases = smoke_cases(tools, include_writes=bool(config.getoption("appsdk_include_writes")))
    params = [pytest.param(c, id=c.id, marks=[pytest.mark.skip(reason=c.skip)] if c.skip else []) for c in cases]
    metafunc.parametrize("appsdk_smoke_case", params)


# --- the app, shared by the session (collection included: the smoke suite lists its tools) ----------------

_APP = pytest.StashKey[Any]()
_HARNESS = pytest.StashKey[Any]()


def _app(config: pytest.Config) -> Any:
    if _APP not in config.stash:
        from appsdk_cli.errors import AppsdkError
        from appsdk_cli.testing.app import AppLocation, start_app

        try:
            location = AppLocation.of(
                Path(str(config.rootpath)), url=config.getoption("appsdk_url"), stdio=config.getoption("appsdk_stdio")
            )
            config.stash[_APP] = start_app(location)
        except AppsdkError as problem:
            config.stash[_APP] = problem
    found = config.stash[_APP]
    if isinstance(found, Exception):
        raise found
    return found


def pytest_unconfigure(config: pytest.Config) -> None:
    harness = config.stash.get(_HARNESS, None)
    if harness is not None:
        harness.close()
    app = config.stash.get(_APP, None)
    if app is not None and not isinstance(app, Exception):
        app.close()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    written = config.stash.get(_WRITTEN, [])
    if not written:
        return
    terminalreporter.section("appsdk snapshots")
    for path, why in written:
        terminalreporter.write_line(f"{why} snapshot written: {_shown(path)} (commit it; later runs compare with it)")


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


@pytest.fixture(scope="session")
def app(pytestconfig: pytest.Config) -> Any:
    """The app under test (appsdk_cli.testing.app.App): list_tools(), call_tool(), read_resource(), in_era()."""
    from appsdk_cli.errors import AppsdkError

    try:
        return _app(pytestconfig)
    except AppsdkError as problem:
        failed = str(problem)
    pytest.fail(failed, pytrace=False)


@pytest.fixture
def appsdk_host() -> Any:
    """The host case of a `hosts`-marked test (the default host otherwise: chatgpt, light, inline, desktop)."""
    from appsdk_cli.testing.matrix import HostCase

    return HostCase()


@pytest.fixture(scope="session")
def appsdk_harness(pytestconfig: pytest.Config) -> Any:
    """The session's host and browser (testing/harness.py); skips, naming what to install, without Chromium."""
    from appsdk_cli.testing.harness import BrowserMissing, Harness, browser_requirements

    try:
        browser_requirements()
        missing = None
    except BrowserMissing as problem:
        missing = str(problem)
    if missing is not None:
        pytest.skip(missing)
    if _HARNESS not in pytestconfig.stash:
        from appsdk_cli.errors import AppsdkError

        try:
            tested = _app(pytestconfig)
        except AppsdkError as problem:
            tested = str(problem)
        if isinstance(tested, str):
            pytest.fail(tested, pytrace=False)
        pytestconfig.stash[_HARNESS] = Harness(tested)
    return pytestconfig.stash[_HARNESS]


@pytest.fixture
def render_widget(request: pytest.FixtureRequest, appsdk_harness: Any, appsdk_host: Any) -> Any:
    """render_widget(tool, arguments=None, *, data=None, structured_content=None, content=None, meta=None,
    profile=None, theme=None, locale="en-US", display_mode=None, device=None, allow_problems=False).

    Calls the tool and renders its widget; or, with `data` (a JSON file beside the test holding
    toolInput, structuredContent, content and _meta) or `structured_content`, renders exactly that
    without calling the tool. Host settings default to the test's `hosts` case. Each widget gets a clean
    browser page (a kept one, reset: no storage or state of the test before), released when the test ends."""
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.testing.rendering import Rendering
    from appsdk_cli.testing.snapshots import SnapshotPolicy

    rendered: list[Any] = []
    config = request.config
    test_file = Path(str(request.node.path))

    def written(path: Path, why: str) -> None:
        config.stash[_WRITTEN].append((path, why))

    def render(
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        data: str | Path | None = None,
        structured_content: dict[str, Any] | None = None,
        content: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        profile: str | None = None,
        theme: str | None = None,
        locale: str = "en-US",
        display_mode: str | None = None,
        device: str | None = None,
        allow_problems: bool = False,
    ) -> Any:
        given = structured_content is not None or content is not None or meta is not None
        if data is not None:
            state = _read_state(test_file.parent / data)
            arguments = state.get("toolInput", arguments)
            structured_content = state.get("structuredContent", structured_content)
            content = state.get("content", content)
            meta = state.get("_meta", meta)
            given = True
        rendering = Rendering(
            tool=tool,
            arguments=dict(arguments or {}),
            structured_content=structured_content,
            content=content,
            meta=meta,
            call=not given,
            profile=profile or appsdk_host.profile,
            theme=theme or appsdk_host.theme,
            locale=locale,
            display_mode=display_mode or appsdk_host.display_mode,
            device=device or appsdk_host.device,
            allow_problems=allow_problems,
        )
        policy = SnapshotPolicy.for_test(
            test_file,
            request.node.name,
            update=bool(config.getoption("appsdk_update_snapshots")),
            written=written,
        )
        policy.fail = lambda message: pytest.fail(message, pytrace=False)
        try:
            widget = appsdk_harness.render(rendering, snapshots=policy)
        except AppsdkError as problem:
            failed = str(problem)  # failed outside the except, so pytest shows the one line, not a chain
        else:
            rendered.append(widget)
            return widget
        pytest.fail(failed, pytrace=False)

    yield render
    for widget in rendered:
        widget.close()


def _read_state(path: Path) -> dict[str, Any]:
    """A widget state kept beside the test: {"toolInput", "structuredContent", "content", "_meta"}."""
    loaded: Any = None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
        why = (
            None
            if isinstance(loaded, dict)
            else "must hold a JSON object (toolInput, structuredContent, content, _meta)"
        )
    except OSError as problem:
        why = f"cannot be read: {problem.strerror or problem}"
    except json.JSONDecodeError as problem:
        why = f"is not JSON: {problem}"
    if why is not None:
        pytest.fail(f"the widget data {path} {why}", pytrace=False)
    return loaded
