"""Sign-in (OAuth 2.1): what a tool declares, and what a protected server shows a host that is not signed in.

ChatGPT links an account by following the server's 401 challenge to its Protected Resource Metadata
(RFC 9728), then to the authorization server's metadata (RFC 8414), where it needs the code flow with
PKCE S256 and a way to be a client: a Client ID Metadata Document (its stable `client_id` is
https://chatgpt.com/oauth/client.json) or dynamic client registration. Codex also needs RFC 9207 `iss`.
The declaration rules run in both modes; the discovery rules need HTTP, so they run in live mode, from
the Snapshot's `auth` probe (see live.py); the step-up rule needs the calls a signed-in check made.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from appsdk_cli.checks.model import Finding, Rule, Severity, tool_target
from appsdk_cli.snapshot.model import Snapshot

SCHEME_TYPES = ("noauth", "oauth2")

SECURITY_SCHEMES_INVALID = Rule(
    "APPS701",
    "security-schemes-invalid",
    Severity.ERROR,
    "A tool's `securitySchemes` (or `_meta.securitySchemes`) that is not a list of `noauth` / `oauth2` "
    "entries, or an `oauth2` entry whose `scopes` is not a list of strings",
    "ChatGPT reads it to decide whether to link an account and for which scopes",
)
SECURITY_SCHEMES_MISMATCH = Rule(
    "APPS702",
    "security-schemes-mismatch",
    Severity.ERROR,
    "A tool whose top-level `securitySchemes` and `_meta.securitySchemes` differ",
    "Clients that keep the field and clients that only see `_meta` would ask for different sign-ins",
)
CHALLENGE_WITHOUT_METADATA = Rule(
    "APPS703",
    "auth-challenge-without-metadata",
    Severity.ERROR,
    'A 401 from the MCP endpoint without `WWW-Authenticate: Bearer resource_metadata="…"`',
    "The challenge is how ChatGPT finds the authorization server; without it the account cannot be linked",
)
RESOURCE_METADATA_INVALID = Rule(
    "APPS704",
    "resource-metadata-invalid",
    Severity.ERROR,
    "Protected Resource Metadata that cannot be read, names no authorization server, or whose `resource` "
    "is not the server's MCP URL",
    "ChatGPT binds the token to `resource` and signs in at `authorization_servers[0]`",
)
AUTHORIZATION_SERVER_INCOMPLETE = Rule(
    "APPS705",
    "authorization-server-incomplete",
    Severity.ERROR,
    "An authorization server whose metadata cannot be read, or that lacks the code flow, PKCE `S256`, or "
    "both client ID metadata documents and dynamic client registration",
    "ChatGPT signs in with the code flow and PKCE S256, as a metadata-document client (or by registering itself)",
)
SIGN_IN_REQUIRED = Rule(
    "APPS706",
    "tools-not-checked",
    Severity.WARNING,
    "A protected server checked without a token: its tools, widgets and outputs were not checked",
    "Only a signed-in client can list them",
)
NO_ISSUER_PARAMETER = Rule(
    "APPS707",
    "authorization-server-without-iss",
    Severity.WARNING,
    "An authorization server whose metadata lacks `authorization_response_iss_parameter_supported: true` (RFC 9207)",
    "Codex refuses an authorization response without `iss`; ChatGPT's stable callback needs RFC 9207 too",
)
ISSUER_MISMATCH = Rule(
    "APPS708",
    "authorization-server-issuer-mismatch",
    Severity.ERROR,
    "The resource metadata names an authorization server whose metadata gives another `issuer`",
    "Clients compare the two (RFC 8414 §3.3) and refuse to sign in: they cannot tell it from an impersonation",
)
STEP_UP_WITHOUT_CHALLENGE = Rule(
    "APPS709",
    "insufficient-scope-without-challenge",
    Severity.WARNING,
    "A protected tool that fails for want of scope without a `mcp/www_authenticate` challenge in its result's `_meta`",
    "ChatGPT asks the user to grant more only when the error result carries "
    '`Bearer error="insufficient_scope", scope="..."`',
)
RULES = (
    SECURITY_SCHEMES_INVALID,
    SECURITY_SCHEMES_MISMATCH,
    CHALLENGE_WITHOUT_METADATA,
    RESOURCE_METADATA_INVALID,
    AUTHORIZATION_SERVER_INCOMPLETE,
    SIGN_IN_REQUIRED,
    NO_ISSUER_PARAMETER,
    ISSUER_MISMATCH,
    STEP_UP_WITHOUT_CHALLENGE,
)
# Words an error says when it failed for want of sign-in or scope.
_SCOPE_WORDS = ("scope", "permission", "forbidden", "unauthori", "not authori", "sign in", "insufficient", "403")


def check(snapshot: Snapshot) -> Iterator[Finding]:
    yield from _declarations(snapshot)
    yield from _step_up(snapshot)
    if snapshot.auth:
        yield from _discovery(snapshot.auth)


def _protected(tool: dict[str, Any]) -> bool:
    meta = tool.get("_meta") if isinstance(tool.get("_meta"), dict) else {}
    schemes = tool.get("securitySchemes") or meta.get("securitySchemes")
    if not isinstance(schemes, list):
        return False
    kinds = {entry.get("type") for entry in schemes if isinstance(entry, dict)}
    return "oauth2" in kinds and "noauth" not in kinds


def _step_up(snapshot: Snapshot) -> Iterator[Finding]:
    for tool in snapshot.unique_tools():
        name = str(tool.get("name", ""))
        result = snapshot.calls.get(name)
        if not _protected(tool) or not isinstance(result, dict) or result.get("isError") is not True:
            continue
        meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
        if meta.get("mcp/www_authenticate"):
            continue
        blocks = [b for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
        text = " ".join(str(b.get("text", "")) for b in blocks).lower()
        if any(word in text for word in _SCOPE_WORDS):
            yield Finding(
                STEP_UP_WITHOUT_CHALLENGE,
                tool_target(name),
                f"{name}: failed for want of scope or sign-in ({text[:80].strip()!r}) without a mcp/www_authenticate "
                "challenge",
                'return the error with _meta {"mcp/www_authenticate": '
                '[\'Bearer error="insufficient_scope", scope="..."\']}',
            )


def _declarations(snapshot: Snapshot) -> Iterator[Finding]:
    for tool in snapshot.unique_tools():
        name = str(tool.get("name", ""))
        meta = tool.get("_meta") if isinstance(tool.get("_meta"), dict) else {}
        declared = {
            where: value
            for where, value in (
                ("securitySchemes", tool.get("securitySchemes")),
                ("_meta.securitySchemes", meta.get("securitySchemes")),
            )
            if value is not None
        }
        for where, value in declared.items():
            problem = _scheme_problem(value)
            if problem:
                yield Finding(
                    SECURITY_SCHEMES_INVALID,
                    tool_target(name),
                    f"{name}: {where} {problem}",
                    'declare e.g. [{"type": "oauth2", "scopes": ["books:read"]}], or [{"type": "noauth"}]',
                )
        if len(declared) == 2 and declared["securitySchemes"] != declared["_meta.securitySchemes"]:
            yield Finding(
                SECURITY_SCHEMES_MISMATCH,
                tool_target(name),
                f"{name}: securitySchemes and _meta.securitySchemes differ",
                "set both from one value",
            )


def _scheme_problem(value: Any) -> str | None:
    if not isinstance(value, list) or not value:
        return "is not a non-empty list"
    for entry in value:
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind not in SCHEME_TYPES:
            return f"has an entry of type {kind!r}; the types are {', '.join(SCHEME_TYPES)}"
        scopes = entry.get("scopes", [])
        if kind == "oauth2" and not (isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)):
            return "has an oauth2 entry whose scopes is not a list of strings"
    return None


def _discovery(auth: dict[str, Any]) -> Iterator[Finding]:
    """`auth` is live.py's probe: the unauthenticated answer and, for a 401, what it leads to."""
    if auth.get("status") != 401:
        return
    server = str(auth.get("url", ""))
    target = f"server {server}"
    if auth.get("signInRequired"):
        yield Finding(
            SIGN_IN_REQUIRED,
            target,
            f"{server} requires sign-in; its tools, widgets and outputs were not checked",
            "pass --token TOKEN, or sign in once with `appsdk call` (the token is cached) and check again",
        )
    if not auth.get("resourceMetadataUrl"):
        yield Finding(
            CHALLENGE_WITHOUT_METADATA,
            target,
            f"{server} answers 401 with WWW-Authenticate {auth.get('challenge') or '(none)'!r}, "
            "which names no resource_metadata",
            "configure the server as a resource server (mcp: AuthSettings(resource_server_url=..., issuer_url=...))",
        )
        return
    metadata = auth.get("resourceMetadata")
    where = auth["resourceMetadataUrl"]
    if not isinstance(metadata, dict):
        yield Finding(
            RESOURCE_METADATA_INVALID,
            target,
            f"the resource metadata at {where} cannot be read: {auth.get('resourceMetadataError')}",
            "serve it at the URL the challenge names, as JSON",
        )
        return
    servers = metadata.get("authorization_servers")
    if not (isinstance(servers, list) and servers and all(isinstance(s, str) for s in servers)):
        yield Finding(
            RESOURCE_METADATA_INVALID,
            target,
            f"the resource metadata at {where} names no authorization_servers",
            'add "authorization_servers": ["https://your-issuer.example"]',
        )
        return
    if str(metadata.get("resource", "")).rstrip("/") != server.rstrip("/"):
        yield Finding(
            RESOURCE_METADATA_INVALID,
            target,
            f"the resource metadata says resource {metadata.get('resource')!r}, but the server is {server}",
            "set resource_server_url to the MCP URL ChatGPT uses (the public one when tunnelled)",
        )
    issuer_metadata = auth.get("authorizationServerMetadata")
    issuer = servers[0]
    if not isinstance(issuer_metadata, dict):
        yield Finding(
            AUTHORIZATION_SERVER_INCOMPLETE,
            target,
            f"the authorization server {issuer} has no readable metadata: {auth.get('authorizationServerError')}",
            "serve RFC 8414 metadata at /.well-known/oauth-authorization-server (or OpenID configuration)",
        )
        return
    said = issuer_metadata.get("issuer")
    if not isinstance(said, str) or said.rstrip("/") != issuer.rstrip("/"):
        yield Finding(
            ISSUER_MISMATCH,
            target,
            f"the resource metadata names authorization server {issuer}, but its metadata says issuer {said!r}",
            "list in authorization_servers exactly the issuer the authorization server's metadata gives",
        )
    missing = []
    if "code" not in (issuer_metadata.get("response_types_supported") or []):
        missing.append('response type "code"')
    if "S256" not in (issuer_metadata.get("code_challenge_methods_supported") or []):
        missing.append("PKCE S256 (code_challenge_methods_supported)")
    if not issuer_metadata.get("registration_endpoint") and not issuer_metadata.get(
        "client_id_metadata_document_supported"
    ):
        missing.append(
            "a way for ChatGPT to be a client: client ID metadata documents (client_id_metadata_document_supported) "
            "or dynamic client registration (registration_endpoint)"
        )
    if missing:
        yield Finding(
            AUTHORIZATION_SERVER_INCOMPLETE,
            target,
            f"the authorization server {issuer} lacks {', '.join(missing)}",
            "enable them at the provider; ChatGPT signs in with code + PKCE S256 as a metadata-document client",
        )
    if issuer_metadata.get("authorization_response_iss_parameter_supported") is not True:
        yield Finding(
            NO_ISSUER_PARAMETER,
            target,
            f"the authorization server {issuer} does not say it sends iss in authorization responses (RFC 9207)",
            "enable RFC 9207 at the provider (authorization_response_iss_parameter_supported: true); Codex needs it",
        )
