"""`appsdk plugin ...`: what init wrote, what pack produced, what install changed and what to run next.

A failed check renders through render/check.py, the same table as `appsdk check`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from appsdk_cli.render.check import check_report
from appsdk_cli.render.console import count, json_line, stdout

if TYPE_CHECKING:
    from appsdk_cli.plugin.init import InitResult
    from appsdk_cli.plugin.marketplace import InstallResult
    from appsdk_cli.plugin.pack import PackResult


def init_result(result: InitResult, *, as_json: bool) -> None:
    if as_json:
        json_line(
            {
                "name": result.name,
                "path": str(result.root),
                "files": list(result.files),
                "mcpUrl": result.mcp_url,
                "mcpUrlSource": result.mcp_url_source,
                "server": result.server_source,
                "placeholders": list(result.placeholders),
            }
        )
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    console.print(f"[green]Plugin {escape(result.name)}[/] written in [bold]{escape(str(result.root))}[/]")
    for name in result.files:
        console.print(f"  {escape(name)}")
    console.print(f"  tools read from {escape(result.server_source)}", soft_wrap=True)
    console.print(f"  MCP server: {escape(result.mcp_url)} [dim]({escape(result.mcp_url_source)})[/]", soft_wrap=True)
    console.print()
    console.print("Before you submit, replace the placeholders:")
    for name in result.placeholders:
        console.print(f"  {escape(name)}")
    console.print()
    console.print("Next:")
    console.print("  appsdk plugin check            [dim]# as Codex and the directory review see it[/]")
    console.print("  appsdk plugin install --codex  [dim]# try it in Codex[/]")


def pack_result(result: PackResult, *, as_json: bool) -> None:
    if result.archive is None:
        check_report(result.report, as_json=as_json)
        if not as_json:
            stdout().print("[red]nothing packed:[/] fix the errors and archive rules (PLUG5xx) above")
        return
    if as_json:
        json_line(
            {
                "archive": str(result.archive),
                "entries": result.entries,
                "expandedBytes": result.expanded,
                "compressedBytes": result.compressed,
                "sha256": result.sha256,
                "check": result.report.as_json(),
            }
        )
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    if result.report.findings:
        from collections import Counter

        rules = Counter(finding.rule.id for finding in result.report.findings)
        listed = ", ".join(f"{rule} ×{n}" if n > 1 else rule for rule, n in sorted(rules.items()))
        console.print(
            f"[yellow]! {count(result.report.warnings, 'warning')}[/] ({escape(listed)}; "
            "appsdk plugin check shows them)",
            soft_wrap=True,
        )
    console.print(
        f"[green]Packed[/] [bold]{escape(str(result.archive))}[/] ({count(result.entries, 'file')}, "
        f"{result.compressed / 1024:.1f} KiB; {result.expanded / 1024:.1f} KiB unpacked)",
        soft_wrap=True,
    )
    console.print(f"  sha256 {result.sha256}", soft_wrap=True)


def install_result(result: InstallResult, *, as_json: bool) -> None:
    if result.marketplace_file is None:
        check_report(result.report, as_json=as_json)
        if not as_json:
            stdout().print("[red]not installed:[/] fix the errors above (appsdk plugin check shows them)")
        return
    if as_json:
        json_line(
            {
                "marketplace": {
                    "root": str(result.marketplace_root),
                    "file": str(result.marketplace_file),
                    "name": result.marketplace_name,
                    "created": result.created,
                },
                "plugin": result.plugin_name,
                "copied": result.copied,
                "entry": result.entry,
                "commands": [list(command) for command in result.commands],
            }
        )
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    verb = "Created" if result.created else "Updated"
    console.print(
        f"[green]{verb}[/] marketplace [bold]{escape(result.marketplace_name)}[/] in "
        f"{escape(str(result.marketplace_file))}",
        soft_wrap=True,
    )
    where = f"copied to {result.source_path}" if result.copied else f"listed in place at {result.source_path}"
    console.print(f"  plugin {escape(result.plugin_name)} {escape(where)}", soft_wrap=True)
    if result.copied:
        console.print("  [dim]run this again after changing the plugin, to refresh the copy[/]")
    console.print()
    console.print("Then, in Codex:")
    for line in result.command_lines():
        console.print(f"  {escape(line)}", soft_wrap=True)
