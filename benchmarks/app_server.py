"""app/read with includeTools over 50 registered apps: cold (every server listed) and warm (cached).

python benchmarks/app_server.py [--apps 50] [--latency-ms 100,250] [--warm-calls 200]

One child process serves every app (an MCPServer each, at /appNN/mcp), which keeps a 2-core machine
from drowning in interpreters. Each app answers tools/list after a fixed delay spread over --latency-ms:
what a real app server far away costs, and what concurrent fetches exist to hide. `--latency-ms 0,0`
measures the fetch machinery alone.

Goals: cold at most 2x the slowest single listing of one app (the fetches overlap); warm under 5 ms
median per call. The peer figure is that slowest single listing, taken sequentially with the same client.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def serve(port: int, count: int, low_ms: float, high_ms: float) -> None:
    import uvicorn
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    from starlette.applications import Starlette

    class RemoteLike(MCPServer):
        delay = 0.0

        async def list_tools(self) -> list[Any]:
            if self.delay:
                await asyncio.sleep(self.delay)
            return await super().list_tools()

    servers = {}
    for number in range(count):
        server = RemoteLike(name=f"Bench app {number:02d}", log_level="WARNING")
        server.delay = (low_ms + (high_ms - low_ms) * number / max(1, count - 1)) / 1000

        @server.tool(name="search", title="Search", annotations=ToolAnnotations(read_only_hint=True))
        def search(query: str = "") -> str:
            return query

        @server.tool(name="update", annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
        def update(key: str, value: str) -> str:
            return value

        @server.tool(name="refresh", meta={"ui": {"visibility": ["app"]}})
        def refresh() -> str:
            return "ok"

        servers[f"app{number:02d}"] = server

    routes = []
    for name, server in servers.items():
        routes += server.streamable_http_app(
            streamable_http_path=f"/{name}/mcp", stateless_http=True, json_response=True
        ).routes

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette):
        async with contextlib.AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    uvicorn.run(Starlette(routes=routes, lifespan=lifespan), host="127.0.0.1", port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the app server exited with {process.returncode}")
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        time.sleep(0.05)
    raise SystemExit(f"nothing listened on {port}")


class Client:
    """`appsdk app-server` over stdio, one request at a time."""

    def __init__(self, home: Path, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "app-server", "--timeout", "30"],
            cwd=cwd,
            env={**os.environ, "APPSDK_HOME": str(home)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        self.next_id += 1
        self.process.stdin.write(json.dumps({"id": self.next_id, "method": method, "params": params}).encode() + b"\n")
        self.process.stdin.flush()
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"{method} failed: {message['error']}")
                return message["result"]

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        self.process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=50)
    parser.add_argument("--latency-ms", default="100,250")
    parser.add_argument("--warm-calls", type=int, default=200)
    parser.add_argument("--serve", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        port, count, low, high = args.serve
        serve(int(port), int(count), float(low), float(high))
        return

    sys.path.insert(0, str(REPO))
    from appsdk_cli.apps.listing import list_app
    from appsdk_cli.apps.registry import RegisteredApp, render_apps

    low, high = (float(part) for part in args.latency_ms.split(","))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), str(args.apps), str(low), str(high)],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server)
        with tempfile.TemporaryDirectory() as folder:
            home, cwd = Path(folder) / "home", Path(folder) / "work"
            home.mkdir()
            cwd.mkdir()
            apps = [
                RegisteredApp(f"app{n:02d}", f"http://127.0.0.1:{port}/app{n:02d}/mcp", f"App {n:02d}")
                for n in range(args.apps)
            ]
            (home / "apps.toml").write_text(render_apps(apps), encoding="utf-8")

            list_app(apps[0], 30)  # warm the server's code paths before timing anything
            singles = []
            for app in apps:
                began = time.perf_counter()
                listing = list_app(app, 30)
                singles.append(time.perf_counter() - began)
                assert len(listing.tools) == 3
            slowest = max(singles)

            client = Client(home, cwd)
            client.call("initialize", {"clientInfo": {"name": "bench", "version": "1"}})
            ids = [app.id for app in apps]
            began = time.perf_counter()
            cold_result = client.call("app/read", {"appIds": ids, "includeTools": True})
            cold = time.perf_counter() - began
            assert len(cold_result["apps"]) == args.apps and not cold_result["missingAppIds"], cold_result
            warm = []
            for _ in range(args.warm_calls):
                began = time.perf_counter()
                client.call("app/read", {"appIds": ids, "includeTools": True})
                warm.append(time.perf_counter() - began)
            client.close()
    finally:
        server.terminate()
        server.wait(timeout=30)

    median_warm = statistics.median(warm)
    ratio = cold / slowest
    print(f"apps: {args.apps}, simulated tools/list latency {low:g}-{high:g} ms, one server process")
    print(
        f"single listing (initialize + tools/list), sequential: slowest {slowest * 1000:.1f} ms, "
        f"median {statistics.median(singles) * 1000:.1f} ms, sum {sum(singles) * 1000:.0f} ms"
    )
    print(
        f"cold app/read includeTools ({args.apps} ids): {cold * 1000:.1f} ms "
        f"= {ratio:.2f}x the slowest single listing (goal <= 2x)"
    )
    print(
        f"warm app/read includeTools ({args.apps} ids), {len(warm)} calls: median {median_warm * 1000:.2f} ms, "
        f"p90 {sorted(warm)[int(len(warm) * 0.9)] * 1000:.2f} ms (goal < 5 ms)"
    )
    print(f"ratio cold/slowest: {ratio:.2f}  warm median ms: {median_warm * 1000:.2f}")


if __name__ == "__main__":
    main()
