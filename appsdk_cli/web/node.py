"""Finding Node.js and npm, and installing a widget project's packages.

Node is needed only at development time, to build web/; appsdk itself stays pure Python. Every message
here says what to install or run, because a Python developer may never have used npm.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from appsdk_cli.errors import AppsdkError

WEB_DIR = "web"
# Vite 8 needs Node 20.19 or newer (or 22.12+).
MINIMUM_NODE = (20, 19)
INSTALL_HINT = (
    "install Node.js 20.19 or newer, with npm (https://nodejs.org/en/download, or `apt install nodejs npm`), "
    "then run `npm install` in {web}"
)


@dataclass(frozen=True)
class Node:
    node: str  # the node executable
    npm: str  # the npm executable
    version: tuple[int, int, int]


def web_dir(project: Path) -> Path | None:
    """The project's widget project (web/ with a package.json), or None for an HTML-only project."""
    web = project / WEB_DIR
    return web if (web / "package.json").is_file() else None


def find_node(web: Path) -> Node:
    """Node and npm on PATH, new enough; AppsdkError saying what to install otherwise."""
    node, npm = shutil.which("node"), shutil.which("npm")
    hint = INSTALL_HINT.format(web=web)
    if node is None or npm is None:
        missing = "Node.js" if node is None else "npm"
        raise AppsdkError(f"{missing} is not installed: {hint}")
    try:
        answer = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired) as problem:
        raise AppsdkError(f"cannot run {node} ({problem}): {hint}") from None
    found = re.match(r"v(\d+)\.(\d+)\.(\d+)", answer.strip())
    if not found:
        raise AppsdkError(f"{node} --version printed {answer.strip()!r}, not a Node.js version: {hint}")
    version = (int(found[1]), int(found[2]), int(found[3]))
    if version[:2] < MINIMUM_NODE:
        raise AppsdkError(f"Node.js {answer.strip()} is too old for the widget's Vite: {hint}")
    return Node(node, npm, version)


def installed(web: Path) -> bool:
    return (web / "node_modules" / ".package-lock.json").is_file()


def npm_install(web: Path, node: Node) -> None:
    """`npm ci` from the committed lock file (exact versions); AppsdkError with npm's last words on failure."""
    # --prefer-offline: packages already in npm's cache are not fetched again (the second project installs fast).
    command = [node.npm, "ci", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"]
    try:
        done = subprocess.run(command, cwd=web, capture_output=True, text=True, timeout=600, env=_npm_env())
    except subprocess.TimeoutExpired:
        raise AppsdkError(f"npm install in {web} took more than 10 minutes; run `npm install` there yourself") from None
    except OSError as problem:
        raise AppsdkError(f"cannot run npm in {web}: {problem.strerror or problem}") from None
    if done.returncode != 0:
        last = _last_line(done.stderr or done.stdout)
        raise AppsdkError(
            f"npm install failed in {web}: {last}; fix that and run `npm install` there",
            detail=(done.stderr or "") + (done.stdout or ""),
        )


def require_installed(web: Path) -> Node:
    """Node found and web/node_modules installed, or one line saying what to run."""
    node = find_node(web)
    if not installed(web):
        raise AppsdkError(f"the widget's packages are not installed: run `npm install` in {web}")
    return node


def _npm_env() -> dict[str, str]:
    # npm's update notice and colours are noise in our output.
    return {**os.environ, "NO_UPDATE_NOTIFIER": "1", "npm_config_update_notifier": "false", "NO_COLOR": "1"}


# npm's lines that say nothing of the cause: where its log is, its stack, its advice about proxies.
_NPM_NOISE = re.compile(r"^(A complete log|Log files were not written|syscall |errno |If you are behind a proxy|[{}])")


def _last_line(text: str) -> str:
    """The cause of npm's failure in one line: its error code and the first line that says what happened
    (npm 7–10 prefix them `npm ERR!` or `npm error`), not the "complete log" line it ends with."""
    lines = []
    for raw in text.splitlines():
        line = re.sub(r"^npm (ERR!|error) ", "", raw.rstrip())
        if line.strip() and not line[0].isspace() and not _NPM_NOISE.match(line):  # indented: a stack, an object
            lines.append(line)
    if not lines:
        return "no output"
    code = next((line[len("code ") :] for line in lines if line.startswith("code ")), None)
    said = next((line for line in lines if not line.startswith("code ")), None)
    cause = f"{code}: {said}" if code and said else code or said or lines[-1]
    return cause[:300]
