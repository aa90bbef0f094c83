"""What a server sends, read once for `check`, `snapshot`, `dev`, `plugin` and `build`.

Drivable without the CLI:

    from appsdk_cli.snapshot import choose_source, collect_source
    snapshot = collect_source(choose_source(Path("book-club"), None, timeout=30), timeout=30)

Modules: model.py (the Snapshot), source.py (live or PATH, and the order that picks one), plan.py (what
is read and called beyond the lists), live.py (a running server, as a host sees it), local.py and
inmemory.py (the app imported in a child process: the parent and the child), loader.py (importing the
app, and the one line that says why it failed, for the check child and the dev worker alike), crashes.py
(what a crashing tool tells its developer, under `appsdk dev` and in the check child alike).
"""

from __future__ import annotations

from appsdk_cli.snapshot.model import Snapshot
from appsdk_cli.snapshot.source import Source, choose_source, collect_source

__all__ = ["Snapshot", "Source", "choose_source", "collect_source"]
