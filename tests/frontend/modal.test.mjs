// window.openai.requestModal's arguments as the host reads them, and which view a message came from
// (host/modal.js): the logic under the modal, without a browser.
import assert from "node:assert/strict";
import { test } from "node:test";
import { HOST } from "./helpers.mjs";

const modal = await import(`${HOST}modal.js`);
const TEMPLATE = "ui://widget/board.html";

/** A host as far as these functions read it: its session's template, its frame, its modal. */
const hostWith = (extra = {}) => ({ session: { template: { uri: TEMPLATE } }, frame: null, modal: null, ...extra });

test("no template is the call's own, and the title falls back to the template", () => {
  assert.deepEqual(modal.modalRequest(hostWith(), {}), { template: TEMPLATE, params: null, title: TEMPLATE });
  const named = modal.modalRequest(hostWith(), { template: "ui://widget/detail.html", params: { item: 7 }, title: "Item" });
  assert.deepEqual(named, { template: "ui://widget/detail.html", params: { item: 7 }, title: "Item" });
});

test("a template that is not a ui:// URI, and params that are not an object, are refused in one line", () => {
  for (const template of ["https://example.com/x.html", "widget/x.html", 7]) {
    assert.throws(() => modal.modalRequest(hostWith(), { template }), /^Error: requestModal: template must be a ui:\/\/ resource URI, not /);
  }
  for (const params of [[1, 2], "text", 3]) {
    assert.throws(() => modal.modalRequest(hostWith(), { params }), /^Error: requestModal: params must be an object, not /);
  }
});

test("one modal at a time: not while one is open, nor from inside one", () => {
  assert.throws(() => modal.modalRequest(hostWith({ modal: {} }), {}), /a modal is already open \(one at a time\)/);
  assert.throws(() => modal.modalRequest(hostWith({ inModal: {} }), {}), /the modal is already open \(one at a time\)/);
});

test("a message goes to the view whose frame sent it, and nowhere for any other source", () => {
  const inlineWindow = {};
  const modalWindow = {};
  const view = hostWith({ frame: { contentWindow: modalWindow } });
  const host = hostWith({ frame: { contentWindow: inlineWindow }, modal: { view } });
  assert.equal(modal.viewFor(host, inlineWindow), host);
  assert.equal(modal.viewFor(host, modalWindow), view);
  assert.equal(modal.viewFor(host, {}), null);
  assert.equal(modal.viewFor(host, null), null);
  assert.equal(modal.viewFor(null, inlineWindow), null);
  // A closed modal's frame is gone: its window reaches nothing, and the inline view's still does.
  view.frame = null;
  assert.equal(modal.viewFor(host, modalWindow), null);
  assert.equal(modal.viewFor(hostWith({ frame: { contentWindow: inlineWindow } }), modalWindow), null);
});

test("the inline view and its modal are each other's other view", () => {
  const opener = hostWith();
  const view = hostWith();
  const open = { opener, view };
  opener.modal = open;
  view.inModal = open;
  assert.deepEqual(modal.otherViews(opener), [view]);
  assert.deepEqual(modal.otherViews(view), [opener]);
  assert.deepEqual(modal.otherViews(hostWith()), []);
});
