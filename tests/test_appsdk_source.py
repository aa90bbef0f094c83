"""A new project's `test` extra asks for the appsdk-cli the user has, from where pip installed it (#36 item 9).

appsdk-cli is on no package index: users install it from a clone (`pip install .`, `pip install -e .`), and
may from a VCS URL or an archive. A project asking for plain `appsdk-cli` fails at the README's
`pip install -e ".[test]"` ("No matching distribution found for appsdk-cli"). Each case is a real install
in a virtual environment of its own, and `appsdk new`'s scaffolding runs there; the index case installs
from a simple index built in a temporary folder, which pip treats as any index (no direct_url.json).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO

import appsdk_cli

FROM_INDEX = "appsdk-cli>=" + re.match(r"\d+\.\d+", appsdk_cli.__version__).group(0)
NOTE = "not a\n# package index, where pip would not find it); once appsdk-cli is installed from an index, write\n"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(folder)]
    built = subprocess.run([*command, str(REPO)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    return next(folder.glob("appsdk_cli-*.whl"))


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """This checkout's files as they stand, in a git repository of their own: a user's clone (without the
    checkout's venvs and builds), and a repository pip can install from by a git URL."""
    import shutil

    folder = tmp_path_factory.mktemp("clone") / "appsdk"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True)
    for name in filter(None, listed.stdout.split("\0")):
        if (REPO / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, folder / name)
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
        subprocess.run(["git", *command], cwd=folder, check=True, capture_output=True)
    return folder


def pip(venv: Path, *args: str, env: dict[str, str] | None = None) -> None:
    # --no-deps: only where appsdk-cli comes from matters here, and scaffolding needs nothing else.
    command = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def scaffolded_test_extra(venv: Path, tmp_path: Path) -> tuple[list[str], str]:
    """Scaffold a project with the appsdk of `venv`: its pyproject's test extra, and the text of the file."""
    script = (
        "import sys, pathlib; from appsdk_cli.scaffold import scaffold; scaffold('demo', pathlib.Path(sys.argv[1]))"
    )
    made = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script, str(tmp_path)], capture_output=True, text=True, cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    text = (tmp_path / "demo" / "pyproject.toml").read_text()
    return tomllib.loads(text)["project"]["optional-dependencies"]["test"], text


def assert_builds(project: Path) -> None:
    """The project's build backend accepts its pyproject as written (hatchling refuses a direct reference
    unless allowed), as the README's `pip install -e ".[test]"` needs before it installs anything (the
    metadata of a plain build: an editable one needs hatchling's `editables` too)."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--dry-run",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
    ]
    built = subprocess.run([*command, str(project)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]


def new_venv(tmp_path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, capture_output=True)
    return tmp_path / "venv"


@pytest.mark.parametrize("how", ["folder", "editable"])
def test_installed_from_a_folder_the_project_asks_for_that_folder(how: str, tmp_path: Path, clone: Path):
    """The README's quick start (`pip install .` in a clone), or an editable install of it: the folder."""
    venv = new_venv(tmp_path)
    pip(venv, *(["-e"] if how == "editable" else []), str(clone))
    extra, text = scaffolded_test_extra(venv, tmp_path)
    assert extra == ["pytest>=8", f"appsdk-cli @ {clone.as_uri()}"]
    assert NOTE + f'# "{FROM_INDEX}" here instead.\ntest = ' in text, text
    assert_builds(tmp_path / "demo")


def test_installed_from_git_the_project_asks_for_the_installed_commit(tmp_path: Path, clone: Path):
    """A git URL with a host, as from GitHub (pip 23's packaging reads `git+file:///…` without one as invalid)."""
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    url = f"git+file://localhost{clone}"
    venv = new_venv(tmp_path)
    pip(venv, url)
    extra, text = scaffolded_test_extra(venv, tmp_path)
    assert extra == ["pytest>=8", f"appsdk-cli @ {url}@{commit.strip()}"]
    assert NOTE in text, text
    assert_builds(tmp_path / "demo")


def test_installed_from_an_archive_the_project_asks_for_that_archive(tmp_path: Path, wheel: Path):
    venv = new_venv(tmp_path)
    pip(venv, str(wheel))
    extra, text = scaffolded_test_extra(venv, tmp_path)
    assert extra == ["pytest>=8", f"appsdk-cli @ {wheel.as_uri()}"]
    assert NOTE in text, text
    assert_builds(tmp_path / "demo")


def test_installed_from_an_index_the_project_asks_for_a_compatible_version_by_name(tmp_path: Path, wheel: Path):
    """A PEP 503 simple index in a folder: pip reads it as it reads PyPI and records no direct URL."""
    project = tmp_path / "simple" / "appsdk-cli"
    project.mkdir(parents=True)
    (project / wheel.name).write_bytes(wheel.read_bytes())
    (project / "index.html").write_text(
        f'<!DOCTYPE html><html><body><a href="{wheel.name}">{wheel.name}</a></body></html>'
    )
    (tmp_path / "simple" / "index.html").write_text('<!DOCTYPE html><html><body><a href="appsdk-cli/">appsdk-cli</a>')
    venv = new_venv(tmp_path)
    # Only this index: no configuration file, no find-links of the machine's.
    alone = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PIP_CONFIG_FILE": os.devnull}
    pip(venv, "--index-url", (tmp_path / "simple").as_uri(), "appsdk-cli", env=alone)
    recorded = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import importlib.metadata as m; print(m.distribution('appsdk-cli').read_text('direct_url.json'))",
        ],
        capture_output=True,
        text=True,
    )
    assert recorded.stdout.strip() == "None", recorded.stdout  # what makes it the index case
    extra, text = scaffolded_test_extra(venv, tmp_path)
    assert extra == ["pytest>=8", FROM_INDEX]
    assert "package index, where" not in text, text
