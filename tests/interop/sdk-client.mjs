// The official TypeScript MCP SDK client, driven by tests/test_interop.py:
//   node sdk-client.mjs URL TOOL 'JSON-ARGS' [RESOURCE-URI]
// prints one JSON object: {tools: [...names], call: CallToolResult, read: ReadResourceResult | null}.
// With MCP_BEARER_TOKEN set, every request carries `Authorization: Bearer <token>` (a protected app).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, args, uri] = process.argv.slice(2);
const client = new Client({ name: "appsdk-interop", version: "1.0.0" });
const token = process.env.MCP_BEARER_TOKEN;
const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const call = await client.callTool({ name: tool, arguments: JSON.parse(args) });
const read = uri ? await client.readResource({ uri }) : null;
// Ends a stateful session (DELETE); a stateless server answers 405, which the SDK tolerates.
await transport.terminateSession().catch(() => {});
await client.close();
process.stdout.write(JSON.stringify({ tools, call, read }) + "\n");
