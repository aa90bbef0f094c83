"""`appsdk plugin init | check | pack | install`: ship the app as a plugin for ChatGPT and Codex.

Each subcommand parses its options, calls appsdk_cli.plugin, and hands the result to render/plugin.py
(the check report itself renders exactly as `appsdk check`'s). Nothing heavy is imported until it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

plugin = typer.Typer(
    name="plugin",
    help="Make the app a plugin (manifest, .codex-mcp.json, logo), check it as Codex and the directory do, pack it, "
    "and install it into a local Codex marketplace.",
    no_args_is_help=True,
)

PluginPath = Annotated[
    Path,
    typer.Argument(help="The plugin's folder (the app's project).", show_default="current folder", metavar="PATH"),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")]
Strict = Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too (e.g. before submission).")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="On failure, show the details.")]


@plugin.command("init", short_help="Write .codex-plugin/plugin.json, .codex-mcp.json and a placeholder logo.")
def init(
    path: PluginPath = Path("."),
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="The app's /mcp URL for .codex-mcp.json. Default: https://DOMAIN/mcp for the reserved tunnel domain "
            "([tool.appsdk.tunnel] domain), else the local dev URL.",
            show_default=False,
        ),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="Read the tools from this running server instead of the project's code.",
            show_default=False,
        ),
    ] = None,
    category: Annotated[str, typer.Option("--category", help="The listing category.")] = "Productivity",
    force: Annotated[bool, typer.Option("--force", help="Overwrite the plugin files init writes.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait for the server.", min=0.1)] = 30.0,
    as_json: AsJson = False,
    verbose: Verbose = False,
) -> None:
    """Make the app a plugin: the manifest (name, version, description and interface from pyproject.toml and
    the server's tools; URLs as REPLACE-ME placeholders), .codex-mcp.json and assets/logo.png.

    The tools are read from --server, else the app imported in memory (no port), else the project's
    running `appsdk dev`; no tool is called. Exit codes: 0 written; 1 the files exist (without --force) or the
    server cannot be read; 2 the command line is wrong.
    """
    from appsdk_cli.plugin.init import init_plugin
    from appsdk_cli.render.plugin import init_result

    result = init_plugin(path, url=url, server_url=server, category=category, force=force, timeout=timeout)
    init_result(result, as_json=as_json)


@plugin.command("check", short_help="Validate the plugin as Codex's loader and the directory's review do.")
def check(
    path: PluginPath = Path("."), as_json: AsJson = False, strict: Strict = False, verbose: Verbose = False
) -> None:
    """Validate a plugin (or a marketplace root): the manifest as Codex finds and reads it, the listing
    limits of the final submission, assets, marketplace entries and the package archive rules.

    Exit codes: 0 no errors; 1 an error was found (or a warning, with --strict); 2 the command line is wrong.
    """
    from appsdk_cli.plugin.rules import check_plugin
    from appsdk_cli.render.check import check_report

    report = check_plugin(path, strict=strict)
    check_report(report, as_json=as_json)
    if report.failed:
        raise typer.Exit(1)


@plugin.command("pack", short_help="Zip the plugin reproducibly, after `plugin check` passes.")
def pack(
    path: PluginPath = Path("."),
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="The folder for the archive.", show_default="PATH/dist"),
    ] = None,
    strict: Strict = False,
    as_json: AsJson = False,
    verbose: Verbose = False,
) -> None:
    """Zip the plugin as NAME-VERSION.zip: checked by `plugin check` first (nothing is written if it fails),
    the same bytes for the same files (sorted entries, fixed timestamps and permissions).

    Left out: .git, virtualenvs, caches, .appsdk, dist, build, node_modules and .env files.
    Exit codes: 0 packed; 1 the check failed or the archive breaks a limit; 2 the command line is wrong.
    """
    from appsdk_cli.plugin.pack import pack_plugin
    from appsdk_cli.render.plugin import pack_result

    result = pack_plugin(path, output=output, strict=strict)
    pack_result(result, as_json=as_json)
    if result.archive is None:
        raise typer.Exit(1)


@plugin.command("install", short_help="Add the plugin to a local Codex marketplace and print the codex commands.")
def install(
    path: PluginPath = Path("."),
    codex: Annotated[bool, typer.Option("--codex", help="Install for Codex (the only target so far).")] = False,
    marketplace: Annotated[
        Path | None,
        typer.Option(
            "--marketplace",
            help="The marketplace root. Default: ROOT when the plugin sits in ROOT/plugins/ and ROOT has a "
            "marketplace file, else $APPSDK_HOME/codex-marketplace.",
            show_default=False,
        ),
    ] = None,
    installation: Annotated[
        str, typer.Option("--installation", help="policy.installation: AVAILABLE, INSTALLED_BY_DEFAULT, NOT_AVAILABLE.")
    ] = "AVAILABLE",
    authentication: Annotated[
        str, typer.Option("--authentication", help="policy.authentication: ON_INSTALL or ON_USE.")
    ] = "ON_INSTALL",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the marketplace entry and the commands as JSON.")
    ] = False,
    verbose: Verbose = False,
) -> None:
    """Write or update .agents/plugins/marketplace.json (source, policy, category) with this plugin, copy the
    plugin into the marketplace when it does not already live there, and print the two `codex plugin`
    commands that install it.

    Exit codes: 0 installed; 1 `plugin check` failed or the marketplace cannot be written; 2 the command
    line is wrong (for example, no --codex).
    """
    from appsdk_cli.errors import UsageError
    from appsdk_cli.plugin.marketplace import install_codex
    from appsdk_cli.render.plugin import install_result

    if not codex:
        raise UsageError("say which host to install for: --codex (the only one so far)")
    result = install_codex(
        path,
        marketplace=marketplace,
        installation=installation.upper().replace("-", "_"),
        authentication=authentication.upper().replace("-", "_"),
    )
    install_result(result, as_json=as_json)
    if result.marketplace_file is None:
        raise typer.Exit(1)
