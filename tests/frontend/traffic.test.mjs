// What traffic holds stays bounded: the panel's (workbench/static/traffic.js) oldest records go when it is
// past the records or bytes it may hold, and a host page's recorder (host/traffic.js) forgets the oldest
// requests that never got an answer.
import assert from "node:assert/strict";
import { test } from "node:test";
import { HOST, WORKBENCH } from "./helpers.mjs";

const { oldestToDrop, lowerBound } = await import(`${WORKBENCH}traffic.js`);
const { createTrafficRecorder, IN_FLIGHT_LIMIT } = await import(`${HOST}traffic.js`);

test("within both bounds nothing goes; past one, the oldest go down to nine tenths of both", () => {
  const bounds = { maxRecords: 10, maxBytes: 1000 };
  assert.equal(oldestToDrop(Array(10).fill(100), 1000, bounds), 0);
  assert.equal(oldestToDrop(Array(11).fill(1), 11, bounds), 2); // 11 records: down to 9
  assert.equal(oldestToDrop([600, 300, 200], 1100, bounds), 1); // 1,100 bytes: down to 500 ≤ 900
  assert.equal(oldestToDrop([100, 100, 850], 1050, bounds), 2); // the newest alone fits nine tenths
  assert.equal(oldestToDrop([100, 2000], 2100, bounds), 2); // one bigger than the bound goes too
});

test("many records past the bound drop in batches: O(1) work a record on average", () => {
  const bounds = { maxRecords: 1000, maxBytes: 1e9 };
  const sizes = [];
  let trims = 0;
  for (let n = 0; n < 100_000; n++) {
    sizes.push(1);
    const drop = oldestToDrop(sizes, sizes.length, bounds);
    if (drop) {
      trims += 1;
      sizes.splice(0, drop);
    }
    assert.ok(sizes.length <= 1000);
  }
  assert.ok(trims <= 100_000 / 100 + 1, `${trims} trims`);
});

test("lowerBound finds the first position at or past a value", () => {
  const sorted = [2, 4, 4, 9];
  assert.deepEqual([0, 2, 3, 4, 5, 9, 10].map((v) => lowerBound(sorted, v)), [0, 0, 1, 1, 3, 3, 4]);
  assert.equal(lowerBound([], 3), 0);
});

test("a widget that never answers cannot grow its recorder: the oldest waiting requests are forgotten", () => {
  let clock = 0;
  const recorder = createTrafficRecorder({ run: null, now: () => clock++, clock: () => "2026-12-01T00:00:00.000Z" });
  for (let id = 0; id < IN_FLIGHT_LIMIT * 3; id++) recorder.record("bridge", "widget", "host", { jsonrpc: "2.0", id, method: "tools/call" });
  assert.equal(recorder.waiting, IN_FLIGHT_LIMIT);
  const late = recorder.record("bridge", "host", "widget", { jsonrpc: "2.0", id: IN_FLIGHT_LIMIT * 3 - 1, result: {} });
  assert.equal(late?.method, "tools/call"); // the newest still pairs
  const forgotten = recorder.record("bridge", "host", "widget", { jsonrpc: "2.0", id: 0, result: {} });
  assert.equal(forgotten?.method, null);
  assert.equal(recorder.waiting, IN_FLIGHT_LIMIT - 1);
});
