"""How a person (rich) or a script (--json) sees a result. Nothing else in appsdk prints."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.scaffold import ScaffoldResult


def stdout() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def json_line(value: Any) -> None:
    """One JSON document on one line of stdout, for scripts."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def error(problem: AppsdkError, *, verbose: bool = False) -> None:
    from rich.markup import escape

    console = stderr()
    console.print(f"[bold red]error:[/] {escape(problem.message)}", soft_wrap=True)
    if verbose and problem.detail:
        console.print(escape(problem.detail), soft_wrap=True)


def warning(message: str) -> None:
    from rich.markup import escape

    stderr().print(f"[yellow]warning:[/] {escape(message)}", soft_wrap=True)


def scaffold_result(result: ScaffoldResult, *, as_json: bool) -> None:
    if as_json:
        json_line(
            {
                "name": result.name,
                "path": str(result.path),
                "widgetMimeType": result.flavor.value,
                "files": [str(f) for f in result.files],
            }
        )
        return
    from rich.markup import escape

    console = stdout()
    verb = "Updated" if result.replaced_existing else "Created"
    console.print(f"[green]{verb}[/] [bold]{escape(str(result.path))}[/] ({len(result.files)} files)")
    console.print(f"  widget MIME type: {result.flavor.value}")
    console.print()
    console.print("Next:")
    console.print(f"  cd {escape(str(result.path))}")
    console.print("  appsdk dev                 [dim]# or: python server.py[/]")
    console.print("  appsdk call list-books     [dim]# in a second terminal[/]")
    console.print("  python -m pytest           [dim]# the app's own tests[/]")
