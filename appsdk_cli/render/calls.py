"""`call`, `tools`, `resources`, `read`: a server's answers as a person reads them."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from appsdk_cli.remote import CallOutcome, ReadOutcome, ResourcesOutcome, ToolsOutcome


from appsdk_cli.render.console import count, flag, json_line, printable, stdout


def _pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _content_lines(blocks: Any) -> list[str]:
    """Content blocks as a person reads them: text as is, the rest as a one-line summary."""
    lines: list[str] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            lines.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(block.get("data", ""))) * 3 // 4
            lines.append(f"[{kind} {block.get('mimeType', '?')}, about {size} bytes; see --json]")
        elif kind == "resource_link":
            lines.append(f"[link {block.get('uri')} {block.get('mimeType') or ''}]".replace(" ]", "]"))
        elif kind == "resource":
            inner = block.get("resource") if isinstance(block.get("resource"), dict) else {}
            lines.append(f"[resource {inner.get('uri')} {inner.get('mimeType') or ''}]".replace(" ]", "]"))
        else:
            lines.append(f"[{kind} block; see --json]")
    return lines


def call_result(outcome: CallOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line(outcome.result)
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    tool = outcome.tool
    result = outcome.result
    failed = outcome.is_error
    header = f"[bold red]{escape(tool.name)} failed (isError)[/]" if failed else f"[bold]{escape(tool.name)}[/]"
    console.print(f"{header} [dim]on {escape(outcome.target.description)}[/]", soft_wrap=True)
    if tool.invoking or tool.invoked:
        console.print(
            f"  [cyan]invoking:[/] {escape(tool.invoking or '-')}  [cyan]invoked:[/] {escape(tool.invoked or '-')}",
            soft_wrap=True,
        )
    if tool.template:
        console.print(f"  [cyan]widget:[/] {escape(tool.template)}", soft_wrap=True)
    if "structuredContent" in result:
        console.print("[bold]structuredContent[/]")
        console.print(escape(_pretty_json(result["structuredContent"])), soft_wrap=True)
    lines = _content_lines(result.get("content"))
    if lines:
        console.print("[bold]content[/]")
        style = "red" if failed else ""
        for line in lines:
            console.print(escape(line), style=style, soft_wrap=True)
    if isinstance(result.get("_meta"), dict):
        console.print("[bold]_meta[/] [dim](widget only)[/]")
        console.print(escape(_pretty_json(result["_meta"])), soft_wrap=True)


def tools_list(outcome: ToolsOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line({"tools": outcome.tools})
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    console.print(f"[bold]{count(len(outcome.metas), 'tool')}[/] [dim]on {escape(outcome.target.description)}[/]")
    for tool in outcome.metas:
        console.print()
        title = f" [dim]- {escape(tool.title)}[/]" if tool.title else ""
        console.print(f"[bold]{escape(tool.name)}[/]{title}", soft_wrap=True)
        if tool.description:
            console.print(f"  {escape(tool.description.strip().splitlines()[0])}", soft_wrap=True)
        if tool.template:
            console.print(f"  [cyan]widget:[/] {escape(tool.template)}", soft_wrap=True)
        if tool.templates_disagree:
            console.print(
                f"  [yellow]ui.resourceUri {escape(tool.resource_uri or '')} differs from "
                f"openai/outputTemplate {escape(tool.output_template or '')}[/]",
                soft_wrap=True,
            )
        if tool.invoking or tool.invoked:
            console.print(
                f"  [cyan]invoking:[/] {escape(tool.invoking or '-')}  [cyan]invoked:[/] {escape(tool.invoked or '-')}",
                soft_wrap=True,
            )
        hints = ", ".join(
            [
                flag(tool.read_only, "read-only", "writes"),
                flag(tool.destructive, "destructive", "not destructive"),
                flag(tool.open_world, "open-world", "closed-world"),
            ]
        )
        console.print(f"  [cyan]hints:[/] {hints}" + (" [dim](? = not declared)[/]" if "?" in hints else ""))
        visibility = ["model" if tool.model_visible else "hidden from the model"]
        if tool.ui_visibility is not None:
            visibility.append(f"ui.visibility {', '.join(tool.ui_visibility)}")
        if tool.openai_visibility:
            visibility.append(f"openai/visibility {tool.openai_visibility}")
        if tool.widget_accessible:
            visibility.append("widget may call it")
        console.print(f"  [cyan]visibility:[/] {escape('; '.join(visibility))}", soft_wrap=True)
    if outcome.metas:
        console.print()
        console.print("[dim]Call one: appsdk call NAME KEY=VALUE ...[/]")


def resources_list(outcome: ResourcesOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line({"resources": outcome.resources})
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    console.print(f"[bold]{count(len(outcome.metas), 'resource')}[/] [dim]on {escape(outcome.target.description)}[/]")
    for resource in outcome.metas:
        widget = " [green]widget[/]" if resource.is_widget else ""
        console.print(
            f"  {escape(resource.uri)}  [cyan]{escape(resource.mime_type or 'no MIME type')}[/]{widget}",
            soft_wrap=True,
        )
        label = resource.title or resource.name
        if label:
            console.print(f"    [dim]{escape(label)}[/]", soft_wrap=True)


def resource_contents(outcome: ReadOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line(outcome.result)
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    contents = outcome.result.get("contents") or []
    for item in contents if isinstance(contents, list) else []:
        if not isinstance(item, dict):
            continue
        console.print(
            f"[bold]{escape(str(item.get('uri', outcome.uri)))}[/]  [cyan]{escape(str(item.get('mimeType') or ''))}[/]",
            soft_wrap=True,
        )
        if isinstance(item.get("_meta"), dict):
            console.print("[bold]_meta[/]")
            console.print(escape(_pretty_json(item["_meta"])), soft_wrap=True)
        if "text" in item:
            console.print("[bold]text[/]")
            # The text as served: no markup, no highlighting, no wrapping; only terminal controls shown
            # escaped (--json has it byte for byte).
            text = printable(str(item["text"]))
            sys.stdout.write(text)
            if not text.endswith("\n"):
                sys.stdout.write("\n")
            sys.stdout.flush()
        elif "blob" in item:
            console.print(f"[dim]binary, about {len(str(item['blob'])) * 3 // 4} bytes; use --json for the base64[/]")
