"""How signing in fails, shared by every step of the sign-in (discovery, registration, callback, flow).

Its own module because each step raises these and the flow imports each step: kept in client.py, they
would make every step import the flow that imports it. Named for the sign-in, not for auth/ as a whole:
the development authorization server (auth/server) answers OAuth errors of its own and raises none of these.
"""

from __future__ import annotations

from typing import Any

from appsdk_cli.errors import AppsdkError


class SignInError(AppsdkError):
    """Signing in failed (exit 1): the message says at which step and why."""


class SignInNeedsBrowser(SignInError):
    """The sign-in needs a person at the authorization page, and the caller said no browser may open now
    (the workbench's background listing): it offers a Sign in button instead."""


class AuthServerUnreachable(SignInError):
    """The authorization server did not answer in time, or at all: no verdict on the grant, so it is kept."""


def oauth_error(response: Any) -> str:
    """What an authorization server's refusal says (RFC 6749 §5.2), else its HTTP status."""
    try:
        body = response.json()
        return str(body.get("error_description") or body.get("error") or f"HTTP {response.status_code}")
    except (ValueError, AttributeError):
        return f"HTTP {response.status_code}"
