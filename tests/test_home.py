"""APPSDK_HOME is this user's alone: the folder 0700, its files 0600, and a home an older appsdk left open
(0755, caches 0644: a signed-in server's tool list, the URLs used) is closed on the first use.

The commands run as child processes against a real MCP server (tests/fixtures/eras_server.py); the modes
are read from the files they leave, as another user on the machine would meet them.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from conftest import RunningServer, appsdk

from appsdk_cli.home import private_folder, private_home, write_private


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def modes_under(home: Path) -> dict[str, int]:
    return {str(path.relative_to(home)): mode(path) for path in sorted(home.rglob("*")) if not path.is_symlink()}


def test_a_new_home_and_its_caches_are_private(eras_app: RunningServer, tmp_path: Path):
    home = tmp_path / "fresh" / "home"
    called = appsdk("call", "weather", "region=north", "--url", eras_app.url, env={"APPSDK_HOME": str(home)})
    assert called.returncode == 0, called.stderr
    assert mode(home) == 0o700
    cached = json.loads((home / "tools.json").read_text())  # the tool list the server sent, kept for the next call
    assert cached and (home / "eras.json").is_file()
    assert mode(home / "tools.json") == mode(home / "eras.json") == 0o600
    assert not [name for name, bits in modes_under(home).items() if bits & 0o077], modes_under(home)


def test_a_home_an_older_appsdk_left_open_is_closed_on_first_use(eras_app: RunningServer, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    for name in ("tools.json", "eras.json"):
        (home / name).write_text("{}")
        (home / name).chmod(0o644)
    (home / "dev").mkdir()
    (home / "dev").chmod(0o755)
    (home / "dev" / "abc.json").write_text('{"url": "http://127.0.0.1:1/mcp", "project": "/p"}')
    (home / "dev" / "abc.json").chmod(0o644)
    hook = home / "codex-marketplace" / "plugins" / "p" / "hooks" / "run.sh"  # a plugin's script keeps its x bit
    hook.parent.mkdir(parents=True)
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    outside = tmp_path / "outside.txt"  # a symlink in the home is not followed out of it
    outside.write_text("not appsdk's")
    outside.chmod(0o644)
    (home / "link").symlink_to(outside)
    called = appsdk("call", "weather", "region=north", "--url", eras_app.url, env={"APPSDK_HOME": str(home)})
    assert called.returncode == 0, called.stderr  # the honest use works as before
    assert mode(home) == 0o700
    found = modes_under(home)
    assert found["tools.json"] == found["eras.json"] == found["dev/abc.json"] == 0o600, found
    assert found["dev"] == found["codex-marketplace/plugins/p/hooks"] == 0o700, found
    assert found["codex-marketplace/plugins/p/hooks/run.sh"] == 0o700, found
    assert not [name for name, bits in found.items() if bits & 0o077], found
    assert mode(outside) == 0o644
    assert json.loads((home / "tools.json").read_text())  # and the cache was written into the closed home


def test_a_shared_folder_named_as_home_is_not_closed(tmp_path: Path, monkeypatch):
    """APPSDK_HOME pointed at a folder shared by nature (sticky, like /tmp) is written into, never chmodded."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("APPSDK_HOME", str(shared))
    written = write_private(shared / "cache" / "eras.json", "{}")
    assert mode(shared) == 0o1777
    assert mode(written) == 0o600 and mode(written.parent) == 0o700


def test_the_writer_is_private_from_the_first_byte_and_whole(tmp_path: Path):
    home = tmp_path / "home"
    assert private_home(home) == home and mode(home) == 0o700
    folder = private_folder(home / "sub" / "deeper", home)
    assert mode(home / "sub") == mode(folder) == 0o700
    path = write_private(home / "sub" / "x.json", '{"a": 1}', home=home)
    assert json.loads(path.read_text()) == {"a": 1} and mode(path) == 0o600
    again = write_private(path, b'{"a": 2}', home=home)
    assert json.loads(again.read_text()) == {"a": 2} and mode(again) == 0o600
    assert sorted(p.name for p in (home / "sub").iterdir()) == ["deeper", "x.json"]  # no temporary file left
