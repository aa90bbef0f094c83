"""The browser's leg of the sign-in: open the authorization page, and receive its redirect on a one-shot
listener on 127.0.0.1 (RFC 8252 §7.3, a loopback redirect for a native app)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from appsdk_cli.auth.signin_errors import SignInError

CALLBACK_PATH = "/callback"


def open_in_browser(url: str, open_browser: Callable[[str], object] | None) -> bool:
    """Open the sign-in page; False when no browser could be started (the caller says what to do)."""
    if open_browser is not None:
        open_browser(url)
        return True
    import webbrowser

    # $BROWSER is honoured, so a script can answer the page itself.
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


class CallbackListener:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization server's redirect (on the port and path
    of `redirect_uri` when one is given, e.g. the one a client metadata document lists)."""

    def __init__(self, redirect_uri: str | None = None) -> None:
        import http.server

        self._answer: dict[str, str] | None = None
        self._done = threading.Event()
        wanted = urlsplit(redirect_uri) if redirect_uri else None
        path = (wanted.path or CALLBACK_PATH) if wanted else CALLBACK_PATH
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != path:
                    self.send_error(404)
                    return
                if not listener._done.is_set():
                    listener._answer = {k: v[0] for k, v in parse_qs(parts.query).items()}
                    listener._done.set()
                body = b"<!doctype html><p>Signed in. You can close this tab and go back to the terminal.</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass  # the query holds the authorization code

        port = (wanted.port or 80) if wanted else 0
        try:
            self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        except OSError as problem:
            where = f"127.0.0.1:{port}"
            raise SignInError(f"cannot listen on {where} for the sign-in's redirect: {problem.strerror}") from None
        host = wanted.hostname if wanted else "127.0.0.1"
        self.redirect_uri = f"http://{host}:{self._server.server_port}{path}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="appsdk-oauth-callback", daemon=True)

    def __enter__(self) -> CallbackListener:
        self._thread.start()
        return self

    def wait(self, timeout: float) -> dict[str, str]:
        if not self._done.wait(timeout):
            raise SignInError(f"the sign-in did not finish within {timeout:g} s; run the command again")
        assert self._answer is not None
        return self._answer

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
