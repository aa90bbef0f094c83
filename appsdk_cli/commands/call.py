"""`appsdk call`, `tools`, `resources` and `read`: talk to a running app the way a host does.

They share the server options, so they live together. Nothing heavy is imported until a command runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

# A day: longer is no deadline at all, and inf or 1e300 would overflow the socket's timeout.
MAX_TIMEOUT = 86400.0

URL_HELP = (
    "The server's MCP endpoint. Default: $APPSDK_URL, else the running `appsdk dev`, else http://127.0.0.1:8000/mcp."
)

Url = Annotated[str | None, typer.Option("--url", help=URL_HELP, show_default=False)]
Stdio = Annotated[
    str | None,
    typer.Option("--stdio", help='Start a stdio server with this command instead, e.g. "python server.py --stdio".'),
]
# The tool and its arguments, as `call` and `preview` both take them.
ToolName = Annotated[
    str, typer.Argument(help="The tool's name, as `appsdk tools` lists it.", show_default=False, metavar="TOOL")
]
ToolArguments = Annotated[
    list[str] | None,
    typer.Argument(
        help="Arguments as KEY=VALUE, converted by the tool's inputSchema (arrays and objects as JSON).",
        show_default=False,
        metavar="KEY=VALUE",
    ),
]
ArgsJson = Annotated[
    str | None, typer.Option("--args", help="Arguments as one JSON object; KEY=VALUE words override its keys.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the result exactly as on the wire (camelCase JSON).")]
Timeout = Annotated[
    float,
    typer.Option(
        "--timeout", help="Seconds each answer may take, in all (however slowly it arrives).", min=0.1, max=MAX_TIMEOUT
    ),
]
# For the commands that have no protocol era to tell (resources, read, preview).
FailureDetails = Annotated[bool, typer.Option("--verbose", "-v", help="On failure, show the details.")]
Verbose = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Also say which protocol era was spoken; on failure, show the details."),
]
Token = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="A bearer token for a protected server, sent as is. Without it appsdk signs in when the server "
        "asks (401) and caches the tokens under APPSDK_HOME.",
        show_default=False,
    ),
]

ClientId = Annotated[
    str | None,
    typer.Option(
        "--client-id",
        help="Sign in as this client: one registered at the authorization server beforehand (its secret, if any, "
        "in $APPSDK_CLIENT_SECRET), or the https URL of a client metadata document you host. Default: appsdk "
        "registers itself (dynamic client registration).",
        show_default=False,
    ),
]


PROTOCOL_HELP = (
    "The protocol era: auto (2026-07-28 if the server speaks it, else the 2025 handshake, else HTTP+SSE),"
    " or force one of 2026-07-28, 2025-11-25, 2025-06-18, 2024-11-05 (the HTTP+SSE transport)."
)


def _check_protocol(value: str) -> str:
    from appsdk_cli.client.eras import PROTOCOL_CHOICES

    if value not in PROTOCOL_CHOICES:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(PROTOCOL_CHOICES)}")
    return value


Protocol = Annotated[str, typer.Option("--protocol", help=PROTOCOL_HELP, metavar="ERA", callback=_check_protocol)]
Answer = Annotated[
    list[str] | None,
    typer.Option(
        "--answer",
        help="Answer a question the tool asks (elicitation) without a prompt: KEY=VALUE, repeatable.",
        show_default=False,
        metavar="KEY=VALUE",
    ),
]
AnswersJson = Annotated[
    str | None,
    typer.Option("--answers", help="Answers to the tool's questions as one JSON object.", show_default=False),
]
TraceFile = Annotated[
    str | None,
    typer.Option(
        "--trace",
        help="Write every MCP message sent and received to FILE as JSON lines (the workbench's trace format).",
        show_default=False,
        metavar="FILE",
    ),
]


@contextmanager
def _tracing(path: str | None) -> Iterator[Any]:
    """A Tracer writing `path` line by line (None: no tracing); a path that cannot be written is exit 2."""
    if path is None:
        yield None
        return
    from appsdk_cli.render.console import warning
    from appsdk_cli.trace import Tracer

    # The file is the trace; nothing reads the records back in this process, so none are kept in memory.
    with Tracer(sink=path, max_bytes=0) as tracer:
        yield tracer
    if tracer.sink_error:
        warning(f"the trace {path} is incomplete: writing it failed ({tracer.sink_error})")


@contextmanager
def _said_when_interrupted(waiting_for: str) -> Iterator[None]:
    """Ctrl-C: one line that says what was left unanswered, and exit 130 (as a shell expects)."""
    try:
        yield
    except KeyboardInterrupt:
        from appsdk_cli.render.calls import interrupted

        interrupted(waiting_for)
        raise typer.Exit(130) from None


# Every session offers MCP Apps by default: appsdk shows what a server does for ChatGPT and the other
# hosts that render widgets; --no-ui shows what it does for a host that renders none.
NoUi = Annotated[
    bool,
    typer.Option(
        "--no-ui",
        help="Play a host without widgets: do not offer the MCP Apps extension (io.modelcontextprotocol/ui), "
        "so a server that checks for it answers as it does for a text-only client.",
    ),
]


def _target(
    url: str | None,
    stdio: str | None,
    timeout: float,
    token: str | None,
    protocol: str = "auto",
    client_id: str | None = None,
    **live: Any,
) -> Any:
    from appsdk_cli import connection
    from appsdk_cli.render.console import notice

    return connection.resolve_target(
        url, stdio, timeout=timeout, token=token, sign_in=notice, protocol=protocol, client_id=client_id, **live
    )


def _parse_json_object(option: str, text: str | None) -> dict[str, Any] | None:
    import json

    from appsdk_cli.errors import UsageError

    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as problem:
        raise UsageError(f"{option} is not valid JSON: {problem}") from None
    except RecursionError:
        raise UsageError(f"{option} is nested too deeply") from None
    if not isinstance(value, dict):
        raise UsageError(f"{option} must be a JSON object")
    return value


def call(
    tool: ToolName,
    arguments: ToolArguments = None,
    args: ArgsJson = None,
    url: Url = None,
    stdio: Stdio = None,
    locale: Annotated[
        str | None, typer.Option("--locale", help="Send openai/locale in the request _meta, like ChatGPT (e.g. en-US).")
    ] = None,
    user_agent: Annotated[
        str | None, typer.Option("--user-agent", help="Send openai/userAgent in the request _meta.")
    ] = None,
    user_location: Annotated[
        str | None,
        typer.Option(
            "--user-location",
            help='Send openai/userLocation in the request _meta: a JSON object, e.g. \'{"city": "Oslo"}\'.',
        ),
    ] = None,
    meta: Annotated[
        str | None, typer.Option("--meta", help="More request _meta, as a JSON object (e.g. openai/subject).")
    ] = None,
    as_json: AsJson = False,
    timeout: Timeout = 30.0,
    verbose: Verbose = False,
    token: Token = None,
    client_id: ClientId = None,
    protocol: Protocol = "auto",
    answer: Answer = None,
    answers: AnswersJson = None,
    trace: TraceFile = None,
    no_ui: NoUi = False,
) -> None:
    """Call a tool and show what ChatGPT would get: status texts, structuredContent, content, widget _meta.

    Progress and log notifications are shown as they arrive (JSON lines on stderr with --json). A tool
    that asks a question is answered from --answer/--answers, else by a prompt in a terminal.

    Exit codes: 0 ok; 1 the tool returned isError, or the server is unreachable or broke the protocol,
    or it asked a question nothing answered; 2 the command line is wrong (unknown tool or parameter, a
    value of the wrong type).
    """
    import sys

    from appsdk_cli import remote
    from appsdk_cli.answers import elicitor, parse_answers
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.render.calls import call_result
    from appsdk_cli.render.live import asker, notifications

    given = parse_answers(answer, answers)
    ask = asker() if sys.stdin.isatty() else None
    hints = remote.request_meta(
        locale=locale,
        user_agent=user_agent,
        user_location=_parse_json_object("--user-location", user_location),
        extra=_parse_json_object("--meta", meta),
    )
    with (
        _said_when_interrupted(f"the result of {tool}"),
        _tracing(trace) as tracer,
        notifications(as_json=as_json) as show,
    ):
        target = _target(
            url,
            stdio,
            timeout,
            token,
            protocol,
            client_id,
            elicit=elicitor(given, ask=ask, tool=tool),
            notify=show,
            trace=tracer,
            ui=not no_ui,
        )
        outcome = remote.call_tool(target, tool, list(arguments or []), args, hints)
    call_result(outcome, as_json=as_json, verbose=verbose)
    if outcome.is_error:
        raise AppsdkError(f"{tool} returned isError: {outcome.error_text()}")


def tools(
    url: Url = None,
    stdio: Stdio = None,
    as_json: AsJson = False,
    timeout: Timeout = 30.0,
    verbose: Verbose = False,
    token: Token = None,
    client_id: ClientId = None,
    protocol: Protocol = "auto",
    trace: TraceFile = None,
    no_ui: NoUi = False,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Every tool in full (arguments, widget, hints, visibility), however many; without it, more"
            " than 50 tools are listed one line each.",
        ),
    ] = False,
) -> None:
    """List the server's tools with their Apps SDK metadata: widget, status texts, hints, visibility;
    and the server's skills (skills/list), each file with its digest; with --verbose, also which protocol
    eras the server speaks. A server with many tools gets one line per tool (--all for every detail)."""
    from appsdk_cli import remote
    from appsdk_cli.render.calls import tools_list

    with _said_when_interrupted("the tool list"), _tracing(trace) as tracer:
        target = _target(url, stdio, timeout, token, protocol, client_id, trace=tracer, ui=not no_ui)
        outcome = remote.list_tools(target)
    tools_list(outcome, as_json=as_json, verbose=verbose, show_all=show_all)


def resources(
    url: Url = None,
    stdio: Stdio = None,
    as_json: AsJson = False,
    timeout: Timeout = 30.0,
    verbose: FailureDetails = False,
    token: Token = None,
    client_id: ClientId = None,
    protocol: Protocol = "auto",
    trace: TraceFile = None,
) -> None:
    """List the server's resources (widget templates are ui:// URIs) with their MIME types."""
    from appsdk_cli import remote
    from appsdk_cli.render.calls import resources_list

    with _said_when_interrupted("the resource list"), _tracing(trace) as tracer:
        outcome = remote.list_resources(_target(url, stdio, timeout, token, protocol, client_id, trace=tracer))
    resources_list(outcome, as_json=as_json)


def read(
    uri: Annotated[
        str,
        typer.Argument(help="The resource URI, e.g. ui://widget/book-list.html.", show_default=False, metavar="URI"),
    ],
    url: Url = None,
    stdio: Stdio = None,
    as_json: AsJson = False,
    timeout: Timeout = 30.0,
    verbose: FailureDetails = False,
    token: Token = None,
    client_id: ClientId = None,
    protocol: Protocol = "auto",
    trace: TraceFile = None,
) -> None:
    """Read one resource and print its contents (a widget's HTML, its _meta). A file of a skill the server
    lists (skill://NAME/SKILL.md) is checked against its sha256 digest and size, as a host checks it."""
    from appsdk_cli import remote
    from appsdk_cli.errors import AppsdkError
    from appsdk_cli.render.calls import resource_contents

    with _said_when_interrupted(f"the contents of {uri}"), _tracing(trace) as tracer:
        outcome = remote.read_resource(_target(url, stdio, timeout, token, protocol, client_id, trace=tracer), uri)
    resource_contents(outcome, as_json=as_json)
    if outcome.verdict is not None and outcome.verdict.problem is not None:
        # A host must not use a skill file that fails its listed digest or size (SEP-2640).
        raise AppsdkError(f"{uri} is not the file skills/list describes: {outcome.verdict.problem}")
