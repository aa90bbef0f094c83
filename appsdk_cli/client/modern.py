"""The 2026-07-28 wire: the per-request `_meta` envelope, the mirrored routing headers, `Mcp-Param-*`.

Every modern request says who is asking and at which version twice: in `params._meta` and in HTTP
headers that proxies can route on without reading the body. The server compares the two and refuses a
mismatch (-32020). Header values that would not survive an HTTP field (non-ASCII, control characters,
edge whitespace) travel base64-encoded inside the `=?base64?...?=` sentinel.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any

MODERN_VERSION = "2026-07-28"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"

# The modern JSON-RPC errors (each tells the client what to fix before it retries).
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
MODERN_ERRORS = (HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)

# Which param each method mirrors into Mcp-Name.
NAMED_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
PARAM_HEADER_PREFIX = "Mcp-Param-"
X_MCP_HEADER = "x-mcp-header"

_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")
_SENTINEL = re.compile(r"=\?base64\?.*\?=")
_FIELD_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an RFC 9110 token
_HEADER_TYPES = ("string", "integer", "boolean")  # `number` is excluded: float text is not portable


def header_value(text: str, *, always_encode: bool = False) -> str:
    """`text` as an HTTP field value: verbatim when it is safe, else in the base64 sentinel."""
    safe = _PRINTABLE_ASCII.fullmatch(text) and text == text.strip() and not _SENTINEL.fullmatch(text)
    if safe and not always_encode:
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def envelope(capabilities: dict[str, Any], client_info: dict[str, str]) -> dict[str, Any]:
    return {
        PROTOCOL_VERSION_META: MODERN_VERSION,
        CLIENT_INFO_META: client_info,
        CLIENT_CAPABILITIES_META: capabilities,
    }


def routing_headers(
    method: str,
    params: Mapping[str, Any] | None,
    *,
    param_headers: dict[str, str] | None = None,
    encode_all: bool = False,
) -> dict[str, str]:
    """The headers that mirror a request's body: version, method, name and the tool's Mcp-Param-*."""
    headers = {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": method}
    key = NAMED_PARAM.get(method)
    name = params.get(key) if key and params else None
    if isinstance(name, str):
        headers["Mcp-Name"] = header_value(name, always_encode=encode_all)
    for header, value in (param_headers or {}).items():
        headers[header] = value
    return headers


def _schema_positions(root: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every subschema of `root` with its path of `properties` keys (None once off that plain chain)."""
    single = ("items", "contains", "additionalProperties", "propertyNames", "not", "if", "then", "else")
    single += ("unevaluatedItems", "unevaluatedProperties", "contentSchema")
    lists = ("allOf", "anyOf", "oneOf", "prefixItems")
    maps = ("patternProperties", "dependentSchemas", "$defs", "definitions")
    pending: list[tuple[tuple[str, ...] | None, Any]] = [((), root)]
    while pending:
        path, node = pending.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                pending += [((*path, k) if path is not None else None, v) for k, v in value.items()]
            elif keyword in single:
                pending.append((None, value))
            elif keyword in lists and isinstance(value, list):
                pending += [(None, v) for v in value]
            elif keyword in maps and isinstance(value, dict):
                pending += [(None, v) for v in value.values()]


def invalid_header_annotation(input_schema: Any) -> str | None:
    """Why a tool's `x-mcp-header` annotations break the 2026-07-28 rules, or None if they do not.

    An annotation must sit on a property reached from the root through `properties` alone, name an
    RFC 9110 token, be on a string/integer/boolean property, and be unique (case-insensitively).
    """
    seen: dict[str, str] = {}
    for path, schema in _schema_positions(input_schema):
        if X_MCP_HEADER not in schema:
            continue
        if not path:
            return f"{X_MCP_HEADER} sits where no plain chain of `properties` reaches it"
        where = ".".join(path)
        token = schema[X_MCP_HEADER]
        if not isinstance(token, str) or not _FIELD_NAME.fullmatch(token):
            return f"property {where!r}: {X_MCP_HEADER} {token!r} is not a valid header name (an RFC 9110 token)"
        if schema.get("type") not in _HEADER_TYPES:
            return f"property {where!r}: {X_MCP_HEADER} is allowed on string, integer or boolean properties only"
        if token.lower() in seen:
            return f"property {where!r}: {X_MCP_HEADER} {token!r} repeats the one on {seen[token.lower()]!r}"
        seen[token.lower()] = where
    return None


def header_map(input_schema: Any) -> dict[tuple[str, ...], str]:
    """Argument path -> header token, for a schema `invalid_header_annotation` accepts."""
    return {
        path: schema[X_MCP_HEADER]
        for path, schema in _schema_positions(input_schema)
        if path and isinstance(schema.get(X_MCP_HEADER), str)
    }


def param_headers(
    mapping: dict[tuple[str, ...], str], arguments: Mapping[str, Any], *, encode_all: bool = False
) -> dict[str, str]:
    """The `Mcp-Param-<token>` headers for a tools/call's arguments (absent or null values send none)."""
    headers: dict[str, str] = {}
    for path, token in mapping.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is None or isinstance(value, (dict, list)):
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        headers[PARAM_HEADER_PREFIX + token] = header_value(text, always_encode=encode_all)
    return headers
