"""The apps policy of a Codex-compatible config.toml, as pure functions.

Parsing turns each file into a `PolicyLayer` (values left unset stay None, so layers can be told apart);
`Policy` holds the user's merged layers (the workspace over the global file) and the managed layer
(requirements.toml), which can only take things away. The decisions follow Codex's rules; each one also
says *why* something is off, because "how would a host judge my app" is the question appsdk answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from appsdk_cli.appmeta import ToolMeta, tool_meta

DEFAULT_TABLE = "_default"

# Stable disabledReason values (app/read toolSummaries). Scripts may match on them.
DISABLED_BY_CONFIG = "disabled_by_config"  # config.toml turned the app or the tool off
DISABLED_BY_ADMIN = "disabled_by_admin"  # the managed layer (requirements.toml) did
DESTRUCTIVE_NOT_ENABLED = "destructive_not_enabled"  # destructive (or undeclared) while destructive_enabled = false
OPEN_WORLD_NOT_ENABLED = "open_world_not_enabled"  # open-world (or undeclared) while open_world_enabled = false


class PolicyValueError(ValueError):
    """A value of the wrong type; `path` is its dotted key path, for the file:line message."""

    def __init__(self, path: tuple[str, ...], message: str) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class ToolRules:
    enabled: bool | None = None
    approval_mode: str | None = None


@dataclass(frozen=True)
class AppRules:
    present: bool = False  # the [apps.<id>] table exists: then `enabled` defaults to true
    enabled: bool | None = None
    destructive_enabled: bool | None = None
    open_world_enabled: bool | None = None
    default_tools_enabled: bool | None = None
    default_tools_approval_mode: str | None = None
    tools: dict[str, ToolRules] = field(default_factory=dict)


@dataclass(frozen=True)
class PolicyLayer:
    apps_feature: bool | None = None
    default: AppRules = field(default_factory=AppRules)
    apps: dict[str, AppRules] = field(default_factory=dict)


# --- parsing -------------------------------------------------------------------------------------------


def _bool(table: dict[str, Any], key: str, path: tuple[str, ...]) -> bool | None:
    value = table.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise PolicyValueError((*path, key), f"{'.'.join((*path, key))} must be true or false, not {value!r}")


def _str(table: dict[str, Any], key: str, path: tuple[str, ...]) -> str | None:
    value = table.get(key)
    if value is None or isinstance(value, str):
        return value
    raise PolicyValueError((*path, key), f"{'.'.join((*path, key))} must be a string, not {value!r}")


def _table(value: Any, path: tuple[str, ...]) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    raise PolicyValueError(path, f"{'.'.join(path)} must be a table, not {value!r}")


def _app_rules(raw: Any, path: tuple[str, ...]) -> AppRules:
    table = _table(raw, path)
    tools_raw = _table(table.get("tools", {}), (*path, "tools"))
    tools = {}
    for name, tool_raw in tools_raw.items():
        tool_path = (*path, "tools", name)
        tool_table = _table(tool_raw, tool_path)
        tools[name] = ToolRules(_bool(tool_table, "enabled", tool_path), _str(tool_table, "approval_mode", tool_path))
    return AppRules(
        present=True,
        enabled=_bool(table, "enabled", path),
        destructive_enabled=_bool(table, "destructive_enabled", path),
        open_world_enabled=_bool(table, "open_world_enabled", path),
        default_tools_enabled=_bool(table, "default_tools_enabled", path),
        default_tools_approval_mode=_str(table, "default_tools_approval_mode", path),
        tools=tools,
    )


def parse_layer(document: dict[str, Any]) -> PolicyLayer:
    """The apps policy of one parsed config.toml; other keys (a full Codex config has many) are ignored."""
    features = _table(document.get("features", {}), ("features",))
    apps_raw = _table(document.get("apps", {}), ("apps",))
    default = _app_rules(apps_raw[DEFAULT_TABLE], ("apps", DEFAULT_TABLE)) if DEFAULT_TABLE in apps_raw else AppRules()
    apps = {app_id: _app_rules(raw, ("apps", app_id)) for app_id, raw in apps_raw.items() if app_id != DEFAULT_TABLE}
    return PolicyLayer(apps_feature=_bool(features, "apps", ("features",)), default=default, apps=apps)


# --- layering ------------------------------------------------------------------------------------------


def _over(top: Any, bottom: Any) -> Any:
    return bottom if top is None else top


def _merge_tools(top: dict[str, ToolRules], bottom: dict[str, ToolRules]) -> dict[str, ToolRules]:
    merged = dict(bottom)
    for name, rules in top.items():
        below = bottom.get(name, ToolRules())
        merged[name] = ToolRules(_over(rules.enabled, below.enabled), _over(rules.approval_mode, below.approval_mode))
    return merged


def _merge_app(top: AppRules, bottom: AppRules) -> AppRules:
    return AppRules(
        present=top.present or bottom.present,
        enabled=_over(top.enabled, bottom.enabled),
        destructive_enabled=_over(top.destructive_enabled, bottom.destructive_enabled),
        open_world_enabled=_over(top.open_world_enabled, bottom.open_world_enabled),
        default_tools_enabled=_over(top.default_tools_enabled, bottom.default_tools_enabled),
        default_tools_approval_mode=_over(top.default_tools_approval_mode, bottom.default_tools_approval_mode),
        tools=_merge_tools(top.tools, bottom.tools),
    )


def merge(layers: Iterable[PolicyLayer]) -> PolicyLayer:
    """Key by key, a later layer over the earlier ones (e.g. [global, workspace])."""
    merged = PolicyLayer()
    for layer in layers:
        apps = dict(merged.apps)
        for app_id, rules in layer.apps.items():
            apps[app_id] = _merge_app(rules, merged.apps.get(app_id, AppRules()))
        merged = PolicyLayer(
            apps_feature=_over(layer.apps_feature, merged.apps_feature),
            default=_merge_app(layer.default, merged.default),
            apps=apps,
        )
    return merged


@dataclass(frozen=True)
class Policy:
    """The user's merged config and the managed layer, which only ever switches things off."""

    user: PolicyLayer = field(default_factory=PolicyLayer)
    managed: PolicyLayer = field(default_factory=PolicyLayer)


# --- decisions -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str | None = None  # why not, when not allowed

    @staticmethod
    def yes() -> Decision:
        return Decision(True)

    @staticmethod
    def no(reason: str) -> Decision:
        return Decision(False, reason)


def feature_enabled(policy: Policy) -> bool:
    if policy.managed.apps_feature is False:
        return False
    return policy.user.apps_feature is not False


def app_enabled(policy: Policy, app_id: str) -> Decision:
    """[apps.<id>].enabled if that table exists, else [apps._default].enabled, else true; managed `false` wins."""
    managed = policy.managed.apps.get(app_id, AppRules())
    if managed.enabled is False or policy.managed.default.enabled is False:
        return Decision.no(DISABLED_BY_ADMIN)
    rules = policy.user.apps.get(app_id)
    if rules is not None and rules.present:
        enabled = rules.enabled is not False
    else:
        enabled = policy.user.default.enabled is not False
    return Decision.yes() if enabled else Decision.no(DISABLED_BY_CONFIG)


def _hint_setting(layer: PolicyLayer, app_id: str, key: str) -> bool | None:
    value = getattr(layer.apps.get(app_id, AppRules()), key)
    return value if value is not None else getattr(layer.default, key)


def _tool_rule(rules: AppRules | None, name: str, title: str | None) -> bool | None:
    """The per-tool `enabled`, matched by the tool's name first, then by its title."""
    if rules is None:
        return None
    for key in (name, title):
        if key is not None and key in rules.tools and rules.tools[key].enabled is not None:
            return rules.tools[key].enabled
    return None


def _hint_gate(destructive: bool, open_world: bool, setting: Callable[[str], bool | None]) -> str | None:
    if destructive and setting("destructive_enabled") is False:
        return DESTRUCTIVE_NOT_ENABLED
    if open_world and setting("open_world_enabled") is False:
        return OPEN_WORLD_NOT_ENABLED
    return None


def tool_enabled(policy: Policy, app_id: str, tool: dict[str, Any] | ToolMeta) -> Decision:
    """Whether policy lets the model call `tool` (a tools/list entry, or its ToolMeta), and if not, why."""
    app = app_enabled(policy, app_id)
    if not app.allowed:
        return app
    meta = tool if isinstance(tool, ToolMeta) else tool_meta(tool)
    # A hint the server left out counts as true: an undeclared tool may destroy and reach the world.
    destructive = meta.destructive is not False
    open_world = meta.open_world is not False
    # The managed layer comes first: nothing below it can re-enable what it switched off.
    if _tool_rule(policy.managed.apps.get(app_id), meta.name, meta.title) is False:
        return Decision.no(DISABLED_BY_ADMIN)
    if _hint_gate(destructive, open_world, lambda key: _hint_setting(policy.managed, app_id, key)):
        return Decision.no(DISABLED_BY_ADMIN)
    rules = policy.user.apps.get(app_id)
    explicit = _tool_rule(rules, meta.name, meta.title)
    if explicit is not None:
        return Decision.yes() if explicit else Decision.no(DISABLED_BY_CONFIG)
    if rules is not None and rules.default_tools_enabled is not None:
        return Decision.yes() if rules.default_tools_enabled else Decision.no(DISABLED_BY_CONFIG)
    reason = _hint_gate(destructive, open_world, lambda key: _hint_setting(policy.user, app_id, key))
    return Decision.no(reason) if reason else Decision.yes()


def model_visible(tool: dict[str, Any] | ToolMeta) -> bool:
    """No ui.visibility, or one that lists "model"; Apps SDK `openai/visibility: private` hides it too."""
    return (tool if isinstance(tool, ToolMeta) else tool_meta(tool)).model_visible


def app_callable(policy: Policy, app_id: str, tools: Iterable[dict[str, Any] | ToolMeta]) -> bool:
    """The feature is on, the app is enabled, and some model-visible tool is allowed."""
    if not feature_enabled(policy) or not app_enabled(policy, app_id).allowed:
        return False
    return any(model_visible(tool) and tool_enabled(policy, app_id, tool).allowed for tool in tools)


def app_effectively_enabled(policy: Policy, app_id: str) -> bool:
    return feature_enabled(policy) and app_enabled(policy, app_id).allowed
