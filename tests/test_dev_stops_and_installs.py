"""appsdk dev around the app's processes: a call still running when a save replaces its code, and a
package installed after an import failed for its lack (#36)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import appsdk, stop
from test_dev import start_dev, wait_until

from appsdk_cli.scaffold import scaffold

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return scaffold("book-club", tmp_path).path


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_a_save_while_an_interrupted_sync_call_still_runs_says_one_line(project: Path, tmp_path: Path):
    """A sync tool sleeps; its caller presses Ctrl-C; a save replaces the code while the tool still
    sleeps. The old worker stops it when uvicorn's graceful shutdown is up: one line, no traceback."""
    started = tmp_path / "started"
    append(
        project / "server.py",
        "\n\n@mcp.tool()\ndef slow() -> str:\n"
        '    """Sleep a long while."""\n    import pathlib\n    import time\n\n'
        f"    pathlib.Path({str(started)!r}).write_text('yes')\n    time.sleep(30)\n    return 'done'\n",
    )
    dev = start_dev(project)
    try:
        call = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "call", "slow"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(started.exists, message="the tool running")
        call.send_signal(signal.SIGINT)
        _, said = call.communicate(timeout=30)
        assert call.returncode != 0 and "interrupted" in said, said
        append(project / "server.py", "\n# saved while slow() sleeps\n")
        wait_until(lambda: "reloaded" in dev.out(), message="the reload")
        wait_until(lambda: "stopped 1 call" in dev.err(), timeout=30, message="the old worker's line")
        assert appsdk("call", "list-books", cwd=project).returncode == 0  # the new code serves
    finally:
        stop(dev.process)
    err = dev.err()
    assert "Traceback" not in err and "CancelledError" not in err and "graceful shutdown" not in err, err
    assert [line for line in err.splitlines() if line.strip()] == [
        "warning: appsdk dev: stopped 1 call still running in the code before the save"
    ], err


def _wheel(folder: Path, name: str, text: str) -> Path:
    """A one-module wheel, built by hand: pip installs it without a build backend or an index."""
    import zipfile

    path = folder / f"{name}-1.0-py3-none-any.whl"
    info = f"{name}-1.0.dist-info"
    files = {
        f"{name}.py": text,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{file},,\n" for file in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as archive:
        for file, content in files.items():
            archive.writestr(file, content)
    return path


def test_a_missing_package_installed_while_dev_runs_is_imported_without_a_save(project: Path, tmp_path: Path):
    """The app imports a package its Python lacks; dev's hint names that Python; installing the package
    with that command (pip, into the app's own venv) is enough: the app serves without a save."""
    venv = tmp_path / "app-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True
        ).stdout.strip()
    )
    # This venv's Python finds appsdk and its libraries where the test's does; what it installs stays its own.
    (site_packages / "test-parent.pth").write_text(
        "\n".join([*(p for p in sys.path if p.endswith("site-packages")), str(REPO)]) + "\n", encoding="utf-8"
    )
    append(
        project / "server.py",
        "\n\nimport shelfmark_dev_fixture\n\n\n@mcp.tool()\ndef shelf() -> str:\n"
        '    """Say where the shelf is."""\n    return shelfmark_dev_fixture.WHERE\n',
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    with (logs / "out").open("w") as out, (logs / "err").open("w") as err:
        dev = subprocess.Popen(
            [str(python), "-m", "appsdk_cli", "dev", str(project), "--port", "0"], stdout=out, stderr=err
        )
    said = lambda: (logs / "err").read_text(encoding="utf-8")  # noqa: E731
    try:
        wait_until(lambda: "Ctrl-C to stop" in (logs / "out").read_text(encoding="utf-8"), message="dev serving")
        wait_until(lambda: "hint:" in said(), message="the import failure's hint")
        assert "No module named 'shelfmark_dev_fixture'" in said()
        hint = next(line for line in said().splitlines() if line.startswith("hint:"))
        assert f"{venv}/bin/python -m pip install shelfmark_dev_fixture" in hint, hint
        wheel = _wheel(tmp_path, "shelfmark_dev_fixture", "WHERE = 'second shelf from the top'\n")
        installed = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(python),
                "install",
                "-q",
                "--no-index",
                "--no-deps",
                str(wheel),
            ],
            capture_output=True,
            text=True,
        )
        assert installed.returncode == 0, installed.stderr
        wait_until(
            lambda: "reloaded" in (logs / "out").read_text(encoding="utf-8"), timeout=15, message="a reload by itself"
        )
        called = appsdk("call", "shelf", cwd=project)
        assert called.returncode == 0 and "second shelf from the top" in called.stdout, called.stdout + called.stderr
    finally:
        stop(dev)
    assert said().count("the app failed to import") == 1, said()  # imported once more, and it worked
