"""A loopback reverse proxy that records every HTTP exchange on its way to a real server.

Tests put it in front of `appsdk dev` to count what the server sees: each request's HTTP method and
JSON-RPC method, as the server receives them. Answers are passed back whole (streams included, once
they end), so it suits request/response exchanges, not a long-lived GET stream.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


@dataclass
class Exchanges:
    seen: list[tuple[str, str]] = field(default_factory=list)  # (HTTP method, JSON-RPC method or "")
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clear(self) -> None:
        with self.lock:
            self.seen.clear()

    @property
    def rpc(self) -> list[str]:
        with self.lock:
            return [f"{verb} {method}".strip() for verb, method in self.seen]


@contextmanager
def counting_proxy(upstream_port: int) -> Iterator[tuple[int, Exchanges]]:
    """(the proxy's port, the exchanges it forwarded) while the block runs."""
    exchanges = Exchanges()

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            try:
                method = json.loads(body).get("method", "") if body else ""
            except (ValueError, AttributeError):
                method = "?"
            with exchanges.lock:
                exchanges.seen.append((self.command, method))
            upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers["Host"] = f"127.0.0.1:{upstream_port}"
            upstream.request(self.command, self.path, body=body, headers=headers)
            answer = upstream.getresponse()
            payload = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            upstream.close()

        do_GET = do_POST = do_DELETE = _forward

    server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], exchanges
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
