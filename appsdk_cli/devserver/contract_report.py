"""What `appsdk dev` says about the release contract after each reload, and against which baseline.

The baseline is the project's committed appsdk.contract.json (what `appsdk snapshot` records and
`appsdk check --against` compares with) when it has one: an unpublished change and then its revert read
as a change and then "back to the snapshot", never as a breaking change of the revert. Without one,
each reload is compared with the one before. Either way a report is made only when there is something
new to say, so the tenth save of a widget does not repeat the first one's line.

The snapshot file is read again on every reload (a few kilobytes): recording a new one during a session
moves the baseline without a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from appsdk_cli.contract.compare import Change, Impact, compare
from appsdk_cli.contract.record import DEFAULT_FILE, load
from appsdk_cli.devserver.events import ContractReport
from appsdk_cli.errors import AppsdkError


class ContractReporter:
    """Fed each good load's contract (the first one included); answers what to say about it, if anything."""

    def __init__(self, project: Path) -> None:
        self._snapshot_path = project / DEFAULT_FILE
        self._previous: dict[str, Any] | None = None  # the last good load's contract
        self._baseline: dict[str, Any] | None = None  # the snapshot `_said` was measured against
        self._said: tuple[Change, ...] = ()  # what stands as said, against `_baseline` (or the last reload)
        self._said_live: set[Change] = set()  # against the last reload: what went live, said once a session

    def after_load(self, contract: dict[str, Any]) -> ContractReport | None:
        previous, self._previous = self._previous, contract
        snapshot = self._snapshot()
        if snapshot is None:
            return self._against_last_reload(previous, contract)
        current = tuple(compare(snapshot, contract))
        # Nothing is said at start, nor yet against a snapshot that is new to this session: the first
        # reload against it says everything that differs from it.
        said = self._said if snapshot == self._baseline else ()
        self._baseline = snapshot
        if previous is None:
            self._said = ()
            return None
        self._said = current
        new = tuple(change for change in current if change not in said)
        resolved = tuple(change for change in said if change not in current)
        if not new and not resolved:
            return None
        return ContractReport(baseline=DEFAULT_FILE, changes=new, resolved=resolved, standing=len(current))

    def _against_last_reload(self, previous: dict[str, Any] | None, contract: dict[str, Any]) -> ContractReport | None:
        if self._baseline is not None:
            self._baseline, self._said = None, ()  # the snapshot went away: what was said meant it
        if previous is None:
            return None
        changes = tuple(compare(previous, contract))
        # That a widget's HTML goes live at once is said once a session: each save of it changes the HTML
        # again, and is the same news. Anything else is news when it differs from the last report.
        news = tuple(change for change in changes if change not in self._said_live)
        self._said_live |= {change for change in changes if change.impact is Impact.GOES_LIVE}
        if not news or news == self._said:
            return None
        self._said = news
        return ContractReport(baseline=None, changes=news, standing=len(changes))

    def _snapshot(self) -> dict[str, Any] | None:
        """The committed contract, or None when there is none (or it is not one: `check --against` says why)."""
        if not self._snapshot_path.is_file():
            return None
        try:
            return load(self._snapshot_path)
        except AppsdkError:
            return None
