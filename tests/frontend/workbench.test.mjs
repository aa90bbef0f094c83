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
  // A call that went well and a widget that threw: the run says both.
  assert.deepEqual(statusText({ ...run, status: "done", invoked: "Trip planned", widgetError: "Uncaught Error: boom" }), [
    "Trip planned; its widget threw",
    "1.23 s",
  ]);
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

const { crashLines, progressText } = await import(`${WORKBENCH}runs.js`);
const { brokenText } = await import(`${WORKBENCH}reloads.js`);
const { shortOffset, formatDuration, methodParts } = await import(`${WORKBENCH}traffic.js`);

const crash = {
  type: "KeyError",
  message: "'never'",
  file: "server.py",
  line: 120,
  function: "picks_for",
  frames: [
    { file: "server.py", line: 109, function: "list_books", code: 'picks_for(month or "never")' },
    { file: "server.py", line: 120, function: "picks_for", code: 'return {"june": PICKS}[month.lower()]' },
  ],
};

test("an isError result is a failed call, never the tool's invoked text", () => {
  const failed = { ...run, status: "done", invoked: "Here are the picks", result: { content: [], isError: true } };
  assert.deepEqual(statusText(failed), ["plan-trip returned an error", "1.23 s"]);
  assert.deepEqual(statusText({ ...failed, crash }), ["plan-trip raised KeyError", "1.23 s"]);
});

test("a crash reads as the exception, then the user's frames as file:line in function, innermost last", () => {
  assert.deepEqual(crashLines(crash), {
    summary: "KeyError: 'never'",
    frames: [
      { where: "server.py:109 in list_books", code: 'picks_for(month or "never")' },
      { where: "server.py:120 in picks_for", code: 'return {"june": PICKS}[month.lower()]' },
    ],
  });
  // No frames of the user's own (the exception came from a library): still where it was raised, if known.
  assert.deepEqual(crashLines({ type: "RuntimeError", message: "", file: "app.py", line: 3, function: null, frames: [] }), {
    summary: "RuntimeError",
    frames: [{ where: "app.py:3", code: "" }],
  });
});

test("progress and log notifications of a call in flight read as one short line each", () => {
  const progress = (params) => progressText({ method: "notifications/progress", params });
  assert.equal(progress({ progress: 1, total: 3, message: "step 1 of 3" }), "1/3 · step 1 of 3");
  assert.equal(progress({ progress: 0.5 }), "0.5");
  assert.equal(progressText({ method: "notifications/message", params: { level: "info", data: "counted 1" } }), "info: counted 1");
  assert.equal(progressText({ method: "notifications/message", params: { level: "warning", data: { n: 1 } } }), 'warning: {"n":1}');
  assert.equal(progressText({ method: "notifications/cancelled", params: {} }), "");
});

test("a broken app's banner says why, after which save or since dev started", () => {
  assert.equal(
    brokenText("server.py:3: SyntaxError: invalid syntax", ["server.py"]),
    "The app failed to import after saving server.py (server.py:3: SyntaxError: invalid syntax); the widgets keep the last good version (see the terminal).",
  );
  assert.equal(brokenText("boom"), "The app failed to import (boom); save a fix and the page follows (see the terminal).");
  assert.equal(reloadText({ appOk: false, files: ["a.py"], problem: "boom" }), brokenText("boom", ["a.py"]));
});

test("the traffic panel's times and durations are six characters at most, as precise as that allows", () => {
  const cases = [
    [0, "0.000"],
    [1234, "1.234"],
    [9999.4, "9.999"],
    [12345, "12.35"],
    [59994, "59.99"],
    [59996, "1:00.0"],
    [95250, "1:35.3"],
    [599940, "9:59.9"],
    [599960, "9:59"],
    [600000, "10:00"],
    [754000, "12:34"],
    [3600000, "1h00"],
    [3723000, "1h02"],
  ];
  for (const [ms, text] of cases) assert.equal(shortOffset(ms), text, `${ms} ms`);
  for (const ms of [0, 1, 999, 9999, 59999, 599999, 3599999, 35999999]) assert.ok(shortOffset(ms).length <= 6, shortOffset(ms));
  const durations = [
    [0.5, "<1 ms"],
    [12.4, "12 ms"],
    [999.4, "999 ms"],
    [999.6, "1.00 s"],
    [1234, "1.23 s"],
    [12345, "12.3 s"],
    [123456, "123 s"],
  ];
  for (const [ms, text] of durations) assert.equal(formatDuration(ms), text, `${ms} ms`);
  assert.equal(formatDuration(undefined), "");
});

test("a notification's method splits off the prefix every notification shares", () => {
  assert.deepEqual(methodParts("ui/notifications/tool-input"), ["ui/notifications/", "tool-input"]);
  assert.deepEqual(methodParts("notifications/progress"), ["notifications/", "progress"]);
  assert.deepEqual(methodParts("tools/call"), ["", "tools/call"]);
  assert.deepEqual(methodParts("ui/initialize"), ["", "ui/initialize"]);
  assert.deepEqual(methodParts("notifications/"), ["", "notifications/"]);
});
