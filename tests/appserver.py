"""A test client for `appsdk app-server`: the real command in a child process, spoken to over stdio JSONL."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class AppServerProcess:
    def __init__(self, home: Path, cwd: Path, *, timeout: float = 5.0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "app-server", "--timeout", str(timeout)],
            cwd=cwd,
            env={**os.environ, "APPSDK_HOME": str(home)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []  # every message, in arrival order
        self._next_id = 0
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)  # anything that is not one JSON object per line fails the test
            self.received.append(message)
            if "id" not in message:
                self.notifications.append(message)
            self.lines.put(message)
        self.lines.put(None)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def send(self, message: dict[str, Any] | str | bytes) -> None:
        assert self.process.stdin is not None
        if isinstance(message, dict):
            data = json.dumps(message).encode()
        elif isinstance(message, str):
            data = message.encode()
        else:
            data = message
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def wait_for(self, request_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        """The response to `request_id`; other messages are kept (notifications, other responses)."""
        for message in self.received:
            if message.get("id") == request_id and "method" not in message:
                return message
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                message = self.lines.get(timeout=max(0.01, remaining))
            except queue.Empty:
                raise AssertionError(
                    f"no response to {request_id!r} within {timeout} s; stderr: {self.stderr}"
                ) from None
            if message is None:
                raise AssertionError(f"app-server exited ({self.process.poll()}) before answering; {self.stderr}")
            if message.get("id") == request_id and "method" not in message:
                return message

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        request_id = self.new_id()
        message: dict[str, Any] = {"id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_for(request_id, timeout)

    def result(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        response = self.request(method, params, timeout)
        assert "result" in response, response
        return response["result"]

    def initialize(self, opt_out: list[str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"clientInfo": {"name": "tests", "title": "Tests", "version": "1.0"}}
        if opt_out is not None:
            params["capabilities"] = {"optOutNotificationMethods": opt_out}
        result = self.result("initialize", params)
        self.send({"method": "initialized"})
        return result

    def close(self) -> None:
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
