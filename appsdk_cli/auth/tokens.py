"""The token cache: what appsdk holds for each protected server, keyed by (server, issuer).

Kept apart from the sign-in flow because more than the flow reads it: `appsdk auth status` and
`appsdk auth logout` list and drop entries without ever signing in, and a command that only needs a
cached token should not import the flow.

One file per server under APPSDK_HOME/tokens/, mode 0600, written atomically: the grants for that
server, one per authorization server (issuer) that issued them, and which issuer was used last. Keying
by issuer is the mix-up defence's other half: a token one issuer gave for a server is never offered as
another issuer's, and signing in somewhere else for the same server does not overwrite it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from appsdk_cli.home import home_location, write_private

TOKENS_DIR = "tokens"
EXPIRY_MARGIN = 30  # refresh a token this many seconds before it runs out


@dataclass
class CachedTokens:
    resource: str
    issuer: str
    token_endpoint: str
    client_id: str
    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_at: float | None
    scopes: list[str] = field(default_factory=list)  # what was granted: a step-up asks for these and more
    client_secret: str | None = field(default=None, repr=False)  # a confidential client's (DCR or pre-registered)
    auth_method: str = "none"  # token_endpoint_auth_method
    revocation_endpoint: str | None = None
    saved_at: float = 0.0
    # Where the server's resource metadata was read at sign-in ("" when it had none, MCP 2025-03-26; None in
    # caches from before it was kept): the server must show it again before the token is sent (release.py).
    resource_metadata: str | None = None

    def fresh(self) -> bool:
        return self.expires_at is None or self.expires_at > time.time() + EXPIRY_MARGIN

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> CachedTokens:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in value.items() if k in known})


@dataclass
class ServerGrants:
    """Everything cached for one server."""

    server: str
    grants: dict[str, CachedTokens] = field(default_factory=dict)  # issuer -> tokens
    current: str | None = None  # the issuer used last

    def latest(self) -> CachedTokens | None:
        if self.current in self.grants:
            return self.grants[self.current]
        return max(self.grants.values(), key=lambda t: t.saved_at, default=None)


def server_key(url: str) -> str:
    """Servers compare as URLs: scheme and host case-insensitively, a trailing slash aside."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def cache_path(server_url: str, root: Path | None = None) -> Path:
    digest = hashlib.sha256(server_key(server_url).encode()).hexdigest()[:32]
    return (root or home_location()) / TOKENS_DIR / f"{digest}.json"


def _read(path: Path) -> ServerGrants | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
        if "grants" not in value:  # a cache file from before the issuer key: one grant
            tokens = CachedTokens.from_json(value)
            return ServerGrants(tokens.resource, {tokens.issuer: tokens}, tokens.issuer)
        grants = {issuer: CachedTokens.from_json(t) for issuer, t in value["grants"].items()}
        return ServerGrants(str(value["server"]), grants, value.get("current"))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def load_server(server_url: str, root: Path | None = None) -> ServerGrants:
    return _read(cache_path(server_url, root)) or ServerGrants(server_key(server_url))


def load(server_url: str, issuer: str | None = None, root: Path | None = None) -> CachedTokens | None:
    """The cached tokens for this server from `issuer`, or from the issuer used last."""
    cached = load_server(server_url, root)
    return cached.grants.get(issuer) if issuer is not None else cached.latest()


def save(server_url: str, tokens: CachedTokens, root: Path | None = None) -> Path:
    """Written 0600 from the first byte (never readable by others, not even briefly), then renamed into place."""
    cached = load_server(server_url, root)
    tokens.saved_at = time.time()
    cached.grants[tokens.issuer] = tokens
    cached.current = tokens.issuer
    return _write(server_url, cached, root)


def _write(server_url: str, cached: ServerGrants, root: Path | None) -> Path:
    path = cache_path(server_url, root)
    if not cached.grants:
        path.unlink(missing_ok=True)
        return path
    body = {
        "server": cached.server,
        "current": cached.current,
        "grants": {issuer: asdict(t) for issuer, t in cached.grants.items()},
    }
    return write_private(path, json.dumps(body), home=root)


def forget(server_url: str, issuer: str | None = None, root: Path | None = None) -> list[CachedTokens]:
    """Drop this server's tokens from `issuer` (all of them when None); returns what was dropped."""
    cached = load_server(server_url, root)
    if issuer is None:
        dropped = list(cached.grants.values())
        cache_path(server_url, root).unlink(missing_ok=True)
        return dropped
    gone = cached.grants.pop(issuer, None)
    if cached.current == issuer:
        cached.current = None
    _write(server_url, cached, root)
    return [gone] if gone else []


def every_server(root: Path | None = None) -> list[ServerGrants]:
    """All cached servers, sorted by URL (unreadable files are skipped)."""
    folder = (root or home_location()) / TOKENS_DIR
    found = []
    with contextlib.suppress(OSError):
        for path in sorted(folder.glob("*.json")):
            cached = _read(path)
            if cached is not None and cached.grants:
                found.append(cached)
    return sorted(found, key=lambda c: c.server)


def forget_everything(root: Path | None = None) -> list[CachedTokens]:
    dropped: list[CachedTokens] = []
    with contextlib.suppress(OSError):
        for path in ((root or home_location()) / TOKENS_DIR).glob("*.json"):
            cached = _read(path)
            dropped += list(cached.grants.values()) if cached else []
            path.unlink(missing_ok=True)
    return dropped


@dataclass(frozen=True)
class GrantStatus:
    """One cached grant as `appsdk auth status` shows it: never a token."""

    server: str
    issuer: str
    client_id: str
    scopes: tuple[str, ...]
    expires_at: float | None
    refreshable: bool
    current: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "issuer": self.issuer,
            "clientId": self.client_id,
            "scopes": list(self.scopes),
            "expiresAt": self.expires_at,
            "expired": self.expires_at is not None and self.expires_at <= time.time(),
            "refreshable": self.refreshable,
            "current": self.current,
        }


def status(root: Path | None = None) -> list[GrantStatus]:
    rows = []
    for cached in every_server(root):
        for issuer, tokens in sorted(cached.grants.items()):
            rows.append(
                GrantStatus(
                    server=cached.server,
                    issuer=issuer,
                    client_id=tokens.client_id,
                    scopes=tuple(tokens.scopes),
                    expires_at=tokens.expires_at,
                    refreshable=bool(tokens.refresh_token),
                    current=issuer == (cached.current or issuer),
                )
            )
    return rows
