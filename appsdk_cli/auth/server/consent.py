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


# The pages' one style, inline: the server's CSP allows inline style and nothing else (no file, no font,
# no script). Light or dark as the system is; the chosen test user's row is marked without a script.
_STYLE = (
    ":root{color-scheme:light dark;--bg:#f4f4f5;--card:#fff;--text:#18181b;--muted:#52525b;--line:#e4e4e7;"
    "--accent:#0d8a6c;--on-accent:#fff;--soft:#e7f6f1}"
    "@media (prefers-color-scheme:dark){:root{--bg:#18181b;--card:#232326;--text:#f4f4f5;--muted:#a1a1aa;"
    "--line:#3f3f46;--accent:#19c39a;--on-accent:#06261e;--soft:#10372d}}"
    "*{box-sizing:border-box}"
    "body{margin:0;min-height:100vh;display:grid;place-items:center;padding:1.5rem;background:var(--bg);"
    "color:var(--text);font:15px/1.55 system-ui,-apple-system,'Segoe UI',sans-serif}"
    "main{width:100%;max-width:30rem;background:var(--card);border:1px solid var(--line);border-radius:14px;"
    "padding:1.75rem;box-shadow:0 1px 2px rgb(0 0 0/.05),0 10px 30px rgb(0 0 0/.07)}"
    ".tag{display:inline-block;margin:0 0 .8rem;padding:.1rem .6rem;border-radius:999px;background:var(--soft);"
    "color:var(--accent);font-size:.72rem;font-weight:650;letter-spacing:.04em;text-transform:uppercase}"
    "h1{margin:0 0 .6rem;font-size:1.35rem;line-height:1.3}"
    "p{margin:0 0 .6rem}main>:last-child{margin-bottom:0}"
    "code{font:.84em ui-monospace,SFMono-Regular,Menlo,monospace;padding:.05rem .3rem;border:1px solid var(--line);"
    "border-radius:5px;background:var(--bg);overflow-wrap:anywhere}"
    "fieldset{margin:1.2rem 0;padding:0;border:0}"
    "legend{margin:0 0 .45rem;padding:0;font-weight:600}"
    "label{display:flex;align-items:center;gap:.65rem;margin:.4rem 0;padding:.6rem .85rem;border:1px solid var(--line);"
    "border-radius:10px;cursor:pointer}"
    "label:has(input:checked){border-color:var(--accent);background:var(--soft)}"
    "label:focus-within{outline:2px solid var(--accent);outline-offset:2px}"
    "input{margin:0;accent-color:var(--accent)}"
    ".actions{display:flex;gap:.6rem;margin:0}"
    "button{flex:1;padding:.6rem 1rem;border:1px solid var(--line);border-radius:10px;background:var(--card);"
    "color:var(--text);font:inherit;font-weight:600;cursor:pointer}"
    "button:hover{border-color:var(--muted)}"
    "button[value=approve]{border-color:var(--accent);background:var(--accent);color:var(--on-accent)}"
    "button:focus-visible{outline:2px solid var(--accent);outline-offset:2px}"
    ".note{margin:1.2rem 0 0;color:var(--muted);font-size:.8rem}"
)


def _html(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content='width=device-width'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body><main><p class=tag>appsdk dev</p>{body}</main></body></html>"
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
        f"<fieldset><legend>Sign in as</legend>{users}</fieldset><p class=actions>"
        "<button name=action value=approve>Approve</button><button name=action value=deny>Deny</button></p></form>"
        "<p class=note>appsdk dev's authorization server: no passwords, test users only, tokens live in memory.</p>"
    )
    return _html("appsdk dev sign-in", body)
