// appsdk preview: the host page. It plays ChatGPT's part for one tool call: shows the widget in a
// sandboxed frame on its own origin, answers window.openai calls (made through the bootstrap the
// preview server injects into the widget, over a MessageChannel of their own) and speaks the MCP Apps
// bridge (JSON-RPC over the window's postMessage, nothing else on it) to widgets that use it.
// Everything the widget does lands in the host log.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
// For tests and for `--screenshot`: whether the widget has finished rendering, what was logged, and
// what went wrong inside the widget (`problems()`: a dead widget must not pass for a rendered one).
const preview = (window.appsdkPreview = {
  settled: false,
  log: [],
  bridge: { initialized: false },
  problems: () => problems(),
});
const HOST_MODES = ["inline", "pip", "fullscreen"];
// window.openai.maxHeight and the cap for heights the host measures itself (a 100vh page would otherwise
// grow without end); pip is a fixed-size overlay. A bridge view in inline mode is flexible: the host
// grows it to whatever it reports, up to a limit that only stops a runaway resize loop.
const MAX_HEIGHT = { inline: 640, pip: 480 };
const RUNAWAY_HEIGHT = 8000;
const TEARDOWN_WAIT_MS = 1500;
const PROTOCOL_VERSIONS = ["2026-01-26"];

let session;
let frame;
let state;
let bridge;
let openaiPort;
let timing;
let health;

function addLog(kind, level, message, link) {
  const entry = { kind, level, message };
  preview.log.push(entry);
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
  fetch("/api/log", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(entry),
  }).catch(() => {});
}

const short = (value) => {
  const text = JSON.stringify(value);
  return text && text.length > 300 ? text.slice(0, 300) + "…" : String(text);
};

async function postJson(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({ error: { message: `HTTP ${response.status}` } }));
  if (!response.ok || answer.error) throw new Error((answer.error && answer.error.message) || `HTTP ${response.status}`);
  return answer;
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
  return state.openai
    ? "the widget never read its data: it neither completed ui/initialize nor read window.openai.toolOutput/toolInput"
    : "the widget never completed ui/initialize, so it never got its data (window.openai was withheld: --bridge-only)";
}

function problems() {
  if (!health) return ["the preview page never loaded the widget"];
  const missing = dataProblem();
  return [...new Set([...(missing ? [missing] : []), ...health.errors, ...health.loadFailures])];
}

// ---- geometry ------------------------------------------------------------------------------------

function maxHeight() {
  if (state.displayMode === "fullscreen") return Math.max(200, window.innerHeight);
  return MAX_HEIGHT[state.displayMode];
}

function containerDimensions() {
  const width = frame ? frame.clientWidth : 768;
  if (state.displayMode === "fullscreen") return { height: Math.max(200, window.innerHeight), width };
  if (state.displayMode === "pip") return { maxHeight: MAX_HEIGHT.pip, width };
  return { width }; // inline: flexible height, the frame follows the view's size-changed
}

function applyHeight() {
  if (!frame) return;
  if (state.displayMode === "fullscreen") {
    frame.style.height = "";
    return;
  }
  // Start low: a widget measuring documentElement.scrollHeight would otherwise report the start height back.
  const wanted = state.reportedHeight || 150;
  const limit = state.displayMode === "inline" && state.heightSource === "bridge" ? RUNAWAY_HEIGHT : maxHeight();
  if (wanted > limit && state.heightSource === "bridge" && !state.runawayLogged) {
    state.runawayLogged = true;
    addLog("host", "warn", `the widget asked for ${wanted} px; the preview stops at ${limit} px (a resize loop?)`);
  }
  frame.style.height = `${Math.min(Math.max(wanted, 40), limit)}px`;
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
  const dark = state.theme === "dark";
  return {
    "--color-background-primary": dark ? "#212121" : "#ffffff",
    "--color-background-secondary": dark ? "#2a2a2a" : "#f7f7f8",
    "--color-text-primary": dark ? "#ececec" : "#0d0d0d",
    "--color-text-secondary": dark ? "#a0a0a8" : "#6e6e80",
    "--color-border-primary": dark ? "#3a3a3a" : "#e5e5e5",
    "--font-sans": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    "--font-mono": "ui-monospace, monospace",
    "--border-radius-md": "8px",
  };
}

function hostContext() {
  return {
    // The tool exactly as tools/list gave it: the spec's toolInfo.tool is a complete MCP Tool.
    toolInfo: { tool: session.toolDefinition },
    theme: state.theme,
    styles: { variables: styleVariables() },
    displayMode: state.displayMode,
    availableDisplayModes: HOST_MODES,
    containerDimensions: containerDimensions(),
    locale: state.locale,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    userAgent: `appsdk-preview/${session.appsdkVersion}`,
    platform: "web",
    deviceCapabilities: { touch: false, hover: true },
    safeAreaInsets: { top: 0, right: 0, bottom: 0, left: 0 },
  };
}

function hostCapabilities() {
  const capabilities = {
    openLinks: {},
    serverTools: {},
    serverResources: {},
    logging: {},
    message: { text: {} },
    updateModelContext: { text: {} },
  };
  const csp = session.template.declaredCsp;
  if (csp) capabilities.sandbox = { csp };
  return capabilities;
}

// ---- talking to the widget -----------------------------------------------------------------------

function toWidget(message) {
  // The bridge: JSON-RPC 2.0 on the window, as the spec's PostMessageTransport reads it.
  if (frame && frame.contentWindow) frame.contentWindow.postMessage(message, session.widgetOrigin);
}

function toOpenai(message) {
  if (openaiPort) openaiPort.postMessage(message);
}

function hostRequest(method, params, waitMs) {
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
    toWidget({ jsonrpc: "2.0", id, method, params });
  });
}

function contextChanged(changed) {
  if (bridge.initialized) toWidget({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: changed });
}

function setDisplayMode(mode, why) {
  if (!HOST_MODES.includes(mode)) throw new Error(`unknown display mode ${mode}`);
  state.displayMode = mode;
  $("display-mode").value = mode;
  $("stage").dataset.mode = mode;
  applyHeight();
  remember();
  addLog("host", "info", `display mode → ${mode}${why ? ` (${why})` : ""}`);
  toOpenai({ type: "globals", globals: { displayMode: mode, maxHeight: maxHeight() } });
  contextChanged({ displayMode: mode, containerDimensions: containerDimensions() });
  return { mode };
}

function requestDisplayModeFromBridge(p) {
  // MUST NOT switch to a mode the view did not declare (appCapabilities.availableDisplayModes); the
  // answer is then the mode the view stays in.
  const declared = bridge.appModes;
  if (!HOST_MODES.includes(p.mode) || (declared && !declared.includes(p.mode))) {
    const why = HOST_MODES.includes(p.mode)
      ? `it declared only ${declared.join(", ")} in appCapabilities.availableDisplayModes`
      : "the host has no such mode";
    addLog("bridge", "warn", `ui/request-display-mode ${p.mode} refused: ${why}; staying ${state.displayMode}`);
    return { mode: state.displayMode };
  }
  return setDisplayMode(p.mode, "ui/request-display-mode");
}

function setTheme(theme) {
  state.theme = theme;
  document.body.dataset.theme = theme;
  $("theme").value = theme;
  remember();
  toOpenai({ type: "globals", globals: { theme } });
  contextChanged({ theme, styles: { variables: styleVariables() } });
}

function setLocale(locale) {
  state.locale = locale;
  remember();
  toOpenai({ type: "globals", globals: { locale } });
  contextChanged({ locale });
}

async function callTool(name, args, via) {
  addLog(via, "info", `callTool ${name} ${short(args)}`);
  try {
    const bridge = via === "openai" ? "openai" : "mcp-apps";
    const { result } = await postJson("/api/call", { name, arguments: args || {}, bridge });
    addLog(via, result.isError ? "warn" : "info", `${name} → ${short(result.structuredContent ?? result.content)}`);
    return result;
  } catch (error) {
    addLog(via, "error", `callTool ${name} refused: ${error.message}`);
    throw error;
  }
}

async function forward(method, p) {
  // resources/list and resources/templates/list, passed through to the server (serverResources).
  const { result } = await postJson("/api/forward", { method, params: p });
  addLog("bridge", "info", `${method} → ${short(result)}`);
  return result;
}

async function setWidgetState(widgetState) {
  await postJson("/api/widget-state", { state: widgetState });
  addLog("openai", "info", `setWidgetState ${short(widgetState)}`);
  return {};
}

// window.openai requests, relayed by the bootstrap. Each returns the value the widget's promise resolves to.
const openaiMethods = {
  callTool: (p) => callTool(p.name, p.args, "openai"),
  setWidgetState: (p) => setWidgetState(p.state),
  sendFollowUpMessage: (p) => {
    addLog("openai", "info", `sendFollowUpMessage: ${p.prompt ?? short(p)}`);
    return {};
  },
  openExternal: (p) => {
    addLog("openai", "info", `openExternal ${p.href}`, p.href);
    return {};
  },
  requestDisplayMode: (p) => setDisplayMode(p.mode, "requestDisplayMode"),
  requestModal: (p) => {
    addLog("openai", "info", `requestModal ${short(p)}`);
    return {};
  },
  requestClose: () => {
    addLog("openai", "info", "requestClose");
    return {};
  },
  setOpenInAppUrl: (p) => {
    addLog("openai", "info", `setOpenInAppUrl ${p.href ?? short(p)}`);
    return {};
  },
};

function onCsp(message) {
  const where = message.source ? ` (${message.source}:${message.line})` : "";
  const directive = message.directive || "";
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
    if (bridge.appModes) markDeclaredModes();
    return {
      protocolVersion: PROTOCOL_VERSIONS.includes(p.protocolVersion) ? p.protocolVersion : session.protocolVersion,
      hostInfo: { name: "appsdk-preview", version: session.appsdkVersion },
      hostCapabilities: hostCapabilities(),
      hostContext: hostContext(),
    };
  },
  "tools/call": (p) => callTool(p.name, p.arguments, "bridge"),
  "resources/read": async (p) => (await postJson("/api/read", { uri: p.uri })).result,
  "resources/list": (p) => forward("resources/list", p),
  "resources/templates/list": (p) => forward("resources/templates/list", p),
  "ui/open-link": (p) => {
    addLog("bridge", "info", `ui/open-link ${p.url}`, p.url);
    return {};
  },
  "ui/message": (p) => {
    const text = (p.content || []).map((block) => block.text ?? short(block)).join(" ");
    addLog("bridge", "info", `ui/message (${p.role || "user"}): ${text}`);
    return {};
  },
  "ui/request-display-mode": (p) => requestDisplayModeFromBridge(p),
  "ui/update-model-context": (p) => {
    addLog("bridge", "info", `ui/update-model-context ${short(p)}`);
    return {};
  },
  ping: () => ({}),
};

function onBridgeNotification(message) {
  const p = message.params || {};
  if (message.method === "ui/notifications/initialized") {
    if (bridge.initialized) return; // tool-input goes exactly once per view
    bridge.initialized = true;
    addLog("bridge", "info", "ui/notifications/initialized → tool-input, tool-result");
    toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: session.arguments } });
    toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: session.result });
    bridge.resultSent = true;
    timing.changedAt = performance.now();
    preview.bridge.initialized = true;
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
    toWidget({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: error.message } });
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

// ---- the frame -----------------------------------------------------------------------------------

function remember() {
  // Reloading the page keeps the host's choices.
  const query = new URLSearchParams(location.search);
  query.set("theme", state.theme);
  query.set("displayMode", state.displayMode);
  query.set("openai", state.openai ? "1" : "0");
  query.set("locale", state.locale);
  history.replaceState(null, "", `?${query}`);
}

function markDeclaredModes() {
  for (const option of $("display-mode").options) {
    const undeclared = bridge.appModes && !bridge.appModes.includes(option.value);
    option.disabled = Boolean(undeclared) && option.value !== state.displayMode;
    option.title = undeclared ? "the widget does not declare this display mode" : "";
  }
}

async function teardown() {
  // ui/resource-teardown is a request: the host waits for the view's answer before removing it.
  if (!frame || !bridge || !bridge.initialized) return;
  const answer = await hostRequest("ui/resource-teardown", {}, TEARDOWN_WAIT_MS);
  addLog(
    "bridge",
    answer ? "info" : "warn",
    answer ? "ui/resource-teardown answered" : `ui/resource-teardown: no answer within ${TEARDOWN_WAIT_MS} ms`,
  );
}

async function closeWidget(why) {
  await teardown();
  const note = document.createElement("p");
  note.id = "widget";
  note.className = "status closed";
  note.textContent = `${why}; “Reload widget” brings it back.`;
  frame.replaceWith(note);
  if (openaiPort) openaiPort.close();
  openaiPort = null;
  frame = null;
  preview.settled = true;
}

async function loadWidget() {
  await teardown();
  if (openaiPort) openaiPort.close();
  openaiPort = null;
  bridge = {
    initialized: false,
    initializeSeen: false,
    resultSent: false,
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
  for (const option of $("display-mode").options) option.disabled = false;
  const old = $("widget");
  frame = document.createElement("iframe");
  frame.id = "widget";
  frame.title = `${session.tool.name} widget`;
  frame.setAttribute("sandbox", session.sandbox);
  const query = new URLSearchParams({
    theme: state.theme,
    displayMode: state.displayMode,
    locale: state.locale,
    maxHeight: String(maxHeight()),
    openai: state.openai ? "1" : "0",
  });
  frame.src = `${session.widgetOrigin}/widget?${query}`;
  frame.addEventListener("load", () => {
    timing.loadedAt = performance.now();
  });
  old.replaceWith(frame);
  applyHeight();
  watchSettled();
}

function watchSettled() {
  // Settled: the document loaded, the widget took its data (the bridge delivered its tool result, or it
  // read window.openai's), and its size stayed put for a moment. A widget that never does is settled a
  // few seconds after load (and `problems()` says why), so a screenshot never hangs on it; a screenshot
  // waits longer, since it fails the widget then, and a busy CI machine may be slow to start one.
  const giveUpMs = params.get("screenshot") === "1" ? 8000 : 3000;
  const started = frame;
  const check = () => {
    if (started !== frame) return;
    const now = performance.now();
    const loaded = timing.loadedAt !== null;
    const connected = (bridge.initialized && bridge.resultSent) || health.read.size > 0;
    const quiet = now - timing.changedAt > 150;
    if ((loaded && connected && quiet) || (loaded && now - timing.loadedAt > giveUpMs)) {
      requestAnimationFrame(() => requestAnimationFrame(() => (preview.settled = true)));
      // A screenshot reports it with the other problems; the live page says it once, in the log.
      const missing = dataProblem();
      if (missing && params.get("screenshot") !== "1") addLog("host", "warn", `${missing} (${giveUpMs / 1000} s after it loaded)`);
      return;
    }
    setTimeout(check, 30);
  };
  check();
}

async function main() {
  session = await (await fetch("/api/session")).json();
  const defaults = session.defaults;
  state = {
    theme: ["light", "dark"].includes(params.get("theme")) ? params.get("theme") : defaults.theme,
    displayMode: HOST_MODES.includes(params.get("displayMode")) ? params.get("displayMode") : defaults.display_mode,
    openai: params.has("openai") ? params.get("openai") !== "0" : !defaults.bridge_only,
    locale: params.get("locale") || defaults.locale,
    reportedHeight: null,
    heightSource: null,
  };
  if (params.get("screenshot") === "1") document.body.classList.add("screenshot");
  document.body.dataset.theme = state.theme;
  $("theme").value = state.theme;
  $("display-mode").value = state.displayMode;
  $("stage").dataset.mode = state.displayMode;
  $("stage").classList.toggle("border", session.template.prefersBorder);
  $("api").value = state.openai ? "openai" : "bridge";
  $("locale").value = state.locale;
  $("tool-name").textContent = `${session.tool.name} on ${session.server}`;
  const request = document.createElement("code");
  request.textContent = `${session.tool.name}(${JSON.stringify(session.arguments)})`;
  $("request").append(request);
  $("status").textContent = session.invoked || "";
  const text = (session.result.content || []).filter((b) => b.type === "text").map((b) => b.text);
  $("model-text").textContent = text.join("\n");
  $("result").textContent = JSON.stringify(session.result, null, 2);
  $("csp").textContent = session.template.csp;
  for (const warning of session.warnings) addLog("host", "warn", warning);

  $("theme").addEventListener("change", (event) => setTheme(event.target.value));
  $("display-mode").addEventListener("change", (event) => setDisplayMode(event.target.value, "host"));
  $("api").addEventListener("change", (event) => {
    state.openai = event.target.value === "openai";
    remember();
    loadWidget();
  });
  $("locale").addEventListener("change", (event) => setLocale(event.target.value || defaults.locale));
  $("reload").addEventListener("click", () => loadWidget());
  window.addEventListener("resize", () => {
    if (state.displayMode !== "fullscreen") return;
    toOpenai({ type: "globals", globals: { maxHeight: maxHeight() } });
    contextChanged({ containerDimensions: containerDimensions() });
  });
  remember();
  await loadWidget();
}

main().catch((error) => {
  addLog("host", "error", `the preview page failed to start: ${error.message}`);
});
