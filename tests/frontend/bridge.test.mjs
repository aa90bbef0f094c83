// The MCP Apps bridge, host side: how a view's JSON-RPC messages are routed (host/bridge.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { HOST } from "./helpers.mjs";

const { BridgeError, createBridge, logLevelOf, negotiateVersion, METHOD_NOT_FOUND } = await import(`${HOST}bridge.js`);

function endpoint(handlers = {}) {
  const sent = [];
  const logged = [];
  const notified = [];
  const bridge = createBridge({
    send: (message) => sent.push(message),
    handlers,
    onNotification: (method, params) => notified.push({ method, params }),
    log: (kind, level, message) => logged.push({ kind, level, message }),
  });
  return { bridge, sent, logged, notified };
}

test("a request is answered with its handler's result under the same id", async () => {
  const { bridge, sent, logged } = endpoint({
    "ui/initialize": (params) => ({ protocolVersion: params.protocolVersion, hostInfo: { name: "t", version: "1" } }),
  });
  await bridge.receive({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26" } });
  assert.deepEqual(sent, [
    { jsonrpc: "2.0", id: 1, result: { protocolVersion: "2026-01-26", hostInfo: { name: "t", version: "1" } } },
  ]);
  assert.deepEqual(logged, []);
});

test("a handler's promise is awaited, and params default to {}", async () => {
  const { bridge, sent } = endpoint({ "tools/call": async (params) => ({ content: [], got: params }) });
  bridge.initializeSeen = true;
  await bridge.receive({ jsonrpc: "2.0", id: "a", method: "tools/call" });
  assert.deepEqual(sent, [{ jsonrpc: "2.0", id: "a", result: { content: [], got: {} } }]);
});

test("an unknown method is answered -32601 and logged; so is a name from Object.prototype", async () => {
  const { bridge, sent, logged } = endpoint({});
  bridge.initializeSeen = true;
  await bridge.receive({ jsonrpc: "2.0", id: 7, method: "ui/teleport", params: {} });
  await bridge.receive({ jsonrpc: "2.0", id: 8, method: "toString", params: {} });
  assert.deepEqual(sent, [
    { jsonrpc: "2.0", id: 7, error: { code: -32601, message: "Method not found: ui/teleport" } },
    { jsonrpc: "2.0", id: 8, error: { code: -32601, message: "Method not found: toString" } },
  ]);
  assert.deepEqual(
    logged.map((entry) => entry.message),
    ["unsupported request ui/teleport", "unsupported request toString"],
  );
});

test("a handler's failure is a JSON-RPC error: its own code, else -32603", async () => {
  const { bridge, sent, logged } = endpoint({
    "ui/download-file": () => {
      throw new BridgeError(METHOD_NOT_FOUND, "Claude-like has no hostCapabilities.downloadFile");
    },
    "resources/read": async () => {
      throw new Error("no such resource");
    },
  });
  bridge.initializeSeen = true;
  await bridge.receive({ jsonrpc: "2.0", id: 1, method: "ui/download-file", params: {} });
  await bridge.receive({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "ui://x" } });
  assert.deepEqual(sent, [
    { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Claude-like has no hostCapabilities.downloadFile" } },
    { jsonrpc: "2.0", id: 2, error: { code: -32603, message: "no such resource" } },
  ]);
  assert.deepEqual(logged, [
    { kind: "bridge", level: "warn", message: "ui/download-file refused: Claude-like has no hostCapabilities.downloadFile" },
  ]);
});

test("a request before ui/initialize is served but warned about, except ping", async () => {
  const { bridge, sent, logged } = endpoint({ ping: () => ({}), "tools/call": () => ({ content: [] }) });
  await bridge.receive({ jsonrpc: "2.0", id: 1, method: "ping" });
  await bridge.receive({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x" } });
  assert.equal(sent.length, 2);
  assert.deepEqual(logged, [{ kind: "bridge", level: "warn", message: "tools/call before ui/initialize" }]);
});

test("a notification goes to the host with its params (or {}), and is never answered", async () => {
  const { bridge, sent, notified } = endpoint({});
  await bridge.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  await bridge.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 321 } });
  assert.deepEqual(notified, [
    { method: "ui/notifications/initialized", params: {} },
    { method: "ui/notifications/size-changed", params: { height: 321 } },
  ]);
  assert.deepEqual(sent, []);
});

test("the host's own request resolves with the view's answer, matched by id", async () => {
  const { bridge, sent } = endpoint({});
  const answered = bridge.request("ui/resource-teardown", {}, 5000);
  assert.deepEqual(sent, [{ jsonrpc: "2.0", id: "appsdk-host-1", method: "ui/resource-teardown", params: {} }]);
  // An answer to some other id is not this request's.
  await bridge.receive({ jsonrpc: "2.0", id: "appsdk-host-9", result: {} });
  await bridge.receive({ jsonrpc: "2.0", id: "appsdk-host-1", result: {} });
  assert.deepEqual(await answered, { jsonrpc: "2.0", id: "appsdk-host-1", result: {} });
});

test("the host's request resolves with null when the view does not answer in time", async () => {
  const { bridge } = endpoint({});
  const started = Date.now();
  assert.equal(await bridge.request("ui/resource-teardown", {}, 30), null);
  assert.ok(Date.now() - started >= 25);
  // A late answer finds nobody waiting, and is dropped.
  await bridge.receive({ jsonrpc: "2.0", id: "appsdk-host-1", result: {} });
});

test("notify sends a JSON-RPC notification", () => {
  const { bridge, sent } = endpoint({});
  bridge.notify("ui/notifications/tool-input", { arguments: { city: "Oslo" } });
  assert.deepEqual(sent, [{ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { city: "Oslo" } } }]);
});

test("a view's protocol version is kept when the host speaks it, else the session's", () => {
  assert.equal(negotiateVersion("2026-01-26", "2026-01-26"), "2026-01-26");
  assert.equal(negotiateVersion("2025-06-18", "2026-01-26"), "2026-01-26");
  assert.equal(negotiateVersion(undefined, "2026-01-26"), "2026-01-26");
});

test("MCP log levels map onto the host log's three", () => {
  const levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", undefined];
  assert.deepEqual(levels.map(logLevelOf), ["info", "info", "info", "warn", "error", "error", "error", "error", "info"]);
});
