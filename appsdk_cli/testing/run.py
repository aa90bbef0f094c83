"""`appsdk test`'s capability: pytest run in a child with appsdk's plugin, and its outcome counted.

The child is this interpreter's `python -m pytest`, so the plugin (an entry point of this installation)
is there; pytest's own output goes straight to the terminal, and the counts come back from its JUnit XML
(the file asked for with --junitxml, else a temporary one), which every pytest writes the same way.

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
    smoke: bool = False  # the generated smoke suite ran (no tests of the project's own)
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


def pytest_command(
    path: Path | None,
    pytest_args: list[str],
    *,
    url: str | None,
    stdio: str | None,
    update_snapshots: bool,
    junitxml: Path,
    config_dir: Path,
) -> tuple[list[str], bool]:
    """The child's command line, and whether it runs the smoke suite."""
    import importlib.util

    if importlib.util.find_spec("pytest") is None:
        from appsdk_cli.invocation import pip_install

        raise AppsdkError(f"appsdk test runs pytest, which is not installed here: {pip_install('pytest>=8')}")
    if url and stdio:
        raise UsageError("give either --url or --stdio, not both")
    where = path or Path.cwd()
    if path is not None and not path.exists():
        raise UsageError(f"{path} does not exist; give a project folder or a test file")
    command = [sys.executable, "-m", "pytest"]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        command += ["-p", "appsdk_cli.testing.plugin"]
    smoke = bool(url or stdio) and not has_tests(where)
    if smoke:
        ini = config_dir / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        command += ["-c", str(ini), "--rootdir", str(config_dir), "-p", "no:cacheprovider", str(SMOKE_SUITE)]
    elif path is not None:
        command.append(str(path))
    if url:
        command += ["--appsdk-url", url]
    if stdio:
        command += ["--appsdk-stdio", stdio]
    if update_snapshots:
        command.append("--appsdk-update-snapshots")
    command += [f"--junitxml={junitxml}", *pytest_args]
    return command, smoke


def run_tests(
    path: Path | None,
    pytest_args: list[str],
    *,
    url: str | None = None,
    stdio: str | None = None,
    update_snapshots: bool = False,
    junitxml: Path | None = None,
) -> TestOutcome:
    with tempfile.TemporaryDirectory(prefix="appsdk-test-") as scratch:
        report = junitxml.expanduser().resolve() if junitxml else Path(scratch) / "report.xml"
        if junitxml and not report.parent.is_dir():
            raise UsageError(f"--junitxml {junitxml}: the folder {report.parent} does not exist")
        command, smoke = pytest_command(
            path,
            pytest_args,
            url=url,
            stdio=stdio,
            update_snapshots=update_snapshots,
            junitxml=report,
            config_dir=Path(scratch),
        )
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"} if smoke else None
        try:
            finished = subprocess.run(command, env=env, check=False)
        except KeyboardInterrupt:
            return TestOutcome(2, smoke=smoke)
        outcome = read_report(report, finished.returncode)
        outcome.smoke = smoke
        outcome.junitxml = report if junitxml else None
        return outcome


def read_report(report: Path, pytest_exit: int) -> TestOutcome:
    """The counts and the failures' first lines from pytest's JUnit XML (none: only the exit code)."""
    import xml.etree.ElementTree as ElementTree

    outcome = TestOutcome(pytest_exit)
    try:
        root = ElementTree.parse(report).getroot()
    except (OSError, ElementTree.ParseError):
        return outcome
    for case in root.iter("testcase"):
        name = ".".join(p for p in (case.get("classname"), case.get("name")) if p)
        failed = case.find("failure")
        errored = case.find("error")
        if failed is not None or errored is not None:
            found = failed if failed is not None else errored
            assert found is not None
            if failed is not None:
                outcome.failed += 1
            else:
                outcome.errors += 1
            message = (found.get("message") or found.text or "").strip()
            outcome.failures.append(Failure(name, (message.splitlines() or ["no message"])[0]))
        elif case.find("skipped") is not None:
            outcome.skipped += 1
        else:
            outcome.passed += 1
    for suite in root.iter("testsuite"):
        outcome.seconds += float(suite.get("time") or 0)
    return outcome
