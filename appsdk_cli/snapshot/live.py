"""Live mode: collect a Snapshot from a running server, exactly as a host would see it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from appsdk_cli.appmeta import ui_extension
from appsdk_cli.client import AuthRequired, ProtocolError
from appsdk_cli.connection import Target, session
from appsdk_cli.errors import AppsdkError
from appsdk_cli.snapshot.model import Snapshot
from appsdk_cli.snapshot.plan import skill_file_uris, tools_to_call, uris_to_read

# Entered around each tool call a check makes, with the tool's name (a progress line on a terminal).
CallWatcher = Callable[[str], AbstractContextManager[None]]


def collect_live(target: Target, *, call_tools: bool = True, calling: CallWatcher | None = None) -> Snapshot:
    """List, read the widgets, call the safe tools. Unreachable or broken servers raise (exit 1).

    `calling(name)` is entered around each tool call, so a caller can say which call it is waiting on.

    A protected server is first asked as a host that is not signed in would ask it, and the sign-in
    discovery is recorded; without a token, that is all a check can see of it.
    """
    auth = probe_auth(target.url, timeout=target.timeout) if target.url else {}
    try:
        snapshot = _collect(target, call_tools=call_tools, calling=calling)
    except AuthRequired:
        if auth.get("status") != 401:
            raise
        auth["signInRequired"] = True
        return Snapshot(mode="live", server=target.description, auth=auth)
    snapshot.auth = auth
    return snapshot


def probe_auth(url: str, *, timeout: float) -> dict[str, Any]:
    """An initialize with no token; for a 401, follow the challenge to the resource metadata and on to
    the authorization server's metadata, recording what was found and what could not be read."""
    import httpx

    from appsdk_cli.auth import discovery
    from appsdk_cli.auth.signin_errors import SignInError
    from appsdk_cli.client import CLIENT_INFO, LATEST_HANDSHAKE_VERSION, parse_bearer_challenge

    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
    }
    from appsdk_cli.httpguard import UnsafeRedirect, httpx_client

    headers = {"Accept": "application/json, text/event-stream"}
    try:
        with httpx_client(timeout) as probe:  # --timeout bounds the whole answer, redirects by our rules
            response = probe.post(url, json=initialize, headers=headers)
    except (httpx.HTTPError, UnsafeRedirect):
        return {}  # the session that follows says why the server cannot be reached
    auth: dict[str, Any] = {"url": url, "status": response.status_code}
    if response.status_code != 401:
        return auth
    auth["challenge"] = response.headers.get("www-authenticate", "")
    metadata_url = (parse_bearer_challenge(auth["challenge"]) or {}).get("resource_metadata")
    auth["resourceMetadataUrl"] = metadata_url
    if not metadata_url:
        return auth
    with httpx_client(timeout) as http:
        try:
            metadata, _ = discovery.protected_resource_metadata(http, url, metadata_url)
        except SignInError as problem:
            auth["resourceMetadataError"] = problem.message
            return auth
        auth["resourceMetadata"] = metadata
        servers = metadata.get("authorization_servers")
        if isinstance(servers, list) and servers and isinstance(servers[0], str):
            try:
                # As found, issuer unchecked: the check reports a mismatch (APPS708) rather than stopping at it.
                auth["authorizationServerMetadata"] = discovery.authorization_server_metadata(
                    http, servers[0], server_url=url, verify_issuer=False
                )
            except SignInError as problem:
                auth["authorizationServerError"] = problem.message
    return auth


def _collect(target: Target, *, call_tools: bool, calling: CallWatcher | None) -> Snapshot:
    with session(target) as client:
        info = client.server
        snapshot = Snapshot(
            mode="live",
            server=target.description,
            server_name=info.name if info else "",
            server_version=info.version if info else "",
            instructions=info.instructions if info else None,
            protocol_versions=[info.protocol_version] if info else [],
            server_ui=ui_extension(client.server_capabilities()),
            tools=client.list_tools(),
            resources=client.list_resources(),
        )
        # A server with no templates may not implement the method at all.
        with contextlib.suppress(ProtocolError):
            snapshot.resource_templates = client.list_resource_templates()

        snapshot.era = client.era.label if client.era else ""
        snapshot.dropped_tools = dict(client.dropped_tools)
        for uri in uris_to_read(snapshot.tools, snapshot.resources):
            try:
                snapshot.reads[uri] = client.read_resource(uri)
            except ProtocolError as problem:
                # One widget that fails to read is a finding, not the end of the check.
                snapshot.read_errors[uri] = problem.message
        if client.declares_skills:
            _collect_skills(client, snapshot)
        if call_tools:
            for name in tools_to_call(snapshot.tools):
                started = time.monotonic()
                try:
                    with calling(name) if calling else contextlib.nullcontext():
                        snapshot.calls[name] = client.call_tool(name, {})
                except AuthRequired as problem:
                    snapshot.call_errors[name] = problem.message
                    snapshot.sign_in_calls[name] = problem.scope or ""
                except AppsdkError as problem:
                    snapshot.call_errors[name] = problem.message
                finally:
                    snapshot.call_seconds[name] = time.monotonic() - started
        snapshot.without_result_type = sorted(client.without_result_type)
    if target.url:
        snapshot.eras = _eras(target, client)
        spoken = [era.get("version") for era in snapshot.eras.get("spoken") or [] if isinstance(era, dict)]
        if spoken:
            # Every era the server answered, not only the one this check ran in, so PATH and live agree.
            snapshot.protocol_versions = sorted({str(version) for version in spoken})
    return snapshot


def _collect_skills(client: Any, snapshot: Snapshot) -> None:
    """The listing, each listed skill by skills/get, and each file it lists: what a skill importer fetches."""
    snapshot.skills_declared = True
    try:
        snapshot.skills = client.list_skills()
    except ProtocolError as problem:
        snapshot.skills_error = problem.message
        return
    for entry in snapshot.skills:
        uri = str(entry.get("uri", "")) if isinstance(entry, dict) else ""
        if not uri:
            continue
        try:
            snapshot.skill_gets[uri] = client.get_skill(uri)
        except ProtocolError as problem:
            snapshot.skill_get_errors[uri] = problem.message
        for file_uri in skill_file_uris(entry):
            try:
                snapshot.skill_reads[file_uri] = client.read_resource(file_uri)
            except ProtocolError as problem:
                snapshot.skill_read_errors[file_uri] = problem.message


def _eras(target: Target, client: Any) -> dict[str, Any]:
    """What each era answered, for checks/eras.py: discover and initialize side by side."""
    from appsdk_cli.client.probe import probe_eras

    report = probe_eras(target.url or "", timeout=target.timeout, token=target.token)
    found = report.as_json()
    found["discover"] = report.discover
    found["initialize"] = report.initialize
    found["without_result_type"] = sorted({*report.without_result_type, *client.without_result_type})
    return found
