"""A tool's own metadata: status texts, annotation hints, outputSchema, and who may call it."""

from __future__ import annotations

from collections.abc import Iterator

from appsdk_cli.appmeta import INVOKED, INVOKING, OPENAI_VISIBILITY, tool_meta
from appsdk_cli.checks.model import Finding, Rule, Severity, tool_target
from appsdk_cli.snapshot.model import Snapshot

STATUS_TEXT_LIMIT = 64

STATUS_TEXT_TOO_LONG = Rule(
    "APPS301",
    "status-text-too-long",
    Severity.ERROR,
    f"`openai/toolInvocation/invoking` or `.../invoked` longer than {STATUS_TEXT_LIMIT} characters",
    f"ChatGPT allows at most {STATUS_TEXT_LIMIT}",
)
ANNOTATIONS_MISSING = Rule(
    "APPS302",
    "annotations-missing",
    Severity.WARNING,
    "A tool without `readOnlyHint`, `destructiveHint` or `openWorldHint`",
    "OpenAI requires all three for directory submission; hosts assume the worst when they are missing",
)
OUTPUT_SCHEMA_MISSING = Rule(
    "APPS303",
    "output-schema-missing",
    Severity.WARNING,
    "A widget tool (it names a template) without an `outputSchema`",
    "Its widget renders `structuredContent`, which should be declared so hosts and models can rely on it",
)
WIDGET_ONLY_UNREACHABLE = Rule(
    "APPS304",
    "widget-only-tool-unreachable",
    Severity.ERROR,
    "A tool hidden from the model (`ui.visibility` without `model`, or `openai/visibility: private`) that no "
    'widget may call over any bridge (`ui.visibility` without `"app"`, and no `openai/widgetAccessible: true`)',
    "Nobody can ever call it",
)
OPENAI_VISIBILITY_DEPRECATED = Rule(
    "APPS305",
    "openai-visibility-deprecated",
    Severity.WARNING,
    "A tool with `openai/visibility`",
    "Deprecated since July 2026: `_meta.ui.visibility` says who sees a tool, in ChatGPT and every MCP Apps host",
)
RULES = (
    STATUS_TEXT_TOO_LONG,
    ANNOTATIONS_MISSING,
    OUTPUT_SCHEMA_MISSING,
    WIDGET_ONLY_UNREACHABLE,
    OPENAI_VISIBILITY_DEPRECATED,
)

_HINTS = (("readOnlyHint", "read_only"), ("destructiveHint", "destructive"), ("openWorldHint", "open_world"))


# A checked project is Python (appsdk's own kind); a live server may be written in anything, so its
# hints name the wire fields rather than one SDK's spelling of them.
def _annotations_hint(snapshot: Snapshot) -> str:
    if snapshot.mode == "path":
        return (
            "declare all three, e.g. annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, "
            "open_world_hint=False)"
        )
    return (
        'declare all three in the tool\'s annotations, e.g. {"readOnlyHint": true, "destructiveHint": false, '
        '"openWorldHint": false}'
    )


def _output_schema_hint(snapshot: Snapshot) -> str:
    if snapshot.mode == "path":
        return "annotate the return type (a pydantic model, or Annotated[CallToolResult, Model]) to get one"
    return "declare the tool's outputSchema: the JSON Schema of the structuredContent its widget renders"


def check(snapshot: Snapshot) -> Iterator[Finding]:
    for tool in snapshot.unique_tools():
        meta = tool_meta(tool)
        target = tool_target(meta.name)
        for key, text in ((INVOKING, meta.invoking), (INVOKED, meta.invoked)):
            if text is not None and len(text) > STATUS_TEXT_LIMIT:
                yield Finding(
                    STATUS_TEXT_TOO_LONG,
                    target,
                    f"{meta.name}: {key} is {len(text)} characters, over the limit of {STATUS_TEXT_LIMIT}",
                    f"shorten it to {STATUS_TEXT_LIMIT} characters or fewer, e.g. {text[: STATUS_TEXT_LIMIT - 3]!r}...",
                )
        missing = [key for key, field in _HINTS if getattr(meta, field) is None]
        if missing:
            yield Finding(
                ANNOTATIONS_MISSING,
                target,
                f"{meta.name}: annotations lack {', '.join(missing)}",
                _annotations_hint(snapshot),
            )
        called = snapshot.calls.get(meta.name)
        # When a call showed structuredContent, outputs.py reports the missing schema as an error instead.
        if meta.template and not meta.has_output_schema and not (called and "structuredContent" in called):
            yield Finding(
                OUTPUT_SCHEMA_MISSING,
                target,
                f"{meta.name}: renders widget {meta.template} but declares no outputSchema",
                _output_schema_hint(snapshot),
            )
        if isinstance(tool.get("_meta"), dict) and OPENAI_VISIBILITY in tool["_meta"]:
            replacement = '["app"]' if meta.openai_visibility == "private" else '["model", "app"] (or nothing)'
            yield Finding(
                OPENAI_VISIBILITY_DEPRECATED,
                target,
                f"{meta.name}: sets openai/visibility {meta.openai_visibility or '(not a string)'}, deprecated "
                "since July 2026",
                f'use _meta.ui.visibility instead: "ui": {{"visibility": {replacement}}}',
            )
        if not meta.model_visible and not meta.widget_callable:
            yield Finding(
                WIDGET_ONLY_UNREACHABLE,
                target,
                f"{meta.name}: is hidden from the model and no widget may call it",
                'list "app" in its _meta.ui.visibility (and set "openai/widgetAccessible": True for ChatGPT), or '
                "make it visible to the model",
            )
