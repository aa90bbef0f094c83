// The workbench form (workbench/static/form.js) against schemas a hostile server sends: however its
// $defs multiply, the form draws at most MAX_FIELDS fields and returns at once; an honest deep model
// still gets every field and its defaults. The DOM is a small stand-in: the form only builds elements.
import assert from "node:assert/strict";
import { test } from "node:test";
import { WORKBENCH } from "./helpers.mjs";

let created = 0;

class FakeElement {
  /** @param {string} tag */
  constructor(tag) {
    created += 1;
    this.tagName = tag.toUpperCase();
    /** @type {any[]} */
    this.children = [];
    /** @type {Record<string, string>} */
    this.attributes = {};
    /** @type {Record<string, string>} */
    this.dataset = {};
    this.className = "";
    this.textContent = "";
    this.value = "";
    this.checked = false;
    this.classList = { toggle() {}, add() {}, remove() {} };
  }
  /** @param {...any} nodes */
  append(...nodes) {
    this.children.push(...nodes);
  }
  /** @param {...any} nodes */
  replaceChildren(...nodes) {
    this.children = nodes;
  }
  /** @param {string} name @param {string} value */
  setAttribute(name, value) {
    this.attributes[name] = String(value);
  }
  /** @param {string} name */
  removeAttribute(name) {
    delete this.attributes[name];
  }
  addEventListener() {}
  remove() {}
  querySelector() {
    return null;
  }
  querySelectorAll() {
    return [];
  }
  /** @returns {string} all the text under this element */
  get text() {
    return [this.textContent, ...this.children.map((c) => (typeof c === "string" ? c : c.text))].join(" ");
  }
}

Object.assign(globalThis, { document: { createElement: (/** @type {string} */ tag) => new FakeElement(tag) } });
const { createForm, defaults, MAX_FIELDS } = await import(`${WORKBENCH}form.js`);

/** A tree of objects, `width` properties a level, `levels` deep, through one $def per level. */
function wide(levels = 8, width = 10) {
  /** @type {Record<string, any>} */
  const defs = {};
  for (let level = 0; level < levels; level++) {
    /** @type {Record<string, any>} */
    const properties = {};
    for (let k = 0; k < width; k++) properties[`p${k}`] = { $ref: `#/$defs/l${level + 1}` };
    defs[`l${level}`] = { type: "object", properties };
  }
  defs[`l${levels}`] = { type: "string", default: "x" };
  return { type: "object", properties: { root: { $ref: "#/$defs/l0" } }, $defs: defs };
}

/** 40 $defs, each an anyOf of two refs to the next. */
function bomb(levels = 40) {
  /** @type {Record<string, any>} */
  const defs = {};
  for (let i = 0; i < levels; i++) defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  defs[`d${levels}`] = { type: "string" };
  return { type: "object", properties: { q: { $ref: "#/$defs/d0" } }, required: ["q"], $defs: defs };
}

/** An honest pydantic model: Optional[Level] nested `levels` deep, a default at the bottom. */
function deep(levels = 6) {
  /** @type {Record<string, any>} */
  const defs = {};
  for (let level = 0; level < levels; level++) {
    defs[`Level${level}`] = {
      type: "object",
      properties: { next: { anyOf: [{ $ref: `#/$defs/Level${level + 1}` }, { type: "null" }] } },
    };
  }
  defs[`Level${levels}`] = { type: "object", properties: { leaf: { type: "string", default: "bottom" } } };
  return { type: "object", properties: { count: { type: "integer" }, tree: { $ref: "#/$defs/Level0" } }, required: ["count"], $defs: defs };
}

test("a schema naming one $def ten times a level draws at most MAX_FIELDS fields, at once", () => {
  created = 0;
  const started = Date.now();
  const form = createForm(wide());
  assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
  assert.ok(created < MAX_FIELDS * 20, `${created} elements`);
  assert.match(form.element.text, /Too many fields to draw: type this part as JSON/);
  assert.equal(typeof form.value(), "object");
});

test("the defaults of such a schema are read from at most MAX_FIELDS nodes", () => {
  const started = Date.now();
  const schema = wide(6); // 10^6 leaves, each with a default
  const value = /** @type {any} */ (defaults(schema, schema));
  assert.ok(Date.now() - started < 1000);
  assert.equal(value.root.p0.p0.p0.p0.p0.p0, "x"); // the first path is read in full
  assert.ok(JSON.stringify(value).split('"x"').length - 1 < MAX_FIELDS);
});

test("an anyOf bomb is one JSON box, not 2^40 branches", () => {
  const started = Date.now();
  const form = createForm(bomb());
  assert.ok(Date.now() - started < 1000);
  form.setValue({ q: "hi" });
  assert.deepEqual(form.value(), { q: "hi" });
});

test("an honest deep model still gets every field and the default at its bottom", () => {
  created = 0;
  const schema = deep();
  const form = createForm(schema);
  assert.ok(created < MAX_FIELDS, `${created} elements`);
  assert.doesNotMatch(form.element.text, /Too many fields/);
  assert.deepEqual(defaults(schema, schema), { tree: { next: { next: { next: { next: { next: { next: { leaf: "bottom" } } } } } } } });
  form.setValue({ count: 3, tree: { next: { next: null } } });
  assert.equal(form.value().count, 3);
});

// Issue 37 item 3: a server's catastrophic pattern matched against what the user types froze the page
// (RegExp backtracks). The page no longer runs a server's pattern; its help says the run checks it.
test("a server's catastrophic pattern does not run on what the user types", () => {
  const schema = { type: "object", properties: { s: { type: "string", pattern: "^(a|a)*$" } }, required: ["s"] };
  const form = createForm(schema);
  form.setValue({ s: `${"a".repeat(40)}b` });
  const started = Date.now();
  assert.deepEqual(form.validate(), []);
  assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
  assert.match(form.element.text, /Must match \^\(a\|a\)\*\$: checked when the tool runs, not as you type\./);
});
