"""The host's static files: the host page, its scripts and styles, and the bootstrap injected into widgets.

They still live in preview/static/ while the front-end is rewritten as ES modules; when the folder moves
to host/static/, this constant is the one line that changes.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "preview" / "static"
