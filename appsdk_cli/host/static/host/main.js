// @ts-check
// appsdk preview: the host page. It plays a host (ChatGPT, the spec's generic MCP Apps host, or a
// Claude-like one: profiles.py, served at /api/profiles) for one tool call: shows the widget in a
// sandboxed frame on its own origin, answers window.openai calls (made through the bootstrap the preview
// server injects into the widget, over a MessageChannel of their own) and speaks the MCP Apps bridge
// (JSON-RPC over the window's postMessage, nothing else on it) to widgets that use it.
//
// The same page is the workbench's widget area: loaded as /host?run=ID&embed=1 in a same-origin frame,
// it shows only the widget, sends every /api/* request for that run, and its parent drives it through
// window.appsdkPreview (events with on(type, listener), and commands that return promises).
//
// This module wires the page; each concern is a module of its own beside it. A module script runs
// deferred, before DOMContentLoaded, so window.appsdkPreview exists by then (its commands wait for
// `ready`, which resolves once the first view and its bridge exist).

import { approve, cancelTool, reloadView, rerunAndReload, sendPartialInput, sendResult, showResult } from "./calls.js";
import { initialState } from "./context.js";
import { fillSelect, remember, setDevice, setDisplayMode, setLocale, setTheme, setTimeZone, syncControls, wireControls } from "./controls.js";
import { viewFor } from "./modal.js";
import { connectOpenai, setWidgetStateFromHost } from "./openai.js";
import { $, addLog, createPage, element, keepTraffic } from "./page.js";
import { closeWidget, detachedBridge, newTiming, problems } from "./view.js";

/** @typedef {import("./page.js").Host} Host */

const page = createPage(location);
/** @type {(host: Host) => void} */
let hostReady = () => {};
/** @type {Promise<Host>} */
const ready = new Promise((resolve) => (hostReady = resolve));

/**
 * Every command waits for the page to have its session, and answers with a promise.
 * @template {unknown[]} A
 * @template R
 * @param {(host: Host, ...args: A) => R} run
 * @returns {(...args: A) => Promise<Awaited<R>>}
 */
const command = (run) => (...args) => /** @type {Promise<Awaited<R>>} */ (ready.then((host) => run(host, ...args)));

/** @type {AppsdkPreviewApi} */
const preview = Object.assign(page.records, {
  ready: ready.then(() => undefined),
  problems: () => problems(page),
  on: page.events.on,
  setTheme: command((host, /** @type {string} */ theme) => setTheme(host, theme)),
  setLocale: command((host, /** @type {string} */ locale) => setLocale(host, locale)),
  setTimeZone: command((host, /** @type {string} */ timeZone) => setTimeZone(host, timeZone)),
  setDisplayMode: command((host, /** @type {string} */ mode) => setDisplayMode(host, mode, "host")),
  setDevice: command((host, /** @type {string} */ name) => setDevice(host, name)),
  getWidgetState: command((host) => host.state.widgetState ?? null),
  setWidgetState: command((host, /** @type {unknown} */ widgetState) => setWidgetStateFromHost(host, widgetState)),
  teardown: command((host) => closeWidget(host, "the host closed the widget")),
  cancel: command((host, /** @type {string | undefined} */ reason) => cancelTool(host, reason)),
  sendResult: command((host, /** @type {McpCallToolResult} */ result) => sendResult(host, result)),
  reloadTemplate: command((host) => reloadView(host)),
  approve: command((host) => approve(host)),
  sendPartialInput: command((host, /** @type {Record<string, unknown>} */ args) => sendPartialInput(host, args)),
  state: () => (page.host ? { ...page.host.state } : null),
});
window.appsdkPreview = preview;

window.addEventListener("message", (event) => {
  // Only a current view's frame (the inline one, or the open modal's), the sandbox proxy, from its
  // origin, and to that view's own channels; anything else is not our widget.
  const host = viewFor(page.host, event.source);
  if (!host || !host.frame || event.origin !== host.session.sandboxOrigin) return;
  const data = event.data;
  if (data && data.__appsdk && data.__appsdk.type === "view-replaced") {
    // Our proxy's answer to a re-render (view.js loadWidget): the old view is gone, and the proxy's
    // messages to this page keep their order, so all that follows is the new view's.
    if (host.swap && data.__appsdk.swap === host.swap) host.swap = null;
    return;
  }
  // Sent by the old view before the proxy replaced it: never the new view's (its bridge, port or load).
  if (host.swap) return;
  if (data && data.jsonrpc === "2.0" && data.method === "ui/notifications/sandbox-proxy-ready") {
    // The proxy's own channel: the document goes to it, never to the view's bridge or its traffic.
    host.proxyFrame = host.frame;
    if (host.resource && host.frame.contentWindow) {
      const message = { jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: host.resource };
      host.frame.contentWindow.postMessage(message, host.session.sandboxOrigin);
    }
  } else if (data && data.__appsdk && data.__appsdk.type === "view-loaded") {
    host.timing.loadedAt = performance.now();
  } else if (data && data.__appsdk && data.__appsdk.type === "connect" && event.ports[0]) {
    connectOpenai(host, event.ports[0]);
  } else if (data && data.jsonrpc === "2.0") {
    keepTraffic(page, page.recorder.record("bridge", "widget", "host", data));
    host.bridge.receive(data);
  }
});

async function main() {
  const [session, catalog] = await Promise.all([page.api("/api/session"), page.api("/api/profiles")]);
  /** @type {Host} */
  const host = {
    page,
    session,
    catalog,
    state: initialState(page.params, session, catalog),
    frame: null,
    openaiPort: null,
    resource: null,
    bridge: detachedBridge(),
    health: { read: new Set(), errors: [], loadFailures: [] },
    timing: newTiming(),
    loaded: false,
  };
  page.host = host;
  const { state } = host;
  if (page.screenshot) document.body.classList.add("screenshot");
  if (page.embed) document.body.classList.add("embed");
  fillSelect(
    element("profile", HTMLSelectElement),
    Object.values(catalog.profiles).map((p) => [p.name, p.label]),
  );
  fillSelect(
    element("device", HTMLSelectElement),
    Object.values(catalog.devices).map((d) => [d.name, d.label]),
  );
  syncControls(host);
  $("stage").classList.toggle("border", session.template.prefersBorder);
  $("tool-name").textContent = `${session.tool.name} on ${session.server}`;
  const request = document.createElement("code");
  request.textContent = `${session.tool.name}(${JSON.stringify(session.arguments)})`;
  $("request").append(request);
  $("status").textContent = session.invoked || "";
  showResult(session.result);
  $("csp").textContent = session.template.csp;
  for (const warning of session.warnings) addLog(page, "host", "warn", warning);
  if (state.widgetState !== null) page.events.emit("widget-state", { state: state.widgetState });
  wireControls(host, {
    reload: () => reloadView(host),
    rerun: () => rerunAndReload(host),
    approve: () => approve(host),
    deny: () => cancelTool(host, "the user declined"),
  });
  remember(host);
  // Commands wait for the view's bridge, which loadWidget makes after an await: resolved first, a
  // command sent while the page was starting (a workbench's result for a call in flight) found none.
  try {
    await reloadView(host);
  } finally {
    hostReady(host);
  }
}

main().catch((error) => {
  addLog(page, "host", "error", `the preview page failed to start: ${error instanceof Error ? error.message : error}`);
});
