"""`appsdk plugin install --codex`: list the plugin in a local Codex marketplace, and say how to add it.

Codex resolves a local entry's `source.path` against the marketplace root (the folder holding
`.agents/plugins/marketplace.json`); the path must start with ./ and name a folder below the root, so a
plugin cannot be its own marketplace (`path: "./"` is silently rejected). So:
- a plugin already at ROOT/plugins/NAME, where ROOT holds a marketplace file, is listed in place there;
- otherwise its package files are copied to MARKETPLACE/plugins/NAME (by default
  $APPSDK_HOME/codex-marketplace, one marketplace for all your local plugins); run it again after a change.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.checks.model import CheckReport
from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.home import home_location, private_folder
from appsdk_cli.plugin.manifest import discover, read_json_object
from appsdk_cli.plugin.rules import AUTH_POLICIES, EXPANDED_LIMIT, INSTALL_POLICIES, check_plugin
from appsdk_cli.plugin.tree import NotAFile, read_regular, walk_package
from appsdk_cli.safewrite import make_folder, rename_in_folder, write_file

MARKETPLACE_FILE = ".agents/plugins/marketplace.json"
DEFAULT_MARKETPLACE_NAME = "appsdk-local"
DEFAULT_MARKETPLACE_TITLE = "appsdk local plugins"
DEFAULT_CATEGORY = "Productivity"


@dataclass(frozen=True)
class InstallResult:
    report: CheckReport
    marketplace_root: Path | None = None
    marketplace_file: Path | None = None
    marketplace_name: str = ""
    plugin_name: str = ""
    source_path: str = ""  # "./plugins/NAME", relative to the marketplace root
    copied: bool = False  # the plugin's files were copied into the marketplace
    created: bool = False  # the marketplace file did not exist before
    entry: dict[str, Any] = field(default_factory=dict)
    commands: tuple[tuple[str, ...], ...] = ()

    def command_lines(self) -> list[str]:
        return [shlex.join(command) for command in self.commands]


def default_marketplace() -> Path:
    return home_location() / "codex-marketplace"


def _copy_plugin(root: Path, destination: Path, market_root: Path) -> None:
    """Replace destination with the plugin's package files; the old copy goes only once the new one is whole.
    Every write stays under the marketplace (appsdk_cli.safewrite), the copy made under a random name."""
    files = walk_package(root, skip={destination.resolve()}).files
    token = secrets.token_hex(6)
    plugins = destination.parent
    staging, retired = f".{destination.name}.{token}.new", f".{destination.name}.{token}.old"
    try:
        make_folder(plugins / staging, root=market_root)
        for relative in files:
            target = plugins / staging / relative
            # Read as the check read it (a regular file, opened non-blocking), then its mode and times.
            write_file(target, read_regular(root / relative, root=root, limit=EXPANDED_LIMIT + 1), root=market_root)
            shutil.copystat(root / relative, target, follow_symlinks=False)
        if os.path.lexists(destination):
            rename_in_folder(plugins, destination.name, retired, root=market_root)
        rename_in_folder(plugins, staging, destination.name, root=market_root)
    finally:
        shutil.rmtree(plugins / staging, ignore_errors=True)
        shutil.rmtree(plugins / retired, ignore_errors=True)


def install_codex(
    root: Path,
    *,
    marketplace: Path | None = None,
    installation: str = "AVAILABLE",
    authentication: str = "ON_INSTALL",
) -> InstallResult:
    root = root.resolve()
    if installation not in INSTALL_POLICIES:
        raise UsageError(f"--installation must be one of {', '.join(INSTALL_POLICIES)}, not {installation!r}")
    if authentication not in AUTH_POLICIES:
        raise UsageError(f"--authentication must be one of {', '.join(AUTH_POLICIES)}, not {authentication!r}")
    report = check_plugin(root)
    if report.failed:
        return InstallResult(report)
    manifest = discover(root).data
    name = str(manifest["name"])
    # In place only inside an existing marketplace: never start one in whatever folder is above plugins/.
    in_place = (
        marketplace is None and root.parent.name == "plugins" and (root.parent.parent / MARKETPLACE_FILE).is_file()
    )
    market_root = root.parent.parent if in_place else (marketplace or default_marketplace()).expanduser().resolve()
    if market_root == root:
        raise UsageError(
            f'{root} cannot be its own marketplace (Codex rejects source path "./"); give --marketplace another folder'
        )
    folder = root.name if in_place else name
    source_path = f"./plugins/{folder}"
    market_file = market_root / MARKETPLACE_FILE
    created = not market_file.exists()
    if created:
        market: dict[str, Any] = {
            "name": DEFAULT_MARKETPLACE_NAME,
            "interface": {"displayName": DEFAULT_MARKETPLACE_TITLE},
            "plugins": [],
        }
    else:
        try:
            market = read_json_object(market_file)
        except (OSError, ValueError) as error:
            raise AppsdkError(f"{market_file} {error}; fix or remove it, nothing was changed") from error
        if not isinstance(market.get("name"), str) or not isinstance(market.get("plugins", []), list):
            raise AppsdkError(f"{market_file} has no name or a plugins value that is not a list; nothing was changed")
        market.setdefault("plugins", [])
    interface = manifest.get("interface") if isinstance(manifest.get("interface"), dict) else {}
    category = interface.get("category") if isinstance(interface.get("category"), str) else DEFAULT_CATEGORY
    entry = {
        "name": name,
        "source": {"source": "local", "path": source_path},
        "policy": {"installation": installation, "authentication": authentication},
        "category": category,
    }
    plugins: list[Any] = market["plugins"]
    index = next((i for i, p in enumerate(plugins) if isinstance(p, dict) and p.get("name") == name), None)
    if index is None:
        plugins.append(entry)
    else:
        plugins[index] = entry
    try:
        if not in_place:
            # Inside APPSDK_HOME (the default) the folders are made private, as everything there is.
            private_folder(market_root / "plugins")
            _copy_plugin(root, market_root / "plugins" / folder, market_root)
        private_folder(market_file.parent)
        write_file(market_file, json.dumps(market, indent=2, ensure_ascii=False) + "\n", root=market_root)
    except NotAFile as refusal:  # swapped since the check: one line, the marketplace left as it was
        raise AppsdkError(f"a file in {root} {refusal} since it was checked; nothing was installed") from None
    except OSError as error:
        raise AppsdkError(f"cannot write the marketplace in {market_root}: {error.strerror or error}") from error
    commands = (
        ("codex", "plugin", "marketplace", "add", str(market_root)),
        ("codex", "plugin", "add", f"{name}@{market['name']}"),
    )
    return InstallResult(
        report,
        market_root,
        market_file,
        str(market["name"]),
        name,
        source_path,
        copied=not in_place,
        created=created,
        entry=entry,
        commands=commands,
    )
