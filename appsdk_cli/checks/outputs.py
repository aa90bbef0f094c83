"""What tools really return: the results of the calls the check made (read-only tools, no arguments)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from appsdk_cli.appmeta import tool_crash
from appsdk_cli.checks.model import Finding, Rule, Severity, tool_target
from appsdk_cli.checks.schemas import instance_problem, schema_problem
from appsdk_cli.schemawalk import TooComplex
from appsdk_cli.snapshot.model import Snapshot

STRUCTURED_WITHOUT_SCHEMA = Rule(
    "APPS401",
    "structured-content-without-schema",
    Severity.WARNING,
    "A tool returned `structuredContent` but declares no `outputSchema`",
    "MCP makes the schema optional and every host renders the result, but directory review and models rely "
    "on a declared shape",
)
OUTPUT_MISMATCH = Rule(
    "APPS402",
    "output-schema-mismatch",
    Severity.ERROR,
    "A tool's real output does not match its `outputSchema` (or it returned no `structuredContent` at all)",
    "Clients that validate results reject the call; the widget gets data it does not expect",
)
CONTENT_TEXT_MISSING = Rule(
    "APPS403",
    "content-text-missing",
    Severity.ERROR,
    "A tool result whose `content` has no non-empty text block",
    "The model reads `content`; many MCP clients show no widget, so the text must stand on its own",
)
CALL_FAILED = Rule(
    "APPS404",
    "tool-call-failed",
    Severity.WARNING,
    "A read-only tool with no required arguments failed when the check called it",
    "Its output could not be checked; it may also fail for users",
)
PATTERN_NOT_CHECKED = Rule(
    "APPS405",
    "output-pattern-not-checked",
    Severity.WARNING,
    "A `pattern` in an `outputSchema` that appsdk does not run (lookaround, backreferences), so the output "
    "was checked without it",
    "appsdk matches a server's patterns in linear time only; clients that use a backtracking engine may differ",
)
RULES = (STRUCTURED_WITHOUT_SCHEMA, OUTPUT_MISMATCH, CONTENT_TEXT_MISSING, CALL_FAILED, PATTERN_NOT_CHECKED)


def _error_text(result: dict[str, Any]) -> str:
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and str(block.get("text", "")).strip():
            return str(block["text"]).strip().splitlines()[0]
    return "no error text"


def _has_text(result: dict[str, Any]) -> bool:
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    return any(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip()
        for b in blocks
    )


def _sign_in_needed(snapshot: Snapshot, name: str) -> str | None:
    """The scope a call was refused for want of (HTTP 401/403, or an isError result with a
    `mcp/www_authenticate` challenge); None when the call did not fail for that."""
    if name in snapshot.sign_in_calls:
        return snapshot.sign_in_calls[name]
    result = snapshot.calls.get(name) or {}
    meta = result.get("_meta") if result.get("isError") is True else None
    challenges = meta.get("mcp/www_authenticate") if isinstance(meta, dict) else None
    if not challenges:
        return None
    from appsdk_cli.client import parse_bearer_challenge

    for challenge in challenges if isinstance(challenges, list) else [challenges]:
        params = parse_bearer_challenge(str(challenge)) or {}
        if params.get("error") in ("insufficient_scope", "invalid_token"):
            return params.get("scope", "")
    return None


def check(snapshot: Snapshot) -> Iterator[Finding]:
    for tool in snapshot.unique_tools():
        name = str(tool.get("name"))
        target = tool_target(name)
        sign_in = _sign_in_needed(snapshot, name)
        if sign_in is not None:
            # Not the tool's fault: it asked for a sign-in (or more scope) the way it should.
            yield Finding(
                CALL_FAILED,
                target,
                f"{name}: needs a sign-in{' with scope ' + sign_in if sign_in else ''}; its output was not checked",
                "check again with --token (a token with that scope), or sign in once with `appsdk call " + name + "`",
            )
            continue
        if name in snapshot.call_errors:
            yield Finding(
                CALL_FAILED,
                target,
                f"{name}: calling it with no arguments failed: {snapshot.call_errors[name]}",
                "make it succeed with no arguments, or require the arguments it needs in its inputSchema",
            )
            continue
        result = snapshot.calls.get(name)
        if result is None:
            continue
        if result.get("isError") is True:
            crash = tool_crash(result)
            raised = f" (it raised {crash.summary})" if crash else ""
            yield Finding(
                CALL_FAILED,
                target,
                f"{name}: returned isError when called with no arguments: {_error_text(result)}{raised}",
                "make it succeed with no arguments, or require the arguments it needs in its inputSchema",
            )
            continue
        schema = tool.get("outputSchema")
        has_structured = "structuredContent" in result
        if has_structured and not isinstance(schema, dict):
            yield Finding(
                STRUCTURED_WITHOUT_SCHEMA,
                target,
                f"{name}: returns structuredContent but declares no outputSchema",
                "annotate the return type (a pydantic model, or Annotated[CallToolResult, Model]) to declare one",
            )
        elif isinstance(schema, dict) and schema_problem(schema) is None:
            if not has_structured:
                problem = "it returned no structuredContent"
            else:
                unchecked: list[str] = []
                try:
                    problem = instance_problem(schema, result["structuredContent"], unchecked)
                except TooComplex as why:
                    yield Finding(
                        OUTPUT_MISMATCH,
                        target,
                        f"{name}: cannot tell whether its output matches its outputSchema: the schema is too "
                        f"complex to check ({why})",
                        "simplify the outputSchema: clients that validate results walk it too",
                    )
                    problem = None
            if problem:
                yield Finding(
                    OUTPUT_MISMATCH,
                    target,
                    f"{name}: output does not match its outputSchema: {problem}",
                    "return what the schema declares, or fix the schema",
                )
            for line in unchecked:
                yield Finding(
                    PATTERN_NOT_CHECKED,
                    target,
                    f"{name}: outputSchema {line}",
                    "write the pattern without lookaround or backreferences if clients are to check it",
                )
        if not _has_text(result):
            yield Finding(
                CONTENT_TEXT_MISSING,
                target,
                f"{name}: result content has no text",
                "add a TextContent that says what the result is, for models and hosts without widgets",
            )
