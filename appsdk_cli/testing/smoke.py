"""The generated smoke suite of `appsdk test --url/--stdio`: every widget tool, called and rendered.

A tool is in it when it names a widget and its arguments can be built: each required argument from its
default, its first example, its first enum value or its const (optional ones are left out). The others
are listed as skipped, saying which argument could not be built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SMOKE_PROFILES = ("chatgpt", "mcp-apps", "claude")


@dataclass(frozen=True)
class SmokeCase:
    tool: str
    profile: str
    arguments: dict[str, Any] = field(default_factory=dict)
    unbuildable: str | None = None  # why the arguments could not be built (the case is skipped)
    problem: str | None = None  # why there is nothing to render at all (the one case fails with it)

    @property
    def id(self) -> str:
        return f"{self.tool}-{self.profile}"


def built_arguments(schema: Any) -> tuple[dict[str, Any], str | None]:
    """The arguments for a smoke call, or why there are none."""
    from appsdk_cli.toolargs import parameters

    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    arguments: dict[str, Any] = {}
    for param in parameters(schema):
        if not param.required:
            continue
        prop = properties.get(param.name) if isinstance(properties.get(param.name), dict) else {}
        examples = prop.get("examples")
        if "default" in prop:
            arguments[param.name] = prop["default"]
        elif isinstance(examples, list) and examples:
            arguments[param.name] = examples[0]
        elif "const" in prop:
            arguments[param.name] = prop["const"]
        elif param.enum:
            arguments[param.name] = param.enum[0]
        else:
            return {}, f"the required argument {param.name!r} has no default, example or enum"
    return arguments, None


def smoke_cases(tools: list[dict[str, Any]], profiles: tuple[str, ...] = SMOKE_PROFILES) -> list[SmokeCase]:
    from appsdk_cli.appmeta import tool_meta

    cases = []
    for tool in tools:
        if not tool_meta(tool).template:
            continue
        arguments, why = built_arguments(tool.get("inputSchema"))
        cases.extend(SmokeCase(str(tool.get("name")), profile, arguments, why) for profile in profiles)
    return cases
