"""`appsdk check`: every rule fires on its own fixture, in PATH mode and live, and the scaffold passes.

Real processes throughout: the CLI runs as a child, PATH mode imports the fixture in its own child, and
live mode talks to the fixture served by uvicorn on a free port.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO, RunningServer, appsdk, appsdk_in_process, free_port, serve, stop

from appsdk_cli.checks import RULES
from appsdk_cli.checks.htmlscan import allowed_by, outside_loads

FIXTURES = REPO / "tests" / "fixtures" / "check"
# The published IDs: a rule keeps its ID and name forever, so this table is written out, not derived.
RULE_FIXTURES = [
    ("APPS101", "template-missing"),
    ("APPS102", "template-mismatch"),
    ("APPS103", "deprecated-resource-uri"),
    ("APPS104", "template-not-ui-uri"),
    ("APPS201", "widget-mime-type"),
    ("APPS202", "skybridge-only"),
    ("APPS203", "widget-unreadable"),
    ("APPS204", "relative-asset-url"),
    ("APPS205", "widget-build-stale"),
    ("APPS301", "status-text-too-long"),
    ("APPS302", "annotations-missing"),
    ("APPS303", "output-schema-missing"),
    ("APPS304", "widget-only-tool-unreachable"),
    ("APPS305", "openai-visibility-deprecated"),
    ("APPS401", "structured-content-without-schema"),
    ("APPS402", "output-schema-mismatch"),
    ("APPS403", "content-text-missing"),
    ("APPS404", "tool-call-failed"),
    ("APPS405", "output-pattern-not-checked"),
    ("APPS501", "csp-on-tool"),
    ("APPS502", "csp-one-key-style"),
    ("APPS503", "csp-key-styles-differ"),
    ("APPS504", "widget-domain-missing"),
    ("APPS505", "origin-not-in-csp"),
    ("APPS506", "widget-domain-not-https"),
    ("APPS507", "ui-domain-not-claudes"),
    ("APPS601", "input-schema-invalid"),
    ("APPS602", "output-schema-invalid"),
    ("APPS603", "duplicate-tool-name"),
    ("APPS604", "duplicate-resource-uri"),
    ("APPS701", "security-schemes-invalid"),
    ("APPS702", "security-schemes-mismatch"),
    ("APPS703", "auth-challenge-without-metadata"),
    ("APPS704", "resource-metadata-invalid"),
    ("APPS705", "authorization-server-incomplete"),
    ("APPS706", "tools-not-checked"),
    ("APPS707", "authorization-server-without-iss"),
    ("APPS708", "authorization-server-issuer-mismatch"),
    ("APPS709", "insufficient-scope-without-challenge"),
    ("APPS801", "discover-fails"),
    ("APPS802", "discover-disagrees"),
    ("APPS803", "result-type-missing"),
    ("APPS804", "header-mismatch-accepted"),
    ("APPS805", "x-mcp-header-invalid"),
    ("APPS001", "skills-list-fails"),
    ("APPS002", "skill-get-fails"),
    ("APPS003", "skill-digest-mismatch"),
    ("APPS004", "skill-manifest-invalid"),
    ("APPS005", "skill-front-matter"),
    ("APPS006", "skill-tool-hints-implicit"),
    ("APPS007", "skill-dynamic"),
    ("APPS008", "skills-not-served"),
    ("APPS009", "skill-file-linked"),
]
# Rules about what a server shows over HTTP (sign-in discovery), or fixtures no MCPServer can be.
LIVE_ONLY = {
    "security-schemes-mismatch",
    "auth-challenge-without-metadata",
    "resource-metadata-invalid",
    "authorization-server-incomplete",
    "tools-not-checked",
    "authorization-server-without-iss",
    "authorization-server-issuer-mismatch",
    # The protocol eras are what a server says over HTTP; PATH mode has no wire to get wrong.
    "discover-fails",
    "discover-disagrees",
    "result-type-missing",
    "header-mismatch-accepted",
    "x-mcp-header-invalid",
}
# Rules about the project's files, which a server's URL does not lead to.
PATH_ONLY = {"widget-build-stale", "skills-not-served", "skill-file-linked"}
SEVERITY = {rule.id: rule.severity.value for rule in RULES}
NO_ENV_URL = {"APPSDK_URL": ""}  # so a developer's own APPSDK_URL cannot redirect these tests


@contextmanager
def serve_fixture(folder: Path) -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(FIXTURES / "serve.py"), str(folder), str(port)], port)
    try:
        yield server
    finally:
        stop(server.process)


def check_json(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    result = appsdk("check", *args, "--json", cwd=cwd, env=NO_ENV_URL)
    assert result.stdout.strip(), result.stderr
    return result, json.loads(result.stdout)


def run_check(folder: Path, mode: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    if mode == "path":
        return check_json(str(folder), *extra)
    with serve_fixture(folder) as server:
        return check_json("--url", server.url, *extra)


@dataclass
class Checked:
    """The capability's verdict in the shape the assertions read from the CLI's CompletedProcess."""

    returncode: int
    stderr: str = ""


def run_check_in_process(folder: Path, mode: str) -> tuple[Checked, dict]:
    """As run_check, through the capability the command calls (no `appsdk` child): the same report as
    `--json` prints and the exit code it takes. The CLI's modes and exit codes keep tests of their own."""
    from appsdk_cli.checks import check_source
    from appsdk_cli.snapshot import choose_source

    if mode == "path":
        source = choose_source(folder, None, timeout=30.0)
        report = check_source(source, timeout=30.0)
    else:
        with serve_fixture(folder) as server:
            source = choose_source(None, server.url, timeout=30.0)
            report = check_source(source, timeout=30.0)
    # Through JSON, as the CLI prints it, so tuples and lists compare as the CLI's output did.
    return Checked(1 if report.failed else 0), json.loads(json.dumps(report.as_json(), ensure_ascii=False))


def errors(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def test_every_rule_has_a_fixture_and_a_stable_id():
    assert [(rule.id, rule.name) for rule in RULES] == RULE_FIXTURES
    folders = {p.name for p in FIXTURES.iterdir() if (p / "server.py").is_file()}
    assert folders == {name for _, name in RULE_FIXTURES}


CASES = [
    (rule, name, mode)
    for rule, name in RULE_FIXTURES
    for mode in ("path", "live")
    if not (mode == "path" and name in LIVE_ONLY) and not (mode == "live" and name in PATH_ONLY)
]


@pytest.mark.parametrize(("rule", "name", "mode"), CASES, ids=[f"{name}-{mode}" for _, name, mode in CASES])
def test_the_rule_fires_and_no_other_error(rule: str, name: str, mode: str):
    result, report = run_check_in_process(FIXTURES / name, mode)
    fired = [f for f in report["findings"] if f["rule"] == rule]
    assert fired, report
    assert all(f["name"] == name and f["severity"] == SEVERITY[rule] for f in fired)
    assert all(f["message"] and f["hint"] and f["target"] for f in fired)
    assert [f for f in errors(report) if f["rule"] != rule] == []
    assert report["summary"]["mode"] == mode
    assert result.returncode == (1 if SEVERITY[rule] == "error" else 0), result.stderr


def test_origins_outside_the_csp_are_each_named():
    _, report = run_check_in_process(FIXTURES / "origin-not-in-csp", "path")
    messages = [f["message"] for f in report["findings"] if f["rule"] == "APPS505"]
    assert len(messages) == 2
    assert any("https://cdn.example.com" in m and "<script src>" in m for m in messages)
    assert any("https://api.example.com" in m and "fetch()" in m for m in messages)
    assert not any("fonts.example.com" in m for m in messages)  # listed in both CSP key styles


@pytest.mark.parametrize("mode", ["path", "live"])
def test_the_scaffold_passes_with_no_errors(book_club: Path, mode: str):
    result, report = run_check(book_club, mode)
    assert result.returncode == 0, report
    assert errors(report) == []
    assert report["summary"]["called"] == ["list-books"]  # its real output was checked against outputSchema
    # the widget, and the example skill's two files (SEP-2640: each file of a skill is a resource)
    assert report["summary"]["tools"] == 1 and report["summary"]["resources"] == 3
    assert report["summary"]["skills"] == 1  # and the skill passed: listed, got, every digest right


def test_both_modes_see_the_same_findings(book_club: Path):
    _, from_path = run_check_in_process(book_club, "path")
    _, live = run_check_in_process(book_club, "live")

    # PATH mode has the code, so a fix may name its line (server.py:34); a bare --url has only the wire.
    def seen(finding: dict) -> dict:
        return {key: value for key, value in finding.items() if key != "hint"}

    assert [seen(f) for f in from_path["findings"]] == [seen(f) for f in live["findings"]]
    for in_path, in_live in zip(from_path["findings"], live["findings"], strict=True):
        assert in_path["hint"] == in_live["hint"] or "server.py:" in in_path["hint"], (in_path, in_live)


def test_json_shape():
    result, report = check_json(str(FIXTURES / "template-missing"))
    assert set(report) == {"findings", "summary", "permissions"}
    assert {"errors", "warnings", "mode", "server"} <= set(report["summary"])
    assert report["summary"]["errors"] == len(errors(report)) >= 1
    for finding in report["findings"]:
        assert {"rule", "severity", "target", "message", "hint"} <= set(finding)
    assert report["summary"]["server"].startswith("server:mcp in ")
    assert result.stdout.count("\n") == 1  # one JSON document, nothing else on stdout


def test_human_output_is_a_table_with_a_summary():
    result = appsdk("check", str(FIXTURES / "status-text-too-long"), env=NO_ENV_URL)
    assert result.returncode == 1
    assert "APPS301" in result.stdout and "1 error" in result.stdout
    assert "greet" in result.stdout


def test_strict_fails_on_warnings():
    folder = str(FIXTURES / "tool-call-failed")
    plain, report = check_json(folder)
    assert plain.returncode == 0 and report["summary"]["warnings"] >= 1 and not errors(report)
    strict, report = check_json(folder, "--strict")
    assert strict.returncode == 1 and report["summary"]["passed"] is False


def test_no_calls_calls_nothing(book_club: Path):
    result, report = check_json(str(book_club), "--no-calls")
    assert result.returncode == 0 and report["summary"]["called"] == []


def one_line_error(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    return lines[0]


def test_unreachable_url_is_one_line_exit_1():
    result = appsdk("check", "--url", f"http://127.0.0.1:{free_port()}/mcp", env=NO_ENV_URL)
    assert result.returncode == 1
    assert "cannot reach the MCP server" in one_line_error(result)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "from mcp.server.mcpserver import MCPServer\n\nimport no_such_package_xyz\n",
            "server.py:3: ModuleNotFoundError",
        ),
        ("from mcp.server.mcpserver import MCPServer\nmcp = MCPServer(\n", "server.py:2: SyntaxError"),
        ("raise RuntimeError('DATABASE_URL is not set')\n", "server.py:1: RuntimeError: DATABASE_URL is not set"),
        ("app = 'not a server'\n", "server.py has no attribute 'mcp'"),
        ("mcp = 'not a server'\n", "server:mcp is a str, not an MCPServer"),
    ],
    ids=["missing-dependency", "syntax-error", "raises", "no-attribute", "wrong-type"],
)
def test_app_import_failure_is_one_line_exit_1(tmp_path: Path, source: str, expected: str):
    (tmp_path / "server.py").write_text(source)
    result = appsdk_in_process("check", str(tmp_path), env=NO_ENV_URL)
    assert result.returncode == 1
    assert expected in one_line_error(result)


def test_an_app_that_serves_on_import_is_stopped_and_named(tmp_path: Path):
    (tmp_path / "server.py").write_text("import time\n\ntime.sleep(120)  # stands in for mcp.run() at import\n")
    result = appsdk("check", str(tmp_path), "--timeout", "2", env=NO_ENV_URL, timeout=60)
    assert result.returncode == 1
    assert "importing server:mcp did not finish within 2 s" in one_line_error(result)


def test_the_configured_app_is_used(tmp_path: Path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "main.py").write_text(
        (FIXTURES / "status-text-too-long" / "server.py").read_text().replace("mcp =", "api =")
    )
    (app / "main.py").write_text((app / "main.py").read_text().replace("@mcp.", "@api."))
    (app / "pyproject.toml").write_text('[tool.appsdk]\napp = "main:api"\n')
    _, report = check_json(str(app))
    assert [f["rule"] for f in report["findings"]] == ["APPS301"]
    assert report["summary"]["server"].startswith("main:api in ")


@pytest.mark.parametrize(
    "args",
    [["--bogus"], [".", "--url", "http://127.0.0.1:1/mcp"], ["/no/such/folder"], ["--timeout", "0"]],
    ids=["unknown-option", "path-and-url", "missing-folder", "bad-timeout"],
)
def test_bad_command_lines_exit_2(args: list[str]):
    result = appsdk_in_process("check", *args, env=NO_ENV_URL)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_command_line_is_exit_2_from_the_real_command_line():
    result = appsdk("check", "--timeout", "0", env=NO_ENV_URL)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr


def test_no_arguments_checks_the_folder_in_memory(book_club: Path):
    _, report = check_json(cwd=book_club)
    assert report["summary"]["mode"] == "path"
    assert report["summary"]["server"] == f"server:mcp in {book_club.resolve()}"


def test_no_arguments_checks_the_running_dev_server_live(tmp_path: Path):
    import shutil

    from test_dev import start_dev

    served = tmp_path / "served"
    shutil.copytree(FIXTURES / "status-text-too-long", served)
    dev = start_dev(served)
    try:
        result, report = check_json(cwd=served)
    finally:
        stop(dev.process)
    assert report["summary"]["mode"] == "live" and report["summary"]["server"] == dev.url
    assert "APPS301" in [f["rule"] for f in report["findings"]]  # found by calling the served app
    assert result.returncode == 1


def test_help_mentions_the_modes():
    result = appsdk("check", "--help", env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0
    assert "--url" in result.stdout and "--strict" in result.stdout and "--json" in result.stdout


# --- the HTML scanner, a pure function ---------------------------------------------------------------


def test_the_scanner_finds_literal_outside_urls_only():
    html = """<img srcset="https://img.example.com/a.png 1x, /local.png 2x">
    <link rel="preconnect" href="https://ignored.example.com">
    <iframe src="//frames.example.com/x"></iframe>
    <div style="background: url('https://bg.example.com/b.png')"></div>
    <style>@import url("https://css.example.com/x.css");</style>
    <script>
      const ws = new WebSocket("wss://live.example.com/socket");
      fetch(`https://${host}/dynamic`);
      fetch("/relative");
      const data = "data:image/png;base64,xyz";
    </script>"""
    found = {(load.kind, load.origin) for load in outside_loads(html)}
    assert found == {
        ("resource", "https://img.example.com"),
        ("frame", "https://frames.example.com"),
        ("resource", "https://bg.example.com"),
        ("resource", "https://css.example.com"),
        ("connect", "wss://live.example.com"),
    }


def test_csp_sources_match_hosts_wildcards_and_ports():
    assert allowed_by("https://api.example.com", ("https://api.example.com",))
    assert allowed_by("https://api.example.com", ("api.example.com",))
    assert allowed_by("https://a.cdn.example.com", ("https://*.cdn.example.com",))
    assert not allowed_by("https://cdn.example.com", ("https://*.cdn.example.com",))
    assert not allowed_by("https://api.example.com:8443", ("https://api.example.com",))
    assert not allowed_by("http://api.example.com", ("https://api.example.com",))
    assert not allowed_by("https://evil.com", ())
    assert re.fullmatch(r"APPS\d{3}", RULES[0].id)


def test_the_rules_page_documents_every_rule_as_it_is():
    rows = re.findall(
        r"^\| (APPS\d{3}) \| `([a-z-]+)` \| (error|warning) \|", (REPO / "docs" / "rules.md").read_text(), re.M
    )
    from appsdk_cli.checks.submission import RULES as SUBMISSION_RULES  # the --submission table follows

    assert rows == [(rule.id, rule.name, rule.severity.value) for rule in (*RULES, *SUBMISSION_RULES)]


def test_rules_run_without_the_cli_and_with_no_csp_every_outside_origin_counts():
    """The capability on its own: a Snapshot in, findings out. No CSP declared blocks every outside origin."""
    from appsdk_cli.checks import run_rules
    from appsdk_cli.snapshot import Snapshot

    uri = "ui://widget/w.html"
    snapshot = Snapshot(
        mode="live",
        server="test",
        tools=[{"name": "show", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": uri}}}],
        resources=[{"uri": uri, "name": "w", "mimeType": "text/html;profile=mcp-app"}],
        reads={uri: {"contents": [{"uri": uri, "text": '<script src="https://cdn.example.com/x.js"></script>'}]}},
    )
    report = run_rules(snapshot)
    blocked = [f for f in report.findings if f.rule.id == "APPS505"]
    assert len(blocked) == 1 and "declares no CSP" in blocked[0].message
    assert "https://cdn.example.com" in blocked[0].hint
    assert report.failed


@pytest.mark.parametrize(
    ("mode", "spelled"), [("path", "ToolAnnotations(read_only_hint=True"), ("live", '"readOnlyHint"')]
)
def test_annotation_hint_fits_what_was_checked(mode, spelled):
    # A project on disk is Python; a live server may be written in anything, so it gets the wire fields.
    _, report = run_check_in_process(FIXTURES / "annotations-missing", mode)
    hints = [f["hint"] for f in report["findings"] if f["rule"] == "APPS302"]
    assert hints and all(spelled in hint for hint in hints)


def test_check_names_the_slow_call_it_waited_on():
    """A read-only tool with no arguments that takes a while (server-everything has one): on a terminal a
    line names the call while it runs; the summary, in a log too, names it with its time."""
    from test_call import _on_a_terminal

    port = free_port()
    server = serve(
        [sys.executable, str(REPO / "tests" / "fixtures" / "slow_tool_server.py"), "http", str(port), "1.5"], port
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        logged = appsdk("check", "--url", url, env=NO_ENV_URL)
        assert logged.returncode == 0, logged.stderr
        assert re.search(r"called long-report \(1\.\d s\), quick\)", logged.stdout), logged.stdout
        assert "calling long-report" not in logged.stderr  # the progress line is for a terminal only
        _, report = check_json("--url", url)
        assert report["summary"]["called"] == ["long-report", "quick"]
        assert report["summary"]["callSeconds"]["long-report"] >= 1.4 > report["summary"]["callSeconds"]["quick"]
        shown = _on_a_terminal("check", "--url", url)
        assert "calling long-report (read-only, no arguments; --no-calls skips it)" in shown, shown
    finally:
        stop(server.process)


def test_a_tool_named_like_an_english_word_is_named_by_a_skill_only_in_code(tmp_path: Path):
    """APPS006 (#36): a tool `when` without hints is not named by the scaffold's SKILL.md prose ("Use when
    the user asks"); a code span (`when`) or a `tool:` reference names it."""
    from appsdk_cli.scaffold import scaffold

    project = scaffold("book-club", tmp_path).path
    server = project / "server.py"
    tool = '\n\n@mcp.tool(name="when")\ndef when_next() -> str:\n    return "June"\n\n\ndef main() -> None:'
    server.write_text(server.read_text().replace("\n\ndef main() -> None:", tool, 1))

    def apps006() -> tuple[int, list[str]]:
        result = appsdk("check", str(project), "--json", env={"APPSDK_URL": ""})
        findings = json.loads(result.stdout)["findings"]
        return result.returncode, [f["message"] for f in findings if f["rule"] == "APPS006"]

    assert apps006() == (0, [])
    skill = project / "skills" / "book-club-picks" / "SKILL.md"
    for naming in ("Then call `when`.", "Then call tool: when."):
        skill.write_text(skill.read_text().split("\nThen call", 1)[0] + f"\n{naming}\n")
        code, messages = apps006()
        assert code == 1 and len(messages) == 1 and "names tool when" in messages[0], (naming, messages)
