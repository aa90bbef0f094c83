"""Live mode: collect a Snapshot from a running server, exactly as a host would see it."""

from __future__ import annotations

from appsdk_cli.checks.model import Snapshot
from appsdk_cli.checks.plan import tools_to_call, uris_to_read
from appsdk_cli.client import ProtocolError
from appsdk_cli.errors import AppsdkError
from appsdk_cli.remote import Target, session


def collect_live(target: Target, *, call_tools: bool = True) -> Snapshot:
    """List, read the widgets, call the safe tools. Unreachable or broken servers raise (exit 1)."""
    with session(target) as client:
        snapshot = Snapshot(
            mode="live",
            server=target.description,
            server_name=client.server.name if client.server else "",
            tools=client.list_tools(),
            resources=client.list_resources(),
        )
        for uri in uris_to_read(snapshot.tools, snapshot.resources):
            try:
                snapshot.reads[uri] = client.read_resource(uri)
            except ProtocolError as problem:
                # One widget that fails to read is a finding, not the end of the check.
                snapshot.read_errors[uri] = problem.message
        if call_tools:
            for name in tools_to_call(snapshot.tools):
                try:
                    snapshot.calls[name] = client.call_tool(name, {})
                except AppsdkError as problem:
                    snapshot.call_errors[name] = problem.message
    return snapshot
