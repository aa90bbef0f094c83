"""The config.toml rules (policy.py): pure functions over parsed layers, checked case by case."""

from __future__ import annotations

import tomllib

import pytest

from appsdk_cli.apps import policy as rules

PLAIN = {"name": "ping"}  # no annotations: every hint counts as true
SAFE = {"name": "search", "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}}
DESTRUCTIVE = {"name": "wipe", "title": "Wipe all", "annotations": {"destructiveHint": True, "openWorldHint": False}}
APP_ONLY = {"name": "refresh", "_meta": {"ui": {"visibility": ["app"]}}}
PRIVATE = {"name": "secret", "_meta": {"openai/visibility": "private"}}


def policy(user: str = "", *, workspace: str = "", managed: str = "") -> rules.Policy:
    layers = [rules.parse_layer(tomllib.loads(user)), rules.parse_layer(tomllib.loads(workspace))]
    return rules.Policy(user=rules.merge(layers), managed=rules.parse_layer(tomllib.loads(managed)))


def test_no_policy_allows_everything():
    p = policy()
    assert rules.feature_enabled(p)
    for tool in (PLAIN, SAFE, DESTRUCTIVE):
        assert rules.tool_enabled(p, "a", tool) == rules.Decision(True)


def test_app_enabled_prefers_its_own_table_over_default():
    p = policy("[apps._default]\nenabled = false\n[apps.a]\ndestructive_enabled = true\n")
    assert rules.app_enabled(p, "a").allowed  # the table exists, so enabled defaults to true
    assert rules.app_enabled(p, "b") == rules.Decision(False, rules.DISABLED_BY_CONFIG)


def test_tool_rules_in_order():
    p = policy(
        """
[apps._default]
destructive_enabled = false
[apps.a.tools."Wipe all"]
enabled = true
[apps.b]
default_tools_enabled = true
[apps.c.tools.search]
enabled = false
[apps.c.tools."Search"]
enabled = true
"""
    )
    # Matched by title when no entry carries the name.
    assert rules.tool_enabled(p, "a", DESTRUCTIVE).allowed
    # default_tools_enabled wins over the hint gate.
    assert rules.tool_enabled(p, "b", DESTRUCTIVE).allowed
    assert rules.tool_enabled(p, "x", DESTRUCTIVE) == rules.Decision(False, rules.DESTRUCTIVE_NOT_ENABLED)
    assert rules.tool_enabled(p, "x", PLAIN).reason == rules.DESTRUCTIVE_NOT_ENABLED
    assert rules.tool_enabled(p, "x", SAFE).allowed
    # The name is matched before the title.
    assert rules.tool_enabled(p, "c", {**SAFE, "title": "Search"}).reason == rules.DISABLED_BY_CONFIG


def test_the_workspace_layers_over_the_global_file_key_by_key():
    p = policy("[apps.a]\nenabled = false\nopen_world_enabled = false\n", workspace="[apps.a]\nenabled = true\n")
    assert rules.app_enabled(p, "a").allowed
    assert rules.tool_enabled(p, "a", PLAIN).reason == rules.OPEN_WORLD_NOT_ENABLED


def test_the_managed_layer_only_takes_away():
    p = policy(
        "[features]\napps = true\n[apps.a]\nenabled = true\n[apps.b.tools.search]\nenabled = true\n",
        managed="[apps.a]\nenabled = false\n[apps.b.tools.search]\nenabled = false\n[apps.c]\nenabled = true\n",
    )
    assert rules.app_enabled(p, "a") == rules.Decision(False, rules.DISABLED_BY_ADMIN)
    assert rules.tool_enabled(p, "b", SAFE) == rules.Decision(False, rules.DISABLED_BY_ADMIN)
    user_off = policy("[apps.c]\nenabled = false\n", managed="[apps.c]\nenabled = true\n")
    assert rules.app_enabled(user_off, "c") == rules.Decision(False, rules.DISABLED_BY_CONFIG)
    assert not rules.feature_enabled(policy(managed="[features]\napps = false\n"))


def test_callable_needs_a_model_visible_allowed_tool():
    p = policy("[apps.blocked]\ndefault_tools_enabled = false\n")
    assert rules.app_callable(p, "a", [PLAIN])
    assert not rules.app_callable(p, "a", [APP_ONLY, PRIVATE])
    assert not rules.app_callable(p, "a", [])
    assert not rules.app_callable(p, "blocked", [PLAIN])
    assert not rules.app_callable(policy("[features]\napps = false\n"), "a", [PLAIN])
    assert rules.model_visible({"name": "x", "_meta": {"ui": {"visibility": ["model", "app"]}}})


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("[features]\napps = 1\n", ("features", "apps")),
        ("[apps.a]\nenabled = 'yes'\n", ("apps", "a", "enabled")),
        ("[apps.a.tools.t]\napproval_mode = 3\n", ("apps", "a", "tools", "t", "approval_mode")),
        ("apps = 3\n", ("apps",)),
    ],
)
def test_wrong_types_name_their_key(text: str, path: tuple[str, ...]):
    with pytest.raises(rules.PolicyValueError) as raised:
        rules.parse_layer(tomllib.loads(text))
    assert raised.value.path == path
