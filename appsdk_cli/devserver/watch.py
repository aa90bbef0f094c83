"""The file watcher: which of the project's files trigger a reload, and the thread that watches them.

It reports each burst of saves, as paths relative to the project, to one callback; the supervisor
queues them and reloads from its own loop. watchfiles is imported in the watcher's thread, so neither
`appsdk --help` nor `appsdk dev --no-reload` pays for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from appsdk_cli.contract.record import DEFAULT_FILE as CONTRACT_FILE

WATCHED_SUFFIXES = (".py", ".html", ".css", ".js", ".json", ".toml")
IGNORED_DIRS = (".venv", "venv", ".git", "__pycache__", "node_modules", ".appsdk", ".pytest_cache", ".ruff_cache")
# watchfiles yields once no new event came for STEP ms (a save is a burst of events a few ms apart),
# and never groups for longer than DEBOUNCE ms. Its defaults (50/1600) are tuned for slower loops.
# A save is seen STEP to 2 x STEP ms after it lands, on the path of every reload: 5 ms costs the idle
# supervisor about 0.5 % of a core (20 ms: 0.2 %). A burst split in two is harmless: a save seen while
# the new worker still imports starts that worker over.
WATCH_STEP_MS = 5
WATCH_DEBOUNCE_MS = 400

ChangesHook = Callable[[set[str]], None]


class ProjectWatcher:
    """Watches one project in a daemon thread from start() until stop(); thread-safe to stop."""

    def __init__(self, project: Path, on_changes: ChangesHook) -> None:
        self._project = project
        self._on_changes = on_changes
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="appsdk-dev-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        import watchfiles

        for changes in watchfiles.watch(
            self._project,
            watch_filter=_DevFilter(self._project),
            debounce=WATCH_DEBOUNCE_MS,
            step=WATCH_STEP_MS,
            stop_event=self._stop,
            rust_timeout=500,
            yield_on_timeout=False,
            raise_interrupt=False,
        ):
            self._on_changes({_relative(path, self._project) for _, path in changes})


def _relative(path: str, project: Path) -> str:
    try:
        return str(Path(path).relative_to(project))
    except ValueError:
        return path


class _DevFilter:
    """The project's source, widget and config files; never environments, caches or our own state
    (`appsdk snapshot` writing the contract file changes nothing the app runs)."""

    def __init__(self, project: Path) -> None:
        self._project = project

    def __call__(self, change: object, path: str) -> bool:
        try:
            parts = Path(path).relative_to(self._project).parts
        except ValueError:
            return False
        # Any file of a skill: the app lists a skill's files when it starts (skills_mcp.py).
        in_skills = parts[:1] == ("skills",)
        if not (path.endswith(WATCHED_SUFFIXES) or in_skills) or Path(path).name == CONTRACT_FILE:
            return False
        if parts[:1] == ("web",) and (self._project / "web" / "package.json").is_file():
            return False  # a widget project: Vite watches it, and the server reads web/dist/ on every request
        return not any(part in IGNORED_DIRS or part.startswith(".#") for part in parts)
