"""`check` and appmeta on the shapes real servers send: the official SDK's keys, MCP Apps defaults, asset URLs.

Each rule has its CLI fixture in test_check.py; these run the capability on a Snapshot (no processes), to
pin the cases a fixture per rule cannot: what must *not* fire, and the one visibility rule per bridge.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from appsdk_cli.appmeta import Bridge, claude_widget_domain, tool_meta
from appsdk_cli.checks import run_rules
from appsdk_cli.checks.csp import domain_problem
from appsdk_cli.checks.htmlscan import relative_assets
from appsdk_cli.snapshot import Snapshot

URI = "ui://widget/w.html"
# The portable shape: ChatGPT's widget origin in openai/widgetDomain, no ui.domain (Claude's is its own).
GOOD_WIDGET_META = {
    "ui": {"csp": {"connectDomains": [], "resourceDomains": []}},
    "openai/widgetCSP": {"connect_domains": [], "resource_domains": []},
    "openai/widgetDomain": "https://app.example.com",
}
SAFE = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}


def findings(
    tool_meta_: dict[str, Any],
    html: str = "<p>hi</p>",
    widget_meta: dict[str, Any] | None = None,
    server: str = "test",
) -> dict:
    tool = {"name": "show", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}
    tool |= {"annotations": SAFE, "_meta": tool_meta_}
    resource = {
        "uri": URI,
        "name": "w",
        "mimeType": "text/html;profile=mcp-app",
        "_meta": widget_meta or GOOD_WIDGET_META,
    }
    snapshot = Snapshot(
        mode="live",
        server=server,
        tools=[tool],
        resources=[resource],
        reads={URI: {"contents": [{"uri": URI, "mimeType": "text/html;profile=mcp-app", "text": html}]}},
    )
    return {f.rule.id: f for f in run_rules(snapshot).findings}


def test_register_app_tool_writes_both_resource_uri_keys_and_that_is_no_finding():
    # What @modelcontextprotocol/ext-apps' registerAppTool puts in a tool's _meta.
    assert findings({"ui": {"resourceUri": URI}, "ui/resourceUri": URI}) == {}


def test_a_flat_resource_uri_alone_or_disagreeing_is_a_warning():
    alone = findings({"ui/resourceUri": URI})["APPS103"]
    assert alone.severity.value == "warning" and "only in the deprecated flat" in alone.message
    other = "ui://widget/old.html"
    disagree = findings({"ui": {"resourceUri": URI}, "ui/resourceUri": other})
    assert other in disagree["APPS103"].message and URI in disagree["APPS103"].message


def test_structured_content_without_an_output_schema_is_only_a_warning():
    tool = {"name": "count", "inputSchema": {"type": "object"}, "annotations": SAFE}
    result = {"structuredContent": {"n": 3}, "content": [{"type": "text", "text": "Three."}]}
    report = run_rules(Snapshot(mode="live", server="t", tools=[tool], calls={"count": result}))
    assert [(f.rule.id, f.severity.value) for f in report.findings] == [("APPS401", "warning")]
    assert not report.failed


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<script type="module" src="./app.js"></script>', ["./app.js"]),
        (
            '<link rel="stylesheet" href="styles.css"><link rel="modulepreload" href="/chunk.js">',
            ["styles.css", "/chunk.js"],
        ),
        ("<style>@import 'theme.css';</style>", ["theme.css"]),
        # What loads: absolute URLs (APPS505's business), data: and blob:, inline code, fragments, templates.
        ('<script src="https://cdn.example.com/x.js"></script><script src="//cdn.example.com/y.js"></script>', []),
        ('<script src="data:text/javascript,1"></script><script>import("./lazy.js")</script>', []),
        ('<link rel="icon" href="favicon.ico"><img src="logo.png"><a href="more.html">more</a>', []),
        ('<script src="{{ asset_url }}"></script>', []),
        # A <base href> makes relative URLs absolute.
        ('<base href="https://cdn.example.com/app/"><script src="./app.js"></script>', []),
    ],
)
def test_relative_asset_urls_are_scripts_and_styles_that_resolve_against_nothing(html: str, expected: list[str]):
    assert [asset.url for asset in relative_assets(html)] == expected


def test_a_widget_with_relative_assets_is_an_error_that_names_them():
    found = findings({"ui": {"resourceUri": URI}}, '<script src="./app.js"></script><link rel=stylesheet href=a.css>')
    assert found["APPS204"].severity.value == "error"
    assert "<script src> ./app.js" in found["APPS204"].message and "a.css" in found["APPS204"].message


@pytest.mark.parametrize(
    ("value", "bare_host_ok", "problem"),
    [
        ("https://app.example.com", False, None),
        ("https://app.example.com/", False, None),
        # MCP Apps leaves ui.domain's format to the host; its own examples are bare host names.
        ("a904794854a047f6.claudemcpcontent.com", True, None),
        ("www-example-com.oaiusercontent.com", False, "no https://"),
        ("http://localhost:3000", False, "local address"),
        ("https://127.0.0.1:8000", True, "local address"),
        ("http://app.example.com", True, "http://"),
        ("https://app.example.com/widget", False, "path"),
    ],
)
def test_a_widget_domain_is_an_https_origin(value: str, bare_host_ok: bool, problem: str | None):
    found = domain_problem(value, bare_host_ok=bare_host_ok)
    assert (found is None) if problem is None else (problem in (found or ""))


def test_a_local_widget_domain_warns_once_per_key():
    meta = {**GOOD_WIDGET_META, "openai/widgetDomain": "http://localhost:3000"}
    found = findings({"ui": {"resourceUri": URI}}, widget_meta=meta)
    assert list(found) == ["APPS506"]
    assert "openai/widgetDomain 'http://localhost:3000'" in found["APPS506"].message


def test_claude_takes_only_the_ui_domain_it_derives_from_the_connector_url():
    public = "https://books.example.com/mcp"
    derived = claude_widget_domain(public)
    assert derived == hashlib.sha256(public.encode()).hexdigest()[:32] + ".claudemcpcontent.com"
    with_domain = {**GOOD_WIDGET_META, "ui": {**GOOD_WIDGET_META["ui"], "domain": derived}}
    assert "APPS507" not in findings({"ui": {"resourceUri": URI}}, widget_meta=with_domain, server=public)
    # Absent: Claude picks the origin itself, fine for both hosts.
    assert "APPS507" not in findings({"ui": {"resourceUri": URI}}, server=public)
    # ChatGPT's kind of value in ui.domain: Claude renders nothing, whatever the URL.
    chatgpts = {**GOOD_WIDGET_META, "ui": {**GOOD_WIDGET_META["ui"], "domain": "https://app.example.com"}}
    found = findings({"ui": {"resourceUri": URI}}, widget_meta=chatgpts, server=public)["APPS507"]
    assert found.severity.value == "warning" and "Claude renders no widget" in found.message
    assert f"for {public}: {derived}" in found.message and "openai/widgetDomain" in found.hint
    local = findings({"ui": {"resourceUri": URI}}, widget_meta=chatgpts, server="http://127.0.0.1:8000/mcp")["APPS507"]
    assert "127.0.0.1" not in local.message and "--url YOUR-PUBLIC-URL" in local.message
    # Claude's form, hashed from another URL (a trailing slash is another URL).
    other = {**GOOD_WIDGET_META, "ui": {**GOOD_WIDGET_META["ui"], "domain": claude_widget_domain(public + "/")}}
    found = findings({"ui": {"resourceUri": URI}}, widget_meta=other, server=public)["APPS507"]
    assert f"{derived} for {public}" in found.message


@pytest.mark.parametrize(("value", "replacement"), [("private", '["app"]'), ("public", '["model", "app"]')])
def test_openai_visibility_warns_and_names_the_replacement(value: str, replacement: str):
    found = findings({"openai/visibility": value})["APPS305"]
    assert found.severity.value == "warning" and "July 2026" in found.message
    assert f'"ui": {{"visibility": {replacement}' in found.hint


# (tool _meta, model sees it, MCP Apps bridge may call it, window.openai.callTool may call it)
VISIBILITY = [
    ({}, True, True, False),
    ({"ui": {"visibility": ["model"]}}, True, False, False),
    ({"ui": {"visibility": ["app"]}}, False, True, True),
    ({"ui": {"visibility": ["model", "app"]}}, True, True, True),
    ({"openai/widgetAccessible": True}, True, True, True),
    ({"openai/widgetAccessible": True, "ui": {"visibility": ["model"]}}, True, False, True),
    ({"openai/visibility": "private"}, False, True, False),
    ({"ui": {"visibility": []}}, False, False, False),
]


@pytest.mark.parametrize(("meta", "model", "mcp_apps", "openai"), VISIBILITY)
def test_one_visibility_rule_per_bridge(meta: dict[str, Any], model: bool, mcp_apps: bool, openai: bool):
    tool = tool_meta({"name": "t", "_meta": meta})
    assert (tool.model_visible, tool.widget_may_call(Bridge.MCP_APPS), tool.widget_may_call(Bridge.OPENAI)) == (
        model,
        mcp_apps,
        openai,
    )
    # APPS304 fires exactly when nobody can reach the tool.
    assert ("APPS304" in findings(meta)) == (not model and not mcp_apps and not openai)
