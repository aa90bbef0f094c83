"""One MCP client for every appsdk capability: both protocol eras, every transport, by URL or stdio.

A lean JSON-RPC client on the standard library, not `mcp.Client`. Importing `mcp` costs about 0.7 s and
`mcp_types` alone about 0.2 s on our machines, while a whole `appsdk call` must finish within a few
tenths of a second (see benchmarks/call.py); `http.client` + `json` cost about 0.03 s. The shapes we
send and receive are still the mcp types': tests/test_client.py validates every message this client
puts on the wire, and every result it hands back, against the `mcp_types` models. Results are the wire
dicts (camelCase), untouched, so `--json` prints exactly what was sent; judging them is `appsdk check`'s job.

Split along the lines a reader looks for:
  http.py        errors, the event-stream parser, streamable HTTP (both eras' HTTP plumbing)
  legacy_sse.py  the deprecated 2024-11-05 HTTP+SSE transport
  stdio.py       a server started as a child process
  modern.py      the 2026-07-28 wire: the `_meta` envelope, mirrored headers, `Mcp-Param-*`
  eras.py        which eras exist, what --protocol accepts, the per-URL cache of what a server spoke
  session.py     McpClient: negotiation, requests, MRTR and elicitation, notifications; connect()
"""

from appsdk_cli.client.eras import (
    AUTO,
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    PROTOCOL_CHOICES,
    Era,
    EraCache,
)
from appsdk_cli.client.http import (
    CLIENT_INFO,
    DEFAULT_TIMEOUT,
    METHOD_NOT_FOUND,
    AuthRequired,
    ConnectError,
    HttpTransport,
    Message,
    ProtocolError,
    ServerDropped,
    SseEvent,
    Transport,
    parse_bearer_challenge,
    parse_sse,
)
from appsdk_cli.client.modern import MODERN_VERSION
from appsdk_cli.client.session import Elicitor, McpClient, NotificationSink, ServerInfo, Tracer, connect
from appsdk_cli.client.stdio import StdioTransport

__all__ = [
    "AUTO",
    "CLIENT_INFO",
    "DEFAULT_TIMEOUT",
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "METHOD_NOT_FOUND",
    "MODERN_VERSION",
    "PROTOCOL_CHOICES",
    "AuthRequired",
    "ConnectError",
    "Elicitor",
    "Era",
    "EraCache",
    "HttpTransport",
    "McpClient",
    "Message",
    "NotificationSink",
    "ProtocolError",
    "ServerDropped",
    "ServerInfo",
    "SseEvent",
    "StdioTransport",
    "Tracer",
    "Transport",
    "connect",
    "parse_bearer_challenge",
    "parse_sse",
]
