"""The stdio transport: a server started as a child process, newline-delimited JSON-RPC on stdin/stdout.

Both eras ride it the same way (stdio has no headers; a 2026-07-28 request carries its `_meta` envelope
in the body alone).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO

from appsdk_cli import httpguard
from appsdk_cli.client.http import DEFAULT_TIMEOUT, ConnectError, Message, ProtocolError
from appsdk_cli.errors import AppsdkError

# How much of the server's stderr a failure message quotes (the rest is in --verbose details).
STDERR_LINES_SHOWN = 6


class StdioTransport:
    """A server started as a child process, speaking newline-delimited JSON-RPC on its stdin/stdout."""

    def __init__(self, command: str, *, timeout: float = DEFAULT_TIMEOUT, cwd: str | None = None) -> None:
        self.description = f"stdio server `{command}`"
        self.timeout = timeout
        try:
            argv = shlex.split(command)
        except ValueError as problem:
            raise ConnectError(f"cannot parse --stdio command {command!r}: {problem}") from problem
        if not argv:
            raise ConnectError("--stdio needs a command, e.g. --stdio 'python server.py'")
        # The server's log goes to a file: quoted when it exits early, in full with --verbose.
        self._log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=cwd, bufsize=0
            )
        except OSError as problem:
            self._log.close()
            raise ConnectError(f"cannot start {self.description}: {problem.strerror or problem}") from problem
        self._buffer = bytearray()
        # One line is one message, read up to this many bytes: a server that never ends a line stops there.
        self.max_message_bytes = httpguard.message_limit()
        self._writing = threading.Lock()
        # Written to by abandon() to wake a read that waits for an answer no one wants any more.
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        # Until a JSON-RPC message arrives, stray output means the command is not an MCP stdio server at all.
        self._spoke_mcp = False

    def set_protocol_version(self, version: str) -> None:
        pass  # stdio carries no headers

    def set_token(self, token: str) -> None:
        pass  # stdio has no bearer tokens

    def _server_log(self) -> str:
        self._log.seek(0)
        return self._log.read()[-4000:].decode("utf-8", "replace")

    def _send(self, message: Message) -> None:
        assert self.process.stdin is not None
        try:
            with self._writing:
                self.process.stdin.write(json.dumps(message).encode() + b"\n")
        except (BrokenPipeError, OSError, ValueError) as problem:  # ValueError: stdin already closed
            raise self._died() from problem

    def send_aside(self, message: Message, *, timeout: float | None = None) -> None:
        self._send(message)  # one line on stdin, while the waiting thread reads stdout

    def abandon(self) -> None:
        # The server keeps running; an answer that comes later has an id no one waits for, and is skipped.
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")

    def _died(self) -> AppsdkError:
        # Its output closing usually means it is exiting: give it a moment so we can say with what code.
        try:
            code: int | None = self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        if not self._spoke_mcp:
            # What it printed before it went says whether it ever meant to speak MCP here.
            printed = self._buffer + self._rest_of_stdout()
            if printed.strip() and not printed.lstrip().startswith(b"{"):
                return self._not_mcp(printed.strip().splitlines()[0])
        state = f"exited with {code}" if code is not None else "closed its output"
        log = self._server_log()
        # The last lines of its stderr usually say why (a traceback's last line, a usage message).
        tail = [line for line in log.strip().splitlines() if line.strip()][-STDERR_LINES_SHOWN:]
        said = ("; its stderr ends:\n  " + "\n  ".join(tail)) if tail else " (it wrote nothing on stderr)"
        return ConnectError(f"{self.description} {state} before answering{said}", detail=log)

    def _rest_of_stdout(self) -> bytes:
        import selectors

        if self.process.stdout is None:
            return b""
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(0.2):
                return b""
            try:
                return os.read(self.process.stdout.fileno(), 65536)
            except OSError:
                return b""

    def _read_line(self, deadline: float) -> bytes:
        import selectors

        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            searched = 0
            while (end := self._buffer.find(b"\n", searched)) < 0:
                searched = len(self._buffer)
                if searched > self.max_message_bytes:
                    raise self._too_large()
                remaining = deadline - time.monotonic()
                ready = selector.select(remaining) if remaining > 0 else []
                if not ready:
                    raise ConnectError(f"{self.description} did not answer within {self.timeout:g} s")
                if any(key.fileobj == self._wake_read for key, _ in ready):
                    os.read(self._wake_read, 64)
                    raise ConnectError(f"the request to {self.description} was abandoned before its answer came")
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    if self._buffer.strip() and not self._spoke_mcp:
                        raise self._not_mcp(self._buffer)
                    raise self._died()
                self._buffer += chunk
        if end > self.max_message_bytes:
            raise self._too_large()
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def _too_large(self) -> ProtocolError:
        return ProtocolError(httpguard.too_large_message(self.description, self.max_message_bytes))

    def _not_mcp(self, line: bytes) -> ConnectError:
        # A ConnectError, not a ProtocolError: no era fallback can help a command that is not an MCP server.
        shown = line[:200].decode("utf-8", "replace").strip()
        return ConnectError(
            f"{self.description} does not speak MCP on stdio: its first output is not JSON-RPC ({shown!r});"
            " is it an HTTP server? Start it with its stdio option, or use --url",
            detail=line[:2000].decode("utf-8", "replace") + "\n--- stderr ---\n" + self._server_log(),
        )

    def exchange(
        self,
        message: Message,
        *,
        on_other: Callable[[Message], Message | None],
        headers: dict[str, str] | None = None,
    ) -> Message | None:
        with contextlib.suppress(OSError):  # an abandon() that came after its answer is not for this one
            os.read(self._wake_read, 64)
        self._send(message)
        if "id" not in message or "method" not in message:
            return None
        deadline = time.monotonic() + self.timeout
        while True:
            line = self._read_line(deadline).strip()
            if not line:
                continue
            try:
                incoming = json.loads(line)
            except RecursionError:
                raise ProtocolError(f"{self.description} sent JSON nested too deeply to read") from None
            except ValueError as problem:
                if not self._spoke_mcp:
                    raise self._not_mcp(line) from problem
                raise ProtocolError(
                    f"{self.description} wrote something that is not JSON-RPC on stdout (logs belong on stderr)",
                    detail=line[:2000].decode("utf-8", "replace"),
                ) from problem
            if not isinstance(incoming, dict) or incoming.get("jsonrpc") != "2.0":
                if not self._spoke_mcp:
                    raise self._not_mcp(line)
                continue
            self._spoke_mcp = True
            if incoming.get("id") == message["id"] and "method" not in incoming:
                return incoming
            reply = on_other(incoming)
            if reply is not None:
                self._send(reply)

    def close(self) -> None:
        # The stdio shutdown the spec describes: close stdin, wait, then SIGTERM, then SIGKILL.
        if self.process.stdin:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        self._log.close()
        for end in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(end)
