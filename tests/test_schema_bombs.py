"""Issue 25 item 4, as an attacker would: schemas built to hang whoever walks them, from a hostile MCP
server (tests/schema_bombs.py) and a hostile contract file. Each command ends at once with its usual
outcome or a "cannot tell" line, no traceback; deep but finite schemas still get their arguments built
and normal contracts still compare."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer, appsdk, free_port, serve, stop
from schema_bombs import bomb_schema, deep_schema, tree_schema

from appsdk_cli.contract.schemas import gaps
from appsdk_cli.schemawalk import Budget
from appsdk_cli.toolargs import build_arguments, parameters
from appsdk_cli.web.types import typescript
from appsdk_cli.workbench.server import argument_problems

BOMBS = Path(__file__).resolve().parent / "schema_bombs.py"
# Unbounded, each of these ran for hours; bounded, well under a second of work. The limit leaves room for
# interpreter start-up and a network round trip on a loaded machine.
QUICK = 20.0


@pytest.fixture(scope="module")
def bombs() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(BOMBS), str(port)], port)
    yield server
    stop(server.process)


def timed(*args: str, cwd: Path | None = None):
    started = time.monotonic()
    result = appsdk(*args, cwd=cwd, timeout=120)
    elapsed = time.monotonic() - started
    assert "Traceback" not in result.stderr, result.stderr
    assert elapsed < QUICK, f"took {elapsed:.1f} s"
    return result


def one_line_error(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# --- the tool list, call and preview (building arguments from the server's schema) -----------------------


def test_tools_lists_a_schema_bomb_and_its_honest_neighbours(bombs):
    result = timed("tools", "--url", bombs.url, "--timeout", "2")
    assert result.returncode == 0, result.stderr
    assert "q  string, required" in result.stdout  # the bomb's 2^40 branches all end in a string
    assert "count  integer, required" in result.stdout
    assert "tree   object | null, optional" in result.stdout


def test_call_builds_a_schema_bombs_arguments_and_checks_them(bombs):
    result = timed("call", "bomb", "q=hi", "--url", bombs.url, "--timeout", "2")
    assert result.returncode == 0, result.stderr
    assert 'called with {"q": "hi"}' in result.stdout
    wrong = timed("call", "bomb", "--args", '{"q": 1}', "--url", bombs.url, "--timeout", "2")
    assert wrong.returncode == 2
    assert "q must be string, not 1" in one_line_error(wrong)


def test_call_still_builds_deep_but_finite_arguments(bombs):
    tree = json.dumps({"next": {"next": {"next": None}}})
    result = timed("call", "deep", "count=2", f"tree={tree}", "--url", bombs.url)
    assert result.returncode == 0, result.stderr
    sent = json.dumps({"count": 2, "tree": json.loads(tree)}, sort_keys=True)
    assert f"called with {sent}" in result.stdout
    wrong = timed("call", "deep", "count=many", "--url", bombs.url)
    assert wrong.returncode == 2
    assert "count must be integer, not 'many'" in one_line_error(wrong)


def test_preview_of_a_schema_bomb_ends_with_its_one_line(bombs):
    result = timed("preview", "bomb", "q=hi", "--url", bombs.url, "--no-open", "--timeout", "2")
    assert result.returncode == 1
    assert "bomb declares no widget" in one_line_error(result)


def test_a_parameter_past_the_budget_is_cannot_tell_and_takes_any_value():
    honest = parameters(deep_schema())
    assert [(p.name, p.types, p.unknown) for p in honest] == [
        ("count", ("integer",), None),
        ("tree", ("object", "null"), None),
    ]
    (param,) = parameters(bomb_schema(), budget=Budget(steps=10))
    assert param.types == () and param.unknown == "its schema is too complex (more than 10 steps)"
    assert param.describe() == "q (cannot tell: its schema is too complex (more than 10 steps), required)"
    assert build_arguments("bomb", bomb_schema(), ["q=7"], None, budget=Budget(steps=10)) == {"q": 7}


# --- check: a tool's output checked against a bomb ---------------------------------------------------------


def test_check_cannot_tell_whether_output_fits_a_schema_bomb(bombs):
    result = timed("check", "--url", bombs.url, "--timeout", "5", "--json")
    messages = [f["message"] for f in json.loads(result.stdout)["findings"] if f["target"] == "tool bomb-out"]
    # Whichever bound comes first: the step budget, or (on a loaded machine) the validator's 2 s.
    said = "bomb-out: cannot tell whether its output matches its outputSchema: the schema is too complex to check "
    assert any(m in (said + "(more than 50000 steps)", said + "(it took longer than 2 s)") for m in messages), messages


def test_workbench_leaves_a_bombs_arguments_to_the_server_and_still_checks_honest_ones():
    started = time.monotonic()
    assert argument_problems(bomb_schema(), {"q": 1}) == []
    assert time.monotonic() - started < 5
    problems = argument_problems(deep_schema(), {"count": "x"})
    assert problems == ["count: 'x' is not of type 'integer'"]


# --- check --against: a hostile contract file --------------------------------------------------------------


@pytest.fixture
def contract(bombs, tmp_path: Path) -> Path:
    path = tmp_path / "appsdk.contract.json"
    recorded = timed("snapshot", "--url", bombs.url, "-o", str(path))
    assert recorded.returncode == 0, recorded.stderr
    return path


def _edit(path: Path, tool: str, key: str, schema: dict) -> None:
    data = json.loads(path.read_text())
    data["tools"][tool][key] = schema
    path.write_text(json.dumps(data))


def test_a_sixty_level_contract_is_compared_and_honest_changes_still_found(bombs, contract):
    _edit(contract, "bomb", "inputSchema", bomb_schema(60))
    _edit(contract, "bomb", "outputSchema", bomb_schema(60))
    # The honest change next to it: the contract let `count` be a string, the server now wants an integer.
    loose = deep_schema()
    loose["properties"]["count"] = {"type": ["integer", "string"]}
    _edit(contract, "deep", "inputSchema", loose)
    result = timed("check", "--against", str(contract), "--url", bombs.url, "--timeout", "2", "--json")
    assert result.returncode == 1, result.stderr
    changes = json.loads(result.stdout)["changes"]
    breaking = [c["change"] for c in changes if c["impact"] == "breaking"]
    narrowed = "tool `deep`'s input narrowed: `count`: the old schema allows type string; the new one does not"
    assert breaking == [narrowed]
    assert any("tool `bomb`" in c["change"] for c in changes)


def test_a_contract_too_complex_to_compare_says_cannot_tell(bombs, contract):
    _edit(contract, "tree", "inputSchema", tree_schema(60, leaf="integer"))  # 2^60 places, each a change
    result = timed("check", "--against", str(contract), "--url", bombs.url, "--timeout", "2", "--json")
    changes = json.loads(result.stdout)["changes"]
    (tree,) = [c for c in changes if "tool `tree`" in c["change"]]
    assert tree["impact"] == "needs-review" and tree["certain"] is False
    assert "cannot tell" in tree["change"] and "too complex to compare" in tree["change"]


def test_timeout_bounds_a_comparison_however_many_steps_it_may_take():
    started = time.monotonic()
    found = gaps(tree_schema(60, "string"), tree_schema(60, "integer"), budget=Budget.within(0.5, steps=10**9))
    assert time.monotonic() - started < 3
    assert [g.message for g in found] == [
        "the whole value: cannot tell whether it still fits (the schemas are too complex to compare: "
        "it took longer than 0.5 s)"
    ]
    honest = gaps(tree_schema(4, "string"), tree_schema(4, "integer"))
    assert len(honest) == 2**4 and all(g.certain for g in honest)


# --- types: a schema nested past any real model ------------------------------------------------------------


def test_types_of_a_schema_nested_hundreds_deep_are_unknown_below_a_bound():
    schema: dict = {"type": "string"}
    for _ in range(450):
        schema = {"type": "object", "properties": {"a": schema}}
    text = typescript([{"name": "nested", "outputSchema": json.loads(json.dumps(schema))}])
    assert "a?: unknown;" in text


# --- the workbench in a real browser ---------------------------------------------------------------------


def test_the_workbench_draws_hostile_forms_at_once_and_runs_the_bomb(browser, bombs):
    from appsdk_cli.connection import Target
    from appsdk_cli.workbench import Workbench

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        with Workbench(Target(url=bombs.url)) as bench:
            page.goto(bench.url)
            page.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
            page.click('#tool-list .tool-item[data-tool="wide"]', timeout=10_000)  # 10^8 fields unbounded
            note = page.locator("#form-pane").get_by_text("Too many fields to draw: type this part as JSON.")
            assert note.first.is_visible(timeout=10_000)
            assert page.locator("#form-pane .field").count() < 1000
            page.click('#tool-list .tool-item[data-tool="bomb"]', timeout=10_000)
            page.click("#tab-json")
            page.fill("#json-editor", '{"q": "hi"}')
            page.click("#run-button")
            page.wait_for_function(
                "() => { const runs = window.appsdkWorkbench.runs();"
                " return runs.length && runs[0].status !== 'running'; }",
                timeout=20_000,
            )
            run = page.evaluate("() => window.appsdkWorkbench.runs()[0]")
            assert run["status"] == "done", run
            assert run["arguments"] == {"q": "hi"}
    finally:
        context.close()
    assert not errors, f"the workbench page threw: {errors}"


def test_a_schema_nested_past_the_stack_is_one_line_everywhere():
    from appsdk_cli.checks.schemas import instance_problem, schema_problem
    from appsdk_cli.schemawalk import TooComplex

    node: dict = {"type": "string"}
    for _ in range(420):  # about as deep as JSON parses
        node = {"anyOf": [node, {"type": "null"}]}
    schema = json.loads(json.dumps({"type": "object", "properties": {"x": node}}))
    assert schema_problem(schema) == "is nested too deeply to check (hosts that walk it fail too)"
    with pytest.raises(TooComplex, match="nested too deeply"):
        instance_problem(schema, {"x": 1})
    assert argument_problems(schema, {"x": 1}) == []
    assert [g.certain for g in gaps(schema, {"type": "object", "properties": {"x": {"type": "integer"}}})] == [False]
    assert parameters(schema)[0].types == ("string", "null")  # memoised, it fits in the stack
