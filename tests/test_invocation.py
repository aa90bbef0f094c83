"""How the hints name appsdk, folders and installs so that they run as typed in a new terminal."""

from __future__ import annotations

import sys
from pathlib import Path

from appsdk_cli.invocation import fresh_shell, pip_install, shell_path

IN_VENV = sys.prefix != sys.base_prefix


def test_paths_are_named_from_home_and_quoted_when_they_must_be(tmp_path: Path):
    env = {"HOME": str(tmp_path)}
    assert shell_path(tmp_path / "apps" / "demo", env) == "~/apps/demo"
    assert shell_path(tmp_path, env) == "~"
    assert shell_path(Path("/srv/x"), env) == "/srv/x"
    assert shell_path(tmp_path / "my apps", env) == f"'{tmp_path}/my apps'"
    assert shell_path(Path("relative"), env) == str(Path.cwd() / "relative")  # a new terminal has another cwd


def test_a_venv_a_new_terminal_lacks_is_activated_first(tmp_path: Path):
    bin_dir = Path(sys.executable).parent
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "VIRTUAL_ENV": ""}
    shell = fresh_shell(env)
    if IN_VENV and (bin_dir / "appsdk").exists():
        assert shell.setup == f". {bin_dir}/activate" and shell.appsdk == "appsdk" and shell.python == "python"
    # Activation puts the venv's bin first; a new terminal does not have it, so it still needs the setup line.
    activated = {**env, "PATH": f"{bin_dir}:/usr/bin:/bin", "VIRTUAL_ENV": sys.prefix}
    assert fresh_shell(activated).setup == shell.setup
    # On the login PATH (pipx, a user install): nothing to set up.
    on_path = {**env, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    if (bin_dir / "appsdk").exists():
        assert fresh_shell(on_path).setup is None and fresh_shell(on_path).appsdk == "appsdk"


def test_pip_install_names_the_python_appsdk_runs_in(tmp_path: Path):
    env = {"HOME": str(tmp_path)}
    assert pip_install("playwright>=1.45", env) == f"{sys.executable} -m pip install 'playwright>=1.45'"
    assert pip_install("pytest", {**env, "VIRTUAL_ENV": sys.prefix}) == "pip install pytest"
