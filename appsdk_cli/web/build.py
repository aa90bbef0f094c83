"""`appsdk build` and the Vite side of `appsdk dev`, both through runner.mjs (the project's own Vite and tsc).

The runner speaks JSON lines (see runner.mjs); here they become results, one-line errors, and events
for the dev renderer. In dev the runner is a child we own: its own session (a Ctrl-C in the terminal
reaches appsdk only, which stops it), and its stdin is a pipe from us, so it ends itself the moment
appsdk is gone, however appsdk went.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appsdk_cli.errors import AppsdkError
from appsdk_cli.web.node import Node, require_installed
from appsdk_cli.web.types import TypesResult, write_types

RUNNER = Path(__file__).with_name("runner.mjs")
EVENT_PREFIX = "@@appsdk "
STOP_GRACE_SECONDS = 3.0


@dataclass(frozen=True)
class SourceError:
    """One error in the widget's sources, as the runner reports it."""

    file: str | None  # relative to web/
    line: int | None
    column: int | None
    message: str

    @classmethod
    def parse(cls, raw: Any) -> SourceError:
        raw = raw if isinstance(raw, dict) else {}
        line, column = raw.get("line"), raw.get("column")
        return cls(
            file=str(raw["file"]) if raw.get("file") else None,
            line=line if isinstance(line, int) else None,
            column=column if isinstance(column, int) else None,
            message=str(raw.get("message") or "unknown error"),
        )

    def where(self, prefix: str = "web/") -> str:
        if not self.file:
            return ""
        place = prefix + self.file
        if self.line is not None:
            place += f":{self.line}"
            if self.column is not None:
                place += f":{self.column}"
        return place

    def line_text(self, prefix: str = "web/") -> str:
        where = self.where(prefix)
        return f"{where}: {self.message}" if where else self.message


def errors_line(errors: list[SourceError]) -> str:
    first = errors[0].line_text()
    return first + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")


@dataclass(frozen=True)
class BuildResult:
    output: Path
    seconds: float
    size: int
    types: TypesResult | None


def generate_types(project: Path, web: Path, timeout: float = 60.0) -> TypesResult:
    """web/src/tools.gen.ts from the app's tools, read in memory in a child (as `appsdk check` does)."""
    from appsdk_cli.project import app_target
    from appsdk_cli.snapshot.local import collect_path

    snapshot = collect_path(app_target(project), timeout=timeout, call_tools=False)
    return write_types(web, snapshot.tools, project=project)


def build(project: Path, web: Path, *, types: bool = True) -> BuildResult:
    """appsdk types, then type-check and bundle web/ into web/dist/index.html; AppsdkError with file:line."""
    node = require_installed(web)
    started = time.monotonic()
    generated = generate_types(project, web) if types else None
    events: list[dict[str, Any]] = []
    try:
        done = subprocess.run(
            [node.node, str(RUNNER), "build"],
            cwd=web,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "NO_COLOR": "1"},
        )
    except subprocess.TimeoutExpired:
        raise AppsdkError(f"building {web} took more than 10 minutes") from None
    except OSError as problem:
        raise AppsdkError(f"cannot run {node.node}: {problem.strerror or problem}") from None
    output_lines: list[str] = []
    for line in done.stdout.splitlines():
        if line.startswith(EVENT_PREFIX):
            with contextlib.suppress(ValueError):
                events.append(json.loads(line[len(EVENT_PREFIX) :]))
        else:
            output_lines.append(line)
    detail = "\n".join(output_lines) + "\n" + done.stderr
    for event in events:
        if event.get("event") == "types" and not event.get("ok"):
            errors = [SourceError.parse(e) for e in event.get("errors") or []] or [SourceError.parse({})]
            raise AppsdkError(f"the widget does not type-check: {errors_line(errors)}", detail=detail)
        if event.get("event") == "build-error":
            error = SourceError.parse(event.get("error"))
            raise AppsdkError(f"the widget does not build: {error.line_text()}", detail=detail)
        if event.get("event") == "fatal":
            raise AppsdkError(str(event.get("message")), detail=detail)
    output = web / "dist" / "index.html"
    if done.returncode != 0 or not output.is_file():
        last = next((line for line in reversed(detail.splitlines()) if line.strip()), "no output")
        raise AppsdkError(f"building the widget failed: {last.strip()[:300]}", detail=detail)
    return BuildResult(output, time.monotonic() - started, output.stat().st_size, generated)


# --- dev ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WidgetEvent:
    """What the Vite side of `appsdk dev` did: kind is dev-server, built, build-error, types, changed, exited."""

    kind: str
    url: str | None = None
    seconds: float | None = None
    published: bool = False
    errors: tuple[SourceError, ...] = ()
    file: str | None = None
    message: str | None = None


class ViteDev:
    """The runner in dev mode: Vite's dev server, the type checker and the watching build, as one child.

    `allowed_origin` is a regular expression for the only origins Vite answers across origins (the view
    origin that shows this project's widget); without it Vite answers its own pages only. Vite's default
    would admit every loopback origin, so any widget the user previews could read the project.
    """

    def __init__(
        self,
        web: Path,
        on_event: Callable[[WidgetEvent], None],
        node: Node | None = None,
        *,
        allowed_origin: str | None = None,
    ) -> None:
        self.web = web
        self.allowed_origin = allowed_origin
        self._on_event = on_event
        self._node = node or require_installed(web)
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._url: str | None = None
        self._ready = threading.Event()
        self._stopping = False
        self._tail: list[str] = []

    @property
    def url(self) -> str | None:
        return self._url

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self, timeout: float = 60.0) -> str:
        """Start the child and wait for its dev server's URL."""
        self._process = subprocess.Popen(
            [self._node.node, str(RUNNER), "dev", *([self.allowed_origin] if self.allowed_origin else [])],
            cwd=self.web,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
        self._reader = threading.Thread(target=self._read, name="vite-dev", daemon=True)
        self._reader.start()
        if not self._ready.wait(timeout) or self._url is None:
            tail = " ".join(self._tail[-3:]).strip()
            self.close()
            raise AppsdkError(f"Vite did not start in {self.web}: {tail or 'no output'}")
        return self._url

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for raw in self._process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if not line.startswith(EVENT_PREFIX):
                if line.strip():
                    self._tail = [*self._tail[-20:], line]
                continue
            try:
                event = json.loads(line[len(EVENT_PREFIX) :])
            except ValueError:
                continue
            self._dispatch(event)
        self._ready.set()
        code = self._process.wait()
        if not self._stopping:
            tail = " ".join(self._tail[-3:]).strip()
            self._emit(WidgetEvent("exited", message=f"Vite exited with code {code}: {tail or 'no output'}"))

    def _dispatch(self, event: dict[str, Any]) -> None:
        kind = str(event.get("event"))
        if kind == "dev-server":
            self._url = str(event.get("url"))
            self._ready.set()
            self._emit(WidgetEvent(kind, url=self._url))
        elif kind == "built":
            ms = event.get("ms")
            self._emit(
                WidgetEvent(
                    kind,
                    seconds=ms / 1000 if isinstance(ms, int | float) else None,
                    published=bool(event.get("published")),
                    file=str(event.get("file") or "dist/index.html"),
                )
            )
        elif kind == "build-error":
            self._emit(WidgetEvent(kind, errors=(SourceError.parse(event.get("error")),)))
        elif kind == "types":
            errors = tuple(SourceError.parse(e) for e in event.get("errors") or [])
            self._emit(WidgetEvent(kind, errors=errors))
        elif kind == "changed":
            self._emit(WidgetEvent(kind, file=str(event.get("file"))))
        elif kind == "fatal":
            self._tail.append(str(event.get("message")))

    def _emit(self, event: WidgetEvent) -> None:
        # A renderer bug must not stop the reader (and so the widget's builds).
        with contextlib.suppress(Exception):
            self._on_event(event)

    def close(self) -> None:
        """Stop the child and everything it started; safe to call twice."""
        from appsdk_cli.proctree import kill_tree

        self._stopping = True
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_GRACE_SECONDS)
        kill_tree(process)  # whatever is left of the group
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        if self._reader is not None:
            self._reader.join(timeout=5)
