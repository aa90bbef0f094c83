"""{{app_name}}: a ChatGPT app (Apps SDK / MCP Apps) that shows the book club's next picks.

The app has two halves: the `list-books` tool, which the model calls, and the book-list widget,
a small web page the host renders in a sandboxed frame and fills with the tool's structuredContent.

Run it:   python server.py          (serves http://127.0.0.1:8000/mcp; PORT changes the port)
          python server.py --stdio  (speaks MCP on stdin/stdout instead)
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field
from skills_mcp import SkillsOverMcp

WIDGET_URI = "ui://widget/book-list.html"
# text/html;profile=mcp-app is the MCP Apps standard type: ChatGPT and every standard host render it.
# text/html+skybridge is the original Apps SDK type, rendered by ChatGPT only.
WIDGET_MIME_TYPE = "{{widget_mime_type}}"
WIDGET_FILE = Path(__file__).parent / "widgets" / "book-list.html"

# Outside origins the widget may reach. The widget is self-contained, so both lists stay empty;
# add an origin here (in both key styles) before the widget fetches or loads anything from it.
CONNECT_DOMAINS: list[str] = []
RESOURCE_DOMAINS: list[str] = []
# The widget's own https origin, unique per app; ChatGPT needs it for directory submission. Your
# reserved tunnel domain will do, e.g. "https://books.ngrok.app".
WIDGET_DOMAIN = "{{widget_domain}}"
# What the model (and the directory's reviewers) read about the app as a whole.
INSTRUCTIONS = (
    "Shows the book club's next reading picks. "
    "Call list-books when the user asks what the club reads next; its widget shows the picks as cards."
)


class Book(BaseModel):
    title: str
    author: str


class BookPicks(BaseModel):
    """The structuredContent of list-books: what the widget renders and the model reads."""

    books: list[Book]


PICKS: list[dict[str, str]] = [
    {"title": "Frankenstein", "author": "Mary Shelley"},
    {"title": "Pride and Prejudice", "author": "Jane Austen"},
    {"title": "The Time Machine", "author": "H. G. Wells"},
]

# skills/: how a model uses this app's tools, served over MCP (skills/list, skills/get) for hosts that import
# skills, ChatGPT among them. skills_mcp.py serves them, with each file's sha256 so a host can verify them.
SKILLS = SkillsOverMcp(Path(__file__).parent / "skills")

mcp = MCPServer(
    name="{{app_name}}",
    version="0.1.0",
    instructions=INSTRUCTIONS,
    log_level="WARNING",
    extensions=[SKILLS],
    middleware=[SKILLS.keep_capability],
)


def widget_meta() -> dict[str, Any]:
    """The widget resource's _meta, in the MCP Apps keys and ChatGPT's own (hosts disagree on which they read)."""
    ui: dict[str, Any] = {
        "csp": {"connectDomains": CONNECT_DOMAINS, "resourceDomains": RESOURCE_DOMAINS},
        "prefersBorder": True,
    }
    meta: dict[str, Any] = {
        "ui": ui,
        "openai/widgetCSP": {"connect_domains": CONNECT_DOMAINS, "resource_domains": RESOURCE_DOMAINS},
        "openai/widgetPrefersBorder": True,
        "openai/widgetDescription": "Shows the book club's next three picks as a list of cards.",
    }
    if WIDGET_DOMAIN:
        # ChatGPT's key only: Claude renders no widget whose ui.domain is not the name it derives from the
        # connector's URL, and gives the widget an origin of its own when ui.domain is absent.
        meta["openai/widgetDomain"] = WIDGET_DOMAIN
    return meta


@mcp.resource(
    WIDGET_URI,
    name="book-list",
    title="Book club picks",
    description="A list of the book club's next reading picks.",
    mime_type=WIDGET_MIME_TYPE,
    meta=widget_meta(),
)
def book_list_widget() -> str:
    # Read on every request so an edited widget is served without a restart.
    return WIDGET_FILE.read_text(encoding="utf-8")


@mcp.tool(
    name="list-books",
    title="Show book club picks",
    description="Lists the book club's next three reading picks, with title and author.",
    annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
    meta={
        "ui": {"resourceUri": WIDGET_URI},
        "openai/outputTemplate": WIDGET_URI,
        "openai/toolInvocation/invoking": "Fetching the picks",
        "openai/toolInvocation/invoked": "Here are the picks",
    },
)
def list_books(
    month: Annotated[str | None, Field(description="The month to show picks for, e.g. June.")] = None,
) -> Annotated[CallToolResult, BookPicks]:
    """The picks, for the widget (structuredContent) and for a model that shows no widget (content)."""
    when = f" for {month}" if month else ""
    summary = "; ".join(f"{book['title']} by {book['author']}" for book in PICKS)
    widget_only: dict[str, Any] = {"month": month, "pickedBy": "{{app_name}}"}
    return CallToolResult(
        structured_content={"books": PICKS},
        content=[TextContent(type="text", text=f"The book club's next {len(PICKS)} picks{when}: {summary}.")],
        meta=widget_only,
    )


def transport_security() -> TransportSecuritySettings:
    """Only local Host and Origin headers pass: a foreign Host gets 421 (DNS-rebinding protection).

    Add your tunnel's hostname to ALLOWED_HOSTS (comma-separated) to serve through it.
    """
    extra_hosts = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h.strip()]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", *extra_hosts],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=f"Serve {mcp.name} over MCP.")
    parser.add_argument(
        "--stdio", action="store_true", help="speak MCP on stdin/stdout (for hosts that start the server themselves)"
    )
    if parser.parse_args().stdio:
        mcp.run("stdio")  # stdout carries the protocol, so nothing else may print there
        return
    port = int(os.environ.get("PORT", "8000"))
    print(f"{mcp.name} serving http://127.0.0.1:{port}/mcp", flush=True)
    # Ctrl-C stops the server; a traceback would say nothing more.
    with contextlib.suppress(KeyboardInterrupt):
        mcp.run(
            "streamable-http",
            host="127.0.0.1",
            port=port,
            stateless_http=True,
            json_response=True,
            transport_security=transport_security(),
        )


if __name__ == "__main__":
    main()
