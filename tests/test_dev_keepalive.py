"""`appsdk dev` keeps connections alive: across requests, and across reloads (the retiring worker hands
them to the next one), while event streams still end on a swap. Real dev processes, real clients."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from conftest import pid_alive, stop
from test_dev import WAIT, edit, start_dev, wait_until
from test_dev_lifetimes import ended_within

from appsdk_cli.scaffold import scaffold

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIST_BOOKS = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list-books", "arguments": {}}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return scaffold("book-club", tmp_path).path


def call(client: httpx.Client, url: str, payload: dict = LIST_BOOKS) -> tuple[dict, int]:
    """The JSON-RPC result, and the client's local port: the same port means the same TCP connection."""
    response = client.post(url, content=json.dumps(payload), headers=HEADERS, timeout=WAIT)
    assert response.status_code == 200, response.text
    body = response.json()
    assert "error" not in body, body
    return body["result"], response.extensions["network_stream"].get_extra_info("client_addr")[1]


def first_title(result: dict) -> str:
    return result["structuredContent"]["books"][0]["title"]


def reloads(dev) -> int:
    return dev.out().count("reloaded")


def test_one_connection_carries_every_request_and_reaches_the_new_code_after_a_save(project: Path):
    dev = start_dev(project)
    try:
        with httpx.Client() as client:
            answers = [call(client, dev.url) for _ in range(5)]
            assert {first_title(result) for result, _ in answers} == {"Frankenstein"}
            ports = {port for _, port in answers}
            assert len(ports) == 1, f"a new connection per request: local ports {sorted(ports)}"
            first_worker = dev.app_pids()

            edit(project / "server.py", '"Frankenstein"', '"Dracula"')
            wait_until(lambda: reloads(dev) == 1, message="the reload line")
            # The very next request on the same client, without a retry: the new code answers it, on the
            # same TCP connection (it moved to the new worker rather than being closed).
            result, port = call(client, dev.url)
            assert first_title(result) == "Dracula"
            assert port in ports
            # Its idle connection did not keep the old worker alive.
            wait_until(lambda: not any(pid_alive(pid) for pid in first_worker), message="the old worker's exit")
            assert first_title(call(client, dev.url)[0]) == "Dracula"
    finally:
        stop(dev.process)


def test_a_request_in_flight_during_the_swap_finishes_and_its_connection_moves_on(project: Path):
    server = project / "server.py"
    server.write_text(
        server.read_text() + '\n\n@mcp.tool()\ndef slow_echo(text: str) -> str:\n    """Echo, slowly."""\n'
        "    import time\n\n    time.sleep(0.8)\n    return text\n"
    )
    dev = start_dev(project)
    slow = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow_echo", "arguments": {}}}
    slow["params"]["arguments"] = {"text": "still here"}
    try:
        with httpx.Client() as client:
            _, port = call(client, dev.url)
            outcome: dict = {}
            caller = threading.Thread(target=lambda: outcome.update(answer=call(client, dev.url, slow)))
            caller.start()
            time.sleep(0.2)  # the slow call is on the old worker
            edit(server, '"Frankenstein"', '"Dracula"')
            caller.join(WAIT)
            result, slow_port = outcome["answer"]
            assert "still here" in json.dumps(result) and slow_port == port
            wait_until(lambda: reloads(dev) == 1, message="the reload line")
            result, next_port = call(client, dev.url)
            assert first_title(result) == "Dracula" and next_port == port
    finally:
        stop(dev.process)


def test_clients_that_keep_going_through_reloads_see_no_error_and_no_stale_answer(project: Path):
    dev = start_dev(project)
    failures: list[str] = []
    answers: list[tuple[float, str]] = []  # (when the request was sent, the title it got)
    reported: list[tuple[float, str]] = []  # (when the reload line was seen, the title it brought)
    done = threading.Event()

    def keep_calling() -> None:
        with httpx.Client() as client:
            for _ in range(20_000):  # bounded, in case `done` never comes
                if done.is_set():
                    return
                sent = time.monotonic()
                try:
                    answers.append((sent, first_title(call(client, dev.url)[0])))
                except Exception as problem:
                    failures.append(repr(problem))

    callers = [threading.Thread(target=keep_calling) for _ in range(4)]
    for caller in callers:
        caller.start()
    try:
        current = "Frankenstein"
        for n in range(4):
            time.sleep(0.3)
            new = f"Edition {n}"
            edit(project / "server.py", f'"{current}"', f'"{new}"')
            wait_until(lambda n=n: reloads(dev) > n, message=f"reload {n}")
            reported.append((time.monotonic(), new))
            current = new
        time.sleep(0.3)
    finally:
        done.set()
        for caller in callers:
            caller.join(WAIT)
        stop(dev.process)
    assert failures == []
    # A request sent once a reload was reported got that reload's code or a newer one, never older.
    order = [title for _, title in reported]
    stale = [
        (title, sent)
        for sent, title in answers
        for seen, expected in reported[::-1]
        if seen < sent and title != expected and (title not in order or order.index(title) < order.index(expected))
    ][:1]
    assert stale == []
    assert {title for _, title in answers} >= set(order)


def open_stream(port: int, path: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the stream before answering"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200"), head
    return sock


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_an_open_event_stream_is_closed_on_a_swap(project: Path, transport: str):
    dev = start_dev(project, "--transport", transport)
    path = "/sse" if transport == "sse" else "/mcp"
    try:
        stream = open_stream(dev.port, path)
        try:
            assert not ended_within(stream, 0.5), "the stream ended by itself"
            edit(project / "server.py", '"Frankenstein"', '"Dracula"')
            wait_until(lambda: reloads(dev) == 1, message="the reload line")
            # Ended and its connection closed (EOF), so the client reconnects, to the new worker.
            assert ended_within(stream, 5), "the retired worker kept its event stream open"
        finally:
            stream.close()
    finally:
        stop(dev.process)
