"""`appsdk check --submission`: what the app directory's review and its "Scan Tools" step reject.

Everything `appsdk check` finds, plus the APPS9xx rules below, each citing the page it comes from. Where a
submission rule is the stricter twin of a base rule (all three annotation hints; a widget domain), the
base finding is replaced by the submission one rather than shown twice.

With a public https URL (`--url`), two more: the domain-verification token at
/.well-known/openai-apps-challenge, and redirects that stay https. "Public https" is a parameter of
`with_submission` (`acceptable`), so tests can run the same logic against a loopback server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from appsdk_cli.appmeta import OPENAI_CSP_KEYS, OPENAI_WIDGET_DOMAIN, UI_CSP_KEYS, tool_meta
from appsdk_cli.checks import csp as base_csp
from appsdk_cli.checks import tools as base_tools
from appsdk_cli.checks.model import CheckReport, Finding, Rule, Severity, resource_target, tool_target
from appsdk_cli.checks.widgets import widgets
from appsdk_cli.snapshot.model import Snapshot

if TYPE_CHECKING:
    from appsdk_cli.project import AppTarget

SUBMISSION_PAGE = "OpenAI Apps SDK, Deploy › Submit your app (developers.openai.com/apps-sdk/deploy/submission)"
SCAN_TOOLS = f'the submission form\'s "Scan Tools" step ({SUBMISSION_PAGE})'
GUIDELINES = "OpenAI Apps SDK, App submission guidelines (developers.openai.com/apps-sdk/app-submission-guidelines)"
SECURITY = "OpenAI Apps SDK, Security & privacy (developers.openai.com/apps-sdk/guides/security-privacy)"
REFERENCE = "OpenAI Apps SDK, Reference › tool _meta (developers.openai.com/apps-sdk/reference)"
CHALLENGE_PATH = "/.well-known/openai-apps-challenge"
TOOL_NAME_LIMIT = 64
MAX_REDIRECTS = 10

TOOL_NAME_TOO_LONG = Rule(
    "APPS901",
    "tool-name-too-long",
    Severity.ERROR,
    f"A tool name longer than {TOOL_NAME_LIMIT} characters",
    f"Rejected by {SCAN_TOOLS}",
)
TOOL_DESCRIPTION_MISSING = Rule(
    "APPS902",
    "tool-description-missing",
    Severity.ERROR,
    "A tool without a description",
    f"Rejected by {SCAN_TOOLS}; the model picks tools by their descriptions",
)
HINTS_REQUIRED = Rule(
    "APPS903",
    "annotation-hints-required",
    Severity.ERROR,
    "A tool without all three of `readOnlyHint`, `destructiveHint`, `openWorldHint` (replaces APPS302)",
    f"Rejected by {SCAN_TOOLS}, and a guideline: {GUIDELINES}",
)
DOMAIN_REQUIRED = Rule(
    "APPS904",
    "widget-domain-required",
    Severity.ERROR,
    "A widget without `ui.domain` / `openai/widgetDomain` (replaces APPS504)",
    f"Required for submission, the origin that identifies the app's widgets: {SUBMISSION_PAGE}",
)
DOMAIN_CONFLICT = Rule(
    "APPS905",
    "widget-domain-conflict",
    Severity.ERROR,
    "A widget whose `ui.domain` and `openai/widgetDomain` name different origins",
    f"Each widget resource has one origin; hosts read one key or the other: {SECURITY}",
)
CSP_WILDCARD = Rule(
    "APPS906",
    "csp-wildcard",
    Severity.ERROR,
    "A wildcard CSP entry (`*`, `https:`, `https://*.example.com`)",
    f"Review requires the exact origins a widget reaches: {SECURITY}",
)
FRAME_DOMAINS = Rule(
    "APPS907",
    "frame-domains-review",
    Severity.WARNING,
    "A widget that declares `frameDomains` / `frame_domains`",
    f"Allowed, but apps that embed frames get a stricter review: {SECURITY}",
)
INSTRUCTIONS_MISSING = Rule(
    "APPS908",
    "instructions-missing",
    Severity.ERROR,
    "A server whose initialize result has no `instructions`",
    f"Review reads them to judge how the model should use the app: {GUIDELINES}",
)
FILE_PARAMS_INVALID = Rule(
    "APPS909",
    "file-params-invalid",
    Severity.ERROR,
    "`openai/fileParams` that is not a list of top-level input properties of object type",
    f"ChatGPT fills each named property with a file object ({{download_url, file_id}}): {REFERENCE}",
)
CHALLENGE_MISSING = Rule(
    "APPS910",
    "domain-challenge-missing",
    Severity.ERROR,
    f"No domain-verification token at {CHALLENGE_PATH} (only checked with --url on a public https URL)",
    f"Submission verifies the domain with that token: {SUBMISSION_PAGE}",
)
REDIRECT_NOT_HTTPS = Rule(
    "APPS911",
    "redirect-not-https",
    Severity.ERROR,
    "A redirect from the /mcp URL or the challenge URL to a URL that is not public https",
    f"The MCP endpoint must be public https all the way: {SUBMISSION_PAGE}",
)
URL_NOT_CHECKED = Rule(
    "APPS912",
    "submission-url-not-checked",
    Severity.WARNING,
    "No public https URL given, so the domain-verification token and redirects were not checked",
    f"Submission needs a public https /mcp: {SUBMISSION_PAGE}",
)
DOMAIN_PLACEHOLDER = Rule(
    "APPS913",
    "widget-domain-placeholder",
    Severity.WARNING,
    "A widget domain still on a placeholder host (example.com, REPLACE-ME), as `appsdk new` writes it",
    f"The domain identifies the app and is verified at submission: {SUBMISSION_PAGE}",
)
RULES = (
    TOOL_NAME_TOO_LONG,
    TOOL_DESCRIPTION_MISSING,
    HINTS_REQUIRED,
    DOMAIN_REQUIRED,
    DOMAIN_CONFLICT,
    CSP_WILDCARD,
    FRAME_DOMAINS,
    INSTRUCTIONS_MISSING,
    FILE_PARAMS_INVALID,
    CHALLENGE_MISSING,
    REDIRECT_NOT_HTTPS,
    URL_NOT_CHECKED,
    DOMAIN_PLACEHOLDER,
)
# A base finding (value) the stricter submission finding (key) replaces for the same target.
SUPERSEDES = {HINTS_REQUIRED.id: base_tools.ANNOTATIONS_MISSING.id, DOMAIN_REQUIRED.id: base_csp.DOMAIN_MISSING.id}
_HINTS = (("readOnlyHint", "read_only"), ("destructiveHint", "destructive"), ("openWorldHint", "open_world"))


def is_placeholder_url(url: str) -> bool:
    """On a reserved example domain (RFC 2606) or marked REPLACE-ME: written by appsdk, never replaced."""
    host = (urlsplit(url if "//" in url else f"https://{url}").hostname or "").lower()
    reserved = any(host == h or host.endswith("." + h) for h in ("example.com", "example.org", "example.net"))
    return reserved or "replace-me" in url.lower()


def is_public_https(url: str) -> bool:
    """https, with a host name that is not loopback, private, link-local or a bare .local/.localhost name."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" or not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." in host and not host.endswith((".localhost", ".local", ".internal")) and host != "localhost"
    return address.is_global


def check(snapshot: Snapshot, app: AppTarget | None = None) -> Iterator[Finding]:
    """The submission rules that need only what the server sent (and, given the app's code, a fix names its line)."""
    for tool in snapshot.unique_tools():
        meta = tool_meta(tool)
        target = tool_target(meta.name)
        if len(meta.name) > TOOL_NAME_LIMIT:
            yield Finding(
                TOOL_NAME_TOO_LONG,
                target,
                f"{meta.name[:40]}…: the name is {len(meta.name)} characters, over {TOOL_NAME_LIMIT}",
                f"rename it to {TOOL_NAME_LIMIT} characters or fewer",
            )
        if not meta.description:
            yield Finding(
                TOOL_DESCRIPTION_MISSING,
                target,
                f"{meta.name}: has no description",
                "say what it does and when to use it (the function's docstring, or description=)",
            )
        missing = [key for key, field in _HINTS if getattr(meta, field) is None]
        if missing:
            yield Finding(
                HINTS_REQUIRED,
                target,
                f"{meta.name}: annotations lack {', '.join(missing)}",
                "declare all three: ToolAnnotations(read_only_hint=..., destructive_hint=..., open_world_hint=...)",
            )
        yield from _file_params(tool, meta.name)
    for widget in widgets(snapshot):
        target = resource_target(widget.uri)
        meta = widget.meta
        ui = meta.get("ui") if isinstance(meta.get("ui"), dict) else {}
        ui_domain, openai_domain = ui.get("domain"), meta.get(OPENAI_WIDGET_DOMAIN)
        if not ui_domain and not openai_domain:
            yield Finding(
                DOMAIN_REQUIRED,
                target,
                f"widget {widget.uri} declares no widget domain",
                base_csp.domain_fix(source)
                if (source := base_csp.widget_domain_source(app, widget.uri))
                else 'add "openai/widgetDomain": "https://your-app.example.com" to its _meta (and "ui": {"domain": …} '
                "in the format your other hosts expect)",
            )
        elif any(is_placeholder_url(str(d)) for d in (ui_domain, openai_domain) if d):
            yield Finding(
                DOMAIN_PLACEHOLDER,
                target,
                f"widget {widget.uri}: the widget domain {ui_domain or openai_domain} is a placeholder",
                "set it to your app's own https origin (WIDGET_DOMAIN in an appsdk scaffold's server.py)",
            )
        if ui_domain and openai_domain and str(ui_domain).rstrip("/") != str(openai_domain).rstrip("/"):
            yield Finding(
                DOMAIN_CONFLICT,
                target,
                f"widget {widget.uri}: ui.domain {ui_domain!r} and openai/widgetDomain {openai_domain!r} differ",
                "keep the app's https origin in openai/widgetDomain and leave ui.domain out (Claude derives its own)",
            )
        yield from _csp(widget.uri, meta, target)
    if snapshot.tools and not (snapshot.instructions or "").strip():
        yield Finding(
            INSTRUCTIONS_MISSING,
            "server",
            f"server {snapshot.server_name or snapshot.server} sends no instructions",
            'pass instructions="…" to MCPServer(...): what the app is for and how its tools fit together',
        )


def _csp(uri: str, meta: dict[str, Any], target: str) -> Iterator[Finding]:
    ui = meta.get("ui") if isinstance(meta.get("ui"), dict) else {}
    styles = (
        ("ui.csp", ui.get("csp"), UI_CSP_KEYS),
        ("openai/widgetCSP", meta.get("openai/widgetCSP"), OPENAI_CSP_KEYS),
    )
    wildcards: list[str] = []
    frames: list[str] = []
    for label, table, keys in styles:
        if not isinstance(table, dict):
            continue
        for kind, key in keys.items():
            values = table.get(key)
            if not isinstance(values, list):
                continue
            for value in values:
                text = str(value).strip()
                if "*" in text or text.endswith(":") or text in ("http://", "https://"):
                    wildcards.append(f"{label}.{key} {text!r}")
            if kind == "frame" and values:
                frames.append(f"{label}.{key}")
    if wildcards:
        yield Finding(
            CSP_WILDCARD,
            target,
            f"widget {uri}: wildcard CSP entries {', '.join(wildcards)}",
            "list each origin the widget really reaches, e.g. https://api.example.com",
        )
    if frames:
        yield Finding(
            FRAME_DOMAINS,
            target,
            f"widget {uri} declares {' and '.join(frames)}: embedding frames means a stricter review",
            "drop them if the widget can do without frames",
        )


def _file_params(tool: dict[str, Any], name: str) -> Iterator[Finding]:
    meta = tool.get("_meta") if isinstance(tool.get("_meta"), dict) else {}
    if "openai/fileParams" not in meta:
        return
    value = meta["openai/fileParams"]
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    problems: list[str] = []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        problems.append(f"it is {type(value).__name__}, not a list of property names")
    else:
        for item in value:
            prop = properties.get(item)
            if prop is None:
                problems.append(f"{item!r} is not a top-level input property")
            elif not isinstance(prop, dict) or prop.get("type") not in ("object", None) or "$ref" in prop:
                problems.append(f"{item!r} is not an object property")
    if problems:
        yield Finding(
            FILE_PARAMS_INVALID,
            tool_target(name),
            f"{name}: openai/fileParams: {'; '.join(problems)}",
            'name top-level object properties of the input, e.g. "openai/fileParams": ["file"] with '
            '"file": {"type": "object", "properties": {"download_url": …, "file_id": …}}',
        )


def _walk(
    method: str, url: str, acceptable: Callable[[str], bool], *, timeout: float, body: dict[str, Any] | None = None
) -> tuple[Any, list[str], str | None]:
    """Follow redirects by hand: (last response or None, the chain of URLs, the first hop that is not acceptable)."""
    from appsdk_cli.httpguard import httpx_client

    chain = [url]
    headers = {"Accept": "application/json, text/event-stream"} if body is not None else {}
    # Each hop judged here (acceptable), its answer read bounded like every document from a server.
    with httpx_client(timeout, follow_redirects=False, guard_redirects=False) as http:
        for _ in range(MAX_REDIRECTS):
            response = http.request(method, chain[-1], json=body, headers=headers)
            location = response.headers.get("location")
            if not response.is_redirect or not location:
                return response, chain, None
            following = urljoin(chain[-1], location)
            chain.append(following)
            if not acceptable(following):
                return response, chain, following
    return None, chain, None


def url_findings(url: str, *, acceptable: Callable[[str], bool], timeout: float) -> Iterator[Finding]:
    """The token at /.well-known/openai-apps-challenge and the redirects of both URLs."""
    import httpx

    from appsdk_cli.client import CLIENT_INFO, LATEST_HANDSHAKE_VERSION

    if not acceptable(url):
        yield Finding(
            URL_NOT_CHECKED,
            "server",
            f"{url} is not a public https URL, so the domain token and redirects were not checked",
            "run `appsdk check --submission --url https://…/mcp` against the public address (e.g. the tunnel's)",
        )
        return
    parts = urlsplit(url)
    challenge = f"{parts.scheme}://{parts.netloc}{CHALLENGE_PATH}"
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
    }
    for label, method, start, body in (("/mcp", "POST", url, initialize), ("challenge", "GET", challenge, None)):
        try:
            response, chain, bad = _walk(method, start, acceptable, timeout=timeout, body=body)
        except httpx.HTTPError as error:
            if label == "challenge":
                yield Finding(
                    CHALLENGE_MISSING,
                    "server",
                    f"{challenge} cannot be fetched: {str(error) or type(error).__name__}",
                    f"serve the token from the submission form as plain text at {CHALLENGE_PATH}",
                )
            continue  # /mcp itself unreachable: the base check already said so
        if bad:
            yield Finding(
                REDIRECT_NOT_HTTPS,
                "server",
                f"{label}: {' → '.join(chain)} leaves public https at {bad}",
                "redirect only to https URLs on public hosts, or serve the path directly",
            )
            continue
        if label == "challenge":
            text = response.text.strip() if response is not None else ""
            if response is None or response.status_code != 200 or not text:
                status = "too many redirects" if response is None else f"HTTP {response.status_code}"
                yield Finding(
                    CHALLENGE_MISSING,
                    "server",
                    f"{challenge} answers {status}" + ("" if text or response is None else " with no token"),
                    f"serve the token from the submission form as plain text at {CHALLENGE_PATH}",
                )


def with_submission(
    report: CheckReport,
    *,
    url: str | None,
    acceptable: Callable[[str], bool] = is_public_https,
    timeout: float = 30.0,
) -> CheckReport:
    """The base report plus the submission rules; stricter twins replace base findings."""
    extra = list(check(report.snapshot, report.app))
    if url:
        extra += url_findings(url, acceptable=acceptable, timeout=timeout)
    else:
        extra.append(
            Finding(
                URL_NOT_CHECKED,
                "server",
                "no public URL given, so the domain token and redirects were not checked",
                "add --url https://…/mcp (the public address, e.g. the tunnel's) to check them",
            )
        )
    replaced = {(SUPERSEDES[f.rule.id], f.target) for f in extra if f.rule.id in SUPERSEDES}
    kept = [f for f in report.findings if (f.rule.id, f.target) not in replaced]
    findings = kept + extra
    findings.sort(key=lambda f: (0 if f.severity is Severity.ERROR else 1, f.rule.id, f.target))
    return replace(report, findings=findings)
