"""Every scaffold's README runs as written (#36): its ```bash blocks, line by line, in the new project's
folder, from a new terminal (the login PATH without any virtual environment, a home folder of its own).

A line that serves (`python server.py`, `appsdk dev …`) runs in the background until its block is done,
and the test waits until it serves; a line whose comment says "in a second terminal" runs in a new shell
of its own, as a second terminal would; every other line must exit 0.

No departure from the README: pip has only the machine's own settings, as any terminal on it. appsdk-cli is
on no package index; `appsdk new` writes into the project's `test` extra where the appsdk that made it was
installed from (here the test venv's editable install of this checkout, so a file URL of the checkout), and
the README's own `pip install -e ".[test]"` installs it from there.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import REPO, appsdk, run_owning_port_8000

pytestmark = pytest.mark.slow

NEW_TERMINAL_PATH = "/usr/local/bin:/usr/bin:/bin"
VARIANTS = {"plain": (), "auth": ("--auth",), "react": ("--template", "react")}
SERVES = re.compile(r"^(PORT=\S+ )?python server\.py$|^appsdk dev\b")
COMMENT = re.compile(r"\s+#\s.*$")


def readme_blocks(readme: str) -> list[list[tuple[str, str]]]:
    """Each ```bash block of the README: its lines as (command, comment)."""
    blocks = []
    for block in readme.split("```bash\n")[1:]:
        lines = []
        for line in block.split("```", 1)[0].splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                comment = COMMENT.search(line)
                lines.append((COMMENT.sub("", line).strip(), comment.group(0).strip() if comment else ""))
        blocks.append(lines)
    return blocks


def new_terminal(home: Path) -> dict[str, str]:
    # pip's own settings (its index) are the machine's, as in any terminal on it.
    pip = {key: value for key, value in os.environ.items() if key.startswith("PIP_")}
    return {"HOME": str(home), "PATH": NEW_TERMINAL_PATH, "LANG": "C.UTF-8", "TERM": "dumb", **pip}


def script_for(blocks: list[list[tuple[str, str]]], project: Path, env: dict[str, str]) -> tuple[str, str]:
    """Two bash scripts: up to the README's install (run as is), then the rest (run where 127.0.0.1:8000 is free)."""
    setup = ["set -e", f"cd {shlex.quote(str(project))}"]
    rest = [
        "set -em",  # job control: a line started in the background gets Ctrl-C (SIGINT) as in a terminal
        f"cd {shlex.quote(str(project))}",
        ". .venv/bin/activate",  # the first terminal, where the README's first line activated it
        "trap 'kill -INT $(jobs -p) 2>/dev/null || true; wait || true' EXIT",
    ]
    installing = True
    second = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    for number, block in enumerate(blocks):
        for index, (command, comment) in enumerate(block):
            where = setup if installing else rest
            if installing and command.startswith("pip install"):
                where.append(f"echo '$ {command}'; {command}")
                installing = False
                continue
            if "in a second terminal" in comment:
                line = f"env -i {second} bash --noprofile --norc -c {shlex.quote(command)}"
            else:
                line = command
            log = f"../line-{number}-{index}.log"
            where.append(f"echo '$ {command}'")
            if not installing and SERVES.match(command):
                ready = (
                    "[ -f .appsdk/dev.json ]" if command.startswith("appsdk dev") else f"grep -q 'serving http' {log}"
                )
                where.append(f"{line} > {log} 2>&1 &")
                where.append(
                    f"for _ in $(seq 600); do {ready} && break; kill -0 $! 2>/dev/null || break; sleep 0.1; done; "
                    f"{ready} || {{ echo 'NOT SERVING: {command}'; cat {log}; exit 1; }}"
                )
            else:
                where.append(f"{line} < /dev/null")
        if not installing:
            rest.append("kill -INT $(jobs -p) 2>/dev/null || true; wait || true")
    return "\n".join(setup) + "\n", "\n".join(rest) + "\n"


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_scaffolds_readme_runs_as_written_in_a_new_terminal(variant: str, tmp_path: Path):
    import subprocess
    import tomllib

    if variant == "react" and not (shutil.which("node") and shutil.which("npm")):
        if os.environ.get("CI") == "true":
            pytest.fail("Node.js and npm are needed for the React template's README")
        pytest.skip("Node.js and npm are not installed; CI has them, so this runs there")
    home = tmp_path / "home"
    home.mkdir()
    made = appsdk("new", "book-club", *VARIANTS[variant], "--path", str(tmp_path), timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    project = tmp_path / "book-club"
    extra = tomllib.loads((project / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert extra[-1] == f"appsdk-cli @ {REPO.as_uri()}", extra  # where the README's install finds appsdk-cli
    blocks = readme_blocks((project / "README.md").read_text())
    assert blocks and any(command.startswith("pip install") for command, _ in blocks[0]), blocks
    env = new_terminal(home)
    setup, rest = script_for(blocks, project, env)

    installed = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", setup], env=env, capture_output=True, text=True, timeout=900
    )
    assert installed.returncode == 0, installed.stdout[-4000:] + installed.stderr[-4000:]
    ran = run_owning_port_8000(["bash", "--noprofile", "--norc", "-c", rest], env=env, timeout=900)
    logs = "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(tmp_path.glob("line-*.log")))
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-3000:] + logs
    assert "Traceback" not in logs, logs  # a server stopped with Ctrl-C says nothing more
    assert "passed" in ran.stdout and " failed" not in ran.stdout, ran.stdout[-4000:]
    if variant == "auth":
        assert "ada" in ran.stdout, ran.stdout[-4000:]


def test_the_next_lines_install_what_the_readme_installs_for_the_tests(tmp_path: Path):
    """#36: `appsdk new`'s "Next:" test line and the README agreed on pytest only by chance (the line
    installed a bare `pytest`, the README the project's `test` extra). In the quick start's venv (appsdk
    installed, no pytest) the line installs the test extra's missing requirements as the pyproject writes
    them, and then runs the tests as printed. The venv is the root README's quick start's: `pip install .`
    in the clone (this checkout), so the test extra names the clone's folder."""
    import subprocess
    import tomllib

    from test_new import _next_lines

    home = tmp_path / "home"
    home.mkdir()
    env = new_terminal(home)
    venv = tmp_path / "quick-start-venv"
    made = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", f"python3 -m venv {venv} && {venv}/bin/pip install -q ."],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    new = subprocess.run(
        [str(venv / "bin" / "appsdk"), "new", "demo"],
        cwd=tmp_path,
        env={**env, "COLUMNS": "200"},  # each command and its note on one line
        capture_output=True,
        text=True,
    )
    assert new.returncode == 0, new.stderr
    extra = tomllib.loads((tmp_path / "demo" / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extra["test"] == ["pytest>=8", f"appsdk-cli @ {REPO.as_uri()}"]
    test_line = _next_lines(new.stdout)[-1]
    assert test_line == "python -m pip install 'pytest>=8' && python -m pytest", new.stdout
    setup, cd = _next_lines(new.stdout)[:2]
    ran = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", f"{setup} && {cd} && {test_line} -q -p no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ran.returncode == 0 and "passed" in ran.stdout, ran.stdout[-3000:] + ran.stderr[-3000:]


def test_the_readme_quick_start_runs_as_written_on_a_fresh_clone_and_again(tmp_path: Path):
    """appsdk's own README: its quick start, on a copy of the checkout's files, from a new terminal, serves
    book-club beside the clone; the same line again (the folder now exists) says the one command that
    serves it, which .ci/run's test of the second README command does not cover."""
    import subprocess

    from test_package import _bash_blocks

    clone = tmp_path / "appsdk"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True)
    for name in filter(None, listed.stdout.split("\0")):
        if (REPO / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, clone / name)
    readme = (clone / "README.md").read_text()
    quick = _bash_blocks(readme.split("## Quick start", 1)[1].split("\n## ", 1)[0])[0]
    install, serve = quick.rsplit(" && ", 1)
    assert serve == "appsdk new book-club --path .. --dev", quick
    home = tmp_path / "home"
    home.mkdir()
    env = {**new_terminal(home), "COLUMNS": "200"}

    # The install part as is (pip may need the network); the serving part where 127.0.0.1:8000 is free.
    command = ["bash", "--noprofile", "--norc", "-c", install]
    installed = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    state = "../book-club/.appsdk/dev.json"
    script = f"""set -m
. .venv/bin/activate
{serve} > ../first.log 2>&1 &
trap 'kill -INT %1 2>/dev/null || true; wait' EXIT
for _ in $(seq 600); do [ -f {state} ] && grep -q 'Ctrl-C to stop' ../first.log && break; sleep 0.1; done
(cd ../book-club && appsdk call list-books --json > ../call.json)
kill -INT %1; wait %1
{serve} > ../again.log 2>&1; echo "exit $?" >> ../again.log
"""
    ran = run_owning_port_8000(["bash", "--noprofile", "--norc", "-c", script], cwd=clone, env=env, timeout=300)
    first = (tmp_path / "first.log").read_text()
    assert "Created" in first and "Ctrl-C to stop" in first, ran.stderr + first
    assert "Frankenstein" in (tmp_path / "call.json").read_text(), first
    again = (tmp_path / "again.log").read_text().strip().splitlines()
    assert again == [
        "error: ../book-club is already an appsdk project; to serve it: cd ../book-club && appsdk dev",
        "exit 1",
    ], again
