"""Stopping a child together with everything it started, and keeping only the end of its output.

A checked app may start helpers at import (a worker process, a `subprocess.Popen` it forgets) and may
print without end. Started in a session of its own, the child and its descendants share one process
group, which one killpg() ends; descendants that left the group (setsid) are found through /proc
before the child goes, while they are still its descendants.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path


def _parents() -> dict[int, list[int]]:
    """Each living process's children, by parent pid, from /proc (empty where there is no /proc)."""
    parents: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(parent, []).append(int(entry.name))
    return parents


def descendants(pid: int) -> list[int]:
    """Every living descendant of `pid`, from /proc (empty where there is no /proc)."""
    parents = _parents()
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def children(pid: int) -> list[int]:
    """The living processes `pid` started itself (not their own children), from /proc."""
    parents = _parents()
    return parents.get(pid, [])


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child, its process group and every descendant; reap the child. Safe to call twice."""
    strays = descendants(process.pid) if process.poll() is None else []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # the group outlives its leader: helpers the child left behind
    for pid in [process.pid, *strays]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    process.wait()


class TailReader:
    """Drains a pipe on a thread, keeping only its last `limit` bytes (and counting the rest)."""

    def __init__(self, pipe: int, limit: int = 64 * 1024) -> None:
        self._pipe = pipe
        self._limit = limit
        self._kept = bytearray()
        self.total = 0
        self._thread = threading.Thread(target=self._drain, name="child-output", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self._pipe, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.total += len(chunk)
            self._kept += chunk
            if len(self._kept) > 2 * self._limit:
                del self._kept[: len(self._kept) - self._limit]
        with contextlib.suppress(OSError):
            os.close(self._pipe)

    def text(self, timeout: float = 1.0) -> str:
        """The kept tail as text, once the writer has closed its end (or after `timeout`)."""
        self._thread.join(timeout)
        kept = bytes(self._kept[-self._limit :])
        dropped = self.total - len(kept)
        prefix = f"[{dropped} earlier bytes of output not kept]\n" if dropped > 0 else ""
        return prefix + kept.decode("utf-8", "replace")


# Past a command's --timeout, the time its own step timeouts get to say which step it was, in their words.
DEADLINE_GRACE_SECONDS = 2.0


@contextlib.contextmanager
def process_deadline(seconds: float, line: str) -> Iterator[None]:
    """End this whole process (exit 1) if the block is still running `seconds` from now.

    The backstop for what no step timeout reaches (a walk or a match that never yields to a socket):
    a timer thread writes `line` to stderr, kills every process this one started (and theirs), and
    exits at once. For a command's floor only: never around code that serves others (`appsdk mcp`)."""
    import sys
    import time

    ends_at = time.monotonic() + seconds
    done = threading.Event()

    def watch() -> None:
        while not done.wait(max(0.0, ends_at - time.monotonic())):
            if time.monotonic() >= ends_at:
                break
        if done.is_set():
            return
        for pid in descendants(os.getpid()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        os._exit(1)

    watcher = threading.Thread(target=watch, name="appsdk-deadline", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()


def listening_process(port: int) -> tuple[int, str] | None:
    """The pid and name (/proc/PID/comm) of a process of this user listening on TCP `port`, from /proc;
    None where there is no /proc, or the listener is another user's (its descriptors are not ours to read)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                # local address "0100007F:1F40", state 0A is LISTEN, the inode is the tenth field
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                    inodes.add(fields[9])
    if not inodes:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                for fd in (entry / "fd").iterdir():
                    with contextlib.suppress(OSError):
                        if os.readlink(fd) in wanted:
                            name = (entry / "comm").read_text(encoding="utf-8", errors="replace").strip()
                            return int(entry.name), name
    return None
