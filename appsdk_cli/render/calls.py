"""`call`, `tools`, `resources`, `read`: a server's answers as a person reads them."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from appsdk_cli.appmeta import ToolMeta
    from appsdk_cli.remote import CallOutcome, ReadOutcome, ResourcesOutcome, ToolsOutcome


from appsdk_cli import mcpskills
from appsdk_cli.render.console import count, json_line, printable, stdout

# Past this many tools, `tools` lists one line each (`--all` shows every entry in full): nobody reads
# thousands of seven-line entries, and printing them took 25 s at 5,000 tools. The help of --all says 50.
COMPACT_TOOLS = 50


def _pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _print_json(console: Console, value: Any) -> None:
    """Indented JSON, syntax-coloured on a terminal; elsewhere rich drops the colours, so a log or a pipe
    gets the same plain text as before (--json is json_line's, one line, never coloured)."""
    from rich.highlighter import JSONHighlighter

    console.print(JSONHighlighter()(printable(_pretty_json(value))), soft_wrap=True)


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


def call_result(outcome: CallOutcome, *, as_json: bool, verbose: bool = False) -> None:
    if as_json:
        json_line(outcome.result)
        return
    from appsdk_cli.appmeta import app_meta_of_result, crash_hint, tool_crash
    from appsdk_cli.render.console import escape

    console = stdout()
    tool = outcome.tool
    result = outcome.result
    failed = outcome.is_error
    header = f"[bold red]{escape(tool.name)} failed (isError)[/]" if failed else f"[bold]{escape(tool.name)}[/]"
    # The protocol era is for someone debugging the wire; a newcomer reads it as noise.
    era = f", protocol {escape(outcome.era)}" if outcome.era and verbose else ""
    console.print(f"{header} [dim]on {escape(outcome.target.description)}{era}[/]", soft_wrap=True)
    if not outcome.target.ui:
        console.print("  [cyan]UI withheld[/] (--no-ui): what a host without widgets gets", soft_wrap=True)
    if tool.invoking or tool.invoked:
        console.print(
            f"  [cyan]invoking:[/] {escape(tool.invoking or '-')}  [cyan]invoked:[/] {escape(tool.invoked or '-')}",
            soft_wrap=True,
        )
    if tool.template:
        console.print(f"  [cyan]widget:[/] {escape(tool.template)}", soft_wrap=True)
    if "structuredContent" in result:
        console.print("[bold]structuredContent[/]")
        _print_json(console, result["structuredContent"])
    lines = _content_lines(result.get("content"))
    if lines:
        console.print("[bold]content[/]")
        style = "red" if failed else ""
        for line in lines:
            console.print(escape(line), style=style, soft_wrap=True)
    # appsdk dev's crash report is ours, not the server's: shown as a hint, left out of the widget's _meta.
    app_meta = app_meta_of_result(result)
    if app_meta:
        console.print("[bold]_meta[/] [dim](widget only)[/]")
        _print_json(console, app_meta)
    hint = crash_hint(outcome.error_text(), tool_crash(result)) if failed else None
    if hint:
        console.print(f"[dim]hint:[/] {escape(hint)}", soft_wrap=True)


def interrupted(waiting_for: str) -> None:
    """Ctrl-C before the answer came: said on stderr, so --json's stdout stays empty."""
    from appsdk_cli.render.console import escape, stderr

    stderr().print(f"[yellow]interrupted[/] (Ctrl-C) while waiting for {escape(waiting_for)}", soft_wrap=True)


def tools_list(outcome: ToolsOutcome, *, as_json: bool, verbose: bool = False, show_all: bool = True) -> None:
    if as_json:
        eras = outcome.eras.as_json() if outcome.eras is not None else None
        listing = {"tools": outcome.tools, "era": outcome.era, "eras": eras, "dropped": outcome.dropped}
        listing |= {"ui": outcome.target.ui, "serverUi": outcome.server_ui}
        json_line({**listing, "skills": outcome.skills, "skillsError": outcome.skills_error or None})
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    console.print(f"[bold]{count(len(outcome.metas), 'tool')}[/] [dim]on {escape(outcome.target.description)}[/]")
    _eras_lines(console, outcome, verbose=verbose)
    if not show_all and len(outcome.metas) > COMPACT_TOOLS:
        _compact_tools(console, outcome)
        if outcome.skills is not None:
            _skills_lines(console, outcome)
        return
    # Widget calls matter once some tool names a widget or says which widgets may call it.
    has_widgets = any(
        t.template or t.ui_visibility is not None or t.widget_accessible is not None for t in outcome.metas
    )
    for raw, tool in zip(outcome.tools, outcome.metas, strict=True):
        console.print()
        title = f" [dim]- {escape(tool.title)}[/]" if tool.title else ""
        console.print(f"[bold]{escape(tool.name)}[/]{title}", soft_wrap=True)
        if tool.description:
            console.print(f"  {escape(tool.description.strip().splitlines()[0])}", soft_wrap=True)
        for line in _argument_lines(raw):
            console.print(line, soft_wrap=True)
        sign_in = _sign_in(raw)
        if sign_in:
            console.print(f"  [cyan]sign-in:[/] {escape(sign_in)}", soft_wrap=True)
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
        console.print(f"  [cyan]hints:[/] {_hints(tool)}", soft_wrap=True)
        tasks = _task_support(raw)
        if tasks:
            console.print(f"  [cyan]tasks:[/] {tasks}", soft_wrap=True)
        console.print(f"  [cyan]visibility:[/] {escape(_visibility(tool))}", soft_wrap=True)
        if has_widgets:
            console.print(f"  [cyan]widget calls:[/] {_widget_calls(tool)}", soft_wrap=True)
    if outcome.metas:
        console.print()
        console.print("[dim]Call one: appsdk call NAME KEY=VALUE ...[/]")
    if outcome.skills is not None:
        _skills_lines(console, outcome)


def _compact_tools(console: Any, outcome: ToolsOutcome) -> None:
    """One line per tool: its name, title, widget and hints. Printed as one text, since rich's cost is per
    print (thousands of seven-line entries took 25 s at 5,000 tools)."""
    from appsdk_cli.render.console import escape

    def one_line(text: str) -> str:
        # A line per tool: a newline in a server's name or title would forge another tool's line.
        return escape(text).replace("\n", "\\n")

    lines = []
    for tool in outcome.metas:
        title = f" [dim]- {one_line(tool.title)}[/]" if tool.title else ""
        widget = f"  [cyan]widget[/] {one_line(tool.template)}" if tool.template else ""
        lines.append(f"[bold]{one_line(tool.name)}[/]{title}{widget}  [dim]{_hints(tool)}[/]")
    console.print()
    console.print("\n".join(lines), soft_wrap=True)
    console.print()
    console.print(
        f"[dim]{count(len(outcome.metas), 'tool')}, one line each: `appsdk tools --all` shows each in full,"
        " `--json` every field; call one: appsdk call NAME KEY=VALUE ...[/]",
        soft_wrap=True,
    )


def _skills_lines(console: Any, outcome: ToolsOutcome) -> None:
    """The server's skills (SEP-2640): what a host's importer lists, with each file's digest."""
    from appsdk_cli.render.console import escape

    skills = outcome.skills or []
    console.print()
    console.print(f"[bold]{count(len(skills), 'skill')}[/] [dim](skills/list)[/]")
    if outcome.skills_error:
        console.print(f"  [red]skills/list failed:[/] {escape(outcome.skills_error)}", soft_wrap=True)
    for entry in skills:
        if not isinstance(entry, dict):
            continue
        front = entry.get("frontmatter") if isinstance(entry.get("frontmatter"), dict) else {}
        console.print()
        console.print(f"[bold]{escape(str(front.get('name', '?')))}[/] [dim]{escape(str(entry.get('uri')))}[/]")
        if front.get("description"):
            console.print(f"  {escape(printable(str(front['description'])))}", soft_wrap=True)
        if entry.get("resources") == "dynamic":
            console.print("  [yellow]files: dynamic (no digests to verify)[/]")
        for file in mcpskills.files(entry):
            console.print(
                f"  [cyan]{escape(str(file.get('uri')))}[/]  {escape(str(file.get('size')))} bytes  "
                f"[dim]{escape(str(file.get('digest')))}[/]",
                soft_wrap=True,
            )
    if skills:
        console.print()
        console.print("[dim]Read one (checked against its digest): appsdk read skill://NAME/SKILL.md[/]")


def _hints(tool: ToolMeta) -> str:
    """The declared annotations in words; the undeclared ones named, not shown as "?"."""
    hints = [
        ("readOnlyHint", tool.read_only, "read-only", "writes"),
        ("destructiveHint", tool.destructive, "destructive", "not destructive"),
        ("openWorldHint", tool.open_world, "open-world", "closed-world"),
    ]
    said = [yes if value else no for _, value, yes, no in hints if value is not None]
    unsaid = [key for key, value, _, _ in hints if value is None]
    if not said:
        return "none [dim](no annotations)[/]"
    return ", ".join(said) + (f" [dim](not declared: {', '.join(unsaid)})[/]" if unsaid else "")


def _task_support(tool: dict[str, Any]) -> str | None:
    """What execution.taskSupport asks of the caller, as rich markup; None when the tool runs as a plain call."""
    execution = tool.get("execution") if isinstance(tool.get("execution"), dict) else {}
    support = execution.get("taskSupport")
    if support == "required":
        return "required [dim](runs only as an MCP task: appsdk call sends it as one and waits for its result)[/]"
    if support == "optional":
        return "optional [dim](appsdk call runs it as a plain call)[/]"
    return None


def _argument_lines(tool: dict[str, Any]) -> list[str]:
    """Each argument: name, type, required or default, description (from the tool's inputSchema)."""
    from appsdk_cli.render.console import escape
    from appsdk_cli.toolargs import parameters

    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    params = parameters(schema)
    if not params:
        return ["  [cyan]arguments:[/] none"]
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    width = max(len(param.name) for param in params)
    lines = ["  [cyan]arguments:[/]"]
    for param in params:
        if param.unknown is not None:
            kind = f"cannot tell: {param.unknown}"
        elif param.enum is not None:
            kind = " | ".join(json.dumps(value, ensure_ascii=False) for value in param.enum)
        else:
            kind = " | ".join(param.types) or "any"
        prop = properties.get(param.name)
        if param.required:
            need = "[bold]required[/]"
        elif isinstance(prop, dict) and "default" in prop:
            need = f"optional, default {escape(json.dumps(prop['default'], ensure_ascii=False))}"
        else:
            need = "optional"
        about = f"  [dim]{escape(param.description.strip().splitlines()[0])}[/]" if param.description else ""
        lines.append(f"    {escape(param.name.ljust(width))}  {escape(kind)}, {need}{about}")
    return lines


def _sign_in(tool: dict[str, Any]) -> str | None:
    """What securitySchemes (top level or _meta) asks of the caller, or None when the tool says nothing."""
    meta = tool.get("_meta") if isinstance(tool.get("_meta"), dict) else {}
    schemes = tool.get("securitySchemes", meta.get("securitySchemes"))
    if not isinstance(schemes, list) or not schemes:
        return None
    ways: list[str] = []
    for scheme in schemes:
        if not isinstance(scheme, dict):
            continue
        if scheme.get("type") == "noauth":
            ways.append("anonymous")
        elif scheme.get("type") == "oauth2":
            scopes = [str(scope) for scope in scheme.get("scopes") or [] if isinstance(scope, str)]
            ways.append(f"OAuth, scopes {' '.join(scopes)}" if scopes else "OAuth, no particular scope")
        else:
            ways.append(f"{scheme.get('type')!s} (unknown scheme)")
    if "anonymous" in ways and len(ways) > 1:
        return "optional: " + " or ".join(way for way in ways if way != "anonymous") + ", or anonymous"
    return " or ".join(ways) or None


def _visibility(tool: ToolMeta) -> str:
    """Who sees the tool, and which key says so."""
    seen = [who for who in ("model", "app") if who in tool.visibility]
    words = " and ".join(seen) or "nobody"
    source = "the default: no ui.visibility" if tool.ui_visibility is None else f"ui.visibility {list(tool.visibility)}"
    text = f"{words} ({source})"
    if tool.openai_visibility:
        text += f"; openai/visibility {tool.openai_visibility} (deprecated)"
        if not tool.model_visible and "model" in tool.visibility:
            text += ": ChatGPT hides it from the model"
    return text


def _widget_calls(tool: ToolMeta) -> str:
    """Whether a widget may call the tool, per bridge (appmeta's rule), as rich markup."""
    from appsdk_cli.appmeta import Bridge

    parts = []
    for bridge in Bridge:
        if tool.widget_may_call(bridge):
            parts.append(f"{bridge.label} [green]yes[/]")
        elif bridge is Bridge.OPENAI:
            parts.append(f"{bridge.label} [yellow]no[/] [dim](needs openai/widgetAccessible: true)[/]")
        else:
            parts.append(f"{bridge.label} [yellow]no[/] [dim](ui.visibility lacks app)[/]")
    return "; ".join(parts)


def _eras_lines(console: Any, outcome: ToolsOutcome, *, verbose: bool) -> None:
    from appsdk_cli.render.console import escape

    if verbose and outcome.era:
        others = _other_eras(outcome)
        also = f" [dim](the server also speaks {escape(' and '.join(others))})[/]" if others else ""
        console.print(f"[cyan]protocol:[/] {escape(outcome.era)}{also}", soft_wrap=True)
    for name, why in outcome.dropped.items():
        console.print(
            f"[yellow]left out {escape(name)}[/]: 2026-07-28 clients drop it ({escape(why)}); see `appsdk check`",
            soft_wrap=True,
        )
    _ui_lines(console, outcome)


def _ui_lines(console: Any, outcome: ToolsOutcome) -> None:
    """Whether this listing is a widget host's, and whether the server says it serves MCP Apps."""
    import json

    from appsdk_cli.appmeta import UI_EXTENSION
    from appsdk_cli.render.console import escape

    if not outcome.target.ui:
        console.print(
            f"[cyan]UI withheld[/] (--no-ui): listed for a host without widgets (no {UI_EXTENSION} offered)",
            soft_wrap=True,
        )
    if outcome.server_ui is not None:
        settings = json.dumps(outcome.server_ui, separators=(",", ":"))
        console.print(f"[cyan]MCP Apps:[/] the server declares {UI_EXTENSION} {escape(settings)}", soft_wrap=True)


def _other_eras(outcome: ToolsOutcome) -> list[str]:
    """The eras the probe found beside the one this listing came in. Over HTTP+SSE the probe offers the
    2024-11-05 handshake and a session the newest, so a server that took both is one transport, said once."""
    from appsdk_cli.client.eras import SSE

    if outcome.eras is None:
        return []
    listed_over_sse = outcome.era.startswith("HTTP+SSE")
    others: list[str] = []
    for era in outcome.eras.spoken:
        if era.transport == SSE and listed_over_sse:
            continue
        label = "HTTP+SSE" if era.transport == SSE else era.label
        if label != outcome.era and label not in others:
            others.append(f"the {label}" if label.endswith("handshake") else label)
    return others


def resources_list(outcome: ResourcesOutcome, *, as_json: bool) -> None:
    if as_json:
        json_line({"resources": outcome.resources, "resourceTemplates": outcome.templates})
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
    if outcome.templates:
        console.print()
        console.print(
            f"[bold]{count(len(outcome.templates), 'resource template')}[/] [dim](fill in the {{…}} to read one)[/]"
        )
        for template in outcome.templates:
            if not isinstance(template, dict):
                continue
            mime = template.get("mimeType")
            console.print(
                f"  {escape(str(template.get('uriTemplate', '?')))}  [cyan]{escape(str(mime or 'no MIME type'))}[/]",
                soft_wrap=True,
            )
            label = template.get("title") or template.get("name")
            if isinstance(label, str) and label:
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
            _print_json(console, item["_meta"])
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
    if outcome.verdict is not None and outcome.verdict.problem is None:
        skill = str((outcome.skill or {}).get("uri", ""))
        console.print(
            f"[green]✓[/] matches its sha256 digest and size in skills/list (skill {escape(skill)})", soft_wrap=True
        )
