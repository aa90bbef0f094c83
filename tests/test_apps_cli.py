"""`appsdk apps ...`: the registry commands, their --json shapes, and the files they keep."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import AppsHome, Fleet, RunningServer, appsdk, dead_url, serve_project, stop
from hypothesis import given
from hypothesis import strategies as st

from appsdk_cli.apps.registry import RegisteredApp, render_apps, toml_string
from appsdk_cli.scaffold import scaffold


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def one_line_error(result, code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_add_list_remove(apps_home: AppsHome, fleet: Fleet):
    added = json.loads(
        ok(
            apps_home.run(
                "apps", "add", "alpha", "--url", fleet.url("alpha"), "--name", "Alpha", "--description", "First",
                "--icon-url", "https://example.com/a.png", "--json",
            )
        )
    )  # fmt: skip
    assert added == {
        "id": "alpha",
        "url": fleet.url("alpha"),
        "name": "Alpha",
        "description": "First",
        "iconUrl": "https://example.com/a.png",
        "iconUrlDark": None,
        "file": str(apps_home.home / "apps.toml"),
        "replaced": False,
    }
    ok(apps_home.run("apps", "add", "empty", "--url", fleet.url("empty")))
    listed = json.loads(ok(apps_home.run("apps", "list", "--json")))
    assert listed["nextCursor"] is None
    assert [(a["id"], a["name"], a["isAccessible"], a["logoUrl"]) for a in listed["data"]] == [
        ("alpha", "Alpha", True, "https://example.com/a.png"),
        ("empty", "empty", False, None),
    ]
    human = ok(apps_home.run("apps", "list"))
    assert "alpha" in human and fleet.url("alpha") in human

    again = json.loads(ok(apps_home.run("apps", "add", "alpha", "--url", fleet.url("hints"), "--json")))
    assert again["replaced"] is True and again["name"] == "alpha"

    removed = json.loads(ok(apps_home.run("apps", "remove", "alpha", "--json")))
    assert removed == {
        "id": "alpha",
        "url": fleet.url("hints"),
        "file": str(apps_home.home / "apps.toml"),
        "removed": True,
    }
    assert list(tomllib.loads((apps_home.home / "apps.toml").read_text())["apps"]) == ["empty"]
    # Only apps.toml, its lock, and no temporary files are left behind (besides the client's era cache).
    assert sorted(p.name for p in apps_home.home.iterdir() if p.name != "eras.json") == [".apps.toml.lock", "apps.toml"]


def test_bad_arguments_exit_2_with_one_line(apps_home: AppsHome):
    assert "not a valid app id" in one_line_error(apps_home.run("apps", "add", "bad id", "--url", "http://x/mcp"), 2)
    assert "not a valid app id" in one_line_error(apps_home.run("apps", "add", "_default", "--url", "http://x/mcp"), 2)
    assert "not an http(s) URL" in one_line_error(apps_home.run("apps", "add", "ok", "--url", "ftp://x"), 2)
    ok(apps_home.run("apps", "add", "alpha", "--url", "http://127.0.0.1:1/mcp"))
    line = one_line_error(apps_home.run("apps", "remove", "alpah"), 2)
    assert "no app 'alpah'" in line and "did you mean alpha" in line
    assert "--workspace needs a project" in one_line_error(apps_home.run("apps", "remove", "alpha", "--workspace"), 2)
    read = apps_home.run("apps", "read", "alpha", "zz", "--json")
    assert "not registered: zz" in one_line_error(read, 2)
    assert json.loads(read.stdout) == {"apps": [json.loads(read.stdout)["apps"][0]], "missingAppIds": ["zz"]}


def test_list_sorts_names_as_a_person_reads_them(apps_home: AppsHome):
    apps_home.register(
        {"z": dead_url(), "a": dead_url(), "m": dead_url()}, z="Zeta", a="apple", m="Mango"
    )  # none answers, so all are equally inaccessible: the names alone decide
    listed = json.loads(apps_home.run("apps", "list", "--json").stdout)
    assert [a["name"] for a in listed["data"]] == ["apple", "Mango", "Zeta"]
    table = apps_home.run("apps", "list").stdout
    assert table.index("apple") < table.index("Mango") < table.index("Zeta")


def test_read_of_an_unknown_id_is_one_line(apps_home: AppsHome):
    apps_home.register({"ghost": dead_url()})
    result = apps_home.run("apps", "read", "nope")
    assert one_line_error(result, 2) == "error: not registered: nope (see `appsdk apps list`)"
    assert result.stdout == ""
    # A wrong id and an app whose server is down: one line names both, the wrong id deciding the exit code.
    both = apps_home.run("apps", "read", "nope", "ghost", "--tools")
    line = one_line_error(both, 2)
    assert line.startswith("error: not registered: nope (see `appsdk apps list`); cannot list the tools of ghost")


def test_a_malformed_apps_toml_is_named_with_its_line_and_never_overwritten(apps_home: AppsHome):
    broken = '[apps.alpha]\nurl = "http://127.0.0.1:1/mcp"\nname = "unterminated\n'
    (apps_home.home / "apps.toml").write_text(broken)
    for args in (
        ("apps", "add", "beta", "--url", "http://127.0.0.1:2/mcp"),
        ("apps", "list"),
        ("apps", "remove", "alpha"),
    ):
        line = one_line_error(apps_home.run(*args), 1)
        assert f"{apps_home.home / 'apps.toml'}:3: invalid TOML" in line, line
    assert (apps_home.home / "apps.toml").read_text() == broken

    (apps_home.home / "apps.toml").write_text('[apps.alpha]\nname = "Alpha"\n\n[apps.beta]\nurl = 7\n')
    line = one_line_error(apps_home.run("apps", "list"), 1)
    assert line.endswith("apps.toml:1: apps.alpha has no url"), line


def test_a_config_value_of_the_wrong_type_is_named_with_its_line(apps_home: AppsHome):
    ok(apps_home.run("apps", "add", "alpha", "--url", "http://127.0.0.1:1/mcp"))
    apps_home.config('[features]\napps = true\n\n[apps.alpha.tools."do it"]\nenabled = "yes"\n')
    line = one_line_error(apps_home.run("apps", "read", "alpha"), 1)
    assert (
        line
        == f"error: {apps_home.home / 'config.toml'}:5: apps.alpha.tools.do it.enabled must be true or false, not 'yes'"
    )
    apps_home.config("[features]\napps = 1\n")
    assert "config.toml:2: features.apps must be true or false" in one_line_error(apps_home.run("apps", "list"), 1)


def test_read_shows_tools_and_their_verdicts(apps_home: AppsHome, fleet: Fleet):
    apps_home.register({"hints": fleet.url("hints"), "apponly": fleet.url("apponly")})
    apps_home.config("[apps.hints]\ndestructive_enabled = false\n")
    human = ok(apps_home.run("apps", "read", "hints", "apponly", "--tools"))
    assert "✓ search" in human and "✗ delete-everything" in human and "destructive_not_enabled" in human
    assert "hidden from the model" in human
    data = json.loads(ok(apps_home.run("apps", "read", "hints", "--tools", "--json")))
    assert [t["name"] for t in data["apps"][0]["toolSummaries"]] == ["search", "delete-everything", "post-tweet"]
    plain = json.loads(ok(apps_home.run("apps", "read", "hints", "--json")))
    assert plain["apps"][0]["toolSummaries"] is None


def test_read_of_an_unreachable_app_exits_1_naming_it(apps_home: AppsHome):
    url = dead_url()
    apps_home.register({"ghost": url})
    result = apps_home.run("apps", "read", "ghost", "--tools", "--json")
    line = one_line_error(result, 1)
    assert "ghost" in line and url in line
    assert json.loads(result.stdout) == {"apps": [], "missingAppIds": ["ghost"]}


@pytest.fixture
def book_club_app(tmp_path: Path) -> Iterator[RunningServer]:
    server = serve_project(scaffold("book-club", tmp_path / "projects").path)
    yield server
    stop(server.process)


def test_installed_persists_the_snapshot_across_invocations(apps_home: AppsHome, book_club_app: RunningServer):
    """The scaffolded app, registered as a developer would; the snapshot outlives the server and the process."""
    ok(apps_home.run("apps", "add", "book-club", "--url", book_club_app.url, "--name", "Book club"))
    rows = json.loads(ok(apps_home.run("apps", "installed", "--json")))  # the first read takes the snapshot
    assert rows == {"apps": [{"id": "book-club", "runtimeName": "book-club", "enabled": True, "callable": True}]}
    read = json.loads(ok(apps_home.run("apps", "read", "book-club", "--tools", "--json")))
    assert read["apps"][0]["toolSummaries"] == [
        {
            "name": "list-books",
            "title": "Show book club picks",
            "description": "Lists the book club's next three reading picks, with title and author.",
            "isEnabled": True,
            "disabledReason": None,
            "isReadOnly": True,
        }
    ]
    stop(book_club_app.process)
    # Without --refresh the committed snapshot answers, though the server is gone.
    assert json.loads(ok(apps_home.run("apps", "installed", "--json"))) == rows
    human = ok(apps_home.run("apps", "installed"))
    assert "book-club" in human and "snapshot taken" in human
    line = one_line_error(apps_home.run("apps", "installed", "--refresh", "--timeout", "2"), 1)
    assert line.startswith("error: failed to refresh installed connector runtime state: book-club (")
    assert json.loads(ok(apps_home.run("apps", "installed", "--json"))) == rows


def test_workspace_add_and_remove(apps_home: AppsHome, fleet: Fleet):
    project = apps_home.cwd / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "p"\n')
    ok(apps_home.run("apps", "add", "alpha", "--url", fleet.url("alpha")))
    local = apps_home.run("apps", "add", "hints", "--url", fleet.url("hints"), "--workspace", "--json")
    assert local.returncode == 2  # the cwd is not a project
    result = json.loads(
        ok(
            appsdk(
                "apps", "add", "hints", "--url", fleet.url("hints"), "--workspace", "--json",
                cwd=project, env=apps_home.env,
            )
        )
    )  # fmt: skip
    assert result["file"] == str(project / ".appsdk" / "apps.toml")
    inside = json.loads(ok(appsdk("apps", "list", "--json", cwd=project, env=apps_home.env)))
    assert [a["id"] for a in inside["data"]] == ["alpha", "hints"]
    line = one_line_error(appsdk("apps", "remove", "alpha", "--workspace", cwd=project, env=apps_home.env), 2)
    assert "run the command without --workspace" in line
    ok(appsdk("apps", "remove", "hints", "--workspace", cwd=project, env=apps_home.env))
    outside = json.loads(ok(apps_home.run("apps", "list", "--json")))
    assert [a["id"] for a in outside["data"]] == ["alpha"]


def test_the_feature_off_is_said_plainly(apps_home: AppsHome, fleet: Fleet):
    apps_home.register({"alpha": fleet.url("alpha")})
    apps_home.config("[features]\napps = false\n")
    listed = apps_home.run("apps", "list", "--json")
    assert json.loads(ok(listed)) == {"data": [], "nextCursor": None}
    assert "apps feature is off" in listed.stderr
    assert "apps feature is off" in one_line_error(apps_home.run("apps", "read", "alpha"), 1)


# --- the TOML writer ----------------------------------------------------------------------------------------

text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40)


@given(text)
def test_toml_strings_round_trip(value: str):
    assert tomllib.loads(f"key = {toml_string(value)}")["key"] == value


@given(st.lists(st.tuples(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,10}", fullmatch=True), text, text), max_size=5))
def test_apps_toml_round_trips(entries):
    apps = {
        app_id: RegisteredApp(app_id, "http://127.0.0.1/mcp", name, description or None)
        for app_id, name, description in entries
    }
    parsed = tomllib.loads(render_apps(apps.values()))
    assert {
        app_id: (raw["url"], raw["name"], raw.get("description")) for app_id, raw in parsed.get("apps", {}).items()
    } == {app.id: (app.url, app.name, app.description) for app in apps.values()}
