"""What `appsdk dev` says about the release contract on each reload: against the committed snapshot when
there is one, else the last reload; once per change; readable on a terminal. The real `appsdk dev`."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import appsdk, stop
from test_dev import DevServer, edit, start_dev, wait_until

from appsdk_cli.scaffold import scaffold

RENAMED = "breaking: tool `list-books` is gone, apparently renamed to `list-picks`"
WIDGET_CHANGED = "the widget HTML of ui://widget/book-list.html changed: goes live at once, no review"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return scaffold("book-club", tmp_path).path


@pytest.fixture
def snapshotted(project: Path) -> Path:
    """The project with its reviewed contract committed, as `appsdk snapshot` records it."""
    recorded = appsdk("snapshot", cwd=project)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert (project / "appsdk.contract.json").is_file()
    return project


@pytest.fixture
def dev(project: Path) -> Iterator[DevServer]:
    server = start_dev(project)
    yield server
    stop(server.process)


def reloads(dev: DevServer) -> int:
    return dev.out().count("reloaded in")


def save(dev: DevServer, path: Path, old: str, new: str) -> int:
    """Edit and wait for its reload line; where in dev's output that save's lines begin."""
    before, seen = reloads(dev), len(dev.out())
    edit(path, old, new)
    wait_until(lambda: reloads(dev) > before, message=f"the reload of {path.name}")
    return seen


def test_an_unpublished_change_then_its_revert_is_reported_against_the_snapshot(snapshotted: Path):
    dev = start_dev(snapshotted)
    try:
        server_py = snapshotted / "server.py"
        edit(server_py, 'name="list-books"', 'name="list-picks"')
        wait_until(lambda: RENAMED in dev.out(), message="the breaking rename")
        changed = dev.out()
        assert "the release contract differs from appsdk.contract.json, the reviewed snapshot" in changed
        assert "since the last reload" not in changed

        seen = save(dev, server_py, 'name="list-picks"', 'name="list-books"')
        back = "the release contract is back to the snapshot in appsdk.contract.json: nothing to review"
        wait_until(lambda: back in dev.out()[seen:], message="the revert, back to the snapshot")
        # The tools did change again, so ChatGPT's developer mode needs its Refresh.
        wait_until(lambda: "press Refresh on the plugin" in dev.out()[seen:], message="the Refresh line")
        reverted = dev.out()[seen:]
        assert "breaking" not in reverted and "is new" not in reverted
    finally:
        stop(dev.process)


def test_without_a_snapshot_each_reload_is_compared_with_the_last_one(dev: DevServer):
    seen = save(dev, dev.project / "server.py", 'name="list-books"', 'name="list-picks"')
    wait_until(lambda: RENAMED in dev.out()[seen:], message="the classified reload")
    header = (
        "the release contract changed since the last reload (there is no appsdk.contract.json yet: run "
        "`appsdk snapshot` to record the version you publish"
    )
    report = dev.out()[seen:]
    # Without the file there is no reviewed snapshot to speak of: what each change does is said of the published app.
    assert "reviewed snapshot" not in report and "the published app calls `list-books` for months" in report, report
    # In this order, as one block: the reload, what it did to the contract, then each change.
    assert report.index("reloaded") < report.index(header) < report.index(RENAMED), report

    seen = save(dev, dev.project / "widgets" / "book-list.html", "Book club picks</h1>", "Reads</h1>")
    wait_until(lambda: WIDGET_CHANGED in dev.out()[seen:], message="the widget's line")
    line = next(line for line in dev.out()[seen:].splitlines() if WIDGET_CHANGED in line)
    assert line.endswith("compared with the last reload"), line
    assert "breaking" not in dev.out()[seen:]


def test_a_second_widget_save_does_not_repeat_the_contract_line(dev: DevServer):
    html, server_py = dev.project / "widgets" / "book-list.html", dev.project / "server.py"
    save(dev, html, "Book club picks</h1>", "Our next reads</h1>")
    wait_until(lambda: WIDGET_CHANGED in dev.out(), message="the widget's line")
    save(dev, html, "Our next reads</h1>", "What we read next</h1>")

    # Something else changes: that is said, and a widget save after it says nothing new either.
    save(dev, server_py, "next three reading picks", "next three picks")
    wait_until(lambda: "tool `list-books`'s description changed" in dev.out(), message="the description's line")
    save(dev, html, "What we read next</h1>", "Picks</h1>")
    save(dev, server_py, '"Frankenstein"', '"Dracula"')  # after every line the widget saves could print
    assert dev.out().count(WIDGET_CHANGED) == 1, dev.out()
    assert dev.out().count("release contract") == 1


# -- on a terminal ---------------------------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


class Terminal:
    """`appsdk dev` on a pseudo-terminal of a given width, as a user runs it; what it shows, without colours."""

    def __init__(self, project: Path, columns: int) -> None:
        self.columns = columns
        self._master, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "NO_COLOR")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "dev", str(project), "--port", "0"],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env={**env, "TERM": "xterm-256color"},
            start_new_session=True,
        )
        os.close(follower)
        self._chunks: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self._chunks.append(chunk)

    def text(self) -> str:
        raw = b"".join(self._chunks).decode("utf-8", "replace")
        return ANSI.sub("", raw).replace("\r", "")

    def close(self) -> None:
        stop(self.process)
        os.close(self._master)
        self._reader.join(timeout=5)


def test_contract_lines_wrap_at_a_word_on_a_terminal(snapshotted: Path):
    terminal = Terminal(snapshotted, columns=80)
    try:
        wait_until(lambda: "Ctrl-C to stop" in terminal.text(), message="the dev panel on the terminal")
        edit(snapshotted / "server.py", 'name="list-books"', 'name="list-picks"')
        wait_until(lambda: "chatgpt.com/plugins" in terminal.text(), message="the report of the rename")
        report = terminal.text().split("Ctrl-C to stop", 1)[1]
        lines = [line.rstrip() for line in report.splitlines() if line.strip()]
        assert all(len(line) <= terminal.columns for line in lines), "\n".join(lines)
        assert len(lines) > 6, "the long lines wrapped"
        # Put back together at the breaks, every sentence is whole: no line ended inside a word.
        words = " ".join(report.split())
        for whole in (
            "the release contract differs from appsdk.contract.json, the reviewed snapshot (what publishing "
            "this would do, as `appsdk check --against` says):",
            "breaking: tool `list-books` is gone, apparently renamed to `list-picks` → keep `list-books` (it may "
            "call the same code) next to `list-picks`",
            "needs review: tool `list-picks` is new → the published app does not offer it yet",
        ):
            assert whole in words, words
    finally:
        terminal.close()
