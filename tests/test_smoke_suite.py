"""`appsdk test --url`'s generated smoke suite against servers that are not the user's own: it calls no tool
that may write unless told to, says what it left out and why, passes a server with nothing to render, and
names each case after the server. Real `appsdk test` runs against real servers on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer, free_port, serve, stop
from preview_helpers import CHROMIUM

APPSDK = [sys.executable, "-m", "appsdk_cli"]

# One widget tool that writes (it says nothing of readOnlyHint), and whose every call leaves a line in CALL_LOG.
WRITING_SERVER = """\
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

mcp = MCPServer(name="shelf", version="0.0.1", log_level="WARNING")
URI = "ui://shelf/shelf.html"
HTML = "<!doctype html><html><body><p>The shelf is empty.</p></body></html>"
mcp.resource(URI, name="shelf", mime_type="text/html;profile=mcp-app")(lambda: HTML)


@mcp.tool(
    name="empty-shelf",
    description="Deletes every book on the shelf.",
    annotations=ToolAnnotations(destructive_hint=True),
    meta={"ui": {"resourceUri": URI}},
)
def empty_shelf() -> CallToolResult:
    with open(os.environ["CALL_LOG"], "a", encoding="utf-8") as log:
        log.write("emptied\\n")
    return CallToolResult(structured_content={"books": []}, content=[TextContent(type="text", text="emptied")])


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), stateless_http=True, json_response=True)
"""


def run(command: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "APPSDK_URL")}
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment)


@pytest.fixture
def shelf(tmp_path: Path) -> Iterator[tuple[RunningServer, Path]]:
    script = tmp_path / "shelf.py"
    script.write_text(WRITING_SERVER)
    calls = tmp_path / "calls.log"
    port = free_port()
    server = serve([sys.executable, str(script), str(port)], port, env={"CALL_LOG": str(calls)})
    yield server, calls
    stop(server.process)


def test_the_smoke_suite_calls_no_tool_that_may_write_and_lists_it_as_skipped(shelf, tmp_path: Path):
    server, calls = shelf
    if CHROMIUM is None and os.environ.get("CI") != "true":
        # Without a browser no case renders, so no call is made before or after the fix: nothing is proved.
        pytest.skip("Chromium is not installed (apt-get install chromium-headless-shell); CI installs it")
    work = tmp_path / "elsewhere"
    work.mkdir()
    result = run([*APPSDK, "test", "--url", server.url], work)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not calls.exists(), calls.read_text()  # the write was never sent, in any profile
    name = f"127.0.0.1:{server.port}/mcp"
    assert (
        f"  - skipped {name}::test_widget_renders[empty-shelf]: not called: empty-shelf does not say"
        " readOnlyHint: true, so it may write; --include-writes calls it"
    ) in result.stdout, result.stdout
    assert "appsdk test (the generated smoke suite): 0 passed, 1 skipped" in result.stdout


@pytest.mark.browser
def test_include_writes_calls_the_writing_tool_in_each_profile(shelf, tmp_path: Path):
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing in CI: apt-get install chromium-headless-shell")
        pytest.skip("Chromium is not installed (apt-get install chromium-headless-shell); CI installs it")
    server, calls = shelf
    result = run([*APPSDK, "test", "--url", server.url, "--include-writes"], tmp_path)
    # The shelf's page speaks no bridge, so each rendering fails; what matters here is that each was called.
    assert calls.read_text().splitlines() == ["emptied"] * 3, result.stdout + result.stderr
    for profile in ("chatgpt", "mcp-apps", "claude"):
        assert f"127.0.0.1:{server.port}/mcp::test_widget_renders[empty-shelf-{profile}]" in result.stdout
    refused = run([*APPSDK, "test", "--include-writes"], tmp_path)
    assert refused.returncode == 2 and "--include-writes goes with --url or --stdio" in refused.stderr


def test_a_server_without_widgets_passes_skipped_and_its_cases_name_the_server(tmp_path: Path):
    from conftest import serve_fixture

    server = serve_fixture("slow_tool_server.py", "0")
    report = tmp_path / "report.xml"
    try:
        result = run([*APPSDK, "test", "--url", server.url, "--junitxml", str(report)], tmp_path)
    finally:
        stop(server.process)
    assert result.returncode == 0, result.stdout + result.stderr
    case = f"127.0.0.1:{server.port}/mcp::test_widget_renders[no-widgets]"
    assert f"{case} SKIPPED" in result.stdout, result.stdout
    assert (
        f"  - skipped {case}: nothing to render: the server has no tool with a widget (its tools: quick, long-report)"
    ) in result.stdout
    assert "appsdk-test-" not in result.stdout.split("configfile:")[-1].split("\n", 1)[1]  # no temp path in ids
    assert f'classname="127.0.0.1:{server.port}.mcp"' in report.read_text()


def test_a_stdio_servers_cases_are_named_by_its_command(tmp_path: Path):
    from conftest import FIXTURES

    command = f"{sys.executable} {FIXTURES / 'typed_server.py'} stdio"
    result = run([*APPSDK, "test", "--stdio", command], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{command}::test_widget_renders[no-widgets] SKIPPED" in result.stdout, result.stdout
