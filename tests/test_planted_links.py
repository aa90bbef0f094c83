"""No writer of appsdk follows a link someone planted (issue 37, hole 2).

Each attack is driven as an attacker would set it up: a project (a cloned repository, a folder an agent
wrote into) holds a symlink where appsdk writes, named as appsdk names its temporaries or its outputs, and
pointing at a file the user cares about (a shell rc) or a folder outside the project. The real command or
MCP session then runs; the target must stay untouched. `appsdk_cli/safewrite.py` is the one writer.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from conftest import REPO, appsdk, free_port, stop

from appsdk_cli.scaffold import WidgetTemplate, scaffold

RC = "# the user's shell rc\nexport PATH=$HOME/bin:$PATH\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside the project the attacker wants overwritten."""
    outside = tmp_path / "home-of-the-user"
    outside.mkdir()
    rc = outside / ".bashrc"
    rc.write_text(RC)
    return rc


def untouched(folder: Path, rc: Path) -> None:
    assert rc.read_text() == RC, "the planted link was followed"
    assert sorted(p.name for p in folder.iterdir()) == [rc.name], "something was written outside the project"


# --- appsdk snapshot -o ---------------------------------------------------------------------------------


def test_snapshot_does_not_write_through_a_planted_partial_link(tmp_path: Path, victim: Path):
    project = scaffold("book-club", tmp_path).path
    (project / "appsdk.contract.json.partial").symlink_to(victim)
    result = appsdk("snapshot", "-o", "appsdk.contract.json", cwd=project)
    assert result.returncode == 0, result.stderr
    untouched(victim.parent, victim)
    written = project / "appsdk.contract.json"
    assert not written.is_symlink() and '"list-books"' in written.read_text()


def test_snapshot_refuses_an_output_that_is_a_link_or_lies_through_a_linked_folder(tmp_path: Path, victim: Path):
    project = scaffold("book-club", tmp_path).path
    (project / "appsdk.contract.json").symlink_to(victim)
    (project / "out").symlink_to(victim.parent)
    for output in ("appsdk.contract.json", "out/contract.json"):
        result = appsdk("snapshot", "-o", output, cwd=project)
        assert result.returncode == 1, (output, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "symbolic link" in result.stderr or "leads out" in result.stderr, result.stderr
    untouched(victim.parent, victim)


# --- contract_snapshot over `appsdk mcp` ----------------------------------------------------------------


@asynccontextmanager
async def agent_session(root: Path):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "appsdk_cli", "mcp", str(root)], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@pytest.mark.anyio
async def test_contract_snapshot_does_not_write_through_a_planted_partial_link(
    tmp_path: Path, victim: Path, anyio_backend
):
    root = tmp_path / "work"
    root.mkdir()
    project = scaffold("book-club", root).path
    (project / "appsdk.contract.json.partial").symlink_to(victim)
    # The form that reads the project's code: the live one needs a running dev, and both write the same way.
    async with agent_session(root) as agent:
        recorded = await agent.call_tool("contract_snapshot_code", {"path": "book-club"})
    assert not recorded.is_error, recorded.content
    untouched(victim.parent, victim)
    assert '"list-books"' in (project / "appsdk.contract.json").read_text()


# --- appsdk skill install --project ---------------------------------------------------------------------


SKILL = Path(".agents") / "skills" / "appsdk"


def test_skill_install_refuses_a_planted_skill_folder_link(tmp_path: Path, victim: Path):
    project = tmp_path / "app"
    (project / SKILL.parent).mkdir(parents=True)
    (project / SKILL).symlink_to(victim.parent, target_is_directory=True)
    result = appsdk("skill", "install", "--codex", "--project", "--path", str(project), env={"HOME": str(tmp_path)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "leads out" in result.stderr, result.stderr
    untouched(victim.parent, victim)


@pytest.mark.parametrize("planted", ["SKILL.md.partial", ".appsdk-skill.json"])
def test_skill_install_does_not_write_through_a_planted_file_link(tmp_path: Path, victim: Path, planted: str):
    project = tmp_path / "app"
    (project / SKILL).mkdir(parents=True)
    (project / SKILL / planted).symlink_to(victim)
    result = appsdk("skill", "install", "--codex", "--project", "--path", str(project), env={"HOME": str(tmp_path)})
    assert "Traceback" not in result.stderr
    untouched(victim.parent, victim)
    if planted.endswith(".partial"):
        assert result.returncode == 0, result.stderr
        assert (project / SKILL / "SKILL.md").is_file() and not (project / SKILL / "SKILL.md").is_symlink()
    else:
        assert result.returncode == 1 and "symbolic link" in result.stderr, result.stderr


# --- appsdk types ---------------------------------------------------------------------------------------


def test_types_does_not_write_through_planted_links(tmp_path: Path, victim: Path):
    project = scaffold("shelf", tmp_path, template=WidgetTemplate.REACT).path
    source = project / "web" / "src"
    for name in ("tools.gen.tmp", "tools.gen.ts.tmp", "tools.gen.ts.partial"):  # every fixed name ever used
        (source / name).symlink_to(victim)
    (source / "tools.gen.ts").unlink(missing_ok=True)
    result = appsdk("types", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    untouched(victim.parent, victim)
    assert "export interface ToolInputs" in (source / "tools.gen.ts").read_text()


# --- appsdk dev's state files ---------------------------------------------------------------------------


def test_dev_refuses_a_state_folder_linked_out_of_the_project(tmp_path: Path, victim: Path):
    project = scaffold("book-club", tmp_path).path
    (project / ".appsdk").symlink_to(victim.parent, target_is_directory=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    try:
        while process.poll() is None and time.monotonic() < deadline:
            if len(list(victim.parent.iterdir())) > 1:
                break  # dev wrote its state through the link: the attack worked
            time.sleep(0.1)
        untouched(victim.parent, victim)
        assert process.wait(timeout=30) == 1
        stderr = process.stderr.read() if process.stderr else ""
        assert "Traceback" not in stderr and "leads out" in stderr, stderr
    finally:
        stop(process)


# --- one writer: nothing in appsdk_cli writes a file another way -----------------------------------------

# A raw write outside appsdk_cli/safewrite.py, allowed only for the reason given here.
ALLOWED = {
    ("safewrite.py", "*"): "it is the one writer",
    # Read-only opens (os.open is counted whatever its flags).
    ("agentserver/front.py", "os.open"): "opens os.devnull O_RDONLY",
    ("apps/tomlfile.py", "os.open"): "reads a registry file O_RDONLY|O_NONBLOCK",
    ("plugin/tree.py", "os.open"): "reads a plugin's regular file O_RDONLY|O_NOFOLLOW",
}
PATH_WRITERS = {"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"}
MODULE_WRITERS = {
    ("os", "open"),
    ("os", "replace"),
    ("os", "rename"),
    ("json", "dump"),
    ("tomlkit", "dump"),
    *(("shutil", name) for name in ("copy", "copy2", "copyfile", "copytree", "move")),
}


def raw_writes() -> list[tuple[str, int, str]]:
    """Every call in appsdk_cli that writes a file without the helper: (file, line, call)."""
    found = []
    package = REPO / "appsdk_cli"
    for source in sorted(package.rglob("*.py")):
        where = source.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            name = _raw_write(node) if isinstance(node, ast.Call) else None
            if name is None or (where, "*") in ALLOWED or (where, name) in ALLOWED:
                continue
            found.append((where, node.lineno, name))
    return found


def _raw_write(call: ast.Call) -> str | None:
    function = call.func
    if isinstance(function, ast.Name):
        return "open" if function.id == "open" and _write_mode(call, 1) else None
    if not isinstance(function, ast.Attribute):
        return None
    owner = function.value.id if isinstance(function.value, ast.Name) else None
    if (owner, function.attr) in MODULE_WRITERS:
        return f"{owner}.{function.attr}"
    if owner in ("os", "shutil", "json", "tomlkit"):
        return None
    if function.attr in PATH_WRITERS:
        return function.attr
    if function.attr == "open" and _write_mode(call, 0):  # Path.open("w")
        return "open"
    if function.attr in ("replace", "rename") and len(call.args) == 1 and not call.keywords:  # Path.replace(x)
        return function.attr
    return None


def _write_mode(call: ast.Call, position: int) -> bool:
    modes = call.args[position : position + 1] + [k.value for k in call.keywords if k.arg == "mode"]
    return any(isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+") for mode in modes)


def test_every_file_appsdk_writes_goes_through_the_one_writer():
    strays = raw_writes()
    assert not strays, "write these through appsdk_cli.safewrite (or allow-list them with the reason):\n" + "\n".join(
        f"  appsdk_cli/{file}:{line}: {call}" for file, line, call in strays
    )


def test_the_writer_follows_a_link_only_while_it_stays_inside_the_root(tmp_path: Path, victim: Path):
    """The mechanism under every test above, on the descriptor-relative path this platform takes."""
    from appsdk_cli import safewrite

    assert safewrite._RELATIVE or os.name != "posix"
    root = tmp_path / "project"
    (root / "real").mkdir(parents=True)
    (root / "inside").symlink_to("real", target_is_directory=True)
    (root / "absolute").symlink_to(root / "real", target_is_directory=True)
    (root / "out").symlink_to(victim.parent, target_is_directory=True)
    (root / "up").symlink_to("..", target_is_directory=True)
    safewrite.write_file(root / "inside" / "a" / "one.txt", "1", root=root)
    safewrite.write_file(root / "absolute" / "two.txt", "2", root=root)
    assert sorted(p.name for p in (root / "real").rglob("*.txt")) == ["one.txt", "two.txt"]
    for refused in ("out/x", "up/x", "../x", "inside/../../x", "out"):
        with pytest.raises(safewrite.UnsafeOutput):
            safewrite.write_file(root / refused, "no", root=root)
    untouched(victim.parent, victim)
    assert not (tmp_path / "x").exists()
    assert [p.name for p in (root / "real").iterdir() if p.name.endswith(".tmp")] == []
