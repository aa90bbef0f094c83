"""Which eras a server speaks, asked one by one, for `appsdk tools` and `appsdk check`.

A normal session stops at the first era that works; this asks each: `server/discover` in 2026-07-28,
`initialize` offering each handshake version appsdk can force, and a GET for the HTTP+SSE `endpoint`
event. It also sends one deliberately inconsistent modern request (the `Mcp-Method` header disagreeing
with the body), which a 2026-07-28 server must refuse with -32020.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from appsdk_cli.client.eras import LEGACY_SSE_VERSION, SSE, STREAMABLE_HTTP, Era
from appsdk_cli.client.http import CLIENT_INFO, HttpTransport, ProtocolError
from appsdk_cli.client.modern import MODERN_VERSION, envelope
from appsdk_cli.client.session import McpClient, Tracer
from appsdk_cli.errors import AppsdkError

# The handshake versions appsdk can force, newest first; each is asked for on its own.
HANDSHAKE_ASKED = ("2025-11-25", "2025-06-18")
# The SSE probe only waits for the first event; an endpoint is named at once or not at all.
SSE_PROBE_SECONDS = 3.0


@dataclass
class EraReport:
    url: str
    spoken: list[Era] = field(default_factory=list)
    discover: dict[str, Any] | None = None  # the server/discover result, as sent
    discover_error: str | None = None
    initialize: dict[str, Any] | None = None  # the newest handshake's InitializeResult
    initialize_error: str | None = None
    sse_error: str | None = None
    # None: not asked (no modern era); True: a mismatched modern request was answered, not refused.
    mismatch_accepted: bool | None = None
    without_result_type: list[str] = field(default_factory=list)

    @property
    def labels(self) -> list[str]:
        return [era.label for era in self.spoken]

    def as_json(self) -> dict[str, Any]:
        return {
            "spoken": [{"version": e.version, "transport": e.transport} for e in self.spoken],
            "discoverError": self.discover_error,
            "initializeError": self.initialize_error,
            "sseError": self.sse_error,
            "mismatchAccepted": self.mismatch_accepted,
            "withoutResultType": self.without_result_type,
        }


def probe_eras(url: str, *, timeout: float, token: str | None = None, trace: Tracer | None = None) -> EraReport:
    report = EraReport(url)
    modern = McpClient(HttpTransport(url, timeout=timeout, token=token), trace=trace)
    try:
        report.discover = modern.discover()
        if "resultType" not in report.discover:
            report.without_result_type.append("server/discover")
        supported = report.discover.get("supportedVersions")
        if isinstance(supported, list) and MODERN_VERSION in supported:
            report.spoken.append(Era(MODERN_VERSION, STREAMABLE_HTTP))
            report.mismatch_accepted = _accepts_mismatch(url, timeout=timeout, token=token, trace=trace)
        else:
            report.discover_error = "server/discover does not list 2026-07-28 in supportedVersions"
    except AppsdkError as problem:
        report.discover_error = problem.message
    finally:
        modern.transport.close()
    for version in HANDSHAKE_ASKED:
        client = McpClient(HttpTransport(url, timeout=timeout, token=token), protocol=version, trace=trace)
        try:
            client.initialize(version)
            report.spoken.append(Era(version, STREAMABLE_HTTP))
            if report.initialize is None:
                report.initialize = client.initialized
        except AppsdkError as problem:
            if report.initialize_error is None and report.initialize is None:
                report.initialize_error = problem.message
        finally:
            client.transport.close()
    if report.spoken:
        # It speaks streamable HTTP here; POST and an HTTP+SSE GET on one URL is rare, and asking costs
        # a wait (a streamable GET stream names no endpoint), so HTTP+SSE is not asked for.
        report.sse_error = "not asked: the server speaks streamable HTTP at this URL"
        return report
    sse = McpClient(
        HttpTransport(url, timeout=min(timeout, SSE_PROBE_SECONDS), token=token),
        protocol=LEGACY_SSE_VERSION,
        trace=trace,
    )
    try:
        sse.negotiate()
        report.spoken.append(Era(LEGACY_SSE_VERSION, SSE))
        if report.initialize is None:
            report.initialize = sse.initialized
    except AppsdkError as problem:
        report.sse_error = problem.message
    finally:
        with contextlib.suppress(AppsdkError):
            sse.transport.close()
    return report


def _accepts_mismatch(url: str, *, timeout: float, token: str | None, trace: Tracer | None = None) -> bool:
    """Whether the server answers a discover whose Mcp-Method header says tools/list (it must refuse)."""
    transport = HttpTransport(url, timeout=timeout, token=token)
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {"_meta": envelope({}, CLIENT_INFO)},
    }
    headers = {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "tools/list"}
    if trace:
        trace("send", message)
    try:
        answer = transport.exchange(message, on_other=lambda _: None, headers=headers)
    except ProtocolError as problem:
        if hasattr(trace, "failed"):
            trace.failed(message, problem)
        return False
    finally:
        transport.close()
    if trace and answer is not None:
        trace("receive", answer)
    return isinstance(answer, dict) and "result" in answer
