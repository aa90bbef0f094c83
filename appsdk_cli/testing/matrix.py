"""The host matrix: `@pytest.mark.hosts(profiles=[...], themes=[...], modes=[...], devices=[...])`.

Each case is one rendering's host settings; its id names the profile and theme (`chatgpt-dark`), and the
display mode and device too when the marker lists them. Pure: the plugin turns the cases into parameters.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_PROFILES = ("chatgpt",)
DEFAULT_THEMES = ("light",)


@dataclass(frozen=True)
class HostCase:
    profile: str = "chatgpt"
    theme: str = "light"
    display_mode: str = "inline"
    device: str = "desktop"
    id: str = "chatgpt-light"


def _listed(value: str | Iterable[str] | None, default: Sequence[str], what: str) -> tuple[str, ...]:
    if value is None:
        return tuple(default)
    chosen = (value,) if isinstance(value, str) else tuple(value)
    if not chosen:
        raise ValueError(f"hosts(): {what} is empty")
    return chosen


def host_cases(*profiles: str, **choices: Any) -> list[HostCase]:
    """Every combination the marker asks for, checked against the host's profiles, themes, modes, devices."""
    from appsdk_cli.host.profiles import DEVICES, PROFILES
    from appsdk_cli.host.session import DISPLAY_MODES, THEMES

    unknown = set(choices) - {"profiles", "themes", "modes", "devices"}
    if unknown:
        raise ValueError(f"hosts(): unknown argument {sorted(unknown)[0]!r}; use profiles, themes, modes, devices")
    if profiles and "profiles" in choices:
        raise ValueError("hosts(): name the profiles either positionally or as profiles=, not both")
    named = _listed(profiles or choices.get("profiles"), DEFAULT_PROFILES, "profiles")
    themes = _listed(choices.get("themes"), DEFAULT_THEMES, "themes")
    modes = _listed(choices.get("modes"), ("inline",), "modes")
    devices = _listed(choices.get("devices"), ("desktop",), "devices")
    for what, values, known in (
        ("profile", named, tuple(PROFILES)),
        ("theme", themes, THEMES),
        ("mode", modes, DISPLAY_MODES),
        ("device", devices, tuple(DEVICES)),
    ):
        for value in values:
            if value not in known:
                raise ValueError(f"hosts(): unknown {what} {value!r}; one of {', '.join(known)}")
    cases = []
    for profile, theme, mode, device in itertools.product(named, themes, modes, devices):
        parts = [profile, theme]
        if "modes" in choices:
            parts.append(mode)
        if "devices" in choices:
            parts.append(device)
        cases.append(HostCase(profile, theme, mode, device, "-".join(parts)))
    return cases
