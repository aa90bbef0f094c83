"""`appsdk preview`: call a tool and show its widget in a local ChatGPT-like host, or screenshot it."""

from __future__ import annotations

import contextlib
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from appsdk_cli.commands.call import (
    ArgsJson,
    ClientId,
    FailureDetails,
    Protocol,
    Timeout,
    Token,
    ToolArguments,
    Url,
)
from appsdk_cli.permissions import DEFAULT_MODE

if TYPE_CHECKING:
    from appsdk_cli.preview import PreviewServer, PreviewSession
    from appsdk_cli.workbench import Workbench

PreviewTool = Annotated[
    str | None,
    typer.Argument(
        help="The tool to call, as `appsdk tools` lists it; leave it out to open the workbench on the server.",
        show_default=False,
        metavar="TOOL",
    ),
]


class Theme(StrEnum):
    light = "light"
    dark = "dark"


class HostProfile(StrEnum):
    chatgpt = "chatgpt"
    mcp_apps = "mcp-apps"
    claude = "claude"


class Device(StrEnum):
    desktop = "desktop"
    tablet = "tablet"
    mobile = "mobile"


class DisplayMode(StrEnum):
    inline = "inline"
    pip = "pip"
    fullscreen = "fullscreen"


def preview(
    tool: PreviewTool = None,
    arguments: ToolArguments = None,
    args: ArgsJson = None,
    url: Url = None,
    theme: Annotated[Theme, typer.Option("--theme", help="The host theme the widget starts with.")] = Theme.light,
    display_mode: Annotated[
        DisplayMode, typer.Option("--display-mode", help="How the host shows the widget at first.")
    ] = DisplayMode.inline,
    profile: Annotated[
        HostProfile,
        typer.Option(
            "--profile",
            help="The host to play: chatgpt (as probed: window.openai, its sandbox and capabilities), mcp-apps"
            " (the spec's generic host, bridge only) or claude (Claude-like, bridge only).",
        ),
    ] = HostProfile.chatgpt,
    device: Annotated[
        Device,
        typer.Option("--device", help="The device the host runs on: its viewport, touch or hover, safe-area insets."),
    ] = Device.desktop,
    locale: Annotated[
        str, typer.Option("--locale", help="window.openai.locale, and openai/locale in the tool call's _meta.")
    ] = "en-US",
    screenshot: Annotated[
        Path | None,
        typer.Option(
            "--screenshot",
            help="Render headless in Chromium, write the widget's frame to this .png or .jpg and exit (no window"
            " opens). Exits 1 if the widget threw, a script or stylesheet failed to load, or it never got its data.",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    no_keep_browser: Annotated[
        bool,
        typer.Option(
            "--no-keep-browser",
            help="With --screenshot: start and stop a browser for this shot alone. By default the first"
            " screenshot leaves a headless Chromium running, this user's alone (a Unix socket in APPSDK_HOME),"
            " for the next ones, and it exits after 60 s unused ($APPSDK_KEPT_BROWSER_IDLE);"
            " APPSDK_KEEP_BROWSER=0 turns keeping off for good.",
        ),
    ] = False,
    no_open: Annotated[bool, typer.Option("--no-open", help="Serve the page without opening a browser.")] = False,
    port: Annotated[
        int, typer.Option("--port", help="Port of the host page on 127.0.0.1 (0: any free port).", min=0, max=65535)
    ] = 0,
    bridge_only: Annotated[
        bool,
        typer.Option("--bridge-only", help="Withhold window.openai, so the widget must use the MCP Apps bridge."),
    ] = False,
    permissions: Annotated[
        str,
        typer.Option(
            "--permissions",
            help="ChatGPT's permission mode the host plays: always (ask before every call), changes (before any"
            " tool not marked readOnlyHint), important (only before destructive or open-world ones) or never."
            " A call that asks waits for Approve in the page, tool-input and a widget's callTool alike.",
            metavar="MODE",
        ),
    ] = DEFAULT_MODE,
    no_ui: Annotated[
        bool,
        typer.Option(
            "--no-ui",
            help="Start as a host without widgets: the tool is called again without offering MCP Apps"
            " (io.modelcontextprotocol/ui), and the page shows the text the model gets instead of a widget"
            " (the page's No UI switch).",
        ),
    ] = False,
    allow_errors: Annotated[
        bool,
        typer.Option("--allow-errors", help="With --screenshot: exit 0 even when the widget failed (still reported)."),
    ] = False,
    timeout: Timeout = 30.0,
    verbose: FailureDetails = False,
    token: Token = None,
    client_id: ClientId = None,
    protocol: Protocol = "auto",
) -> None:
    """Call a tool and render its widget in a local host page: window.openai, the MCP Apps bridge, the
    resource's CSP, and a log of what the widget does. Without a TOOL, open the workbench on the server:
    every tool with a form, runs, widgets in several host profiles, traffic. Ctrl-C stops it.

    Exit codes: 0 ok; 1 the server, the widget or the browser failed (with --screenshot: also a widget that
    threw, failed to load a script or stylesheet, or never got its data); 2 the command line is wrong.
    """
    from appsdk_cli import connection
    from appsdk_cli.errors import UsageError
    from appsdk_cli.permissions import UnknownMode, parse_mode
    from appsdk_cli.preview import (
        PreviewOptions,
        PreviewServer,
        prepare,
    )
    from appsdk_cli.render.console import notice, stopping_on_sigterm, warning
    from appsdk_cli.render.preview import preview_log, preview_screenshot, preview_stopped

    try:
        permissions = parse_mode(permissions)
    except UnknownMode as problem:
        raise UsageError(f"--permissions: {problem}") from None
    if no_keep_browser and screenshot is None:
        raise UsageError("--no-keep-browser goes with --screenshot (only a screenshot starts a browser)")
    if allow_errors and screenshot is None:
        raise UsageError("--allow-errors goes with --screenshot (the live preview never fails on the widget's errors)")
    if tool is None and (screenshot is not None or arguments or args):
        what = "--screenshot renders one call" if screenshot is not None else "arguments belong to a call"
        raise UsageError(f"{what}: name the TOOL (appsdk preview TOOL ...), or leave both out for the workbench")
    if screenshot is not None:
        from appsdk_cli.browser.capture import image_type

        image_type(screenshot)
    # Signs in exactly as `appsdk call` does (and takes --token the same way).
    target = connection.resolve_target(
        url, None, timeout=timeout, token=token, sign_in=notice, client_id=client_id, protocol=protocol
    )
    options = PreviewOptions(
        theme=theme.value,
        display_mode=display_mode.value,
        locale=locale,
        bridge_only=bridge_only,
        no_ui=no_ui,
        profile=profile.value,
        device=device.value,
        permissions=permissions,
    )
    if tool is None:
        from appsdk_cli.workbench import Workbench

        with stopping_on_sigterm(), Workbench(target, options, port=port, on_log=preview_log) as bench:
            _serve_workbench(bench, open_browser=not no_open)
        preview_stopped()
        return
    if screenshot is not None:
        from appsdk_cli.preview.shot import screenshot_call
        from appsdk_cli.render.preview import browser_unsandboxed, kept_browser_refused, screenshot_interrupted

        try:
            with stopping_on_sigterm():
                taken = screenshot_call(
                    target,
                    tool,
                    list(arguments or []),
                    args,
                    screenshot,
                    options=options,
                    port=port,
                    timeout=timeout,
                    keep=not no_keep_browser,
                    on_warning=warning,
                    on_unsandboxed=browser_unsandboxed,
                    on_kept_refused=kept_browser_refused,
                )
        except KeyboardInterrupt:
            screenshot_interrupted()
            raise  # main() exits 130
        shot = taken.screenshot
        preview_screenshot(shot, taken.log, allow_errors=allow_errors)
        if shot.problems and not allow_errors:
            from appsdk_cli.errors import AppsdkError

            raise AppsdkError(
                f"the widget failed in the preview ({len(shot.problems)} problem{'s' * (len(shot.problems) > 1)}"
                f" above; the image shows what it rendered); fix it, or pass --allow-errors to exit 0"
            )
        return

    session = prepare(target, tool, list(arguments or []), args, locale=locale, permissions=permissions)
    for message in session.warnings:
        warning(message)
    with stopping_on_sigterm(), PreviewServer(session, options, port=port, on_log=preview_log) as server:
        _serve_until_stopped(server, session, open_browser=not no_open)
    preview_stopped()


def _serve_until_stopped(server: PreviewServer, session: PreviewSession, *, open_browser: bool) -> None:
    from appsdk_cli.render.console import warning
    from appsdk_cli.render.preview import preview_serving

    # Ctrl-C or SIGTERM may land anywhere from the first printed line on: all of it is a normal stop.
    with contextlib.suppress(KeyboardInterrupt):
        page = server.page_url()
        preview_serving(session, page, server.origins.view_origin)
        if open_browser:
            import webbrowser

            if not webbrowser.open(page):
                warning(f"could not open a browser; open {page} yourself")
        _wait_forever()


def _serve_workbench(bench: Workbench, *, open_browser: bool) -> None:
    from appsdk_cli.render.console import warning
    from appsdk_cli.render.preview import workbench_serving

    with contextlib.suppress(KeyboardInterrupt):
        # Listing the tools first: a server we cannot reach is one line and exit 1, not a page of errors.
        tools = bench.tools()
        workbench_serving(bench.url, bench.target.description, len(tools), bench.host.origins.view_origin)
        if open_browser:
            import webbrowser

            if not webbrowser.open(bench.url):
                warning(f"could not open a browser; open {bench.url} yourself")
        _wait_forever()


def _wait_forever() -> None:
    import threading

    # Event.wait with a timeout, in a loop, so Ctrl-C and SIGTERM interrupt it promptly.
    stop = threading.Event()
    while not stop.wait(0.5):
        pass
