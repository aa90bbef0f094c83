from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from appsdk_cli.scaffold import ScaffoldResult


def new(
    name: Annotated[
        str, typer.Argument(help="The project name; also its folder name.", show_default=False, metavar="NAME")
    ],
    path: Annotated[
        Path, typer.Option("--path", help="The folder to create the project in.", show_default="current folder")
    ] = Path("."),
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Write into an existing non-empty folder: each template file you changed is kept beside it as "
            "FILE.orig; other files stay.",
        ),
    ] = False,
    skybridge: Annotated[
        bool,
        typer.Option("--skybridge", help="Serve the widget as text/html+skybridge (ChatGPT only) instead of MCP Apps."),
    ] = False,
    auth: Annotated[
        bool,
        typer.Option("--auth", help="Make the app an OAuth 2.1 protected resource (users sign in)."),
    ] = False,
    domain: Annotated[
        str | None,
        typer.Option(
            "--domain",
            help="Your reserved ngrok domain: the tunnel's fixed URL and the widget's domain "
            "(default with --force: the project's [tool.appsdk.tunnel] domain).",
            metavar="DOMAIN",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    no_plugin: Annotated[
        bool, typer.Option("--no-plugin", help="Skip the plugin files (.codex-plugin/, .mcp.json, assets/).")
    ] = False,
) -> None:
    """Scaffold a working book-club app: server, widget and tests."""
    from appsdk_cli.render.scaffold import scaffold_result
    from appsdk_cli.scaffold import WidgetFlavor, scaffold

    flavor = WidgetFlavor.SKYBRIDGE if skybridge else WidgetFlavor.MCP_APPS
    result = scaffold(name, path, force=force, flavor=flavor, auth=auth, domain=domain)
    if not no_plugin:
        result = _with_plugin(result, force=force)
    scaffold_result(result, as_json=as_json)


def _with_plugin(result: ScaffoldResult, *, force: bool) -> ScaffoldResult:
    """Every new app is a plugin from day one: `appsdk plugin init` on the fresh project."""
    from dataclasses import replace

    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.plugin.init import init_plugin
    from appsdk_cli.plugin.manifest import CODEX_MANIFEST

    if force and (result.path / CODEX_MANIFEST).exists():
        return result  # --force rewrites the template's files, not the user's own plugin manifest
    try:
        written = init_plugin(result.path, force=force)
    except AppsdkError as problem:
        raise AppsdkError(
            f"{result.path} was created, but not its plugin files: {problem.message} "
            "(run `appsdk plugin init` in it once that is fixed)",
            detail=problem.detail,
        ) from problem
    return replace(result, files=tuple(sorted({*result.files, *(Path(f) for f in written.files)})))
