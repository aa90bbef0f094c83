"""A ChatGPT app on mcp 1.x, written the way OpenAI's Python Apps SDK examples are (not appsdk's scaffold).

FastMCP from the `mcp` 1.x package, with the low-level handlers overridden so tools and resources carry
their `_meta`: a text/html+skybridge widget, openai/outputTemplate, status texts, openai/widgetAccessible,
served as stateless streamable HTTP by uvicorn. It runs in its own venv (requirements.txt), never in
appsdk's, which has mcp 2.x.

    PORT=8000 python server.py
"""

from __future__ import annotations

import os
from typing import Any

import mcp.types as types
import uvicorn
from mcp.server.fastmcp import FastMCP

WIDGET_URI = "ui://widget/trail-list.html"
MIME_TYPE = "text/html+skybridge"
DOMAIN = "https://trails.example.com"

WIDGET_HTML = """<!doctype html>
<html>
<head><style>body { font: 14px system-ui; margin: 0; } li { padding: 4px 0; }</style></head>
<body>
<h1 id="region">Trails</h1>
<ul id="trails"></ul>
<script>
  function render(output) {
    if (!output) return;
    document.getElementById("region").textContent = "Trails near " + output.region;
    document.getElementById("trails").innerHTML = "";
    for (const trail of output.trails) {
      const item = document.createElement("li");
      item.textContent = trail.name + " (" + trail.km + " km)";
      document.getElementById("trails").appendChild(item);
    }
  }
  render(window.openai && window.openai.toolOutput);
  window.addEventListener("openai:set_globals", (event) => render(event.detail.globals.toolOutput));
</script>
</body>
</html>"""

TRAILS = {
    "alps": [{"name": "Eiger Trail", "km": 6.0}, {"name": "Via Alpina 1", "km": 14.5}],
    "lakes": [{"name": "Catbells", "km": 5.6}, {"name": "Helvellyn Edge", "km": 12.0}],
}

TOOL_META = {
    "openai/outputTemplate": WIDGET_URI,
    "openai/toolInvocation/invoking": "Looking for trails",
    "openai/toolInvocation/invoked": "Found some trails",
    "openai/widgetAccessible": True,
    "openai/resultCanProduceWidget": True,
}
WIDGET_META = {
    "openai/widgetDescription": "A list of hiking trails in one region.",
    "openai/widgetPrefersBorder": True,
    "openai/widgetDomain": DOMAIN,
    "openai/widgetCSP": {"connect_domains": [], "resource_domains": []},
}
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"region": {"type": "string", "enum": sorted(TRAILS), "description": "Where to hike."}},
    "required": ["region"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string"},
        "trails": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "km": {"type": "number"}},
                "required": ["name", "km"],
            },
        },
    },
    "required": ["region", "trails"],
}
SAFE = types.ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)

mcp = FastMCP(name="trails-python", stateless_http=True)


@mcp._mcp_server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [
        types.Tool(
            name="show-trails",
            title="Show trails",
            description="Lists hiking trails in a region.",
            inputSchema=INPUT_SCHEMA,
            outputSchema=OUTPUT_SCHEMA,
            annotations=SAFE,
            _meta=TOOL_META,
        ),
        types.Tool(
            name="trail-count",
            title="Count trails",
            description="How many trails appsdk knows in every region.",
            inputSchema={"type": "object", "properties": {}},
            annotations=SAFE,
        ),
    ]


@mcp._mcp_server.list_resources()
async def list_resources() -> list[types.Resource]:
    return [
        types.Resource(uri=WIDGET_URI, name="trail-list", title="Trail list", mimeType=MIME_TYPE, _meta=WIDGET_META)
    ]


async def read_resource(request: types.ReadResourceRequest) -> types.ServerResult:
    if str(request.params.uri) != WIDGET_URI:
        raise ValueError(f"unknown resource {request.params.uri}")
    contents = [types.TextResourceContents(uri=WIDGET_URI, mimeType=MIME_TYPE, text=WIDGET_HTML, _meta=WIDGET_META)]
    return types.ServerResult(types.ReadResourceResult(contents=contents))


async def call_tool(request: types.CallToolRequest) -> types.ServerResult:
    arguments = request.params.arguments or {}
    if request.params.name == "trail-count":
        total = sum(len(trails) for trails in TRAILS.values())
        text = types.TextContent(type="text", text=f"{total} trails in {len(TRAILS)} regions.")
        return types.ServerResult(types.CallToolResult(content=[text], structuredContent={"total": total}))
    if request.params.name != "show-trails":
        return types.ServerResult(
            types.CallToolResult(content=[types.TextContent(type="text", text="Unknown tool")], isError=True)
        )
    region = arguments.get("region")
    if region not in TRAILS:
        message = f"No trails for region {region!r}; try one of {', '.join(sorted(TRAILS))}."
        return types.ServerResult(
            types.CallToolResult(content=[types.TextContent(type="text", text=message)], isError=True)
        )
    trails = TRAILS[region]
    summary = ", ".join(trail["name"] for trail in trails)
    return types.ServerResult(
        types.CallToolResult(
            content=[types.TextContent(type="text", text=f"Trails near {region}: {summary}.")],
            structuredContent={"region": region, "trails": trails},
            _meta={"openai/outputTemplate": WIDGET_URI},
        )
    )


mcp._mcp_server.request_handlers[types.ReadResourceRequest] = read_resource
mcp._mcp_server.request_handlers[types.CallToolRequest] = call_tool

app = mcp.streamable_http_app()

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
