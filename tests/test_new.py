"""`appsdk new`: the command line, its errors and exit codes, and what a failure leaves behind."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from conftest import appsdk

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.scaffold import WidgetFlavor, scaffold


def test_new_creates_the_project(tmp_path: Path):
    result = appsdk("new", "demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "demo" in result.stdout and "appsdk dev" in result.stdout
    project = tmp_path / "demo"
    assert (project / "server.py").is_file()
    assert 'WIDGET_MIME_TYPE = "text/html;profile=mcp-app"' in (project / "server.py").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name != "demo"], "staging folder left behind"
    mode = stat.S_IMODE(project.stat().st_mode)
    assert mode & stat.S_IRGRP, "project folder should follow the umask, not mkdtemp's 0700"


def test_new_skybridge_and_path(tmp_path: Path):
    result = appsdk("new", "shelf", "--path", str(tmp_path / "deep" / "er"), "--skybridge", "--json")
    assert result.returncode == 0, result.stderr
    project = tmp_path / "deep" / "er" / "shelf"
    assert 'WIDGET_MIME_TYPE = "text/html+skybridge"' in (project / "server.py").read_text()
    assert f'"path": "{project}"' in result.stdout
    assert '"widgetMimeType": "text/html+skybridge"' in result.stdout


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("../escape", "is a path"),
        ("a/b", "is a path"),
        ("..", "is a path"),
        ("class", "Python keyword"),
        ("9lives", "start with a letter"),
        ("has space", "start with a letter"),
        ("", "empty"),
    ],
)
def test_bad_names_are_usage_errors(tmp_path: Path, name: str, fragment: str):
    result = appsdk("new", name, cwd=tmp_path)
    assert result.returncode == 2
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_unknown_option_is_usage_error(tmp_path: Path):
    result = appsdk("new", "demo", "--bogus", cwd=tmp_path)
    assert result.returncode == 2
    assert "--bogus" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_existing_project_is_refused_then_forced(tmp_path: Path):
    project = tmp_path / "demo"
    project.mkdir()
    (project / "notes.txt").write_text("mine")
    (project / "server.py").write_text("# old\n")
    refused = appsdk("new", "demo", cwd=tmp_path)
    assert refused.returncode == 1
    assert "--force" in refused.stderr and "Traceback" not in refused.stderr
    assert (project / "server.py").read_text() == "# old\n"

    forced = appsdk("new", "demo", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "MCPServer" in (project / "server.py").read_text()
    assert (project / "notes.txt").read_text() == "mine", "--force must keep the user's other files"
    assert not [p for p in tmp_path.iterdir() if p.name != "demo"]


def test_empty_existing_folder_is_used(tmp_path: Path):
    (tmp_path / "demo").mkdir()
    assert scaffold("demo", tmp_path).path == tmp_path / "demo"
    assert (tmp_path / "demo" / "server.py").is_file()


def test_force_with_a_clash_changes_nothing(tmp_path: Path):
    project = tmp_path / "demo"
    (project / "server.py").mkdir(parents=True)  # a folder where the template puts a file
    (project / "keep.txt").write_text("x")
    with pytest.raises(AppsdkError, match="in the way"):
        scaffold("demo", tmp_path, force=True)
    assert sorted(p.name for p in project.iterdir()) == ["keep.txt", "server.py"]
    assert not [p for p in tmp_path.iterdir() if p.name != "demo"]


def test_target_is_a_file(tmp_path: Path):
    (tmp_path / "demo").write_text("x")
    result = appsdk("new", "demo", cwd=tmp_path)
    assert result.returncode == 1 and "is a file" in result.stderr


def test_uncreatable_parent_leaves_nothing(tmp_path: Path):
    (tmp_path / "file.txt").write_text("x")
    result = appsdk("new", "demo", "--path", str(tmp_path / "file.txt" / "sub"))
    assert result.returncode == 1 and "cannot create the project" in result.stderr
    assert "Traceback" not in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


def test_failure_midway_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A write that fails after some files exist (disk full, say) removes the staging folder and
    the parent folders that --path made."""
    import appsdk_cli.scaffold as module

    real_write = module.write_file  # every file the scaffold writes goes through appsdk_cli.safewrite
    calls = {"n": 0}

    def failing_write(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(module, "write_file", failing_write)
    with pytest.raises(AppsdkError, match="No space left on device"):
        scaffold("demo", tmp_path / "new" / "parent")
    assert list(tmp_path.iterdir()) == []


def test_usage_error_class_has_exit_code_2():
    assert UsageError("x").exit_code == 2 and AppsdkError("x").exit_code == 1


def test_flavors_render_their_mime_type(tmp_path: Path):
    for flavor in WidgetFlavor:
        project = scaffold(f"app-{flavor.name.lower().replace('_', '-')}", tmp_path, flavor=flavor).path
        assert f'WIDGET_MIME_TYPE = "{flavor.value}"' in (project / "server.py").read_text()


def test_force_lists_what_it_replaced_and_keeps_the_users_version(tmp_path: Path):
    first = appsdk("new", "demo", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    project = tmp_path / "demo"
    (project / "server.py").write_text("# my edits\n")
    (project / "README.md").unlink()

    # Before: what --force would replace, and where yours would go, is said without --force.
    refused = appsdk("new", "demo", cwd=tmp_path, env={"APPSDK_URL": ""})
    assert refused.returncode == 1 and "is already an appsdk project" in refused.stderr, refused.stderr
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")  # no longer an appsdk project
    refused = appsdk("new", "demo", cwd=tmp_path)
    assert refused.returncode == 1, refused.stderr
    assert "--force replaces pyproject.toml, server.py, moving yours to demo/.appsdk/backup/" in refused.stderr
    assert (project / "server.py").read_text() == "# my edits\n"

    forced = appsdk("new", "demo", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    # the 4 of before, AGENTS.md, skills_mcp.py and the skill's 2 files, the widget tests and their state
    assert "2 replaced, 1 added, 9 unchanged" in forced.stdout
    assert "replaced pyproject.toml" in forced.stdout and "replaced server.py" in forced.stdout
    assert "added    README.md" in forced.stdout
    backups = list((project / ".appsdk" / "backup").iterdir())
    assert len(backups) == 1 and f"yours are in .appsdk/backup/{backups[0].name}/" in forced.stdout
    assert (backups[0] / "server.py").read_text() == "# my edits\n"
    assert sorted(p.name for p in backups[0].iterdir()) == ["pyproject.toml", "server.py"]
    assert "MCPServer" in (project / "server.py").read_text()
    # Nothing is kept beside the project's files: an unchanged file gets no backup, a second forced run a
    # folder of its own.
    assert not [p for p in project.rglob("*.orig*")]
    (project / "server.py").write_text("# edited again\n")
    again = appsdk("new", "demo", "--force", "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    import json

    report = json.loads(again.stdout)
    [replaced] = report["replaced"]
    assert replaced["path"] == "server.py" and replaced["backup"].startswith(".appsdk/backup/"), replaced
    assert report["added"] == [] and "pyproject.toml" in report["unchanged"]
    assert (backups[0] / "server.py").read_text() == "# my edits\n"
    assert (project / replaced["backup"]).read_text() == "# edited again\n"


def test_force_never_writes_through_a_link_out_of_the_project(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_server.py").write_text("precious\n")
    project = tmp_path / "demo"
    project.mkdir()
    (project / "notes.txt").write_text("mine")
    (project / "tests").symlink_to(outside, target_is_directory=True)

    result = appsdk("new", "demo", "--force", cwd=tmp_path)
    assert result.returncode == 1
    assert "outside the project" in result.stderr and "nothing was changed" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["test_server.py"]
    assert (outside / "test_server.py").read_text() == "precious\n"
    assert sorted(p.name for p in project.iterdir()) == ["notes.txt", "tests"]
    assert not [p for p in tmp_path.iterdir() if p.name not in {"demo", "outside"}]


def test_force_moves_a_linked_file_aside_without_writing_through_it(tmp_path: Path):
    outside = tmp_path / "elsewhere.py"
    outside.write_text("precious\n")
    project = tmp_path / "demo"
    project.mkdir()
    (project / "server.py").symlink_to(outside)

    [replaced] = scaffold("demo", tmp_path, force=True).replaced
    assert outside.read_text() == "precious\n"
    assert (project / replaced.backup).is_symlink()
    assert not (project / "server.py").is_symlink() and "MCPServer" in (project / "server.py").read_text()


def test_force_follows_a_link_that_stays_inside_the_project(tmp_path: Path):
    project = tmp_path / "demo"
    (project / "real-widgets").mkdir(parents=True)
    (project / "widgets").symlink_to("real-widgets", target_is_directory=True)
    result = scaffold("demo", tmp_path, force=True)
    assert (project / "real-widgets" / "book-list.html").is_file()
    assert Path("widgets/book-list.html") in result.added


def test_domain_fills_the_widget_domain_and_the_tunnel_table(tmp_path: Path):
    import tomllib

    result = appsdk("new", "demo", "--domain", "https://Books.ngrok.app/", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    project = tmp_path / "demo"
    assert 'WIDGET_DOMAIN = "https://books.ngrok.app"' in (project / "server.py").read_text()
    config = tomllib.loads((project / "pyproject.toml").read_text())
    assert config["tool"]["appsdk"]["tunnel"] == {"domain": "books.ngrok.app"}
    # --force keeps the domain the project configures.
    (project / "server.py").unlink()
    scaffold("demo", tmp_path, force=True)
    assert 'WIDGET_DOMAIN = "https://books.ngrok.app"' in (project / "server.py").read_text()

    bad = appsdk("new", "other", "--domain", "localhost", cwd=tmp_path)
    assert bad.returncode == 2 and "not a domain name" in bad.stderr
    assert not (tmp_path / "other").exists()


def test_without_a_domain_the_tunnel_table_is_a_comment(tmp_path: Path):
    import tomllib

    project = scaffold("demo", tmp_path).path
    config = tomllib.loads((project / "pyproject.toml").read_text())
    assert "tunnel" not in config["tool"]["appsdk"]
    assert "# [tool.appsdk.tunnel]" in (project / "pyproject.toml").read_text()
    assert 'WIDGET_DOMAIN = ""' in (project / "server.py").read_text()


def test_check_strict_passes_on_a_scaffold_with_a_domain_and_names_the_line_without(tmp_path: Path):
    with_domain = appsdk("new", "dom", "--domain", "dom.ngrok.app", cwd=tmp_path)
    assert "widget domain: https://dom.ngrok.app" in with_domain.stdout
    assert "[tool.appsdk.tunnel] in pyproject.toml" in with_domain.stdout
    strict = appsdk("check", "--strict", cwd=tmp_path / "dom")
    assert strict.returncode == 0, strict.stdout + strict.stderr

    appsdk("new", "plain", cwd=tmp_path)
    plain = appsdk("check", "--strict", "--json", cwd=tmp_path / "plain")
    assert plain.returncode == 1
    import json

    findings = json.loads(plain.stdout)["findings"]
    assert [f["rule"] for f in findings] == ["APPS504"], findings
    assert 'set WIDGET_DOMAIN = "https://YOUR-DOMAIN" in server.py' in findings[0]["hint"]


def _next_lines(output: str) -> list[str]:
    """The commands after "Next:" (indented lines), without their comments."""
    block = output.split("Next:\n", 1)[1]
    commands = [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.startswith("  ")]
    return [command for command in commands if not command.startswith("#")]


def test_next_lines_work_as_typed_in_a_new_terminal(tmp_path: Path):
    """A new terminal: home folder, login PATH without appsdk's venv. Every line runs as printed
    (the dev line gets a free port, since 8000 may be taken on a test machine)."""
    import subprocess

    from conftest import free_port

    home = tmp_path / "home"
    home.mkdir()
    fresh = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "COLUMNS": "200"}
    made = appsdk("new", "demo", "--path", str(home / "apps"), env={**fresh, "VIRTUAL_ENV": ""})
    assert made.returncode == 0, made.stderr
    lines = _next_lines(made.stdout)
    setup, cd, dev, call, test = lines
    assert setup.startswith(". ") and setup.endswith("/bin/activate")
    assert cd == "cd ~/apps/demo"
    assert dev == "appsdk dev" and call == "appsdk call list-books" and test.endswith("-m pytest")
    script = f"""set -e
{setup}
{cd}
{dev} --port {free_port()} > dev.log 2>&1 &
for _ in $(seq 300); do [ -f .appsdk/dev.json ] && break; sleep 0.1; done
{call} --json > call.json
kill -INT %1; wait
{test} -q -p no:cacheprovider
"""
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", script],
        cwd=home,
        env=fresh,
        capture_output=True,
        text=True,
        timeout=180,
    )
    project = home / "apps" / "demo"
    assert result.returncode == 0, result.stdout + result.stderr + (project / "dev.log").read_text()
    assert "Frankenstein" in (project / "call.json").read_text()
    assert "passed" in result.stdout


PLUGIN_FILES = [".codex-plugin/plugin.json", ".codex-mcp.json", "assets/logo.png"]


def test_json_added_and_the_readme_table_name_the_plugin_files(tmp_path: Path):
    import json

    made = appsdk("new", "demo", "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    result = json.loads(made.stdout)
    assert result["added"] == result["files"], result
    assert set(PLUGIN_FILES) <= set(result["added"])
    table = (tmp_path / "demo" / "README.md").read_text().split("| file | what it is |", 1)[1].split("\n\n", 1)[0]
    for name in PLUGIN_FILES:
        assert f"| `{name}` |" in table, table

    bare = json.loads(appsdk("new", "bare", "--no-plugin", "--json", cwd=tmp_path).stdout)
    assert not set(PLUGIN_FILES) & set(bare["files"] + bare["added"])
    assert ".codex-mcp.json" not in (tmp_path / "bare" / "README.md").read_text()


def test_new_dev_serves_the_app_without_telling_the_user_to_run_dev(tmp_path: Path):
    """`appsdk new NAME --dev` (the README's quick start): scaffolds, then serves on 127.0.0.1:8000, and
    prints no "Next: appsdk dev" for what is already running; dev's own second-terminal lines follow.
    In a network namespace of our own where one can be made (8000 is then free), else on this machine's
    8000 when free, else skipped."""
    import os
    import sys

    from conftest import run_owning_port_8000

    script = f"""set -e
{sys.executable} -m appsdk_cli new demo --dev > new.log 2>&1 &
for _ in $(seq 300); do [ -f demo/.appsdk/dev.json ] && grep -q 'Ctrl-C to stop' new.log && break; sleep 0.1; done
cd demo && {sys.executable} -m appsdk_cli call list-books --json > ../call.json; cd ..
kill -INT %1; wait %1 || true
"""
    env = {key: value for key, value in os.environ.items() if key != "APPSDK_URL"} | {"COLUMNS": "200"}
    command = ["bash", "--noprofile", "--norc", "-c", script]
    done = run_owning_port_8000(command, cwd=tmp_path, env=env, timeout=180)
    said = (tmp_path / "new.log").read_text()
    assert done.returncode == 0, done.stderr + said
    assert "Created demo" in said and "Starting appsdk dev in" in said, said
    assert "Next:\n" not in said and "  appsdk dev" not in said, said  # no advice to run what runs
    assert "Next, in a second terminal:" in said and "appsdk call list-books" in said, said
    assert "Frankenstein" in (tmp_path / "call.json").read_text()


def test_new_dev_and_json_are_a_usage_error(tmp_path: Path):
    result = appsdk("new", "demo", "--dev", "--json", cwd=tmp_path)
    assert result.returncode == 2 and "--dev" in result.stderr, result.stderr
    assert not (tmp_path / "demo").exists()


def test_a_folder_whose_pyproject_is_not_utf8_is_refused_in_one_line_not_a_crash(tmp_path: Path):
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "pyproject.toml").write_bytes(b'name = "\xff"\n')
    result = appsdk("new", "x", "--path", str(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "failed unexpectedly" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert "already exists and is not empty" in result.stderr, result.stderr
    assert (folder / "pyproject.toml").read_bytes() == b'name = "\xff"\n'


def test_the_quick_start_run_again_says_how_to_serve_the_project_and_changes_nothing(tmp_path: Path):
    """#36: the README's one-liner a second time (`appsdk new book-club --path .. --dev`) met "pass --force",
    which replaces the user's server, widget and pyproject.toml. On an appsdk project it says, in one line,
    the command that serves it; that command runs as printed (here, from the clone's folder)."""
    import os
    import sys

    from conftest import run_owning_port_8000

    clone = tmp_path / "clone"
    clone.mkdir()
    project = scaffold("book-club", tmp_path).path
    (project / "server.py").write_text((project / "server.py").read_text() + "\n# my edits\n")
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}

    on_path = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    again = appsdk("new", "book-club", "--path", "..", "--dev", cwd=clone, env=on_path)
    assert again.returncode == 1, again.stdout + again.stderr
    expected = "error: ../book-club is already an appsdk project; to serve it: cd ../book-club && appsdk dev"
    assert again.stderr.strip().splitlines() == [expected] and again.stdout == "", again.stderr
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
    assert not (project / ".appsdk").exists() and "--force" not in again.stderr

    command = expected.split("to serve it: ", 1)[1]
    # Job control: the command line is a job of its own, and Ctrl-C (SIGINT) reaches all of it, whatever happens.
    script = f"""set -m
{command} > ../dev.log 2>&1 &
trap 'kill -INT %1 2>/dev/null || true; wait' EXIT
for _ in $(seq 300); do
  [ -f ../book-club/.appsdk/dev.json ] && grep -q 'Ctrl-C to stop' ../dev.log && break; sleep 0.1
done
"""
    # On 127.0.0.1:8000, dev's default, as the printed command has it.
    served = run_owning_port_8000(
        ["bash", "--noprofile", "--norc", "-c", script],
        cwd=clone,
        env={**os.environ, **on_path, "APPSDK_URL": ""},
        timeout=120,
    )
    said = (tmp_path / "dev.log").read_text() if (tmp_path / "dev.log").exists() else ""
    assert "Ctrl-C to stop" in said and "book-club" in said, served.stderr + said
