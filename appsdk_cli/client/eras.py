"""Protocol eras: which ones appsdk speaks, how `--protocol` names them, and the cache of what a server spoke.

- 2026-07-28 ("modern"): no handshake, no session; each request is one self-describing exchange.
- 2025-11-25, 2025-06-18 (and 2025-03-26): the `initialize` handshake over streamable HTTP or stdio.
- 2024-11-05: the handshake over the deprecated HTTP+SSE transport (GET an event stream, POST to the
  endpoint it names), for servers that serve nothing else.

Negotiating costs exchanges (a `server/discover` probe, maybe a refused request on the way down), so the
outcome is remembered per endpoint URL: in memory for the rest of the command, and in
APPSDK_HOME/eras.json for a few minutes, so the next `appsdk call` goes straight to the right era. It is
keyed by the whole URL, not just the origin: one origin may host several servers (a gateway, a fleet).
A remembered era that stops working is forgotten and negotiated again.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from appsdk_cli.client.modern import MODERN_VERSION
from appsdk_cli.home import home_location, write_private

# The versions reachable by the initialize handshake, newest last; tests check this against
# mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS so the two cannot drift apart unnoticed.
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_PROTOCOL_VERSIONS[-1]
LEGACY_SSE_VERSION = "2024-11-05"
AUTO = "auto"
# What --protocol accepts, newest first.
PROTOCOL_CHOICES = (AUTO, MODERN_VERSION, "2025-11-25", "2025-06-18", LEGACY_SSE_VERSION)

STREAMABLE_HTTP = "streamable-http"
SSE = "sse"
STDIO = "stdio"
CACHE_FILE = "eras.json"
CACHE_SECONDS = 300.0


@dataclass(frozen=True)
class Era:
    """What a connection speaks: the protocol version and the transport it rides."""

    version: str
    transport: str

    @property
    def modern(self) -> bool:
        return self.version == MODERN_VERSION

    @property
    def label(self) -> str:
        if self.modern:
            return self.version
        if self.transport == SSE:
            return f"HTTP+SSE ({self.version} handshake)"
        return f"{self.version} handshake"


@dataclass
class EraCache:
    """Endpoint URL -> the era it spoke. One per command (shared by all its sessions), backed by a file."""

    path: Path | None = None
    lifetime: float = CACHE_SECONDS
    _memory: dict[str, Era] = field(default_factory=dict)
    _loaded: dict[str, dict] | None = None

    def _file(self) -> Path:
        return self.path or home_location() / CACHE_FILE

    def _entries(self) -> dict[str, dict]:
        if self._loaded is None:
            try:
                value = json.loads(self._file().read_text(encoding="utf-8"))
            except (OSError, ValueError):
                value = {}
            self._loaded = value if isinstance(value, dict) else {}
        return self._loaded

    def get(self, url: str) -> Era | None:
        if url in self._memory:
            return self._memory[url]
        entry = self._entries().get(url)
        if not isinstance(entry, dict):
            return None
        at, version, transport = entry.get("at"), entry.get("version"), entry.get("transport")
        if not isinstance(at, (int, float)) or time.time() - at > self.lifetime or not isinstance(version, str):
            return None
        if version != MODERN_VERSION and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        if transport not in (STREAMABLE_HTTP, SSE):
            return None
        era = Era(version, transport)
        self._memory[url] = era
        return era

    def remember(self, url: str, era: Era) -> None:
        if self._memory.get(url) == era:
            return
        self._memory[url] = era
        now = time.time()
        entries = {
            k: v for k, v in self._entries().items() if isinstance(v, dict) and now - v.get("at", 0) < self.lifetime
        }
        entries[url] = {"version": era.version, "transport": era.transport, "at": now}
        self._loaded = entries
        self._write(entries)

    def forget(self, url: str) -> None:
        self._memory.pop(url, None)
        entries = self._entries()
        if entries.pop(url, None) is not None:
            self._write(entries)

    def _write(self, entries: dict[str, dict]) -> None:
        # A cache that cannot be written (read-only home) only costs the next command a negotiation.
        # `apps` lists several servers at once, each remembering its era: the writer's temporary file is per thread.
        with contextlib.suppress(OSError):
            write_private(self._file(), json.dumps(entries, indent=1))
