"""`appsdk check`'s capability: run every rule family over what a server sends, return a report.

What a server sends is read by snapshot/ (live, or the app imported in a child process); the rules
only judge it. Drivable without the CLI:

    from appsdk_cli.checks import check_path, check_live
    report = check_path(Path("book-club"))          # imports the app in a child process
    report = check_live(Target(url="http://127.0.0.1:8000/mcp"))

Rule families, one module each (the digit after APPS): 1 links.py, 2 widgets.py, 3 tools.py,
4 outputs.py, 5 csp.py, 6 schemas.py, 7 auth.py, 8 eras.py, 0 skills.py (Skills over MCP).
Each exports RULES and check(snapshot) -> findings.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.checks import auth, csp, eras, links, outputs, schemas, skills, tools, widgets
from appsdk_cli.checks.model import CheckReport, Finding, Rule, Severity
from appsdk_cli.errors import AppsdkError
from appsdk_cli.snapshot.model import Snapshot

if TYPE_CHECKING:
    from appsdk_cli.connection import Target
    from appsdk_cli.project import AppTarget
    from appsdk_cli.snapshot.live import CallWatcher
    from appsdk_cli.snapshot.source import Source

__all__ = [
    "RULES",
    "CheckReport",
    "Finding",
    "Rule",
    "Severity",
    "check_live",
    "check_path",
    "check_source",
    "run_rules",
]

FAMILIES: tuple[tuple[tuple[Rule, ...], Callable[[Snapshot], Iterator[Finding]]], ...] = (
    (links.RULES, links.check),
    (widgets.RULES, widgets.check),
    (tools.RULES, tools.check),
    (outputs.RULES, outputs.check),
    (csp.RULES, csp.check),
    (schemas.RULES, schemas.check),
    (auth.RULES, auth.check),
    (eras.RULES, eras.check),
    (skills.RULES, skills.check),
)
RULES: tuple[Rule, ...] = tuple(rule for rules, _ in FAMILIES for rule in rules)

_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1}


def run_rules(
    snapshot: Snapshot, *, strict: bool = False, project: Path | None = None, app: AppTarget | None = None
) -> CheckReport:
    """Every rule over one snapshot (and the project's files, when known); errors first, then by rule ID and target.

    `app` is the app's code in the project (default: the project's [tool.appsdk] app), so a fix can name
    its line."""
    findings = [finding for _, check in FAMILIES for finding in check(snapshot)]
    if project is not None:
        findings += widgets.build_findings(project)
        findings += skills.folder_findings(project, snapshot)
        if app is None:
            from appsdk_cli.project import app_target

            with contextlib.suppress(AppsdkError):
                app = app_target(project)
    findings = csp.located(findings, app)
    findings.sort(key=lambda f: (_SEVERITY_ORDER[f.severity], f.rule.id, f.target))
    return CheckReport(snapshot, findings, strict=strict, app=app)


def check_path(
    project: Path,
    *,
    timeout: float = 30.0,
    call_tools: bool = True,
    strict: bool = False,
    module: str | None = None,
) -> CheckReport:
    """PATH mode: import the project's app in a child process and check it in memory.

    The app is [tool.appsdk] app (default server:mcp); `module` names another file of the project
    (`appsdk check other.py`), whose server object is then expected as `mcp`.
    """
    from appsdk_cli.snapshot.local import collect_path
    from appsdk_cli.snapshot.source import path_app

    app = path_app(project, module)
    snapshot = collect_path(app, timeout=timeout, call_tools=call_tools)
    return run_rules(snapshot, strict=strict, project=app.project, app=app)


def check_live(
    target: Target,
    *,
    call_tools: bool = True,
    strict: bool = False,
    project: Path | None = None,
    calling: CallWatcher | None = None,
) -> CheckReport:
    """Live mode: check what a running server really sends (and, for this project's `appsdk dev`, its files).
    `calling(name)` is entered around each tool call (see snapshot.live.collect_live)."""
    from appsdk_cli.snapshot.live import collect_live

    snapshot = collect_live(target, call_tools=call_tools, calling=calling)
    return run_rules(snapshot, strict=strict, project=project)


def check_source(
    source: Source,
    *,
    timeout: float,
    call_tools: bool = True,
    strict: bool = False,
    calling: CallWatcher | None = None,
) -> CheckReport:
    if source.mode == "live":
        assert source.target is not None
        return check_live(source.target, call_tools=call_tools, strict=strict, project=source.project, calling=calling)
    assert source.project is not None
    return check_path(source.project, timeout=timeout, call_tools=call_tools, strict=strict, module=source.app)
