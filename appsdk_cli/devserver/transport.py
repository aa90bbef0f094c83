"""Which MCP transport `appsdk dev` serves; its own module so the command line can name it without
loading the dev server's event types (every `appsdk` command imports the `dev` command's options)."""

from __future__ import annotations

from enum import StrEnum


class Transport(StrEnum):
    STREAMABLE_HTTP = "streamable-http"
    SSE = "sse"

    @property
    def path(self) -> str:
        return "/sse" if self is Transport.SSE else "/mcp"
