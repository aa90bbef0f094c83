"""`appsdk preview`: where the host is, its log, the screenshot."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from appsdk_cli.browser.capture import Screenshot
    from appsdk_cli.host.run import LogEntry
    from appsdk_cli.host.session import PreviewSession


from appsdk_cli.render.console import stderr, stdout, warning


def preview_serving(session: PreviewSession, page_url: str, view_origin: str) -> None:
    from appsdk_cli.render.console import escape

    console = stdout()
    console.print(
        f"[green]Previewing[/] [bold]{escape(session.tool.name)}[/] with {escape(session.template.uri)}"
        f" [dim]from {escape(session.target.description)}[/]",
        soft_wrap=True,
    )
    if session.deferred:
        console.print(
            f"[yellow]{escape(session.tool.name)} is held for approval[/] (the permission mode asks first, as"
            " ChatGPT does): it runs when you approve it in the page",
            soft_wrap=True,
        )
    console.print("Open:")
    # The URL alone on its line, unstyled, so it copies cleanly and scripts can pick it up.
    console.print(page_url, soft_wrap=True, markup=False, highlight=False)
    console.print(
        f"[dim]The widget runs on its own site, {escape(view_origin)}, under its CSP. Ctrl-C stops the preview.[/]"
    )


def workbench_serving(url: str, server: str, tools: int, view_origin: str) -> None:
    from appsdk_cli.render.console import escape

    console = stdout()
    console.print(
        f"[green]Workbench[/] for {escape(server)} [dim]({tools} tool{'s' * (tools != 1)})[/]", soft_wrap=True
    )
    console.print("Open:")
    console.print(url, soft_wrap=True, markup=False, highlight=False)
    console.print(
        f"[dim]Widgets run on their own site, {escape(view_origin)}, under their CSP. Ctrl-C stops the workbench.[/]"
    )


def preview_log(entry: LogEntry) -> None:
    """A line of the host log, live in the terminal: errors and CSP blocks stand out."""
    from appsdk_cli.render.console import escape

    style = {"error": "red", "warn": "yellow"}.get(entry.level, "dim")
    stderr().print(f"[{style}]{escape(entry.kind)}:[/] {escape(entry.message)}", soft_wrap=True)


def preview_screenshot(shot: Screenshot, log: list[LogEntry], *, allow_errors: bool = False) -> None:
    """The host log's warnings and errors, the saved image, then what went wrong inside the widget."""
    from appsdk_cli.render.console import escape

    # A problem is said once, in the list below: the log's line of the same error (and its stack, which
    # names the served view, not the template) would say it again.
    listed = set(shot.problems)
    for entry in log:
        if entry.level in ("warn", "error") and entry.message.strip().partition("\n")[0] not in listed:
            preview_log(entry)
    kind = "JPEG" if shot.format == "jpeg" else "PNG"
    stdout().print(
        f"[green]Saved[/] {escape(str(shot.path))} [dim]({shot.width}×{shot.height} px {kind}, the widget frame)[/]",
        soft_wrap=True,
    )
    if shot.problems:
        style = "yellow" if allow_errors else "red"
        console = stderr()
        console.print(f"[{style}]The widget did not render cleanly:[/]", soft_wrap=True)
        for problem in shot.problems:
            console.print(f"[{style}]  ✗[/] {escape(problem)}", soft_wrap=True)


def browser_unsandboxed(reason: str) -> None:
    """Said once, before Chromium starts: the widget's page runs without the browser's own walls."""
    stderr().print(f"[yellow]running Chromium without its sandbox:[/] {reason}", soft_wrap=True)


def kept_browser_refused(problem: str) -> None:
    """The kept browser's socket was not safe to use: said, and this shot is taken alone."""
    warning(f"not using the kept browser: {problem}; taking this screenshot alone")


def screenshot_interrupted() -> None:
    """Ctrl-C while the screenshot was taken: the one line, on stderr; the browser is already gone."""
    stderr().print("[yellow]interrupted[/] (Ctrl-C): no screenshot was taken", soft_wrap=True)


def preview_stopped() -> None:
    stderr().print("Preview stopped.")
