"""What a call shows while it runs: the server's progress and log notifications, and its questions.

All on stderr, so stdout stays the result. A progress notification with a total becomes a rich progress
bar (on a terminal); without one, or not on a terminal, a line. In --json mode each notification is one
JSON line on stderr, exactly as received. Everything the server wrote is escaped before it is shown.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from appsdk_cli.render.console import stderr

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@contextmanager
def notifications(*, as_json: bool) -> Iterator[Callable[[dict[str, Any]], None]]:
    """A sink for notifications/progress and notifications/message, live while the context is open."""
    progress = None
    tasks: dict[Any, Any] = {}
    consoles: list[Any] = []  # made on the first notification shown: --json never loads rich

    def show(message: dict[str, Any]) -> None:
        nonlocal progress
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if as_json:
            sys.stderr.write(json.dumps(message, ensure_ascii=False) + "\n")
            sys.stderr.flush()
            return
        from appsdk_cli.render.console import escape

        if not consoles:
            consoles.append(stderr())
        console = consoles[0]
        if message.get("method") == "notifications/message":
            level = str(params.get("level", "info"))
            data = params.get("data")
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            logger = f" {params['logger']}" if isinstance(params.get("logger"), str) else ""
            color = {"debug": "dim", "info": "cyan", "notice": "cyan", "warning": "yellow"}.get(level, "red")
            console.print(f"[{color}]{escape(level)}[/]{escape(logger)}: {escape(text)}", soft_wrap=True)
            return
        done, total = params.get("progress"), params.get("total")
        note = str(params.get("message") or "")
        if not isinstance(done, (int, float)):
            return
        if isinstance(total, (int, float)) and total > 0 and console.is_terminal:
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

            if progress is None:
                progress = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    TaskProgressColumn(),
                    console=console,
                    transient=False,
                )
                progress.start()
            token = params.get("progressToken")
            if token not in tasks:
                tasks[token] = progress.add_task(escape(note) or "working", total=total)
            progress.update(tasks[token], completed=done, total=total, description=escape(note) or "working")
            return
        of = f"/{total:g}" if isinstance(total, (int, float)) else ""
        console.print(f"[dim]progress {done:g}{of}[/] {escape(note)}", soft_wrap=True)

    try:
        yield show
    finally:
        if progress is not None:
            progress.stop()


def asker() -> Callable[[str, str, dict[str, Any], bool], str | None]:
    """Prompts for a server's question, one per field; the question itself is said once."""
    said: set[str] = set()

    def ask_field(message: str, name: str, schema: dict[str, Any], required: bool) -> str | None:
        from rich.prompt import Prompt

        from appsdk_cli.answers import choices, shown_default
        from appsdk_cli.render.console import escape

        console = stderr()
        if message not in said:
            console.print(f"[bold]The server asks:[/] {escape(message)}", soft_wrap=True)
            said.add(message)
        kind = str(schema.get("type", "string"))
        options = choices(schema)
        label = escape(str(schema.get("title") or name))
        hint = f" ({escape(str(schema['description']))})" if schema.get("description") else ""
        shape = "|".join(f"{value} ({title})" if title else value for value, title in options) if options else kind
        if kind == "array":
            shape = f"comma-separated {shape}" if options else "comma-separated values"
        typed = f" [dim]{escape(shape)}{'' if required else ', optional'}[/]"
        default = shown_default(schema)
        # The default is only shown: Enter answers "", and the elicitor sends the default value itself.
        shown = f" [dim]\\[default: {escape(default)}][/]" if default is not None else ""
        try:
            text = Prompt.ask(f"  {label}{hint}{typed}{shown}", console=console)
        except EOFError:
            return None
        return text or ""

    return ask_field
