"""The runtime snapshot behind app/installed: the last listing of every app, committed as one JSON file.

It is a cache, kept under APPSDK_HOME (snapshots/*.json, one per registry view): an unreadable one counts
as none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from appsdk_cli.apps.files import write_atomically
from appsdk_cli.apps.listing import Listing
from appsdk_cli.apps.registry import RegisteredApp

SNAPSHOT_VERSION = 1


@dataclass(frozen=True)
class Snapshot:
    """The committed runtime state: one Listing per app id, replaced only by a refresh that fully succeeded."""

    listings: dict[str, Listing] = field(default_factory=dict)
    refreshed_at: float | None = None

    def for_app(self, app: RegisteredApp) -> Listing | None:
        listing = self.listings.get(app.id)
        # A listing taken from another URL says nothing about the server registered now.
        return listing if listing is not None and listing.url == app.url else None


def read_snapshot(path: Path) -> Snapshot | None:
    """The committed snapshot, or None if there is none (an unreadable one counts as none: it is a cache)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("version") != SNAPSHOT_VERSION or not isinstance(raw.get("apps"), dict):
        return None
    listings = {}
    for app_id, entry in raw["apps"].items():
        listing = Listing.from_json(entry)
        if listing is not None:
            listings[app_id] = listing
    refreshed = raw.get("refreshedAt")
    return Snapshot(listings, float(refreshed) if isinstance(refreshed, int | float) else None)


def write_snapshot(path: Path, snapshot: Snapshot, *, home: Path) -> None:
    document = {
        "version": SNAPSHOT_VERSION,
        "refreshedAt": snapshot.refreshed_at,
        "apps": {app_id: listing.as_json() for app_id, listing in sorted(snapshot.listings.items())},
    }
    write_atomically(path, json.dumps(document, ensure_ascii=False, indent=1) + "\n", home=home)
