"""`appsdk apps ...` (the local apps registry) and `appsdk app-server` (its Codex app-server methods).

Both drive the same `AppsService`, so a command shows exactly what the server would answer. Nothing
heavy is imported until a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

# A day: longer is no deadline at all, and inf or 1e300 would overflow the socket's timeout.
MAX_TIMEOUT = 86400.0

if TYPE_CHECKING:
    from appsdk_cli.apps.service import AppsService

apps = typer.Typer(
    name="apps",
    help="Register apps locally and see how a host judges them: enabled, callable, which tools and why.",
    no_args_is_help=True,
)

AppId = Annotated[
    str, typer.Argument(help="The app id: letters, digits, '-' and '_'.", show_default=False, metavar="ID")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the app-server method's result (camelCase JSON).")]
Timeout = Annotated[
    float,
    typer.Option("--timeout", help="Seconds each app's server gets to answer tools/list.", min=0.1, max=MAX_TIMEOUT),
]
Workspace = Annotated[
    bool,
    typer.Option("--workspace", help="Use this project's .appsdk/apps.toml instead of the one in APPSDK_HOME."),
]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="On failure, show the details.")]


def _service(timeout: float = 10.0) -> AppsService:
    from appsdk_cli.apps.files import Paths
    from appsdk_cli.apps.service import AppsService

    return AppsService(Paths.discover(), timeout=timeout)


@apps.command("add")
def add(
    app_id: AppId,
    url: Annotated[str, typer.Option("--url", help="The app's MCP endpoint, e.g. http://127.0.0.1:8000/mcp.")],
    name: Annotated[str | None, typer.Option("--name", help="The display name (default: the id).")] = None,
    description: Annotated[str | None, typer.Option("--description", help="A one-line description.")] = None,
    icon_url: Annotated[str | None, typer.Option("--icon-url", help="The app's icon (logoUrl).")] = None,
    icon_url_dark: Annotated[
        str | None, typer.Option("--icon-url-dark", help="The icon for dark themes (logoUrlDark).")
    ] = None,
    workspace: Workspace = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            help="A bearer token for a protected server, used when listing it; kept under APPSDK_HOME "
            "(mode 0600), never in apps.toml. Without it the sign-in `appsdk call` caches is used.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored entry as JSON.")] = False,
) -> None:
    """Register an app (or update the one with this id) in apps.toml; comments and keys of your own stay."""
    from appsdk_cli.apps import tokens
    from appsdk_cli.apps.files import Paths
    from appsdk_cli.apps.registry import RegisteredApp, add_app
    from appsdk_cli.errors import UsageError
    from appsdk_cli.render.apps import app_added

    if token is not None and not token.strip():
        raise UsageError("--token is empty")
    paths = Paths.discover()
    entry = RegisteredApp(app_id, url, name or app_id, description, icon_url, icon_url_dark)
    added = add_app(paths, entry, workspace=workspace)
    if token is not None:
        tokens.save(paths.home, added.app.url, token.strip())
    app_added(added, as_json=as_json)


@apps.command("remove")
def remove(
    app_id: AppId,
    workspace: Workspace = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was removed as JSON.")] = False,
) -> None:
    """Unregister an app. An id that is not registered is a usage error (exit 2)."""
    from appsdk_cli.apps import tokens
    from appsdk_cli.apps.files import Paths
    from appsdk_cli.apps.registry import load_apps, remove_app
    from appsdk_cli.render.apps import app_removed

    paths = Paths.discover()
    removed = remove_app(paths, app_id, workspace=workspace)
    if all(app.url != removed.app.url for app in load_apps(paths).values()):
        tokens.forget(paths.home, removed.app.url)  # no other app uses that server
    app_removed(removed, as_json=as_json)


@apps.command("list")
def list_apps(as_json: AsJson = False, timeout: Timeout = 10.0, verbose: Verbose = False) -> None:
    """Every registered app as app/list sees it: accessible (its server lists tools) and enabled."""
    from appsdk_cli.render.apps import apps_list

    apps_list(_service(timeout).list(), as_json=as_json)


@apps.command("installed")
def installed(
    refresh: Annotated[bool, typer.Option("--refresh", help="List every app's server first (forceRefresh).")] = False,
    as_json: AsJson = False,
    timeout: Timeout = 10.0,
    verbose: Verbose = False,
) -> None:
    """The runtime snapshot as app/installed sees it: runtime name, enabled, callable.

    The snapshot is taken on first use and by --refresh, and kept under APPSDK_HOME/snapshots/.
    """
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.render.apps import apps_installed

    result = _service(timeout).installed(force_refresh=refresh, partial=True)
    apps_installed(result, as_json=as_json)
    if result.failures:
        # Every row is printed; the exit code still says that some server could not be listed. The table
        # already gave each reason; --json output did not, so then the line carries them.
        if as_json:
            detail = "; ".join(str(failure) for failure in result.failures)
        else:
            detail = ", ".join(f"{f.app_id} ({f.url})" for f in result.failures) + " could not be listed (see above)"
        raise AppsdkError(f"failed to refresh installed connector runtime state: {detail}")


@apps.command("read")
def read(
    app_ids: Annotated[list[str], typer.Argument(help="Up to 100 app ids.", show_default=False, metavar="ID")],
    tools: Annotated[bool, typer.Option("--tools", help="Include tool summaries (includeTools).")] = False,
    as_json: AsJson = False,
    timeout: Timeout = 10.0,
    verbose: Verbose = False,
) -> None:
    """Apps' metadata as app/read sees it; with --tools, each tool's policy verdict and why.

    Exit 2 if an id is not registered, 1 if a registered app is missing (its server failed, or the
    apps feature is off); the apps that were found are printed either way.
    """
    from appsdk_cli.errors import AppsdkError, UsageError
    from appsdk_cli.render.apps import apps_read

    result = _service(timeout).read(list(app_ids), include_tools=tools)
    apps_read(result, as_json=as_json)
    if not result.feature_enabled:
        raise AppsdkError("the apps feature is off ([features] apps = false), so every app is missing")
    # One line names every missing id and why, the wrong id (exit 2) first.
    failed = "; ".join(f"cannot list the tools of {failure}" for failure in result.failures)
    if result.unregistered:
        unknown = f"not registered: {', '.join(result.unregistered)} (see `appsdk apps list`)"
        raise UsageError(f"{unknown}; {failed}" if failed else unknown)
    if failed:
        raise AppsdkError(failed)


def app_server(
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", help="Seconds each app's server gets to answer tools/list.", min=0.1, max=MAX_TIMEOUT
        ),
    ] = 10.0,
) -> None:
    """Serve the Codex app-server methods (initialize, app/installed, app/list, app/read) on stdio, as JSONL.

    Logs go to stderr; stdout carries only protocol messages. Ends when stdin closes.
    """
    import sys

    from appsdk_cli.apps.server import AppServer
    from appsdk_cli.render.apps import server_log

    AppServer(_service(timeout), stdin=sys.stdin.buffer, stdout=sys.stdout.buffer, log=server_log).serve()
