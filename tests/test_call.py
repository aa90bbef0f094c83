"""`appsdk call`, `tools`, `resources` and `read`: the real CLI against real server processes."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, RunningServer, appsdk, free_port, serve_fixture, serve_project, stop

from appsdk_cli.appmeta import is_protocol_meta_key
from appsdk_cli.scaffold import WidgetFlavor, scaffold

WIDGET = "ui://widget/book-list.html"
PICKS = [
    {"title": "Frankenstein", "author": "Mary Shelley"},
    {"title": "Pride and Prejudice", "author": "Jane Austen"},
    {"title": "The Time Machine", "author": "H. G. Wells"},
]
PLAN_TRIP_PARAMS = "plan-trip takes: city (string, required), nights (integer, required), budget (number)"


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Iterator[tuple[Path, RunningServer]]:
    """One scaffolded book-club app, served for the whole module (both flavors are covered below)."""
    project = scaffold("book-club", tmp_path_factory.mktemp("app"), flavor=WidgetFlavor.MCP_APPS).path
    server = serve_project(project)
    yield project, server
    stop(server.process)


@pytest.fixture(scope="module")
def call_log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("log") / "calls.txt"


@pytest.fixture(scope="module")
def typed(call_log: Path) -> Iterator[RunningServer]:
    """The typed fixture server (stateless JSON), recording each plan-trip call it receives."""
    server = serve_fixture("typed_server.py", env={"CALL_LOG": str(call_log)})
    yield server
    stop(server.process)


@pytest.fixture
def free_url() -> str:
    """A URL on 127.0.0.1 where nothing listens."""
    return f"http://127.0.0.1:{free_port()}/mcp"


@pytest.fixture(autouse=True)
def no_appsdk_url(monkeypatch):
    # A developer's own APPSDK_URL must not steer these tests.
    monkeypatch.delenv("APPSDK_URL", raising=False)


def one_line_error(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_call_list_books_human(app):
    _, server = app
    result = appsdk("call", "list-books", "--url", server.url)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Fetching the picks" in out and "Here are the picks" in out
    assert WIDGET in out
    assert "structuredContent" in out and '"author": "Mary Shelley"' in out
    assert "The book club's next 3 picks: Frankenstein by Mary Shelley" in out
    assert "_meta" in out and '"pickedBy": "book-club"' in out
    # The 2026-07-28 era puts serverInfo in every result's _meta: the protocol's, not the widget's data.
    assert "io.modelcontextprotocol/serverInfo" not in out
    assert result.stderr == ""


def test_call_json_is_the_wire_result(app):
    _, server = app
    result = appsdk("call", "list-books", "--url", server.url, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1  # one object, nothing else
    wire = json.loads(result.stdout)
    # The 2026-07-28 wire: resultType, and the server's identity in every result's _meta.
    assert set(wire) == {"content", "structuredContent", "isError", "_meta", "resultType"}
    assert wire["isError"] is False and wire["resultType"] == "complete"
    assert wire["structuredContent"] == {"books": PICKS}
    assert wire["_meta"].pop("io.modelcontextprotocol/serverInfo")["name"] == "book-club"
    # mcp 2.x leaves null values out of a 2026-07-28 _meta; the 2025 wire keeps them.
    assert wire["_meta"] == {"pickedBy": "book-club"}
    handshake = json.loads(
        appsdk("call", "list-books", "--url", server.url, "--json", "--protocol", "2025-11-25").stdout
    )
    assert set(handshake) == {"content", "structuredContent", "isError", "_meta"}
    assert handshake["_meta"] == {"month": None, "pickedBy": "book-club"}
    assert wire["content"] == [
        {
            "type": "text",
            "text": "The book club's next 3 picks: Frankenstein by Mary Shelley; "
            "Pride and Prejudice by Jane Austen; The Time Machine by H. G. Wells.",
        }
    ]


@pytest.mark.parametrize(
    "given", [["month=June"], ["--args", '{"month": "June"}'], ["--args", '{"month": 1}', "month=June"]]
)
def test_call_arguments(app, given):
    _, server = app
    result = appsdk("call", "list-books", *given, "--url", server.url, "--json")
    assert result.returncode == 0, result.stderr
    wire = json.loads(result.stdout)
    assert wire["_meta"]["month"] == "June"
    assert " for June: " in wire["content"][0]["text"]


def test_values_are_converted_by_the_input_schema(typed):
    words = ["city=42", "nights=3", "budget=2.5", "vegan=true", 'stops=["Bergen", "Flåm"]', 'options={"rail": true}']
    result = appsdk("call", "plan-trip", *words, "--url", typed.url, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structuredContent"] == {
        "city": "42",  # a string parameter keeps the text as typed
        "nights": 3,
        "budget": 2.5,
        "vegan": True,
        "stops": ["Bergen", "Flåm"],
        "options": {"rail": True},
    }
    # anyOf [number, null]: an integral budget is sent as a JSON integer, and null as null.
    result = appsdk("call", "plan-trip", "city=Oslo", "nights=1", "budget=7", "--url", typed.url, "--json")
    assert json.loads(result.stdout)["structuredContent"]["budget"] == 7
    result = appsdk("call", "plan-trip", "city=Oslo", "nights=1", "budget=null", "--url", typed.url, "--json")
    assert json.loads(result.stdout)["structuredContent"]["budget"] is None


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (["city=Oslo", "nights=2", "nigths=3"], "plan-trip has no parameter 'nigths'"),
        (["city=Oslo", "nights=two"], "nights must be integer, not 'two'"),
        (["city=Oslo", "nights=2", "vegan=maybe"], "vegan must be boolean, not 'maybe'"),
        (["city=Oslo", "nights=2", "stops=Bergen"], "stops must be array (as JSON), not 'Bergen'"),
        (["city=Oslo"], "plan-trip needs nights"),
        (["--args", '{"city": "Oslo", "nights": "2"}'], 'nights must be integer, not "2"'),
        (["--args", "[1]"], "--args must be a JSON object"),
        (["--args", "{nope"], "--args is not valid JSON"),
        (["Oslo"], "'Oslo' is not KEY=VALUE"),
    ],
)
def test_bad_arguments_are_refused_before_sending(typed, call_log, words, says):
    before = call_log.read_text() if call_log.exists() else ""
    result = appsdk("call", "plan-trip", *words, "--url", typed.url)
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_line_error(result)
    assert says in line
    if not says.startswith("--args"):
        assert PLAN_TRIP_PARAMS in line
    assert result.stdout == ""
    after = call_log.read_text() if call_log.exists() else ""
    assert after == before, "the refused call reached the server"


def test_refusal_check_sees_real_calls(typed, call_log):
    """The call log the refusal test relies on does record calls that are sent."""
    before = call_log.read_text() if call_log.exists() else ""
    assert appsdk("call", "plan-trip", "city=Lima", "nights=1", "--url", typed.url).returncode == 0
    assert call_log.read_text() == before + "plan-trip Lima\n"


def test_unknown_tool_names_the_closest(app):
    _, server = app
    result = appsdk("call", "list-book", "--url", server.url)
    assert result.returncode == 2
    assert "no tool 'list-book'; did you mean list-books?" in one_line_error(result)


def test_is_error_exits_1(typed):
    result = appsdk("call", "fail", "reason=nope", "--url", typed.url)
    assert result.returncode == 1
    assert "fail returned isError: cannot do that: nope" in one_line_error(result)
    assert "isError" in result.stdout and "cannot do that: nope" in result.stdout
    as_json = appsdk("call", "fail", "--url", typed.url, "--json")
    assert as_json.returncode == 1
    wire = json.loads(as_json.stdout)
    assert wire.pop("_meta")["io.modelcontextprotocol/serverInfo"]["name"] == "typed-fixture"
    assert wire == {
        "content": [{"type": "text", "text": "cannot do that: it broke"}],
        "isError": True,
        "resultType": "complete",
    }


def test_unreachable_server_is_one_line(free_url):
    result = appsdk("call", "list-books", "--url", free_url)
    assert result.returncode == 1
    line = one_line_error(result)
    assert f"cannot reach the MCP server at {free_url}" in line and "refused" in line
    verbose = appsdk("call", "list-books", "--url", free_url, "--verbose")
    assert verbose.returncode == 1 and "ConnectionRefusedError" in verbose.stderr and "Traceback" not in verbose.stderr
    for command in (["tools"], ["resources"], ["read", WIDGET]):
        other = appsdk(*command, "--url", free_url)
        assert other.returncode == 1 and "cannot reach" in one_line_error(other)


def test_https_to_a_plain_http_server_says_to_use_http(app):
    _, server = app
    https = server.url.replace("http://", "https://")
    for command in (["call", "list-books"], ["tools"], ["resources"]):
        result = appsdk(*command, "--url", https)
        assert result.returncode == 1, result.stderr
        assert one_line_error(result) == (
            f"error: the server at 127.0.0.1:{server.port} speaks plain http, not https; use {server.url}"
        )


def test_not_an_mcp_endpoint(app):
    _, server = app
    result = appsdk("tools", "--url", server.url.replace("/mcp", "/nothing-here"))
    assert result.returncode == 1
    assert "HTTP 404" in one_line_error(result)


def test_bad_options_exit_2(app):
    _, server = app
    assert appsdk("call", "list-books", "--url", server.url, "--stdio", "python x.py").returncode == 2
    assert appsdk("call", "list-books", "--url", server.url, "--meta", "[]").returncode == 2
    assert appsdk("call", "list-books", "--url", server.url, "--timeout", "nope").returncode == 2
    assert appsdk("call").returncode == 2


def test_tools_show_apps_sdk_metadata(app):
    _, server = app
    result = appsdk("tools", "--url", server.url)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "1 tool " in out and "list-books" in out and "Show book club picks" in out
    assert f"widget: {WIDGET}" in out
    assert "invoking: Fetching the picks" in out and "invoked: Here are the picks" in out
    assert "hints: read-only, not destructive, closed-world" in out
    # No _meta.ui.visibility: MCP Apps' default, so the standard bridge may call it and window.openai may not.
    assert "visibility: model and app (the default: no ui.visibility)" in out
    assert "widget calls: MCP Apps bridge yes; window.openai.callTool no (needs openai/widgetAccessible: true)" in out
    wire = json.loads(appsdk("tools", "--url", server.url, "--json").stdout)
    assert [t["name"] for t in wire["tools"]] == ["list-books"]
    assert wire["tools"][0]["_meta"]["openai/outputTemplate"] == WIDGET


def test_tools_show_visibility(typed):
    out = appsdk("tools", "--url", typed.url).stdout
    assert "hints: read-only, not destructive, open-world" in out
    assert "visibility: app (ui.visibility ['app']); openai/visibility private (deprecated)" in out
    assert "widget calls: MCP Apps bridge yes; window.openai.callTool yes" in out
    assert "hints: none (no annotations)" in out and "?" not in out


def test_resources_and_read_in_both_flavors(book_club_server, book_club: Path):
    flavor = (book_club / "server.py").read_text().split('WIDGET_MIME_TYPE = "', 1)[1].split('"', 1)[0]
    listed = appsdk("resources", "--url", book_club_server.url)
    assert listed.returncode == 0, listed.stderr
    assert f"{WIDGET}  {flavor} widget" in listed.stdout
    wire = json.loads(appsdk("resources", "--url", book_club_server.url, "--json").stdout)
    # the example skill's files (SEP-2640: each file of a skill is a resource; registered with the server,
    # so listed first), then the widget
    assert [(r["uri"], r["mimeType"]) for r in wire["resources"]] == [
        ("skill://book-club-picks/SKILL.md", "text/markdown"),
        ("skill://book-club-picks/reference/answers.md", "text/markdown"),
        (WIDGET, flavor),
    ]

    html = (book_club / "widgets" / "book-list.html").read_text()
    read = appsdk("read", WIDGET, "--url", book_club_server.url)
    assert read.returncode == 0, read.stderr
    assert read.stdout.startswith(f"{WIDGET}  {flavor}\n")
    assert html in read.stdout and '"connectDomains": []' in read.stdout
    read_json = json.loads(appsdk("read", WIDGET, "--url", book_club_server.url, "--json").stdout)
    assert read_json["contents"][0]["text"] == html
    assert read_json["contents"][0]["_meta"]["openai/widgetCSP"] == {"connect_domains": [], "resource_domains": []}


def test_read_unknown_uri_names_the_closest(app):
    _, server = app
    result = appsdk("read", "ui://widget/book-lists.html", "--url", server.url)
    assert result.returncode == 2
    assert f"did you mean {WIDGET}?" in one_line_error(result)


def test_server_from_appsdk_url(app, tmp_path: Path):
    _, server = app
    result = appsdk("call", "list-books", "--json", cwd=tmp_path, env={"APPSDK_URL": server.url})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structuredContent"] == {"books": PICKS}


def test_server_from_dev_json(app):
    from test_dev import start_dev

    project, _ = app
    # dev.json counts only while the process it names is a live `appsdk dev`: a real one writes it.
    dev = start_dev(project)
    try:
        result = appsdk("tools", "--json", cwd=project / "widgets")  # a subfolder finds the project's dev.json
        assert result.returncode == 0, result.stderr
        assert [t["name"] for t in json.loads(result.stdout)["tools"]] == ["list-books"]
    finally:
        stop(dev.process)


def _with_dev_on_the_default_url(project: Path, commands: list[tuple[Path, list[str]]]) -> list[dict]:
    """`appsdk dev` of `project` on 127.0.0.1:8000, and each command run while it serves: in a network
    namespace of our own where one can be made (port 8000 is then free whatever else runs here), else on
    this machine's port 8000 if it is free, else skipped."""
    import os

    from conftest import run_owning_port_8000

    driver = [sys.executable, str(FIXTURES / "default_url_dev.py"), str(project)]
    driver.append(json.dumps([{"cwd": str(cwd), "args": args} for cwd, args in commands]))
    env = {**os.environ}
    env.pop("APPSDK_URL", None)
    done = run_owning_port_8000(driver, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_another_projects_dev_on_the_default_url_is_refused(tmp_path: Path):
    """In a project whose dev is not running, call/tools/preview do not quietly answer with the app that
    another project's `appsdk dev` serves on the default URL; an explicit --url to it still works."""
    other = scaffold("other-club", tmp_path / "other").path
    this = scaffold("book-club", tmp_path / "this").path
    outside = tmp_path / "no-project"
    outside.mkdir()
    default = "http://127.0.0.1:8000/mcp"
    results = _with_dev_on_the_default_url(
        other,
        [
            (this, ["call", "list-books"]),
            (this / "widgets", ["tools"]),
            (this, ["preview", "list-books", "--no-open"]),
            (this, ["preview", "--no-open"]),
            (this, ["call", "list-books", "--url", default, "--json"]),
            (outside, ["tools", "--json"]),
        ],
    )
    expected = (
        f"error: {default} is served by the `appsdk dev` of another project ({other.resolve()}); start this"
        f" project's with `appsdk dev --port 0` (that one holds the port), or pass --url {default} to use that one"
    )
    for result in results[:4]:
        assert result["code"] == 1 and result["stdout"] == "", result
        assert result["stderr"].strip().splitlines() == [expected], result["stderr"]
    explicit, elsewhere = results[4:]
    assert explicit["code"] == 0 and json.loads(explicit["stdout"])["structuredContent"]["books"], explicit
    # Outside any project there is no app of our own to mistake that one for: the default is used.
    assert elsewhere["code"] == 0 and json.loads(elsewhere["stdout"])["tools"], elsewhere


def test_request_meta_hints_reach_the_server(typed):
    result = appsdk(
        "call",
        "echo-meta",
        "--locale",
        "nb-NO",
        "--user-agent",
        "ChatGPT/1.0 (test)",
        "--user-location",
        '{"city": "Oslo", "country": "NO"}',
        "--meta",
        '{"openai/subject": "u-1"}',
        "--url",
        typed.url,
        "--json",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structuredContent"]["meta"] == {
        "openai/locale": "nb-NO",
        "openai/userAgent": "ChatGPT/1.0 (test)",
        "openai/userLocation": {"city": "Oslo", "country": "NO"},
        "openai/subject": "u-1",
    }


def test_stateful_sse_server():
    """Sessions and text/event-stream answers, with a log notification ahead of the result."""
    server = serve_fixture("typed_server.py", "--stateful")
    try:
        result = appsdk("call", "echo-meta", "--locale", "fr-FR", "--url", server.url, "--json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["structuredContent"] == {"meta": {"openai/locale": "fr-FR"}}
        tools = appsdk("tools", "--url", server.url, "--json")
        assert [t["name"] for t in json.loads(tools.stdout)["tools"]] == ["plan-trip", "fail", "echo-meta"]
    finally:
        stop(server.process)


def test_stdio_server(tmp_path: Path):
    command = f'"{sys.executable}" "{FIXTURES / "typed_server.py"}" stdio'
    result = appsdk("call", "plan-trip", "city=Rome", "nights=2", "--stdio", command, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structuredContent"]["city"] == "Rome"
    listed = appsdk("resources", "--stdio", command)
    assert "ui://widget/plain.html  text/html;profile=mcp-app widget" in listed.stdout
    refused = appsdk("call", "plan-trip", "nights=x", "--stdio", command)
    assert refused.returncode == 2
    broken = appsdk("tools", "--stdio", f'"{sys.executable}" -c "import sys; sys.exit(3)"')
    assert broken.returncode == 1 and "exited with 3 before answering" in one_line_error(broken)
    missing = appsdk("tools", "--stdio", "no-such-command-for-appsdk")
    assert missing.returncode == 1 and "cannot start" in one_line_error(missing)


@pytest.mark.parametrize(
    ("key", "reserved"),
    [
        ("io.modelcontextprotocol/serverInfo", True),
        ("modelcontextprotocol.io/x", True),
        ("dev.mcp/x", True),
        ("api.modelcontextprotocol.org/x", True),
        ("openai/outputTemplate", False),
        ("com.example/mcp", False),
        ("com.example.mcp/x", False),
        ("mcp", False),
        ("pickedBy", False),
    ],
)
def test_protocol_meta_keys_are_told_from_the_apps(key, reserved):
    assert is_protocol_meta_key(key) is reserved


@pytest.fixture(scope="module")
def seams() -> Iterator[RunningServer]:
    """tests/fixtures/seams_server.py: a task-only tool, tools with some or no annotations, a resource template."""
    server = serve_fixture("seams_server.py")
    yield server
    stop(server.process)


def test_tools_say_which_annotations_are_missing_and_which_tool_needs_tasks(seams):
    # execution.taskSupport is a 2025-11-25 field (2026-07-28 servers leave it out): asked in that era.
    result = appsdk("tools", "--url", seams.url, "--protocol", "2025-11-25")
    assert result.returncode == 0, result.stderr
    blocks = {block.splitlines()[0]: block for block in result.stdout.split("\n\n")[1:]}
    assert "hints: none (no annotations)" in blocks["bare"] and "?" not in result.stdout
    assert "hints: read-only (not declared: destructiveHint, openWorldHint)" in blocks["half"]
    assert (
        "tasks: required (runs only as an MCP task: appsdk call sends it as one and waits for its result)"
        in (blocks["research"])
    )
    assert "tasks:" not in blocks["bare"]


def test_a_task_only_tool_on_a_server_without_tasks_is_refused_before_it_is_sent(seams):
    # A plain tools/call would be refused (-32601): said plainly instead. server-everything, which offers
    # tasks, runs one (test_eras_interop.py).
    result = appsdk("call", "research", "topic=moths", "--url", seams.url, "--protocol", "2025-11-25")
    assert result.returncode == 1
    assert one_line_error(result) == (
        'error: research runs only as an MCP task (its execution.taskSupport is "required"), but the server'
        " does not offer tasks (no tasks.requests.tools.call capability)"
    )


def test_resources_lists_the_resource_templates_too(seams):
    result = appsdk("resources", "--url", seams.url)
    assert result.returncode == 0, result.stderr
    assert "1 resource template (fill in the {…} to read one)" in result.stdout
    assert "books://{book_id}  application/json" in result.stdout and "One book by id" in result.stdout
    wire = json.loads(appsdk("resources", "--url", seams.url, "--json").stdout)
    assert [t["uriTemplate"] for t in wire["resourceTemplates"]] == ["books://{book_id}"]
    assert [r["uri"] for r in wire["resources"]] == ["ui://widget/card.html"]


def _on_a_terminal(*args: str, timeout: float = 60) -> str:
    """The real `appsdk` with a pseudo-terminal for its stdout and stderr: what a person sees."""
    import pty
    import subprocess

    leader, follower = pty.openpty()
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    process = subprocess.Popen(
        [sys.executable, "-m", "appsdk_cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**env, "TERM": "xterm-256color", "COLUMNS": "120"},
    )
    os.close(follower)
    seen = b""
    try:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
        process.wait(timeout=timeout)
    return seen.decode()


def test_call_colours_its_json_on_a_terminal_and_keeps_it_plain_elsewhere(app):
    _, server = app
    shown = _on_a_terminal("call", "list-books", "--url", server.url)
    block = shown.split("structuredContent", 1)[1].split("content", 1)[0]
    # Keys and strings each in colour (the heading's own bold ends before the block).
    assert re.search(r'\x1b\[[0-9;]*m"author"', block) and re.search(r'\x1b\[[0-9;]*m"Mary Shelley"', block), shown
    piped = appsdk("call", "list-books", "--url", server.url)
    assert "\x1b" not in piped.stdout and '"author": "Mary Shelley"' in piped.stdout
    plain = piped.stdout.split("structuredContent\n", 1)[1].split("content\n", 1)[0]
    wire = json.loads(appsdk("call", "list-books", "--url", server.url, "--json").stdout)
    assert plain == json.dumps(wire["structuredContent"], indent=2, ensure_ascii=False) + "\n"
