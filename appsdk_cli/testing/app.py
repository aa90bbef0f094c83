"""The app under test: found as `appsdk dev`/`check` find it, started once, and talked to through connection.py.

    app = start_app(AppLocation.of(project, url=None, stdio=None))
    app.list_tools(); app.call_tool("list-books", {"month": "June"}); app.read_resource(uri)
    app.in_era("2025-06-18").call_tool(...)      # the same app, pinned to one protocol era

A URL or a stdio command is used as given; otherwise the project's app (`[tool.appsdk] app`) is served
over HTTP by a child of this process (appserver.py) for the whole test session, and stopped after it.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appsdk_cli.connection import Target, session
from appsdk_cli.errors import AppsdkError

START_TIMEOUT = 60.0


@dataclass(frozen=True)
class AppLocation:
    """Which app a test session means: a URL, a stdio command, or the project's own app."""

    project: Path
    url: str | None = None
    stdio: str | None = None

    @classmethod
    def of(cls, project: Path, *, url: str | None = None, stdio: str | None = None) -> AppLocation:
        url = url or os.environ.get("APPSDK_URL") or None
        if url and stdio:
            raise AppsdkError("give the app under test either a URL or a stdio command, not both")
        return cls(project, url, stdio)

    def describe(self) -> str:
        if self.url:
            return self.url
        if self.stdio:
            return f"`{self.stdio}` (stdio)"
        from appsdk_cli.project import app_target

        return f"{app_target(self.project).describe()} in {self.project}"


class App:
    """One MCP server to test: tools, resources and calls, each over a fresh session (as a host does)."""

    def __init__(self, target: Target, *, process: subprocess.Popen[str] | None = None) -> None:
        self.target = target
        self._process = process
        self._lock = threading.Lock()
        self._tools: list[dict[str, Any]] | None = None
        self._templates: dict[str, Any] = {}

    @property
    def url(self) -> str | None:
        return self.target.url

    def in_era(self, protocol: str) -> App:
        """The same server, spoken to in one protocol era ("2025-06-18", "2026-07-28", …; "auto" negotiates)."""
        from appsdk_cli.client.eras import PROTOCOL_CHOICES

        if protocol not in PROTOCOL_CHOICES:
            raise AppsdkError(f"unknown protocol era {protocol!r}; one of {', '.join(PROTOCOL_CHOICES)}")
        return App(dataclasses.replace(self.target, protocol=protocol))

    def list_tools(self) -> list[dict[str, Any]]:
        with session(self.target) as client:
            tools = [t for t in client.list_tools() if isinstance(t, dict)]
        with self._lock:
            self._tools = tools
        return tools

    def tools(self) -> list[dict[str, Any]]:
        """tools/list, asked once and kept (the rendered widgets' tool definitions)."""
        with self._lock:
            known = self._tools
        return known if known is not None else self.list_tools()

    def tool(self, name: str) -> dict[str, Any]:
        found = next((t for t in self.tools() if t.get("name") == name), None)
        if found is None:
            names = ", ".join(str(t.get("name")) for t in self.tools()) or "none"
            raise AppsdkError(f"the app has no tool {name!r} (its tools: {names})")
        return found

    def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The CallToolResult as on the wire (an isError result is returned, not raised)."""
        with session(self.target) as client:
            return client.call_tool(name, dict(arguments or {}), meta)

    def list_resources(self) -> list[dict[str, Any]]:
        with session(self.target) as client:
            return [r for r in client.list_resources() if isinstance(r, dict)]

    def read_resource(self, uri: str) -> dict[str, Any]:
        with session(self.target) as client:
            return client.read_resource(uri)

    def template(self, uri: str) -> Any:
        """The widget template at `uri` as the host reads it (host/session.py), read once per session."""
        from appsdk_cli.host.session import listing_meta, read_template

        with self._lock:
            known = self._templates.get(uri)
        if known is not None:
            return known
        with session(self.target) as client:
            template = read_template(self.target, uri, listing_meta(client, uri), client)
        with self._lock:
            self._templates[uri] = template
        return template

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None


def start_app(location: AppLocation) -> App:
    """The app, reachable: a given URL or stdio command as is, else the project's app served by a child."""
    if location.url:
        from appsdk_cli.project import check_server_url

        return App(Target(url=check_server_url(location.url), source="--url"))
    if location.stdio:
        return App(Target(stdio=location.stdio, source="--stdio"))
    return _serve_project(location.project)


def _serve_project(project: Path) -> App:
    import selectors
    import time

    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli.testing.appserver", str(project)],
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    watch = selectors.DefaultSelector()
    watch.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + START_TIMEOUT
    line = ""
    while time.monotonic() < deadline and watch.select(timeout=deadline - time.monotonic()):
        line = process.stdout.readline()
        if not line or line.startswith("listening "):
            break
    watch.close()
    if not line.startswith("listening "):
        if process.poll() is None:
            process.kill()
        process.wait()
        said = process.stderr.read().strip().splitlines()
        why = said[-1] if said else f"it did not start within {START_TIMEOUT:g} s"
        raise AppsdkError(f"the app under test could not be served: {why}")
    port = int(line.split()[1])
    # What the app prints later goes to the test session's stderr, so a tool's print() is still seen.
    threading.Thread(target=_relay, args=(process.stderr,), daemon=True).start()
    return App(Target(url=f"http://127.0.0.1:{port}/mcp", source="the test session"), process=process)


def _relay(stream: Any) -> None:
    for line in stream:
        sys.stderr.write(line)
