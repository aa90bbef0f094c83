"""Which port `appsdk dev` serves a project's workbench on: the same one on every start, so a bookmarked
tab survives a restart (the MCP Inspector keeps 6274 for the same reason).

The port is derived from the project's path, so it needs no file and two projects rarely share one; when
it is busy (another project took it, or another program), the workbench takes a free port and says so.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

FIRST = 6300  # above the Inspector's 6274 and its proxy's 6277, below the ephemeral range
COUNT = 700
# Ports in that range browsers refuse to load a page from (Chromium's and Firefox's restricted ports:
# ERR_UNSAFE_PORT): a project whose path hashed to one got a workbench no browser would open.
UNSAFE = frozenset({6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697})


def project_port(project: Path) -> int:
    """The workbench port of this project: the same on every start, from its resolved path."""
    digest = hashlib.sha256(str(project.resolve()).encode()).digest()
    port = FIRST + int.from_bytes(digest[:4], "big") % COUNT
    while port in UNSAFE:
        port = FIRST + (port - FIRST + 1) % COUNT
    return port
