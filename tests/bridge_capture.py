"""Record every postMessage between the preview's host page and its widget, and judge the host's side
by the MCP Apps spec's own schemas (tests/interop/validate-host-messages.mjs, the pinned ext-apps SDK).

The recorder is a Playwright init script, so it runs in the host page, the sandbox proxy and the view
before any of their own scripts: the view records what reaches it from its parent (host→view, forwarded
by the proxy), the proxy records the host page's messages to the proxy itself (host→sandbox), the host
page records what comes up (view→host, and the proxy's own sandbox→host). All report through one exposed
binding, with epoch timestamps so the frames' records interleave in order.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

INTEROP = Path(__file__).resolve().parent / "interop"

RECORDER = """(() => {
  const at = () => performance.timeOrigin + performance.now();
  const top = window === window.top;
  const proxy = !top && location.pathname === "/proxy";
  const sandboxMessage = (data) =>
    Boolean(data && typeof data.method === "string" && data.method.startsWith("ui/notifications/sandbox-"));
  window.addEventListener("message", (event) => {
    let data;
    try { data = JSON.parse(JSON.stringify(event.data)); } catch { data = String(event.data); }
    let dir = null;
    if (top && event.source !== window) dir = sandboxMessage(data) ? "sandbox→host" : "view→host";
    else if (proxy && event.source === window.parent) dir = sandboxMessage(data) ? "host→sandbox" : null;
    else if (!top && !proxy && event.source === window.parent) dir = "host→view";
    if (dir) window.__appsdkRecord({ dir, at: at(), data, ports: event.ports.length });
  }, true);
})();"""


class BridgeRecorder:
    """Attach to a Playwright browser context before opening the page; `records` fills as messages flow."""

    def __init__(self, context: Any) -> None:
        self.records: list[dict[str, Any]] = []
        context.expose_binding("__appsdkRecord", lambda _source, record: self.records.append(record))
        context.add_init_script(RECORDER)

    def host_to_view(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["dir"] == "host→view"]


def validate(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One verdict per host→view message, from the SDK's zod schemas (run by node)."""
    done = subprocess.run(
        ["node", "validate-host-messages.mjs"],
        cwd=INTEROP,
        input=json.dumps(records),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)["results"]


def failures(results: list[dict[str, Any]]) -> list[str]:
    return [f"{r['kind']} {r['method']} ({r['schema']}): {'; '.join(r['issues'])}" for r in results if not r["ok"]]


def coverage(results: list[dict[str, Any]]) -> Counter[tuple[str, str | None]]:
    """How many host→view messages of each (kind, method) were judged."""
    return Counter((r["kind"], r["method"]) for r in results)
