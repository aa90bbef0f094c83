// Judges what a host posted to an MCP Apps view by the spec's own zod schemas (the published
// @modelcontextprotocol/ext-apps SDK, and @modelcontextprotocol/core for the plain MCP results), not
// by our reading of the spec. Driven by tests/test_preview_spec.py:
//   node validate-host-messages.mjs < records.json
// records.json: [{dir: "host→view" | "view→host" | "host→sandbox" | "sandbox→host", at: epoch ms,
//   data: <the posted message>}, ...]
// prints one JSON object: {checked, results: [{at, kind, method, schema, ok, issues}]}, one result per
// host→view message. A response is judged by the schema of the request it answers (the latest
// view→host request with its id before it).
import * as apps from "@modelcontextprotocol/ext-apps";
import * as core from "@modelcontextprotocol/core";

const NOTIFICATIONS = {
  "ui/notifications/tool-input": apps.McpUiToolInputNotificationSchema,
  "ui/notifications/tool-input-partial": apps.McpUiToolInputPartialNotificationSchema,
  "ui/notifications/tool-result": apps.McpUiToolResultNotificationSchema,
  "ui/notifications/tool-cancelled": apps.McpUiToolCancelledNotificationSchema,
  "ui/notifications/host-context-changed": apps.McpUiHostContextChangedNotificationSchema,
};
// The host's channel to its sandbox proxy, and the proxy's to the host (host→sandbox, sandbox→host).
const SANDBOX = {
  "ui/notifications/sandbox-resource-ready": apps.McpUiSandboxResourceReadyNotificationSchema,
  "ui/notifications/sandbox-proxy-ready": apps.McpUiSandboxProxyReadyNotificationSchema,
};
const REQUESTS = {
  "ui/resource-teardown": apps.McpUiResourceTeardownRequestSchema,
  ping: core.PingRequestSchema,
};
// The result schema for each view→host request the host answers.
const RESULTS = {
  "ui/initialize": apps.McpUiInitializeResultSchema,
  "ui/open-link": apps.McpUiOpenLinkResultSchema,
  "ui/message": apps.McpUiMessageResultSchema,
  "ui/request-display-mode": apps.McpUiRequestDisplayModeResultSchema,
  "ui/download-file": apps.McpUiDownloadFileResultSchema,
  "ui/update-model-context": core.EmptyResultSchema,
  "tools/call": core.CallToolResultSchema,
  "resources/read": core.ReadResourceResultSchema,
  "resources/list": core.ListResourcesResultSchema,
  "resources/templates/list": core.ListResourceTemplatesResultSchema,
  ping: core.EmptyResultSchema,
};

const schemaName = (schema) => Object.entries({ ...apps, ...core }).find(([, value]) => value === schema)?.[0];

function judge(schema, value) {
  const parsed = schema.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
}

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));
const records = [...input].sort((a, b) => a.at - b.at);
const requestsSeen = []; // view→host requests, in time order
const results = [];

for (const record of records) {
  const message = record.data;
  if (record.dir === "view→host") {
    if (message && message.jsonrpc === "2.0" && message.method !== undefined && message.id !== undefined) {
      requestsSeen.push(message);
    }
    continue;
  }
  const result = { at: record.at, kind: "?", method: null, schema: null, ok: false, issues: [], dir: record.dir };
  results.push(result);
  if (record.dir === "host→sandbox" || record.dir === "sandbox→host") {
    result.kind = "notification";
    result.method = message && message.method;
    const schema = SANDBOX[result.method];
    result.schema = schema ? schemaName(schema) : null;
    result.issues = schema ? judge(schema, message) : [`${result.method} is not a sandbox notification of the MCP Apps spec`];
    result.ok = result.issues.length === 0;
    continue;
  }
  const envelope = judge(core.JSONRPCMessageSchema, message);
  if (envelope.length) {
    result.kind = "not JSON-RPC";
    result.issues = [`not a JSON-RPC 2.0 message: ${JSON.stringify(message).slice(0, 200)}`, ...envelope];
    continue;
  }
  let schema;
  let value = message;
  if (message.method !== undefined) {
    result.method = message.method;
    result.kind = message.id === undefined ? "notification" : "request";
    schema = (message.id === undefined ? NOTIFICATIONS : REQUESTS)[message.method];
    if (!schema) {
      result.issues = [`${message.method} is not a host→view ${result.kind} of the MCP Apps spec`];
      continue;
    }
  } else {
    const request = [...requestsSeen].reverse().find((r) => r.id === message.id);
    result.method = request ? request.method : null;
    if ("error" in message) {
      result.kind = "error";
      schema = core.JSONRPCErrorResponseSchema;
    } else {
      result.kind = "result";
      if (!request) {
        result.issues = [`a result for id ${JSON.stringify(message.id)}, which no view request carried`];
        continue;
      }
      schema = RESULTS[request.method];
      value = message.result;
      if (!schema) {
        result.issues = [`no spec result type for ${request.method}`];
        continue;
      }
    }
  }
  result.schema = schemaName(schema) || "?";
  result.issues = judge(schema, value);
  result.ok = result.issues.length === 0;
}

process.stdout.write(JSON.stringify({ checked: results.length, results }) + "\n");
