from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

PATH_ARGUMENT = typer.Argument(
    help="The app's project folder (server.py and web/).", show_default=False, metavar="PATH"
)


def _widget_project(path: Path) -> tuple[Path, Path]:
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.project import find_project
    from appsdk_cli.web.node import web_dir

    project = find_project(path)
    web = web_dir(project)
    if web is None:
        raise AppsdkError(
            f"{project} has no web/package.json: only a widget project has types and builds "
            "(`appsdk new NAME --template react` makes one)"
        )
    return project, web


def types(
    path: Annotated[Path, PATH_ARGUMENT] = Path("."),
    check: Annotated[
        bool, typer.Option("--check", help="Change nothing; exit 1 when web/src/tools.gen.ts is out of date (CI).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Write web/src/tools.gen.ts: TypeScript types of every tool's result (outputSchema) and arguments."""
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.project import app_target
    from appsdk_cli.render.build import types_result
    from appsdk_cli.snapshot.local import collect_path
    from appsdk_cli.web.types import GENERATED, typescript, write_types

    project, web = _widget_project(path)
    if check:
        snapshot = collect_path(app_target(project), timeout=60.0, call_tools=False)
        current = (web / GENERATED).read_text(encoding="utf-8") if (web / GENERATED).is_file() else ""
        if current != typescript(snapshot.tools):
            raise AppsdkError(f"{web / GENERATED} is out of date with the tools' schemas: run `appsdk types`")
        types_result(None, web / GENERATED, as_json=as_json)
        return
    snapshot = collect_path(app_target(project), timeout=60.0, call_tools=False)
    types_result(write_types(web, snapshot.tools, project=project), web / GENERATED, as_json=as_json)


def build(
    path: Annotated[Path, PATH_ARGUMENT] = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Build the widget for production: appsdk types, tsc, vite build into one self-contained web/dist/index.html."""
    from appsdk_cli.render.build import build_result
    from appsdk_cli.render.console import spinner
    from appsdk_cli.web.build import build as build_widget

    project, web = _widget_project(path)
    if as_json:
        result = build_widget(project, web)
    else:
        with spinner("Building the widget (types, tsc, vite build)"):
            result = build_widget(project, web)
    build_result(result, project, as_json=as_json)
