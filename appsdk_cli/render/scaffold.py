"""`appsdk new`: what was written and what to type next."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.scaffold import ScaffoldResult


from appsdk_cli.render.console import json_line, stdout


def scaffold_result(result: ScaffoldResult, *, as_json: bool) -> None:
    if as_json:
        json_line(
            {
                "name": result.name,
                "path": str(result.path),
                "widgetMimeType": result.flavor.value,
                "auth": result.auth,
                "files": [str(f) for f in result.files],
            }
        )
        return
    from appsdk_cli.render.console import escape

    console = stdout()
    verb = "Updated" if result.replaced_existing else "Created"
    console.print(f"[green]{verb}[/] [bold]{escape(str(result.path))}[/] ({len(result.files)} files)")
    console.print(f"  widget MIME type: {result.flavor.value}")
    if result.auth:
        console.print("  sign-in: OAuth 2.1 resource server; appsdk dev runs a development authorization server")
    console.print()
    console.print("Next:")
    console.print(f"  cd {escape(str(result.path))}")
    if result.auth:
        console.print("  appsdk dev --auth-user ada [dim]# sign-in approves as ada; drop it for a consent page[/]")
        console.print("  appsdk call whoami         [dim]# in a second terminal: signs in, then calls[/]")
    else:
        console.print("  appsdk dev                 [dim]# or: python server.py[/]")
        console.print("  appsdk call list-books     [dim]# in a second terminal[/]")
    console.print("  python -m pytest           [dim]# the app's own tests[/]")
