"""`appsdk auth status` and `appsdk auth logout`: the cached sign-ins, seen and dropped without a file manager."""

from __future__ import annotations

from typing import Annotated

import typer

auth = typer.Typer(
    name="auth",
    help="The sign-ins appsdk has cached (APPSDK_HOME/tokens): list them, or log out.",
    no_args_is_help=True,
)


@auth.command()
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print the cached sign-ins as JSON (never a token).")] = False,
) -> None:
    """List the cached sign-ins: server, authorization server, scopes, expiry. Tokens are never shown."""
    from appsdk_cli.auth.tokens import status
    from appsdk_cli.home import home_location
    from appsdk_cli.render.auth import auth_status

    auth_status(status(), home_location(), as_json=as_json)


@auth.command()
def logout(
    url: Annotated[
        str | None,
        typer.Option("--url", help="Log out of this server only (its MCP URL). Default: all.", show_default=False),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds each revocation may take.", min=0.1)] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was logged out as JSON.")] = False,
) -> None:
    """Revoke the cached tokens at their authorization server (RFC 7009, when it offers it) and delete them."""
    from appsdk_cli.auth.client import logout as log_out
    from appsdk_cli.errors import UsageError
    from appsdk_cli.render.auth import auth_logout

    if url is not None and not url.startswith(("http://", "https://")):
        raise UsageError(f"--url {url!r} is not an http(s) URL")
    auth_logout(log_out(url, timeout=timeout), url, as_json=as_json)
