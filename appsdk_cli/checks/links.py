"""Links from a tool to its widget: `ui.resourceUri`, `openai/outputTemplate` and the deprecated flat key."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from appsdk_cli.appmeta import DEPRECATED_RESOURCE_URI, OUTPUT_TEMPLATE, tool_meta
from appsdk_cli.checks.model import Finding, Rule, Severity, tool_target
from appsdk_cli.snapshot.model import Snapshot

TEMPLATE_MISSING = Rule(
    "APPS101",
    "template-missing",
    Severity.ERROR,
    "A tool's `ui.resourceUri`, `openai/outputTemplate` or `ui/resourceUri` names no resource the server has",
    "The host reads that URI to render the widget; the tool shows no widget",
)
TEMPLATE_MISMATCH = Rule(
    "APPS102",
    "template-mismatch",
    Severity.ERROR,
    "`ui.resourceUri` and `openai/outputTemplate` name different resources",
    "ChatGPT and standard hosts would render different widgets for the same tool",
)
DEPRECATED_KEY = Rule(
    "APPS103",
    "deprecated-resource-uri",
    Severity.WARNING,
    "The flat `_meta` key `ui/resourceUri` without the nested `ui.resourceUri`, or naming another resource",
    "It is from an early MCP Apps draft; current hosts read `_meta.ui.resourceUri` (the official SDK writes "
    "both, the same URI in each, which is fine)",
)
NOT_UI_URI = Rule(
    "APPS104",
    "template-not-ui-uri",
    Severity.WARNING,
    "A widget URI that is not a `ui://` URI",
    "MCP Apps widgets are `ui://` resources; a host may refuse any other scheme",
)
RULES = (TEMPLATE_MISSING, TEMPLATE_MISMATCH, DEPRECATED_KEY, NOT_UI_URI)


def check(snapshot: Snapshot) -> Iterator[Finding]:
    listed = sorted(snapshot.listed_uris())
    for tool in snapshot.unique_tools():
        meta = tool_meta(tool)
        target = tool_target(meta.name)
        keys = (
            ("ui.resourceUri", meta.resource_uri),
            (OUTPUT_TEMPLATE, meta.output_template),
            (DEPRECATED_RESOURCE_URI, meta.deprecated_resource_uri),
        )
        reported: set[str] = set()
        for key, uri in keys:
            if not uri or uri in reported:
                continue
            reported.add(uri)
            # Listed, or at least readable (a resource template can serve it): either way the host finds it.
            if uri not in listed and not snapshot.reads.get(uri, {}).get("contents"):
                close = difflib.get_close_matches(uri, listed, n=1, cutoff=0.6)
                hint = f"did you mean {close[0]}?" if close else "add a resource at that URI, or fix the key"
                yield Finding(
                    TEMPLATE_MISSING, target, f"{meta.name}: {key} names {uri}, which the server does not have", hint
                )
            if not uri.startswith("ui://"):
                yield Finding(
                    NOT_UI_URI,
                    target,
                    f"{meta.name}: widget URI {uri} is not a ui:// URI",
                    "serve the widget at a ui:// URI, e.g. ui://widget/NAME.html",
                )
        if meta.templates_disagree:
            yield Finding(
                TEMPLATE_MISMATCH,
                target,
                f"{meta.name}: ui.resourceUri is {meta.resource_uri} but openai/outputTemplate is "
                f"{meta.output_template}",
                "point both keys at the same ui:// resource",
            )
        # registerAppTool writes the flat key beside the nested one on purpose, for older hosts: only a
        # flat key alone, or one that names another widget, is worth a word.
        if meta.deprecated_resource_uri and not meta.resource_uri:
            yield Finding(
                DEPRECATED_KEY,
                target,
                f"{meta.name}: names its widget only in the deprecated flat _meta key ui/resourceUri",
                'add _meta {"ui": {"resourceUri": ...}} (and openai/outputTemplate for ChatGPT); the flat key may stay',
            )
        elif meta.deprecated_resource_uri and meta.deprecated_resource_uri != meta.resource_uri:
            yield Finding(
                DEPRECATED_KEY,
                target,
                f"{meta.name}: the flat key ui/resourceUri names {meta.deprecated_resource_uri} but ui.resourceUri "
                f"names {meta.resource_uri}",
                "point both keys at the same ui:// resource, or drop the flat one",
            )
