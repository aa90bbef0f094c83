"""Run the conformance suite's runner (run-against-host.py) against a host with the spec's sandbox proxy.

The runner finds the view as the host page's `iframe#widget` and reads the suite's page in that frame.
Behind the sandbox proxy the MCP Apps spec has a web host put around each view, `iframe#widget` is the
proxy and the view is its one child frame. This wrapper makes Playwright's `ElementHandle.content_frame()`
step through a frame served at `/proxy` to the view inside it, and changes nothing else: the suite's
checks, their verdicts and the runner's reading of them are the runner's own.

    python through_sandbox_proxy.py RUNNER [RUNNER ARGS...]
"""

from __future__ import annotations

import runpy
import sys
import time
from urllib.parse import urlsplit

from playwright.sync_api import ElementHandle

PROXY_PATH = "/proxy"
_content_frame = ElementHandle.content_frame


def _view_through_proxy(self: ElementHandle):
    frame = _content_frame(self)
    if frame is None or urlsplit(frame.url).path != PROXY_PATH:
        return frame
    deadline = time.monotonic() + 30
    while not frame.child_frames:  # the proxy frames the view once the host page hands it the resource
        if time.monotonic() > deadline:
            raise RuntimeError("the sandbox proxy framed no view within 30 s")
        frame.page.wait_for_timeout(50)
    return frame.child_frames[0]


ElementHandle.content_frame = _view_through_proxy  # type: ignore[method-assign]

if __name__ == "__main__":
    runner = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(runner, run_name="__main__")
