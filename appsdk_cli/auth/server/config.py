"""The development authorization server's settings: `[tool.appsdk.auth]` read from pyproject.toml, and
where the server may be served at all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.netloc import is_loopback_host

DEFAULT_USERS = ("ada", "grace")


@dataclass(frozen=True)
class AuthConfig:
    """`[tool.appsdk.auth]` in the project's pyproject.toml, plus `appsdk dev --auth-user`."""

    users: tuple[str, ...] = DEFAULT_USERS
    scopes: tuple[str, ...] = ()
    access_token_seconds: int = 300
    refresh_token_seconds: int = 86400
    auto_user: str | None = None  # approve every request as this user, without the consent page


def auth_config(appsdk_table: dict[str, Any], auto_user: str | None = None) -> AuthConfig | None:
    """The dev authorization server's settings, or None when the project declares no `[tool.appsdk.auth]`."""
    table = appsdk_table.get("auth")
    if table is None:
        if auto_user is not None:
            raise UsageError("--auth-user needs an app that declares [tool.appsdk.auth] (see `appsdk new --auth`)")
        return None
    where = "[tool.appsdk.auth] in pyproject.toml"
    if not isinstance(table, dict):
        raise AppsdkError(f"{where} must be a table")

    def names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = table.get(key, list(default))
        if not isinstance(value, list) or not all(isinstance(v, str) and v and " " not in v for v in value):
            raise AppsdkError(f"{where}: {key} must be a list of names without spaces")
        return tuple(value)

    def seconds(key: str, default: int) -> int:
        value = table.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise AppsdkError(f"{where}: {key} must be a whole number of seconds, at least 1")
        return value

    users = names("users", DEFAULT_USERS)
    if not users:
        raise AppsdkError(f"{where}: users must name at least one test user")
    if auto_user is not None and auto_user not in users:
        raise UsageError(f"--auth-user {auto_user!r} is not a test user; {where} lists {', '.join(users)}")
    return AuthConfig(
        users=users,
        scopes=names("scopes", ()),
        access_token_seconds=seconds("access_token_seconds", 300),
        refresh_token_seconds=seconds("refresh_token_seconds", 86400),
        auto_user=auto_user,
    )


def refuse_exposed(host: str, behind_tunnel: bool) -> None:
    """It signs anyone in as a test user without a password: never on a network address of its own."""
    if not is_loopback_host(host) and not behind_tunnel:
        raise UsageError(
            f"the development authorization server signs anyone in, so appsdk dev will not serve it on {host}; "
            "keep the default loopback --host, or put it behind --tunnel"
        )
