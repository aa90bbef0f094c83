"""What `appsdk auth status` and `appsdk auth logout` print. Never a token."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.render.console import count, json_line, stdout

if TYPE_CHECKING:
    from appsdk_cli.auth.client import LoggedOut
    from appsdk_cli.auth.tokens import GrantStatus


def _expiry(expires_at: float | None, refreshable: bool) -> str:
    if expires_at is None:
        return "no expiry"
    left = expires_at - time.time()
    if left <= 0:
        return "expired" + (" (refreshable)" if refreshable else "")
    return f"{int(left // 60)} min left" if left >= 60 else f"{int(left)} s left"


def auth_status(rows: list[GrantStatus], home: Path, *, as_json: bool) -> None:
    if as_json:
        json_line({"signIns": [row.as_json() for row in rows]})
        return
    from rich.table import Table

    from appsdk_cli.render.console import escape

    console = stdout()
    if not rows:
        console.print(f"No cached sign-ins (in {escape(str(home / 'tokens'))}).", soft_wrap=True)
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("server", "authorization server", "scopes", "token"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            escape(row.server),
            escape(row.issuer) + ("" if row.current else " [dim](not used last)[/]"),
            escape(" ".join(row.scopes)) or "[dim]-[/]",
            _expiry(row.expires_at, row.refreshable),
        )
    console.print(table)
    console.print(f"[dim]{count(len(rows), 'sign-in')}; `appsdk auth logout [--url URL]` ends them.[/]")


def auth_logout(done: list[LoggedOut], url: str | None, *, as_json: bool) -> None:
    if as_json:
        json_line({"loggedOut": [{"server": d.server, "issuer": d.issuer, "revoked": d.revoked} for d in done]})
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    if not done:
        console.print(f"Not signed in to {escape(url)}." if url else "No cached sign-ins.", soft_wrap=True)
        return
    for item in done:
        how = "revoked and forgotten" if item.revoked else "forgotten here (the issuer did not confirm a revocation)"
        console.print(f"Logged out of [bold]{escape(item.server)}[/] at {escape(item.issuer)}: {how}", soft_wrap=True)
