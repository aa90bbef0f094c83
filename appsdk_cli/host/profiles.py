"""Host profiles and devices: what each host the preview can play says and allows, as plain data.

The host page (static/host/, its ES modules) reads all of it from `/api/profiles` and plays the profile named by
`?profile=` on the device named by `?device=`; the widget document's bootstrap config and its CSP take
the same two names (`widget_globals`, `widget_csp`). One table, so `appsdk preview`, its screenshots and
the workbench present a widget identically.

- `chatgpt`: ChatGPT as probed (platform-2026.md §2: MCPJam's host preset, captured 2026-05 and 2026-08).
- `mcp-apps`: the spec's generic host (ext-apps 2026-01-26): the default sandbox, every capability the
  spec defines that a local host can honour, no window.openai.
- `claude`: Claude-like. Only what is publicly documented or observable is taken as fact; every other
  value is marked as a guess where it is set.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from appsdk_cli import __version__
from appsdk_cli.appmeta import claude_domain_problem
from appsdk_cli.host.csp import HostCsp
from appsdk_cli.netloc import public_https_url

DEFAULT_PROFILE = "chatgpt"
DEFAULT_DEVICE = "desktop"
# ChatGPT loads these without the resource declaring them (probed); a toggle, since no other host does.
CHATGPT_CDNS = ("https://cdn.jsdelivr.net", "https://unpkg.com")

_SPACING_AND_TYPE = {
    "--font-sans": 'ui-sans-serif, -apple-system, system-ui, "Segoe UI", Helvetica, "Apple Color Emoji", Arial,'
    " sans-serif",
    "--font-mono": 'ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace',
    "--font-weight-normal": "400",
    "--font-weight-medium": "500",
    "--font-weight-semibold": "600",
    "--font-weight-bold": "700",
    "--font-text-xs-size": "12px",
    "--font-text-sm-size": "14px",
    "--font-text-md-size": "16px",
    "--font-text-lg-size": "18px",
    "--font-heading-xs-size": "16px",
    "--font-heading-sm-size": "18px",
    "--font-heading-md-size": "20px",
    "--font-heading-lg-size": "24px",
    "--font-heading-xl-size": "28px",
    "--font-heading-2xl-size": "32px",
    "--font-heading-3xl-size": "36px",
    "--font-text-xs-line-height": "16px",
    "--font-text-sm-line-height": "20px",
    "--font-text-md-line-height": "24px",
    "--font-text-lg-line-height": "28px",
    "--font-heading-xs-line-height": "24px",
    "--font-heading-sm-line-height": "26px",
    "--font-heading-md-line-height": "28px",
    "--font-heading-lg-line-height": "32px",
    "--font-heading-xl-line-height": "36px",
    "--font-heading-2xl-line-height": "40px",
    "--font-heading-3xl-line-height": "44px",
    "--border-radius-xs": "4px",
    "--border-radius-sm": "8px",
    "--border-radius-md": "12px",
    "--border-radius-lg": "16px",
    "--border-radius-xl": "24px",
    "--border-radius-full": "9999px",
    "--border-width-regular": "1px",
}


def _palette(
    *,
    background: tuple[str, str, str, str],
    text: tuple[str, str, str, str],
    border: tuple[str, str, str, str],
    accent: str,
    danger: str,
    success: str,
    warning: str,
    shadow: str,
) -> dict[str, str]:
    """Every colour key of McpUiStyleVariableKey from a few base colours: (primary, secondary, tertiary, inverse)."""
    bg1, bg2, bg3, bg_inv = background
    t1, t2, t3, t_inv = text
    b1, b2, b3, b_inv = border
    colours = {
        "--color-background-primary": bg1,
        "--color-background-secondary": bg2,
        "--color-background-tertiary": bg3,
        "--color-background-inverse": bg_inv,
        "--color-background-ghost": "transparent",
        "--color-background-info": accent + "1f",
        "--color-background-danger": danger + "1f",
        "--color-background-success": success + "1f",
        "--color-background-warning": warning + "1f",
        "--color-background-disabled": bg3,
        "--color-text-primary": t1,
        "--color-text-secondary": t2,
        "--color-text-tertiary": t3,
        "--color-text-inverse": t_inv,
        "--color-text-ghost": t2,
        "--color-text-info": accent,
        "--color-text-danger": danger,
        "--color-text-success": success,
        "--color-text-warning": warning,
        "--color-text-disabled": t3,
        "--color-border-primary": b1,
        "--color-border-secondary": b2,
        "--color-border-tertiary": b3,
        "--color-border-inverse": b_inv,
        "--color-border-ghost": "transparent",
        "--color-border-info": accent,
        "--color-border-danger": danger,
        "--color-border-success": success,
        "--color-border-warning": warning,
        "--color-border-disabled": b3,
        "--color-ring-primary": accent,
        "--color-ring-secondary": t2,
        "--color-ring-inverse": t_inv,
        "--color-ring-info": accent,
        "--color-ring-danger": danger,
        "--color-ring-success": success,
        "--color-ring-warning": warning,
        "--shadow-hairline": f"0 0 0 1px {b1}",
        "--shadow-sm": f"0 1px 2px {shadow}",
        "--shadow-md": f"0 4px 12px {shadow}",
        "--shadow-lg": f"0 12px 32px {shadow}",
    }
    return {**colours, **_SPACING_AND_TYPE}


# ChatGPT sends every key (probed: the variables arrive in ui/initialize and host-context-changed); the values
# here follow ChatGPT's public light/dark greys, not a capture of its exact tokens (a guess in the detail).
CHATGPT_STYLES = {
    "light": _palette(
        background=("#ffffff", "#f9f9f9", "#ececec", "#0d0d0d"),
        text=("#0d0d0d", "#5d5d5d", "#8f8f8f", "#ffffff"),
        border=("#e5e5e5", "#ededed", "#f3f3f3", "#0d0d0d"),
        accent="#0285ff",
        danger="#e02e2a",
        success="#008635",
        warning="#e25507",
        shadow="rgba(0, 0, 0, 0.1)",
    ),
    "dark": _palette(
        background=("#212121", "#303030", "#414141", "#ffffff"),
        text=("#ffffff", "#afafaf", "#8f8f8f", "#0d0d0d"),
        border=("#3a3a3a", "#424242", "#4d4d4d", "#ffffff"),
        accent="#48aaff",
        danger="#ff8583",
        success="#40c977",
        warning="#ff9e6c",
        shadow="rgba(0, 0, 0, 0.4)",
    ),
}
# A neutral palette for the generic host: the spec leaves the values to each host.
GENERIC_STYLES = {
    "light": _palette(
        background=("#ffffff", "#f6f7f9", "#eceef2", "#111827"),
        text=("#111827", "#4b5563", "#9ca3af", "#ffffff"),
        border=("#e5e7eb", "#eceef2", "#f3f4f6", "#111827"),
        accent="#2563eb",
        danger="#dc2626",
        success="#16a34a",
        warning="#d97706",
        shadow="rgba(17, 24, 39, 0.12)",
    ),
    "dark": _palette(
        background=("#111827", "#1f2937", "#374151", "#f9fafb"),
        text=("#f9fafb", "#d1d5db", "#9ca3af", "#111827"),
        border=("#374151", "#4b5563", "#1f2937", "#f9fafb"),
        accent="#60a5fa",
        danger="#f87171",
        success="#4ade80",
        warning="#fbbf24",
        shadow="rgba(0, 0, 0, 0.5)",
    ),
}
# Guess: Claude's warm neutrals and its clay accent, as seen in its public UI; not a capture of its variables.
CLAUDE_STYLES = {
    "light": _palette(
        background=("#faf9f5", "#f5f4ed", "#f0eee6", "#141413"),
        text=("#141413", "#3d3d3a", "#73726c", "#faf9f5"),
        border=("#e8e6dc", "#dedcd1", "#f0eee6", "#141413"),
        accent="#c96442",
        danger="#b53333",
        success="#2f7d32",
        warning="#a86f00",
        shadow="rgba(20, 20, 19, 0.08)",
    ),
    "dark": _palette(
        background=("#262624", "#30302e", "#1f1e1d", "#faf9f5"),
        text=("#faf9f5", "#c2c0b6", "#9c9a92", "#141413"),
        border=("#3e3e38", "#4a4a44", "#30302e", "#faf9f5"),
        accent="#d97757",
        danger="#e06c6c",
        success="#6fbf73",
        warning="#e0a440",
        shadow="rgba(0, 0, 0, 0.4)",
    ),
}


@dataclass(frozen=True)
class HostProfile:
    """One host as a widget meets it: the bridge's ui/initialize answer, the frame's sandbox, window.openai."""

    name: str
    label: str
    description: str
    host_info: dict[str, str]  # the bridge's hostInfo (an MCP Implementation: name and version)
    host_capabilities: dict[str, Any]  # without sandbox.csp, which the host adds per widget
    sandbox: str
    display_modes: tuple[str, ...]
    # containerDimensions in inline mode, in the spec's meaning (static/host/sizing.js plays it): `height`
    # fixes the frame's height, `maxHeight` lets it follow the view up to that; neither (or None: only the
    # frame's width) lets it follow the view's height.
    inline_container: dict[str, int] | None
    max_width: int  # the widest the host lets a widget be
    openai: bool  # whether window.openai exists
    styles: dict[str, dict[str, str]]  # styles.variables per theme
    user_agent: str  # hostContext.userAgent
    cdn_allowance: tuple[str, ...] = ()  # origins allowed without being declared (when the toggle is on)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "hostInfo": self.host_info,
            "hostCapabilities": self.host_capabilities,
            "sandbox": self.sandbox,
            "displayModes": list(self.display_modes),
            "inlineContainer": self.inline_container,
            "maxWidth": self.max_width,
            "openai": self.openai,
            "styles": self.styles,
            "userAgent": self.user_agent,
            "cdnAllowance": list(self.cdn_allowance),
            "downloadFile": "downloadFile" in self.host_capabilities,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Device:
    """Where the host runs: its viewport, its input, its safe area, and what it does with pip."""

    name: str
    label: str
    viewport: dict[str, int]  # width, height in CSS px
    platform: str  # hostContext.platform: web, desktop or mobile
    touch: bool
    hover: bool
    safe_area: dict[str, int]  # top, right, bottom, left in px
    openai_device: str  # window.openai.userAgent.device.type
    pip_becomes_fullscreen: bool  # ChatGPT on a phone has no room for pip: a request for it goes fullscreen

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "viewport": self.viewport,
            "platform": self.platform,
            "deviceCapabilities": {"touch": self.touch, "hover": self.hover},
            "safeAreaInsets": self.safe_area,
            "openaiUserAgent": self.openai_user_agent(),
            "pipBecomesFullscreen": self.pip_becomes_fullscreen,
        }

    def openai_user_agent(self) -> dict[str, Any]:
        return {"device": {"type": self.openai_device}, "capabilities": {"hover": self.hover, "touch": self.touch}}


_CHATGPT_CAPABILITIES = {
    "openLinks": {},
    "serverTools": {},
    "serverResources": {},
    "logging": {},
    "message": {"text": {}},
    "updateModelContext": {"text": {}},
}

PROFILES: dict[str, HostProfile] = {
    "chatgpt": HostProfile(
        name="chatgpt",
        label="ChatGPT",
        description="ChatGPT as probed: its sandbox, hostInfo, capabilities (no downloadFile), a content-sized card",
        # Probed: {name: "chatgpt"}. The spec's Implementation needs a version too, and the SDK's App refuses
        # the whole answer without one, so the profile adds one (the version itself is a guess).
        host_info={"name": "chatgpt", "version": "1.0.0"},
        host_capabilities=_CHATGPT_CAPABILITIES,
        sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-forms",
        display_modes=("inline", "pip", "fullscreen"),
        # Inline, ChatGPT sizes the frame to the view: OpenAI's UI guidelines have cards "expand in height
        # to match their content" with no nested scrolling (developers.openai.com/apps-sdk/concepts/
        # ui-guidelines), sunpeak measured the card's div following the resource's height (270 px for a
        # short one, up to 20,000 px) with window.openai.maxHeight undefined inline (dev.to/abewheeler/
        # chatgpt-app-display-mode-reference-49im), and mcp-use saw ChatGPT pin the width and let only
        # the height follow the view (github.com/mcp-use/mcp-use/issues/1459). MCPJam's capture of
        # ChatGPT's hostContext says {height: 400, maxWidth: 768}; a spec-reading view takes `height` as
        # fixed, which the frame is not, so the profile tells what the frame does.
        inline_container={"maxWidth": 768},
        max_width=768,
        openai=True,
        styles=CHATGPT_STYLES,
        user_agent="chatgpt",  # a guess: the probe recorded no hostContext.userAgent
        cdn_allowance=CHATGPT_CDNS,
        notes=(
            "ChatGPT reads ui.csp or openai/widgetCSP (unconfirmed which): the preview applies both.",
            "Inline, the frame follows the widget's height; ChatGPT was captured telling views"
            " containerDimensions {height: 400, maxWidth: 768}, which the preview does not repeat, since a view"
            " reads `height` as fixed.",
        ),
    ),
    "mcp-apps": HostProfile(
        name="mcp-apps",
        label="MCP Apps (generic host)",
        description="The MCP Apps spec's host: default sandbox, every capability, the bridge only",
        host_info={"name": "appsdk-preview", "version": __version__},
        host_capabilities={
            "openLinks": {},
            "downloadFile": {},
            "serverTools": {},
            "serverResources": {},
            "logging": {},
            "message": {"text": {}},
            "updateModelContext": {"text": {}, "structuredContent": {}},
        },
        sandbox="allow-scripts allow-same-origin",  # the spec's default for a view
        display_modes=("inline", "pip", "fullscreen"),
        inline_container=None,
        max_width=768,
        openai=False,
        styles=GENERIC_STYLES,
        user_agent=f"appsdk-preview/{__version__}",
    ),
    "claude": HostProfile(
        name="claude",
        label="Claude-like",
        description="Claude-like: the bridge only, inline and fullscreen, file downloads (partly guessed)",
        # Claude renders MCP Apps (announced January 2026); the name is observed in its client's MCP
        # clientInfo ("claude-ai"), the version is a guess.
        host_info={"name": "claude-ai", "version": "0.1.0"},
        # Guess: the documented capability set of the spec's reference host, which Claude's support follows;
        # downloadFile is listed because Claude offers file downloads from artifacts.
        host_capabilities={
            "openLinks": {},
            "downloadFile": {},
            "serverTools": {},
            "serverResources": {},
            "logging": {},
            "message": {"text": {}},
            "updateModelContext": {"text": {}},
        },
        sandbox="allow-scripts allow-same-origin allow-forms",  # guess: the spec default plus forms
        display_modes=("inline", "fullscreen"),  # guess: no pip seen in Claude
        # Guess: the width of Claude's column. Its frame follows the view's height (reports of Claude growing
        # an app's frame to the height it reports, e.g. github.com/akutishevsky/nutrition-mcp/pull/37); no
        # cap was seen, so none is told or applied.
        inline_container={"maxWidth": 720},
        max_width=720,
        openai=False,
        styles=CLAUDE_STYLES,
        user_agent="claude-ai",  # guess
        notes=("Values marked as guesses in profiles.py are not from a capture of Claude.",),
    ),
}

DEVICES: dict[str, Device] = {
    "desktop": Device(
        name="desktop",
        label="Desktop",
        viewport={"width": 1280, "height": 800},
        platform="web",
        touch=False,
        hover=True,
        safe_area={"top": 0, "right": 0, "bottom": 0, "left": 0},
        openai_device="desktop",
        pip_becomes_fullscreen=False,
    ),
    "tablet": Device(
        name="tablet",
        label="Tablet",
        viewport={"width": 820, "height": 1180},  # an iPad Air in portrait
        platform="mobile",
        touch=True,
        hover=False,
        safe_area={"top": 24, "right": 0, "bottom": 20, "left": 0},
        openai_device="tablet",
        pip_becomes_fullscreen=False,
    ),
    "mobile": Device(
        name="mobile",
        label="Mobile",
        viewport={"width": 390, "height": 844},  # an iPhone 14: its notch and home indicator
        platform="mobile",
        touch=True,
        hover=False,
        safe_area={"top": 47, "right": 0, "bottom": 34, "left": 0},
        openai_device="mobile",
        pip_becomes_fullscreen=True,
    ),
}


def profile(name: str | None) -> HostProfile:
    return PROFILES.get(name or "", PROFILES[DEFAULT_PROFILE])


def device(name: str | None) -> Device:
    return DEVICES.get(name or "", DEVICES[DEFAULT_DEVICE])


def profiles_json() -> dict[str, Any]:
    """What `/api/profiles` serves: every profile and device, and the defaults."""
    return {
        "defaultProfile": DEFAULT_PROFILE,
        "defaultDevice": DEFAULT_DEVICE,
        "profiles": {name: p.to_json() for name, p in PROFILES.items()},
        "devices": {name: d.to_json() for name, d in DEVICES.items()},
    }


def cdn_allowed(query: dict[str, str]) -> bool:
    """The jsdelivr/unpkg allowance: on for a profile that has one unless the page says `cdn=0`."""
    return bool(profile(query.get("profile")).cdn_allowance) and query.get("cdn", "1") != "0"


def widget_globals(query: dict[str, str]) -> dict[str, Any]:
    """window.openai's device globals for the widget document (`?device=`)."""
    chosen = device(query.get("device"))
    return {"userAgent": chosen.openai_user_agent(), "safeArea": {"insets": dict(chosen.safe_area)}}


def extra_sources(query: dict[str, str]) -> tuple[str, ...]:
    """Origins the profile allows a widget to load from without declaring them (ChatGPT's CDNs)."""
    return profile(query.get("profile")).cdn_allowance if cdn_allowed(query) else ()


def widget_csp(csp: HostCsp, query: dict[str, str], files_source: str | None) -> str:
    """The widget's CSP header for this profile: the declared domains, plus ChatGPT's CDNs when the
    allowance is on, plus the host's file store (connect and img) when window.openai's file APIs exist."""
    resource = tuple(dict.fromkeys([*csp.resource, *extra_sources(query)]))
    connect = csp.connect
    images: tuple[str, ...] = ()
    if files_source and query.get("openai", "1") != "0":
        connect = (*connect, files_source)
        images = (files_source,)
    return replace(csp, resource=resource, connect=connect).header(extra_images=images)


def widget_rules(template_meta: dict[str, Any], server_url: str | None) -> dict[str, dict[str, Any]]:
    """What each host does with this widget resource beyond the spec, per profile: `refuse` (the host shows
    no widget, and why) and `warn` (what it may refuse once the app is public). Claude renders nothing for
    a `ui.domain` that is not the name it derives from the connector URL; here the URL is the local one,
    which Claude never sees, so a name of Claude's form is only warned about (appsdk check --url with the
    public URL computes the right one)."""
    ui = template_meta.get("ui") if isinstance(template_meta.get("ui"), dict) else {}
    rules: dict[str, dict[str, Any]] = {name: {"refuse": None, "warn": []} for name in PROFILES}
    found = claude_domain_problem(ui.get("domain"), public_https_url(server_url))
    if found:
        message, fatal = found
        if fatal:
            rules["claude"]["refuse"] = message
        else:
            rules["claude"]["warn"].append(message)
    return rules
