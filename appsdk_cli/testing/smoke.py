"""The generated smoke suite of `appsdk test --url/--stdio`: every widget tool, called and rendered.

A tool is in it when it names a widget, says `readOnlyHint: true` (a smoke test of someone's server must not
write to it, once per profile; --include-writes calls the others too) and its arguments can be built: each
required argument from its default, its first example, its first enum value or its const (optional ones
are left out). The others are listed as skipped, saying why. The cases are named after the server
(`server_name`), not after the temporary file the suite runs from.
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
    skip: str | None = None  # why the tool is not called (the case is skipped, saying so)
    problem: str | None = None  # why the server cannot be smoke-tested at all (the one case fails with it)

    @property
    def id(self) -> str:
        return f"{self.tool}-{self.profile}" if self.profile else self.tool


def server_name(url: str | None, stdio: str | None) -> str:
    """The server a smoke case tests, as its test id shows it: host:port/path (no credentials, no query),
    or the stdio command. Never "::", which separates the parts of a pytest id."""
    if url:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        name = f"{host}{port}{parts.path}" or url
    else:
        name = stdio or "the app"
    return name.replace("::", ":")


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


def says_read_only(tool: dict[str, Any]) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def smoke_cases(
    tools: list[dict[str, Any]], profiles: tuple[str, ...] = SMOKE_PROFILES, *, include_writes: bool = False
) -> list[SmokeCase]:
    """One case per widget tool and profile; a tool that may write is one skipped case (unless
    `include_writes`), and a server with no widget tool one skipped case saying there is nothing to render."""
    from appsdk_cli.appmeta import tool_meta

    cases = []
    for tool in tools:
        if not tool_meta(tool).template:
            continue
        name = str(tool.get("name"))
        if not include_writes and not says_read_only(tool):
            why = f"not called: {name} does not say readOnlyHint: true, so it may write; --include-writes calls it"
            cases.append(SmokeCase(name, "", skip=why))
            continue
        arguments, why = built_arguments(tool.get("inputSchema"))
        cases.extend(SmokeCase(name, profile, arguments, why) for profile in profiles)
    if not cases:
        names = ", ".join(str(t.get("name")) for t in tools) or "none"
        why = f"nothing to render: the server has no tool with a widget (its tools: {names})"
        cases.append(SmokeCase("no-widgets", "", skip=why))
    return cases
