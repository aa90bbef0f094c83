"""The host API's routes, kept out of server.py so the server calls each in one line.

GET  /api/profiles         the host profiles and devices (profiles.py), for host.js and the workbench
GET  /files/<id>           a stored file's bytes: the download URL window.openai hands out (CORS: the widget)
POST /api/files            {fileName, mimeType, data: base64} → the stored file (window.openai.uploadFile)
POST /api/files/url        {fileId} → {downloadUrl} (window.openai.getFileDownloadUrl)
POST /api/rerun            call the tool again with the same arguments → {result} ("Reload widget")

plus `widget_extras()`, which the widget document's config and CSP go through (device globals, the
approval hold, the profile's CDN allowance and the file store's source), and `call_arguments()`, which
turns `openai/fileParams` arguments into file objects on the widget's call path.
"""

from __future__ import annotations

import base64
import binascii
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from appsdk_cli.errors import AppsdkError
from appsdk_cli.host import files, profiles
from appsdk_cli.host.csp import HostCsp

if TYPE_CHECKING:
    from appsdk_cli.host.server import HostServer
    from appsdk_cli.host.session import PreviewSession


def _tool_definition(session: PreviewSession, name: str) -> dict[str, Any] | None:
    if session.tool_definition.get("name") == name:
        return session.tool_definition
    return next((t for t in session.tools if t.get("name") == name), None)


def call_arguments(server: HostServer, session: PreviewSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A widget's call arguments as the server gets them: fileParams as file objects (ValueError: one line)."""
    return files.file_arguments(_tool_definition(session, name), arguments, server.files, server.host_origin)


def rerun(server: HostServer, run_id: str) -> dict[str, Any]:
    """Call the previewed tool again with the same arguments (a fresh session: the server may have reloaded);
    the new result replaces the old, so the reloaded widget shows what the tool returns now."""
    from appsdk_cli.appmeta import without_tool_crash
    from appsdk_cli.remote import session as mcp_session

    run = server.run(run_id)
    preview = run.session
    assert preview is not None  # server.run() returns only runs with a widget
    arguments = call_arguments(server, preview, preview.tool.name, preview.arguments)
    with mcp_session(preview.target) as client:
        result = without_tool_crash(client.call_tool(preview.tool.name, arguments))
    preview.result = run.result = result
    return result


def widget_extras(server: HostServer, query: dict[str, str], config: dict[str, Any], csp: HostCsp) -> str:
    """Complete the widget document's bootstrap config for the profile and device, and return its CSP."""
    config["globals"].update(profiles.widget_globals(query))
    config["approval"] = query.get("approval") == "1"
    if config["approval"]:
        # A tool that needs approval gets its input only once approved: nothing of the call until then.
        config["globals"].update(toolInput=None, toolOutput=None, toolResponseMetadata=None)
    config["escapeExits"] = True
    return profiles.widget_csp(csp, query, files.files_source(server.host_origin))


def handle_get(handler: Any, path: str, query: dict[str, str]) -> bool:
    """Serve one of the host API's GET routes; False when `path` is not one of them."""
    server: HostServer = handler.server.preview
    if path == "/api/profiles":
        handler._json(HTTPStatus.OK, profiles.profiles_json())
        return True
    if path.startswith("/files/"):
        stored = server.files.get(path[len("/files/") :])
        if stored is None:
            handler._text(HTTPStatus.NOT_FOUND, "no such file (the preview keeps files only while it runs)")
            return True
        try:
            body = stored.path.read_bytes()
        except OSError:
            handler._text(HTTPStatus.GONE, "the file is gone")
            return True
        quoted = stored.file_name.replace("\\", "_").replace('"', "_")
        headers = {
            # The widget fetches its files from its own origin: only that origin may read them.
            "Access-Control-Allow-Origin": server.widget_origin,
            "Content-Disposition": f'inline; filename="{quoted}"',
            "Cross-Origin-Resource-Policy": "cross-origin",
        }
        handler._send(HTTPStatus.OK, body, stored.mime_type, headers)
        return True
    return False


def handle_post(handler: Any, path: str, query: dict[str, str], body: dict[str, Any]) -> bool:
    """Answer one of the host API's POST routes; False when `path` is not one of them."""
    server: HostServer = handler.server.preview
    if path == "/api/files":
        name = body.get("fileName") if isinstance(body.get("fileName"), str) else "file"
        mime = body.get("mimeType") if isinstance(body.get("mimeType"), str) and body.get("mimeType") else None
        try:
            data = base64.b64decode(str(body.get("data", "")), validate=True)
            stored = server.files.add(name, data, mime)
        except (binascii.Error, ValueError) as problem:
            handler._json(HTTPStatus.BAD_REQUEST, {"error": {"message": f"cannot store the file: {problem}"}})
            return True
        handler._json(HTTPStatus.OK, stored.describe(files.download_url(server.host_origin, stored.file_id)))
        return True
    if path == "/api/files/url":
        stored = server.files.get(str(body.get("fileId", "")))
        if stored is None:
            handler._json(HTTPStatus.NOT_FOUND, {"error": {"message": f"no uploaded file {body.get('fileId')!r}"}})
            return True
        handler._json(HTTPStatus.OK, {"downloadUrl": files.download_url(server.host_origin, stored.file_id)})
        return True
    if path == "/api/rerun":
        from appsdk_cli.host.run import UnknownRun

        try:
            result = rerun(server, query.get("run", ""))
        except UnknownRun:
            handler._json(HTTPStatus.NOT_FOUND, {"error": {"message": f"no run {query.get('run')!r} here"}})
            return True
        except ValueError as problem:
            handler._json(HTTPStatus.BAD_REQUEST, {"error": {"message": str(problem)}})
            return True
        except AppsdkError as problem:
            handler._json(HTTPStatus.BAD_GATEWAY, {"error": {"message": problem.message}})
            return True
        handler._json(HTTPStatus.OK, {"result": result})
        return True
    return False
