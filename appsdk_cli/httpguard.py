"""Two rules every HTTP request appsdk makes to a server obeys, whichever client library carries it.

- Redirects: a bearer token goes only to the origin it was given for. On a redirect that changes the
  scheme, host or port, `Authorization` is dropped; a redirect from https to http is refused outright
  (the request body, and anything else in it, would cross the network in the clear).
- Deadlines: `--timeout` bounds a whole answer, not each read. A socket timeout alone does not: a
  server that sends a byte every half second never lets a read time out. `Deadline` + `watchdog`
  abort the connection once the time is up, which unblocks any read in progress.
- Sizes: an answer is read up to a number of bytes counted after decoding (DOCUMENT_BYTES for the
  documents sign-in and checks read). httpx decodes gzip whole: 509 KiB of gzip took `check` to 1 GiB.
  `BoundedBody` decodes as the bytes arrive and stops at the limit, whichever the encoding. Each MCP
  message (a JSON body, an event-stream event, a stdio line) is counted the same way, up to
  `message_limit()`: a server sending an endless body must not grow appsdk without end.

Light on imports on purpose: client.py imports it on every `appsdk call`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from appsdk_cli.errors import AppsdkError, UsageError

if TYPE_CHECKING:
    import httpx

DEFAULT_PORTS = {"http": 80, "https": 443}
# A server's metadata, a registration or token answer, a challenge token: a few kilobytes when honest.
DOCUMENT_BYTES = 1_000_000
# One MCP message: honest ones are large (the workbench at 5,000 tools sends a 2.6 MB tools/list), so the
# default leaves some 25 times that, and still keeps a hostile server's endless body off the heap.
MESSAGE_BYTES = 64_000_000
MESSAGE_BYTES_VARIABLE = "APPSDK_MAX_MESSAGE_BYTES"
# How much of a body one read takes: a Content-Length is the server's claim, not a size to allocate.
READ_CHUNK = 65536
# The encodings BoundedBody decodes, and so the only ones asked for (httpx would also ask for br and zstd
# when their packages happen to be installed, and decode them whole).
ACCEPTED_ENCODINGS = "gzip, deflate"
# Headers that carry the caller's credentials: never sent to another origin.
CREDENTIAL_HEADERS = ("authorization", "cookie", "proxy-authorization")


class UnsafeRedirect(AppsdkError):
    """A server redirected somewhere appsdk will not follow (exit 1)."""


class DeadlineExceeded(AppsdkError):
    """The whole answer did not arrive in time (exit 1)."""


class TooLarge(Exception):
    """An answer past its size limit once decoded, or in an encoding appsdk did not ask for; `str()` is
    the reason, worded to follow "cannot read X at URL: "."""


class BoundedBody:
    """Decodes an answer's body chunk by chunk (identity, gzip or deflate) and stops at `limit` decoded
    bytes: memory stays near the limit however well the body compresses."""

    def __init__(self, content_encoding: str, limit: int) -> None:
        self.limit = limit
        self.size = 0
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise TooLarge(f"it is encoded as {content_encoding!r}, which appsdk did not ask for")
        self._coding = codings[0] if codings else None
        wbits = 16 + zlib.MAX_WBITS if self._coding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._decoder = zlib.decompressobj(wbits) if self._coding else None
        self._first = True

    def feed(self, chunk: bytes) -> bytes:
        if self._decoder is None:
            return self._counted(chunk)
        try:
            out = self._decoder.decompress(chunk, self._room())
        except zlib.error:
            if not (self._first and self._coding == "deflate"):
                raise TooLarge(f"its {self._coding} encoding is broken") from None
            # "deflate" is meant as zlib-wrapped, but some servers send it raw (httpx reads both too).
            self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._decoder.decompress(chunk, self._room())
        self._first = False
        parts = [self._counted(out)]
        while self._decoder.unconsumed_tail:
            parts.append(self._counted(self._decoder.decompress(self._decoder.unconsumed_tail, self._room())))
        return b"".join(parts)

    def end(self) -> bytes:
        return self._counted(self._decoder.flush(self._room())) if self._decoder is not None else b""

    def _room(self) -> int:
        return self.limit - self.size + 1  # one past the limit: enough to know it was passed

    def _counted(self, data: bytes) -> bytes:
        self.size += len(data)
        if self.size > self.limit:
            raise TooLarge(f"its answer is larger than {size_text(self.limit)} (decoded); appsdk reads no more of it")
        return data


def message_limit() -> int:
    """The most bytes appsdk reads of one MCP message: MESSAGE_BYTES, or $APPSDK_MAX_MESSAGE_BYTES."""
    value = os.environ.get(MESSAGE_BYTES_VARIABLE, "").strip()
    if not value:
        return MESSAGE_BYTES
    if not value.isdigit() or int(value) <= 0:
        raise UsageError(f"{MESSAGE_BYTES_VARIABLE}={value!r} is not a number of bytes, e.g. {MESSAGE_BYTES}")
    return int(value)


def too_large_message(source: str, limit: int) -> str:
    """The one line for a message past `limit` from `source` (a server's URL or command)."""
    return (
        f"{source} sent a message larger than {size_text(limit)}; appsdk reads no more of it"
        f" (set {MESSAGE_BYTES_VARIABLE} to a number of bytes to allow more)"
    )


def read_body(response: Any, limit: int) -> bytes:
    """An `http.client` response's whole body, at most `limit` bytes: a Content-Length past it is refused
    before reading, any other body (chunked, or to the end of the connection) is counted as it arrives."""
    if response.length is not None and response.length > limit:
        raise TooLarge(f"its answer says it is {response.length} bytes, larger than {size_text(limit)}")
    body = BoundedBody("", limit)
    parts = []
    while chunk := response.read(READ_CHUNK):
        parts.append(body.feed(chunk))
    return b"".join(parts)


def event_lines(readline: Callable[[int], bytes], limit: int) -> Iterator[bytes]:
    """The lines of an event stream, each event (its lines up to a blank one) at most `limit` bytes: no
    line is read further than the room its event has left."""
    used = 0
    while line := readline(limit - used + 1):
        used += len(line)
        if used > limit:
            raise TooLarge(f"one of its events is larger than {size_text(limit)}")
        if not line.rstrip(b"\r\n"):
            used = 0
        yield line


def size_text(limit: int) -> str:
    return f"{limit / 1_000_000:g} MB" if limit >= 1_000_000 else f"{limit / 1000:g} kB"


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


def httpx_client(
    timeout: float,
    *,
    follow_redirects: bool = True,
    max_bytes: int = DOCUMENT_BYTES,
    guard_redirects: bool = True,
    **options: Any,
) -> httpx.Client:
    """An httpx client that follows redirects by the rules above, gives each request `timeout` seconds
    in all (connect, headers and the whole body), however slowly the server sends them, and reads at
    most `max_bytes` of each answer once decoded: past it, or in an encoding it did not ask for, the
    request raises httpx.DecodingError saying so.

    Sign-in passes follow_redirects=False: an OAuth redirect is an answer to read, not a page to fetch.
    guard_redirects=False leaves every redirect to the caller, who walks and judges each hop itself."""
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

    headers = {"Accept-Encoding": ACCEPTED_ENCODINGS, **(options.pop("headers", None) or {})}
    return httpx.Client(
        timeout=timeout,
        follow_redirects=follow_redirects,
        transport=_GuardedTransport(httpx.HTTPTransport(), timeout, max_bytes),
        event_hooks={"response": [check_redirect] if guard_redirects else []},
        headers=headers,
        **options,
    )


class _GuardedTransport:
    """Wraps an httpx transport: each request gets one deadline for its headers and its whole body, and
    its body is decoded here, bounded (BoundedBody), so httpx gets it plain and never decodes it whole."""

    def __init__(self, inner: Any, seconds: float, max_bytes: int) -> None:
        self._inner = inner
        self._seconds = seconds
        self._max_bytes = max_bytes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        import httpx

        deadline = Deadline(self._seconds)
        remaining = max(0.05, deadline.remaining())
        request.extensions["timeout"] = {"connect": remaining, "read": remaining, "write": remaining, "pool": remaining}
        response = self._inner.handle_request(request)
        stream = response.stream
        try:
            body = BoundedBody(response.headers.get("content-encoding", ""), self._max_bytes)
        except TooLarge as refused:
            stream.close()  # type: ignore[union-attr]
            raise httpx.DecodingError(str(refused), request=request) from None

        def chunks() -> Iterator[bytes]:
            try:
                for chunk in stream:  # type: ignore[union-attr]
                    if deadline.expired:
                        raise httpx.ReadTimeout(
                            f"the answer did not complete within {self._seconds:g} s", request=request
                        )
                    yield body.feed(chunk)
                yield body.end()
            except TooLarge as refused:
                raise httpx.DecodingError(str(refused), request=request) from None

        class _Stream(httpx.SyncByteStream):
            def __iter__(self) -> Iterator[bytes]:
                return chunks()

            def close(self) -> None:
                stream.close()  # type: ignore[union-attr]

        # Decoded above: httpx must not decode again, nor trust a length that was the encoded one.
        plain = [
            (k, v) for k, v in response.headers.multi_items() if k.lower() not in ("content-encoding", "content-length")
        ]
        return httpx.Response(
            status_code=response.status_code,
            headers=plain,
            stream=_Stream(),
            extensions=response.extensions,
            request=request,
        )

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> _GuardedTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
