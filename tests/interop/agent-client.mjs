// The official TypeScript MCP SDK client driving `appsdk mcp` over stdio, as an agent would start it:
//   node agent-client.mjs PYTHON ROOT
// prints one JSON object: the tool names, whether each sets all four annotation hints and an outputSchema,
// and three calls (scaffold_app, dev_status, a hostile path).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [python, root] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: python, args: ["-m", "appsdk_cli", "mcp", root], env: process.env });
const client = new Client({ name: "appsdk-agent-interop", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const hints = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
const annotated = Object.fromEntries(
  tools.map((t) => [t.name, Boolean(t.outputSchema) && hints.every((h) => typeof t.annotations?.[h] === "boolean")]),
);
const scaffold = await client.callTool({ name: "scaffold_app", arguments: { name: "demo" } });
const status = await client.callTool({ name: "dev_status", arguments: { path: "demo" } });
const hostile = await client.callTool({ name: "dev_status", arguments: { path: "../../" } });
await client.close();
process.stdout.write(JSON.stringify({ tools: tools.map((t) => t.name), annotated, scaffold, status, hostile }) + "\n");
