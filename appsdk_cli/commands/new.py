from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from appsdk_cli.errors import UsageError

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
            help="Write into an existing non-empty folder: each template file you changed is replaced, yours moved "
            "to .appsdk/backup/TIME/ (named in the output); other files stay.",
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
    template: Annotated[
        str,
        typer.Option(
            "--template",
            help="The widget: html (one hand-written file) or react (Vite + React + TypeScript in web/).",
            metavar="html|react",
        ),
    ] = "html",
    no_install: Annotated[
        bool, typer.Option("--no-install", help="With --template react: skip `npm install` in web/.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    no_plugin: Annotated[
        bool, typer.Option("--no-plugin", help="Skip the plugin files (.codex-plugin/, .codex-mcp.json, assets/).")
    ] = False,
    then_dev: Annotated[
        bool,
        typer.Option(
            "--dev", help="Then serve it with hot reload, as `appsdk dev` in the new folder does (Ctrl-C stops it)."
        ),
    ] = False,
) -> None:
    """Scaffold a working book-club app: server, widget and tests."""
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.render.scaffold import scaffold_result
    from appsdk_cli.scaffold import ExistingProject, WidgetFlavor, WidgetTemplate, scaffold

    if template not in tuple(WidgetTemplate):
        raise UsageError(f"--template {template!r} is not a template; choose html or react")
    widget = WidgetTemplate(template)
    if no_install and widget is not WidgetTemplate.REACT:
        raise UsageError("--no-install goes with --template react")
    if then_dev and as_json:
        raise UsageError("--dev serves the app until Ctrl-C; --json prints a result for scripts: pick one")
    flavor = WidgetFlavor.SKYBRIDGE if skybridge else WidgetFlavor.MCP_APPS
    target = path.expanduser() / name
    fresh = not (target.is_dir() and any(target.iterdir()))  # this run makes the whole folder
    try:
        result = scaffold(
            name, path, force=force, flavor=flavor, auth=auth, domain=domain, template=widget, plugin=not no_plugin
        )
    except ExistingProject as existing:
        from appsdk_cli.render.scaffold import existing_project_line

        raise AppsdkError(existing_project_line(target)) from existing
    if not no_plugin:
        result = _with_plugin(result, force=force)
    if widget is WidgetTemplate.REACT:
        result = _install_web(result, skip=no_install, quiet=as_json, fresh=fresh)
    # With --dev the next step is already under way: dev prints its own lines for a second terminal.
    scaffold_result(result, as_json=as_json, serving_next=then_dev)
    if then_dev:
        from appsdk_cli.commands.dev import dev

        dev(result.path)


def _install_web(result: ScaffoldResult, *, skip: bool, quiet: bool, fresh: bool) -> ScaffoldResult:
    """`npm install` in the new web/; without Node, the project is kept and the result says what to install.

    Ctrl-C during the install takes back what this run made (the whole folder when it made it, else
    web/node_modules), so running `appsdk new` again just works."""
    import shutil
    from dataclasses import replace

    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.render.console import spinner
    from appsdk_cli.render.scaffold import install_interrupted
    from appsdk_cli.web.node import find_node, npm_install

    web = result.path / "web"
    if skip:
        return replace(result, web_install="skipped")
    try:
        node = find_node(web)
    except AppsdkError as problem:
        return replace(result, web_install=problem.message)
    try:
        if quiet:
            npm_install(web, node)
        else:
            with spinner(f"Installing the widget's packages (npm ci in {web.name}/)", log=True):
                npm_install(web, node)
    except KeyboardInterrupt:
        removed = result.path if fresh else web / "node_modules"
        shutil.rmtree(removed, ignore_errors=True)
        install_interrupted(removed, whole=fresh)
        raise
    except AppsdkError as problem:
        raise AppsdkError(f"{result.path} was created, but not its widget's packages: {problem.message}") from problem
    return replace(result, web_install="installed")


def _with_plugin(result: ScaffoldResult, *, force: bool) -> ScaffoldResult:
    """Every new app is a plugin from day one: `appsdk plugin init` on the fresh project."""
    from dataclasses import replace

    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.plugin.init import LOGO, MCP_CONFIG, init_plugin
    from appsdk_cli.plugin.manifest import CODEX_MANIFEST

    if force and any((result.path / name).exists() for name in (CODEX_MANIFEST, MCP_CONFIG, LOGO)):
        return result  # --force rewrites the template's files, never the user's own plugin files
    try:
        written = init_plugin(result.path, force=force)
    except AppsdkError as problem:
        raise AppsdkError(
            f"{result.path} was created, but not its plugin files: {problem.message} "
            "(run `appsdk plugin init` in it once that is fixed)",
            detail=problem.detail,
        ) from problem
    plugin_files = {Path(f) for f in written.files}
    return replace(
        result,
        files=tuple(sorted({*result.files, *plugin_files})),
        added=tuple(sorted({*result.added, *plugin_files})),
    )
