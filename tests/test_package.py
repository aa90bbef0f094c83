"""The distribution: a real wheel carries the templates, and `appsdk --help` stays light."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, appsdk, stop


def test_help_lists_commands_without_importing_heavy_packages():
    probe = (
        "import sys, runpy; sys.argv = ['appsdk', '--help'];\n"
        "try:\n    runpy.run_module('appsdk_cli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('mcp', 'mcp_types', 'uvicorn', 'pyngrok', 'httpx', 'starlette', 'watchfiles',"
        " 'playwright', 'greenlet')"
        " if m in sys.modules)\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "HEAVY=\n" in result.stdout, result.stdout
    assert "new" in result.stdout


def test_version():
    from appsdk_cli import __version__

    result = appsdk("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"appsdk {__version__}"


def test_wheel_carries_the_scaffolds(tmp_path: Path):
    """A plain (not editable) install of the built wheel scaffolds a project on its own."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next(tmp_path.glob("appsdk_cli-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "appsdk_cli/scaffolds/book-club/server.py" in names
    assert "appsdk_cli/scaffolds/book-club/widgets/book-list.html" in names
    # appsdk's skill for coding agents, and the AGENTS.md every new app gets that points to it.
    assert "appsdk_cli/agent-skills/appsdk/SKILL.md" in names
    assert "appsdk_cli/scaffolds/book-club/AGENTS.md" in names
    # The preview's host page and widget bootstrap are package data: `appsdk preview` needs them installed.
    for static in ("host.html", "host/main.js", "host/bridge.js", "host.css", "bootstrap.js"):
        assert f"appsdk_cli/host/static/{static}" in names
    # So is the workbench's page (`appsdk dev` and `appsdk preview` without a TOOL serve it).
    for static in ("workbench.html", "workbench.js", "workbench.css", "form.js", "panels.js", "icon.svg"):
        assert f"appsdk_cli/workbench/static/{static}" in names
    assert not [n for n in names if n.startswith("tests/") or "__pycache__" in n]

    target = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    work = tmp_path / "work"
    work.mkdir()
    # The installed copy comes first on the path, ahead of this checkout; the dependencies come
    # from the test environment.
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import appsdk_cli.scaffold as s; print(s.templates_root())"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.strip() == str(target / "appsdk_cli" / "scaffolds")
    made = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "new", "demo"], cwd=work, env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    assert (work / "demo" / "widgets" / "book-list.html").is_file()
    home = tmp_path / "home"
    home.mkdir()
    skill = subprocess.run(
        [sys.executable, "-m", "appsdk_cli", "skill", "install", "--claude"],
        cwd=work,
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
    )
    assert skill.returncode == 0, skill.stderr
    shipped = target / "appsdk_cli" / "agent-skills" / "appsdk" / "SKILL.md"
    assert (home / ".claude" / "skills" / "appsdk" / "SKILL.md").read_text() == shipped.read_text()


def _bash_blocks(text: str) -> list[str]:
    return [block.split("```", 1)[0].strip() for block in text.split("```bash\n")[1:]]


def test_quick_start_is_two_commands_and_ci_runs_the_second_verbatim():
    readme = (REPO / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = _bash_blocks(quick)
    assert len(blocks) == 2 and all("\n" not in block for block in blocks), blocks
    run, test = blocks
    # The app is scaffolded outside the checkout, where the test command's `ruff check .` would lint it,
    # and appsdk is on PATH afterwards, so the printed "Next:" lines work as typed.
    assert "appsdk new book-club --path .." in run and ". .venv/bin/activate" in run
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert test in ci, "the README's test command must be the line .ci/run runs"


def test_chatgpt_steps_are_said_once_and_the_readme_has_them(tmp_path: Path):
    from appsdk_cli import chatgpt
    from appsdk_cli.scaffold import scaffold

    readme = (REPO / "README.md").read_text()
    assert chatgpt.markdown() in readme
    docs = "\n".join(path.read_text() for path in (REPO / "docs").rglob("*.md"))
    assert chatgpt.markdown() in (scaffold("plain", tmp_path).path / "README.md").read_text()
    assert chatgpt.markdown(sign_in=True) in (scaffold("members", tmp_path, auth=True).path / "README.md").read_text()
    everything = "\n".join(
        path.read_text()
        for folder in ("appsdk_cli", "scaffolds")
        for path in (REPO / folder).rglob("*")
        if path.is_file() and path.suffix in {".py", ".md"}
    )
    for stale in ("Apps & Connectors", "Settings → Apps", "Create app"):
        assert stale not in everything + readme + docs, stale


COMMANDS = [
    "new",
    "dev",
    "call",
    "tools",
    "resources",
    "read",
    "check",
    "preview",
    "tunnel",
    "app-server",
    "mcp",
    "skill",
]
APPS_COMMANDS = ["add", "remove", "list", "installed", "read"]


@pytest.mark.parametrize("command", [[], *([c] for c in COMMANDS), ["apps"], *(["apps", c] for c in APPS_COMMANDS)])
def test_help_names_placeholders_and_shows_examples(command: list[str]):
    result = appsdk(*command, "--help", env={"COLUMNS": "150"})
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for leak in ("<str>", "<int", "<float", "<list[", "<path>", "range>", "<=x", "x>="):
        assert leak not in text, (leak, text)
    usage = text.splitlines()[0]
    assert "{" not in usage, usage
    examples = text.split("Examples:\n", 1)[1].strip().splitlines()
    assert 1 <= len(examples) <= 2 and all(line.strip().startswith("appsdk") for line in examples), examples


def test_help_wraps_to_the_terminal_and_summaries_are_whole():
    wide = appsdk("dev", "--help", env={"COLUMNS": "150"}).stdout
    narrow = appsdk("dev", "--help", env={"COLUMNS": "80"}).stdout
    assert max(len(line) for line in wide.splitlines()) > 100
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert "--allow-host HOST" in wide and "-p, --port PORT" in wide and "--transport streamable-http|sse" in wide
    apps = appsdk("apps", "--help", env={"COLUMNS": "80"}).stdout
    listed = " ".join(apps.split("Commands:", 1)[1].split())
    assert "..." not in listed and "accessible (its server lists tools) and enabled." in listed
    root = appsdk("--help").stdout
    assert "add, remove, list, installed, read" in root


def test_root_help_groups_every_command_once_under_build_run_inspect_ship():
    from appsdk_cli.cli import app

    root = appsdk("--help", env={"COLUMNS": "120"}).stdout
    panels = [line[:-1] for line in root.splitlines() if line in ("Build:", "Run:", "Inspect:", "Ship:")]
    assert panels == ["Build", "Run", "Inspect", "Ship"], root
    listed = root.split("Build:\n", 1)[1].split("Examples:", 1)[0]
    names = [line.split()[0] for line in listed.splitlines() if re.match(r"  \S", line)]
    registered = [c.name or c.callback.__name__ for c in app.registered_commands] + [
        g.typer_instance.info.name for g in app.registered_groups
    ]
    assert sorted(names) == sorted(registered) and len(names) == 19, names
    assert "Commands:" not in root  # no command is left outside a panel


def test_the_readme_says_what_dev_does_with_the_workbench(tmp_path: Path):
    """dev serves the workbench and prints its URL; it opens a browser only with --open, so the README
    says just that (it said the workbench ran open beside dev)."""
    from test_dev import start_dev

    from appsdk_cli.scaffold import scaffold

    readme = (REPO / "README.md").read_text()
    dev_line = next(line for line in readme.splitlines() if "](docs/commands/dev.md)" in line)
    assert "serve the workbench at the URL it prints (`--open` opens it in your browser)" in dev_line, dev_line
    assert "beside it" not in dev_line and "workbench open" not in readme
    server = start_dev(scaffold("book-club", tmp_path).path)
    try:
        assert re.search(r"Workbench\s+http://127\.0\.0\.1:\d+/", server.out()), server.out()
    finally:
        stop(server.process)
