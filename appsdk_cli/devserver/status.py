"""What a running `appsdk dev` has seen, kept in .appsdk/status.json for whoever asks without a terminal.

A coding agent does not read dev's terminal. This file is dev's state as the renderer would show it, in
one JSON object: serving or not, the URL, the workbench, the last reload, the last import error and the
last tool crash (each with the file and line), rewritten atomically after every event that changes it.
`appsdk mcp`'s dev_status tool reads it; .appsdk/dev.json stays the lighter file that says where dev is.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from appsdk_cli.devserver import events
from appsdk_cli.project import STATE_DIR, DevState
from appsdk_cli.safewrite import write_file

STATUS_FILE = "status.json"
# `File "/…/server.py", line 12, in <module>`: the frames of a Python traceback.
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
# "SyntaxError: invalid syntax (server.py line 12)" or "(server.py:103 in picks_for)": the summary's place.
_SUMMARY_PLACE = re.compile(r"\(([^\s():]+\.py)(?: line |:)(\d+)")


def status_path(project: Path) -> Path:
    return project / STATE_DIR / STATUS_FILE


class StatusRecorder:
    """An observer in front of the session's own: it keeps the status file current, then passes each event on."""

    def __init__(self, project: Path, then: events.Observer) -> None:
        self.project = project
        self._then = then
        self._lock = threading.Lock()  # the tunnel's watcher reports from its own thread
        self._status: dict[str, Any] = {
            "running": False,
            "pid": os.getpid(),
            "url": None,
            "workbench": None,
            "publicUrl": None,
            "appOk": None,
            "tools": [],
            "startedAt": None,
            "lastReload": None,
            "lastImportError": None,
            "lastToolCrash": None,
            "updatedAt": None,
        }

    def __call__(self, event: events.DevEvent) -> None:
        with self._lock, contextlib.suppress(Exception):  # the status file never costs dev an event
            if self._record(event):
                self._write()
        self._then(event)

    def _record(self, event: events.DevEvent) -> bool:
        status = self._status
        if isinstance(event, events.Started):
            status |= {
                "running": True,
                "url": event.url,
                "workbench": event.workbench,
                "appOk": event.app_ok,
                "tools": list(event.tools),
                "startedAt": time.time(),
            }
        elif isinstance(event, events.Reloaded):
            status["appOk"] = event.app_ok
            status["lastReload"] = {
                "at": time.time(),
                "files": list(event.changed_files),
                "seconds": round(event.seconds, 3),
                "appOk": event.app_ok,
            }
            if event.tool_names is not None:
                status["tools"] = list(event.tool_names)
            if event.app_ok:
                status["lastImportError"] = None
        elif isinstance(event, events.NewCodeServing):
            status["lastToolCrash"] = None  # a crash of the code this save replaced is not the new code's
        elif isinstance(event, events.AppBroken):
            status["appOk"] = False
            status["tools"] = []
            status["lastToolCrash"] = None
            status["lastImportError"] = {"at": time.time(), "summary": event.summary, "hint": event.hint} | _place(
                event.summary, event.traceback, self.project
            )
        elif isinstance(event, events.ToolCrashed):
            crash: dict[str, Any] = {"at": time.time(), "tool": event.tool, "summary": event.summary}
            frames = [dict(zip(("file", "line", "function", "code"), frame, strict=True)) for frame in event.frames]
            innermost = frames[-1] if frames else _place(event.summary, "", self.project)
            crash |= {"file": innermost.get("file"), "line": innermost.get("line"), "frames": frames}
            status["lastToolCrash"] = crash
        elif isinstance(event, events.TunnelOpened | events.TunnelRestarted):
            status["publicUrl"] = event.endpoints.public_url
        elif isinstance(event, events.TunnelLost):
            status["publicUrl"] = None
        elif isinstance(event, events.Stopped):
            status["running"] = False
        else:
            return False
        status["updatedAt"] = time.time()
        return True

    def _write(self) -> None:
        write_file(status_path(self.project), json.dumps(self._status, indent=2) + "\n", root=self.project, sync=False)


def _place(summary: str, traceback: str, project: Path) -> dict[str, Any]:
    """The file and line an import error points at: the innermost traceback frame in the project, else the
    place the one-line summary names."""
    root = str(project.resolve())
    frames = [(file, int(line)) for file, line in _FRAME.findall(traceback)]
    mine = [(file, line) for file, line in frames if file.startswith(root)]
    if mine:
        file, line = mine[-1]
        return {"file": os.path.relpath(file, root), "line": line}
    found = _SUMMARY_PLACE.search(summary)
    if found:
        return {"file": found.group(1), "line": int(found.group(2))}
    return {"file": None, "line": None}


def read_status(project: Path, dev: DevState) -> dict[str, Any] | None:
    """What the running dev `dev` wrote to the status file; None when that file is someone else's.

    `dev` must come from project.read_dev_state, the one rule for trusting dev's state files: the
    project folder is anyone's to write, so a status.json counts only as the word of the dev proved to
    serve this project, and only when that dev's pid is the one in it."""
    try:
        value = json.loads(status_path(project).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("pid") != dev.pid or value.get("url") != dev.url:
        return None
    return value
