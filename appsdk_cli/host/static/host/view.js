// @ts-check
// The view: the widget's frame on its own origin, the two channels to it (the MCP Apps bridge on the
// window, window.openai on the bootstrap's port), its size, and when it has settled.

import { createBridge } from "./bridge.js";
import * as sizing from "./sizing.js";
import { $, addLog, keepTraffic } from "./page.js";
import { hideTextOnly, showTextOnly } from "./textonly.js";

const TEARDOWN_WAIT_MS = 1500;
// Settled: the widget idle (it answered the host's last message, nothing pending) and its document
// unchanged this long. Short, since the bootstrap reports every change and all pending work.
const QUIET_MS = 50;
// A widget that never goes idle (an animation loop, a poll every few hundred ms) is settled as before the
// bootstrap reported its work: once this long after it took its data, when its size has stayed put.
const BUSY_CAP_MS = 1000;
const SIZE_QUIET_MS = 150;

/**
 * When the view changed, for "settled" (watchSettled). Times are the host page's performance.now().
 * @typedef {object} Timing
 * @property {number | null} loadedAt the view's document loaded
 * @property {number} changedAt the host's last change to the view, or the view's to its size or data read
 * @property {number | null} sentAt the host's last message to the view
 * @property {number | null} activityAt the bootstrap's last report of a change inside the view
 * @property {number} busy what the view has pending, as of that report (timers, fetches, images, fonts)
 */

/** @returns {Timing} */
export const newTiming = () => ({ loadedAt: null, changedAt: performance.now(), sentAt: null, activityAt: null, busy: 0 });

/** @typedef {import("./page.js").Host} Host */

/** @param {Host} host */
export const profileOf = (host) => host.catalog.profiles[host.state.profile];
/** @param {Host} host */
export const deviceOf = (host) => host.catalog.devices[host.state.device];

// ---- talking to the widget -----------------------------------------------------------------------

/**
 * The bridge: JSON-RPC 2.0 on the window, as the spec's PostMessageTransport reads it.
 * @param {Host} host
 * @param {import("./bridge.js").JsonRpcMessage} message
 */
export function toWidget(host, message) {
  const target = host.frame && host.frame.contentWindow;
  if (!target) return;
  keepTraffic(host.page, host.page.recorder.record("bridge", "host", "widget", message));
  host.timing.sentAt = performance.now();
  target.postMessage(message, host.session.sandboxOrigin);
}

// What the host changes for the whole widget (theme, locale, device, a new result) reaches its open modal
// too; these are the inline view's own (its place, and widget state, which each view's save shares).
const INLINE_ONLY = new Set(["displayMode", "maxHeight", "containerDimensions", "widgetState"]);

/**
 * @template {Record<string, unknown>} T
 * @param {T} values
 * @returns {Partial<T> | null} the values the open modal shares, or null if none
 */
function forModal(values) {
  const shared = Object.fromEntries(Object.entries(values).filter(([key]) => !INLINE_ONLY.has(key)));
  return Object.keys(shared).length > 0 ? /** @type {Partial<T>} */ (shared) : null;
}

/**
 * @param {Host} host
 * @param {AppsdkOpenaiToWidget} message
 */
export function toOpenai(host, message) {
  const shared = host.modal && message.type === "globals" ? forModal(message.globals) : null;
  if (host.modal && shared) toOpenai(host.modal.view, { type: "globals", globals: shared });
  if (!host.openaiPort) return;
  if (host.state.openai) keepTraffic(host.page, host.page.recorder.record("openai", "host", "widget", message));
  host.timing.sentAt = performance.now();
  host.openaiPort.postMessage(message);
}

/**
 * ui/notifications/host-context-changed, once the view is initialized.
 * @param {Host} host
 * @param {Partial<McpUiHostContext>} changed
 */
export function contextChanged(host, changed) {
  const shared = host.modal ? forModal(changed) : null;
  if (host.modal && shared) contextChanged(host.modal.view, shared);
  if (host.bridge.initialized) host.bridge.notify("ui/notifications/host-context-changed", changed);
  // ui/initialize was answered with the context before this change (a theme chosen as a new view starts):
  // the view hears it once it has initialized, as a host sends it nothing before.
  else if (host.bridge.initializeSeen) Object.assign(host.bridge.contextChanges, changed);
}

// ---- geometry ------------------------------------------------------------------------------------

/** @param {Host} host */
export function maxHeight(host) {
  const fullscreenHeight = (host.frame && host.frame.clientHeight) || window.innerHeight;
  return sizing.maxHeight(host.state.displayMode, fullscreenHeight, profileOf(host).inlineContainer);
}

/** @param {Host} host */
export function containerDimensions(host) {
  return sizing.containerDimensions({
    mode: host.state.displayMode,
    width: host.frame ? host.frame.clientWidth : profileOf(host).maxWidth,
    fullscreenHeight: (host.frame && host.frame.clientHeight) || window.innerHeight,
    inlineContainer: profileOf(host).inlineContainer,
  });
}

/** @param {Host} host */
export function applyHeight(host) {
  const { frame, state } = host;
  if (!frame) return;
  if (state.displayMode === "fullscreen") {
    frame.style.height = "";
    host.page.events.emit("size", { height: frame.clientHeight });
    return;
  }
  const profile = profileOf(host);
  const size = sizing.frameHeight({
    mode: state.displayMode,
    reported: state.reportedHeight,
    source: state.heightSource,
    inlineContainer: profile.inlineContainer,
  });
  if (size.runaway && !state.runawayLogged) {
    state.runawayLogged = true;
    addLog(host.page, "host", "warn", `the widget asked for ${size.wanted} px; the preview stops at ${size.limit} px (a resize loop?)`);
  }
  frame.style.height = `${size.height}px`;
  host.page.events.emit("size", { height: size.height });
}

/**
 * A height from the widget (see sizing.HeightSource).
 * @param {Host} host
 * @param {unknown} height
 * @param {import("./sizing.js").HeightSource} source
 */
export function setHeight(host, height, source) {
  if (!sizing.acceptsHeight(height, source, host.state.heightSource)) return;
  if (source !== "measured") host.state.heightSource = source;
  host.state.reportedHeight = Math.ceil(height);
  host.timing.changedAt = performance.now();
  applyHeight(host);
}

/**
 * The bootstrap's report: the view's document changed, or what it has pending did.
 * @param {Host} host
 * @param {number} busy
 */
export function noteActivity(host, busy) {
  host.timing.activityAt = performance.now();
  host.timing.busy = typeof busy === "number" ? busy : 0;
}

// ---- what went wrong inside the widget -------------------------------------------------------------

/**
 * Why the widget has no data yet, or null once it took it, through either API.
 * @param {Host} host
 */
export function dataProblem(host) {
  const { bridge, health } = host;
  if (bridge.initializeSeen && !bridge.initialized) {
    return (
      "the widget sent ui/initialize but never completed it (no ui/notifications/initialized):" +
      " it may have rejected the host's answer"
    );
  }
  if ((bridge.initialized && bridge.resultSent) || health.read.size > 0) return null;
  if (bridge.held) return null; // waiting for approval is not a fault of the widget
  if (host.state.noUi) return null; // a host without widgets shows none: nothing to take the data
  return host.state.openai
    ? "the widget never read its data: it neither completed ui/initialize nor read window.openai.toolOutput/toolInput"
    : "the widget never completed ui/initialize, so it never got its data (window.openai was withheld)";
}

/** @param {import("./page.js").Page} page */
export function problems(page) {
  const host = page.host;
  if (!host || !host.loaded) return ["the preview page never loaded the widget"];
  const missing = dataProblem(host);
  return [...new Set([...(missing ? [missing] : []), ...host.health.errors, ...host.health.loadFailures])];
}

/** @param {import("./page.js").Page} page */
export function markSettled(page) {
  page.records.settled = true;
  page.events.emit("settled", {});
}

/**
 * Settled: the document loaded, the widget took its data (the bridge delivered its tool result, or it
 * read window.openai's), it handled the host's last message, has nothing pending (timers, fetches,
 * images, fonts: the bootstrap counts them) and its document stayed unchanged for QUIET_MS. A widget
 * that stays busy is settled BUSY_CAP_MS after it took its data once its size stayed put; one that never
 * takes its data is settled a few seconds after load (and `problems()` says why), so a screenshot never
 * hangs on it; a screenshot waits longer, since it fails the widget then, and a busy CI machine may be
 * slow to start one.
 * @param {Host} host
 */
function watchSettled(host) {
  const giveUpMs = host.page.screenshot ? 8000 : 3000;
  // One view's watch: a re-render keeps the frame but gives the view new timing.
  const started = host.frame;
  const startedTiming = host.timing;
  /** @type {number | null} */
  let connectedAt = null;
  const check = () => {
    if (started !== host.frame || startedTiming !== host.timing) return;
    const { bridge, health, timing } = host;
    const now = performance.now();
    const loadedAt = timing.loadedAt;
    const connected = (bridge.initialized && bridge.resultSent) || health.read.size > 0 || bridge.held;
    if (connected && connectedAt === null) connectedAt = now;
    const { activityAt, sentAt } = timing;
    const answered = activityAt !== null && (sentAt === null || activityAt >= sentAt);
    const idle = answered && timing.busy === 0 && now - Math.max(activityAt, timing.changedAt) > QUIET_MS;
    const busyTooLong = connectedAt !== null && now - connectedAt > BUSY_CAP_MS && now - timing.changedAt > SIZE_QUIET_MS;
    if (loadedAt !== null && ((connected && (idle || busyTooLong)) || now - loadedAt > giveUpMs)) {
      requestAnimationFrame(() => requestAnimationFrame(() => markSettled(host.page)));
      // A screenshot reports it with the other problems; the live page says it once, in the log.
      const missing = dataProblem(host);
      if (missing && !host.page.screenshot) addLog(host.page, "host", "warn", `${missing} (${giveUpMs / 1000} s after it loaded)`);
      return;
    }
    setTimeout(check, 10);
  };
  check();
}

// ---- the frame's lifecycle -----------------------------------------------------------------------

/**
 * ui/resource-teardown is a request: the host waits for the view's answer before removing it.
 * @param {Host} host
 */
export async function teardownView(host) {
  if (!host.frame || !host.bridge.initialized) return null;
  const answer = await host.bridge.request("ui/resource-teardown", {}, TEARDOWN_WAIT_MS);
  addLog(
    host.page,
    "bridge",
    answer ? "info" : "warn",
    answer ? "ui/resource-teardown answered" : `ui/resource-teardown: no answer within ${TEARDOWN_WAIT_MS} ms`,
  );
  return answer;
}

/**
 * The frame goes (after its teardown was answered); a note takes its place, as #widget.
 * @param {Host} host
 * @param {string} text
 * @param {string} className
 */
export function removeView(host, text, className) {
  const note = document.createElement("p");
  note.id = "widget";
  note.className = `status ${className}`;
  note.textContent = text;
  $("widget").replaceWith(note);
  if (host.openaiPort) host.openaiPort.close();
  host.openaiPort = null;
  host.frame = null;
  $("approval-bar").hidden = true;
  if (host.modal) host.modal.close("its widget closed"); // a modal goes with the view that opened it
}

/**
 * @param {Host} host
 * @param {string} why
 */
export async function closeWidget(host, why) {
  if (!host.frame) return { answered: false, closed: false };
  const answer = await teardownView(host);
  removeView(host, host.page.embed ? `${why}.` : `${why}; “Re-run and reload” brings it back.`, "closed");
  markSettled(host.page);
  return { answered: Boolean(answer && !answer.error), closed: true };
}

/**
 * What /api/widget builds the view's document from: the host's state as it plays it now.
 * @param {Host} host
 */
export function documentQuery(host) {
  const { state, page } = host;
  const query = new URLSearchParams({
    theme: state.theme,
    displayMode: state.displayMode,
    locale: state.locale,
    openai: state.openai ? "1" : "0",
    profile: state.profile,
    device: state.device,
    cdn: state.cdn ? "1" : "0",
    permissions: state.permissions,
  });
  const tallest = maxHeight(host);
  if (tallest !== undefined) query.set("maxHeight", String(tallest));
  if (page.run !== null) query.set("run", page.run);
  return query;
}

/**
 * Whether the next view can go into the current frame's proxy instead of a new proxy frame: the proxy
 * said it was ready in this frame, and the frame still has the sandbox the profile asks for (a sandbox
 * attribute changes only with a navigation).
 * @param {Host} host
 */
function canSwapView(host) {
  const frame = host.frame;
  return Boolean(
    frame && frame.isConnected && host.proxyFrame === frame && frame.getAttribute("sandbox") === profileOf(host).sandbox,
  );
}

/**
 * A new view: a fresh document reads the template, with a fresh bridge endpoint and health; with the UI
 * withheld (state.noUi), the text a host without widgets shows instead (textonly.js). A re-render (the
 * page already shows a view of this call through a proxy that is ready) keeps that proxy frame and has it
 * replace only its view (sandbox-proxy.js, "replace-view"): the new view is still a fresh document on the
 * view origin under its own CSP, and does the whole bridge handshake again; what the old view still had
 * on the way is dropped (main.js, host.swap).
 * @param {Host} host
 * @param {{ bridge: (held: boolean) => import("./bridge.js").Bridge, modesChanged: () => void }} wiring
 */
export async function loadWidget(host, wiring) {
  const { state, page } = host;
  // The document is read while the old view answers its teardown: the two wait on different things.
  const rules = host.session.hostRules && host.session.hostRules[state.profile];
  const wantsDocument = !state.noUi && !(rules && rules.refuse);
  /** @type {Promise<{ html: string, csp: string, document: string, pending: boolean }> | null} */
  const fetched = wantsDocument ? page.api(`/api/widget?${documentQuery(host)}`) : null;
  if (fetched) fetched.catch(() => {}); // awaited below; a failure is reported there, not as unhandled
  if (host.modal) await host.modal.close("its widget reloaded"); // a modal goes with the view that opened it
  await teardownView(host);
  if (host.openaiPort) host.openaiPort.close();
  host.openaiPort = null;
  const swap = wantsDocument && canSwapView(host);
  // From here until the proxy says the old view is gone, anything from it is the old view's (main.js).
  host.swap = swap ? newSwapId() : null;
  host.bridge = wiring.bridge(state.approval);
  host.health = { read: new Set(), errors: [], loadFailures: [] };
  host.timing = newTiming();
  host.loaded = true;
  page.records.settled = false;
  page.records.bridge.initialized = false;
  state.reportedHeight = null;
  state.heightSource = null;
  state.runawayLogged = false;
  wiring.modesChanged();
  if (state.noUi) {
    // No frame at all, not even the page's empty placeholder: a host without widgets makes none.
    removeView(host, "", "withheld");
    return showTextOnly(host);
  }
  hideTextOnly();
  $("approval-bar").hidden = !state.approval;
  // A host that would show nothing for this widget (Claude, for a ui.domain it does not derive) shows nothing here.
  for (const warning of rules ? rules.warn : []) addLog(page, "host", "warn", `${profileOf(host).label}: ${warning}`);
  if (rules && rules.refuse) {
    const why = rules.refuse;
    addLog(page, "host", "error", why);
    host.health.errors.push(why);
    removeView(host, why, "closed");
    markSettled(page);
    return {};
  }
  const frame = swap && host.frame ? host.frame : document.createElement("iframe");
  const swapId = host.swap;
  host.frame = frame;
  if (!swap) {
    host.proxyFrame = null;
    frame.id = "widget";
    frame.title = `${host.session.tool.name} widget`;
    frame.setAttribute("sandbox", profileOf(host).sandbox);
  }
  // The document goes to the sandbox proxy once it says it is ready (resourceReady), or at once to the
  // proxy already there; the proxy frames the view's loader, served under the document's CSP by the token.
  const widgetDocument = await /** @type {Promise<{ html: string, csp: string, document: string, pending: boolean }>} */ (fetched);
  if (host.frame !== frame || host.swap !== swapId) return {}; // a newer load started while this one fetched its document
  host.documentPending = widgetDocument.pending;
  host.resource = {
    html: widgetDocument.html,
    sandbox: profileOf(host).sandbox,
    csp: host.session.template.declaredCsp || undefined,
  };
  if (swap && swapId && frame.contentWindow) {
    /** @type {AppsdkReplaceView} */
    const replace = { type: "replace-view", swap: swapId, document: widgetDocument.document, resource: host.resource };
    frame.contentWindow.postMessage({ __appsdk: replace }, host.session.sandboxOrigin);
  } else {
    frame.src = `${host.session.sandboxOrigin}/proxy?${new URLSearchParams({ document: widgetDocument.document })}`;
    $("widget").replaceWith(frame);
  }
  applyHeight(host);
  watchSettled(host);
  return {};
}

/** A re-render's id: random, so nothing the old view sends can pass for the proxy's "view-replaced". */
function newSwapId() {
  return typeof crypto.randomUUID === "function" ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
}

/** An endpoint that is not connected to any view (before the first one loads). @returns {import("./bridge.js").Bridge} */
export function detachedBridge() {
  return createBridge({ send: () => {}, handlers: {}, onNotification: () => {}, log: () => {} });
}
