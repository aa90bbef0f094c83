"""The host origin's routes: the host page, its API and its static files, as one route table.

GET  /                     the host page (host.html) under the host page's CSP
GET  /api/session          what the page needs to play the host for a run (?run=ID; none: the default run)
GET  /api/profiles         the host profiles and devices (profiles.py), for the host page and the workbench
GET  /api/widget           the widget document for the run and the page's settings, its CSP, its view token,
                           and whether the call was still pending when it was built
GET  /<path>               a file under the static folder (static.py): the page's scripts and styles
POST /api/call             a widget's tools/call or window.openai.callTool, forwarded to the real server;
                           202 {held} instead when the permission mode asks the user first (permissions.py)
POST /api/call/approve     {id} → the held call, now made → {result}
POST /api/call/deny        {id} → the held call dropped, never made
POST /api/read             a widget's resources/read
POST /api/forward          a view's resources/list or resources/templates/list, one page
POST /api/widget-state     the widget's state, kept here so a reload gets it back
POST /api/log              a line of the host log (the terminal prints it) → {message}, its place in the
                           widget's document named as its template's (place.py)
POST /api/files            {fileName, mimeType, data: base64} → the stored file (window.openai.uploadFile)
POST /api/files/url        {fileId} → {downloadUrl} (window.openai.getFileDownloadUrl)
POST /api/rerun            call the tool again with the same arguments → {result} ("Reload widget")

Every route is under the base handler's rules (handler.py): our own Host, our own Origin for a POST.
"""

from __future__ import annotations

import base64
import binascii
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from appsdk_cli.appmeta import Bridge, crash_hint, error_text, tool_crash, without_tool_crash
from appsdk_cli.host import files, profiles, widget
from appsdk_cli.host.handler import HttpError, Request, get, post
from appsdk_cli.host.origins import frame_ancestors
from appsdk_cli.host.place import in_template
from appsdk_cli.host.run import DEFAULT_RUN, LogEntry, UnknownRun
from appsdk_cli.host.session import PreviewSession, call_from_widget, forward_from_widget, read_from_widget
from appsdk_cli.host.state import HeldCall, HostState
from appsdk_cli.host.static import STATIC, send_static
from appsdk_cli.host.widget import permission_mode
from appsdk_cli.permissions import MODES, decide

if TYPE_CHECKING:
    from appsdk_cli.client import McpClient


def host_page_csp(host: HostState) -> str:
    """The host page may frame the sandbox proxy and nothing else; everything else is its own origin's.
    Only our own pages may frame it (the workbench frames a host page per profile)."""
    origins = host.origins
    return (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self';"
        f" connect-src 'self'; frame-src {origins.proxy_origin}; {frame_ancestors(origins)}"
    )


def host_page(request: Request) -> None:
    """The host page, for a server built on the host to serve under its own path (the workbench's /host)."""
    send_static(request, STATIC, "host.html", host_page_csp(request.host))


def call_arguments(host: HostState, session: PreviewSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A widget's call arguments as the server gets them: fileParams as file objects (ValueError: one line)."""
    if session.tool_definition.get("name") == name:
        definition: dict[str, Any] | None = session.tool_definition
    else:
        definition = next((t for t in session.tools if t.get("name") == name), None)
    return files.file_arguments(definition, arguments, host.files, host.origins.server_files_origin)


def _unknown_run(run_id: str) -> HttpError:
    what = f"no run {run_id!r} here" if run_id else "this server holds no default run; name one with ?run="
    return HttpError(HTTPStatus.NOT_FOUND, what)


def _run_id(request: Request) -> str:
    """The run a POST names: in the query string (the host page adds its own), or in the body."""
    body = request.body or {}
    return request.query.get("run") or (body.get("run") if isinstance(body.get("run"), str) else DEFAULT_RUN)


def _session(request: Request) -> PreviewSession:
    """The session of the run the request names; a run that is not here is the JSON 404 the host page shows."""
    run_id = _run_id(request)
    try:
        return request.host.view(run_id)[0]
    except UnknownRun:
        raise _unknown_run(run_id) from None


def _trace(request: Request) -> Any:
    """The trace hook for the MCP client of a widget's request (None when the host records no traffic): its
    records say the widget made the request."""
    trace_for = request.host.trace_for
    return trace_for(_run_id(request), caller="widget") if trace_for is not None else None


# --- GET -------------------------------------------------------------------------------------------------


def _page(request: Request) -> None:
    host_page(request)


def _session_json(request: Request) -> None:
    run_id = request.query.get("run", DEFAULT_RUN)
    try:
        request.json(HTTPStatus.OK, request.host.session_json(run_id))
    except UnknownRun:
        raise _unknown_run(run_id) from None


def _profiles(request: Request) -> None:
    request.json(HTTPStatus.OK, profiles.profiles_json())


def _favicon(request: Request) -> None:
    request.send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")


def _static(request: Request) -> None:
    # An HTML file under the folder is a host page too: it gets the host page's CSP.
    send_static(request, STATIC, request.params["name"], host_page_csp(request.host))


# --- POST ------------------------------------------------------------------------------------------------


def _tool_definition(session: PreviewSession, name: str) -> dict[str, Any]:
    """The tool as tools/list gave it (its annotations decide whether a call asks first); just its name when
    the listing lacks it, so MCP's defaults count it as a destructive write."""
    if session.tool_definition.get("name") == name:
        return session.tool_definition
    return next((t for t in session.tools if t.get("name") == name), {"name": name})


def _call(request: Request) -> None:
    session = _session(request)
    body = request.body or {}
    name = body.get("name")
    arguments = body.get("arguments") if isinstance(body.get("arguments"), dict) else {}
    if not isinstance(name, str):
        raise HttpError(HTTPStatus.BAD_REQUEST, "name must be a string")
    if body.get("bridge") not in tuple(Bridge):
        bridges = " or ".join(repr(b.value) for b in Bridge)
        raise HttpError(HTTPStatus.BAD_REQUEST, f"bridge must be {bridges}")
    bridge = Bridge(body["bridge"])
    decision = decide(permission_mode(body.get("permissions"), request.host), _tool_definition(session, name))
    # A call the widget may not make is refused at once (call_from_widget), never offered for approval.
    if decision.ask and name in session.widget_tools[bridge]:
        held = HeldCall(_run_id(request), name, arguments, bridge, decision)
        held_id = request.host.hold_call(held)
        answer = {"id": held_id, "tool": name, **decision.as_json()}
        request.json(HTTPStatus.ACCEPTED, {"held": answer})
        return
    _make_call(request, session, name, arguments, bridge)


def _approve_call(request: Request) -> None:
    session = _session(request)
    held = request.host.take_held_call(str((request.body or {}).get("id", "")), _run_id(request))
    if held is None:
        raise HttpError(HTTPStatus.NOT_FOUND, "no call of this run is waiting for approval under that id")
    _make_call(request, session, held.name, held.arguments, held.bridge)


def _deny_call(request: Request) -> None:
    _session(request)
    held = request.host.take_held_call(str((request.body or {}).get("id", "")), _run_id(request))
    if held is None:
        raise HttpError(HTTPStatus.NOT_FOUND, "no call of this run is waiting for approval under that id")
    label = MODES[held.decision.mode]
    request.json(HTTPStatus.OK, {"denied": True, "message": f"the user denied {held.name} ({label})"})


def _make_call(request: Request, session: PreviewSession, name: str, arguments: dict[str, Any], bridge: Bridge) -> None:
    try:
        arguments = call_arguments(request.host, session, name, arguments)
    except ValueError as problem:
        raise HttpError(HTTPStatus.BAD_REQUEST, str(problem)) from None
    try:
        result = call_from_widget(session, name, arguments, bridge, _trace(request))
    except PermissionError as refused:
        raise HttpError(HTTPStatus.FORBIDDEN, str(refused)) from None
    if result.get("isError") is True:
        hint = crash_hint(error_text(result), tool_crash(result))
        if hint:
            request.host.record(LogEntry("host", "warn", f"{name} failed: {hint}", _run_id(request)))
    # The widget gets what production would send it, without appsdk dev's crash report.
    request.json(HTTPStatus.OK, {"result": without_tool_crash(result)})


def _read(request: Request) -> None:
    session = _session(request)
    uri = (request.body or {}).get("uri")
    if not isinstance(uri, str):
        raise HttpError(HTTPStatus.BAD_REQUEST, "uri must be a string")
    request.json(HTTPStatus.OK, {"result": read_from_widget(session, uri, _trace(request))})


def _forward(request: Request) -> None:
    session = _session(request)
    body = request.body or {}
    method = body.get("method")
    params = body.get("params") if isinstance(body.get("params"), dict) else None
    if not isinstance(method, str):
        raise HttpError(HTTPStatus.BAD_REQUEST, "method must be a string")
    try:
        result = forward_from_widget(session, method, params, _trace(request))
    except PermissionError as refused:
        raise HttpError(HTTPStatus.FORBIDDEN, str(refused)) from None
    request.json(HTTPStatus.OK, {"result": result})


def _widget_state(request: Request) -> None:
    _session(request)
    request.host.set_widget_state((request.body or {}).get("state"), _run_id(request))
    request.json(HTTPStatus.OK, {})


def _log(request: Request) -> None:
    _session(request)
    body = request.body or {}
    level = body.get("level") if body.get("level") in ("info", "warn", "error") else "info"
    kind = str(body.get("kind", "host"))[:20]
    run_id = _run_id(request)
    # A line of the widget's document is named as its template's, here for every reader of the log: the
    # terminal, the workbench's panels and the page itself (which shows the line as answered).
    message = in_template(request.host, str(body.get("message", ""))[:4000], run_id)
    request.host.record(LogEntry(kind, level, message, run_id))
    request.json(HTTPStatus.OK, {"message": message})


def _upload(request: Request) -> None:
    host, body = request.host, request.body or {}
    name = body.get("fileName") if isinstance(body.get("fileName"), str) else "file"
    mime = body.get("mimeType") if isinstance(body.get("mimeType"), str) and body.get("mimeType") else None
    try:
        data = base64.b64decode(str(body.get("data", "")), validate=True)
        stored = host.files.add(name, data, mime)
    except (binascii.Error, ValueError) as problem:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"cannot store the file: {problem}") from None
    request.json(HTTPStatus.OK, stored.describe(files.download_url(host.origins.files_origin, stored.file_id)))


def _file_url(request: Request) -> None:
    host, body = request.host, request.body or {}
    stored = host.files.get(str(body.get("fileId", "")))
    if stored is None:
        raise HttpError(HTTPStatus.NOT_FOUND, f"no uploaded file {body.get('fileId')!r}")
    request.json(HTTPStatus.OK, {"downloadUrl": files.download_url(host.origins.files_origin, stored.file_id)})


def rerun(host: HostState, run_id: str) -> dict[str, Any]:
    """Call the previewed tool again with the same arguments (a fresh session: the server may have reloaded);
    the new result replaces the old, so the reloaded widget shows what the tool returns now."""
    from appsdk_cli.connection import signed_in, step_up

    run = host.run(run_id)
    preview, _ = host.view(run_id)
    name = preview.tool.name
    arguments = call_arguments(host, preview, name, preview.arguments)
    asked: set[str] = set()

    def work(client: McpClient) -> dict[str, Any]:
        result = client.call_tool(name, arguments)
        step_up(preview.target, name, result, asked)
        return result

    result = without_tool_crash(signed_in(preview.target, work))
    preview.result = run.result = result
    preview.pending = preview.deferred = False  # a call held for approval is made now
    return result


def _rerun(request: Request) -> None:
    run_id = request.query.get("run", "")
    try:
        result = rerun(request.host, run_id)
    except UnknownRun:
        raise HttpError(HTTPStatus.NOT_FOUND, f"no run {request.query.get('run')!r} here") from None
    except ValueError as problem:
        raise HttpError(HTTPStatus.BAD_REQUEST, str(problem)) from None
    request.json(HTTPStatus.OK, {"result": result})


ROUTES = (
    get("/", _page),
    get("/api/session", _session_json),
    get("/api/profiles", _profiles),
    get("/api/widget", widget.document_for_page),
    get("/favicon.ico", _favicon),
    get("/{name:path}", _static),
    post("/api/files", _upload),
    post("/api/files/url", _file_url),
    post("/api/rerun", _rerun),
    post("/api/call", _call),
    post("/api/call/approve", _approve_call),
    post("/api/call/deny", _deny_call),
    post("/api/read", _read),
    post("/api/forward", _forward),
    post("/api/widget-state", _widget_state),
    post("/api/log", _log),
)
