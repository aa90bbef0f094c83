"""`appsdk types` and `appsdk build`: what was written, and where."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from appsdk_cli.render.console import escape, json_line, stdout

if TYPE_CHECKING:
    from appsdk_cli.web.build import BuildResult
    from appsdk_cli.web.types import TypesResult


def types_result(result: TypesResult | None, path: Path, *, as_json: bool) -> None:
    if as_json:
        json_line(
            {
                "path": str(path),
                "changed": result.changed if result else False,
                "tools": list(result.tools) if result else None,
                "untyped": list(result.untyped) if result else None,
            }
        )
        return
    console = stdout()
    if result is None:
        console.print(f"[green]up to date[/] {escape(str(path))}", soft_wrap=True)
        return
    verb = "[green]wrote[/]" if result.changed else "[green]unchanged[/]"
    typed = ", ".join(result.tools) or "no tool"
    console.print(f"{verb} {escape(str(path))} [dim](types of {escape(typed)})[/]", soft_wrap=True)
    if result.untyped:
        console.print(
            f"[dim]without an outputSchema, so untyped: {escape(', '.join(result.untyped))}[/]", soft_wrap=True
        )


def build_result(result: BuildResult, project: Path, *, as_json: bool) -> None:
    if as_json:
        json_line({"output": str(result.output), "bytes": result.size, "seconds": round(result.seconds, 3)})
        return
    try:
        shown = result.output.relative_to(project)
    except ValueError:
        shown = result.output
    stdout().print(
        f"[green]built[/] {escape(str(shown))} [dim]({result.size / 1024:.0f} kB, self-contained, "
        f"{result.seconds:.1f} s)[/]: the server serves it as the widget",
        soft_wrap=True,
    )
