"""The tool list a server sent, remembered for a few minutes so `appsdk call` costs one exchange.

`appsdk call` needs a tool's definition before it calls: its inputSchema turns KEY=VALUE words into
typed arguments, its `x-mcp-header` annotations become `Mcp-Param-*` headers, and its `_meta` names the
widget and status texts shown with the result. Fetching tools/list for that on every call doubles the
exchanges a stateless (2026-07-28) server sees. So the list is kept here, beside the era cache
(APPSDK_HOME/tools.json), per endpoint URL, era and authorization context (a hash of the bearer token:
a `private` list must not serve another principal).

The remembered definition is a hint for building the request, never served as a tools/list answer
(`appsdk tools` always asks), and the server stays the judge of the call. That is what makes it safe to
use past the list's `ttlMs` (SEP-2549), which most servers leave at 0. The caller (remote.call_tool)
asks again when the hint can be stale: a tool it does not know, words its schema refuses, a JSON-RPC
error that rejects the request before it runs (invalid params, header mismatch), an isError result, or
a `notifications/tools/list_changed` seen during the command.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.client.eras import CACHE_SECONDS
from appsdk_cli.home import home_location, write_private

CACHE_FILE = "tools.json"
MAX_ENTRIES = 32  # servers; the oldest go first, so the file stays small however many servers one calls


@dataclass(frozen=True)
class ToolList:
    tools: list[dict[str, Any]]  # as tools/list sent them, minus the ones a modern client must leave out
    dropped: dict[str, str]  # name -> why it was left out (2026-07-28 x-mcp-header rules)


def cache_key(url: str, era_version: str, authorization: str | None, *, ui: bool = True) -> str:
    """One entry per endpoint, era, principal and UI capability offered (a server may list other tools to
    a host without widgets); the token itself is never written down."""
    import hashlib

    who = hashlib.sha256(authorization.encode()).hexdigest()[:16] if authorization else "-"
    return f"{era_version} {who} {url}" if ui else f"{era_version} {who} no-ui {url}"


@dataclass
class ToolCache:
    path: Path | None = None
    lifetime: float = CACHE_SECONDS
    _entries: dict[str, dict[str, Any]] | None = field(default=None, repr=False)

    def _file(self) -> Path:
        return self.path or home_location() / CACHE_FILE

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            try:
                value = json.loads(self._file().read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                value = {}
            self._entries = value if isinstance(value, dict) else {}
        return self._entries

    def get(self, key: str) -> ToolList | None:
        entry = self._load().get(key)
        if not isinstance(entry, dict):
            return None
        at, tools, dropped = entry.get("at"), entry.get("tools"), entry.get("dropped")
        if not isinstance(at, (int, float)) or not 0 <= time.time() - at <= self.lifetime:
            return None
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools) or not isinstance(dropped, dict):
            return None
        return ToolList(tools, {str(k): str(v) for k, v in dropped.items()})

    def remember(self, key: str, listing: ToolList) -> None:
        now = time.time()
        entries = {
            k: v
            for k, v in self._load().items()
            if isinstance(v, dict) and isinstance(v.get("at"), (int, float)) and 0 <= now - v["at"] <= self.lifetime
        }
        entries.pop(key, None)
        entries[key] = {"at": now, "tools": listing.tools, "dropped": listing.dropped}
        # Insertion order is age order: keep the newest MAX_ENTRIES.
        self._entries = dict(list(entries.items())[-MAX_ENTRIES:])
        self._write()

    def forget(self, key: str) -> None:
        if self._load().pop(key, None) is not None:
            self._write()

    def _write(self) -> None:
        # A cache that cannot be written (read-only home) only costs the next call a tools/list.
        with contextlib.suppress(OSError):
            write_private(self._file(), json.dumps(self._entries, separators=(",", ":")))
