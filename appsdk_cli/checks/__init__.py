"""`appsdk check`'s capability: collect what a server sends, run every rule family, return a report.

Drivable without the CLI:

    from appsdk_cli.checks import check_path, check_live
    report = check_path(Path("book-club"))          # imports the app in a child process
    report = check_live(Target(url="http://127.0.0.1:8000/mcp"))

Rule families, one module each (the digit after APPS): 1 links.py, 2 widgets.py, 3 tools.py,
4 outputs.py, 5 csp.py, 6 schemas.py, 7 auth.py, 8 eras.py. Each exports RULES and check(snapshot) -> findings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.checks import auth, csp, eras, links, outputs, schemas, tools, widgets
from appsdk_cli.checks.model import CheckReport, Finding, Rule, Severity, Snapshot

if TYPE_CHECKING:
    from appsdk_cli.remote import Target

__all__ = [
    "RULES",
    "CheckReport",
    "Finding",
    "Rule",
    "Severity",
    "Snapshot",
    "check_live",
    "check_path",
    "check_source",
    "choose_source",
    "collect_source",
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
)
RULES: tuple[Rule, ...] = tuple(rule for rules, _ in FAMILIES for rule in rules)

_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1}


def run_rules(snapshot: Snapshot, *, strict: bool = False, project: Path | None = None) -> CheckReport:
    """Every rule over one snapshot (and the project's files, when known); errors first, then by rule ID and target."""
    findings = [finding for _, check in FAMILIES for finding in check(snapshot)]
    if project is not None:
        findings += widgets.build_findings(project)
    findings.sort(key=lambda f: (_SEVERITY_ORDER[f.severity], f.rule.id, f.target))
    return CheckReport(snapshot, findings, strict=strict)


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
    from appsdk_cli.checks.local import collect_path
    from appsdk_cli.project import AppTarget, app_target

    app = app_target(project)
    if module and module != app.module:
        app = AppTarget(app.project, module, "mcp", None)
    return run_rules(collect_path(app, timeout=timeout, call_tools=call_tools), strict=strict, project=app.project)


def check_live(
    target: Target, *, call_tools: bool = True, strict: bool = False, project: Path | None = None
) -> CheckReport:
    """Live mode: check what a running server really sends (and, for this project's `appsdk dev`, its files)."""
    from appsdk_cli.checks.live import collect_live

    return run_rules(collect_live(target, call_tools=call_tools), strict=strict, project=project)


@dataclass(frozen=True)
class Source:
    """Where a check looks: a running server (live) or a project imported in memory (path)."""

    mode: str  # "live" or "path"
    target: Target | None = None
    project: Path | None = None
    app: str | None = None  # module:attr override, when PATH names a .py file


def choose_source(
    path: Path | None,
    url: str | None,
    *,
    timeout: float,
    cwd: Path | None = None,
    token: str | None = None,
    protocol: str = "auto",
) -> Source:
    """--url or PATH when given; else $APPSDK_URL, else this project's running `appsdk dev` (live);
    else PATH mode on the current folder. The same rule as `appsdk call` (connection.find_server), with
    PATH mode in place of the default URL: code on disk is a better guess than a server that may not be
    running."""
    from appsdk_cli.connection import Target, find_server
    from appsdk_cli.errors import UsageError
    from appsdk_cli.project import find_project

    if path is not None and url:
        raise UsageError("give either PATH (check the code) or --url (check a running server), not both")
    if token is not None and path is not None:
        raise UsageError("--token goes with a running server (--url), not with PATH")
    if path is not None:
        if path.is_file() and path.suffix == ".py":
            return Source("path", project=path.resolve().parent, app=path.stem)
        return Source("path", project=find_project(path))
    here = cwd or Path.cwd()
    location = find_server(url, here)
    if location is None:
        return Source("path", project=find_project(here))
    target = Target(url=location.url, source=location.source, timeout=timeout, token=token, protocol=protocol)
    # The running `appsdk dev` is this project's, so its files on disk are checked too.
    return Source("live", target=target, project=find_project(here) if location.source == ".appsdk/dev.json" else None)


def check_source(source: Source, *, timeout: float, call_tools: bool = True, strict: bool = False) -> CheckReport:
    if source.mode == "live":
        assert source.target is not None
        return check_live(source.target, call_tools=call_tools, strict=strict, project=source.project)
    assert source.project is not None
    return check_path(source.project, timeout=timeout, call_tools=call_tools, strict=strict, module=source.app)


def collect_source(source: Source, *, timeout: float, call_tools: bool = True) -> Snapshot:
    """The Snapshot alone, no rules run (what `appsdk snapshot` records)."""
    if source.mode == "live":
        from appsdk_cli.checks.live import collect_live

        assert source.target is not None
        return collect_live(source.target, call_tools=call_tools)
    from appsdk_cli.checks.local import collect_path
    from appsdk_cli.project import AppTarget, app_target

    assert source.project is not None
    app = app_target(source.project)
    if source.app and source.app != app.module:
        app = AppTarget(app.project, source.app, "mcp", None)
    return collect_path(app, timeout=timeout, call_tools=call_tools)
