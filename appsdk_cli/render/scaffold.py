"""`appsdk new`: what was written and what to type next."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

if TYPE_CHECKING:
    from appsdk_cli.scaffold import ScaffoldResult


from appsdk_cli.render.console import json_line, stdout
from appsdk_cli.render.nextsteps import print_commands


def scaffold_result(result: ScaffoldResult, *, as_json: bool, serving_next: bool = False) -> None:
    """What was written, then what to type next; `serving_next` (`new --dev`): dev starts right after
    and prints its own next lines, so the "Next: appsdk dev" block would tell the user to run what runs."""
    if as_json:
        json_line(
            {
                "name": result.name,
                "path": str(result.path),
                "widgetMimeType": result.flavor.value,
                "auth": result.auth,
                "domain": result.domain,
                "files": [str(f) for f in result.files],
                "added": [str(f) for f in result.added],
                "replaced": [{"path": str(r.path), "backup": str(r.backup)} for r in result.replaced],
                "unchanged": [str(f) for f in result.unchanged],
                "template": result.template.value,
                "webInstall": result.web_install,
            }
        )
        return
    from appsdk_cli.invocation import fresh_shell, shell_path
    from appsdk_cli.render.console import escape

    console = stdout()
    if result.replaced_existing:
        groups = ((result.replaced, "replaced"), (result.added, "added"), (result.unchanged, "unchanged"))
        counts = [f"{len(items)} {label}" for items, label in groups if items]
        console.print(f"[green]Updated[/] [bold]{escape(str(result.path))}[/]: {', '.join(counts)}", soft_wrap=True)
        for replaced in result.replaced:
            console.print(f"  [yellow]replaced[/] {escape(str(replaced.path))}", soft_wrap=True)
        if result.replaced:
            folder = result.replaced[0].backup.parts[: -len(result.replaced[0].path.parts)]
            console.print(
                f"  [bold]yours are in {escape(str(Path(*folder)))}/[/] [dim](each at its own path there)[/]",
                soft_wrap=True,
            )
        for added in result.added:
            console.print(f"  [green]added[/]    {escape(str(added))}", soft_wrap=True)
    else:
        console.print(
            f"[green]Created[/] [bold]{escape(str(result.path))}[/] ({len(result.files)} files)", soft_wrap=True
        )
    console.print(f"  widget MIME type: {result.flavor.value}")
    if result.domain:
        console.print(
            f"  widget domain: https://{escape(result.domain)} "
            f"[dim](the tunnel's too: {escape('[tool.appsdk.tunnel]')} in pyproject.toml)[/]",
            soft_wrap=True,
        )
    if result.auth:
        console.print("  sign-in: OAuth 2.1; appsdk dev runs a development authorization server")
    if result.web_install is not None:
        state = {"installed": "npm packages installed", "skipped": "npm install skipped (--no-install)"}
        shown = state.get(result.web_install, "not installed")
        console.print(f"  widget: React + TypeScript in web/ [dim]({shown})[/]")
        if result.web_install not in state:
            from appsdk_cli.render.console import warning

            warning(result.web_install)
    console.print()
    if serving_next:
        console.print(f"Starting [bold]appsdk dev[/] in {escape(shell_path(result.path))}")
        return
    shell = fresh_shell()
    first: list[tuple[str, str]] = []
    if shell.setup:
        first.append((shell.setup, "puts appsdk on PATH"))
    first.append((f"cd {shell_path(result.path)}", ""))
    if result.auth:
        first.append((f"{shell.appsdk} dev --auth-user ada", "sign-in approves as ada; omit it for a consent page"))
        second = [(f"{shell.appsdk} call whoami", "signs in, then calls")]
    else:
        if result.web_install is not None:
            first.append((f"{shell.appsdk} dev", "serves the app, runs Vite and builds the widget on every save"))
        else:
            first.append((f"{shell.appsdk} dev", f"or: {shell.python} server.py"))
        second = [(f"{shell.appsdk} call list-books", "calls the tool the way ChatGPT does")]
    second.append((_test_command(shell.python, result.test_requirements), "the app's own tests"))
    again = "the first two lines again" if shell.setup else "the cd again"
    console.print("Next:")
    print_commands(console, first)
    console.print(f"Then, in a second terminal, {again}, and:")
    print_commands(console, second)


def existing_project_line(project: Path) -> str:
    """`appsdk new` on a folder that already is an appsdk project (the quick start run again): the one
    command that serves it, as typed in this terminal."""
    import shlex

    from appsdk_cli.invocation import this_terminal

    folder = shlex.quote(str(project))
    return f"{folder} is already an appsdk project; to serve it: cd {folder} && {this_terminal().appsdk} dev"


def _test_command(python: str, requirements: tuple[str, ...]) -> str:
    """The app's tests in the Python appsdk runs the app in, after installing there what of the project's
    `test` extra is missing: the same requirements, as written, that its README's `pip install -e ".[test]"`
    installs (one source, the template's pyproject.toml)."""
    import importlib.metadata
    import re
    import shlex

    missing = []
    for requirement in requirements:
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        try:
            importlib.metadata.version(name.group(0) if name else requirement)
        except importlib.metadata.PackageNotFoundError:
            missing.append(shlex.quote(requirement))
    run = f"{python} -m pytest"
    return f"{python} -m pip install {' '.join(missing)} && {run}" if missing else run


def install_interrupted(removed: Path, *, whole: bool) -> None:
    """Ctrl-C during `new --template react`'s install: what was taken back, so running it again works."""
    from appsdk_cli.render.console import stderr

    what = f"removed the half-made project {removed}" if whole else f"removed the half-installed {removed}"
    stderr().print(f"interrupted: {escape(what)}; run the same `appsdk new` again", highlight=False, soft_wrap=True)
