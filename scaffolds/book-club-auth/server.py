"""{{app_name}}: a ChatGPT app (Apps SDK / MCP Apps) that shows the book club's next picks to signed-in members.

The app has two halves: the `list-books` tool, which the model calls, and the book-list widget,
a small web page the host renders in a sandboxed frame and fills with the tool's structuredContent.
It is also an OAuth 2.1 resource server: every request needs a bearer token (see auth.py), `whoami`
says who signed in, and `suggest-book` needs the books:write permission.

Run it:   appsdk dev                (serves http://127.0.0.1:8000/mcp with a development sign-in server)
          python server.py          (PORT changes the port; OAUTH_ISSUER etc. name your identity provider)
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
from typing import Annotated, Any

import auth
from mcp.server.auth.settings import AuthSettings
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
    "Shows the book club's next reading picks to signed-in members and takes their suggestions. "
    "Call list-books for the picks, whoami for who is signed in, and suggest-book to propose a title."
)


class Book(BaseModel):
    title: str
    author: str


class BookPicks(BaseModel):
    """The structuredContent of list-books: what the widget renders and the model reads."""

    books: list[Book]


class SignedInMember(BaseModel):
    """The structuredContent of whoami."""

    subject: str
    scopes: list[str]
    client: str | None = None


class Suggestion(BaseModel):
    title: str
    author: str
    by: str


class Suggestions(BaseModel):
    """The structuredContent of suggest-book: every suggestion so far."""

    suggestions: list[Suggestion]


PICKS: list[dict[str, str]] = [
    {"title": "Frankenstein", "author": "Mary Shelley"},
    {"title": "Pride and Prejudice", "author": "Jane Austen"},
    {"title": "The Time Machine", "author": "H. G. Wells"},
]

OAUTH = auth.OAuthSettings.from_environment(port=int(os.environ.get("PORT", "8000")))
SUGGESTIONS: list[dict[str, str]] = []
# skills/: how a model uses this app's tools, served over MCP (skills/list, skills/get); see skills_mcp.py.
SKILLS = SkillsOverMcp(Path(__file__).parent / "skills")

mcp = MCPServer(
    name="{{app_name}}",
    version="0.1.0",
    instructions=INSTRUCTIONS,
    log_level="WARNING",
    extensions=[SKILLS],
    middleware=[SKILLS.keep_capability],
    # mcp answers a request without a valid token with 401 and
    # `WWW-Authenticate: Bearer resource_metadata=".../.well-known/oauth-protected-resource/mcp"`,
    # and serves that metadata, which names OAUTH_ISSUER as the authorization server.
    auth=AuthSettings(
        issuer_url=OAUTH.issuer,
        resource_server_url=OAUTH.resource,
        required_scopes=[auth.READ],
        validate_token_resource=False,  # JwtVerifier checks the audience itself
    ),
    token_verifier=auth.JwtVerifier(OAUTH),
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
        "securitySchemes": auth.security_schemes(auth.READ),
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


@mcp.tool(
    name="whoami",
    title="Who is signed in",
    description="Says which book club member is signed in, and what they allowed the app to do.",
    annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
    meta={"securitySchemes": auth.security_schemes(auth.READ)},
)
def whoami() -> Annotated[CallToolResult, SignedInMember]:
    token = auth.current_user()
    if token is None:
        return CallToolResult(content=[TextContent(type="text", text="Nobody is signed in.")], is_error=True)
    user = {"subject": token.subject, "scopes": token.scopes, "client": token.client_id}
    return CallToolResult(
        structured_content=user,
        content=[TextContent(type="text", text=f"Signed in as {token.subject} ({' '.join(token.scopes)}).")],
    )


@mcp.tool(
    name="suggest-book",
    title="Suggest a book",
    description="Suggests a book for a future meeting, in the signed-in member's name.",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    meta={"securitySchemes": auth.security_schemes(auth.WRITE)},
)
def suggest_book(
    title: Annotated[str, Field(description="The book's title.")],
    author: Annotated[str, Field(description="The book's author.")],
) -> Annotated[CallToolResult, Suggestions]:
    refused = auth.missing_scope(OAUTH, auth.WRITE)
    if refused is not None:
        return refused
    token = auth.current_user()
    assert token is not None  # missing_scope() returned None, so there is a token
    SUGGESTIONS.append({"title": title, "author": author, "by": str(token.subject)})
    return CallToolResult(
        structured_content={"suggestions": SUGGESTIONS},
        content=[TextContent(type="text", text=f"Noted: {title} by {author}, suggested by {token.subject}.")],
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
    parser = argparse.ArgumentParser(description=f"Serve {mcp.name} over MCP (streamable HTTP).")
    parser.add_argument("--stdio", action="store_true", help="refused: sign-in needs HTTP")
    if parser.parse_args().stdio:
        # Bearer tokens travel in HTTP headers; over stdio every caller would be anonymous.
        parser.error("this app signs users in over HTTP, and stdio carries no bearer token; run it without --stdio")
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
