"""`appsdk check --submission`: the directory review's rules (APPS9xx) on a real fixture server, each
rule on its own wire-shaped snapshot, and the URL checks (domain token, https redirects) against a
loopback origin with the "public https" requirement injected, as the capability allows.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO, RunningServer, appsdk, free_port, serve, serve_project, stop

from appsdk_cli.checks import run_rules
from appsdk_cli.checks.submission import RULES, check, is_public_https, url_findings, with_submission
from appsdk_cli.scaffold import scaffold
from appsdk_cli.snapshot import Snapshot

FIXTURES = REPO / "tests" / "fixtures" / "submission"
SUBMISSION_RULES = [
    ("APPS901", "tool-name-too-long"),
    ("APPS902", "tool-description-missing"),
    ("APPS903", "annotation-hints-required"),
    ("APPS904", "widget-domain-required"),
    ("APPS905", "widget-domain-conflict"),
    ("APPS906", "csp-wildcard"),
    ("APPS907", "frame-domains-review"),
    ("APPS908", "instructions-missing"),
    ("APPS909", "file-params-invalid"),
    ("APPS910", "domain-challenge-missing"),
    ("APPS911", "redirect-not-https"),
    ("APPS912", "submission-url-not-checked"),
    ("APPS913", "widget-domain-placeholder"),
]
NO_ENV = {"APPSDK_URL": ""}
HINTS = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
WIDGET = "ui://widget/w.html"


def test_rule_ids_are_published_and_every_rule_cites_its_page():
    assert [(rule.id, rule.name) for rule in RULES] == SUBMISSION_RULES
    assert all("developers.openai.com" in rule.why for rule in RULES)


def tool(name: str = "show", **extra) -> dict:
    value = {"name": name, "description": "Shows it.", "inputSchema": {"type": "object"}, "annotations": dict(HINTS)}
    value.update(extra)
    return value


def snapshot(
    tools: list[dict] | None = None, widget_meta: dict | None = None, instructions: str | None = "Use it."
) -> Snapshot:
    shot = Snapshot(mode="path", server="fixture", server_name="fixture", instructions=instructions)
    shot.tools = tools if tools is not None else [tool(_meta={"ui": {"resourceUri": WIDGET}})]
    meta = widget_meta if widget_meta is not None else {"openai/widgetDomain": "https://app.pinboard.dev"}
    shot.resources = [{"uri": WIDGET, "name": "w", "mimeType": "text/html;profile=mcp-app", "_meta": meta}]
    shot.reads = {WIDGET: {"contents": [{"uri": WIDGET, "mimeType": "text/html;profile=mcp-app", "text": "<p>hi</p>"}]}}
    return shot


def found(shot: Snapshot) -> set[str]:
    return {finding.rule.id for finding in check(shot)}


def test_a_compliant_snapshot_has_no_submission_findings():
    assert found(snapshot()) == set()


SNAPSHOT_FIXTURES = {
    "APPS901": snapshot([tool("x" * 65)]),
    "APPS902": snapshot([tool(description=None)]),
    "APPS903": snapshot([tool(annotations={"readOnlyHint": True})]),
    "APPS904": snapshot(widget_meta={}),
    "APPS905": snapshot(
        widget_meta={"ui": {"domain": "https://a.pinboard.dev"}, "openai/widgetDomain": "https://b.pinboard.dev"}
    ),
    "APPS906": snapshot(
        widget_meta={
            "openai/widgetDomain": "https://app.pinboard.dev",
            "ui": {"csp": {"connectDomains": ["https://*.pinboard.dev"]}},
        }
    ),
    "APPS907": snapshot(
        widget_meta={
            "openai/widgetDomain": "https://app.pinboard.dev",
            "openai/widgetCSP": {"frame_domains": ["https://yt.dev"]},
        }
    ),
    "APPS908": snapshot(instructions=None),
    "APPS909": snapshot([tool(_meta={"openai/fileParams": "file"})]),
    "APPS913": snapshot(widget_meta={"openai/widgetDomain": "https://replace-me.example.com"}),
}


@pytest.mark.parametrize("rule_id", sorted(SNAPSHOT_FIXTURES))
def test_each_rule_fires_on_its_snapshot(rule_id: str):
    assert rule_id in found(SNAPSHOT_FIXTURES[rule_id])


def test_stricter_twins_replace_the_base_findings():
    shot = snapshot([tool(annotations={"readOnlyHint": True}, _meta={"ui": {"resourceUri": WIDGET}})], widget_meta={})
    base = {f.rule.id for f in run_rules(shot).findings}
    assert {"APPS302", "APPS504"} <= base
    strict = {f.rule.id for f in with_submission(run_rules(shot), url=None).findings}
    assert {"APPS903", "APPS904", "APPS912"} <= strict and not {"APPS302", "APPS504"} & strict


def test_the_fixture_server_fails_review_through_the_cli():
    result = appsdk("check", str(FIXTURES / "breaks-review"), "--submission", "--json", env=NO_ENV)
    assert result.returncode == 1, result.stderr
    rules = {f["rule"] for f in json.loads(result.stdout)["findings"]}
    expected = {"APPS901", "APPS902", "APPS903", "APPS905", "APPS906", "APPS907", "APPS908", "APPS909", "APPS912"}
    assert expected <= rules, rules
    plain = appsdk("check", str(FIXTURES / "breaks-review"), "--json", env=NO_ENV)
    assert not any(f["rule"].startswith("APPS9") for f in json.loads(plain.stdout)["findings"])


@pytest.mark.parametrize(
    "url,public",
    [
        ("https://pinboard.dev/mcp", True),
        ("https://8.8.8.8/mcp", True),
        ("http://pinboard.dev/mcp", False),
        ("https://localhost/mcp", False),
        ("https://127.0.0.1:8443/mcp", False),
        ("https://10.0.0.4/mcp", False),
        ("https://box.local/mcp", False),
    ],
)
def test_what_counts_as_public_https(url: str, public: bool):
    assert is_public_https(url) is public


@pytest.fixture
def origin(request) -> Iterator[RunningServer]:
    """The loopback stand-in origin; the test's parameter is its token (None: it serves none)."""
    port = free_port()
    token = getattr(request, "param", "token-123")
    command = [sys.executable, str(FIXTURES / "challenge_server.py"), str(port), *([token] if token else [])]
    server = serve(command, port)
    try:
        yield server
    finally:
        stop(server.process)


def loopback(server: RunningServer):
    """Stands in for "public https": this loopback origin only (another host counts as leaving it)."""
    return lambda url: url.startswith(f"http://127.0.0.1:{server.port}/")


def test_a_served_token_and_same_origin_redirects_pass(origin: RunningServer):
    accept = loopback(origin)
    assert list(url_findings(origin.url, acceptable=accept, timeout=10)) == []
    hop = f"http://127.0.0.1:{origin.port}/hop/mcp"
    assert list(url_findings(hop, acceptable=accept, timeout=10)) == []


@pytest.mark.parametrize("origin", [None], indirect=True)
def test_a_missing_token_is_an_error(origin: RunningServer):
    findings = list(url_findings(origin.url, acceptable=loopback(origin), timeout=10))
    assert [f.rule.id for f in findings] == ["APPS910"]
    assert "HTTP 404" in findings[0].message


def test_a_redirect_that_leaves_public_https_is_an_error(origin: RunningServer):
    away = f"http://127.0.0.1:{origin.port}/away/mcp"
    findings = list(url_findings(away, acceptable=loopback(origin), timeout=10))
    assert [f.rule.id for f in findings] == ["APPS911"]
    assert f"http://localhost:{origin.port}/mcp" in findings[0].message


def test_the_cli_does_not_treat_a_loopback_url_as_public(tmp_path: Path):
    """The real requirement stays in the CLI: a loopback --url is checked, but not as a public one."""
    project = scaffold("book-club", tmp_path, domain="books.ngrok.app").path
    server = serve_project(project)
    try:
        result = appsdk("check", "--url", server.url, "--submission", "--json", env=NO_ENV)
    finally:
        stop(server.process)
    assert result.returncode == 0, result.stdout + result.stderr
    findings = json.loads(result.stdout)["findings"]
    unchecked = [f for f in findings if f["rule"] == "APPS912"]
    assert unchecked and "not a public https URL" in unchecked[0]["message"]
    assert not {"APPS910", "APPS911"} & {f["rule"] for f in findings}


def test_the_widget_domain_fix_names_the_line_of_server_py(tmp_path: Path):
    """APPS504 and APPS904 alike: the scaffold's WIDGET_DOMAIN line, else the line declaring the resource."""
    project = scaffold("plain", tmp_path).path
    line = next(
        n for n, text in enumerate((project / "server.py").read_text().splitlines(), 1) if "WIDGET_DOMAIN =" in text
    )
    for args, rule in ((["--json"], "APPS504"), (["--submission", "--json"], "APPS904")):
        result = appsdk("check", *args, cwd=project, env=NO_ENV)
        hints = [f["hint"] for f in json.loads(result.stdout)["findings"] if f["rule"] == rule]
        assert hints and f'set WIDGET_DOMAIN = "https://YOUR-DOMAIN" in server.py:{line} ' in hints[0], hints

    bare = REPO / "tests" / "fixtures" / "check" / "widget-domain-missing"
    source = (bare / "server.py").read_text().splitlines()
    declared = next(n for n, text in enumerate(source, 1) if text.startswith("@mcp.resource(URI"))
    result = appsdk("check", str(bare), "--submission", "--json", env=NO_ENV)
    hints = [f["hint"] for f in json.loads(result.stdout)["findings"] if f["rule"] == "APPS904"]
    assert hints and f"the resource declared at server.py:{declared} " in hints[0], hints
