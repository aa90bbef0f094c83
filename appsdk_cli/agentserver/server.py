"""The MCP server around the tools: the SDK's low-level Server, on stdio or streamable HTTP (loopback only).

The low-level Server, not MCPServer's decorators: each tool's schemas and annotations are written out in
tools.py exactly as the agent sees them, and a result carries an image block beside its structured data.
Each call runs on a worker thread (the capabilities are synchronous, and Playwright's sync API refuses to
run inside an event loop); progress crosses back to the loop as notifications/progress.
"""

from __future__ import annotations

import base64
import hmac
import io
import json
import traceback
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server

from appsdk_cli import __version__
from appsdk_cli.agentserver.tools import BY_NAME, INSTRUCTIONS, TOOLS, Answer, ToolSpec, Workspace
from appsdk_cli.agentserver.untrusted import OwnWords, fenced, marked
from appsdk_cli.errors import AppsdkError


def build_server(root: Path, *, timeout: float = 30.0, space: Workspace | None = None) -> Server[Any]:
    """The server for one project: every path argument must resolve inside `root`. Pass `space` to close
    what it keeps (the screenshot browser) when the server ends."""
    space = space or Workspace(root.resolve(), timeout)
    listed = types.ListToolsResult(
        tools=[
            types.Tool.model_validate(
                {
                    "name": spec.name,
                    "title": spec.title,
                    "description": spec.description,
                    "inputSchema": spec.input_schema,
                    "outputSchema": spec.output_schema,
                    "annotations": spec.annotations(),
                }
            )
            for spec in TOOLS
        ]
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = BY_NAME.get(params.name)
        if spec is None:
            return _error(f"no tool {params.name!r}; the tools are {', '.join(BY_NAME)}")
        arguments = dict(params.arguments or {})
        problem = _argument_problem(spec.input_schema, arguments)
        if problem:
            return _error(f"{spec.name}: {problem}")

        def progress(done: float, total: float | None, message: str) -> None:
            anyio.from_thread.run(ctx.session.report_progress, done, total, message)

        try:
            answer = await anyio.to_thread.run_sync(spec.run, space, arguments, progress)
        except OwnWords as failure:
            return _error(failure.message)
        except AppsdkError as failure:
            if spec.server_data:  # the line may quote what the server sent (a tool name, its error text)
                return _untrusted_error(spec.name, failure.message)
            return _error(failure.message)
        except Exception as failure:  # a bug of ours: the one line the CLI prints for it, never a crash
            return _error(
                f"appsdk failed unexpectedly ({type(failure).__name__}: {failure}); report it",
                detail=traceback.format_exc(),
            )
        return _result(answer, spec)

    return Server(
        "appsdk",
        version=__version__,
        title="appsdk",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _argument_problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The first way the arguments miss the tool's inputSchema, as one line; None when they fit."""
    from appsdk_cli.schemawalk import Budget, bounded_validator

    # appsdk's own schemas, but through the one validator whose patterns run in linear time all the same.
    error = next(iter(bounded_validator(schema, Budget.for_validation()).iter_errors(arguments)), None)
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"argument {where}: {error.message}" if where else error.message


def _error(line: str, *, detail: str | None = None) -> types.CallToolResult:
    content: list[Any] = [types.TextContent(text=f"error: {line}")]
    if detail:
        content.append(types.TextContent(text=detail))
    return types.CallToolResult(content=content, is_error=True)


def _untrusted_error(tool: str, line: str) -> types.CallToolResult:
    text = fenced({"error": line}, heading=f"error: {tool} failed; appsdk's reason may quote the app's server")
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def _result(answer: Answer, spec: ToolSpec) -> types.CallToolResult:
    content: list[Any] = [
        types.ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime) for data, mime in answer.images
    ]
    if answer.error is not None:
        content.append(types.TextContent(text=f"error: {answer.error}"))
    structured = answer.structured
    if spec.server_data:
        structured = marked(structured, spec.server_data)
        fields = ", ".join(structured["untrustedFields"]) or "none of it"
        heading = f"appsdk: {spec.name}'s answer, the same JSON as its structuredContent (the server's: {fields})"
        content.append(types.TextContent(text=fenced(structured, heading=heading)))
    else:
        content.append(types.TextContent(text=json.dumps(structured, indent=2, default=str)))
    return types.CallToolResult(content=content, structured_content=structured, is_error=answer.error is not None)


async def _serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_stdio(root: Path, *, timeout: float = 30.0) -> None:
    """Serve on stdin/stdout until the client closes stdin, the SDK answering everything (front.py answers
    the handshake sooner; this is the plain way, for a caller that has its own streams claimed)."""
    space = Workspace(root.resolve(), timeout)
    try:
        anyio.run(_serve_stdio, build_server(root, space=space))
    finally:
        space.kept.close()


class _Incoming:
    """The lines front.py read (the initialize first), then the rest of the wire: what stdio_server reads."""

    def __init__(self, replay: list[bytes], incoming: BinaryIO) -> None:
        self._replay = replay
        self._incoming = incoming

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        for line in self._replay:
            yield line.decode("utf-8", "replace")
        # The same buffered reader front.py read from: whatever it buffered past its last line comes next.
        rest = anyio.wrap_file(io.TextIOWrapper(self._incoming, encoding="utf-8", errors="replace"))
        async for line in rest:
            yield line


class _Outgoing:
    """The wire out, less the SDK's answer to the replayed initialize (front.py answered it already)."""

    def __init__(self, outgoing: BinaryIO, answered: Any) -> None:
        self._outgoing = outgoing
        self._answered = answered
        self._dropping = answered is not None

    async def write(self, text: str) -> None:
        if self._dropping:
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("id") == self._answered and "method" not in message:
                self._dropping = False
                return
        self._outgoing.write(text.encode("utf-8"))

    async def flush(self) -> None:
        self._outgoing.flush()


async def _serve_wire(server: Server[Any], incoming: Any, outgoing: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server(incoming, outgoing) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_wire(
    root: Path, incoming: BinaryIO, outgoing: BinaryIO, replay: list[bytes], answered: Any, *, timeout: float = 30.0
) -> None:
    """Take over a stdio connection front.py began: `replay` the lines it read, drop the answer to the
    initialize it already `answered` (its id; None when it answered none), serve until stdin closes."""
    space = Workspace(root.resolve(), timeout)
    server = build_server(root, space=space)
    try:
        anyio.run(_serve_wire, server, _Incoming(replay, incoming), _Outgoing(outgoing, answered))
    finally:
        space.kept.close()


def http_app(root: Path, *, host: str, token: str, timeout: float = 30.0, space: Workspace | None = None) -> Any:
    """The streamable-HTTP ASGI app at /mcp, with DNS-rebinding protection (loopback Hosts and Origins only)
    behind a bearer token: loopback is every local user's, and these tools run the project's code."""
    from mcp.server.transport_security import TransportSecuritySettings

    from appsdk_cli.netloc import LOOPBACK_HOST_PATTERNS, LOOPBACK_ORIGIN_PATTERNS

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(LOOPBACK_HOST_PATTERNS),
        allowed_origins=list(LOOPBACK_ORIGIN_PATTERNS),
    )
    server = build_server(root, timeout=timeout, space=space)
    return _BearerOnly(server.streamable_http_app(host=host, transport_security=security), token)


class _BearerOnly:
    """Answers 401 to every HTTP request without `Authorization: Bearer TOKEN` (compared in constant time)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = [value for name, value in scope.get("headers", []) if name.lower() == b"authorization"]
            if len(given) != 1 or not hmac.compare_digest(given[0], self._expected):
                body = json.dumps(
                    {"error": "appsdk mcp needs its bearer token: `appsdk mcp --print-config codex --port PORT`"}
                ).encode()
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="appsdk mcp"'),
                ]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve_http(root: Path, *, host: str, port: int, token: str, timeout: float = 30.0) -> None:
    """Serve streamable HTTP at http://HOST:PORT/mcp until interrupted; HOST must be a loopback host, and
    every request must carry `token` (home.mcp_http_token)."""
    import uvicorn

    from appsdk_cli.netloc import is_loopback_host

    if not is_loopback_host(host):
        raise AppsdkError(f"appsdk mcp serves on loopback only; {host!r} is not a loopback host")
    space = Workspace(root.resolve(), timeout)
    app = http_app(root, host=host, token=token, space=space)
    try:
        uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
    finally:
        space.kept.close()
