"""Who the development authorization server accepts as a client, and how a client proves it is one.

- Redirect URIs (registration and CIMD alike): https, http on loopback only, or a private-use scheme
  (RFC 8252 §7.1, e.g. `com.example.app:/callback`). Schemes that run or read something where they land
  (`javascript:`, `data:`, `file:`, ...) are refused: a code sent there is a code handed to an attacker.
- Client ID Metadata Documents (MCP 2026-07-28, draft-ietf-oauth-client-id-metadata-document): a
  `client_id` that is an https URL (http on loopback, for tests) names a JSON document the server fetches,
  checks (its `client_id` is its own URL, its redirect URIs pass the rule above, its auth method is
  `none` or `private_key_jwt` with keys) and keeps for as long as the document's cache headers allow.
  Any web page can make the server fetch a URL this way, so it fetches only plausible ones, bounded in
  size, time and rate, and says why a document is refused without quoting it.
- `private_key_jwt` (RFC 7523 §2.2): the client signs an assertion with a key its document publishes
  (`jwks` inline or `jwks_uri`); the server checks signature, `iss` = `sub` = client_id, `aud`, expiry (no
  more than five minutes ahead) and that the assertion is not replayed.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from appsdk_cli.httpguard import TooLarge
from appsdk_cli.netloc import is_loopback_host, is_loopback_url

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
CIMD_AUTH_METHODS = ("none", "private_key_jwt")
ASSERTION_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
MAX_DOCUMENT_BYTES = 64 * 1024
FETCH_SECONDS = 5.0
DEFAULT_CACHE_SECONDS = 300  # a document that says nothing about caching
MAX_CACHE_SECONDS = 24 * 3600
MAX_CACHED_DOCUMENTS = 256
MAX_ASSERTION_SECONDS = 300  # how far ahead a client assertion's exp may be
ASSERTION_LEEWAY = 30  # clock skew allowed between the client and this server
MAX_CLIENT_NAME = 100
# Fetches (not cache hits) of client documents and key sets, all clients together, per window.
MAX_FETCHES = 30
FETCH_WINDOW = 60.0
# Schemes that are not an app's own: landing there runs, reads or sends something instead of opening an app.
NOT_PRIVATE_USE = frozenset(
    {"javascript", "data", "file", "vbscript", "about", "blob", "filesystem", "view-source"}
    | {"ftp", "ws", "wss", "mailto", "tel", "sms", "urn"}
)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")


class ClientRefused(Exception):
    """A redirect URI, a client metadata document or an assertion that is not acceptable; the message says why."""


def redirect_uri_problem(uri: str) -> str | None:
    """Why this redirect URI may not receive authorization codes, or None when it may."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if parts.fragment:
        return f"{uri} has a fragment"
    if scheme == "https":
        return None if parts.hostname else f"{uri} has no host"
    if scheme == "http":
        if is_loopback_host(parts.hostname or ""):
            return None
        return f"{uri}: use https (http only on loopback)"
    if not _SCHEME.match(scheme) or scheme in NOT_PRIVATE_USE:
        return f"{uri}: a redirect URI must be https, http on loopback, or an app's private-use scheme"
    return None


def is_metadata_document_url(client_id: str) -> bool:
    """A client_id that names a Client ID Metadata Document rather than a registration."""
    parts = urlsplit(client_id)
    return parts.scheme in ("https", "http") and bool(parts.hostname) and parts.path not in ("", "/")


def _url_problem(url: str, loopback_http: bool) -> str | None:
    """Why the server will not fetch this URL for a client (a client_id or a jwks_uri), or None when it will.

    Anyone can make the server fetch one (an `<img>` pointing at /authorize, on any site), so only a
    plausible client's document is fetched: https to a public host (a name, or a global address), or
    plain http to this machine while the server itself is on loopback (for local clients and tests);
    never with user info, a query, a fragment or dot segments (draft-ietf-oauth-client-id-metadata-document
    §3). The refusal names only the URL the caller gave, never anything fetched."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 -- raises ValueError on a malformed port
    except ValueError:
        return f"{url} is not a URL"
    if "@" in parts.netloc or parts.query or parts.fragment:
        return f"{url}: a client document URL has no user info, query or fragment"
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        return f"{url}: a client document URL has no . or .. segments"
    if parts.scheme == "https":
        return None if _public_host(host) else f"{url}: https client documents are fetched from public hosts only"
    if is_loopback_url(url):
        # Only while the server itself is on loopback: behind a tunnel anyone could make it fetch local ports.
        return None if loopback_http else f"{url}: a tunnelled server fetches client documents over https only"
    return f"{url}: a client metadata document must be served over https (http only on loopback)"


def _public_host(host: str) -> bool:
    """A host name with a dot (not localhost's), or a global IP address: not this machine, not its network."""
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_global
    except ValueError:
        pass
    name = host.rstrip(".").lower()
    return "." in name and not name.endswith((".localhost", ".local", ".internal", ".home.arpa"))


def cache_seconds(headers: Any) -> float:
    """How long a fetched document may be kept (RFC 9111 in brief: no-store/no-cache: not at all;
    max-age; else Expires; else a few minutes), capped at a day."""
    control = str(headers.get("cache-control") or "").lower()
    directives = {part.strip().partition("=")[0]: part.strip().partition("=")[2] for part in control.split(",")}
    if "no-store" in directives or "no-cache" in directives:
        return 0.0
    for name in ("s-maxage", "max-age"):
        if name in directives:
            try:
                return float(min(max(int(directives[name].strip('"')), 0), MAX_CACHE_SECONDS))
            except ValueError:
                return 0.0
    if headers.get("expires"):
        from email.utils import parsedate_to_datetime

        try:
            left = parsedate_to_datetime(str(headers["expires"])).timestamp() - time.time()
            return float(min(max(left, 0), MAX_CACHE_SECONDS))
        except (TypeError, ValueError):
            return 0.0
    return float(DEFAULT_CACHE_SECONDS)


@dataclass
class _Cached:
    value: dict[str, Any]
    expires_at: float


class DocumentCache:
    """Client metadata documents and JWK sets, fetched on demand and kept as their headers allow.

    Bounded the way a fetch anyone can trigger must be: each fetch in size and in total time, and all of
    them together to MAX_FETCHES per FETCH_WINDOW seconds (cache hits are free). A refusal says what the
    document must be, never what was fetched: the server is no oracle for what answers at a URL."""

    def __init__(
        self, clock: Callable[[], float] = time.time, loopback_http: Callable[[], bool] = lambda: True
    ) -> None:
        self._clock = clock
        self._loopback_http = loopback_http
        self._documents: dict[str, _Cached] = {}
        self._fetched: deque[float] = deque()  # when the last fetches started, for the rate limit

    async def fetch_json(self, url: str, what: str) -> dict[str, Any]:
        problem = _url_problem(url, self._loopback_http())
        if problem:
            raise ClientRefused(problem)
        now = self._clock()
        cached = self._documents.get(url)
        if cached is not None and cached.expires_at > now:
            return cached.value
        while self._fetched and self._fetched[0] <= now - FETCH_WINDOW:
            self._fetched.popleft()
        if len(self._fetched) >= MAX_FETCHES:
            raise ClientRefused(f"too many client documents fetched in the last minute; try the {what} again shortly")
        self._fetched.append(now)
        unusable = ClientRefused(
            f"cannot use the {what} at {url}: it must answer 200, without a redirect, within {FETCH_SECONDS:.0f} s, "
            f"with a JSON object of at most {MAX_DOCUMENT_BYTES // 1024} KB"
        )
        import asyncio

        import httpx

        try:
            # One deadline for the whole fetch: httpx's timeout is per read, which a dripping server outlasts.
            status, headers, body = await asyncio.wait_for(_download(url), FETCH_SECONDS)
        except (TimeoutError, TooLarge, httpx.HTTPError, ValueError, OSError):
            raise unusable from None
        if status != 200:
            raise unusable
        import json

        try:
            value = json.loads(body)
        except ValueError:
            raise unusable from None
        if not isinstance(value, dict):
            raise unusable
        keep = cache_seconds(headers)
        self._documents.pop(url, None)
        if keep > 0:
            self._documents[url] = _Cached(value, now + keep)
            self._sweep(now)
        return value

    def _sweep(self, now: float) -> None:
        for url in [u for u, c in self._documents.items() if c.expires_at <= now]:
            del self._documents[url]
        while len(self._documents) > MAX_CACHED_DOCUMENTS:
            del self._documents[next(iter(self._documents))]  # the oldest fetch

    def __len__(self) -> int:
        return len(self._documents)


async def _download(url: str) -> tuple[int, Any, bytes]:
    """(status, headers, body) of a GET, reading no more than MAX_DOCUMENT_BYTES once decoded (httpguard's
    BoundedBody: httpx would decode each gzip chunk whole, a thousand times its size)."""
    import httpx

    from appsdk_cli.httpguard import ACCEPTED_ENCODINGS, BoundedBody

    headers = {"Accept": "application/json", "Accept-Encoding": ACCEPTED_ENCODINGS}
    # No redirects: the document must be at the URL that is its client_id.
    async with (
        httpx.AsyncClient(timeout=FETCH_SECONDS, follow_redirects=False) as http,
        http.stream("GET", url, headers=headers) as response,
    ):
        body = b""
        if response.status_code == 200:
            decoded = BoundedBody(response.headers.get("content-encoding", ""), MAX_DOCUMENT_BYTES)
            async for chunk in response.aiter_raw():
                body += decoded.feed(chunk)
            body += decoded.end()
        return response.status_code, response.headers, body


async def metadata_document_client(cache: DocumentCache, client_id: str, scopes: tuple[str, ...]) -> Any:
    """The client a metadata document describes, as mcp's client record; ClientRefused says what is wrong."""
    from mcp.shared.auth import OAuthClientInformationFull
    from pydantic import ValidationError

    document = await cache.fetch_json(client_id, "client metadata document")
    # Each refusal says what the document must be, quoting none of it: whoever names a URL as client_id
    # must not learn what answers there.
    where = f"the client metadata document at {client_id}"
    if document.get("client_id") != client_id:
        raise ClientRefused(f"{where}: its client_id is not its own URL")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise ClientRefused(f"{where} lists no redirect_uris")
    if any(redirect_uri_problem(uri) for uri in uris):
        raise ClientRefused(
            f"{where} lists a redirect URI that may not receive codes: each must be https, http on loopback, "
            "or an app's private-use scheme, without a fragment"
        )
    method = document.get("token_endpoint_auth_method", "none")
    if method not in CIMD_AUTH_METHODS:
        raise ClientRefused(
            f"{where} asks for another token_endpoint_auth_method than "
            f"{' or '.join(CIMD_AUTH_METHODS)}, which a metadata-document client uses (it has no shared secret)"
        )
    if method == "private_key_jwt" and not (isinstance(document.get("jwks"), dict) or document.get("jwks_uri")):
        raise ClientRefused(f"{where} uses private_key_jwt but has no jwks or jwks_uri")
    if any(k in document for k in ("client_secret", "client_secret_expires_at")):
        raise ClientRefused(f"{where} carries a client_secret; it must not")
    grant_types = document.get("grant_types") or ["authorization_code", "refresh_token"]
    asked = str(document.get("scope") or "").split()
    name = document.get("client_name")
    try:
        return OAuthClientInformationFull(
            client_id=client_id,
            # Shown on the consent page as the document's own claim; a name, not a page.
            client_name=name[:MAX_CLIENT_NAME] if isinstance(name, str) else None,
            redirect_uris=uris,
            token_endpoint_auth_method=method,
            grant_types=grant_types,
            response_types=document.get("response_types") or ["code"],
            scope=" ".join(s for s in asked if s in scopes) if asked else " ".join(scopes),
            jwks_uri=document.get("jwks_uri"),
            jwks=document.get("jwks"),
            application_type=document.get("application_type"),
        )
    except ValidationError as problem:
        field_name = next(iter(problem.errors()[0].get("loc", ())), "a field")
        raise ClientRefused(f"{where}: its {field_name} is not valid") from None


class AssertionVerifier:
    """Checks `private_key_jwt` client assertions and remembers their `jti` until they expire."""

    def __init__(self, cache: DocumentCache, clock: Callable[[], float] = time.time) -> None:
        self._cache = cache
        self._clock = clock
        self._seen: dict[str, float] = {}  # jti -> exp

    async def verify(self, client: Any, assertion: str, audiences: list[str]) -> None:
        import jwt

        keys = await self._keys(client)
        try:
            header = jwt.get_unverified_header(assertion)
        except jwt.PyJWTError:
            raise ClientRefused("client_assertion is not a JWT") from None
        kid = header.get("kid")
        candidates = [k for k in keys if kid is None or k.get("kid") in (None, kid)]
        if not candidates:
            raise ClientRefused(f"no key in the client's JWK set matches kid {kid!r}")
        claims: dict[str, Any] | None = None
        for jwk in candidates:
            try:
                key = jwt.PyJWK.from_dict(jwk)
                claims = jwt.decode(
                    assertion,
                    key.key,
                    algorithms=[a for a in ASSERTION_ALGORITHMS if a == header.get("alg")],
                    audience=audiences,
                    options={"require": ["iss", "sub", "aud", "exp", "jti"]},
                    leeway=ASSERTION_LEEWAY,
                )
                break
            except jwt.ExpiredSignatureError:
                raise ClientRefused("the client assertion has expired") from None
            except jwt.InvalidAudienceError:
                raise ClientRefused(f"the client assertion's aud is not {audiences[0]}") from None
            except jwt.MissingRequiredClaimError as missing:
                raise ClientRefused(f"the client assertion has no {missing.claim} claim") from None
            except (jwt.PyJWTError, ValueError, TypeError):
                continue
        if claims is None:
            raise ClientRefused("the client assertion's signature does not verify with the client's keys")
        if claims["iss"] != client.client_id or claims["sub"] != client.client_id:
            raise ClientRefused("the client assertion's iss and sub must both be the client_id")
        now = self._clock()
        # An assertion is made for one request: one that lives for years is a stolen credential's best friend
        # (and its jti would have to be remembered for as long).
        if float(claims["exp"]) > now + MAX_ASSERTION_SECONDS + ASSERTION_LEEWAY:
            raise ClientRefused(
                f"the client assertion lives too long: its exp may be at most {MAX_ASSERTION_SECONDS} s from now"
            )
        for jti in [j for j, exp in self._seen.items() if exp < now - 60]:
            del self._seen[jti]
        jti = str(claims["jti"])
        if jti in self._seen:
            raise ClientRefused("the client assertion was already used (jti replayed)")
        self._seen[jti] = float(claims["exp"])

    async def _keys(self, client: Any) -> list[dict[str, Any]]:
        jwks = client.jwks if isinstance(client.jwks, dict) else None
        if jwks is None and client.jwks_uri:
            jwks = await self._cache.fetch_json(str(client.jwks_uri), "JWK set")
        keys = (jwks or {}).get("keys")
        if not isinstance(keys, list) or not keys:
            raise ClientRefused("the client publishes no keys (jwks or jwks_uri)")
        return [k for k in keys if isinstance(k, dict)]
