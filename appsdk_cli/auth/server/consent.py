"""The pages a person sees at /consent: the test-user picker, and the one-line page for a request that
cannot be answered."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from appsdk_cli.auth.clients import is_metadata_document_url

if TYPE_CHECKING:
    from appsdk_cli.auth.server.provider import DevAuthProvider, Pending


def page(message: str) -> str:
    return _html("appsdk dev sign-in", f"<p>{html.escape(message)}</p>")


def _html(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content='width=device-width'>"
        f"<title>{html.escape(title)}</title><style>body{{font:16px system-ui,sans-serif;max-width:34rem;"
        "margin:3rem auto;padding:0 1rem;color-scheme:light dark}label{display:block;margin:.4rem 0}"
        "button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}code{font-size:.9em}</style></head>"
        f"<body>{body}</body></html>"
    )


def consent_html(request: str, client: Any, pending: Pending, server: DevAuthProvider) -> str:
    name = (client.client_name if client is not None else None) or pending.client_id
    if is_metadata_document_url(pending.client_id) and name != pending.client_id:
        name = f"{name} (by its metadata document at {pending.client_id})"  # the name is the document's own claim
    scopes = list(pending.params.scopes or server.config.scopes)
    redirect = urlsplit(str(pending.params.redirect_uri))
    users = "".join(
        f"<label><input type=radio name=user value='{html.escape(user, quote=True)}'"
        f"{' checked' if index == 0 else ''}> {html.escape(user)}</label>"
        for index, user in enumerate(server.config.users)
    )
    body = (
        "<h1>Sign in (development)</h1>"
        f"<p><b>{html.escape(name)}</b> wants to use <code>{html.escape(server.resource)}</code> as a test user"
        f"{' with ' + html.escape(', '.join(scopes)) if scopes else ''}. "
        f"It will be sent back to <code>{html.escape(redirect.scheme + '://' + redirect.netloc)}</code>.</p>"
        f"<form method=post action=/consent><input type=hidden name=request value='{html.escape(request, quote=True)}'>"
        f"<fieldset><legend>Sign in as</legend>{users}</fieldset><p>"
        "<button name=action value=approve>Approve</button><button name=action value=deny>Deny</button></p></form>"
        "<p><small>appsdk dev's authorization server: no passwords, test users only, tokens live in memory.</small></p>"
    )
    return _html("appsdk dev sign-in", body)
