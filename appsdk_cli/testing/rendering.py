"""What a test renders (a tool call, or its data given directly, in a host case) and why a rendering failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from appsdk_cli.errors import AppsdkError
from appsdk_cli.host.place import root_causes

FIXED_TIME_ZONE = "UTC"


class WidgetProblem(AppsdkError):
    """The widget failed inside the host: it threw, its CSP blocked it, or it never took its data."""


@dataclass(frozen=True)
class Rendering:
    """What to render and how: a tool call (tool + arguments), or its data given directly."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    # Given instead of calling the tool: the widget gets exactly this (deterministic states).
    structured_content: dict[str, Any] | None = None
    content: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    call: bool = True  # False: structured_content/content/meta are the result, the tool is not called
    profile: str = "chatgpt"
    theme: str = "light"
    locale: str = "en-US"
    display_mode: str = "inline"
    device: str = "desktop"
    time_zone: str = FIXED_TIME_ZONE
    allow_problems: bool = False  # True: render a failing widget anyway and let the test read why

    def label(self) -> str:
        return f"{self.tool} in {self.profile} ({self.theme}, {self.display_mode}, {self.device})"


def widget_causes(problems: list[str], log: list[dict[str, Any]]) -> list[str]:
    """Why a widget failed, the root first: its errors and CSP blocks, then (only if there is nothing else)
    that it never took its data, which a widget that threw at load never does either."""
    blocked = [str(e.get("message")) for e in log if e.get("kind") == "csp" and e.get("level") == "error"]
    return root_causes(problems, blocked)
