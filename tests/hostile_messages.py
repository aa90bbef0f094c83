"""A hostile MCP server that answers tools/list with a message that never ends (issue 37, item 4).

Run as `python tests/hostile_messages.py PORT` for HTTP, or `python tests/hostile_messages.py --stdio`.
Everything but tools/list is answered honestly (tests/hostile.py's answers). tools/list, by path:

  POST /endless    a chunked JSON body that goes on until the client hangs up
  POST /lie        `Content-Length: 10 GB`, then the same endless body
  POST /sse        an event stream whose one `data:` line goes on until the client hangs up
  --stdio          one line on stdout that goes on until the client closes the pipe
  /legacy          POST is refused (405), so the client falls back to HTTP+SSE; the GET stream's
                   `endpoint` event then never ends
  POST /many       an honest list of MANY_TOOLS tools, about LIST_BYTES: well under the limit
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from hostile import Handler, result_for

PIECE = b"a" * (1024 * 1024)
CLAIMED_LENGTH = 10_000_000_000
MANY_TOOLS = 5000
MANY = [
    {
        "name": f"tool-{n}",
        "description": f"Tool {n} of a large app: " + "it does one thing, described at some length. " * 8,
        "inputSchema": {
            "type": "object",
            "properties": {name: {"type": "string", "description": f"The {name}."} for name in ("a", "b", "c")},
        },
        "annotations": {"readOnlyHint": True},
    }
    for n in range(MANY_TOOLS)
]
LIST_BYTES = len(json.dumps({"tools": MANY}))


def opening(request_id: object) -> bytes:
    """The start of a tools/list answer whose first tool's name never ends."""
    return b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode() + b', "result": {"tools": [{"name": "'


def flood(write: Callable[[bytes], object]) -> None:
    try:
        while True:
            write(PIECE)
    except (BrokenPipeError, ConnectionResetError, OSError):
        return  # the reader gave up: what it should do


class MessagesHandler(Handler):
    def do_GET(self) -> None:
        if urlsplit(self.path).path != "/legacy":
            self._reply(404, b"{}")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunked(data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        chunked(b"event: endpoint\ndata: /messages/?session_id=")
        flood(chunked)
        self.close_connection = True

    def do_POST(self) -> None:
        if urlsplit(self.path).path == "/legacy":
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._reply(405, b"")
            return
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if "id" not in message:
            self._reply(202, b"")
            return
        if message.get("method") != "tools/list":
            result = result_for(str(message.get("method")), message.get("params") or {})
            self._reply(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())
            return
        path = urlsplit(self.path).path
        if path == "/many":
            self._reply(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": MANY}}).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if path == "/sse" else "application/json")
        if path == "/lie":
            self.send_header("Content-Length", str(CLAIMED_LENGTH))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        start = (b"data: " if path == "/sse" else b"") + opening(message["id"])

        def chunked(data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        write = self.wfile.write if path == "/lie" else chunked
        write(start)
        flood(write)
        self.close_connection = True


def stdio() -> None:
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message.get("method") == "tools/list":
            sys.stdout.buffer.write(opening(message["id"]))
            flood(sys.stdout.buffer.write)
            return
        result = result_for(str(message.get("method")), message.get("params") or {})
        sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        sys.stdout.buffer.flush()


def main() -> None:
    if sys.argv[1] == "--stdio":
        stdio()
        return
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), MessagesHandler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
