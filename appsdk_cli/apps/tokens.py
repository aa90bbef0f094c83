"""Bearer tokens given with `apps add --token`, kept per server URL under APPSDK_HOME/app-tokens/, mode 0600.

Never in apps.toml: that file is for people to read, share and commit, and a token is a secret. The
sign-ins `appsdk call` caches (appsdk_cli.auth) are used too; a token given here wins, as --token does.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from appsdk_cli.errors import AppsdkError
from appsdk_cli.home import write_private

TOKENS_DIR = "app-tokens"


def _path(home: Path, url: str) -> Path:
    return home / TOKENS_DIR / f"{hashlib.sha256(url.encode()).hexdigest()[:32]}.json"


def save(home: Path, url: str, token: str) -> Path:
    """Written 0600 from the first byte, then renamed into place."""
    path = _path(home, url)
    try:
        write_private(path, json.dumps({"url": url, "token": token}), home=home)
    except OSError as problem:
        raise AppsdkError(f"cannot store the token under {path.parent}: {problem.strerror or problem}") from None
    return path


def load(home: Path, url: str) -> str | None:
    try:
        stored = json.loads(_path(home, url).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("url") != url or not isinstance(stored.get("token"), str):
        return None
    return stored["token"]


def forget(home: Path, url: str) -> None:
    _path(home, url).unlink(missing_ok=True)
