"""Two rules every HTTP request appsdk makes to a server obeys, whichever client library carries it.

- Redirects: a bearer token goes only to the origin it was given for. On a redirect that changes the
  scheme, host or port, `Authorization` is dropped; a redirect from https to http is refused outright
  (the request body, and anything else in it, would cross the network in the clear).
- Deadlines: `--timeout` bounds a whole answer, not each read. A socket timeout alone does not: a
  server that sends a byte every half second never lets a read time out. `Deadline` + `watchdog`
  abort the connection once the time is up, which unblocks any read in progress.

Light on imports on purpose: client.py imports it on every `appsdk call`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from appsdk_cli.errors import AppsdkError

if TYPE_CHECKING:
    import httpx

DEFAULT_PORTS = {"http": 80, "https": 443}
# Headers that carry the caller's credentials: never sent to another origin.
CREDENTIAL_HEADERS = ("authorization", "cookie", "proxy-authorization")


class UnsafeRedirect(AppsdkError):
    """A server redirected somewhere appsdk will not follow (exit 1)."""


class DeadlineExceeded(AppsdkError):
    """The whole answer did not arrive in time (exit 1)."""


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the default port filled in: what "the same server" means for a token."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme)


def redirect(current_url: str, location: str, headers: dict[str, str]) -> tuple[str, dict[str, str]]:
    """Where a 3xx with `Location` leads, and the headers fit to send there.

    Raises UnsafeRedirect for https -> http. Credentials are kept only when the origin is unchanged.
    """
    target = urljoin(current_url, location)
    before, after = origin(current_url), origin(target)
    if before[0] == "https" and after[0] != "https":
        raise UnsafeRedirect(
            f"{current_url} redirects to {target}, from https to {after[0] or 'no scheme'}; "
            "appsdk does not follow that (give the https URL the server should be reached at)"
        )
    if before == after:
        return target, dict(headers)
    return target, {name: value for name, value in headers.items() if name.lower() not in CREDENTIAL_HEADERS}


class Deadline:
    """A point in time by which an answer must be complete."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends_at = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.ends_at - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.ends_at


@contextlib.contextmanager
def watchdog(deadline: Deadline, abort: Callable[[], None]) -> Iterator[Deadline]:
    """Call `abort` (e.g. shut the socket down) if the block is still running when the deadline passes.

    A timer thread rather than shrinking socket timeouts: a buffered readline makes many reads, each
    of which would get the full remaining time again.
    """
    lock = threading.Lock()
    finished = False

    def fire() -> None:
        with lock:
            if not finished:
                with contextlib.suppress(Exception):
                    abort()

    timer = threading.Timer(deadline.remaining(), fire)
    timer.daemon = True
    timer.start()
    try:
        yield deadline
    finally:
        with lock:
            finished = True
        timer.cancel()


def shutdown_socket(sock: Any) -> None:
    """Unblock every read and write on `sock` at once (close() alone does not wake a blocked recv)."""
    import socket

    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


# --- httpx ---------------------------------------------------------------------------------------------


def httpx_client(timeout: float, *, follow_redirects: bool = True, **options: Any) -> httpx.Client:
    """An httpx client that follows redirects by the rules above and gives each request `timeout` seconds
    in all (connect, headers and the whole body), however slowly the server sends them.

    Sign-in passes follow_redirects=False: an OAuth redirect is an answer to read, not a page to fetch."""
    import httpx

    def check_redirect(response: httpx.Response) -> None:
        if not response.has_redirect_location:
            return
        request = response.request
        # httpx builds the next request from this one's headers right after the hooks, and would keep
        # Authorization on an http -> https upgrade; we keep credentials on the same origin only.
        _, kept = redirect(str(request.url), response.headers["location"], dict(request.headers))
        for name in list(request.headers):
            if name not in kept:
                del request.headers[name]

    return httpx.Client(
        timeout=timeout,
        follow_redirects=follow_redirects,
        transport=_DeadlineTransport(httpx.HTTPTransport(), timeout),
        event_hooks={"response": [check_redirect]},
        **options,
    )


class _DeadlineTransport:
    """Wraps an httpx transport: each request gets one deadline for its headers and its whole body."""

    def __init__(self, inner: Any, seconds: float) -> None:
        self._inner = inner
        self._seconds = seconds

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        import httpx

        deadline = Deadline(self._seconds)
        remaining = max(0.05, deadline.remaining())
        request.extensions["timeout"] = {"connect": remaining, "read": remaining, "write": remaining, "pool": remaining}
        response = self._inner.handle_request(request)
        stream = response.stream

        def chunks() -> Iterator[bytes]:
            for chunk in stream:  # type: ignore[union-attr]
                if deadline.expired:
                    raise httpx.ReadTimeout(f"the answer did not complete within {self._seconds:g} s", request=request)
                yield chunk

        class _Stream(httpx.SyncByteStream):
            def __iter__(self) -> Iterator[bytes]:
                return chunks()

            def close(self) -> None:
                stream.close()  # type: ignore[union-attr]

        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Stream(),
            extensions=response.extensions,
            request=request,
        )

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> _DeadlineTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
