// The host page's records of what passes between host and widget (host/traffic.js, host/events.js),
// and what it makes of the bootstrap's CSP reports and ui/download-file's contents (host/csp.js,
// host/files.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { HOST } from "./helpers.mjs";

const { classify, createTrafficRecorder } = await import(`${HOST}traffic.js`);
const { createEventHub, EVENT_TYPES } = await import(`${HOST}events.js`);
const { judgeCspViolation } = await import(`${HOST}csp.js`);
const { downloadOf } = await import(`${HOST}files.js`);

test("bridge messages are classified as JSON-RPC says", () => {
  assert.deepEqual(classify("bridge", { jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} }), { kind: "request", method: "ui/initialize", id: 1 });
  assert.deepEqual(classify("bridge", { jsonrpc: "2.0", method: "ui/notifications/initialized" }), { kind: "notification", method: "ui/notifications/initialized", id: null });
  assert.deepEqual(classify("bridge", { jsonrpc: "2.0", id: 1, result: {} }), { kind: "response", method: null, id: 1 });
  assert.deepEqual(classify("bridge", { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "x" } }), { kind: "error", method: null, id: 2 });
});

test("window.openai's port carries traffic and the bootstrap's own reports, which are not traffic", () => {
  assert.deepEqual(classify("openai", { type: "request", id: 3, method: "callTool", params: {} }), { kind: "request", method: "callTool", id: 3 });
  assert.deepEqual(classify("openai", { type: "response", id: 3, result: {} }), { kind: "response", method: null, id: 3 });
  assert.deepEqual(classify("openai", { type: "response", id: 3, error: { message: "no" } }), { kind: "error", method: null, id: 3 });
  assert.deepEqual(classify("openai", { type: "globals", globals: { theme: "dark" } }), { kind: "notification", method: "openai:set_globals", id: null });
  assert.deepEqual(classify("openai", { type: "notify", method: "notifyIntrinsicHeight", params: { height: 1 } }), { kind: "notification", method: "notifyIntrinsicHeight", id: null });
  for (const type of ["log", "load-failed", "csp", "read", "autosize", "key"]) assert.equal(classify("openai", { type }), null, type);
});

test("an answer is paired with its request per channel and direction: its method and how long it took", () => {
  let clock = 1000;
  const recorder = createTrafficRecorder({ run: "r7", now: () => clock, clock: () => "2026-12-02T00:00:00.000Z" });
  const asked = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "plan-trip" } };
  const request = recorder.record("bridge", "widget", "host", asked);
  assert.deepEqual(request, {
    time: "2026-12-02T00:00:00.000Z",
    channel: "bridge",
    from: "widget",
    to: "host",
    kind: "request",
    method: "tools/call",
    id: 1,
    size: Buffer.byteLength(JSON.stringify(asked)),
    run: "r7",
    message: asked,
  });
  // The host's own request with the same id, the other way round, is another pair.
  recorder.record("bridge", "host", "widget", { jsonrpc: "2.0", id: 1, method: "ui/resource-teardown", params: {} });
  clock = 1012.34;
  const answer = recorder.record("bridge", "host", "widget", { jsonrpc: "2.0", id: 1, result: { content: [] } });
  assert.equal(answer.method, "tools/call");
  assert.equal(answer.duration_ms, 12.3);
  const teardown = recorder.record("bridge", "widget", "host", { jsonrpc: "2.0", id: 1, result: {} });
  assert.equal(teardown.method, "ui/resource-teardown");
  // Answered once: a second answer to the same id pairs with nothing.
  const again = recorder.record("bridge", "host", "widget", { jsonrpc: "2.0", id: 1, result: {} });
  assert.equal(again.method, null);
  assert.equal("duration_ms" in again, false);
  assert.equal(recorder.record("openai", "widget", "host", { type: "autosize", height: 3 }), null);
  assert.equal(recorder.record("bridge", "widget", "host", "not an object"), null);
  const standalone = createTrafficRecorder({ run: null });
  assert.equal("run" in standalone.record("bridge", "widget", "host", asked), false);
});

test("events: history is replayed to a late listener (whole, or the latest state), and a listener can leave", () => {
  const failures = [];
  const hub = createEventHub({ limit: 3, onListenerError: (type, error) => failures.push([type, error.message]) });
  for (const n of [1, 2, 3, 4]) hub.emit("log", { kind: "host", level: "info", message: `line ${n}` });
  hub.emit("size", { height: 100 });
  hub.emit("size", { height: 200 });
  const seen = [];
  const leave = hub.on("log", (entry) => seen.push(entry.message));
  hub.on("size", (entry) => seen.push(entry.height));
  assert.deepEqual(seen, ["line 2", "line 3", "line 4", 200]);
  leave();
  hub.emit("log", { kind: "host", level: "info", message: "line 5" });
  assert.deepEqual(seen, ["line 2", "line 3", "line 4", 200]);
  // A listener that throws is reported, and the others still hear the event.
  hub.on("csp", () => {
    throw new Error("a broken listener");
  });
  hub.on("csp", (event) => seen.push(event.directive));
  hub.emit("csp", { directive: "img-src", blockedURI: "" });
  assert.deepEqual(failures, [["csp", "a broken listener"]]);
  assert.deepEqual(seen, ["line 2", "line 3", "line 4", 200, "img-src"]);
  assert.throws(() => hub.on("nonsense", () => {}), new RegExp(`unknown event type nonsense; one of ${EVENT_TYPES.join(", ")}`));
});

test("a CSP report: a blocked script or style breaks the widget, an eval probe does not", () => {
  const script = judgeCspViolation({
    directive: "script-src-elem",
    blocked: "https://cdn.example.com/app.js",
    source: "http://127.0.0.1:5/widget",
    line: 4,
    sample: "",
    disposition: "enforce",
  });
  assert.deepEqual(script, {
    event: {
      directive: "script-src-elem",
      blockedURI: "https://cdn.example.com/app.js",
      sourceFile: "http://127.0.0.1:5/widget",
      line: 4,
      sample: "",
      disposition: "enforce",
    },
    level: "error",
    text: "CSP blocked https://cdn.example.com/app.js by script-src-elem (http://127.0.0.1:5/widget:4)",
    loadFailure: "the CSP blocked https://cdn.example.com/app.js (script-src-elem)",
  });
  const inline = judgeCspViolation({ directive: "style-src-attr", blocked: "", source: "", line: null, sample: "color:red" });
  assert.equal(inline.text, "CSP blocked an inline resource by style-src-attr");
  assert.equal(inline.loadFailure, "the CSP blocked an inline script or style (style-src-attr)");
  assert.equal(inline.event.disposition, "enforce");
  const image = judgeCspViolation({ directive: "img-src", blocked: "https://x.example/a.png", source: "", line: null, sample: "" });
  assert.equal(image.level, "error");
  assert.equal(image.loadFailure, null);
  const probe = judgeCspViolation({ directive: "script-src", blocked: "eval", source: "", line: null, sample: "" });
  assert.equal(probe.level, "info");
  assert.equal(probe.loadFailure, null);
  assert.equal(probe.text, "CSP blocked eval by script-src; fine if the widget only probes for it");
});

test("ui/download-file: an embedded resource is saved from its data under its URI's last name", () => {
  const blob = downloadOf({ type: "resource", resource: { uri: "file:///reports/q3.csv", mimeType: "text/csv", blob: Buffer.from("a,b\n1,2\n").toString("base64") } });
  assert.equal(blob.kind, "bytes");
  assert.equal(blob.name, "q3.csv");
  assert.equal(blob.type, "text/csv");
  assert.equal(new TextDecoder().decode(blob.bytes), "a,b\n1,2\n");
  const text = downloadOf({ type: "resource", resource: { uri: "ui://notes/", text: "héllo" } });
  assert.equal(text.name, "notes");
  assert.equal(text.type, "application/octet-stream");
  assert.deepEqual([...text.bytes], [...Buffer.from("héllo")]);
  assert.deepEqual(downloadOf({ type: "resource_link", uri: "https://example.com/x.pdf", name: "x.pdf" }), { kind: "link", href: "https://example.com/x.pdf", name: "x.pdf" });
  assert.equal(downloadOf({ type: "text", text: "not a file" }), null);
  assert.equal(downloadOf({ type: "resource_link", name: "no uri" }), null);
});
