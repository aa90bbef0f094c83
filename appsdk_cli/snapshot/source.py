"""Where a server's Snapshot comes from: a running server (live) or the project's code (PATH), and
the one order in which `appsdk check` and `appsdk snapshot` choose between them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.connection import Target
    from appsdk_cli.project import AppTarget
    from appsdk_cli.snapshot.model import Snapshot


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
    ceiling: Path | None = None,
) -> Source:
    """--url or PATH when given; else $APPSDK_URL, else this project's running `appsdk dev` (live);
    else PATH mode on the current folder. The same rule as `appsdk call` (connection.find_server), with
    PATH mode in place of the default URL: code on disk is a better guess than a server that may not be
    running. `ceiling`: no search for the project or its dev goes above it (`appsdk mcp`'s root)."""
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
        return Source("path", project=find_project(path, ceiling))
    here = cwd or Path.cwd()
    location = find_server(url, here, ceiling)
    if location is None:
        return Source("path", project=find_project(here, ceiling))
    target = Target(url=location.url, source=location.source, timeout=timeout, token=token, protocol=protocol)
    # The running `appsdk dev` is this project's, so its files on disk are checked too.
    mine = location.source == ".appsdk/dev.json"
    return Source("live", target=target, project=find_project(here, ceiling) if mine else None)


def collect_source(source: Source, *, timeout: float, call_tools: bool = True) -> Snapshot:
    """The Snapshot alone, no rules run (what `appsdk snapshot` records)."""
    if source.mode == "live":
        from appsdk_cli.snapshot.live import collect_live

        assert source.target is not None
        return collect_live(source.target, call_tools=call_tools)
    from appsdk_cli.snapshot.local import collect_path

    assert source.project is not None
    return collect_path(path_app(source.project, source.app), timeout=timeout, call_tools=call_tools)


def path_app(project: Path, module: str | None = None) -> AppTarget:
    """The app PATH mode imports: [tool.appsdk] app (default server:mcp); `module` names another file of
    the project (`appsdk check other.py`), whose server object is then expected as `mcp`."""
    from appsdk_cli.project import AppTarget, app_target

    app = app_target(project)
    if module and module != app.module:
        app = AppTarget(app.project, module, "mcp", None)
    return app
