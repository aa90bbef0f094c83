"""Which cached sign-in a server may have: only one it shows it is the resource for.

A sign-in cached for http://127.0.0.1:8000/mcp was made with the server that listened there then, not with
whatever listens there next (another project's `appsdk dev`, or a hostile process). So a cached access
token, and the refresh that would send its refresh token to an authorization server often on that same
origin, is released only when the server at the URL shows the protected resource metadata (RFC 9728) the
grant was made under: the same `resource`, naming the grant's issuer among its `authorization_servers`.
Read up front from the well-known URL, so the honest path costs one GET; else in answer to the server's
401 challenge (its `resource_metadata`). A grant made with a server that had no metadata (MCP 2025-03-26)
goes only in answer to a 401. Any other server gets no token, and the caller gets one line saying why.

Over plain http on loopback nothing stronger than that claim can be checked (no certificate says who
listens): a server that copies the real one's metadata cannot be told from it. What this stops is a token
sent unasked to a server that does not even claim to be the one it was issued for.

Apart from the flow (client.py) because every door that sends a cached token asks it first: a session
(connection.py), the era probe, and `appsdk apps` listing registered servers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli import httpguard
from appsdk_cli.auth.discovery import grant_problem, protected_resource_metadata
from appsdk_cli.auth.signin_errors import SignInError
from appsdk_cli.auth.tokens import CachedTokens, ServerGrants, load_server


@dataclass(frozen=True)
class Release:
    """The cached access token the server may have, or why a cached sign-in was withheld (never a secret)."""

    token: str | None = field(default=None, repr=False)
    withheld: str | None = None


def cached_token(
    server_url: str,
    *,
    timeout: float,
    resource_metadata: str | None = None,
    challenged: bool = False,
    root: Path | None = None,
) -> Release:
    """The cached token for the server at `server_url`, refreshed if it ran out, if the server shows it is
    the resource it was issued for. `challenged`: the server answered 401, naming `resource_metadata`."""
    cached = load_server(server_url, root)
    if not cached.grants:
        return Release()
    try:
        with httpguard.httpx_client(timeout, follow_redirects=False) as http:
            prm, _ = protected_resource_metadata(http, server_url, resource_metadata)
    except SignInError:
        prm = None
    if prm is None:
        grant = _legacy_grant(cached) if challenged else None
        if grant is None:
            return Release(withheld=_withheld(server_url, "it publishes no protected resource metadata"))
    else:
        grant, why = _grant_for(cached, prm, server_url)
        if grant is None:
            return Release(withheld=_withheld(server_url, why))
    if grant.fresh():
        return Release(grant.access_token)
    from appsdk_cli.auth.client import refresh

    refreshed = refresh(server_url, grant, timeout=timeout, root=root)
    return Release(refreshed.access_token if refreshed else None)


def _withheld(server_url: str, why: str) -> str:
    return (
        f"the server at {server_url} is not the one you signed in to ({why}), so your cached sign-in was not sent; "
        f"`appsdk auth logout --url {server_url}` forgets it"
    )


def _grant_for(cached: ServerGrants, prm: dict[str, Any], server_url: str) -> tuple[CachedTokens | None, str]:
    """The grant made under this resource metadata, or None and why the server is not the one signed in to."""
    problems: dict[str, str | None] = {}
    for issuer, grant in cached.grants.items():
        problems[issuer] = grant_problem(prm, server_url, grant.resource, grant.issuer)
        if problems[issuer] is None:
            return grant, ""
    latest = cached.latest()
    assert latest is not None
    return None, problems[latest.issuer] or ""


def _legacy_grant(cached: ServerGrants) -> CachedTokens | None:
    """A grant made with a server that published no resource metadata either (MCP 2025-03-26)."""
    latest = cached.latest()
    if latest is not None and latest.resource_metadata == "":
        return latest
    return next((g for g in cached.grants.values() if g.resource_metadata == ""), None)
