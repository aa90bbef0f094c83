"""app/installed, app/list and app/read over the local registry: one implementation, two front ends.

`AppsService` answers the three methods with result objects; `appsdk apps ...` renders them and
`appsdk app-server` puts their `wire()` on stdout. It holds no global state: each instance owns its caches.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.appmeta import ToolMeta, tool_meta
from appsdk_cli.apps import policy as rules
from appsdk_cli.apps.cache import TtlCache
from appsdk_cli.apps.files import Paths
from appsdk_cli.apps.installed import Snapshot, read_snapshot, write_snapshot
from appsdk_cli.apps.listing import DEFAULT_LIST_TIMEOUT, Lister, Listing, ListingFailure, list_app, list_concurrently
from appsdk_cli.apps.policyfiles import load_policy
from appsdk_cli.apps.registry import RegisteredApp, load_apps
from appsdk_cli.apps.tomlfile import RegistryFileError
from appsdk_cli.errors import AppsdkError, UsageError

MAX_READ_IDS = 100


class RefreshFailed(AppsdkError):
    """Listing some app's server failed; the committed snapshot is unchanged (exit 1, JSON-RPC -32603)."""

    def __init__(self, failures: list[ListingFailure]) -> None:
        detail = "; ".join(str(failure) for failure in failures)
        super().__init__(f"failed to refresh installed connector runtime state: {detail}")
        self.failures = failures


class TooManyAppIds(UsageError):
    """More than 100 app ids in one read (exit 2, JSON-RPC -32602)."""

    def __init__(self) -> None:
        super().__init__(f"app/read accepts at most {MAX_READ_IDS} appIds")


class BadCursor(UsageError):
    """A cursor that is not a start offset, or one past the end (JSON-RPC -32600)."""


# --- results -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstalledApp:
    app: RegisteredApp
    listing: Listing | None  # None: the snapshot has no listing of this app's current URL
    enabled: bool
    callable: bool
    failure: str | None = None  # why its server could not be listed just now (then it is not callable)

    def wire(self) -> dict[str, Any]:
        runtime_name = self.listing.runtime_name if self.listing else None
        return {"id": self.app.id, "runtimeName": runtime_name, "enabled": self.enabled, "callable": self.callable}


@dataclass(frozen=True)
class InstalledResult:
    apps: list[InstalledApp]
    feature_enabled: bool
    refreshed: bool  # this call listed every server
    refreshed_at: float | None
    failures: list[ListingFailure] = field(default_factory=list)  # partial: servers that could not be listed

    def wire(self) -> dict[str, Any]:
        return {"apps": [row.wire() for row in self.apps]}


def app_info(app: RegisteredApp, *, accessible: bool, enabled: bool) -> dict[str, Any]:
    """The AppInfo shape: the seed's fields plus the source's; what a local registry cannot know is null."""
    return {
        "id": app.id,
        "name": app.name,
        "description": app.description,
        "logoUrl": app.icon_url,
        "logoUrlDark": app.icon_url_dark,
        "iconAssets": None,
        "iconDarkAssets": None,
        "distributionChannel": None,
        "branding": None,
        "appMetadata": None,
        "labels": None,
        "installUrl": None,
        "isAccessible": accessible,
        "isEnabled": enabled,
        "pluginDisplayNames": [],
    }


@dataclass(frozen=True)
class ListResult:
    data: list[dict[str, Any]]  # AppInfo, wire shape
    next_cursor: str | None
    feature_enabled: bool
    urls: dict[str, str] = field(default_factory=dict)
    failures: list[ListingFailure] = field(default_factory=list)  # servers that could not be listed now

    def wire(self) -> dict[str, Any]:
        return {"data": self.data, "nextCursor": self.next_cursor}


@dataclass(frozen=True)
class ToolSummary:
    name: str
    title: str | None
    description: str
    decision: rules.Decision
    read_only: bool
    model_visible: bool

    def wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "isEnabled": self.decision.allowed,
            "disabledReason": None if self.decision.allowed else self.decision.reason,
            "isReadOnly": self.read_only,
        }


def tool_summary(policy: rules.Policy, app_id: str, tool: dict[str, Any] | ToolMeta) -> ToolSummary:
    meta = tool if isinstance(tool, ToolMeta) else tool_meta(tool)
    return ToolSummary(
        name=meta.name,
        title=meta.title,
        description=meta.description or "",
        decision=rules.tool_enabled(policy, app_id, meta),
        read_only=meta.read_only is True,
        model_visible=meta.model_visible,
    )


@dataclass(frozen=True)
class AppMetadata:
    app: RegisteredApp
    tools: list[ToolSummary] | None  # None unless includeTools

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.app.id,
            "name": self.app.name,
            "description": self.app.description,
            "iconUrl": self.app.icon_url,
            "iconUrlDark": self.app.icon_url_dark,
            "distributionChannel": None,
            "installUrl": None,
            "pluginDisplayNames": [],
            "toolSummaries": None if self.tools is None else [tool.wire() for tool in self.tools],
        }


@dataclass(frozen=True)
class ReadResult:
    apps: list[AppMetadata]
    missing: list[str]
    feature_enabled: bool
    unregistered: list[str]  # the part of `missing` that no apps.toml names
    failures: list[ListingFailure]  # registered, but the server could not be listed (so: missing)

    def wire(self) -> dict[str, Any]:
        return {"apps": [app.wire() for app in self.apps], "missingAppIds": self.missing}


# --- the service ---------------------------------------------------------------------------------------


ListUpdate = Callable[[list[dict[str, Any]]], None]


def parse_cursor(cursor: str | None) -> int:
    if cursor is None:
        return 0
    # Codex parses a usize: digits only, no sign, no spaces.
    if not cursor.isascii() or not cursor.isdigit() or int(cursor) >= 2**64:
        raise BadCursor(f"invalid cursor: {cursor}")
    return int(cursor)


def _signature(paths: list[Path]) -> tuple[tuple[str, int, int] | None, ...]:
    signature = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            signature.append(None)
            continue
        signature.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(signature)


class AppsService:
    """The apps methods over one registry view (APPSDK_HOME plus, maybe, a project's .appsdk/).

    Caches, all per instance: the directory (the registered apps) and every app's listing for an hour,
    each replaced only by a fetch that succeeded; the runtime snapshot is committed to a file, so that
    `appsdk apps installed` in a later process reads what an earlier refresh saw.
    """

    def __init__(self, paths: Paths, *, timeout: float = DEFAULT_LIST_TIMEOUT, lister: Lister = list_app) -> None:
        self.paths = paths
        self.timeout = timeout
        self.lister = lister
        self._directory = TtlCache()
        self._listings = TtlCache()
        self._snapshot_lock = threading.Lock()
        self._snapshot_seen: tuple[Any, Snapshot | None] | None = None
        self._policy_lock = threading.Lock()
        self._policy_seen: tuple[Any, rules.Policy] | None = None

    # -- sources --

    def policy(self) -> rules.Policy:
        """The policy files, parsed again only when one of them changed (warm reads stay well under 5 ms)."""
        files = [*self.paths.config_files(), self.paths.requirements_file]
        signature = _signature(files)
        with self._policy_lock:
            if self._policy_seen is not None and self._policy_seen[0] == signature:
                return self._policy_seen[1]
        policy = load_policy(self.paths)
        with self._policy_lock:
            self._policy_seen = (signature, policy)
        return policy

    def directory(self, *, refetch: bool = False) -> dict[str, RegisteredApp]:
        """The registered apps. Cached; a changed apps.toml is reloaded, and a reload that fails keeps serving
        the last good registry, unless the caller asked to refetch."""
        signature = _signature(self.paths.apps_files())
        cached = self._directory.get("apps")
        if cached is not None and not refetch and cached[0] == signature:
            return cached[1]
        try:
            apps = load_apps(self.paths)
        except RegistryFileError:
            if cached is not None and not refetch:
                return cached[1]
            raise
        self._directory.put("apps", (signature, apps))
        return apps

    def listings(
        self, apps: list[RegisteredApp], *, refetch: bool = False
    ) -> tuple[dict[str, Listing], list[ListingFailure]]:
        """Each app's tools/list from the cache, else from its server (all at once); failures leave the cache be."""
        found: dict[str, Listing] = {}
        missing: list[RegisteredApp] = []
        for app in apps:
            cached = None if refetch else self._listings.get((app.id, app.url))
            if cached is not None:
                found[app.id] = cached
            else:
                missing.append(app)
        failures = []
        for app_id, outcome in list_concurrently(missing, self.timeout, self.lister).items():
            if isinstance(outcome, Listing):
                self._listings.put((app_id, outcome.url), outcome)
                found[app_id] = outcome
            else:
                failures.append(outcome)
        return found, failures

    # -- the runtime snapshot --

    def committed_snapshot(self) -> Snapshot | None:
        path = self.paths.snapshot_file
        signature = _signature([path])
        with self._snapshot_lock:
            if self._snapshot_seen is not None and self._snapshot_seen[0] == signature:
                return self._snapshot_seen[1]
            snapshot = read_snapshot(path)
            self._snapshot_seen = (signature, snapshot)
            return snapshot

    def refresh(self, apps: list[RegisteredApp]) -> Snapshot:
        """List every app; commit the new snapshot only if every listing succeeded."""
        outcomes = list_concurrently(apps, self.timeout, self.lister)
        failures = [outcome for outcome in outcomes.values() if isinstance(outcome, ListingFailure)]
        if failures:
            raise RefreshFailed(failures)
        listings = {app_id: outcome for app_id, outcome in outcomes.items() if isinstance(outcome, Listing)}
        for listing_id, listing in listings.items():
            self._listings.put((listing_id, listing.url), listing)
        snapshot = Snapshot(listings, time.time())
        with self._snapshot_lock:
            write_snapshot(self.paths.snapshot_file, snapshot, home=self.paths.home)
            self._snapshot_seen = (_signature([self.paths.snapshot_file]), snapshot)
        return snapshot

    # -- the methods --

    def installed(self, *, force_refresh: bool = False, partial: bool = False) -> InstalledResult:
        """The runtime snapshot's rows. A refresh that cannot list every server raises RefreshFailed (as
        Codex's app/installed does) unless `partial`: then each server that failed is a row that is not
        callable, with the reason, the others are listed fresh, and the committed snapshot stays as it was."""
        policy = self.policy()
        apps = load_apps(self.paths)
        snapshot = None if force_refresh else self.committed_snapshot()
        refreshed = snapshot is None  # no snapshot committed yet: the first read takes one
        failures: list[ListingFailure] = []
        if snapshot is None:
            try:
                snapshot = self.refresh(list(apps.values()))
            except RefreshFailed as problem:
                if not partial:
                    raise
                failures = problem.failures
                listed, _ = self.listings([app for app in apps.values() if app.id not in {f.app_id for f in failures}])
                snapshot = Snapshot(listed, time.time())
        failed = {failure.app_id: failure.reason for failure in failures}
        rows = []
        for app in apps.values():
            listing = None if app.id in failed else snapshot.for_app(app)
            rows.append(
                InstalledApp(
                    app,
                    listing,
                    enabled=rules.app_effectively_enabled(policy, app.id),
                    callable=app.id not in failed
                    and rules.app_callable(policy, app.id, listing.metas if listing else ()),
                    failure=failed.get(app.id),
                )
            )
        return InstalledResult(rows, rules.feature_enabled(policy), refreshed, snapshot.refreshed_at, failures)

    def list(
        self,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        force_refetch: bool = False,
        on_update: ListUpdate | None = None,
    ) -> ListResult:
        start = parse_cursor(cursor)
        policy = self.policy()
        if not rules.feature_enabled(policy):
            return ListResult([], None, feature_enabled=False)
        directory = self.directory(refetch=force_refetch)
        apps = list(directory.values())

        def merged(accessible: set[str]) -> list[dict[str, Any]]:
            # Every accessible app is in the directory by construction: both come from the same registry.
            rows = [
                app_info(app, accessible=app.id in accessible, enabled=rules.app_enabled(policy, app.id).allowed)
                for app in apps
            ]
            # By name as a person reads it ("apple" before "Zeta"), then exactly, so the order is stable.
            return sorted(
                rows, key=lambda row: (not row["isAccessible"], row["name"].casefold(), row["name"], row["id"])
            )

        if on_update is not None:
            # The directory has loaded: say so with what is known of access so far (cached listings only).
            known = {app.id for app in apps if (cached := self._listings.get((app.id, app.url))) and cached.tools}
            on_update(merged(known))
        listings, failures = self.listings(apps, refetch=force_refetch)
        everything = merged({app_id for app_id, listing in listings.items() if listing.tools})
        if on_update is not None:
            on_update(everything)
        total = len(everything)
        if start > total:
            raise BadCursor(f"cursor {start} exceeds total apps {total}")
        end = total if limit is None else min(total, start + max(1, limit))
        return ListResult(
            everything[start:end],
            str(end) if end < total else None,
            feature_enabled=True,
            urls={app.id: app.url for app in apps},
            failures=failures,
        )

    def read(self, app_ids: list[str], *, include_tools: bool = False) -> ReadResult:
        if len(app_ids) > MAX_READ_IDS:
            raise TooManyAppIds()
        wanted = list(dict.fromkeys(app_ids))  # first occurrence wins, order kept
        policy = self.policy()
        if not rules.feature_enabled(policy):
            return ReadResult([], wanted, False, [], [])
        directory = self.directory()
        registered = [directory[app_id] for app_id in wanted if app_id in directory]
        listings: dict[str, Listing] = {}
        failures: list[ListingFailure] = []
        if include_tools:
            listings, failures = self.listings(registered)
        apps = []
        for app in registered:
            if include_tools and app.id not in listings:
                continue  # its server could not be listed: inaccessible, so missing
            tools = [tool_summary(policy, app.id, meta) for meta in listings[app.id].metas] if include_tools else None
            apps.append(AppMetadata(app, tools))
        present = {metadata.app.id for metadata in apps}
        missing = [app_id for app_id in wanted if app_id not in present]
        unregistered = [app_id for app_id in wanted if app_id not in directory]
        return ReadResult(apps, missing, True, unregistered, failures)
