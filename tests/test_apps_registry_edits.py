"""Issue 13 item 15: `apps add`/`remove` keep what people wrote in apps.toml, and `apps installed` reports a
server that is down or protected as one row that is not callable (with the cached sign-in or --token used)."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Iterator

import pytest
from conftest import AppsHome, Fleet, RunningServer, apps_home, dead_url, fleet, free_port, serve, stop  # noqa: F401
from test_hostile import HOSTILE

HAND_WRITTEN = """\
# Apps I work on. Ask Kim before removing the shared ones.

[apps.books]  # the club's app
url = "http://127.0.0.1:1/books/mcp"
name = "Books"
owner = "kim"         # who to ask
tags = ["shared", "demo"]

# staging, not for demos
[apps.staging]
url = "http://127.0.0.1:1/staging/mcp"
name = "Staging"

[notes]
text = "kept as is"
"""


def test_add_update_and_remove_keep_comments_and_extra_keys(apps_home: AppsHome):  # noqa: F811
    path = apps_home.home / "apps.toml"
    path.write_text(HAND_WRITTEN)
    assert apps_home.run("apps", "add", "new", "--url", "http://127.0.0.1:2/mcp").returncode == 0
    assert apps_home.run("apps", "add", "books", "--url", "http://127.0.0.1:3/mcp", "--name", "Books!").returncode == 0
    assert apps_home.run("apps", "remove", "staging").returncode == 0
    text = path.read_text()
    for kept in (
        "# Apps I work on. Ask Kim",
        "# the club's app",
        'owner = "kim"',
        "# who to ask",
        'text = "kept as is"',
    ):
        assert kept in text, text
    data = tomllib.loads(text)
    assert data["apps"]["books"] == {
        "url": "http://127.0.0.1:3/mcp",
        "name": "Books!",
        "owner": "kim",
        "tags": ["shared", "demo"],
    }
    assert data["apps"]["new"] == {"url": "http://127.0.0.1:2/mcp", "name": "new"}
    # A comment between two tables belongs to neither for certain; the one above [apps.staging] stays.
    assert "staging" not in data["apps"] and "[apps.staging]" not in text
    assert data["notes"] == {"text": "kept as is"}
    listed = json.loads(apps_home.run("apps", "list", "--json", "--timeout", "2").stdout)
    assert sorted(row["id"] for row in listed["data"]) == ["books", "new"]


def test_a_new_file_is_still_written_from_scratch(apps_home: AppsHome):  # noqa: F811
    assert (
        apps_home.run("apps", "add", "x", "--url", "http://127.0.0.1:2/mcp", "--description", 'a "q"\n').returncode == 0
    )
    data = tomllib.loads((apps_home.home / "apps.toml").read_text())
    assert data["apps"]["x"]["description"] == 'a "q"\n'


@pytest.fixture
def hostile() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(HOSTILE), str(port)], port)
    yield server
    stop(server.process)


def installed(apps_home: AppsHome) -> tuple[int, dict, str]:  # noqa: F811
    result = apps_home.run("apps", "installed", "--refresh", "--json", "--timeout", "5")
    return result.returncode, json.loads(result.stdout), result.stderr


def test_one_app_down_is_one_row_not_the_whole_answer(apps_home: AppsHome, fleet: Fleet):  # noqa: F811
    apps_home.register({"alpha": fleet.url("alpha"), "gone": dead_url()})
    code, rows, stderr = installed(apps_home)
    assert code == 1, stderr
    by_id = {row["id"]: row for row in rows["apps"]}
    assert by_id["alpha"]["callable"] is True
    assert by_id["gone"]["callable"] is False
    assert "gone (" in stderr and "Traceback" not in stderr
    human = apps_home.run("apps", "installed", "--refresh", "--timeout", "5")
    assert "not listed" in human.stdout and "cannot reach" in human.stdout, human.stdout


def test_a_protected_app_uses_the_token_from_apps_add(apps_home: AppsHome, hostile: RunningServer):  # noqa: F811
    url = f"http://127.0.0.1:{hostile.port}/protected"
    assert apps_home.run("apps", "add", "locked", "--url", url).returncode == 0
    code, rows, stderr = installed(apps_home)
    assert code == 1 and rows["apps"] == [{"id": "locked", "runtimeName": None, "enabled": True, "callable": False}]
    assert "sign" in stderr and "--token" in stderr, stderr
    assert apps_home.run("apps", "add", "locked", "--url", url, "--token", "good-token").returncode == 0
    assert "good-token" not in (apps_home.home / "apps.toml").read_text()
    stored = list((apps_home.home / "app-tokens").iterdir())
    assert len(stored) == 1 and (stored[0].stat().st_mode & 0o077) == 0
    code, rows, stderr = installed(apps_home)
    assert code == 0, stderr
    assert rows["apps"] == [{"id": "locked", "runtimeName": "hostile", "enabled": True, "callable": True}]
    assert apps_home.run("apps", "remove", "locked").returncode == 0
    assert not list((apps_home.home / "app-tokens").iterdir())


def test_a_protected_app_uses_the_cached_sign_in(apps_home: AppsHome, hostile: RunningServer):  # noqa: F811
    from appsdk_cli.auth import client as oauth

    url = f"http://127.0.0.1:{hostile.port}/protected"
    assert apps_home.run("apps", "add", "locked", "--url", url).returncode == 0
    # What `appsdk call --url URL` leaves after a sign-in.
    cached = oauth.CachedTokens(
        resource=url,
        issuer="http://127.0.0.1:9",
        token_endpoint="http://127.0.0.1:9/token",
        client_id="c",
        access_token="good-token",
        refresh_token=None,
        expires_at=None,
        # Where the sign-in read the server's resource metadata; the server shows it again (tests/hostile.py).
        resource_metadata=f"http://127.0.0.1:{hostile.port}/.well-known/oauth-protected-resource/protected",
    )
    oauth.save(url, cached, root=apps_home.home)
    code, rows, stderr = installed(apps_home)
    assert code == 0, stderr
    assert rows["apps"][0]["callable"] is True
    assert os.environ.get("APPSDK_HOME") != str(apps_home.home)  # the child, not this process, read it
