"""A widget's sandbox: CSP and domain in the right place and both key styles, and HTML that stays inside it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.appmeta import (
    OPENAI_CSP_KEYS,
    OPENAI_WIDGET_DOMAIN,
    UI_CSP_KEYS,
    WidgetCsp,
    claude_domain_problem,
    misplaced_widget_keys,
    widget_csp,
)
from appsdk_cli.checks.htmlscan import allowed_by as origin_allowed
from appsdk_cli.checks.htmlscan import outside_loads
from appsdk_cli.checks.model import Finding, Rule, Severity, resource_target, tool_target
from appsdk_cli.checks.widgets import widgets
from appsdk_cli.netloc import is_this_machine, public_https_url
from appsdk_cli.snapshot.model import Snapshot

if TYPE_CHECKING:
    from appsdk_cli.project import AppTarget

CSP_ON_TOOL = Rule(
    "APPS501",
    "csp-on-tool",
    Severity.ERROR,
    "CSP or widget domain (`ui.csp`, `ui.domain`, `openai/widgetCSP`, `openai/widgetDomain`) set on a tool",
    "Hosts read them from the widget resource only; on the tool they are ignored",
)
CSP_ONE_STYLE = Rule(
    "APPS502",
    "csp-one-key-style",
    Severity.WARNING,
    "A widget's CSP in only one of `ui.csp` and `openai/widgetCSP`",
    "Hosts disagree on which key they read; declare both",
)
CSP_STYLES_DIFFER = Rule(
    "APPS503",
    "csp-key-styles-differ",
    Severity.WARNING,
    "`ui.csp` and `openai/widgetCSP` list different origins",
    "The widget would work in one host and break in another",
)
DOMAIN_MISSING = Rule(
    "APPS504",
    "widget-domain-missing",
    Severity.WARNING,
    "A widget without `ui.domain` / `openai/widgetDomain`",
    "Required (and unique per app) for directory submission; a development server may omit it",
)
ORIGIN_NOT_IN_CSP = Rule(
    "APPS505",
    "origin-not-in-csp",
    Severity.ERROR,
    "Widget HTML that loads scripts, styles, images, frames or fetches from an origin its CSP does not list "
    "(with no CSP at all, every outside origin)",
    "The host's sandbox blocks the request; the widget breaks",
)
DOMAIN_NOT_HTTPS = Rule(
    "APPS506",
    "widget-domain-not-https",
    Severity.WARNING,
    "A widget domain that is not an https origin (`openai/widgetDomain`) or host name (`ui.domain`): "
    "`http://`, a path, or a loopback name such as `http://localhost:3000`",
    "The domain identifies the app's widget origin to the host and in directory review; a local or "
    "plain-http URL is refused there",
)
DOMAIN_NOT_CLAUDES = Rule(
    "APPS507",
    "ui-domain-not-claudes",
    Severity.WARNING,
    "A `ui.domain` Claude does not accept: Claude takes only sha256 of the connector URL (first 32 hex "
    "digits) + `.claudemcpcontent.com`, or no `ui.domain` at all",
    "With any other value Claude renders no widget at all, where ChatGPT reads an https origin of the app's "
    "own (measured: github.com/modelcontextprotocol/ext-apps/pull/735)",
)
RULES = (
    CSP_ON_TOOL,
    CSP_ONE_STYLE,
    CSP_STYLES_DIFFER,
    DOMAIN_MISSING,
    ORIGIN_NOT_IN_CSP,
    DOMAIN_NOT_HTTPS,
    DOMAIN_NOT_CLAUDES,
)

# Kinds both key styles share, so their lists can be compared.
_SHARED_KINDS = ("connect", "resource", "frame")


def check(snapshot: Snapshot) -> Iterator[Finding]:
    for tool in snapshot.unique_tools():
        misplaced = misplaced_widget_keys(tool)
        if misplaced:
            name = str(tool.get("name"))
            yield Finding(
                CSP_ON_TOOL,
                tool_target(name),
                f"{name}: {', '.join(misplaced)} set on the tool, where hosts ignore it",
                "move it to the _meta of the widget resource (meta= on @mcp.resource)",
            )
    for widget in widgets(snapshot):
        target = resource_target(widget.uri)
        meta = widget.meta
        csp = widget_csp(meta)
        if (csp.ui is None) != (csp.openai is None):
            present, absent = ("ui.csp", "openai/widgetCSP") if csp.ui is not None else ("openai/widgetCSP", "ui.csp")
            yield Finding(
                CSP_ONE_STYLE,
                target,
                f"widget {widget.uri} declares its CSP in {present} only",
                f"declare the same origins in {absent} too",
            )
        elif csp.ui is not None and csp.openai is not None:
            differ = [
                f"{UI_CSP_KEYS[kind]}/{OPENAI_CSP_KEYS[kind]}"
                for kind in _SHARED_KINDS
                if set(csp.ui.get(kind, ())) != set(csp.openai.get(kind, ()))
            ]
            if differ:
                yield Finding(
                    CSP_STYLES_DIFFER,
                    target,
                    f"widget {widget.uri}: ui.csp and openai/widgetCSP differ in {', '.join(differ)}",
                    "list the same origins in both key styles",
                )
        ui = meta.get("ui") if isinstance(meta.get("ui"), dict) else {}
        if not ui.get("domain") and not meta.get(OPENAI_WIDGET_DOMAIN):
            yield Finding(
                DOMAIN_MISSING,
                target,
                f"widget {widget.uri} declares no widget domain (needed for directory submission)",
                domain_fix(None),
            )
        for key, value, bare_host_ok in (
            ("ui.domain", ui.get("domain"), True),
            (OPENAI_WIDGET_DOMAIN, meta.get(OPENAI_WIDGET_DOMAIN), False),
        ):
            problem = domain_problem(value, bare_host_ok=bare_host_ok) if value is not None else None
            if problem:
                yield Finding(
                    DOMAIN_NOT_HTTPS,
                    target,
                    f"widget {widget.uri}: {key} {value!r} {problem}",
                    f'set {key} to the https origin that identifies your app, e.g. "https://your-app.example.com"',
                )
        claude = claude_domain_problem(ui.get("domain"), public_https_url(snapshot.server))
        if claude:
            yield Finding(
                DOMAIN_NOT_CLAUDES,
                target,
                f"widget {widget.uri}: {claude[0]}",
                "keep the app's https origin in openai/widgetDomain (ChatGPT reads it) and leave ui.domain out, "
                "or answer Claude (clientInfo.name claude-ai) with its own ui.domain",
            )
        yield from _outside_origins(widget.uri, widget.html or "", csp)


def domain_fix(where: WidgetDomainSource | None) -> str:
    """How to give a widget its domain, at the line of the app's code that sets it when that is known."""
    if where is not None and where.constant:
        return (
            f'set WIDGET_DOMAIN = "https://YOUR-DOMAIN" in {where.line} (your reserved ngrok domain will do; '
            "it fills openai/widgetDomain)"
        )
    place = f"the resource declared at {where.line}" if where is not None else "the resource"
    scaffold = (
        ""
        if where is not None
        else 'in an appsdk scaffold, set WIDGET_DOMAIN = "https://YOUR-DOMAIN" in server.py; otherwise '
    )
    return (
        f'{scaffold}add "openai/widgetDomain": "https://YOUR-DOMAIN" to the _meta of {place} (your reserved ngrok '
        "domain will do; leave ui.domain out, which Claude accepts only as a name it derives itself)"
    )


@dataclass(frozen=True)
class WidgetDomainSource:
    """Where the app's code sets (or should set) a widget's domain: `server.py:34`."""

    line: str  # file:line, the file relative to the project
    constant: bool  # the line is an appsdk scaffold's WIDGET_DOMAIN = "…"


_WIDGET_DOMAIN_CONSTANT = re.compile(r"^WIDGET_DOMAIN\s*(?::[^=]*)?=")


def widget_domain_source(app: AppTarget | None, uri: str) -> WidgetDomainSource | None:
    """The line of the app's module that sets its widget domain: the scaffold's WIDGET_DOMAIN constant,
    else the line that names the widget's URI (its resource); None when the file or both are missing."""
    if app is None:
        return None
    relative = Path(*app.module.split(".")).with_suffix(".py")
    try:
        lines = (app.project / relative).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, text in enumerate(lines, 1):
        if _WIDGET_DOMAIN_CONSTANT.match(text):
            return WidgetDomainSource(f"{relative.as_posix()}:{number}", constant=True)
    named = [number for number, text in enumerate(lines, 1) if uri in text]
    if not named:
        return None
    # URI = "ui://…" then @mcp.resource(URI, …): the resource's own line is where its _meta goes.
    constant = re.match(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=", lines[named[0] - 1])
    if constant:
        declared = re.compile(rf"\.resource\(\s*{constant[1]}\b")
        named = [number for number, text in enumerate(lines, 1) if declared.search(text)] or named
    return WidgetDomainSource(f"{relative.as_posix()}:{named[0]}", constant=False)


def located(findings: list[Finding], app: AppTarget | None) -> list[Finding]:
    """APPS504's fix names the line of the app's code where the domain goes, once the code is known."""
    return [
        replace(finding, hint=domain_fix(source))
        if finding.rule is DOMAIN_MISSING and (source := widget_domain_source(app, finding.target.split(" ", 1)[-1]))
        else finding
        for finding in findings
    ]


def domain_problem(value: object, *, bare_host_ok: bool) -> str | None:
    """Why a widget domain is no https origin, or None. MCP Apps leaves `ui.domain`'s format to the host and
    its own examples are bare host names, so those pass there; ChatGPT's key is an https origin."""
    if not isinstance(value, str) or not value.strip():
        return "is not a non-empty string"
    from urllib.parse import urlsplit

    has_scheme = "://" in value
    if not has_scheme and not bare_host_ok:
        return "is not an https origin (no https://)"
    try:
        parts = urlsplit(value if has_scheme else "https://" + value)
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        return "is not a valid origin"
    if is_this_machine(parts.hostname or ""):
        return "is a local address, which identifies no app to a host"
    if parts.scheme != "https":
        return f"uses {parts.scheme}://, not https://"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return "has a path; a domain is an origin only (scheme and host)"
    return None


def _outside_origins(uri: str, html: str, csp: WidgetCsp) -> Iterator[Finding]:
    """One finding per outside origin (and kind) the HTML reaches that the CSP does not admit."""
    seen: set[tuple[str, str]] = set()
    for load in outside_loads(html):
        if (load.kind, load.origin) in seen or origin_allowed(load.origin, csp.allowed(load.kind)):
            continue
        seen.add((load.kind, load.origin))
        keys = f"ui.csp.{UI_CSP_KEYS[load.kind]} and openai/widgetCSP.{OPENAI_CSP_KEYS[load.kind]}"
        why = "which its CSP does not list" if csp.declared else "and it declares no CSP, so the host blocks it"
        yield Finding(
            ORIGIN_NOT_IN_CSP,
            resource_target(uri),
            f"widget {uri}: {load.how} reaches {load.origin}, {why}",
            f"add {load.origin} to {keys}",
        )
