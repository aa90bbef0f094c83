"""`appsdk mcp` on stdio: the handshake answered at once, while the MCP SDK loads behind it.

An agent starts `appsdk mcp`, sends initialize, then tools/list, and waits for both before it goes on.
Importing the MCP SDK takes most of a second of CPU (its pydantic models for both protocol eras), so a
server that imports it first answers late. Yet those first answers are fixed: the server's info and the
tools' schemas (tools.py, which imports no SDK). So this front, with the standard library alone, answers
initialize, tools/list and ping while a thread imports the SDK; the first request it cannot answer (a
tool call, a modern-era request, anything unexpected) hands the connection to the SDK's server, which
first gets the initialize replayed, so its session is the one the client negotiated (its own answer to
that replay is not sent twice).

The front claims the standard streams as the SDK's stdio_server does: the wire moves to private
descriptors, fd 0 reads the null device and fd 1 goes to stderr, so a child process's stray output
never lands in the protocol.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, BinaryIO

from appsdk_cli import __version__
from appsdk_cli.agentserver.tools import INSTRUCTIONS, TOOLS

# The handshake versions the SDK's server negotiates (mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS; a
# test holds them equal). A client asking for another version is handed to the SDK, which answers it.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SERVER_INFO = {"name": "appsdk", "title": "appsdk", "version": __version__}


def initialize_result(version: str) -> dict[str, Any]:
    """What the SDK's server answers an initialize for `version` with (a test compares the two)."""
    return {
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": SERVER_INFO,
    }


def tools_result() -> dict[str, Any]:
    """tools/list as the SDK's server answers it (a test compares the two)."""
    return {
        "tools": [
            {
                "name": spec.name,
                "title": spec.title,
                "description": spec.description,
                "inputSchema": spec.input_schema,
                "outputSchema": spec.output_schema,
                "annotations": spec.annotations(),
            }
            for spec in TOOLS
        ]
    }


class _Wire:
    def __init__(self, incoming: BinaryIO, outgoing: BinaryIO) -> None:
        self.incoming = incoming
        self.outgoing = outgoing

    def send(self, message: dict[str, Any]) -> None:
        self.outgoing.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.outgoing.flush()


def _claim_stdio() -> _Wire:
    """The wire on private duplicates of fds 0 and 1; fd 0 then reads the null device, fd 1 writes to stderr."""
    private_in, private_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return _Wire(os.fdopen(private_in, "rb"), os.fdopen(private_out, "wb"))


def _answerable(message: Any, initialized: bool) -> str | None:
    """Which of the fixed answers this message gets ("initialize", "tools", "ping", "initialized" to keep
    for the SDK), or None: the SDK must answer it."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    method, has_id = message.get("method"), "id" in message
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    if not initialized:
        wanted = params.get("protocolVersion")
        return "initialize" if method == "initialize" and has_id and wanted in HANDSHAKE_VERSIONS else None
    if method == "notifications/initialized" and not has_id:
        return "initialized"
    if method == "tools/list" and has_id and not params.get("cursor"):
        return "tools"
    if method == "ping" and has_id:
        return "ping"
    return None


def serve(root: Path, *, timeout: float = 30.0) -> None:
    """Serve on stdin/stdout until the client closes stdin."""
    loaded: dict[str, Any] = {}

    def load() -> None:
        from appsdk_cli.agentserver import server

        loaded["server"] = server

    loader = threading.Thread(target=load, name="appsdk-mcp-sdk", daemon=True)
    loader.start()
    wire = _claim_stdio()
    replay: list[bytes] = []
    initialize_id: Any = None
    while True:
        line = wire.incoming.readline()
        if not line:
            return  # the client went away before asking anything only the SDK can answer
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        kind = _answerable(message, initialize_id is not None)
        if kind is None:
            replay.append(line)
            break
        if kind == "initialize":
            initialize_id = message["id"]
            replay.append(line)
            answer = initialize_result(message["params"]["protocolVersion"])
            wire.send({"jsonrpc": "2.0", "id": initialize_id, "result": answer})
        elif kind == "initialized":
            replay.append(line)
        elif kind == "tools":
            wire.send({"jsonrpc": "2.0", "id": message["id"], "result": tools_result()})
        else:
            wire.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
    loader.join()
    loaded["server"].serve_wire(root, wire.incoming, wire.outgoing, replay, initialize_id, timeout=timeout)


__all__ = ["HANDSHAKE_VERSIONS", "initialize_result", "serve", "tools_result"]
