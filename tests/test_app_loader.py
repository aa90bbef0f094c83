"""`appsdk check` and `appsdk dev` say the same line about the same broken app (snapshot/loader.py).

Real processes: `appsdk check PATH` imports the app in its own child, `appsdk dev --no-reload` in a forked
worker; both must stop with exit 1 and end on one identical error line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import appsdk, free_port

NO_ENV_URL = {"APPSDK_URL": ""}  # so a developer's own APPSDK_URL cannot turn the check live
SERVER = 'from mcp.server.mcpserver import MCPServer\n\nmcp = MCPServer("broken")\n'


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"server.py": "from mcp.server.mcpserver import MCPServer\nmcp = MCPServer(\n"},
            "error: the app failed to import: server.py:2: SyntaxError: ",
        ),
        (
            {"server.py": "from json import no_such_name\n" + SERVER},
            "error: the app failed to import: server.py:1: ImportError: cannot import name 'no_such_name'",
        ),
        (
            {"server.py": "import no_such_package_xyz\n" + SERVER},
            "error: the app failed to import: server.py:1: ModuleNotFoundError: No module named 'no_such_package_xyz'",
        ),
        (
            {"server.py": SERVER, "pyproject.toml": '[tool.appsdk]\napp = "server:api"\n'},
            "error: server.py has no attribute 'api' (looked for server:api ([tool.appsdk] app in ",
        ),
        ({"server.py": "mcp = ['not', 'a', 'server']\n"}, "error: server:mcp is a list, not an MCPServer"),
        ({"main.py": SERVER}, "error: no module 'server' in "),
        (
            # A common first mistake: under appsdk, which serves the app itself, this would block the import.
            {"server.py": SERVER + "mcp.run()\n"},
            "error: the app failed to import: server.py:4: mcp.run() starts the server on import; put that call "
            "under `if __name__ == '__main__':`",
        ),
    ],
    ids=[
        "syntax-error",
        "import-error",
        "missing-dependency",
        "missing-attribute",
        "not-a-server",
        "no-module",
        "serves-on-import",
    ],
)
def test_check_and_dev_say_the_same_line(tmp_path: Path, files: dict[str, str], expected: str):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")

    check = appsdk("check", str(tmp_path), env=NO_ENV_URL)
    dev = appsdk("dev", str(tmp_path), "--no-reload", "--port", str(free_port()), timeout=60)

    assert check.returncode == 1 and dev.returncode == 1, (check.stderr, dev.stderr)
    check_lines = check.stderr.strip().splitlines()
    assert len(check_lines) == 1 and "Traceback" not in check.stderr, check.stderr
    assert check_lines[0].startswith(expected), check_lines[0]
    # `dev` shows the user's traceback and a hint above its last line when the app itself raised.
    assert dev.stderr.strip().splitlines()[-1] == check_lines[0]
    assert not (tmp_path / ".appsdk" / "dev.json").exists()


def test_the_scaffolds_main_called_at_import_gets_the_serves_on_import_line(tmp_path: Path):
    """`main()` at module level (the scaffold's own entry point, unguarded) parsed appsdk's arguments
    (argparse's usage line, SystemExit: 2); it now reaches mcp.run(), and both commands name the call."""
    from appsdk_cli.scaffold import scaffold

    project = scaffold("book-club", tmp_path).path
    server = project / "server.py"
    server.write_text(server.read_text(encoding="utf-8") + "\nmain()\n", encoding="utf-8")
    line_number = len(server.read_text(encoding="utf-8").splitlines())

    check = appsdk("check", str(project), env=NO_ENV_URL)
    dev = appsdk("dev", str(project), "--no-reload", "--port", str(free_port()), timeout=60)

    expected = (
        f"error: the app failed to import: server.py:{line_number}: main() starts the server on import; "
        "put that call under `if __name__ == '__main__':`"
    )
    assert check.returncode == 1 and dev.returncode == 1, (check.stderr, dev.stderr)
    assert check.stderr.strip().splitlines() == [expected], check.stderr
    assert dev.stderr.strip().splitlines()[-1] == expected, dev.stderr
    assert "usage:" not in dev.stderr + check.stderr and "SystemExit" not in dev.stderr + check.stderr
