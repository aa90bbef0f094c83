"""Issue 37 item 4 for MCP messages, as an attacker would: a hostile server on 127.0.0.1
(tests/hostile_messages.py) answers tools/list with a message that never ends, over each transport.
`appsdk tools` ends with one line naming the server and the limit, exit 1, and its memory stays near
the limit (64 MB), however much the server sends."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer, free_port, serve, stop
from hostile_messages import LIST_BYTES, MANY_TOOLS
from measured import measured as run_measured

SERVER = Path(__file__).resolve().parent / "hostile_messages.py"
QUICK = 30.0
# The limit, the interpreter and appsdk's imports; unbounded, the reader takes up to ADDRESS_SPACE.
MOST_RSS = 256 * 1024**2


@pytest.fixture(scope="module")
def hostile() -> Iterator[RunningServer]:
    port = free_port()
    server = serve([sys.executable, str(SERVER), str(port)], port)
    yield server
    stop(server.process)


def measured(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], int]:
    return run_measured(*args, within=QUICK, env=env)


def refused_in_one_line(result: subprocess.CompletedProcess[str], rss_kib: int, source: str) -> None:
    assert result.returncode == 1, result.stderr[-2000:]
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0] == (
        f"error: {source} sent a message larger than 64 MB; appsdk reads no more of it"
        " (set APPSDK_MAX_MESSAGE_BYTES to a number of bytes to allow more)"
    )
    assert rss_kib * 1024 < MOST_RSS, f"peak RSS {rss_kib} KiB"


@pytest.mark.parametrize("path", ["endless", "lie", "sse", "legacy"])
def test_tools_refuses_a_tools_list_that_never_ends_in_one_line_and_stays_small(hostile, path):
    url = f"http://127.0.0.1:{hostile.port}/{path}"
    result, rss_kib = measured("tools", "--url", url)
    refused_in_one_line(result, rss_kib, url)


def test_tools_refuses_a_stdio_line_that_never_ends_in_one_line_and_stays_small():
    command = f"{sys.executable} {SERVER} --stdio"
    result, rss_kib = measured("tools", "--stdio", command)
    refused_in_one_line(result, rss_kib, f"stdio server `{command}`")


def test_the_limit_is_a_setting_and_a_wrong_one_is_a_usage_error(hostile):
    url = f"http://127.0.0.1:{hostile.port}/endless"
    small, rss_kib = measured("tools", "--url", url, env={"APPSDK_MAX_MESSAGE_BYTES": "5000000"})
    assert small.returncode == 1, small.stderr
    assert small.stderr.startswith(f"error: {url} sent a message larger than 5 MB;"), small.stderr
    assert rss_kib * 1024 < MOST_RSS, f"peak RSS {rss_kib} KiB"
    wrong, _ = measured("tools", "--url", url, env={"APPSDK_MAX_MESSAGE_BYTES": "lots"})
    assert wrong.returncode == 2, wrong.stderr
    expected = "error: APPSDK_MAX_MESSAGE_BYTES='lots' is not a number of bytes, e.g. 64000000"
    assert wrong.stderr.strip() == expected, wrong.stderr


def test_an_honest_list_of_thousands_of_tools_is_read_whole(hostile):
    assert LIST_BYTES > 3_000_000  # larger than the workbench's 5,000-tool list
    result, _ = measured("tools", "--url", f"http://127.0.0.1:{hostile.port}/many", "--json")
    assert result.returncode == 0, result.stderr
    tools = json.loads(result.stdout)
    tools = tools["tools"] if isinstance(tools, dict) else tools
    assert len(tools) == MANY_TOOLS and tools[-1]["name"] == f"tool-{MANY_TOOLS - 1}"
