"""`appsdk snapshot` and `appsdk check --against`: a fixture pair per impact, in PATH mode and live, the
scaffold's contract byte for byte, the contract guide's CI job, and the errors a user can cause.

Real processes throughout: the CLI runs as a child, PATH mode imports each fixture in its own child,
and live mode talks to the fixture served by uvicorn on a free port.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import REPO, appsdk, free_port, serve, serve_project, stop
from hypothesis import given, settings
from hypothesis import strategies as st

from appsdk_cli.contract import dumps, load
from appsdk_cli.contract.compare import compare
from appsdk_cli.scaffold import WidgetFlavor, scaffold

FIXTURES = REPO / "tests" / "fixtures" / "contract"
SERVE = REPO / "tests" / "fixtures" / "check" / "serve.py"


def record(folder: Path, output: Path) -> str:
    result = appsdk("snapshot", str(folder), "-o", str(output))
    assert result.returncode == 0, result.stderr
    return output.read_text(encoding="utf-8")


def against(contract: Path, *where: str) -> tuple[int, dict]:
    result = appsdk("check", *where, "--against", str(contract), "--json")
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


def lines(report: dict, impact: str) -> list[str]:
    return [c["change"] for c in report["changes"] if c["impact"] == impact]


# --- a fixture pair per impact -----------------------------------------------------------------------

BREAKING = [
    "tool `add-card` is gone, apparently renamed to `create-card`",
    "tool `show-board`'s argument `tag` was removed",
    "tool `show-board` now requires `board`",
    'tool `show-board`\'s input narrowed: `sort`: the old schema allows the value "top"; the new one does not',
    "tool `show-board`'s output no longer fits what its old output schema promised: `cards[].votes`: "
    "the new schema allows type number; the old one does not",
    "tool `show-board`'s widget URI in _meta.ui.resourceUri changed from ui://widget/board.html to "
    "ui://widget/board-v2.html",
    "resource ui://widget/board.html was removed (or its URI changed)",
    "the widget domain of ui://widget/card.html changed from https://cards.example.com to https://cards.example.net",
]


def test_breaking_pair_fails_with_each_change_and_what_to_do(tmp_path: Path):
    contract = tmp_path / "appsdk.contract.json"
    record(FIXTURES / "breaking" / "before", contract)
    code, report = against(contract, str(FIXTURES / "breaking" / "after"))
    assert code == 1
    assert lines(report, "breaking") == BREAKING
    assert all(c["certain"] for c in report["changes"])
    todos = {c["change"]: c["todo"] for c in report["changes"]}
    assert "keep `add-card`" in todos[BREAKING[0]] and "next to `create-card`" in todos[BREAKING[0]]
    assert "make `board` optional with a default" in todos[BREAKING[2]]
    assert "version the URI only with a new review" in todos[BREAKING[6]]
    # The rest is reported too, in its own class.
    assert lines(report, "needs-review") == ["tool `create-card` is new"]
    assert "the server version changed from '1.0.0' to '1.1.0'" in lines(report, "goes-live")
    assert report["summary"] == {
        "breaking": 8,
        "needsReview": 1,
        "goesLive": 2,
        "against": str(contract),
        "server": f"server:mcp in {FIXTURES / 'breaking' / 'after'}",
        "strict": False,
        "passed": False,
    }


def test_needs_review_pair_passes_and_lists_what_waits_for_review(tmp_path: Path):
    contract = tmp_path / "appsdk.contract.json"
    record(FIXTURES / "needs-review" / "before", contract)
    code, report = against(contract, str(FIXTURES / "needs-review" / "after"))
    assert code == 0, report
    assert lines(report, "breaking") == []
    assert lines(report, "needs-review") == [
        "tool `archive-board` is new",
        # enum widened, int -> int|float, a new optional argument: nothing the old calls sent is refused.
        "tool `show-board`'s input schema changed (it accepts everything it accepted before)",
        "tool `show-board`'s description changed to “Shows the team's board.”",
        "tool `show-board`'s annotations changed: openWorldHint (unset) → false",
        "tool `show-board`'s _meta changed: openai/toolInvocation/invoking",
        "the server's instructions changed",
    ]
    assert report["summary"]["passed"] is True
    # --strict: a change that waits for review fails too (before submitting, say).
    strict = appsdk("check", str(FIXTURES / "needs-review" / "after"), "--against", str(contract), "--strict")
    assert strict.returncode == 1
    assert "--strict" in strict.stdout


def test_goes_live_pair_passes_with_the_caching_note(tmp_path: Path):
    contract = tmp_path / "appsdk.contract.json"
    record(FIXTURES / "goes-live" / "before", contract)
    code, report = against(contract, str(FIXTURES / "goes-live" / "after"))
    assert code == 0
    assert [c["impact"] for c in report["changes"]] == ["goes-live", "goes-live"]
    html, csp = report["changes"]
    assert html["change"] == "the widget HTML of ui://widget/board.html changed"
    assert "cache widget HTML by URI" in html["todo"]
    assert csp["change"] == "the CSP of ui://widget/board.html changed"
    shown = appsdk("check", str(FIXTURES / "goes-live" / "after"), "--against", str(contract))
    assert shown.returncode == 0
    assert "goes live" in shown.stdout and "✓ 0 breaking" in shown.stdout


def test_live_mode_reports_what_path_mode_reports(tmp_path: Path):
    contract = tmp_path / "appsdk.contract.json"
    record(FIXTURES / "breaking" / "before", contract)
    port = free_port()
    server = serve([sys.executable, str(SERVE), str(FIXTURES / "breaking" / "after"), str(port)], port)
    try:
        code, live = against(contract, "--url", server.url)
    finally:
        stop(server.process)
    assert code == 1
    _, path = against(contract, str(FIXTURES / "breaking" / "after"))
    assert live["changes"] == path["changes"]


# --- the scaffold's own contract ----------------------------------------------------------------------


@pytest.mark.parametrize("flavor", [WidgetFlavor.MCP_APPS, WidgetFlavor.SKYBRIDGE], ids=["mcp-apps", "skybridge"])
def test_scaffold_contract_round_trips_byte_for_byte(tmp_path: Path, flavor: WidgetFlavor):
    project = scaffold("book-club", tmp_path, flavor=flavor).path
    contract = project / "appsdk.contract.json"
    text = record(project, contract)
    assert text.endswith("}\n") and "\r" not in text
    assert dumps(load(contract)) == text  # what is read back writes the same bytes
    printed = appsdk("snapshot", str(project), "--json")
    assert printed.returncode == 0 and printed.stdout == text  # --json prints the file's exact bytes
    again = appsdk("snapshot", "-o", "appsdk.contract.json", cwd=project)
    assert again.returncode == 0 and "unchanged since the file it replaced" in again.stdout
    assert contract.read_text(encoding="utf-8") == text

    data = json.loads(text)
    widget = data["resources"]["ui://widget/book-list.html"]
    assert widget["mimeType"] == flavor.value
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", widget["html"])
    assert data["protocol"] == {"legacy": ["2025-11-25"], "modern": ["2026-07-28"]}
    assert set(data["tools"]["list-books"]) == {
        "title",
        "description",
        "annotations",
        "inputSchema",
        "outputSchema",
        "_meta",
    }

    server = serve_project(project)
    try:
        live = appsdk("snapshot", "--url", server.url, "--json")
        code, report = against(contract, "--url", server.url)
    finally:
        stop(server.process)
    assert live.returncode == 0 and live.stdout == text  # live mode records the same bytes
    assert code == 0 and report["changes"] == []


# --- the contract guide's CI job (docs/guides/contract.md) -------------------------------------------


def guide_ci_commands() -> list[str]:
    guide = (REPO / "docs" / "guides" / "contract.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n# \.github/workflows/contract\.yml\n(.*?)```", guide, re.S)
    assert block, "the contract guide's CI example"
    return [m.group(1).strip() for m in re.finditer(r"^\s*- run: (appsdk .*)$", block.group(1), re.M)]


def run_ci(project: Path) -> int:
    """The guide's CI job's appsdk steps, in the project's checkout; the job's result is the first failure."""
    for command in guide_ci_commands():
        result = appsdk(*command.split()[1:], cwd=project)
        assert "Traceback" not in result.stderr
        if result.returncode != 0:
            return result.returncode
    return 0


def test_guide_ci_job_fails_a_pull_request_only_on_a_breaking_change(tmp_path: Path):
    assert guide_ci_commands() == ["appsdk check --against appsdk.contract.json"]
    released = scaffold("book-club", tmp_path / "released").path
    assert appsdk("snapshot", cwd=released).returncode == 0  # the guide: record it, commit it

    def pull_request(name: str, old: str, new: str) -> Path:
        checkout = tmp_path / name
        shutil.copytree(released, checkout)
        server_py = checkout / "server.py"
        source = server_py.read_text(encoding="utf-8")
        assert old in source
        server_py.write_text(source.replace(old, new, 1), encoding="utf-8")
        return checkout

    assert run_ci(released) == 0
    assert run_ci(pull_request("code-only", '"Frankenstein"', '"Dracula"')) == 0
    assert run_ci(pull_request("review", "Lists the book club's next three", "Lists the next three")) == 0
    assert run_ci(pull_request("rename", 'name="list-books"', 'name="show-books"')) == 1
    required = pull_request("required", "month: Annotated[str | None,", "month: Annotated[str,")
    required.joinpath("server.py").write_text(
        required.joinpath("server.py").read_text(encoding="utf-8").replace('e.g. June.")] = None,', 'e.g. June.")],'),
        encoding="utf-8",
    )
    assert run_ci(required) == 1


# --- what a user can get wrong ------------------------------------------------------------------------


def test_contract_file_problems_are_one_line(tmp_path: Path):
    app = str(FIXTURES / "goes-live" / "before")
    missing = appsdk("check", app, "--against", str(tmp_path / "nope.json"))
    assert missing.returncode == 1
    assert "does not exist: record it first with `appsdk snapshot" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1

    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    result = appsdk("check", app, "--against", str(broken))
    assert result.returncode == 1 and "is not valid JSON" in result.stderr and "Traceback" not in result.stderr

    foreign = tmp_path / "package.json"
    foreign.write_text('{"name": "x"}', encoding="utf-8")
    result = appsdk("check", app, "--against", str(foreign))
    assert result.returncode == 1 and "is not an appsdk contract" in result.stderr

    both = appsdk("snapshot", app, "--url", "http://127.0.0.1:9/mcp")
    assert both.returncode == 2 and "not both" in both.stderr


def test_snapshot_of_an_unreachable_server_writes_nothing(tmp_path: Path):
    output = tmp_path / "appsdk.contract.json"
    result = appsdk("snapshot", "--url", f"http://127.0.0.1:{free_port()}/mcp", "-o", str(output), "--timeout", "5")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not output.exists()


def test_snapshot_that_replaces_a_contract_lists_the_changes(tmp_path: Path):
    contract = tmp_path / "appsdk.contract.json"
    record(FIXTURES / "breaking" / "before", contract)
    result = appsdk("snapshot", str(FIXTURES / "breaking" / "after"), "-o", str(contract))
    assert result.returncode == 0  # recording is not judging: the file is what the server is now
    assert "11 changes since the file it replaced" in result.stdout
    assert "breaking: tool `add-card` is gone" in result.stdout
    assert json.loads(contract.read_text(encoding="utf-8"))["server"]["version"] == "1.1.0"


# --- third-party servers --------------------------------------------------------------------------------

MODULES = REPO / "tests" / "interop" / "node_modules" / "@modelcontextprotocol"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed here; the third-party servers need it")
@pytest.mark.parametrize(
    ("package", "args"),
    [("server-system-monitor", []), ("server-everything", ["streamableHttp"])],
    ids=["system-monitor", "everything"],
)
def test_third_party_server_contract_is_stable_and_classified(node_clients, tmp_path: Path, package: str, args: list):
    port = free_port()
    server = serve(["node", str(MODULES / package / "dist" / "index.js"), *args], port, env={"PORT": str(port)})
    contract = tmp_path / "appsdk.contract.json"
    try:
        recorded = appsdk("snapshot", "--url", server.url, "-o", str(contract))
        assert recorded.returncode == 0, recorded.stderr
        again = appsdk("snapshot", "--url", server.url, "--json")
        unchanged_code, unchanged = against(contract, "--url", server.url)

        # An older reviewed version, as the TypeScript SDK (zod) emitted it: one more tool, an argument
        # since dropped, and (where a tool has arguments) a looser schema.
        older = json.loads(contract.read_text(encoding="utf-8"))
        older["tools"]["retired-tool"] = {"description": "Gone now.", "inputSchema": {"type": "object"}}
        first_tool = sorted(older["tools"])[0]
        older["tools"][first_tool]["inputSchema"].setdefault("properties", {})["dropped"] = {"type": "boolean"}
        loosened = next(
            (
                (n, sorted(t["inputSchema"]["properties"])[0])
                for n, t in sorted(older["tools"].items())
                if n != first_tool and t["inputSchema"].get("properties")
            ),
            None,
        )
        if loosened:
            older["tools"][loosened[0]]["inputSchema"]["properties"][loosened[1]] = {}  # the old one took any value
        (tmp_path / "older.json").write_text(dumps(older), encoding="utf-8")
        older_code, report = against(tmp_path / "older.json", "--url", server.url)
    finally:
        stop(server.process)
    assert again.stdout == contract.read_text(encoding="utf-8")
    assert unchanged_code == 0 and unchanged["changes"] == []
    assert older_code == 1
    breaking = lines(report, "breaking")
    assert "tool `retired-tool` was removed" in breaking
    assert f"tool `{first_tool}`'s argument `dropped` was removed" in breaking
    if loosened:
        name, argument = loosened
        prefix = f"tool `{name}`'s input narrowed: `{argument}`: the old schema allows"
        assert any(line.startswith(prefix) for line in breaking), breaking
    assert package != "server-everything" or loosened  # its tools do take arguments


def test_snapshot_of_a_protected_server_without_a_token_says_to_pass_one(tmp_path: Path):
    port = free_port()
    fixture = REPO / "tests" / "fixtures" / "check" / "tools-not-checked"
    server = serve([sys.executable, str(SERVE), str(fixture), str(port)], port)
    output = tmp_path / "appsdk.contract.json"
    try:
        result = appsdk("snapshot", "--url", server.url, "-o", str(output))
    finally:
        stop(server.process)
    assert result.returncode == 1
    assert "wants sign-in: pass --token" in result.stderr and "Traceback" not in result.stderr
    assert not output.exists()  # an empty contract would make every tool look removed


# --- renames at scale: the same answer as comparing each removed tool with each added one ---------------


def _successor_by_scan(old_tools: dict, added: dict) -> dict[str, str | None]:
    """The rule as first written (and as the hint states it): each removed tool, by name, takes the first
    added tool, by name, not yet taken, with the same input schema (having an argument) or description."""
    taken: set[str] = set()
    found: dict[str, str | None] = {}
    for name in sorted(old_tools):
        old = old_tools[name]
        found[name] = None
        for candidate in sorted(added):
            if candidate in taken:
                continue
            tool = added[candidate]
            same_schema = bool((old.get("inputSchema") or {}).get("properties")) and json.dumps(
                old.get("inputSchema"), sort_keys=True
            ) == json.dumps(tool.get("inputSchema"), sort_keys=True)
            if same_schema or (old.get("description") and old.get("description") == tool.get("description")):
                found[name] = candidate
                taken.add(candidate)
                break
    return found


_schemas = st.sampled_from(
    [
        {"type": "object"},
        {"type": "object", "properties": {"q": {"type": "string"}}},
        {"type": "object", "properties": {"n": {"type": "integer"}}},
    ]
)
_tools = st.dictionaries(
    st.text("abcdef", min_size=1, max_size=3),
    st.fixed_dictionaries({"inputSchema": _schemas, "description": st.sampled_from(["", "Find.", "Count.", "Show."])}),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(old_tools=_tools, new_tools=_tools)
def test_renames_are_matched_as_by_scanning_every_added_tool(old_tools: dict, new_tools: dict) -> None:
    removed = {k: v for k, v in old_tools.items() if k not in new_tools}
    added = {k: v for k, v in new_tools.items() if k not in old_tools}
    expected = _successor_by_scan(removed, added)
    changes = compare({"tools": old_tools}, {"tools": new_tools})
    renamed = {}
    for change in changes:
        found = re.match(r"tool `(.+)` is gone, apparently renamed to `(.+)`$", change.change)
        if found:
            renamed[found.group(1)] = found.group(2)
    assert renamed == {k: v for k, v in expected.items() if v is not None}
