// The widget's size and display modes (host/sizing.js, host/modes.js), against the real profiles and
// devices the preview server serves at /api/profiles.
import assert from "node:assert/strict";
import { test } from "node:test";
import { HOST, python } from "./helpers.mjs";

const sizing = await import(`${HOST}sizing.js`);
const modes = await import(`${HOST}modes.js`);
const catalog = python("from appsdk_cli.host.profiles import profiles_json", "profiles_json()");

test("the tallest a view may be: the profile's inline bound (none: undefined), pip's cap, what the window gives fullscreen", () => {
  assert.equal(sizing.maxHeight("inline", 900, null), undefined);
  assert.equal(sizing.maxHeight("inline", 900, catalog.profiles.chatgpt.inlineContainer), undefined);
  assert.equal(sizing.maxHeight("inline", 900, catalog.profiles.claude.inlineContainer), undefined);
  assert.equal(sizing.maxHeight("inline", 900, { maxHeight: 600 }), 600);
  assert.equal(sizing.maxHeight("inline", 900, { height: 400 }), 400);
  assert.equal(sizing.maxHeight("pip", 900), 480);
  assert.equal(sizing.maxHeight("fullscreen", 900), 900);
  assert.equal(sizing.maxHeight("fullscreen", 120), 200);
});

test("ChatGPT's inline container: the column's width (at most 768, narrowed to a phone's), the height the view's", () => {
  const inline = catalog.profiles.chatgpt.inlineContainer;
  assert.deepEqual(inline, { maxWidth: 768 });
  const where = { mode: "inline", fullscreenHeight: 800, inlineContainer: inline };
  assert.deepEqual(sizing.containerDimensions({ ...where, width: 1024 }), { maxWidth: 768 });
  assert.deepEqual(sizing.containerDimensions({ ...where, width: 390 }), { maxWidth: 390 });
  // A frame not laid out yet (width 0) keeps the profile's.
  assert.deepEqual(sizing.containerDimensions({ ...where, width: 0 }), { maxWidth: 768 });
  assert.deepEqual(inline, { maxWidth: 768 }, "the profile's own object is not changed");
});

test("a flexible host gives only the width inline; pip and fullscreen are the same for every profile", () => {
  const generic = catalog.profiles["mcp-apps"];
  assert.equal(generic.inlineContainer, null);
  const where = { width: 700, fullscreenHeight: 760, inlineContainer: generic.inlineContainer };
  assert.deepEqual(sizing.containerDimensions({ ...where, mode: "inline" }), { width: 700 });
  assert.deepEqual(sizing.containerDimensions({ ...where, mode: "pip" }), { maxHeight: 480, width: 700 });
  assert.deepEqual(sizing.containerDimensions({ ...where, mode: "fullscreen" }), { height: 760, width: 700 });
});

test("what the view is told and what the frame does agree, in every profile", () => {
  for (const profile of Object.values(catalog.profiles)) {
    const told = sizing.containerDimensions({ mode: "inline", width: 700, fullscreenHeight: 800, inlineContainer: profile.inlineContainer });
    const frame = (reported) =>
      sizing.frameHeight({ mode: "inline", reported, source: "bridge", inlineContainer: profile.inlineContainer }).height;
    if (told.height !== undefined) {
      assert.equal(frame(120), told.height, `${profile.name}: a fixed container is that tall, whatever the view reports`);
      assert.equal(frame(1900), told.height, profile.name);
    } else if (told.maxHeight !== undefined) {
      assert.equal(frame(300), 300, `${profile.name}: a flexible container follows the view`);
      assert.equal(frame(told.maxHeight + 500), told.maxHeight, `${profile.name}: up to its maxHeight`);
    } else {
      assert.equal(frame(300), 300, `${profile.name}: an unbounded container follows the view`);
      assert.equal(frame(5000), 5000, profile.name);
    }
    assert.equal(frame(null), sizing.START_HEIGHT, `${profile.name}: the start before the view reports`);
  }
  // A flexible container with a cap, and a fixed one, from a profile that has one (none of the three does today).
  assert.equal(sizing.frameHeight({ mode: "inline", reported: 900, source: "bridge", inlineContainer: { maxHeight: 600 } }).height, 600);
  assert.equal(sizing.frameHeight({ mode: "inline", reported: 500, source: "bridge", inlineContainer: { maxHeight: 600 } }).height, 500);
  assert.deepEqual(sizing.frameHeight({ mode: "inline", reported: 900, source: "bridge", inlineContainer: { height: 400 } }), {
    height: 400,
    limit: 400,
    wanted: 900,
    runaway: false,
  });
});

test("the frame starts low, never under 40 px, and pip stops at its cap", () => {
  assert.deepEqual(sizing.frameHeight({ mode: "inline", reported: null, source: null }), {
    height: 150,
    limit: 8000,
    wanted: 150,
    runaway: false,
  });
  assert.equal(sizing.frameHeight({ mode: "inline", reported: 12, source: "measured" }).height, 40);
  assert.equal(sizing.frameHeight({ mode: "pip", reported: 2000, source: "bridge" }).height, 480);
});

test("an unbounded view grows to what it reports, up to the limit that stops a resize loop", () => {
  assert.deepEqual(sizing.frameHeight({ mode: "inline", reported: 1800, source: "bridge" }), {
    height: 1800,
    limit: 8000,
    wanted: 1800,
    runaway: false,
  });
  const loop = sizing.frameHeight({ mode: "inline", reported: 120000, source: "openai" });
  assert.deepEqual(loop, { height: 8000, limit: 8000, wanted: 120000, runaway: true });
  // Past a flexible profile's maxHeight the view scrolls inside: capped, not a runaway.
  assert.equal(sizing.frameHeight({ mode: "inline", reported: 2000, source: "bridge", inlineContainer: { maxHeight: 600 } }).runaway, false);
});

test("a height the widget reports itself wins over the bootstrap's measurement from then on", () => {
  assert.equal(sizing.acceptsHeight(300, "measured", null), true);
  assert.equal(sizing.acceptsHeight(300, "bridge", null), true);
  assert.equal(sizing.acceptsHeight(300, "measured", "bridge"), false);
  assert.equal(sizing.acceptsHeight(300, "openai", "bridge"), true);
  for (const junk of [Number.NaN, Infinity, "300", null, undefined]) assert.equal(sizing.acceptsHeight(junk, "bridge", null), false);
});

test("pip opens fullscreen on the devices that have no room for it", () => {
  const phones = Object.values(catalog.devices).filter((device) => device.pipBecomesFullscreen);
  assert.ok(phones.length > 0, "some device turns pip into fullscreen");
  for (const phone of phones) {
    assert.deepEqual(modes.modeOnDevice("pip", "ui/request-display-mode", phone), {
      mode: "fullscreen",
      why: `ui/request-display-mode; pip is fullscreen on ${phone.label.toLowerCase()}`,
    });
  }
  const desktop = catalog.devices.desktop;
  assert.deepEqual(modes.modeOnDevice("pip", undefined, desktop), { mode: "pip", why: undefined });
  assert.deepEqual(modes.modeOnDevice("fullscreen", "host", phones[0]), { mode: "fullscreen", why: "host" });
});

test("a view may not switch to a mode the host lacks, nor to one it did not declare", () => {
  const claude = catalog.profiles.claude;
  const chatgpt = catalog.profiles.chatgpt;
  for (const profile of [claude, chatgpt]) {
    for (const mode of modes.HOST_MODES) {
      const refusal = modes.bridgeModeRefusal(mode, { offered: profile.displayModes, declared: null, hostLabel: profile.label });
      if (profile.displayModes.includes(mode)) assert.equal(refusal, null);
      else assert.equal(refusal, `${profile.label} offers ${profile.displayModes.join(", ")}`);
    }
  }
  const declared = { offered: chatgpt.displayModes, declared: ["inline"], hostLabel: chatgpt.label };
  assert.equal(modes.bridgeModeRefusal("inline", declared), null);
  assert.equal(
    modes.bridgeModeRefusal("fullscreen", declared),
    "it declared only inline in appCapabilities.availableDisplayModes",
  );
  assert.equal(modes.isHostMode("pip"), true);
  assert.equal(modes.isHostMode("modal"), false);
});
