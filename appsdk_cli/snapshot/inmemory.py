"""PATH mode, the child side: import the app, talk to it in memory with `mcp.Client`, write a Snapshot.

Runs in its own process (started by snapshot/local.py) so that the app's imports, globals, logging and
any crash stay out of appsdk, and no port is opened. The protocol with the parent:

- argv[1] is a JSON request: {project, module, attribute, target, result, progress, timeout, call_tools}.
- Before each step the child appends one line to the `progress` file ("importing server", "calling
  tool list-books"); the parent kills a child whose progress stalls longer than `timeout` and names
  that step.
- At the end the child writes the `result` file: {"ok": true, "snapshot": {...}} or
  {"ok": false, "error": "one line"} (an import failure: snapshot/loader.py's line, as `appsdk dev` says it).

stdout and stderr belong to the app (prints, logs); the parent keeps them only for --verbose.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

from appsdk_cli.mcpskills import declared
from appsdk_cli.safewrite import open_in_place, write_file
from appsdk_cli.snapshot.loader import TargetMissing, failure_line, first_line, import_server, leaf
from appsdk_cli.snapshot.model import Snapshot
from appsdk_cli.snapshot.plan import skill_file_uris, tools_to_call, uris_to_read


def _wire(model: Any) -> dict[str, Any]:
    """A result model as a server would have sent it: camelCase, no unset optionals."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


async def collect(
    server: Any, *, description: str, timeout: float, call_tools: bool, step: Callable[[str], None]
) -> Snapshot:
    import anyio
    import mcp_types as types
    from mcp import Client
    from mcp.client import advertise

    from appsdk_cli.appmeta import UI_EXTENSION, ui_client_capability, ui_extension

    # Offered as live mode's client offers it (a widget host), so a server that gates its widgets on it
    # shows them in both modes.
    offered = [advertise(UI_EXTENSION, ui_client_capability()[UI_EXTENSION])]

    async def bounded(label: str, work: Callable[[], Awaitable[Any]]) -> Any:
        step(label)
        with anyio.fail_after(timeout):
            return await work()

    # The 2025 handshake (mode="legacy") is what appsdk's own client speaks in live mode, so both modes
    # see the same shapes.
    async with Client(server, mode="legacy", extensions=offered) as client:
        info = client.server_info
        capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
        snapshot = Snapshot(
            mode="path",
            server=description,
            server_name=info.name if info else "",
            server_version=info.version if info else "",
            instructions=client.instructions,
            protocol_versions=[client.protocol_version],
            server_ui=ui_extension(capabilities),
        )
        for method, key, into in (
            (client.list_tools, "tools", snapshot.tools),
            (client.list_resources, "resources", snapshot.resources),
        ):
            cursor: str | None = None
            seen: set[str] = set()
            while True:
                page = await bounded(f"listing {key}", lambda m=method, c=cursor: m(cursor=c))
                into.extend(_wire(item) for item in getattr(page, key))
                cursor = page.next_cursor
                if not cursor or cursor in seen:
                    break
                seen.add(cursor)
        try:
            page = await bounded("listing resource templates", lambda: client.list_resource_templates())
            snapshot.resource_templates.extend(_wire(item) for item in page.resource_templates)
        except Exception:
            pass  # a server with no templates may not implement the method at all
        for uri in uris_to_read(snapshot.tools, snapshot.resources):
            try:
                result = await bounded(f"reading {uri}", lambda u=uri: client.read_resource(u))
                snapshot.reads[uri] = _wire(result)
            except Exception as error:
                snapshot.read_errors[uri] = f"resources/read failed: {str(error) or type(error).__name__}"
        capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        if declared(capabilities):
            await _collect_skills(client, snapshot, bounded)
        if call_tools:
            for name in tools_to_call(snapshot.tools):
                # The raw request, not client.call_tool: that one validates structuredContent itself
                # and would raise instead of showing us the output the rules must judge.
                request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments={}))
                started = time.monotonic()
                try:
                    result = await bounded(
                        f"calling tool {name}",
                        lambda r=request: client.session.send_request(r, types.CallToolResult),
                    )
                    snapshot.calls[name] = _wire(result)
                except Exception as error:
                    snapshot.call_errors[name] = f"tools/call failed: {str(error) or type(error).__name__}"
                finally:
                    snapshot.call_seconds[name] = time.monotonic() - started
    # The eras the app answers in process, as live mode probes them over HTTP, so both modes agree.
    from appsdk_cli.client.modern import MODERN_VERSION

    with contextlib.suppress(Exception):
        async with Client(server, mode=MODERN_VERSION, extensions=offered) as modern:
            await bounded("listing tools in 2026-07-28", lambda: modern.list_tools())
            snapshot.protocol_versions.append(MODERN_VERSION)
            if snapshot.server_ui is None:
                # The 2025-11-25 schema has no capabilities.extensions: a server declares it in server/discover.
                discovered = modern.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
                snapshot.server_ui = ui_extension(discovered)
    return snapshot


async def _collect_skills(client: Any, snapshot: Snapshot, bounded: Any) -> None:
    """As live mode does (snapshot/live.py): the listing, each listed skill by skills/get, each file."""
    import mcp_types as types
    from pydantic import TypeAdapter

    raw = TypeAdapter(dict[str, Any])

    async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        # Parametrised: the bare generic would read params as RequestParams and drop the `uri`.
        request = types.Request[dict[str, Any], str](method=method, params=params)
        return await bounded(f"asking {method}", lambda: client.session.send_request(request, raw))

    snapshot.skills_declared = True
    cursor: str | None = None
    seen: set[str] = set()
    try:
        while True:
            page = await ask("skills/list", {"cursor": cursor} if cursor else {})
            snapshot.skills.extend(page.get("skills") or [])
            cursor = page.get("nextCursor")
            if not cursor or cursor in seen:
                break
            seen.add(cursor)
    except Exception as error:
        snapshot.skills_error = f"skills/list failed: {str(error) or type(error).__name__}"
        return
    for entry in snapshot.skills:
        uri = str(entry.get("uri", "")) if isinstance(entry, dict) else ""
        if not uri:
            continue
        try:
            snapshot.skill_gets[uri] = await ask("skills/get", {"uri": uri})
        except Exception as error:
            snapshot.skill_get_errors[uri] = f"skills/get failed: {str(error) or type(error).__name__}"
        for file_uri in skill_file_uris(entry):
            try:
                result = await bounded(f"reading {file_uri}", lambda u=file_uri: client.read_resource(u))
                snapshot.skill_reads[file_uri] = _wire(result)
            except Exception as error:
                snapshot.skill_read_errors[file_uri] = f"resources/read failed: {str(error) or type(error).__name__}"


def run(request: dict[str, Any], progress: TextIO) -> dict[str, Any]:
    import anyio

    project = Path(request["project"]).resolve()
    module, attribute = request["module"], request["attribute"]

    steps: list[str] = []

    def step(text: str) -> None:
        steps.append(text)
        progress.write(text + "\n")
        progress.flush()

    # The app sees itself run from its own folder, importable as a top-level module.
    os.chdir(project)
    sys.argv = [str(project / f"{module.replace('.', '/')}.py")]
    step(f"importing {module}:{attribute}")
    try:
        server = import_server(project, module, attribute, request.get("target") or f"{module}:{attribute}")
    except TargetMissing as problem:
        return {"ok": False, "error": str(problem)}
    except (Exception, SystemExit) as problem:  # a broken app raises anything at import
        traceback.print_exc()  # into the child's log, shown with --verbose
        return {"ok": False, "error": failure_line(problem, project)}
    from mcp.server.mcpserver import MCPServer

    if isinstance(server, MCPServer):
        from appsdk_cli.snapshot.crashes import report_tool_crashes

        # As under appsdk dev: a crashed tool's result carries what it raised, for APPS404 to name.
        report_tool_crashes(server, project, lambda crash: None)
    try:
        snapshot = anyio.run(
            lambda: collect(
                server,
                description=f"{module}:{attribute} in {project}",
                timeout=float(request["timeout"]),
                call_tools=bool(request["call_tools"]),
                step=step,
            )
        )
    except Exception as error:
        traceback.print_exc()  # into the child's log, shown with --verbose
        cause = leaf(error)
        if isinstance(cause, TimeoutError):
            return {"ok": False, "error": f"{steps[-1]} did not finish within {request['timeout']:g} s"}
        return {"ok": False, "error": f"{steps[-1]} failed: {first_line(cause)}"}
    step("done")
    return {"ok": True, "snapshot": snapshot.as_json()}


def main() -> None:
    request = json.loads(sys.argv[1])
    progress_file = Path(request["progress"])
    appending = open_in_place(progress_file, os.O_WRONLY | os.O_APPEND, root=progress_file.parent)
    with os.fdopen(appending, "a", encoding="utf-8") as progress:
        try:
            outcome = run(request, progress)
        except Exception as error:
            outcome = {"ok": False, "error": f"checking the app in memory failed: {first_line(error)}"}
            traceback.print_exc()
    # Written whole and renamed into place, so the parent never reads half a result.
    result = Path(request["result"])
    write_file(result, json.dumps(outcome), root=result.parent, sync=False)
    sys.stdout.flush()
    sys.stderr.flush()
    # Stay alive until the parent has stopped every process the app started: while we live they are
    # our descendants, which the parent can find (an orphan would belong to init). EOF on the hold
    # pipe means the parent is done, or gone.
    hold = request.get("hold_fd")
    if isinstance(hold, int):
        with contextlib.suppress(OSError):
            os.read(hold, 1)
    # The app may have started threads (schedulers, clients) that would keep us alive.
    os._exit(0)


if __name__ == "__main__":
    main()
