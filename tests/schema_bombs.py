"""A hostile MCP server on loopback whose tools carry schemas built to hang whoever walks them.

Run as `python tests/schema_bombs.py PORT`. It answers like tests/hostile.py's plain /mcp, but its tools
are:

  bomb      3 KB: 40 `$defs`, each an `anyOf` of two refs to the next, ending in a string; expanded
            naively that is 2^40 nodes (the input and the output schema alike)
  bomb-out  read-only, no arguments, the bomb as its outputSchema: `appsdk check` calls it and checks
            its answer (which fails the bomb's leaf, so a validator that does not stop walks every branch)
  wide      a tree of objects, 10 properties a level, 8 levels deep, all through one `$def` per level:
            10^8 fields for a form that draws every one
  tree      objects of two properties `a` and `b`, both refs to the next of 60 `$defs`: linear to type,
            but comparing it with another version of itself visits 2^60 places (check --against)
  deep      an honest tool: a pydantic-like model nested 30 `$defs` deep, one optional level each
            (Optional[...] as anyOf [ref, null]), and an integer `count`

Every call answers structuredContent {"q": 1} and says its arguments in its text.
"""

from __future__ import annotations

import json
import sys
from http.server import ThreadingHTTPServer

from hostile import Handler, result_for

LEVELS = 40


def bomb_schema(levels: int = LEVELS) -> dict:
    """40 `$defs`, each an anyOf of two refs to the next: tiny to send, 2^levels to expand."""
    defs: dict = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"q": {"$ref": "#/$defs/d0"}}, "required": ["q"], "$defs": defs}


def wide_schema(levels: int = 8, width: int = 10) -> dict:
    defs: dict = {}
    for level in range(levels):
        defs[f"l{level}"] = {
            "type": "object",
            "properties": {f"p{k}": {"$ref": f"#/$defs/l{level + 1}"} for k in range(width)},
        }
    defs[f"l{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/l0"}}, "$defs": defs}


def tree_schema(levels: int = 60, leaf: str = "string") -> dict:
    defs: dict = {
        f"t{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/t{i + 1}"}, "b": {"$ref": f"#/$defs/t{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"t{levels}"] = {"type": leaf}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/t0"}}, "$defs": defs}


def deep_schema(levels: int = 30) -> dict:
    defs: dict = {}
    for level in range(levels):
        defs[f"Level{level}"] = {
            "type": "object",
            "properties": {"next": {"anyOf": [{"$ref": f"#/$defs/Level{level + 1}"}, {"type": "null"}]}},
        }
    defs[f"Level{levels}"] = {"type": "object", "properties": {"leaf": {"type": "string"}}}
    return {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "description": "How many"},
            "tree": {"anyOf": [{"$ref": "#/$defs/Level0"}, {"type": "null"}], "default": None},
        },
        "required": ["count"],
        "$defs": defs,
    }


TOOLS = [
    {
        "name": "bomb",
        "description": "Looks harmless",
        "inputSchema": bomb_schema(),
        "outputSchema": bomb_schema(),
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "bomb-out",
        "description": "Answers a number where the bomb ends in a string",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": bomb_schema(),
        "annotations": {"readOnlyHint": True},
    },
    {"name": "wide", "description": "A very wide form", "inputSchema": wide_schema()},
    {"name": "tree", "description": "A binary tree of objects", "inputSchema": tree_schema()},
    {"name": "deep", "description": "An honest deep model", "inputSchema": deep_schema()},
]


class BombHandler(Handler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        message = json.loads(body or b"{}")
        if "id" not in message:
            self._reply(202, b"")
            return
        method, params = message.get("method", ""), message.get("params") or {}
        result = result_for(method, params)
        if method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            arguments = params.get("arguments") or {}
            text = json.dumps(arguments, sort_keys=True)
            result = {"content": [{"type": "text", "text": f"called with {text}"}], "structuredContent": {"q": 1}}
        self._reply(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), BombHandler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
