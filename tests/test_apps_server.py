"""`appsdk app-server` as a black box: the real command over stdio JSONL, real MCP apps on loopback.

The scenarios are the spec's (shared/specs/app-server.md, "Reference scenarios"), plus the error table.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from appserver import AppServerProcess
from conftest import AppsHome, Fleet, dead_url

POLICY = """
[apps.blocked]
default_tools_enabled = false

[apps.disabled]
enabled = false
"""


@pytest.fixture
def server(apps_home: AppsHome) -> Iterator[AppServerProcess]:
    process = AppServerProcess(apps_home.home, apps_home.cwd, timeout=3.0)
    yield process
    process.close()


def started(server: AppServerProcess, **kwargs) -> AppServerProcess:
    server.initialize(**kwargs)
    return server


def error(response: dict) -> tuple[int, str]:
    assert "error" in response and "result" not in response, response
    return response["error"]["code"], response["error"]["message"]


# --- initialize and the error table --------------------------------------------------------------------


def test_initialize_answers_with_the_codex_fields(apps_home: AppsHome, server: AppServerProcess):
    result = server.initialize()
    assert set(result) == {"userAgent", "codexHome", "platformFamily", "platformOs"}
    assert result["codexHome"] == str(apps_home.home.resolve())
    assert result["platformFamily"] == "unix" and result["platformOs"] == "linux"
    assert "tests/1.0" in result["userAgent"]
    # The wire has no "jsonrpc" member.
    assert all("jsonrpc" not in message for message in server.received)


def test_requests_before_initialize_and_a_second_initialize_fail(server: AppServerProcess):
    assert error(server.request("app/list", {})) == (-32600, "Not initialized")
    server.initialize()
    again = server.request("initialize", {"clientInfo": {"name": "x", "version": "1"}})
    assert error(again) == (-32600, "Already initialized")
    assert "result" in server.request("app/list", {})


def test_unknown_methods_wrong_types_and_threads_get_invalid_request(apps_home: AppsHome, fleet: Fleet, server):
    apps_home.register({"alpha": fleet.url("alpha")})
    started(server)
    code, message = error(server.request("app/delete", {}))
    assert code == -32600 and message.startswith("Invalid request: ")
    bad_params = [
        ("app/installed", {"forceRefresh": "yes"}),
        ("app/installed", []),
        ("app/list", {"limit": -1}),
        ("app/list", {"limit": "1"}),
        ("app/list", {"limit": True}),
        ("app/list", {"cursor": 5}),
        ("app/list", {"forceRefetch": 1}),
        ("app/read", {"appIds": "alpha"}),
        ("app/read", {"appIds": ["alpha", 7]}),
        ("app/read", {}),
        ("app/read", None),
        ("app/read", {"appIds": ["alpha"], "includeTools": "true"}),
        ("app/read", {"appIds": ["alpha"], "threadId": 12}),
    ]
    for method, params in bad_params:
        code, message = error(server.request(method, params))
        assert code == -32600 and message.startswith("Invalid request: "), (method, params, message)
    for method, params in [
        ("app/installed", {"threadId": "thread-1"}),
        ("app/list", {"threadId": "thread-1"}),
        ("app/read", {"appIds": ["alpha"], "threadId": "thread-1"}),
    ]:
        assert error(server.request(method, params)) == (-32600, "thread not found: thread-1")
    # A null threadId means "no thread": the global configuration.
    assert "result" in server.request("app/read", {"appIds": ["alpha"], "threadId": None})


def test_bad_lines_are_dropped_and_the_next_request_is_answered(apps_home: AppsHome, server: AppServerProcess):
    started(server)
    server.send("this is not json")
    server.send(b"\xff\xfe{")
    server.send("[1, 2, 3]")
    server.send('{"id": 1.5, "method": "app/list"}')
    server.send('{"id": {"a": 1}, "method": "app/list"}')
    server.send("[" * 100_000 + "]" * 100_000)
    server.send('{"method": 12}')
    server.send(b'{"pad": "' + b"x" * (9 * 1024 * 1024) + b'"}')
    server.send({"id": "after", "method": "app/list", "params": {}, "jsonrpc": "2.0"})
    answer = server.wait_for("after")
    assert answer["result"] == {"data": [], "nextCursor": None}
    assert server.process.poll() is None
    assert "not JSON" in server.stderr


def test_an_id_without_a_method_gets_an_error_reply(server: AppServerProcess):
    started(server)
    server.send({"id": "no-method", "params": {}})
    code, message = error(server.wait_for("no-method"))
    assert code == -32600 and message.startswith("Invalid request")


# --- app/installed ----------------------------------------------------------------------------------------


def test_installed_reports_enabled_and_callable_per_policy(apps_home: AppsHome, fleet: Fleet, server):
    apps_home.register({name: fleet.url(name) for name in ("alpha", "blocked", "disabled", "apponly")})
    apps_home.config(POLICY)
    started(server)
    rows = server.result("app/installed", {})["apps"]
    assert rows == [
        {"id": "alpha", "runtimeName": "Alpha Server", "enabled": True, "callable": True},
        # Its only tool is visible to the widget alone, so the model can call nothing.
        {"id": "apponly", "runtimeName": "App-only Server", "enabled": True, "callable": False},
        {"id": "blocked", "runtimeName": "Blocked Server", "enabled": True, "callable": False},
        {"id": "disabled", "runtimeName": "Disabled Server", "enabled": False, "callable": False},
    ]


def test_installed_with_the_feature_off_keeps_the_rows_all_false(apps_home: AppsHome, fleet: Fleet, server):
    apps_home.register({name: fleet.url(name) for name in ("alpha", "blocked", "disabled")})
    apps_home.config("[features]\napps = false\n" + POLICY)
    started(server)
    rows = server.result("app/installed", {"forceRefresh": True})["apps"]
    assert [(row["id"], row["runtimeName"], row["enabled"], row["callable"]) for row in rows] == [
        ("alpha", "Alpha Server", False, False),
        ("blocked", "Blocked Server", False, False),
        ("disabled", "Disabled Server", False, False),
    ]


def test_a_failing_force_refresh_keeps_the_committed_snapshot(apps_home: AppsHome, fleet: Fleet, server):
    apps_home.register({"alpha": fleet.url("alpha")})
    started(server)
    first = server.result("app/installed", {})
    snapshot_files = list((apps_home.home / "snapshots").glob("*.json"))
    assert len(snapshot_files) == 1
    committed = snapshot_files[0].read_bytes()

    apps_home.register({"alpha": fleet.url("alpha"), "ghost": dead_url()})
    code, message = error(server.request("app/installed", {"forceRefresh": True}))
    assert code == -32603
    assert message.startswith("failed to refresh installed connector runtime state: ")
    assert "ghost" in message and "alpha" not in message
    assert snapshot_files[0].read_bytes() == committed

    rows = server.result("app/installed", {})["apps"]
    assert rows[0] == first["apps"][0]
    # ghost was never listed, so the snapshot knows nothing of it.
    assert rows[1] == {"id": "ghost", "runtimeName": None, "enabled": True, "callable": False}


def test_a_slow_and_a_dead_server_do_not_stall_the_refresh(apps_home: AppsHome, fleet: Fleet, server):
    """The slow app hangs for 30 s; the server's per-app timeout is 3 s, and every app is listed at once."""
    apps_home.register({"alpha": fleet.url("alpha"), "slow": fleet.url("slow"), "dead": dead_url()})
    started(server)
    began = time.monotonic()
    code, message = error(server.request("app/installed", {"forceRefresh": True}))
    elapsed = time.monotonic() - began
    assert code == -32603
    assert "slow (" in message and "did not answer within 3 s" in message
    assert "dead (" in message
    assert elapsed < 20, elapsed  # far below the slow app's 30 s


# --- app/read ---------------------------------------------------------------------------------------------


def test_read_dedupes_keeps_order_and_reports_missing(apps_home: AppsHome, fleet: Fleet, server):
    apps_home.register({"a": fleet.url("alpha"), "b": fleet.url("hints")}, a="Alpha", b="Bravo")
    started(server)
    result = server.result("app/read", {"appIds": ["b", "a", "b", "zz"]})
    assert [app["id"] for app in result["apps"]] == ["b", "a"]
    assert result["missingAppIds"] == ["zz"]
    assert result["apps"][0] == {
        "id": "b",
        "name": "Bravo",
        "description": None,
        "iconUrl": None,
        "iconUrlDark": None,
        "distributionChannel": None,
        "installUrl": None,
        "pluginDisplayNames": [],
        "toolSummaries": None,
    }


def test_read_accepts_100_ids_and_refuses_101(apps_home: AppsHome, server: AppServerProcess):
    started(server)
    ids = [f"app-{n}" for n in range(100)]
    assert server.result("app/read", {"appIds": ids})["missingAppIds"] == ids
    # Counted before duplicates are removed.
    assert error(server.request("app/read", {"appIds": ["same"] * 101})) == (
        -32602,
        "app/read accepts at most 100 appIds",
    )


def test_read_tool_summaries_reflect_policy_and_say_why(apps_home: AppsHome, fleet: Fleet, server):
    apps_home.register({"hints": fleet.url("hints"), "alpha": fleet.url("alpha"), "blocked": fleet.url("blocked")})
    apps_home.config(
        """
[apps._default]
open_world_enabled = false

[apps.hints]
destructive_enabled = false
open_world_enabled = true

[apps.hints.tools."Post a tweet"]   # matched by the tool's title
enabled = false

[apps.blocked]
default_tools_enabled = false
"""
    )
    started(server)
    result = server.result("app/read", {"appIds": ["hints", "alpha", "blocked"], "includeTools": True})
    tools = {app["id"]: {tool["name"]: tool for tool in app["toolSummaries"]} for app in result["apps"]}
    assert tools["hints"]["search"] == {
        "name": "search",
        "title": "Search",
        "description": "Search the app.",
        "isEnabled": True,
        "disabledReason": None,
        "isReadOnly": True,
    }
    assert tools["hints"]["delete-everything"]["isEnabled"] is False
    assert tools["hints"]["delete-everything"]["disabledReason"] == "destructive_not_enabled"
    post = tools["hints"]["post-tweet"]
    assert (post["title"], post["description"], post["isEnabled"], post["disabledReason"]) == (
        "Post a tweet",
        "",
        False,
        "disabled_by_config",
    )
    # alpha's tool declares no hints, which count as true: open-world while _default turned that off.
    assert tools["alpha"]["ping"]["disabledReason"] == "open_world_not_enabled"
    assert tools["blocked"]["ping"]["disabledReason"] == "disabled_by_config"


def test_the_managed_layer_disables_and_cannot_be_overridden(apps_home: AppsHome, fleet: Fleet, server):
    apps_home.register({"hints": fleet.url("hints"), "alpha": fleet.url("alpha")})
    apps_home.config("[apps.hints.tools.search]\nenabled = true\n\n[apps.alpha]\nenabled = true\n")
    apps_home.config(
        "[apps.hints.tools.search]\nenabled = false\n\n[apps.alpha]\nenabled = false\n", "requirements.toml"
    )
    started(server)
    result = server.result("app/read", {"appIds": ["hints", "alpha"], "includeTools": True})
    by_id = {app["id"]: app for app in result["apps"]}
    search = next(tool for tool in by_id["hints"]["toolSummaries"] if tool["name"] == "search")
    assert (search["isEnabled"], search["disabledReason"]) == (False, "disabled_by_admin")
    assert by_id["alpha"]["toolSummaries"][0]["disabledReason"] == "disabled_by_admin"
    installed = {row["id"]: row for row in server.result("app/installed", {})["apps"]}
    assert installed["alpha"]["enabled"] is False and installed["hints"]["callable"] is True


def test_read_with_the_feature_off_reports_every_id_missing(apps_home: AppsHome, fleet: Fleet, server):
    apps_home.register({"alpha": fleet.url("alpha")})
    apps_home.config("[features]\napps = false\n")
    started(server)
    assert server.result("app/read", {"appIds": ["alpha", "zz"], "includeTools": True}) == {
        "apps": [],
        "missingAppIds": ["alpha", "zz"],
    }


def test_requests_run_concurrently(apps_home: AppsHome, fleet: Fleet, server: AppServerProcess):
    """A read stuck on the slow app (3 s timeout) does not hold up a read answered from the registry."""
    apps_home.register({"alpha": fleet.url("alpha"), "slow": fleet.url("slow")})
    started(server)
    server.send({"id": "stuck", "method": "app/read", "params": {"appIds": ["slow"], "includeTools": True}})
    server.send({"id": "quick", "method": "app/read", "params": {"appIds": ["alpha"]}})
    server.wait_for("quick")
    stuck = server.wait_for("stuck")
    order = [message.get("id") for message in server.received if message.get("id") in ("stuck", "quick")]
    assert order == ["quick", "stuck"]
    # The slow server could not be listed, so with includeTools the app counts as inaccessible: missing.
    assert stuck["result"] == {"apps": [], "missingAppIds": ["slow"]}


# --- app/list ---------------------------------------------------------------------------------------------


def _fleet_registry(apps_home: AppsHome, fleet: Fleet) -> None:
    apps_home.register(
        {name: fleet.url(name) for name in ("alpha", "blocked", "disabled", "hints", "empty")},
        alpha="Zulu",
        blocked="Yankee",
        disabled="Xray",
        hints="Whiskey",
        empty="Alpha empty",
    )
    apps_home.config(POLICY)


def test_list_walks_pages_of_one(apps_home: AppsHome, fleet: Fleet, server: AppServerProcess):
    _fleet_registry(apps_home, fleet)
    started(server)
    everything = server.result("app/list", {})
    assert everything["nextCursor"] is None
    # Accessible first, then by name; the app without tools is not accessible.
    assert [(app["id"], app["isAccessible"], app["isEnabled"]) for app in everything["data"]] == [
        ("hints", True, True),
        ("disabled", True, False),
        ("blocked", True, True),
        ("alpha", True, True),
        ("empty", False, True),
    ]
    assert set(everything["data"][0]) == {
        "id", "name", "description", "logoUrl", "logoUrlDark", "iconAssets", "iconDarkAssets",
        "distributionChannel", "branding", "appMetadata", "labels", "installUrl", "isAccessible",
        "isEnabled", "pluginDisplayNames",
    }  # fmt: skip
    pages, cursors, cursor = [], [], None
    while True:
        page = server.result("app/list", {"cursor": cursor, "limit": 1})
        pages += page["data"]
        cursor = page["nextCursor"]
        if cursor is None:
            break
        cursors.append(cursor)
    assert cursors == ["1", "2", "3", "4"]
    assert pages == everything["data"]
    # limit 0 counts as 1; a cursor at the end is an empty last page.
    assert len(server.result("app/list", {"limit": 0})["data"]) == 1
    assert server.result("app/list", {"cursor": "5"}) == {"data": [], "nextCursor": None}


def test_list_refuses_bad_cursors(apps_home: AppsHome, fleet: Fleet, server: AppServerProcess):
    _fleet_registry(apps_home, fleet)
    started(server)
    assert error(server.request("app/list", {"cursor": "abc"})) == (-32600, "invalid cursor: abc")
    assert error(server.request("app/list", {"cursor": "-1"})) == (-32600, "invalid cursor: -1")
    assert error(server.request("app/list", {"cursor": "6"})) == (-32600, "cursor 6 exceeds total apps 5")


def test_list_notifications_carry_the_full_merged_list(apps_home: AppsHome, fleet: Fleet, server):
    _fleet_registry(apps_home, fleet)
    started(server)
    request_id = server.new_id()
    server.send({"id": request_id, "method": "app/list", "params": {"limit": 1}})
    response = server.wait_for(request_id)
    assert len(response["result"]["data"]) == 1
    position = server.received.index(response)
    updates = [m for m in server.received[:position] if m.get("method") == "app/list/updated"]
    assert updates, "no app/list/updated before the response"
    for update in updates:
        assert set(update) == {"method", "params", "emittedAtMs"}
        assert isinstance(update["emittedAtMs"], int) and abs(update["emittedAtMs"] / 1000 - time.time()) < 60
    everything = server.result("app/list", {})["data"]
    assert updates[-1]["params"]["data"] == everything
    # Nothing changed since: the cached second listing sends no notification.
    assert [m for m in server.received[position + 1 :] if m.get("method") == "app/list/updated"] == []


def test_opted_out_clients_get_no_notifications(apps_home: AppsHome, fleet: Fleet, server):
    _fleet_registry(apps_home, fleet)
    started(server, opt_out=["app/list/updated"])
    server.result("app/list", {"limit": 2})
    server.result("app/list", {"forceRefetch": True})
    server.result("app/read", {"appIds": ["alpha"]})  # one more round trip: anything queued has arrived
    assert server.notifications == []


def test_a_failed_refetch_errors_and_the_cache_keeps_serving(apps_home: AppsHome, fleet: Fleet, server):
    _fleet_registry(apps_home, fleet)
    started(server)
    before = server.result("app/list", {})
    good = (apps_home.home / "apps.toml").read_text()
    (apps_home.home / "apps.toml").write_text("[apps.alpha\nurl = 1\n")
    code, message = error(server.request("app/list", {"forceRefetch": True}))
    assert code == -32603 and message.startswith("failed to ")
    assert "apps.toml:1" in message
    assert server.result("app/list", {}) == before
    assert (apps_home.home / "apps.toml").read_text() == "[apps.alpha\nurl = 1\n"  # never overwritten
    (apps_home.home / "apps.toml").write_text(good)


def test_list_with_the_feature_off_is_empty(apps_home: AppsHome, fleet: Fleet, server):
    _fleet_registry(apps_home, fleet)
    apps_home.config("[features]\napps = false\n")
    started(server)
    assert server.result("app/list", {}) == {"data": [], "nextCursor": None}
    assert server.notifications == []


def test_a_workspace_layers_over_the_global_files(apps_home: AppsHome, fleet: Fleet):
    apps_home.register({"alpha": fleet.url("alpha")})
    project = apps_home.cwd / "project"
    (project / ".appsdk").mkdir(parents=True)
    (project / ".appsdk" / "apps.toml").write_text(
        f'[apps.alpha]\nurl = "{fleet.url("alpha")}"\nname = "Local alpha"\n\n'
        f'[apps.hints]\nurl = "{fleet.url("hints")}"\n'
    )
    (project / ".appsdk" / "config.toml").write_text("[apps.alpha]\nenabled = false\n")
    server = AppServerProcess(apps_home.home, project / ".appsdk", timeout=3.0)
    try:
        server.initialize()
        listed = {app["id"]: app for app in server.result("app/list", {})["data"]}
        assert listed["alpha"]["name"] == "Local alpha" and listed["alpha"]["isEnabled"] is False
        assert listed["hints"]["name"] == "hints"
    finally:
        server.close()
    # Outside the project only the global registry and policy apply.
    outside = AppServerProcess(apps_home.home, apps_home.cwd, timeout=3.0)
    try:
        outside.initialize()
        assert [(a["id"], a["name"], a["isEnabled"]) for a in outside.result("app/list", {})["data"]] == [
            ("alpha", "Alpha", True)
        ]
    finally:
        outside.close()


def test_names_survive_apps_add_and_the_wire_byte_for_byte(apps_home: AppsHome, fleet: Fleet, server):
    """Quotes, backslashes, newlines and U+2028 go through appsdk's TOML writer and out as one JSON line."""
    name = 'Quote " back\\slash \u2028 new\nline \u00e9\u6f22 \t tab'
    added = apps_home.run("apps", "add", "alpha", "--url", fleet.url("alpha"), "--name", name)
    assert added.returncode == 0, added.stderr
    started(server)
    assert server.result("app/list", {})["data"][0]["name"] == name
    assert server.result("app/read", {"appIds": ["alpha"]})["apps"][0]["name"] == name
