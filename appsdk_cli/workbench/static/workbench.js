// @ts-check
// appsdk workbench: the page. Tools and a generated form on the left, the runs as a conversation in
// the middle (each widget is the preview's own host page, /host?run=ID&embed=1, one per profile), and
// the inspector on the right (traffic, what the model reads, widget state, CSP, host log).
// The server pushes run outcomes, tool lists, dev reloads and MCP traffic over /api/events (SSE).
//
// This module wires the page; each concern is a module of its own beside it (bench.js holds the state).

import { $, api, createBench, messageOf } from "./bench.js";
import { applyInspector, applyScheme, loadProfiles, onKey, wireControls, wireResizer } from "./controls.js";
import { applyWidgetState, readWidgetState } from "./frames.js";
import { createPanels } from "./panels.js";
import { onReload, onReloadNews, showAppState } from "./reloads.js";
import { showProgress, showRunSignIn, upsertRun } from "./runs.js";
import { loadSkills } from "./skills.js";
import { setTools, showSignInStep, wireSignIn } from "./tools.js";

/** @type {import("./bench.js").Bench} */
const bench = createBench({
  panels: createPanels({
    onApplyState: (runId, state) => applyWidgetState(bench, runId, state),
    onReadState: (runId) => readWidgetState(bench, runId),
  }),
  onKey: (event) => onKey(bench, event),
});
// For tests and scripts: the page's own state, read without scraping the DOM.
const exposed = {
  ready: false,
  reloads: 0,
  appOk: true,
  /** @type {"live" | "retrying" | "down"} whether the page follows the server (the connection banner) */
  connection: "retrying",
  stopped: false,
  /** @type {number | undefined} */
  lastReloadAt: undefined,
  runs: () => [...bench.runs.values()].map((r) => r.data),
  /** @param {string} id */
  frames: (id) => bench.runs.get(id)?.frames.map((f) => f.describe()) ?? [],
  page: bench,
};
window.appsdkWorkbench = exposed;

/** @param {AppsdkWorkbenchInfo} info */
function setInfo(info) {
  bench.info = info;
  const name = info.serverInfo && info.serverInfo.name ? `${info.serverInfo.name} · ${info.server}` : info.server;
  $("server-name").textContent = name;
  $("server-line").title = `${info.dev ? "appsdk dev: follows every save. " : ""}${info.server}`;
  const locale = /** @type {HTMLInputElement} */ ($("locale"));
  if (!locale.value) locale.placeholder = info.defaults.locale;
  bench.panels.setTrafficAvailable(info.traffic);
}

/**
 * The server's traffic records carry a sequence number: one heard twice (the hello's backlog and the
 * live push overlap by a moment, and a reconnect replays) is shown once.
 * @param {AppsdkTrafficRecord} record
 */
function serverTraffic(record) {
  if (typeof record.seq === "number") {
    if (record.seq <= bench.trafficSeq) return;
    bench.trafficSeq = record.seq;
  }
  bench.panels.traffic(record);
}

/** @type {{ connection: "live" | "retrying" | "down", problem: string | null }} what the dot shows */
const health = { connection: "retrying", problem: null };

/** The dot: green while the page follows a server whose app imports; red when either is not so. */
function paintDot() {
  const dot = $("connection-dot");
  const broken = health.connection === "live" && health.problem !== null;
  dot.className = `dot ${health.connection === "live" && !broken ? "live" : "down"}`;
  dot.title = broken
    ? `the app is broken: ${health.problem}`
    : { live: "connected: the page follows the server", retrying: "lost the workbench; reconnecting…", down: "the workbench stopped" }[health.connection];
}

/** @param {"live" | "retrying" | "down"} state */
function setConnection(state) {
  health.connection = state;
  paintDot();
  paintConnectionBanner();
}

/** Why the page is not following the server, in words: a red dot alone is easy to miss. */
function paintConnectionBanner() {
  const banner = $("connection-banner");
  exposed.connection = health.connection;
  exposed.stopped = stoppedByServer;
  if (health.connection === "live") {
    banner.hidden = true;
    return;
  }
  const who = bench.info && bench.info.dev ? "appsdk dev" : "The workbench";
  $("connection-text").textContent = stoppedByServer
    ? `${who} has stopped. Start it again and this page reconnects by itself.`
    : `Lost the connection to ${bench.info && bench.info.dev ? "appsdk dev" : "the workbench"}; reconnecting…`;
  banner.hidden = false;
}

// The server said it was stopping (its last event): the banner says so until a server answers again.
let stoppedByServer = false;
// How soon a page whose stream the browser gave up on asks again, in ms.
const RECONNECT_MS = 1000;

/**
 * The app's state under appsdk dev: a page opened while it is broken says so like one open when it broke.
 * @param {{ ok: boolean, problem?: string | null } | undefined} app
 * @param {AppsdkReloadEvent | null} [lastReload]
 */
function setApp(app, lastReload) {
  if (!app) return;
  health.problem = app.ok ? null : app.problem || "the app failed to import";
  exposed.appOk = app.ok;
  showAppState(app, lastReload);
  paintDot();
}

function connectEvents() {
  const source = new EventSource("/api/events");
  bench.events = source;
  /** @param {string} type @param {(data: any) => void} handle */
  const on = (type, handle) => source.addEventListener(type, (event) => handle(JSON.parse(/** @type {MessageEvent} */ (event).data)));
  on("hello", (hello) => {
    if (bench.info && bench.info.sandboxOrigin !== hello.info.sandboxOrigin) {
      // Another workbench on this port (dev started again): its runs, origins and tools are new, so the
      // page starts over as a fresh load of the same URL would.
      location.reload();
      return;
    }
    stoppedByServer = false;
    setInfo(hello.info);
    for (const run of hello.runs) upsertRun(bench, run);
    for (const record of hello.traffic || []) serverTraffic(record);
    setConnection("live");
    setApp(hello.info.app, /** @type {AppsdkReloadEvent | null} */ (hello.info.lastReload));
  });
  on("run", (run) => upsertRun(bench, run));
  on("tools", (listing) => {
    setTools(bench, listing, setInfo);
    loadSkills(); // a reload or a sign-in that changed the tools may have changed the skills too
  });
  on("reload", (event) => {
    onReload(bench, event, exposed);
    setApp(event.appOk ? { ok: true } : { ok: false, problem: event.problem }, event);
  });
  on("reload-news", (news) => onReloadNews(bench, news));
  on("app", (app) => setApp(app));
  on("progress", (note) => showProgress(bench, note));
  on("signin", (note) => {
    showSignInStep(note);
    showRunSignIn(bench, note);
  });
  on("traffic", serverTraffic);
  on("stopped", () => {
    stoppedByServer = true;
    setConnection("down");
  });
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) {
      // The browser gave up (an answer that was no stream): keep asking, the server may come back.
      source.close();
      setTimeout(connectEvents, RECONNECT_MS);
    }
    setConnection(stoppedByServer ? "down" : "retrying");
  });
}

async function main() {
  const { prefs } = bench;
  applyScheme(bench);
  applyInspector(bench);
  wireResizer(bench);
  try {
    setInfo(await api("/api/workbench"));
  } catch {
    /* the push channel's hello brings it too */
  }
  const defaults = bench.info ? bench.info.defaults : null;
  if (!prefs.profile) prefs.profile = (defaults && defaults.profile) || "chatgpt";
  if (!prefs.device) prefs.device = (defaults && defaults.device) || "desktop";
  wireControls(bench, setInfo);
  wireSignIn();
  await loadProfiles(bench);
  connectEvents();
  try {
    setTools(bench, await api("/api/tools"), setInfo);
  } catch (error) {
    setTools(bench, { tools: [], error: messageOf(error) }, setInfo);
  }
  await loadSkills();
  exposed.ready = true;
}

main();
