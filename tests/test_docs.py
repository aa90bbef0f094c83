"""docs/: the generated reference stays current, the README stays a front door whose links all lead
somewhere, and `appsdk check --explain` prints a rule offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO, appsdk

from appsdk_cli import docsgen, rulebook

DOCS = REPO / "docs"


def test_generated_docs_are_current(tmp_path: Path):
    docsgen.generate(tmp_path)
    fresh = {path.relative_to(tmp_path) for path in tmp_path.rglob("*.md")}
    committed = {path.relative_to(DOCS) for path in (DOCS / "commands").glob("*.md")} | {Path("rules.md")}
    stale = sorted(
        str(relative)
        for relative in fresh | committed
        if not (DOCS / relative).is_file()
        or not (tmp_path / relative).is_file()
        or (DOCS / relative).read_text() != (tmp_path / relative).read_text()
    )
    assert not stale, f"docs/ is out of date ({', '.join(stale)}): run `{docsgen.COMMAND}` and commit the result"


def test_generated_help_does_not_depend_on_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "43")
    monkeypatch.setenv("FORCE_COLOR", "1")
    docsgen.generate(tmp_path)
    assert (tmp_path / "commands" / "dev.md").read_text() == (DOCS / "commands" / "dev.md").read_text()


def test_every_command_and_subcommand_has_its_help_on_a_page():
    root = docsgen.root_command()
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        page = (DOCS / "commands" / f"{name}.md").read_text()
        assert f"Usage: appsdk {name} " in page, name
        for sub in getattr(command, "commands", {}):
            assert f"## `appsdk {name} {sub}`" in page and f"Usage: appsdk {name} {sub} " in page, (name, sub)


def test_the_readme_is_a_front_door_with_a_line_per_command():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    for name in docsgen.root_command().commands:  # type: ignore[attr-defined]
        lines = [line for line in readme.splitlines() if f"](docs/commands/{name}.md)" in line]
        assert len(lines) == 1, name


def test_every_relative_link_in_the_readme_and_docs_leads_to_a_file():
    pages = [REPO / "README.md", *DOCS.rglob("*.md")]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (page.parent / target.split("#", 1)[0]).exists():
                broken.append(f"{page.relative_to(REPO)} -> {target}")
    assert not broken, broken


def test_explain_finds_apps_and_plug_rules_by_id_or_name_in_any_case():
    assert rulebook.find("apps505").rule.name == "origin-not-in-csp"  # type: ignore[union-attr]
    assert rulebook.find("Plug205").rule.id == "PLUG205"  # type: ignore[union-attr]
    assert rulebook.find("template-missing").rule.id == "APPS101"  # type: ignore[union-attr]
    assert rulebook.find("APPS903").family.startswith("directory submission")  # type: ignore[union-attr]
    assert rulebook.find("APPS100") is None
    assert rulebook.nearest("APPS1O1") == ["APPS101", "APPS102", "APPS103"]
    ids = [entry.rule.id for entry in rulebook.entries()]
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"(APPS|PLUG)\d{3}", i) for i in ids)


def test_check_explain_prints_the_rule_offline(tmp_path: Path):
    # No project and an address nothing listens on: --explain must not look for either.
    env = {"APPSDK_URL": "http://127.0.0.1:9/mcp"}
    shown = appsdk("check", "--explain", "apps204", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    rule = rulebook.find("APPS204").rule  # type: ignore[union-attr]
    text = " ".join(shown.stdout.split())
    assert text.startswith("APPS204 relative-asset-url error") and " ".join(rule.why.split()) in text
    as_json = appsdk("check", "--explain", "PLUG101", "--json", cwd=tmp_path, env=env)
    assert json.loads(as_json.stdout)["name"] == "manifest-missing"


def test_check_explain_of_an_unknown_rule_is_one_line_naming_the_nearest(tmp_path: Path):
    wrong = appsdk("check", "--explain", "APPS5O5", cwd=tmp_path)
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.count("\n") == 1 and "Traceback" not in wrong.stderr
    assert "APPS505" in wrong.stderr and "docs/rules.md" in wrong.stderr
