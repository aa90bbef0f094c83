// appsdk preview: the host page. It plays a host (ChatGPT, the spec's generic MCP Apps host, or a
// Claude-like one: profiles.py, served at /api/profiles) for one tool call: shows the widget in a
// sandboxed frame on its own origin, answers window.openai calls (made through the bootstrap the preview
// server injects into the widget, over a MessageChannel of their own) and speaks the MCP Apps bridge
// (JSON-RPC over the window's postMessage, nothing else on it) to widgets that use it.
//
// The same page is the workbench's widget area: loaded as /host?run=ID&embed=1 in a same-origin frame,
// it shows only the widget, sends every /api/* request for that run, and its parent drives it through
// window.appsdkPreview (events with on(type, listener), and commands that return promises).
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const RUN = params.get("run");
const EMBED = params.get("embed") === "1";
const SCREENSHOT = params.get("screenshot") === "1";
const HOST_MODES = ["inline", "pip", "fullscreen"];
// window.openai.maxHeight and the cap for heights the host measures itself (a 100vh page would otherwise
// grow without end); pip is a fixed-size overlay. A bridge view in inline mode is flexible: the host
// grows it to whatever it reports, up to a limit that only stops a runaway resize loop.
const MAX_HEIGHT = { inline: 640, pip: 480 };
const RUNAWAY_HEIGHT = 8000;
const TEARDOWN_WAIT_MS = 1500;
const PROTOCOL_VERSIONS = ["2026-01-26"];
const EVENT_TYPES = ["traffic", "log", "model", "widget-state", "csp", "display-mode", "size", "settled"];
// Kept whole for a listener that subscribes late (the workbench attaches after the frame loaded); the
// others are states, so only the latest is replayed.
const HISTORY_TYPES = new Set(["traffic", "log", "model", "csp"]);
const HISTORY_LIMIT = 5000;

let session;
let catalog; // /api/profiles: {profiles, devices, defaultProfile, defaultDevice}
let frame;
let state;
let bridge;
let openaiPort;
let timing;
let health;
let readyResolve;
const ready = new Promise((resolve) => (readyResolve = resolve));

// ---- the API for tests, `--screenshot` and the workbench ------------------------------------------

const listeners = new Map(EVENT_TYPES.map((type) => [type, new Set()]));
const eventHistory = new Map(EVENT_TYPES.map((type) => [type, []]));

function emit(type, detail) {
  const kept = eventHistory.get(type);
  if (HISTORY_TYPES.has(type)) {
    kept.push(detail);
    if (kept.length > HISTORY_LIMIT) kept.shift();
  } else {
    kept.splice(0, kept.length, detail);
  }
  for (const listener of listeners.get(type)) {
    try {
      listener(detail);
    } catch (error) {
      console.error(`appsdkPreview ${type} listener failed:`, error);
    }
  }
}

function command(run) {
  // Every command waits for the page to have its session, and answers with a promise.
  return (...args) => ready.then(() => run(...args));
}

const preview = (window.appsdkPreview = {
  settled: false,
  log: [],
  traffic: [],
  bridge: { initialized: false },
  ready,
  problems: () => problems(),
  // on(type, listener) → unsubscribe. Past traffic, log, model and csp events are replayed to a new
  // listener; of the other types, the latest one.
  on(type, listener) {
    if (!listeners.has(type)) throw new Error(`unknown event type ${type}; one of ${EVENT_TYPES.join(", ")}`);
    for (const past of eventHistory.get(type)) listener(past);
    listeners.get(type).add(listener);
    return () => listeners.get(type).delete(listener);
  },
  setTheme: command((theme) => setTheme(theme)),
  setLocale: command((locale) => setLocale(locale)),
  setTimeZone: command((timeZone) => setTimeZone(timeZone)),
  setDisplayMode: command((mode) => setDisplayMode(mode, "host")),
  setDevice: command((name) => setDevice(name)),
  getWidgetState: command(() => state.widgetState ?? null),
  setWidgetState: command((widgetState) => setWidgetStateFromHost(widgetState)),
  teardown: command(() => closeWidget("the host closed the widget")),
  cancel: command((reason) => cancelTool(reason)),
  sendResult: command((result) => sendResult(result)),
  reloadTemplate: command(() => loadWidget()),
  approve: command(() => approve()),
  sendPartialInput: command((args) => sendPartialInput(args)),
  state: () => (state ? { ...state } : null),
});

// ---- requests to the preview server --------------------------------------------------------------

function apiPath(path) {
  // Every /api/* request names the run this page shows (absent: the preview's single session).
  const url = new URL(path, location.href);
  if (RUN !== null) url.searchParams.set("run", RUN);
  return url.pathname + url.search;
}

async function api(path, body) {
  const init =
    body === undefined
      ? {}
      : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(apiPath(path), init);
  const answer = await response.json().catch(() => ({ error: { message: `HTTP ${response.status}` } }));
  if (!response.ok || answer.error) throw new Error((answer.error && answer.error.message) || `HTTP ${response.status}`);
  return answer;
}

function addLog(kind, level, message, link) {
  const entry = { kind, level, message };
  preview.log.push(entry);
  emit("log", entry);
  const item = document.createElement("li");
  item.dataset.kind = kind;
  item.dataset.level = level;
  const label = document.createElement("b");
  label.textContent = kind;
  item.append(label, message);
  if (link) {
    const anchor = document.createElement("a");
    anchor.href = link;
    anchor.target = "_blank";
    anchor.rel = "noopener noreferrer";
    anchor.textContent = " open";
    item.append(anchor);
  }
  $("log").append(item);
  // The terminal shows the same log; losing a line there is no reason to disturb the page.
  api("/api/log", entry).catch(() => {});
}

const short = (value) => {
  const text = JSON.stringify(value);
  return text && text.length > 300 ? text.slice(0, 300) + "…" : String(text);
};

// ---- traffic: every message between host and widget, as a trace record --------------------------

const requestsInFlight = new Map(); // `${channel}|${from}|${id}` → {method, at}

function classify(channel, message) {
  if (channel === "bridge") {
    if (message.method !== undefined) {
      return { kind: message.id === undefined ? "notification" : "request", method: message.method, id: message.id ?? null };
    }
    return { kind: "error" in message ? "error" : "response", method: null, id: message.id ?? null };
  }
  if (message.type === "request") return { kind: "request", method: message.method, id: message.id };
  if (message.type === "response") return { kind: message.error ? "error" : "response", method: null, id: message.id };
  if (message.type === "globals") return { kind: "notification", method: "openai:set_globals", id: null };
  if (message.type === "notify") return { kind: "notification", method: message.method, id: null };
  return null; // the bootstrap's own reports (log, csp, autosize, …) are not window.openai traffic
}

function recordTraffic(channel, from, to, message) {
  const shape = message && typeof message === "object" ? classify(channel, message) : null;
  if (!shape) return;
  const now = performance.now();
  const record = {
    time: new Date().toISOString(),
    channel,
    from,
    to,
    kind: shape.kind,
    method: shape.method,
    id: shape.id,
    size: new TextEncoder().encode(JSON.stringify(message) || "").length,
  };
  if (shape.kind === "request") {
    requestsInFlight.set(`${channel}|${from}|${shape.id}`, { method: shape.method, at: now });
  } else if (shape.kind === "response" || shape.kind === "error") {
    const key = `${channel}|${to}|${shape.id}`;
    const asked = requestsInFlight.get(key);
    if (asked) {
      requestsInFlight.delete(key);
      record.method = asked.method;
      record.duration_ms = Math.round((now - asked.at) * 10) / 10;
    }
  }
  if (RUN !== null) record.run = RUN;
  record.message = message;
  preview.traffic.push(record);
  if (preview.traffic.length > HISTORY_LIMIT) preview.traffic.shift();
  emit("traffic", record);
}

// ---- what went wrong inside the widget -------------------------------------------------------------

function dataProblem() {
  // Null once the widget took its data, through either API.
  if (bridge.initializeSeen && !bridge.initialized) {
    return (
      "the widget sent ui/initialize but never completed it (no ui/notifications/initialized):" +
      " it may have rejected the host's answer"
    );
  }
  if ((bridge.initialized && bridge.resultSent) || health.read.size > 0) return null;
  if (bridge.held) return null; // waiting for approval is not a fault of the widget
  return state.openai
    ? "the widget never read its data: it neither completed ui/initialize nor read window.openai.toolOutput/toolInput"
    : "the widget never completed ui/initialize, so it never got its data (window.openai was withheld)";
}

function problems() {
  if (!health) return ["the preview page never loaded the widget"];
  const missing = dataProblem();
  return [...new Set([...(missing ? [missing] : []), ...health.errors, ...health.loadFailures])];
}

function markSettled() {
  preview.settled = true;
  emit("settled", {});
}

// ---- the host being played ------------------------------------------------------------------------

const profile = () => catalog.profiles[state.profile];
const device = () => catalog.devices[state.device];
const modesOffered = () => profile().displayModes;

// ---- geometry ------------------------------------------------------------------------------------

function maxHeight() {
  // Fullscreen: what the frame gets of the window (the exit control's row is the host's).
  if (state.displayMode === "fullscreen") return Math.max(200, (frame && frame.clientHeight) || window.innerHeight);
  return MAX_HEIGHT[state.displayMode];
}

function containerDimensions() {
  const width = frame ? frame.clientWidth : profile().maxWidth;
  if (state.displayMode === "fullscreen") return { height: maxHeight(), width };
  if (state.displayMode === "pip") return { maxHeight: MAX_HEIGHT.pip, width };
  const inline = profile().inlineContainer;
  if (!inline) return { width }; // flexible height: the frame follows the view's size-changed
  // The profile's probed container (ChatGPT: 400 × at most 768), narrowed to a smaller device's column.
  const dimensions = { ...inline };
  if ("maxWidth" in dimensions) dimensions.maxWidth = Math.min(dimensions.maxWidth, width || dimensions.maxWidth);
  return dimensions;
}

function applyHeight() {
  if (!frame) return;
  if (state.displayMode === "fullscreen") {
    frame.style.height = "";
    emit("size", { height: frame.clientHeight });
    return;
  }
  // Start low: a widget measuring documentElement.scrollHeight would otherwise report the start height back.
  const wanted = state.reportedHeight || 150;
  const limit = state.displayMode === "inline" && state.heightSource === "bridge" ? RUNAWAY_HEIGHT : maxHeight();
  if (wanted > limit && state.heightSource === "bridge" && !state.runawayLogged) {
    state.runawayLogged = true;
    addLog("host", "warn", `the widget asked for ${wanted} px; the preview stops at ${limit} px (a resize loop?)`);
  }
  const height = Math.min(Math.max(wanted, 40), limit);
  frame.style.height = `${height}px`;
  emit("size", { height });
}

// source: "measured" (the bootstrap's own measurement), "openai" (notifyIntrinsicHeight) or "bridge"
// (ui/notifications/size-changed). A height the widget reports itself wins over the measurement from then on.
function setHeight(height, source) {
  if (typeof height !== "number" || !isFinite(height)) return;
  if (source === "measured" && state.heightSource) return;
  if (source !== "measured") state.heightSource = source;
  state.reportedHeight = Math.ceil(height);
  timing.changedAt = performance.now();
  applyHeight();
}

function styleVariables() {
  return profile().styles[state.theme];
}

function hostContext() {
  const chosen = device();
  return {
    // The tool exactly as tools/list gave it: the spec's toolInfo.tool is a complete MCP Tool.
    toolInfo: { tool: session.toolDefinition },
    theme: state.theme,
    styles: { variables: styleVariables() },
    displayMode: state.displayMode,
    availableDisplayModes: modesOffered(),
    containerDimensions: containerDimensions(),
    locale: state.locale,
    timeZone: state.timeZone,
    userAgent: profile().userAgent,
    platform: chosen.platform,
    deviceCapabilities: chosen.deviceCapabilities,
    safeAreaInsets: chosen.safeAreaInsets,
  };
}

function hostCapabilities() {
  const capabilities = JSON.parse(JSON.stringify(profile().hostCapabilities));
  const csp = session.template.declaredCsp;
  if (csp) capabilities.sandbox = { csp };
  return capabilities;
}

// ---- talking to the widget -----------------------------------------------------------------------

function toWidget(message) {
  // The bridge: JSON-RPC 2.0 on the window, as the spec's PostMessageTransport reads it.
  if (!frame || !frame.contentWindow) return;
  recordTraffic("bridge", "host", "widget", message);
  frame.contentWindow.postMessage(message, session.widgetOrigin);
}

function toOpenai(message) {
  if (!openaiPort) return;
  if (state.openai) recordTraffic("openai", "host", "widget", message);
  openaiPort.postMessage(message);
}

function hostRequest(method, p, waitMs) {
  // A request from the host to the view (ui/resource-teardown): resolves with the view's answer, or
  // with null when it gives none in time.
  const id = `appsdk-host-${++bridge.nextHostId}`;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      bridge.pending.delete(id);
      resolve(null);
    }, waitMs);
    bridge.pending.set(id, (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
    toWidget({ jsonrpc: "2.0", id, method, params: p });
  });
}

function contextChanged(changed) {
  if (bridge && bridge.initialized) {
    toWidget({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: changed });
  }
}

function setDisplayMode(mode, why) {
  if (!HOST_MODES.includes(mode)) throw new Error(`unknown display mode ${mode}; one of ${HOST_MODES.join(", ")}`);
  if (mode === "pip" && device().pipBecomesFullscreen) {
    // ChatGPT on a phone has no room for a floating widget: pip opens fullscreen there.
    why = `${why || "host"}; pip is fullscreen on ${device().label.toLowerCase()}`;
    mode = "fullscreen";
  }
  state.displayMode = mode;
  $("display-mode").value = mode;
  $("stage").dataset.mode = mode;
  $("exit-label").textContent = mode === "pip" ? "Exit picture-in-picture" : "Exit fullscreen";
  applyHeight();
  remember();
  addLog("host", "info", `display mode → ${mode}${why ? ` (${why})` : ""}`);
  emit("display-mode", { mode });
  toOpenai({ type: "globals", globals: { displayMode: mode, maxHeight: maxHeight() } });
  contextChanged({ displayMode: mode, containerDimensions: containerDimensions() });
  return { mode };
}

function requestDisplayModeFromBridge(p) {
  // MUST NOT switch to a mode the view did not declare (appCapabilities.availableDisplayModes), nor to one
  // the host does not offer; the answer is then the mode the view stays in.
  const declared = bridge.appModes;
  const offered = modesOffered();
  if (!offered.includes(p.mode) || (declared && !declared.includes(p.mode))) {
    const why = !offered.includes(p.mode)
      ? `${profile().label} offers ${offered.join(", ")}`
      : `it declared only ${declared.join(", ")} in appCapabilities.availableDisplayModes`;
    addLog("bridge", "warn", `ui/request-display-mode ${p.mode} refused: ${why}; staying ${state.displayMode}`);
    return { mode: state.displayMode };
  }
  return setDisplayMode(p.mode, "ui/request-display-mode");
}

function requestDisplayModeFromOpenai(p) {
  if (!modesOffered().includes(p.mode)) {
    addLog("openai", "warn", `requestDisplayMode ${p.mode}: ${profile().label} has no such mode`);
    return { mode: state.displayMode };
  }
  return setDisplayMode(p.mode, "requestDisplayMode");
}

function setTheme(theme) {
  if (!["light", "dark"].includes(theme)) throw new Error(`unknown theme ${theme}; light or dark`);
  state.theme = theme;
  document.body.dataset.theme = theme;
  $("theme").value = theme;
  remember();
  toOpenai({ type: "globals", globals: { theme } });
  contextChanged({ theme, styles: { variables: styleVariables() } });
  return { theme };
}

function setLocale(locale) {
  state.locale = String(locale || session.defaults.locale);
  $("locale").value = state.locale;
  remember();
  toOpenai({ type: "globals", globals: { locale: state.locale } });
  contextChanged({ locale: state.locale });
  return { locale: state.locale };
}

function setTimeZone(timeZone) {
  try {
    new Intl.DateTimeFormat("en", { timeZone });
  } catch {
    throw new Error(`unknown time zone ${timeZone} (an IANA name, such as Europe/Oslo)`);
  }
  state.timeZone = timeZone;
  $("time-zone").value = timeZone;
  remember();
  contextChanged({ timeZone });
  return { timeZone };
}

function applyDevice() {
  const chosen = device();
  document.body.dataset.device = chosen.name;
  $("device").value = chosen.name;
  $("conversation").style.setProperty("--device-width", `${chosen.viewport.width}px`);
  $("conversation").style.setProperty("--device-height", `${chosen.viewport.height}px`);
  const insets = chosen.safeAreaInsets;
  for (const side of ["top", "right", "bottom", "left"]) {
    $("stage").style.setProperty(`--safe-${side}`, `${insets[side]}px`);
  }
}

function setDevice(name) {
  if (!catalog.devices[name]) {
    throw new Error(`unknown device ${name}; one of ${Object.keys(catalog.devices).join(", ")}`);
  }
  state.device = name;
  applyDevice();
  remember();
  const chosen = device();
  addLog("host", "info", `device → ${name}`);
  toOpenai({ type: "globals", globals: { userAgent: chosen.openaiUserAgent, safeArea: { insets: chosen.safeAreaInsets } } });
  contextChanged({
    platform: chosen.platform,
    deviceCapabilities: chosen.deviceCapabilities,
    safeAreaInsets: chosen.safeAreaInsets,
    containerDimensions: containerDimensions(),
  });
  if (state.displayMode === "pip" && chosen.pipBecomesFullscreen) setDisplayMode("fullscreen", "device");
  return { device: name };
}

function model(kind, p) {
  // What the model would see: context updates and the messages a widget adds to the conversation.
  emit("model", { kind, params: p, time: new Date().toISOString() });
}

async function callTool(name, args, via) {
  addLog(via, "info", `callTool ${name} ${short(args)}`);
  try {
    const bridgeName = via === "openai" ? "openai" : "mcp-apps";
    const { result } = await api("/api/call", { name, arguments: args || {}, bridge: bridgeName });
    addLog(via, result.isError ? "warn" : "info", `${name} → ${short(result.structuredContent ?? result.content)}`);
    return result;
  } catch (error) {
    addLog(via, "error", `callTool ${name} refused: ${error.message}`);
    throw error;
  }
}

async function forward(method, p) {
  // resources/list and resources/templates/list, passed through to the server (serverResources).
  const { result } = await api("/api/forward", { method, params: p });
  addLog("bridge", "info", `${method} → ${short(result)}`);
  return result;
}

async function saveWidgetState(widgetState) {
  await api("/api/widget-state", { state: widgetState });
  state.widgetState = widgetState;
  emit("widget-state", { state: widgetState });
}

async function setWidgetStateFromWidget(widgetState) {
  await saveWidgetState(widgetState);
  addLog("openai", "info", `setWidgetState ${short(widgetState)}`);
  return {};
}

async function setWidgetStateFromHost(widgetState) {
  // An edit in the inspector: kept by the server like the widget's own, and pushed into the live widget.
  await saveWidgetState(widgetState);
  addLog("host", "info", `widget state set by the host: ${short(widgetState)}`);
  toOpenai({ type: "globals", globals: { widgetState } });
  return { state: widgetState };
}

// ---- files: window.openai's uploads, against the preview's file store -----------------------------

function base64Of(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error || new Error("the file could not be read"));
    reader.readAsDataURL(blob);
  });
}

async function storeFile(file) {
  if (!(file instanceof Blob)) throw new Error("uploadFile needs a File (or Blob)");
  const stored = await api("/api/files", {
    fileName: file.name || "file",
    mimeType: file.type || "",
    data: await base64Of(file),
  });
  addLog("openai", "info", `stored ${stored.fileName} (${stored.mimeType}, ${stored.size} bytes) as ${stored.fileId}`);
  return stored;
}

function pickFiles() {
  // The host's own file chooser, as ChatGPT opens one; the widget's click is the user activation it needs.
  const picker = $("file-picker");
  picker.value = "";
  return new Promise((resolve) => {
    const done = () => {
      picker.removeEventListener("change", done);
      picker.removeEventListener("cancel", done);
      resolve([...(picker.files || [])]);
    };
    picker.addEventListener("change", done);
    picker.addEventListener("cancel", done);
    picker.click();
  });
}

function downloadLocally(href, name) {
  const anchor = document.createElement("a");
  anchor.href = href;
  anchor.download = name;
  anchor.rel = "noopener";
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

function downloadFile(p) {
  // ui/download-file: embedded contents are saved from their data; a link is fetched by the browser.
  const names = [];
  for (const item of p.contents || []) {
    if (item.type === "resource" && item.resource) {
      const { uri, mimeType, text, blob } = item.resource;
      const bytes =
        typeof blob === "string" ? Uint8Array.from(atob(blob), (c) => c.charCodeAt(0)) : new TextEncoder().encode(text || "");
      const name = String(uri || "download").split(/[/:]/).filter(Boolean).pop() || "download";
      const url = URL.createObjectURL(new Blob([bytes], { type: mimeType || "application/octet-stream" }));
      downloadLocally(url, name);
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      names.push(`${name} (${bytes.length} bytes)`);
    } else if (item.type === "resource_link" && item.uri) {
      downloadLocally(item.uri, item.name || "");
      names.push(item.name || item.uri);
    }
  }
  addLog("bridge", "info", `ui/download-file: ${names.join(", ") || "nothing to download"}`);
  return {};
}

// window.openai requests, relayed by the bootstrap. Each returns the value the widget's promise resolves to.
const openaiMethods = {
  callTool: (p) => callTool(p.name, p.args, "openai"),
  setWidgetState: (p) => setWidgetStateFromWidget(p.state),
  sendFollowUpMessage: (p) => {
    addLog("openai", "info", `sendFollowUpMessage: ${p.prompt ?? short(p)}`);
    model("follow-up", p);
    return {};
  },
  openExternal: (p) => {
    addLog("openai", "info", `openExternal ${p.href}`, p.href);
    return {};
  },
  requestDisplayMode: (p) => requestDisplayModeFromOpenai(p),
  requestModal: (p) => {
    addLog("openai", "info", `requestModal ${short(p)}`);
    return {};
  },
  requestClose: () => {
    addLog("openai", "info", "requestClose");
    closeWidget("the widget asked to close (requestClose)");
    return {};
  },
  setOpenInAppUrl: (p) => {
    addLog("openai", "info", `setOpenInAppUrl ${p.href ?? short(p)}`);
    return {};
  },
  uploadFile: async (p) => ({ fileId: (await storeFile(p.file)).fileId }),
  // The shape of selectFiles' answer is not published; each chosen file as uploadFile's, plus its name and type.
  selectFiles: async () => {
    const chosen = await pickFiles();
    const stored = [];
    for (const file of chosen) stored.push(await storeFile(file));
    addLog("openai", "info", `selectFiles: ${stored.length} file(s) chosen`);
    return stored.map((s) => ({ fileId: s.fileId, fileName: s.fileName, mimeType: s.mimeType }));
  },
  getFileDownloadUrl: async (p) => {
    const { downloadUrl } = await api("/api/files/url", { fileId: p.fileId });
    addLog("openai", "info", `getFileDownloadUrl ${p.fileId}`);
    return { downloadUrl };
  },
};

function onCsp(message) {
  const where = message.source ? ` (${message.source}:${message.line})` : "";
  const directive = message.directive || "";
  emit("csp", {
    directive,
    blockedURI: message.blocked || "",
    sourceFile: message.source || "",
    line: message.line ?? null,
    sample: message.sample || "",
    disposition: message.disposition || "enforce",
  });
  if (message.blocked === "eval") {
    // Libraries probe for eval and fall back when it throws (zod does, in every SDK-built widget);
    // it breaks only a widget that needs eval, which ChatGPT's CSP refuses too.
    addLog("csp", "info", `CSP blocked eval by ${directive}${where}; fine if the widget only probes for it`);
    return;
  }
  addLog("csp", "error", `CSP blocked ${message.blocked || "an inline resource"} by ${directive}${where}`);
  if (/^(script|style)-src/.test(directive)) {
    health.loadFailures.push(`the CSP blocked ${message.blocked || "an inline script or style"} (${directive})`);
  }
}

async function onOpenai(message) {
  if (!message) return;
  if (state.openai) recordTraffic("openai", "widget", "host", message);
  if (message.type === "log") {
    addLog(message.kind, message.level, message.message);
    if (message.kind === "error") health.errors.push(message.message.split("\n")[0]);
  } else if (message.type === "load-failed") {
    const fatal = message.what.includes("script") || message.what === "stylesheet";
    addLog("error", fatal ? "error" : "warn", `${message.what} failed to load: ${message.url}`);
    if (fatal) health.loadFailures.push(`${message.what} failed to load: ${message.url}`);
  } else if (message.type === "csp") {
    onCsp(message);
  } else if (message.type === "read") {
    health.read.add(message.key);
    timing.changedAt = performance.now();
  } else if (message.type === "autosize") {
    setHeight(message.height, "measured");
  } else if (message.type === "key" && message.key === "Escape") {
    exitMode("Escape");
  } else if (message.type === "notify" && message.method === "notifyIntrinsicHeight") {
    setHeight(message.params.height, "openai");
  } else if (message.type === "request") {
    const method = openaiMethods[message.method];
    try {
      if (!method) throw new Error(`window.openai.${message.method} is not supported by appsdk preview`);
      const result = await method(message.params || {});
      toOpenai({ type: "response", id: message.id, result });
    } catch (error) {
      toOpenai({ type: "response", id: message.id, error: { message: error.message } });
    }
  }
}

// MCP Apps bridge requests: method → handler returning the JSON-RPC result.
const bridgeMethods = {
  "ui/initialize": (p) => {
    bridge.initializeSeen = true;
    const app = (p.appInfo && p.appInfo.name) || "widget";
    const modes = p.appCapabilities && p.appCapabilities.availableDisplayModes;
    bridge.appModes = Array.isArray(modes) ? modes : null;
    addLog("bridge", "info", `ui/initialize from ${app} (protocol ${p.protocolVersion})`);
    markDeclaredModes();
    return {
      protocolVersion: PROTOCOL_VERSIONS.includes(p.protocolVersion) ? p.protocolVersion : session.protocolVersion,
      hostInfo: profile().hostInfo,
      hostCapabilities: hostCapabilities(),
      hostContext: hostContext(),
    };
  },
  "tools/call": (p) => callTool(p.name, p.arguments, "bridge"),
  "resources/read": async (p) => (await api("/api/read", { uri: p.uri })).result,
  "resources/list": (p) => forward("resources/list", p),
  "resources/templates/list": (p) => forward("resources/templates/list", p),
  "ui/open-link": (p) => {
    addLog("bridge", "info", `ui/open-link ${p.url}`, p.url);
    return {};
  },
  "ui/message": (p) => {
    const text = (p.content || []).map((block) => block.text ?? short(block)).join(" ");
    addLog("bridge", "info", `ui/message (${p.role || "user"}): ${text}`);
    model("message", p);
    return {};
  },
  "ui/request-display-mode": (p) => requestDisplayModeFromBridge(p),
  "ui/update-model-context": (p) => {
    addLog("bridge", "info", `ui/update-model-context ${short(p)}`);
    model("update-model-context", p);
    return {};
  },
  "ui/download-file": (p) => {
    if (!profile().downloadFile) {
      const error = new Error(`${profile().label} has no hostCapabilities.downloadFile`);
      error.code = -32601;
      throw error;
    }
    return downloadFile(p);
  },
  ping: () => ({}),
};

function sendInput() {
  // tool-input exactly once per view, then the result it belongs to: at once, or (a call still in flight,
  // session.pending) when sendResult brings it, unless the call is cancelled first.
  bridge.inputSent = true;
  toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: session.arguments } });
  if (!session.pending && !bridge.cancelled) {
    toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: session.result });
    bridge.resultSent = true;
  }
  timing.changedAt = performance.now();
  preview.bridge.initialized = true;
}

function onBridgeNotification(message) {
  const p = message.params || {};
  if (message.method === "ui/notifications/initialized") {
    if (bridge.initialized) return; // tool-input goes exactly once per view
    bridge.initialized = true;
    if (bridge.held) {
      addLog("bridge", "info", "ui/notifications/initialized; tool-input held until the call is approved");
      return;
    }
    const then = session.pending ? "tool-input (the call is in flight: tool-result follows)" : "tool-input, tool-result";
    addLog("bridge", "info", `ui/notifications/initialized → ${then}`);
    sendInput();
  } else if (message.method === "ui/notifications/size-changed") {
    setHeight(p.height, "bridge");
  } else if (message.method === "ui/notifications/request-teardown") {
    addLog("bridge", "info", "ui/notifications/request-teardown: the widget asks to close");
    closeWidget("the widget asked to close (ui/notifications/request-teardown)");
  } else if (message.method === "notifications/message") {
    const level = ["error", "critical", "alert", "emergency"].includes(p.level)
      ? "error"
      : p.level === "warning"
        ? "warn"
        : "info";
    addLog("bridge", level, `log: ${typeof p.data === "string" ? p.data : short(p.data)}`);
  } else {
    addLog("bridge", "info", `${message.method} ${short(p)}`);
  }
}

async function onBridge(message) {
  recordTraffic("bridge", "widget", "host", message);
  if (message.method === undefined) {
    // An answer to a host request (ui/resource-teardown).
    const waiting = bridge.pending.get(message.id);
    if (waiting) {
      bridge.pending.delete(message.id);
      waiting(message);
    }
    return;
  }
  if (message.id === undefined) return onBridgeNotification(message);
  if (!bridge.initializeSeen && message.method !== "ui/initialize" && message.method !== "ping") {
    addLog("bridge", "warn", `${message.method} before ui/initialize`);
  }
  const handler = bridgeMethods[message.method];
  if (!handler) {
    addLog("bridge", "warn", `unsupported request ${message.method}`);
    toWidget({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
    return;
  }
  try {
    const result = await handler(message.params || {});
    toWidget({ jsonrpc: "2.0", id: message.id, result });
  } catch (error) {
    if (error.code === -32601) addLog("bridge", "warn", `${message.method} refused: ${error.message}`);
    toWidget({ jsonrpc: "2.0", id: message.id, error: { code: error.code || -32603, message: error.message } });
  }
}

window.addEventListener("message", (event) => {
  // Only the current frame, from the widget's origin; anything else is not our widget.
  if (!frame || event.source !== frame.contentWindow || event.origin !== session.widgetOrigin) return;
  const data = event.data;
  if (data && data.__appsdk && data.__appsdk.type === "connect" && event.ports[0]) {
    if (openaiPort) openaiPort.close();
    openaiPort = event.ports[0];
    openaiPort.onmessage = (portEvent) => onOpenai(portEvent.data);
  } else if (data && data.jsonrpc === "2.0") {
    onBridge(data);
  }
});

// ---- the lifecycle commands: approval, partial input, cancel, a new result ------------------------

function approve() {
  if (!bridge.held) throw new Error("nothing is waiting for approval");
  if (bridge.cancelled) throw new Error("the call was cancelled");
  bridge.held = false;
  $("approval-bar").hidden = true;
  addLog("host", "info", "the call was approved");
  toOpenai({
    type: "globals",
    globals: {
      toolInput: session.arguments,
      toolOutput: session.result.structuredContent ?? null,
      toolResponseMetadata: session.result._meta ?? null,
    },
  });
  if (bridge.initialized) {
    addLog("bridge", "info", "approved → tool-input, tool-result");
    sendInput();
  }
  timing.changedAt = performance.now();
  return { approved: true };
}

function sendPartialInput(args) {
  if (!bridge.initialized) throw new Error("the view has not completed ui/initialize yet");
  if (bridge.inputSent) throw new Error("tool-input was already sent: partial input stops once the complete input is sent");
  if (bridge.cancelled) throw new Error("the call was cancelled");
  toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-input-partial", params: { arguments: args || {} } });
  addLog("bridge", "info", `tool-input-partial ${short(args)}`);
  return {};
}

function cancelTool(reason) {
  bridge.cancelled = true;
  bridge.held = false;
  $("approval-bar").hidden = true;
  const p = reason ? { reason: String(reason) } : {};
  addLog("host", "info", `the call was cancelled${reason ? `: ${reason}` : ""}`);
  if (bridge.initialized) toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: p });
  return { cancelled: true, sent: bridge.initialized };
}

function showResult(result) {
  const text = (result.content || []).filter((b) => b.type === "text").map((b) => b.text);
  $("model-text").textContent = text.join("\n");
  $("result").textContent = JSON.stringify(result, null, 2);
}

function sendResult(result) {
  // A new result for the live view (a re-run keeping widget state): tool-result again, and window.openai's
  // toolOutput. tool-input is not repeated: it goes once per view.
  if (!result || typeof result !== "object") throw new Error("sendResult needs a CallToolResult object");
  session.result = result;
  session.pending = false;
  showResult(result);
  toOpenai({
    type: "globals",
    globals: { toolOutput: result.structuredContent ?? null, toolResponseMetadata: result._meta ?? null },
  });
  if (bridge.initialized && bridge.inputSent) {
    toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result });
    bridge.resultSent = true;
  }
  addLog("host", "info", `a new tool result for the widget: ${short(result.structuredContent ?? result.content)}`);
  return {};
}

// ---- the frame -----------------------------------------------------------------------------------

function remember() {
  // Reloading the page keeps the host's choices.
  const query = new URLSearchParams(location.search);
  query.set("profile", state.profile);
  query.set("device", state.device);
  query.set("theme", state.theme);
  query.set("displayMode", state.displayMode);
  query.set("openai", state.openai ? "1" : "0");
  query.set("locale", state.locale);
  query.set("tz", state.timeZone);
  query.set("cdn", state.cdn ? "1" : "0");
  query.set("approval", state.approval ? "1" : "0");
  history.replaceState(null, "", `?${query}`);
}

function markDeclaredModes() {
  const offered = modesOffered();
  for (const option of $("display-mode").options) {
    const undeclared = bridge && bridge.appModes && !bridge.appModes.includes(option.value);
    const unoffered = !offered.includes(option.value);
    option.disabled = (Boolean(undeclared) || unoffered) && option.value !== state.displayMode;
    option.title = unoffered
      ? `${profile().label} has no ${option.value} mode`
      : undeclared
        ? "the widget does not declare this display mode"
        : "";
  }
}

function exitMode(why) {
  if (!state || state.displayMode === "inline") return;
  setDisplayMode("inline", why);
}

async function teardownView() {
  // ui/resource-teardown is a request: the host waits for the view's answer before removing it.
  if (!frame || !bridge || !bridge.initialized) return null;
  const answer = await hostRequest("ui/resource-teardown", {}, TEARDOWN_WAIT_MS);
  addLog(
    "bridge",
    answer ? "info" : "warn",
    answer ? "ui/resource-teardown answered" : `ui/resource-teardown: no answer within ${TEARDOWN_WAIT_MS} ms`,
  );
  return answer;
}

function removeView(text, className) {
  // The frame goes (after its teardown was answered); a note takes its place, as #widget.
  const note = document.createElement("p");
  note.id = "widget";
  note.className = `status ${className}`;
  note.textContent = text;
  if (frame) frame.replaceWith(note);
  if (openaiPort) openaiPort.close();
  openaiPort = null;
  frame = null;
  $("approval-bar").hidden = true;
}

async function closeWidget(why) {
  if (!frame) return { answered: false, closed: false };
  const answer = await teardownView();
  removeView(EMBED ? `${why}.` : `${why}; “Re-run and reload” brings it back.`, "closed");
  markSettled();
  return { answered: Boolean(answer && !answer.error), closed: true };
}

async function loadWidget() {
  await teardownView();
  if (openaiPort) openaiPort.close();
  openaiPort = null;
  bridge = {
    initialized: false,
    initializeSeen: false,
    inputSent: false,
    resultSent: false,
    held: state.approval,
    cancelled: false,
    appModes: null,
    pending: new Map(),
    nextHostId: 0,
  };
  health = { read: new Set(), errors: [], loadFailures: [] };
  timing = { loadedAt: null, changedAt: performance.now() };
  preview.settled = false;
  preview.bridge.initialized = false;
  state.reportedHeight = null;
  state.heightSource = null;
  state.runawayLogged = false;
  markDeclaredModes();
  $("approval-bar").hidden = !state.approval;
  const old = $("widget");
  frame = document.createElement("iframe");
  frame.id = "widget";
  frame.title = `${session.tool.name} widget`;
  frame.setAttribute("sandbox", profile().sandbox);
  const query = new URLSearchParams({
    theme: state.theme,
    displayMode: state.displayMode,
    locale: state.locale,
    maxHeight: String(maxHeight()),
    openai: state.openai ? "1" : "0",
    profile: state.profile,
    device: state.device,
    cdn: state.cdn ? "1" : "0",
    approval: state.approval ? "1" : "0",
  });
  if (RUN !== null) query.set("run", RUN);
  frame.src = `${session.widgetOrigin}/widget?${query}`;
  frame.addEventListener("load", () => {
    timing.loadedAt = performance.now();
  });
  old.replaceWith(frame);
  applyHeight();
  watchSettled();
  return {};
}

async function rerunAndReload() {
  // The standalone page's "Re-run and reload": the view is torn down (its answer awaited), the tool is
  // called again, and a new view reads the template afresh and gets the new result.
  const button = $("reload");
  button.disabled = true;
  try {
    await teardownView();
    removeView(`running ${session.tool.name} again…`, "running");
    const { result } = await api("/api/rerun", {});
    session.result = result;
    showResult(result);
    addLog("host", "info", `${session.tool.name} ran again → ${short(result.structuredContent ?? result.content)}`);
  } catch (error) {
    addLog("host", "error", `re-running ${session.tool.name} failed: ${error.message}; reloading with the last result`);
  } finally {
    button.disabled = false;
  }
  await loadWidget();
}

function watchSettled() {
  // Settled: the document loaded, the widget took its data (the bridge delivered its tool result, or it
  // read window.openai's), and its size stayed put for a moment. A widget that never does is settled a
  // few seconds after load (and `problems()` says why), so a screenshot never hangs on it; a screenshot
  // waits longer, since it fails the widget then, and a busy CI machine may be slow to start one.
  const giveUpMs = SCREENSHOT ? 8000 : 3000;
  const started = frame;
  const check = () => {
    if (started !== frame) return;
    const now = performance.now();
    const loaded = timing.loadedAt !== null;
    const connected = (bridge.initialized && bridge.resultSent) || health.read.size > 0 || bridge.held;
    const quiet = now - timing.changedAt > 150;
    if ((loaded && connected && quiet) || (loaded && now - timing.loadedAt > giveUpMs)) {
      requestAnimationFrame(() => requestAnimationFrame(() => markSettled()));
      // A screenshot reports it with the other problems; the live page says it once, in the log.
      const missing = dataProblem();
      if (missing && !SCREENSHOT) addLog("host", "warn", `${missing} (${giveUpMs / 1000} s after it loaded)`);
      return;
    }
    setTimeout(check, 30);
  };
  check();
}

function fillSelect(select, entries) {
  select.replaceChildren(
    ...entries.map(([value, label]) => {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = label;
      return option;
    }),
  );
}

function wireControls() {
  const defaults = session.defaults;
  $("theme").addEventListener("change", (event) => setTheme(event.target.value));
  $("display-mode").addEventListener("change", (event) => setDisplayMode(event.target.value, "host"));
  $("device").addEventListener("change", (event) => setDevice(event.target.value));
  $("locale").addEventListener("change", (event) => setLocale(event.target.value || defaults.locale));
  $("time-zone").addEventListener("change", (event) => {
    try {
      setTimeZone(event.target.value);
    } catch (error) {
      addLog("host", "warn", error.message);
      event.target.value = state.timeZone;
    }
  });
  // What changes the frame itself (its sandbox, its CSP, its API) needs a new view.
  const reloadOn = (id, apply) =>
    $(id).addEventListener("change", (event) => {
      apply(event.target);
      remember();
      loadWidget();
    });
  reloadOn("api", (target) => (state.openai = target.value === "openai"));
  reloadOn("cdn", (target) => (state.cdn = target.checked));
  reloadOn("approval", (target) => (state.approval = target.checked));
  reloadOn("profile", (target) => {
    state.profile = target.value;
    state.openai = profile().openai && !defaults.bridge_only;
    state.cdn = profile().cdnAllowance.length > 0;
    if (!modesOffered().includes(state.displayMode)) state.displayMode = "inline";
    syncControls();
  });
  $("reload").addEventListener("click", () => rerunAndReload());
  $("approve").addEventListener("click", () => approve());
  $("deny").addEventListener("click", () => cancelTool("the user declined"));
  $("exit-mode").addEventListener("click", () => exitMode("exit control"));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !event.defaultPrevented) exitMode("Escape");
  });
  window.addEventListener("resize", () => {
    if (state.displayMode !== "fullscreen") return;
    toOpenai({ type: "globals", globals: { maxHeight: maxHeight() } });
    contextChanged({ containerDimensions: containerDimensions() });
  });
}

function syncControls() {
  document.body.dataset.theme = state.theme;
  document.body.dataset.profile = state.profile;
  $("profile").value = state.profile;
  $("theme").value = state.theme;
  $("display-mode").value = state.displayMode;
  $("stage").dataset.mode = state.displayMode;
  $("api").value = state.openai ? "openai" : "bridge";
  $("locale").value = state.locale;
  $("time-zone").value = state.timeZone;
  $("cdn").checked = state.cdn;
  $("cdn-toggle").hidden = profile().cdnAllowance.length === 0;
  $("approval").checked = state.approval;
  applyDevice();
}

function initialState() {
  const defaults = session.defaults;
  const name = catalog.profiles[params.get("profile")] ? params.get("profile") : defaults.profile || catalog.defaultProfile;
  const chosen = catalog.profiles[name] || catalog.profiles[catalog.defaultProfile];
  const deviceName = catalog.devices[params.get("device")] ? params.get("device") : defaults.device || catalog.defaultDevice;
  const validZone = (zone) => {
    try {
      return Boolean(zone) && Boolean(new Intl.DateTimeFormat("en", { timeZone: zone }));
    } catch {
      return false;
    }
  };
  const zone = params.get("tz") || defaults.time_zone;
  const mode = HOST_MODES.includes(params.get("displayMode"))
    ? params.get("displayMode")
    : HOST_MODES.includes(params.get("mode"))
      ? params.get("mode")
      : defaults.display_mode;
  return {
    profile: chosen.name,
    device: catalog.devices[deviceName] ? deviceName : catalog.defaultDevice,
    theme: ["light", "dark"].includes(params.get("theme")) ? params.get("theme") : defaults.theme,
    displayMode: chosen.displayModes.includes(mode) ? mode : "inline",
    openai: params.has("openai") ? params.get("openai") !== "0" : chosen.openai && !defaults.bridge_only,
    locale: params.get("locale") || defaults.locale,
    timeZone: validZone(zone) ? zone : Intl.DateTimeFormat().resolvedOptions().timeZone,
    cdn: params.has("cdn") ? params.get("cdn") !== "0" : chosen.cdnAllowance.length > 0,
    approval: params.get("approval") === "1",
    widgetState: session.widgetState ?? null,
    reportedHeight: null,
    heightSource: null,
  };
}

async function main() {
  [session, catalog] = await Promise.all([api("/api/session"), api("/api/profiles")]);
  state = initialState();
  if (SCREENSHOT) document.body.classList.add("screenshot");
  if (EMBED) document.body.classList.add("embed");
  fillSelect(
    $("profile"),
    Object.values(catalog.profiles).map((p) => [p.name, p.label]),
  );
  fillSelect(
    $("device"),
    Object.values(catalog.devices).map((d) => [d.name, d.label]),
  );
  syncControls();
  $("stage").classList.toggle("border", session.template.prefersBorder);
  $("tool-name").textContent = `${session.tool.name} on ${session.server}`;
  const request = document.createElement("code");
  request.textContent = `${session.tool.name}(${JSON.stringify(session.arguments)})`;
  $("request").append(request);
  $("status").textContent = session.invoked || "";
  showResult(session.result);
  $("csp").textContent = session.template.csp;
  for (const warning of session.warnings) addLog("host", "warn", warning);
  if (state.widgetState !== null) emit("widget-state", { state: state.widgetState });
  wireControls();
  remember();
  // Commands wait for the view's bridge, which loadWidget makes after an await: resolved first, a
  // command sent while the page was starting (a workbench's result for a call in flight) found none.
  try {
    await loadWidget();
  } finally {
    readyResolve();
  }
}

main().catch((error) => {
  addLog("host", "error", `the preview page failed to start: ${error.message}`);
});
