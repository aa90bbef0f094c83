"""Render a template from scaffolds/ into a new project folder, all or nothing.

The project is rendered into a temporary folder beside its target and renamed into place, so a
failure at any point leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import filecmp
import keyword
import os
import re
import secrets
import shutil
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.safewrite import make_folder, move_entry, rename_in_folder, write_file

TEMPLATE = "book-club"
# `appsdk new --auth`: these files replace or join the template's (the protected resource server).
AUTH_OVERLAY = "book-club-auth"
# `appsdk new --template react`: web/ (Vite, React, TypeScript) joins the template and replaces widgets/.
REACT_OVERLAY = "book-club-react"
_NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
# A template file named dot-X becomes .X: a real .gitignore inside the wheel would be dropped by
# packaging tools that honour ignore files.
_DOT_PREFIX = "dot-"
_SKIPPED = {"__pycache__", ".pytest_cache", ".appsdk", ".venv", "node_modules", "dist"}


class WidgetTemplate(StrEnum):
    """How the widget is written: one hand-written HTML file, or a Vite + React + TypeScript project in web/."""

    HTML = "html"
    REACT = "react"


class WidgetFlavor(StrEnum):
    """The widget resource's MIME type: which hosts render it."""

    MCP_APPS = "text/html;profile=mcp-app"
    SKYBRIDGE = "text/html+skybridge"


# --force moves each file of the user's that it replaces here, one folder per run, named by the time of the
# run: one place to compare and take back from, out of what the app serves, packs, tests and commits
# (.appsdk/ is appsdk's local state, which the project's .gitignore leaves out).
BACKUP_FOLDER = Path(".appsdk") / "backup"


class ExistingProject(AppsdkError):
    """The folder `appsdk new` was to create already holds an appsdk project (its pyproject.toml has a
    [tool.appsdk] table): most often the quick start run a second time, whose next step is `appsdk dev`."""

    def __init__(self, project: Path) -> None:
        super().__init__(f"{project} is already an appsdk project; to serve it, run `appsdk dev` in it")
        self.project = project


@dataclass(frozen=True)
class Replaced:
    """A template file that --force wrote over a different file of the user's, moved to `backup`."""

    path: Path  # relative to the project
    backup: Path  # relative to the project: .appsdk/backup/<time of the run>/server.py


@dataclass(frozen=True)
class ScaffoldResult:
    name: str
    path: Path
    flavor: WidgetFlavor
    files: tuple[Path, ...]  # every template file, relative to the project
    replaced_existing: bool
    auth: bool = False
    domain: str | None = None  # the reserved tunnel domain the widget's domain was filled from
    replaced: tuple[Replaced, ...] = ()  # --force: files that differed; the user's version is kept beside
    unchanged: tuple[Path, ...] = ()  # --force: files already exactly as the template has them
    added: tuple[Path, ...] = ()  # files that did not exist before (all of them for a new project)
    template: WidgetTemplate = WidgetTemplate.HTML
    # --template react: "installed", "skipped" (--no-install), or why web/'s packages are not installed
    web_install: str | None = None
    # What the project's tests need: its pyproject's `test` extra, which its README installs
    # (`pip install -e ".[test]"`) and the "Next:" lines name too, so the two agree.
    test_requirements: tuple[str, ...] = ()


def templates_root() -> Path:
    """The scaffolds folder: inside the installed wheel, or at the top of a source checkout."""
    packaged = Path(__file__).resolve().parent / "scaffolds"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / "scaffolds"
    if checkout.is_dir():
        return checkout
    raise AppsdkError("appsdk's templates are missing from this installation; reinstall appsdk-cli")


def validate_name(name: str) -> None:
    if not name:
        raise UsageError("the project name is empty; give a name such as book-club")
    if "/" in name or "\\" in name or name in {".", ".."} or ".." in name:
        raise UsageError(f"project name {name!r} is a path; give a plain name and use --path DIR for the folder")
    if not _NAME_PATTERN.fullmatch(name):
        raise UsageError(
            f"project name {name!r} is not allowed: start with a letter, then letters, digits, - or _ "
            "(at most 64 characters)"
        )
    if keyword.iskeyword(name) or keyword.iskeyword(name.replace("-", "_")):
        raise UsageError(f"project name {name!r} is a Python keyword; choose another name")


def scaffold(
    name: str,
    parent: Path,
    *,
    force: bool = False,
    flavor: WidgetFlavor = WidgetFlavor.MCP_APPS,
    auth: bool = False,
    domain: str | None = None,
    template: WidgetTemplate = WidgetTemplate.HTML,
    plugin: bool = False,
) -> ScaffoldResult:
    """Create parent/name from the book-club template (with auth: its OAuth-protected variant);
    raise AppsdkError and leave nothing on failure.

    `domain` is a reserved tunnel domain (books.ngrok.app): it becomes the project's
    `[tool.appsdk.tunnel] domain` and the widget's https origin. Without it, --force keeps the one the
    existing project configures. `plugin`: the README's file table lists the plugin files that
    `appsdk plugin init` writes next (`appsdk new` does, unless --no-plugin).
    """
    validate_name(name)
    domain = normalize_domain(domain) if domain is not None else None
    sources = [templates_root() / TEMPLATE]
    if auth:
        sources.append(templates_root() / AUTH_OVERLAY)
    react = template is WidgetTemplate.REACT
    if react:
        sources.append(templates_root() / REACT_OVERLAY)
    parent = parent.expanduser()
    target = parent / name
    if parent.exists() and not parent.is_dir():
        raise AppsdkError(f"{parent} is a file, not a folder; choose another --path")
    if target.exists() and not target.is_dir():
        raise AppsdkError(f"{target} already exists and is a file; choose another name or --path")
    occupied = target.is_dir() and any(target.iterdir())
    if occupied and not force and is_appsdk_project(target):
        raise ExistingProject(target)
    if domain is None and occupied:
        domain = _configured_domain(target)

    created_parents = _missing_ancestors(parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        # mkdir (not mkdtemp) so the project gets the user's usual permissions, not 0700.
        staging = parent / f".{name}.{secrets.token_hex(4)}.appsdk-new"
        staging.mkdir()
    except OSError as error:
        _remove_created(created_parents)
        raise AppsdkError(f"cannot create the project in {parent}: {error.strerror or error}") from error

    try:
        values = _template_values(name, flavor, domain, auth, plugin)
        files = sorted({path for source in sources for path in _render_tree(source, staging, values)})
        if react:
            files = _make_react(staging, files)
        if auth:
            files = _without_widget_tests(staging, files)
        if domain:
            _uncomment_tunnel_table(staging / "pyproject.toml")
        _require_this_appsdk(staging / "pyproject.toml")
        if occupied and not force:
            raise AppsdkError(_refusal(target, _differing(staging, target, files)))
        if occupied:
            replaced, unchanged, added = _merge_into(staging, target, files)
        else:
            rename_in_folder(parent, staging.name, name, root=parent)
            replaced, unchanged, added = [], [], files
    except OSError as error:
        raise AppsdkError(f"cannot write the project to {target}: {error.strerror or error}") from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not target.exists():
            _remove_created(created_parents)
    return ScaffoldResult(
        name,
        target,
        flavor,
        tuple(files),
        replaced_existing=occupied,
        auth=auth,
        domain=domain,
        replaced=tuple(replaced),
        unchanged=tuple(unchanged),
        added=tuple(added),
        template=template,
        test_requirements=requirements_of_tests(target),
    )


def _pyproject(folder: Path) -> dict[str, Any]:
    """The folder's pyproject.toml, read; empty when there is none or it cannot be read (not UTF-8 or not
    TOML: a ValueError either way): the user's file, which `new` only looks into and never judges."""
    import tomllib

    try:
        with (folder / "pyproject.toml").open("rb") as file:
            return tomllib.load(file)
    except (OSError, ValueError, RecursionError):
        return {}


def _table(value: Any, key: str) -> dict[str, Any]:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}


def requirements_of_tests(project: Path) -> tuple[str, ...]:
    """The `test` extra of the project's pyproject.toml (none when it has none, or cannot be read)."""
    extras = _table(_table(_pyproject(project), "project"), "optional-dependencies")
    listed = extras.get("test") if isinstance(extras, dict) else None
    return tuple(str(item) for item in listed) if isinstance(listed, list) else ()


_DOMAIN_PATTERN = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
_PLACEHOLDER_DOMAIN = "your-name.ngrok.app"


def normalize_domain(domain: str) -> str:
    """A reserved tunnel domain as ngrok takes it (books.ngrok.app), from that or https://books.ngrok.app/."""
    text = domain.strip().lower()
    text = text.removeprefix("https://").rstrip("/")
    if not _DOMAIN_PATTERN.fullmatch(text):
        raise UsageError(f"--domain {domain!r} is not a domain name; give a reserved one such as books.ngrok.app")
    return text


def _configured_domain(project: Path) -> str | None:
    """The existing project's `[tool.appsdk.tunnel] domain`, if it has a readable one."""
    found = _table(_table(_table(_pyproject(project), "tool"), "appsdk"), "tunnel").get("domain")
    if not isinstance(found, str) or found == _PLACEHOLDER_DOMAIN:
        return None
    try:
        return normalize_domain(found)
    except UsageError:
        return None


_TUNNEL_TABLE_COMMENTED = '# [tool.appsdk.tunnel]\n# domain = "'


def _uncomment_tunnel_table(pyproject: Path) -> None:
    """The template's pyproject carries the table commented out (so it stays valid TOML); a domain turns it on."""
    text = pyproject.read_text(encoding="utf-8")
    if _TUNNEL_TABLE_COMMENTED not in text:
        raise AppsdkError("appsdk's template has no [tool.appsdk.tunnel] table; reinstall appsdk-cli")
    text = text.replace(_TUNNEL_TABLE_COMMENTED, '[tool.appsdk.tunnel]\ndomain = "')
    write_file(pyproject, text, root=pyproject.parent, mode=_mode_of(pyproject), sync=False)


_TEST_EXTRA = 'test = ["pytest>=8", "appsdk-cli"]\n'


def _require_this_appsdk(pyproject: Path) -> None:
    """The test extra asks for the appsdk-cli that makes the project, from where it was installed: a plain
    `appsdk-cli` installs only from a package index, and appsdk-cli is installed from a clone."""
    from appsdk_cli.invocation import installed_from

    appsdk = installed_from()
    text = pyproject.read_text(encoding="utf-8")
    if _TEST_EXTRA not in text:
        raise AppsdkError("appsdk's template has no test extra with appsdk-cli; reinstall appsdk-cli")
    note = (
        "# It names where the appsdk that made this project came from (a folder, archive or VCS URL, not a\n"
        "# package index, where pip would not find it); once appsdk-cli is installed from an index, write\n"
        f'# "{appsdk.from_index}" here instead.\n'
        if appsdk.url
        else ""
    )
    extra = note + _TEST_EXTRA.replace('"appsdk-cli"', f'"{appsdk.requirement}"')
    replaced = text.replace(_TEST_EXTRA, extra, 1)
    write_file(pyproject, replaced, root=pyproject.parent, mode=_mode_of(pyproject), sync=False)


# --template react: the template's widget file gives way to web/, and what points at it follows.
_HTML_WIDGET = Path("widgets/book-list.html")
_REACT_EDITS: dict[str, list[tuple[str, str]]] = {
    "server.py": [
        (
            'WIDGET_FILE = Path(__file__).parent / "widgets" / "book-list.html"\n',
            "# The widget is built from web/ (React + TypeScript) into one self-contained file: `appsdk build`\n"
            "# writes it, `appsdk dev` rebuilds it on every save. The server hands exactly this file to ChatGPT.\n"
            'WIDGET_FILE = Path(__file__).parent / "web" / "dist" / "index.html"\n'
            "NOT_BUILT_PAGE = (\n"
            '    \'<!doctype html><html lang="en"><meta charset="utf-8"><title>Widget not built</title>\'\n'
            '    "<p>This widget has not been built yet: run <code>appsdk build</code> in the project "\n'
            '    "(or <code>npm run build</code> in web/).</p></html>"\n'
            ")\n",
        ),
        (
            "    # Read on every request so an edited widget is served without a restart.\n"
            '    return WIDGET_FILE.read_text(encoding="utf-8")\n',
            "    # Read on every request, so each rebuild is served without a restart.\n"
            "    if not WIDGET_FILE.is_file():\n"
            "        return NOT_BUILT_PAGE\n"
            '    return WIDGET_FILE.read_text(encoding="utf-8")\n',
        ),
    ],
    "pyproject.toml": [('"widgets"]', '"web/dist"]')],
    "AGENTS.md": [
        (
            "- `widgets/book-list.html`: the widget, one hand-written HTML file.\n",
            "- `web/`: the widget in React + TypeScript (Vite); `appsdk dev` rebuilds `web/dist/index.html` on save.\n",
        )
    ],
    "tests/test_server.py": [
        (
            '        assert "window.openai" in content.text and "ui/initialize" in content.text\n',
            "        assert content.text == server.book_list_widget()  # the built web/dist/index.html\n",
        )
    ],
    "README.md": [
        (
            "| `widgets/book-list.html` | the widget: reads `window.openai` in ChatGPT, "
            "the MCP Apps bridge elsewhere |\n",
            "| `web/` | the widget: React + TypeScript, built by Vite into one self-contained "
            "`web/dist/index.html` |\n"
            "| `web/src/tools.gen.ts` | TypeScript types of the tool's result, generated from `server.py` "
            "(`appsdk types`) |\n",
        ),
        ("## Put it in ChatGPT\n", "{{react_section}}\n## Put it in ChatGPT\n"),
    ],
    ".gitignore": [("build/\n", "build/\nweb/node_modules/\nweb/dist/\n")],
    # Rendered tests need the built widget: built once per run when it is missing or older than web/src.
    "tests/test_widget.py": [
        (
            "import pytest\n",
            "import subprocess\nimport sys\nfrom pathlib import Path\n\nimport pytest\n\n"
            "PROJECT = Path(__file__).resolve().parent.parent\n"
            'BUILT_WIDGET = PROJECT / "web" / "dist" / "index.html"\n\n\n'
            '@pytest.fixture(scope="module", autouse=True)\n'
            "def built_widget() -> None:\n"
            '    """The widget the server hands the host is web/dist/index.html: build it when it is missing or older\n'
            '    than a source in web/src, so the tests render the widget as the code stands."""\n'
            '    sources = [p for p in (PROJECT / "web" / "src").rglob("*") if p.is_file()]\n'
            "    built = BUILT_WIDGET.stat().st_mtime if BUILT_WIDGET.is_file() else None\n"
            "    if built is not None and all(p.stat().st_mtime <= built for p in sources):\n"
            "        return\n"
            '    if not (PROJECT / "web" / "node_modules").is_dir():\n'
            '        pytest.skip("the widget is not built and its packages are not installed: npm install in web/")\n'
            '    command = [sys.executable, "-m", "appsdk_cli", "build", str(PROJECT)]\n'
            "    build = subprocess.run(command, capture_output=True, text=True)\n"
            "    if build.returncode != 0:\n"
            '        pytest.fail(f"appsdk build failed: {(build.stderr or build.stdout).strip()}", pytrace=False)\n\n',
        )
    ],
}


# The sign-in template's tests do not read the widget's text, so there is nothing of theirs to change.
_OPTIONAL_EDITS = {"tests/test_server.py"}


def _make_react(staging: Path, files: list[Path]) -> list[Path]:
    """Point the rendered project at web/ instead of widgets/book-list.html; the files written."""
    (staging / _HTML_WIDGET).unlink()
    with_section = staging / "web" / "README-section.md"
    section = with_section.read_text(encoding="utf-8")
    with_section.unlink()
    for name, edits in _REACT_EDITS.items():
        path = staging / name
        text = path.read_text(encoding="utf-8")
        for old, new in edits:
            if old not in text and name not in _OPTIONAL_EDITS:
                raise AppsdkError(f"appsdk's template {name} does not have what --template react changes; reinstall")
            text = text.replace(old, new.replace("{{react_section}}", section), 1)
        write_file(path, text, root=staging, mode=_mode_of(path), sync=False)
    with contextlib.suppress(OSError):
        (staging / "widgets").rmdir()
    dropped = {_HTML_WIDGET, Path("web/README-section.md")}
    return [path for path in files if path not in dropped]


# The sign-in template's server answers only signed-in clients, and a test session does not sign in.
_WIDGET_TESTS = (Path("tests/test_widget.py"), Path("tests/widget_states/empty.json"))


def _without_widget_tests(staging: Path, files: list[Path]) -> list[Path]:
    for path in _WIDGET_TESTS:
        (staging / path).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        (staging / "tests" / "widget_states").rmdir()
    return [path for path in files if path not in _WIDGET_TESTS]


# The README's rows for the files `appsdk plugin init` writes (appended to the table's last row).
_PLUGIN_ROWS = (
    "\n| `.codex-plugin/plugin.json` | the plugin manifest: name, description, logo, links (`appsdk plugin check`) |"
    "\n| `.codex-mcp.json` | the server's `/mcp` URL for Codex, named by the manifest's `mcpServers` (not `.mcp.json`, "
    "which Claude Code reads as this folder's own MCP servers) |"
    "\n| `assets/logo.png` | the plugin's logo, a generated placeholder: replace it with your own |"
)


def _template_values(name: str, flavor: WidgetFlavor, domain: str | None, auth: bool, plugin: bool) -> dict[str, str]:
    from appsdk_cli import chatgpt

    return {
        "app_name": name,
        "widget_mime_type": flavor.value,
        "widget_domain": f"https://{domain}" if domain else "",
        "tunnel_domain": domain or _PLACEHOLDER_DOMAIN,
        "chatgpt_steps": chatgpt.markdown(sign_in=auth),
        "plugin_files": _PLUGIN_ROWS if plugin else "",
    }


def _render_tree(source: Path, destination: Path, values: dict[str, str]) -> list[Path]:
    """Copy the template, filling {{key}} placeholders; return the relative paths written."""
    written: list[Path] = []
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if any(part in _SKIPPED for part in relative.parts) or path.suffix == ".pyc":
            continue
        relative = Path(*(_undot(part) for part in relative.parts))
        out = destination / relative
        if path.is_dir():
            make_folder(out, root=destination)
            continue
        text = path.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", value)
        # Made with the template file's mode (an executable stays one), the umask applied as to any new file.
        write_file(out, text, root=destination, mode=_mode_of(path), sync=False)
        written.append(relative)
    return written


def _mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _undot(part: str) -> str:
    return "." + part[len(_DOT_PREFIX) :] if part.startswith(_DOT_PREFIX) else part


def is_appsdk_project(folder: Path) -> bool:
    """Does the folder's pyproject.toml have a [tool.appsdk] table (as every project `appsdk new` makes)?"""
    return isinstance(_table(_pyproject(folder), "tool").get("appsdk"), dict)


def _differing(staging: Path, target: Path, files: list[Path]) -> list[Path]:
    """The template files that --force would replace: those the folder has, with other content."""
    return [
        relative
        for relative in files
        if os.path.lexists(target / relative)
        and (
            (target / relative).is_symlink()
            or not (target / relative).is_file()
            or not filecmp.cmp(target / relative, staging / relative, shallow=False)
        )
    ]


def _refusal(target: Path, differing: list[Path]) -> str:
    """Why a non-empty folder is not written into, and what --force would do there, before it does it."""
    if not differing:
        would = "--force adds the template's files and replaces none of yours"
    else:
        names = [str(path) for path in differing]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        would = f"--force replaces {shown}, moving yours to {target / BACKUP_FOLDER}/, and keeps every other file"
    return f"{target} already exists and is not empty; choose another name or --path ({would})"


def _merge_into(staging: Path, target: Path, files: list[Path]) -> tuple[list[Replaced], list[Path], list[Path]]:
    """--force into a non-empty folder: write the template's files, keep every other file, and move the
    user's version of each file the template replaces into one backup folder for the run (BACKUP_FOLDER).

    Every destination is checked before the first write, so a clash (a folder where a file must go, a
    link that leads out of the project) fails without changing anything. Nothing is written through a
    symbolic link to a place outside the project.
    """
    root = target.resolve()
    for relative in files:
        destination = target / relative
        for ancestor in reversed(relative.parents[:-1]):
            existing = target / ancestor
            if existing.is_symlink() and not existing.resolve().is_relative_to(root):
                raise AppsdkError(
                    f"{existing} is a link to {existing.resolve()}, outside the project; nothing was changed "
                    "(replace the link with a folder, or scaffold somewhere else)"
                )
            if existing.exists() and not existing.is_dir():
                raise AppsdkError(f"{existing} is a file in the way of the template; move it and try again")
        if destination.is_dir() and not destination.is_symlink():
            raise AppsdkError(f"{destination} is a folder in the way of the template; move it and try again")
        if os.path.lexists(destination) and not destination.is_symlink() and not os.access(destination, os.W_OK):
            raise AppsdkError(f"{destination} is not writable; nothing was changed")
    for folder in (target / BACKUP_FOLDER.parent, target / BACKUP_FOLDER):
        if folder.is_symlink() and not folder.resolve().is_relative_to(root):
            raise AppsdkError(
                f"{folder} is a link out of the project, where --force keeps your files; nothing was changed"
            )
        if os.path.lexists(folder) and not folder.is_dir():
            raise AppsdkError(f"{folder} is a file where --force keeps your files; move it and try again")
    backups = _backup_folder(target)
    replaced: list[Replaced] = []
    unchanged: list[Path] = []
    added: list[Path] = []
    for relative in files:
        destination = target / relative
        new = staging / relative
        if not os.path.lexists(destination):
            write_file(destination, new.read_bytes(), root=target, mode=_mode_of(new))
            added.append(relative)
        elif not destination.is_symlink() and filecmp.cmp(destination, new, shallow=False):
            unchanged.append(relative)
        else:
            # A link is moved aside as a link, never read or written through.
            backup = backups / relative
            move_entry(destination, backup, root=target)
            write_file(destination, new.read_bytes(), root=target, mode=_mode_of(new))
            replaced.append(Replaced(relative, backup.relative_to(target)))
    return replaced, unchanged, added


def _backup_folder(target: Path) -> Path:
    """This run's backup folder (not made yet): named by the time, and never one an earlier run used."""
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate, number = target / BACKUP_FOLDER / stamp, 0
    while os.path.lexists(candidate):
        number += 1
        candidate = target / BACKUP_FOLDER / f"{stamp}-{number}"
    return candidate


def _missing_ancestors(folder: Path) -> list[Path]:
    missing = []
    for candidate in [folder, *folder.parents]:
        if candidate.exists():
            break
        missing.append(candidate)
    return missing


def _remove_created(folders: list[Path]) -> None:
    for folder in folders:  # deepest first
        try:
            folder.rmdir()
        except OSError:
            break
