"""`appsdk plugin init | check | pack | install`: every PLUG rule fails its own fixture, the scaffold is a
plugin that passes, packs reproducibly and installs into a Codex marketplace of the documented shape.

Fixtures are plugin folders built in tmp_path from one valid plugin and one change each; the CLI runs as a
child process, and init reads real servers (the scaffold in memory, a third-party Node server live).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, appsdk, free_port, serve, stop

from appsdk_cli.plugin import images
from appsdk_cli.plugin.manifest import AGENT_SCHEMA, discover
from appsdk_cli.plugin.marketplace import install_codex
from appsdk_cli.plugin.pack import pack_plugin
from appsdk_cli.plugin.rules import RULES, check_plugin
from appsdk_cli.plugin.tree import walk_package

# The published IDs: a rule keeps its ID and name forever, so this table is written out, not derived.
PLUG_RULES = [
    ("PLUG101", "manifest-missing"),
    ("PLUG102", "manifest-invalid"),
    ("PLUG103", "root-manifest-ignored"),
    ("PLUG104", "agent-schema-unsupported"),
    ("PLUG105", "agent-manifest-closed-set"),
    ("PLUG106", "manifest-symlink"),
    ("PLUG107", "name-invalid"),
    ("PLUG108", "version-invalid"),
    ("PLUG109", "description-missing"),
    ("PLUG110", "manifest-path-invalid"),
    ("PLUG111", "mcp-config-invalid"),
    ("PLUG112", "mcp-url-not-public"),
    ("PLUG113", "manifest-field-unknown"),
    ("PLUG114", "manifest-dir-clutter"),
    ("PLUG201", "interface-field-missing"),
    ("PLUG202", "listing-too-long"),
    ("PLUG203", "url-not-https"),
    ("PLUG204", "url-placeholder"),
    ("PLUG205", "brand-color-contrast"),
    ("PLUG206", "default-prompt-invalid"),
    ("PLUG207", "screenshots-without-ui"),
    ("PLUG301", "asset-missing"),
    ("PLUG302", "asset-type"),
    ("PLUG303", "asset-dimensions"),
    ("PLUG304", "asset-too-large"),
    ("PLUG401", "marketplace-invalid"),
    ("PLUG402", "marketplace-source-invalid"),
    ("PLUG403", "marketplace-entry-incomplete"),
    ("PLUG501", "archive-symlink"),
    ("PLUG502", "archive-path-invalid"),
    ("PLUG503", "archive-app-json"),
    ("PLUG504", "archive-too-large"),
    ("PLUG505", "archive-not-a-file"),
    ("PLUG506", "archive-too-deep"),
]
NO_ENV = {"APPSDK_URL": ""}


def good_manifest(**changes) -> dict:
    manifest = {
        "name": "pin-board",
        "version": "1.2.0",
        "description": "Pins notes to a shared board.",
        "author": {"name": "Ada", "url": "https://ada.dev/"},
        "mcpServers": "./.mcp.json",
        "interface": {
            "displayName": "Pin Board",
            "shortDescription": "Pin notes to a board",
            "longDescription": "Pins notes to a shared board and shows them as cards.",
            "developerName": "Ada",
            "category": "Productivity",
            "capabilities": ["Interactive", "Read"],
            "websiteURL": "https://pinboard.dev/",
            "privacyPolicyURL": "https://pinboard.dev/privacy",
            "termsOfServiceURL": "https://pinboard.dev/terms",
            "defaultPrompt": ["Show my board", "Pin a note about lunch"],
            "brandColor": "#2F6FEB",
            "composerIcon": "./assets/logo.png",
            "logo": "./assets/logo.png",
            "screenshots": ["./assets/board.png"],
        },
    }
    manifest.update(changes)
    return manifest


def write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def make_plugin(root: Path, manifest: dict | None = None) -> Path:
    """A plugin that passes every rule: manifest, .mcp.json on a public https URL, a logo and a screenshot."""
    write_json(root / ".codex-plugin" / "plugin.json", manifest or good_manifest())
    write_json(
        root / ".mcp.json",
        {"mcpServers": {"pin-board": {"type": "streamable_http", "url": "https://pinboard.dev/mcp"}}},
    )
    (root / "assets").mkdir(parents=True, exist_ok=True)
    (root / "assets" / "logo.png").write_bytes(images.placeholder_logo(64, (0x2F, 0x6F, 0xEB)))
    (root / "assets" / "board.png").write_bytes(images.placeholder_logo(48, (0x2F, 0x6F, 0xEB)))
    (root / "server.py").write_text("print('hi')\n", encoding="utf-8")
    return root


def edit(root: Path, change: Callable[[dict], None]) -> None:
    path = root / ".codex-plugin" / "plugin.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    write_json(path, manifest)


def interface(**values) -> Callable[[dict], None]:
    return lambda manifest: manifest["interface"].update(values)


def drop_interface(*keys: str) -> Callable[[dict], None]:
    return lambda manifest: [manifest["interface"].pop(key) for key in keys]


def ids(report) -> list[str]:
    return [finding.rule.id for finding in report.findings]


def test_rule_ids_are_published_and_stable():
    assert [(rule.id, rule.name) for rule in RULES] == PLUG_RULES
    assert len({rule.id for rule in RULES}) == len(RULES)


def test_a_complete_plugin_has_no_findings(tmp_path: Path):
    report = check_plugin(make_plugin(tmp_path / "pin-board"))
    assert report.findings == [], [f.message for f in report.findings]
    assert not report.failed


def _marketplace(root: Path, entry: dict | None = None, **top) -> None:
    make_plugin(root / "plugins" / "pin-board")
    entry = (
        entry
        if entry is not None
        else {
            "name": "pin-board",
            "source": {"source": "local", "path": "./plugins/pin-board"},
            "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
            "category": "Productivity",
        }
    )
    write_json(root / ".agents/plugins/marketplace.json", {"name": "mine", "plugins": [entry], **top})


def _symlinked_manifest(root: Path) -> None:
    real = root / "elsewhere.json"
    real.write_text(json.dumps(good_manifest()))
    (root / ".codex-plugin" / "plugin.json").unlink()
    (root / ".codex-plugin" / "plugin.json").symlink_to(real)


def _large_asset(root: Path) -> None:
    logo = images.placeholder_logo(64, (0x2F, 0x6F, 0xEB))
    (root / "assets" / "logo.png").write_bytes(logo + b"\0" * (5 * 1024 * 1024))


# rule id -> how to break the valid plugin so that (only) that rule's reason applies
BREAKS: dict[str, Callable[[Path], None]] = {
    "PLUG101": lambda root: shutil.rmtree(root / ".codex-plugin"),
    "PLUG102": lambda root: (root / ".codex-plugin" / "plugin.json").write_text("{not json"),
    "PLUG103": lambda root: write_json(root / "plugin.json", {"name": "pin-board"}),
    "PLUG104": lambda root: write_json(
        root / "plugin.json", {"$schema": "https://agent-plugins.org/schemas/9.0.0/plugin.schema.json", "name": "x"}
    ),
    "PLUG105": lambda root: write_json(
        root / "plugin.json", {"$schema": AGENT_SCHEMA, "name": "pin-board", "interface": {}}
    ),
    "PLUG106": _symlinked_manifest,
    "PLUG107": lambda root: edit(root, lambda m: m.update(name="Pin Board")),
    "PLUG108": lambda root: edit(root, lambda m: m.update(version="1.2")),
    "PLUG109": lambda root: edit(root, lambda m: m.pop("description")),
    "PLUG110": lambda root: edit(root, lambda m: m.update(skills="skills/")),
    "PLUG111": lambda root: write_json(root / ".mcp.json", {"mcpServers": {"pin-board": {"type": "streamable_http"}}}),
    "PLUG112": lambda root: write_json(
        root / ".mcp.json",
        {"mcpServers": {"pin-board": {"type": "streamable_http", "url": "http://127.0.0.1:8000/mcp"}}},
    ),
    "PLUG113": lambda root: edit(root, lambda m: m.update(mcp_servers="./.mcp.json")),
    "PLUG114": lambda root: (root / ".codex-plugin" / "notes.md").write_text("x"),
    "PLUG201": lambda root: edit(root, drop_interface("developerName", "privacyPolicyURL")),
    "PLUG202": lambda root: edit(root, interface(displayName="The Most Wonderful Pin Board Ever Made")),
    "PLUG203": lambda root: edit(root, interface(websiteURL="http://pinboard.dev/")),
    "PLUG204": lambda root: edit(root, interface(termsOfServiceURL="https://replace-me.example.com/terms")),
    "PLUG205": lambda root: edit(root, interface(brandColor="#111111")),
    "PLUG206": lambda root: edit(root, interface(defaultPrompt=["Ask @board", "a", "a", "b"])),
    "PLUG207": lambda root: edit(root, interface(capabilities=["Read"])),
    "PLUG301": lambda root: (root / "assets" / "board.png").unlink(),
    "PLUG302": lambda root: (root / "assets" / "board.png").write_bytes(b"GIF89a" + b"\0" * 32),
    "PLUG303": lambda root: (root / "assets" / "logo.png").write_bytes(images.placeholder_logo(32, (0x2F, 0x6F, 0xEB))),
    "PLUG304": _large_asset,
    "PLUG401": lambda root: write_json(root / ".agents/plugins/marketplace.json", {"plugins": []}),
    "PLUG501": lambda root: (root / "link.py").symlink_to(root / "server.py"),
    "PLUG502": lambda root: (root / "odd\\name.txt").write_text("x"),
    "PLUG503": lambda root: write_json(root / ".app.json", {"apps": {}}),
    "PLUG505": lambda root: os.mkfifo(root / "notes.pipe"),
    "PLUG506": lambda root: (root / "/".join(["deep"] * 40)).mkdir(parents=True),
}
# The marketplace-root rules: a folder holding only a marketplace file and the plugins it lists.
MARKET_BREAKS: dict[str, Callable[[Path], None]] = {
    "PLUG402": lambda root: _marketplace(root, {"name": "pin-board", "source": {"source": "local", "path": "./"}}),
    "PLUG403": lambda root: _marketplace(
        root, {"name": "pin-board", "source": {"source": "local", "path": "./plugins/pin-board"}}
    ),
}


@pytest.mark.parametrize("rule_id", sorted(BREAKS))
def test_each_rule_fires_on_its_fixture(tmp_path: Path, rule_id: str):
    root = make_plugin(tmp_path / "pin-board")
    BREAKS[rule_id](root)
    report = check_plugin(root)
    assert rule_id in ids(report), [f"{f.rule.id}: {f.message}" for f in report.findings]


@pytest.mark.parametrize("rule_id", sorted(MARKET_BREAKS))
def test_each_marketplace_rule_fires_on_its_fixture(tmp_path: Path, rule_id: str):
    MARKET_BREAKS[rule_id](tmp_path)
    report = check_plugin(tmp_path)
    assert rule_id in ids(report), [f"{f.rule.id}: {f.message}" for f in report.findings]


def test_too_many_files_break_the_archive_limit(tmp_path: Path):
    root = make_plugin(tmp_path / "pin-board")
    data = root / "data"
    data.mkdir()
    for index in range(5001):
        (data / f"{index}.txt").touch()
    assert "PLUG504" in ids(check_plugin(root))


def test_every_rule_has_a_fixture():
    assert set(BREAKS) | set(MARKET_BREAKS) | {"PLUG504"} == {rule_id for rule_id, _ in PLUG_RULES}


def test_the_cli_reports_like_appsdk_check(tmp_path: Path):
    root = make_plugin(tmp_path / "pin-board")
    BREAKS["PLUG107"](root)
    result = appsdk("plugin", "check", str(root), "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["summary"]["errors"] == 1 and report["summary"]["passed"] is False
    assert report["findings"][0]["rule"] == "PLUG107" and report["findings"][0]["hint"]
    shown = appsdk("plugin", "check", str(root))
    assert shown.returncode == 1 and "PLUG107" in shown.stdout and "✗ 1 error" in shown.stdout
    warned = make_plugin(tmp_path / "warned")
    BREAKS["PLUG204"](warned)
    assert appsdk("plugin", "check", str(warned)).returncode == 0
    assert appsdk("plugin", "check", str(warned), "--strict").returncode == 1
    missing = appsdk("plugin", "check", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "not a folder" in missing.stderr and "Traceback" not in missing.stderr


# --- discovery, as Codex's loader does it ------------------------------------------------------------


def test_an_agent_plugins_root_manifest_is_overlaid_by_the_codex_one(tmp_path: Path):
    root = make_plugin(tmp_path / "pin-board")
    write_json(
        root / "plugin.json", {"$schema": AGENT_SCHEMA, "name": "pin-board", "version": "9.9.9", "license": "MIT"}
    )
    found = discover(root)
    assert found.base == "plugin.json" and found.manifest == ".codex-plugin/plugin.json"
    assert found.data["license"] == "MIT" and found.data["version"] == "1.2.0"  # the overlay wins
    assert check_plugin(root).findings == []


def test_manifest_paths_are_tried_in_codex_order(tmp_path: Path):
    root = tmp_path / "p"
    write_json(root / ".cursor-plugin" / "plugin.json", {"name": "cursor"})
    assert discover(root).data["name"] == "cursor"
    write_json(root / ".claude-plugin" / "plugin.json", {"name": "claude"})
    assert discover(root).data["name"] == "claude"
    write_json(root / ".codex-plugin" / "plugin.json", {"name": "codex"})
    assert discover(root).data["name"] == "codex"
    write_json(root / "plugin.json", {"name": "root"})  # no $schema: not a manifest
    found = discover(root)
    assert found.data["name"] == "codex" and found.ignored_root


# --- init ----------------------------------------------------------------------------------------------


def test_the_scaffold_is_a_plugin_that_passes(tmp_path: Path):
    made = appsdk("new", "book-club", "--path", str(tmp_path), "--json")
    assert made.returncode == 0, made.stderr
    project = tmp_path / "book-club"
    files = json.loads(made.stdout)["files"]
    assert {".codex-plugin/plugin.json", ".codex-mcp.json", "assets/logo.png"} <= set(files)
    # Claude Code reads a folder's .mcp.json as that project's own MCP servers: the app's server for Codex
    # lies in the file its manifest names, so an agent opened in the app's folder is not offered the app.
    assert not (project / ".mcp.json").exists()
    manifest = json.loads((project / ".codex-plugin" / "plugin.json").read_text())
    assert manifest["mcpServers"] == "./.codex-mcp.json"
    servers = json.loads((project / ".codex-mcp.json").read_text())["mcpServers"]
    assert servers == {"book-club": {"type": "streamable_http", "url": "http://127.0.0.1:8000/mcp"}}
    checked = appsdk("plugin", "check", str(project), "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rules = {f["rule"] for f in json.loads(checked.stdout)["findings"]}
    assert rules <= {"PLUG204", "PLUG112"}, rules  # the placeholder URLs, and the local dev /mcp URL
    # Without a widget domain the app cannot be submitted, and --submission says so as an error.
    bare = appsdk("check", str(project), "--submission", "--json", env=NO_ENV)
    assert bare.returncode == 1, bare.stdout + bare.stderr
    assert {f["rule"] for f in json.loads(bare.stdout)["findings"] if f["severity"] == "error"} == {"APPS904"}
    # With the reserved domain given to `appsdk new`, only the URL checks that need a public --url remain.
    with_domain = appsdk("new", "book-club", "--path", str(tmp_path / "d"), "--domain", "books.ngrok.app")
    assert with_domain.returncode == 0, with_domain.stderr
    submission = appsdk("check", str(tmp_path / "d" / "book-club"), "--submission", "--json", env=NO_ENV)
    assert submission.returncode == 0, submission.stdout + submission.stderr
    report = json.loads(submission.stdout)
    assert report["summary"]["errors"] == 0
    assert {f["rule"] for f in report["findings"]} == {"APPS912"}
    manifest = json.loads((project / ".codex-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "book-club" and manifest["version"] == "0.1.0"
    assert manifest["interface"]["capabilities"] == ["Interactive", "Read"]
    assert manifest["interface"]["defaultPrompt"] == ["Show book club picks"]
    assert all(
        "replace-me" in manifest["interface"][k] for k in ("websiteURL", "privacyPolicyURL", "termsOfServiceURL")
    )
    logo = images.sniff((project / "assets" / "logo.png").read_bytes())
    assert logo is not None and logo.kind == "png" and logo.width == logo.height == 512
    skipped = appsdk("new", "bare", "--path", str(tmp_path), "--no-plugin")
    assert skipped.returncode == 0 and not (tmp_path / "bare" / ".codex-plugin").exists()


def test_init_uses_the_url_and_the_reserved_tunnel_domain(tmp_path: Path):
    assert appsdk("new", "demo", "--path", str(tmp_path), "--no-plugin").returncode == 0
    project = tmp_path / "demo"
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.appsdk.tunnel]\ndomain = "demo.ngrok.app"\n')
    first = appsdk("plugin", "init", str(project), "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["mcpUrl"] == "https://demo.ngrok.app/mcp"
    again = appsdk("plugin", "init", str(project))
    assert again.returncode == 1 and "--force" in again.stderr and "Traceback" not in again.stderr
    forced = appsdk("plugin", "init", str(project), "--force", "--url", "https://demo.example.org/mcp")
    assert forced.returncode == 0, forced.stderr
    config = json.loads((project / ".codex-mcp.json").read_text())
    assert config == {"mcpServers": {"demo": {"type": "streamable_http", "url": "https://demo.example.org/mcp"}}}
    bad = appsdk("plugin", "init", str(project), "--force", "--url", "demo")
    assert bad.returncode == 2 and "--url" in bad.stderr


@pytest.mark.interop  # the MCP Apps example server, a Node program
def test_init_reads_a_third_party_server(tmp_path: Path):
    """The MCP Apps example server (Node, not ours) as a live source: the plugin it yields passes."""
    node = shutil.which("node")
    server_js = REPO / "tests/interop/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js"
    if node is None or not server_js.is_file():
        pytest.fail("node and tests/interop/node_modules are needed (cd tests/interop && npm install)")
    port = free_port()
    running = serve([node, str(server_js)], port, env={"PORT": str(port)})
    try:
        folder = tmp_path / "basic"
        folder.mkdir()
        url = f"http://127.0.0.1:{port}/mcp"
        made = appsdk("plugin", "init", str(folder), "--server", url, "--url", url, "--json")
        assert made.returncode == 0, made.stderr
    finally:
        stop(running.process)
    manifest = json.loads((folder / ".codex-plugin" / "plugin.json").read_text())
    assert manifest["interface"]["capabilities"][0] == "Interactive"  # it has a widget
    checked = appsdk("plugin", "check", str(folder), "--json")
    assert checked.returncode == 0, checked.stdout
    assert {f["rule"] for f in json.loads(checked.stdout)["findings"]} <= {"PLUG204", "PLUG112"}


# --- pack ----------------------------------------------------------------------------------------------


def test_pack_is_reproducible_and_unpacks_to_the_same_tree(tmp_path: Path):
    root = make_plugin(tmp_path / "pin-board")
    (root / ".venv").mkdir()
    (root / ".venv" / "junk").write_text("never packed")
    (root / ".env").write_text("SECRET=1")
    first = pack_plugin(root, output=tmp_path / "out1")
    assert first.archive is not None and first.archive.name == "pin-board-1.2.0.zip"
    # Same files, other timestamps and permission bits that do not matter: the same bytes.
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (1_700_000_000, 1_700_000_000))
    (root / "server.py").chmod(0o600)
    second = pack_plugin(root, output=tmp_path / "out2")
    assert second.archive is not None
    assert first.archive.read_bytes() == second.archive.read_bytes()
    assert first.sha256 == second.sha256
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(first.archive) as archive:
        names = archive.namelist()
        assert names == sorted(names)
        assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in archive.infolist())
        archive.extractall(unpacked)
    files = walk_package(root, skip=set()).files
    assert [str(f) for f in files] == names
    assert ".env" not in names and not any(n.startswith(".venv") for n in names)
    for name in names:
        assert (unpacked / name).read_bytes() == (root / name).read_bytes()


def test_pack_refuses_a_plugin_that_fails_the_check(tmp_path: Path):
    root = make_plugin(tmp_path / "pin-board")
    BREAKS["PLUG501"](root)
    result = appsdk("plugin", "pack", str(root), "-o", str(tmp_path / "out"))
    assert result.returncode == 1
    assert "PLUG501" in result.stdout and "nothing packed" in result.stdout
    assert not (tmp_path / "out").exists()
    app_json = make_plugin(tmp_path / "app-json")
    BREAKS["PLUG503"](app_json)
    assert not check_plugin(app_json).failed  # Codex reads .app.json; only a package may not carry it
    assert pack_plugin(app_json, output=tmp_path / "out3").archive is None
    fine = make_plugin(tmp_path / "fine")
    packed = appsdk("plugin", "pack", str(fine), "--json")
    assert packed.returncode == 0, packed.stderr
    data = json.loads(packed.stdout)
    assert Path(data["archive"]) == fine / "dist" / "pin-board-1.2.0.zip" and data["entries"] == 5
    repacked = appsdk("plugin", "pack", str(fine), "--json")  # dist/ itself is never packed
    assert json.loads(repacked.stdout)["sha256"] == data["sha256"]


# --- install --codex -----------------------------------------------------------------------------------


def assert_marketplace_shape(market: dict) -> None:
    """The shape in platform-2026.md §5."""
    assert isinstance(market["name"], str) and isinstance(market["interface"]["displayName"], str)
    for entry in market["plugins"]:
        assert set(entry) == {"name", "source", "policy", "category"}
        assert entry["source"]["source"] == "local"
        assert entry["source"]["path"].startswith("./plugins/") and entry["source"]["path"] != "./"
        assert entry["policy"]["installation"] in ("NOT_AVAILABLE", "AVAILABLE", "INSTALLED_BY_DEFAULT")
        assert entry["policy"]["authentication"] in ("ON_INSTALL", "ON_USE")


def test_install_writes_a_codex_marketplace_and_prints_the_commands(tmp_path: Path):
    root = make_plugin(tmp_path / "work" / "pin-board")
    market_root = tmp_path / "market"
    result = appsdk("plugin", "install", str(root), "--codex", "--marketplace", str(market_root), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["commands"] == [
        ["codex", "plugin", "marketplace", "add", str(market_root)],
        ["codex", "plugin", "add", "pin-board@appsdk-local"],
    ]
    market = json.loads((market_root / ".agents/plugins/marketplace.json").read_text())
    assert_marketplace_shape(market)
    assert market["plugins"] == [
        {
            "name": "pin-board",
            "source": {"source": "local", "path": "./plugins/pin-board"},
            "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
            "category": "Productivity",
        }
    ]
    assert (market_root / "plugins/pin-board/.codex-plugin/plugin.json").is_file()
    assert check_plugin(market_root).findings == []  # the marketplace passes its own rules
    # Run again after a change: the entry is updated in place, other plugins are kept.
    market["plugins"].insert(0, {"name": "other", "source": {"source": "url", "url": "https://git.example/o.git"}})
    write_json(market_root / ".agents/plugins/marketplace.json", market)
    edit(root, interface(category="Developer Tools"))
    text = appsdk(
        "plugin", "install", str(root), "--codex", "--marketplace", str(market_root), "--authentication", "on-use"
    )
    assert text.returncode == 0, text.stderr
    assert "codex plugin marketplace add" in text.stdout and "codex plugin add pin-board@appsdk-local" in text.stdout
    updated = json.loads((market_root / ".agents/plugins/marketplace.json").read_text())
    assert [p["name"] for p in updated["plugins"]] == ["other", "pin-board"]
    assert updated["plugins"][1]["category"] == "Developer Tools"
    assert updated["plugins"][1]["policy"]["authentication"] == "ON_USE"
    copied = json.loads((market_root / "plugins/pin-board/.codex-plugin/plugin.json").read_text())
    assert copied["interface"]["category"] == "Developer Tools"


def test_install_lists_a_plugin_in_place_under_plugins(tmp_path: Path):
    root = make_plugin(tmp_path / "repo" / "plugins" / "board-folder")
    write_json(tmp_path / "repo/.agents/plugins/marketplace.json", {"name": "team", "plugins": []})
    result = install_codex(root)
    assert result.marketplace_root == tmp_path / "repo" and not result.copied
    assert result.entry["source"] == {"source": "local", "path": "./plugins/board-folder"}
    market = json.loads((tmp_path / "repo/.agents/plugins/marketplace.json").read_text())
    assert market["name"] == "team" and [p["name"] for p in market["plugins"]] == ["pin-board"]
    assert result.commands[1] == ("codex", "plugin", "add", "pin-board@team")


def test_install_copies_a_plugin_under_a_plugins_folder_without_a_marketplace(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("APPSDK_HOME", str(tmp_path / "home"))
    root = make_plugin(tmp_path / "somewhere" / "plugins" / "pin-board")
    result = install_codex(root)
    assert result.copied and result.marketplace_root == tmp_path / "home" / "codex-marketplace"
    assert not (tmp_path / "somewhere" / ".agents").exists()


def test_install_refuses_what_codex_would_reject(tmp_path: Path):
    root = make_plugin(tmp_path / "pin-board")
    own = appsdk("plugin", "install", str(root), "--codex", "--marketplace", str(root))
    assert own.returncode == 2 and "own marketplace" in own.stderr
    no_host = appsdk("plugin", "install", str(root))
    assert no_host.returncode == 2 and "--codex" in no_host.stderr
    BREAKS["PLUG107"](root)
    broken = appsdk("plugin", "install", str(root), "--codex", "--marketplace", str(tmp_path / "m"))
    assert broken.returncode == 1 and "PLUG107" in broken.stdout and not (tmp_path / "m").exists()


def test_plugin_help_is_fast_to_import():
    """`appsdk --help` must not pull in the plugin capability (a child process, so imports are fresh)."""
    code = "import sys, appsdk_cli.cli; print('appsdk_cli.plugin.rules' in sys.modules)"
    import subprocess

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_init_says_in_one_line_when_the_server_cannot_be_read(tmp_path: Path):
    from conftest import dead_url

    result = appsdk("plugin", "init", str(tmp_path), "--server", dead_url())
    assert result.returncode == 1 and "cannot reach" in result.stderr and "--server" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    plain = appsdk("plugin", "init", str(tmp_path))  # no server.py here
    assert plain.returncode == 1 and "--server" in plain.stderr and "Traceback" not in plain.stderr
    assert not (tmp_path / ".codex-plugin").exists()


def test_new_force_keeps_an_existing_plugin_manifest(tmp_path: Path):
    assert appsdk("new", "demo", "--path", str(tmp_path)).returncode == 0
    manifest = tmp_path / "demo" / ".codex-plugin" / "plugin.json"
    manifest.write_text('{"name": "mine"}')
    again = appsdk("new", "demo", "--path", str(tmp_path), "--force")
    assert again.returncode == 0, again.stderr
    assert manifest.read_text() == '{"name": "mine"}'


def test_the_rules_page_documents_every_rule_as_it_is():
    text = (REPO / "docs" / "rules.md").read_text()
    rows = re.findall(r"^\| (PLUG\d{3}) \| `([a-z-]+)` \| (error|warning) \|", text, re.M)
    assert rows == [(rule.id, rule.name, rule.severity.value) for rule in RULES]


# --- a hostile plugin folder: only regular files are read, the walk is bounded ------------------------------


WIDE = {"COLUMNS": "250"}  # a finding's row on one terminal line


def _refusals(result, needle: str) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if needle in line]


def test_a_fifo_as_the_logo_is_refused_in_one_line_and_hangs_nothing(tmp_path: Path):
    """A plugin folder whose logo is a FIFO: reading it would wait for a writer for good. check, pack and
    install each refuse it in one line naming the file, well within their timeout; the real logo then
    checks, packs and installs."""
    root = make_plugin(tmp_path / "pin-board")
    logo = root / "assets" / "logo.png"
    real_logo = logo.read_bytes()
    logo.unlink()
    os.mkfifo(logo)
    market = tmp_path / "market"
    commands = {
        "check": ("plugin", "check", str(root)),
        "pack": ("plugin", "pack", str(root), "-o", str(tmp_path / "out")),
        "install": ("plugin", "install", str(root), "--codex", "--marketplace", str(market)),
    }
    for name, words in commands.items():
        result = appsdk(*words, env=WIDE, timeout=30)  # the guard: a hang fails here, it does not stall the suite
        assert result.returncode == 1, (name, result.stdout, result.stderr)
        said = _refusals(result, "assets/logo.png is a FIFO")
        assert len(said) == 1 and "PLUG505" in said[0], (name, result.stdout)
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists() and not market.exists()
    # A logo linked to a FIFO outside the folder: the link is refused, nothing is opened.
    outside = tmp_path / "elsewhere.pipe"
    os.mkfifo(outside)
    logo.unlink()
    logo.symlink_to(outside)
    linked = appsdk(*commands["check"], env=WIDE, timeout=30)
    assert linked.returncode == 1 and _refusals(linked, "leading out of the plugin folder"), linked.stdout
    logo.unlink()
    logo.write_bytes(real_logo)
    for name, words in commands.items():
        result = appsdk(*words, timeout=60)
        assert result.returncode == 0, (name, result.stdout, result.stderr)
    assert (tmp_path / "out" / "pin-board-1.2.0.zip").is_file()
    assert (market / "plugins" / "pin-board" / "assets" / "logo.png").read_bytes() == real_logo


def test_fifteen_hundred_nested_folders_stop_the_walk_fast_in_one_line(tmp_path: Path):
    """1,500 nested folders took a minute per command; the walk stops at its depth limit and says so once."""
    import time

    root = make_plugin(tmp_path / "pin-board")
    depth = 1500
    nest = [root / "/".join(["n"] * level) for level in range(1, depth + 1)]
    for folder in nest:
        folder.mkdir()
    market = tmp_path / "market"
    commands = {
        "check": ("plugin", "check", str(root)),
        "pack": ("plugin", "pack", str(root), "-o", str(tmp_path / "out")),
        "install": ("plugin", "install", str(root), "--codex", "--marketplace", str(market)),
    }
    try:
        for name, words in commands.items():
            started = time.monotonic()
            result = appsdk(*words, env=WIDE, timeout=60)
            took = time.monotonic() - started
            assert result.returncode == 1, (name, result.stdout, result.stderr)
            said = _refusals(result, "folders deep")
            assert len(said) == 1 and "PLUG506" in said[0] and "n/…" in said[0], (name, result.stdout)
            assert took < 15, f"{name} took {took:.1f} s"
        assert not (tmp_path / "out").exists() and not market.exists()
    finally:
        for folder in reversed(nest):  # deeper than shutil.rmtree's recursion goes
            folder.rmdir()
    for name, words in commands.items():
        assert appsdk(*words, timeout=60).returncode == 0, name


def test_the_walk_stops_at_its_entry_limit_in_one_line(tmp_path: Path):
    from appsdk_cli.plugin.tree import MAX_ENTRIES

    root = make_plugin(tmp_path / "pin-board")
    for index in range(MAX_ENTRIES + 1):
        (root / f"d{index}").mkdir()
    report = check_plugin(root)
    limits = [f.message for f in report.findings if f.rule.id == "PLUG504"]
    said = f"the plugin folder holds more than {MAX_ENTRIES} files and folders; appsdk stopped counting there"
    assert limits == [said]
    assert report.failed


def test_pack_leaves_out_the_tests_and_their_pictures(tmp_path: Path):
    """A new app's package (#36): its tests/ and the widget pictures they keep (tests/__snapshots__/, most
    of the archive's bytes) are no part of what a host runs; a module of the app named test_*.py stays."""
    made = appsdk("new", "demo", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "demo"
    (project / "tests" / "__snapshots__").mkdir()
    (project / "tests" / "__snapshots__" / "book-list-chatgpt-light.png").write_bytes(os.urandom(40_000))
    (project / "widgets" / "__snapshots__").mkdir()
    (project / "widgets" / "__snapshots__" / "stray.png").write_bytes(b"png")
    (project / ".coverage").write_text("coverage data")
    (project / "test_helpers.py").write_text("# a module of the app, whatever its name\n")
    packed = appsdk("plugin", "pack", str(project), "--json")
    assert packed.returncode == 0, packed.stdout + packed.stderr
    with zipfile.ZipFile(json.loads(packed.stdout)["archive"]) as archive:
        names = archive.namelist()
    assert not [n for n in names if n.startswith("tests/") or "__snapshots__" in n or n == ".coverage"], names
    assert {"server.py", "widgets/book-list.html", "skills/book-club-picks/SKILL.md", "test_helpers.py"} <= set(names)
