"""The child that serves the project's app for a test session: `python -m appsdk_cli.testing.appserver DIR`.

It imports the app the way `appsdk dev` and `check` find it (`[tool.appsdk] app`, else server:mcp, through
snapshot/loader.py, so a broken app is the same one line), serves it over streamable HTTP on a free
loopback port, and prints `listening PORT` on stdout. A failure is one line on stderr and exit code 1.
No reloads, no workbench, no .appsdk/dev.json: a test session must not disturb a running `appsdk dev`.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

READY = "listening"


def main(argv: list[str]) -> int:
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.project import app_target
    from appsdk_cli.snapshot.loader import TargetMissing, failure_line, import_server

    project = Path(argv[0] if argv else ".").resolve()
    try:
        target = app_target(project)
        server = import_server(project, target.module, target.attribute, target.describe())
    except (AppsdkError, TargetMissing) as problem:
        print(str(problem), file=sys.stderr, flush=True)
        return 1
    except BaseException as problem:  # the app's own import failed: say where, in one line
        print(failure_line(problem, project), file=sys.stderr, flush=True)
        return 1
    make_app = getattr(server, "streamable_http_app", None)
    if not callable(make_app):
        print(f"{target.spec} is a low-level mcp Server; the test session serves an MCPServer", file=sys.stderr)
        return 1
    import uvicorn

    _exit_with_parent()

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    asgi = make_app(stateless_http=True, json_response=True, host="127.0.0.1")
    config = uvicorn.Config(asgi, log_level="warning", lifespan="on")
    served = uvicorn.Server(config)
    print(f"{READY} {listener.getsockname()[1]}", flush=True)
    served.run(sockets=[listener])
    return 0


def _exit_with_parent() -> None:
    """A test session killed outright (SIGKILL, a closed terminal) cannot stop its app; the app stops itself
    once its parent is gone, rather than holding its port for good."""
    import os
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="appsdk-parent-watch").start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
