"""`appsdk test`'s capability: pytest run in a child with appsdk's plugin, and its outcome counted.

The child is this interpreter's `python -m pytest`, so the plugin (an entry point of this installation)
is there; pytest's own output goes straight to the terminal, and the counts come back in a JSON file
written by the plugin (--appsdk-summary), so the summary names tests by their pytest ids.

With --url/--stdio and no tests of the project's own, the tests are the generated smoke suite
(smoke_suite/), under an empty configuration of their own so no project setting changes them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.safewrite import write_file

SMOKE_SUITE = Path(__file__).parent / "smoke_suite"
_SKIPPED_FOLDERS = {".venv", "venv", "node_modules", ".git", "__pycache__", "site-packages", "dist", "build"}


@dataclass
class Failure:
    test: str  # the test id
    line: str  # the first line of why


@dataclass
class TestOutcome:
    pytest_exit: int
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    skips: list[Failure] = field(default_factory=list)  # each skipped test and why
    smoke: bool = False  # the generated smoke suite ran (no tests of the project's own)
    details: bool = True  # pytest's output above says why each failed (the summary need not again)
    junitxml: Path | None = None  # the report the caller asked for

    @property
    def exit_code(self) -> int:
        """0 all passed, 1 a test failed (or none ran), 2 pytest refused the command line, 130 interrupted."""
        return {0: 0, 2: 130, 4: 2}.get(self.pytest_exit, 1)


def has_tests(folder: Path) -> bool:
    """Whether the folder holds a pytest test module of its own (test_*.py or *_test.py)."""
    if folder.is_file():
        return folder.suffix == ".py"
    for _root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_FOLDERS and not d.startswith(".")]
        if any(f.endswith(".py") and (f.startswith("test_") or f.endswith("_test.py")) for f in files):
            return True
    return False


PROJECT_FILES = ("pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini", "conftest.py")


def is_project(folder: Path) -> bool:
    """A folder pytest would treat as a project's root: one of its configuration files is there."""
    return any((folder / name).is_file() for name in PROJECT_FILES)


def pytest_command(
    path: Path | None,
    pytest_args: list[str],
    *,
    url: str | None,
    stdio: str | None,
    update_snapshots: bool,
    junitxml: Path | None,
    summary: Path,
    config_dir: Path,
    include_writes: bool = False,
) -> tuple[list[str], bool]:
    """The child's command line, and whether it runs the smoke suite."""
    import importlib.util

    if importlib.util.find_spec("pytest") is None:
        from appsdk_cli.invocation import pip_install

        raise AppsdkError(f"appsdk test runs pytest, which is not installed here: {pip_install('pytest>=8')}")
    if url and stdio:
        raise UsageError("give either --url or --stdio, not both")
    # A test id (tests/test_x.py::test_y[case]) names its file before the "::".
    where = Path(str(path).split("::", 1)[0]) if path is not None else Path.cwd()
    if not where.exists():
        raise UsageError(f"{where} does not exist; give a project folder, a test file or a test id")
    command = [sys.executable, "-m", "pytest"]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        command += ["-p", "appsdk_cli.testing.plugin"]
    if path is None and not is_project(where):
        # Not an app's folder: walking it for tests (a home folder, /tmp) would collect everyone's.
        if not (url or stdio):
            raise UsageError(
                f"{where} is no project folder (no pyproject.toml): run appsdk test in your app's folder, give"
                " its PATH, or give --url URL to smoke-test a server"
            )
        smoke = True
    else:
        smoke = bool(url or stdio) and not has_tests(where)
    if smoke:
        ini = config_dir / "pytest.ini"
        write_file(ini, "[pytest]\n", root=config_dir, sync=False)
        # -v: each case's line names its tool and profile, which is the whole point of a smoke suite.
        # The suite's conftest names each case after the server; the rootdir is where the user ran appsdk
        # test, so pytest shows that name as it is and not as a path to the temporary copy.
        suite = config_dir / "test_widgets.py"
        write_file(suite, (SMOKE_SUITE / "test_widgets.py").read_bytes(), root=config_dir, sync=False)
        write_file(config_dir / "conftest.py", (SMOKE_SUITE / "conftest.py").read_bytes(), root=config_dir, sync=False)
        command += ["-c", str(ini), "--rootdir", str(Path.cwd()), "-p", "no:cacheprovider", "-v", str(suite)]
        if include_writes:
            command.append("--appsdk-include-writes")
    elif path is not None:
        command.append(str(path))
    if url:
        command += ["--appsdk-url", url]
    if stdio:
        command += ["--appsdk-stdio", stdio]
    if update_snapshots:
        command.append("--appsdk-update-snapshots")
    command.append(f"--appsdk-summary={summary}")
    if junitxml is not None:
        command.append(f"--junitxml={junitxml}")
    command += pytest_args
    return command, smoke


def run_tests(
    path: Path | None,
    pytest_args: list[str],
    *,
    url: str | None = None,
    stdio: str | None = None,
    update_snapshots: bool = False,
    junitxml: Path | None = None,
    include_writes: bool = False,
) -> TestOutcome:
    import time

    report = junitxml.expanduser().resolve() if junitxml else None
    if report is not None and not report.parent.is_dir():
        raise UsageError(f"--junitxml {junitxml}: the folder {report.parent} does not exist")
    with tempfile.TemporaryDirectory(prefix="appsdk-test-") as scratch:
        summary = Path(scratch) / "outcomes.json"
        command, smoke = pytest_command(
            path,
            pytest_args,
            url=url,
            stdio=stdio,
            update_snapshots=update_snapshots,
            junitxml=report,
            summary=summary,
            config_dir=Path(scratch),
            include_writes=include_writes,
        )
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"} if smoke else None
        started = time.monotonic()
        try:
            finished = subprocess.run(command, env=env, check=False)
        except KeyboardInterrupt:
            return TestOutcome(2, smoke=smoke)
        outcome = read_outcomes(summary, finished.returncode)
        outcome.seconds = time.monotonic() - started
        outcome.smoke = smoke
        outcome.junitxml = report
        return outcome


def read_outcomes(summary: Path, pytest_exit: int) -> TestOutcome:
    """The counts and the failures' first lines, as the plugin wrote them (none: only the exit code)."""
    import json

    outcome = TestOutcome(pytest_exit)
    try:
        found = json.loads(summary.read_text(encoding="utf-8"))
        tests = found["tests"]
    except (OSError, ValueError, KeyError, TypeError):
        return outcome
    outcome.details = found.get("details") is not False
    for test, found in tests.items():
        kind = found.get("outcome")
        if kind == "passed":
            outcome.passed += 1
        elif kind == "skipped":
            outcome.skipped += 1
            outcome.skips.append(Failure(test, found.get("line") or "no reason given"))
        elif kind in ("failed", "error"):
            if kind == "failed":
                outcome.failed += 1
            else:
                outcome.errors += 1
            outcome.failures.append(Failure(test, found.get("line") or "no message"))
    return outcome
