// The workbench's pure parts: a run's status line, which run the page keeps when two race, which
// profiles a run's widget shows in, and a dev reload's banner (workbench/static/).
import assert from "node:assert/strict";
import { test } from "node:test";
import { WORKBENCH, python } from "./helpers.mjs";

const { statusText, isStale } = await import(`${WORKBENCH}runs.js`);
const { frameProfiles } = await import(`${WORKBENCH}frames.js`);
const { reloadText } = await import(`${WORKBENCH}reloads.js`);
const catalog = python("from appsdk_cli.host.profiles import profiles_json", "profiles_json()");
const profiles = Object.values(catalog.profiles).map((p) => ({ name: p.name, label: p.label }));

const run = { tool: "plan-trip", invoking: null, invoked: null, durationMs: 1234, result: { content: [] } };

test("a run's status line says what ChatGPT would, with its time once it ended", () => {
  assert.deepEqual(statusText({ ...run, status: "running", durationMs: null }), ["Calling plan-trip…", ""]);
  assert.deepEqual(statusText({ ...run, status: "running", invoking: "Planning the trip" }), ["Planning the trip", ""]);
  assert.deepEqual(statusText({ ...run, status: "done" }), ["Called plan-trip", "1.23 s"]);
  assert.deepEqual(statusText({ ...run, status: "done", invoked: "Trip planned" }), ["Trip planned", "1.23 s"]);
  assert.deepEqual(statusText({ ...run, status: "done", result: { content: [], isError: true } }), ["plan-trip returned an error", "1.23 s"]);
  assert.deepEqual(statusText({ ...run, status: "cancelled" }), ["Cancelled", "1.23 s"]);
  assert.deepEqual(statusText({ ...run, status: "invalid" }), ["Not sent: the arguments do not fit the tool", ""]);
  assert.deepEqual(statusText({ ...run, status: "failed", durationMs: 0 }), ["The call failed", "0.00 s"]);
});

test("of a POST's answer and a pushed event, the page keeps the newer version", () => {
  assert.equal(isStale({ version: 3 }, { version: 4 }), true);
  assert.equal(isStale({ version: 4 }, { version: 4 }), false);
  assert.equal(isStale({ version: 5 }, { version: 4 }), false);
  assert.equal(isStale({ version: 1 }, null), false);
  assert.equal(isStale({}, { version: 1 }), true);
});

test("a run shows in the chosen profile, or side by side in it and the next ones (three at most)", () => {
  assert.ok(profiles.length >= 3);
  assert.deepEqual(frameProfiles({ sideBySide: false, profile: "claude" }, profiles), ["claude"]);
  const side = frameProfiles({ sideBySide: true, profile: "claude" }, profiles);
  assert.equal(side[0], "claude");
  assert.equal(side.length, Math.min(3, profiles.length));
  assert.deepEqual([...new Set(side)], side);
  assert.deepEqual(side.slice(1), profiles.map((p) => p.name).filter((n) => n !== "claude").slice(0, 2));
});

test("a dev reload's banner names what changed, or says the app failed to import", () => {
  assert.equal(reloadText({ appOk: true, seconds: 0.4321, files: ["server.py"] }), "Reloaded in 0.43 s (server.py)");
  assert.equal(reloadText({ appOk: true }), "Reloaded");
  assert.equal(
    reloadText({ appOk: true, seconds: 1, files: ["a.py", "b.py", "c.py", "d.py"] }),
    "Reloaded in 1.00 s (a.py, b.py, c.py …)",
  );
  assert.equal(
    reloadText({ appOk: false, files: ["server.py"] }),
    "The app failed to import after saving server.py; the widgets keep the last good version (see the terminal).",
  );
});
