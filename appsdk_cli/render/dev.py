"""`appsdk dev`: the start-up panel, then one line per reload or problem; the session's one observer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status

    from appsdk_cli.devserver.events import ContractReport, DevEvent, Reloaded


from appsdk_cli import chatgpt
from appsdk_cli.render.console import say, stderr, stdout, warning
from appsdk_cli.render.nextsteps import print_commands
from appsdk_cli.snapshot.loader import IMPORT_FAILED


class DevRenderer:
    """What a dev session reports, on the terminal: a spinner while a slow step runs, the rest as lines."""

    def __init__(self) -> None:
        self._spinners: dict[str, Status] = {}

    def __call__(self, event: DevEvent) -> None:
        from appsdk_cli.devserver import events

        if isinstance(event, events.StepStarted):
            spinner = stderr().status(event.what)
            spinner.start()
            self._spinners[event.what] = spinner
        elif isinstance(event, events.StepFinished):
            started = self._spinners.pop(event.what, None)
            if started is not None:
                started.stop()
        else:
            dev_event(event)


def dev_event(event: DevEvent) -> None:
    """One event of a running `appsdk dev`: a panel when it starts, then one line per reload or problem."""
    from appsdk_cli.devserver import events
    from appsdk_cli.render.console import escape

    if isinstance(event, events.Started):
        _dev_panel(event)
    elif isinstance(event, events.Reloaded):
        if not event.app_ok:
            return  # AppBroken already said why
        files = ", ".join(event.changed_files[:3]) + (" …" if len(event.changed_files) > 3 else "")
        console = stdout()
        # One write for the whole report: a reader of dev's output (an agent tailing it, a test) never
        # sees the reload line without the lines that explain it.
        with console:
            console.print(f"[green]reloaded[/] in {event.seconds:.2f} s [dim]({escape(files)})[/]", soft_wrap=True)
            _reload_report(event, console)
    elif isinstance(event, events.AppBroken):
        console = stderr()
        if event.traceback:
            console.print(escape(event.traceback.rstrip()), soft_wrap=True)
        console.print(f"[bold red]{IMPORT_FAILED}:[/] {escape(event.summary)}", soft_wrap=True)
        console.print(f"[dim]hint:[/] {escape(event.hint)}", soft_wrap=True)
    elif isinstance(event, events.AppExited):
        warning(event.message)
    elif isinstance(event, events.AppRestarted):
        state = "" if event.app_ok else " [dim](still broken: requests get its error)[/]"
        stdout().print(f"[green]restarted[/] the app for a request in {event.seconds:.2f} s{state}", soft_wrap=True)
    elif isinstance(event, events.AppsdkReplaced):
        warning(
            f"appsdk itself was reinstalled under this running dev ({event.package} changed): restart appsdk dev "
            "before you reload the workbench page; run the tests in a venv of their own (the README's uses .venv-test)"
        )
    elif isinstance(event, events.WaitingForImport):
        warning(
            f"importing {event.target} has not finished after {event.seconds:.0f} s: {event.hint}; "
            f"appsdk dev keeps waiting ({event.then})"
        )
    elif isinstance(event, events.ToolCrashed):
        _tool_crash(event)
    elif isinstance(event, events.AllowedHostAdded):
        stdout().print(f"now accepting Host {escape(event.host)}", soft_wrap=True)
    elif isinstance(event, events.AuthServerStarted):
        how = (
            f"signs in as [bold]{escape(event.auto_user)}[/] without asking (--auth-user)"
            if event.auto_user
            else f"a consent page picks the test user ({escape(', '.join(event.users))})"
        )
        stdout().print(
            f"[green]sign-in[/]: development authorization server at {escape(event.issuer)} [dim]"
            f"(metadata {escape(event.issuer)}/.well-known/oauth-authorization-server)[/]; {how}; "
            f"tokens are for {escape(event.resource)}",
            soft_wrap=True,
        )
    elif isinstance(event, events.Stopped):
        stdout().print("[dim]appsdk dev stopped[/]")
    else:
        _around_the_server(event)


def _reload_report(event: Reloaded, console: Console) -> None:
    """What a good reload changed: where a slow one's time went, the contract, the tool list."""
    from appsdk_cli.render.console import escape

    if event.slow:
        spent = ", ".join(f"{what} {seconds:.2f} s" for what, seconds in event.slow)
        console.print(f"[yellow]slow reload[/] ({event.seconds:.2f} s): {escape(spent)}", soft_wrap=True)
    if event.contract is not None:
        _contract_report(event.contract, console)
    if event.tools is not None and event.contract:
        say(console, f"for ChatGPT to see the tool changes, {chatgpt.rich(chatgpt.REFRESH)}")
    elif event.tools is not None:
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("added", event.tools.added),
                ("removed", event.tools.removed),
                ("changed", event.tools.changed),
            )
            if names
        ]
        say(
            console,
            f"[yellow]the tool list changed[/] ({escape('; '.join(parts))}): for ChatGPT to see it, "
            f"{chatgpt.rich(chatgpt.REFRESH)}",
        )


def _contract_report(report: ContractReport, console: Console) -> None:
    """What the reload did to the release contract, naming what it was compared with."""
    from appsdk_cli.contract.record import DEFAULT_FILE
    from appsdk_cli.render.console import count, escape
    from appsdk_cli.render.contract import change_lines

    snapshot = escape(report.baseline) if report.baseline else None
    compared = f"compared with {snapshot}" if snapshot else "compared with the last reload"
    if report.changes and all(change.impact.value == "goes-live" for change in report.changes):
        # Widget edits are most of a dev session: one quiet line, not a lecture.
        what = escape("; ".join(change.change for change in report.changes))
        say(console, f"[dim]{what}: goes live at once, no review (hosts cache by URI); {compared}[/]")
    elif report.changes and snapshot:
        say(
            console,
            f"[yellow]the release contract differs from {snapshot}[/], the reviewed snapshot (what publishing "
            "this would do, as `appsdk check --against` says):",
        )
        change_lines(report.changes, console)
    elif report.changes:
        say(
            console,
            f"[yellow]the release contract changed since the last reload[/] (there is no {DEFAULT_FILE} yet: run "
            "`appsdk snapshot` to record the version you publish, and reloads compare with it); what this would do "
            "to a published app:",
        )
        change_lines(report.changes, console)
    if report.resolved and not report.standing:
        say(console, f"[green]the release contract is back to the snapshot[/] in {snapshot}: nothing to review")
    elif report.resolved:
        back = escape("; ".join(change.change for change in report.resolved))
        still = count(report.standing, "other difference") + (
            " still stands" if report.standing == 1 else " still stand"
        )
        say(console, f"[green]undone, back as in {snapshot}:[/] {back} [dim]({still})[/]")


def _around_the_server(event: DevEvent) -> None:
    """The parts the session runs beside the app: the widget's Vite, the workbench, the tunnel."""
    from appsdk_cli.devserver import events
    from appsdk_cli.render.console import escape

    if isinstance(event, events.WidgetStarted):
        widget_started(event.vite_url)
    elif isinstance(event, events.WidgetActivity):
        widget_event(event.event)
    elif isinstance(event, events.WidgetTypesWritten):
        say(
            stdout(),
            f"[green]widget types[/] web/src/tools.gen.ts updated from the tools' schemas "
            f"[dim]({escape(', '.join(event.tools))})[/]",
        )
    elif isinstance(event, events.WidgetTypesFailed):
        warning(f"could not regenerate the widget's types: {event.message}")
    elif isinstance(event, events.WidgetUnavailable):
        warning(event.message)
    elif isinstance(event, events.WidgetThrew):
        # One line, whatever the widget's error holds (its text is the page's, so untrusted).
        line = " ".join(event.message.split())
        stderr().print(
            f"[bold red]widget error[/] in {escape(event.tool)} (run #{event.run}): {escape(line)}", soft_wrap=True
        )
    elif isinstance(event, events.BrowserNotOpened):
        warning(f"could not open a browser; open {event.url} yourself")
    elif isinstance(event, events.TunnelOpened):
        from appsdk_cli.render.tunnel import tunnel_opened, tunnel_unverified

        if event.problem is not None:
            tunnel_unverified(event.endpoints, event.problem)
        tunnel_opened(event.endpoints, verified=event.verified, as_json=False)
    elif isinstance(event, events.TunnelRestarted):
        from appsdk_cli.render.tunnel import tunnel_restarted

        tunnel_restarted(event.endpoints, event.url_changed, as_json=False)
    elif isinstance(event, events.TunnelLost):
        from appsdk_cli.errors import AppsdkError
        from appsdk_cli.render.console import error

        error(AppsdkError(event.message))


def _tool_crash(event: Any) -> None:
    """A few full-width lines: what was raised, the user's own frames, and what the model got instead."""
    from appsdk_cli.render.console import escape

    console = stderr()
    # A crash the workbench's own re-run met again after a save is that call's, said as such: not the save's.
    again = f" [dim](the workbench's re-run of {escape(event.rerun_of)})[/]" if event.rerun_of else ""
    console.print(f"[bold red]{escape(event.tool)} raised[/] {escape(event.summary)}{again}", soft_wrap=True)
    width = max((len(f"{file}:{line} in {function}") for file, line, function, _ in event.frames), default=0)
    for file, line, function, code in event.frames:
        where = f"{file}:{line} in {function}"
        console.print(f"  [cyan]{escape(where.ljust(width))}[/]  {escape(code)}", soft_wrap=True)
    console.print(
        f'[dim]hint:[/] the model sees only "Error executing tool {escape(event.tool)}"; '
        "raise ToolError(...) for a failure it should read",
        soft_wrap=True,
    )


def _dev_panel(event: Any) -> None:
    from rich.panel import Panel
    from rich.table import Table

    from appsdk_cli.render.console import escape

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    kind = "SSE" if event.transport == "sse" else "streamable HTTP, stateless JSON"
    grid.add_row("Serving", f"[bold cyan]{escape(event.url)}[/]  [dim]({kind})[/]")
    if event.workbench:
        why = f"; {escape(event.workbench_note)}" if event.workbench_note else ""
        grid.add_row("Workbench", f"[bold cyan]{escape(event.workbench)}[/]  [dim](follows every save{why})[/]")
    grid.add_row("App", escape(event.app))
    reload = "on save of .py .html .css .js .json .toml" if event.reload else "off (--no-reload)"
    grid.add_row("Reload", reload)
    console = stdout()
    console.print(Panel(grid, title="appsdk dev", title_align="left", expand=False))
    # Outside the panel and never wrapped, so each command copies and runs as printed.
    from appsdk_cli.tunnel import AUTHTOKEN_HELP, authtoken_configured

    # `appsdk tunnel` without a token is one error line: it is offered as a next step only once it works.
    tunnel_ready = not event.tunnel and authtoken_configured()
    console.print("Next, in a second terminal:")
    print_commands(console, _next_commands(event, tunnel=tunnel_ready))
    if not event.tunnel and not tunnel_ready:
        token = escape(AUTHTOKEN_HELP)
        say(console, f"[dim]For ChatGPT, `appsdk tunnel` gives an HTTPS URL once ngrok has a token: {token}[/]")
    console.print("[dim]Ctrl-C to stop[/]")


def _next_commands(event: Any, *, tunnel: bool) -> list[tuple[str, str]]:
    """What to type in a second terminal, each line working as printed there (see invocation.py)."""
    import shlex

    from appsdk_cli.invocation import fresh_shell, shell_path

    shell = fresh_shell()
    commands: list[tuple[str, str]] = []
    if shell.setup:
        commands.append((shell.setup, "puts appsdk on PATH"))
    commands.append((f"cd {shell_path(event.project)}", "appsdk finds this server from there"))
    if event.call_tool:
        commands.append((f"{shell.appsdk} call {shlex.quote(event.call_tool)}", "call a tool"))
    else:
        commands.append((f"{shell.appsdk} tools", "list the tools"))
    if event.preview_tool:
        commands.append((f"{shell.appsdk} preview {shlex.quote(event.preview_tool)}", "see its widget in a local host"))
    if tunnel:
        commands.append((f"{shell.appsdk} tunnel", "an HTTPS URL for ChatGPT"))
    return commands


# --- the widget (a project with web/) --------------------------------------------------------------------


def widget_started(vite_url: str | None) -> None:
    from appsdk_cli.render.console import escape

    say(
        stdout(),
        f"[bold]widget[/]  Vite at {escape(vite_url or '?')} "
        "[dim](the workbench and appsdk preview update by hot reload)[/]; "
        "ChatGPT gets web/dist/index.html, rebuilt on every good save",
    )


def widget_event(event: Any) -> None:
    """One line per thing the widget's build did that a developer needs to know."""
    from appsdk_cli.render.console import escape
    from appsdk_cli.web.build import errors_line

    if event.kind == "built" and event.published:
        took = f" in {event.seconds:.2f} s" if event.seconds is not None else ""
        stdout().print(f"[green]widget rebuilt[/]{took} [dim](web/{escape(event.file or '')})[/]", soft_wrap=True)
    elif event.kind == "build-error":
        say(
            stdout(),
            f"[red]widget build failed:[/] {escape(errors_line(list(event.errors)))} "
            "[dim](the last good widget stays up)[/]",
        )
    elif event.kind == "types" and event.errors:
        say(
            stdout(),
            f"[red]widget type error:[/] {escape(errors_line(list(event.errors)))} "
            "[dim](the last good widget stays up)[/]",
        )
    elif event.kind == "exited":
        stderr().print(
            f"[red]error:[/] {escape(event.message or 'Vite exited')}; the server keeps serving web/dist/",
            soft_wrap=True,
        )
