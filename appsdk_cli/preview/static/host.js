// appsdk preview: the host page. It plays ChatGPT's part for one tool call: shows the widget in a
// sandboxed frame on its own origin, answers window.openai calls (made through the bootstrap the
// preview server injects into the widget) and speaks the MCP Apps bridge (JSON-RPC over postMessage)
// to widgets that use it instead. Everything the widget does lands in the host log.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
// For tests and for `--screenshot`: whether the widget has finished rendering, and what was logged.
const preview = (window.appsdkPreview = { settled: false, log: [], bridge: { initialized: false } });
const MAX_HEIGHT = { inline: 640, pip: 480 };

let session;
let frame;
let state;
let bridge;
let timing;

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

// ---- geometry ------------------------------------------------------------------------------------

function maxHeight() {
  if (state.displayMode === "fullscreen") return Math.max(200, window.innerHeight);
  return MAX_HEIGHT[state.displayMode];
}

function applyHeight() {
  if (state.displayMode === "fullscreen") {
    frame.style.height = "";
    return;
  }
  // Start low: a widget measuring documentElement.scrollHeight would otherwise report the start height back.
  const wanted = state.reportedHeight || 150;
  frame.style.height = `${Math.min(Math.max(wanted, 40), maxHeight())}px`;
}

function setHeight(height, measured) {
  if (typeof height !== "number" || !isFinite(height)) return;
  // A height the widget reports itself wins over the bootstrap's measurement from then on.
  if (measured && state.widgetReportsHeight) return;
  if (!measured) state.widgetReportsHeight = true;
  state.reportedHeight = Math.ceil(height);
  timing.changedAt = performance.now();
  applyHeight();
}

function hostContext() {
  return {
    theme: state.theme,
    displayMode: state.displayMode,
    availableDisplayModes: ["inline", "pip", "fullscreen"],
    containerDimensions: { maxHeight: maxHeight(), width: frame.clientWidth },
    locale: state.locale,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: "web",
    userAgent: `appsdk-preview/${session.appsdkVersion}`,
    deviceCapabilities: { touch: false, hover: true },
    safeAreaInsets: { top: 0, right: 0, bottom: 0, left: 0 },
    toolInfo: { tool: { name: session.tool.name, title: session.tool.title, description: session.tool.description } },
    styles: {
      variables: {
        "--color-background-primary": state.theme === "dark" ? "#212121" : "#ffffff",
        "--color-text-primary": state.theme === "dark" ? "#ececec" : "#0d0d0d",
        "--font-sans": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
      },
    },
  };
}

// ---- talking to the widget -----------------------------------------------------------------------

function toWidget(message) {
  if (frame.contentWindow) frame.contentWindow.postMessage(message, session.widgetOrigin);
}

function setGlobals(globals) {
  // window.openai widgets hear openai:set_globals; bridge widgets hear host-context-changed.
  toWidget({ __appsdk: { type: "globals", globals } });
  if (bridge.initialized) {
    const changed = {};
    if ("theme" in globals) changed.theme = globals.theme;
    if ("displayMode" in globals) changed.displayMode = globals.displayMode;
    if ("maxHeight" in globals) changed.containerDimensions = { maxHeight: globals.maxHeight };
    if ("locale" in globals) changed.locale = globals.locale;
    toWidget({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: changed });
  }
}

function setDisplayMode(mode, why) {
  if (!["inline", "pip", "fullscreen"].includes(mode)) throw new Error(`unknown display mode ${mode}`);
  state.displayMode = mode;
  $("display-mode").value = mode;
  $("stage").dataset.mode = mode;
  applyHeight();
  remember();
  addLog("host", "info", `display mode → ${mode}${why ? ` (${why})` : ""}`);
  setGlobals({ displayMode: mode, maxHeight: maxHeight() });
  return { mode };
}

function setTheme(theme) {
  state.theme = theme;
  document.body.dataset.theme = theme;
  $("theme").value = theme;
  remember();
  setGlobals({ theme });
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

async function onOpenai(message) {
  if (message.type === "log") {
    addLog(message.kind, message.level, message.message);
  } else if (message.type === "csp") {
    const where = message.source ? ` (${message.source}:${message.line})` : "";
    addLog("csp", "error", `CSP blocked ${message.blocked || "an inline resource"} by ${message.directive}${where}`);
  } else if (message.type === "autosize") {
    setHeight(message.height, true);
  } else if (message.type === "notify" && message.method === "notifyIntrinsicHeight") {
    setHeight(message.params.height);
  } else if (message.type === "request") {
    const method = openaiMethods[message.method];
    try {
      if (!method) throw new Error(`window.openai.${message.method} is not supported by appsdk preview`);
      const result = await method(message.params || {});
      toWidget({ __appsdk: { type: "response", id: message.id, result } });
    } catch (error) {
      toWidget({ __appsdk: { type: "response", id: message.id, error: { message: error.message } } });
    }
  }
}

// MCP Apps bridge requests: method → handler returning the JSON-RPC result.
const bridgeMethods = {
  "ui/initialize": (p) => {
    bridge.initializeSeen = true;
    const app = (p && p.appInfo && p.appInfo.name) || "widget";
    addLog("bridge", "info", `ui/initialize from ${app} (protocol ${p && p.protocolVersion})`);
    return {
      protocolVersion: session.protocolVersion,
      hostInfo: { name: "appsdk-preview", version: session.appsdkVersion },
      hostCapabilities: {
        openLinks: {},
        serverTools: {},
        serverResources: {},
        logging: {},
        message: { text: {} },
        updateModelContext: { text: {} },
      },
      hostContext: hostContext(),
    };
  },
  "tools/call": (p) => callTool(p.name, p.arguments, "bridge"),
  "resources/read": async (p) => (await postJson("/api/read", { uri: p.uri })).result,
  "ui/open-link": (p) => {
    addLog("bridge", "info", `ui/open-link ${p.url}`, p.url);
    return {};
  },
  "ui/message": (p) => {
    const text = (p.content || []).map((block) => block.text ?? short(block)).join(" ");
    addLog("bridge", "info", `ui/message (${p.role || "user"}): ${text}`);
    return {};
  },
  "ui/request-display-mode": (p) => setDisplayMode(p.mode, "ui/request-display-mode"),
  "ui/update-model-context": (p) => {
    addLog("bridge", "info", `ui/update-model-context ${short(p)}`);
    return {};
  },
  ping: () => ({}),
};

function onBridgeNotification(message) {
  const p = message.params || {};
  if (message.method === "ui/notifications/initialized") {
    bridge.initialized = true;
    addLog("bridge", "info", "ui/notifications/initialized → tool-input, tool-result");
    toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: session.arguments } });
    toWidget({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: session.result });
    bridge.resultSent = true;
    timing.changedAt = performance.now();
    preview.bridge.initialized = true;
  } else if (message.method === "ui/notifications/size-changed") {
    setHeight(p.height);
  } else if (message.method === "notifications/message") {
    const level = p.level === "error" ? "error" : p.level === "warning" ? "warn" : "info";
    addLog("bridge", level, `log: ${typeof p.data === "string" ? p.data : short(p.data)}`);
  } else {
    addLog("bridge", "info", `${message.method} ${short(p)}`);
  }
}

async function onBridge(message) {
  if (message.method === undefined) return; // a response to a host request (e.g. ui/resource-teardown)
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
    toWidget({ jsonrpc: "2.0", id: message.id, error: { code: -32000, message: error.message } });
  }
}

window.addEventListener("message", (event) => {
  // Only the current frame, from the widget's origin; anything else is not our widget.
  if (!frame || event.source !== frame.contentWindow || event.origin !== session.widgetOrigin) return;
  const data = event.data;
  if (data && data.__appsdk) onOpenai(data.__appsdk);
  else if (data && data.jsonrpc === "2.0") onBridge(data);
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

function loadWidget() {
  bridge = { initialized: false, initializeSeen: false, resultSent: false };
  timing = { loadedAt: null, changedAt: performance.now() };
  preview.settled = false;
  preview.bridge.initialized = false;
  state.reportedHeight = null;
  state.widgetReportsHeight = false;
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
  // Settled: the document loaded, a bridge widget got its tool result, and the size stayed put for a
  // moment. A widget that never reports is settled 3 s after load, so a screenshot never hangs on it.
  const started = frame;
  const check = () => {
    if (started !== frame) return;
    const now = performance.now();
    const loaded = timing.loadedAt !== null;
    const waitingForBridge = !state.openai && !bridge.initializeSeen && loaded && now - timing.loadedAt < 400;
    const bridgePending = bridge.initializeSeen && !bridge.resultSent;
    const quiet = now - timing.changedAt > 100;
    if ((loaded && quiet && !waitingForBridge && !bridgePending) || (loaded && now - timing.loadedAt > 3000)) {
      requestAnimationFrame(() => requestAnimationFrame(() => (preview.settled = true)));
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
    displayMode: ["inline", "pip", "fullscreen"].includes(params.get("displayMode"))
      ? params.get("displayMode")
      : defaults.display_mode,
    openai: params.has("openai") ? params.get("openai") !== "0" : !defaults.bridge_only,
    locale: params.get("locale") || defaults.locale,
    reportedHeight: null,
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
  $("locale").addEventListener("change", (event) => {
    state.locale = event.target.value || defaults.locale;
    remember();
    setGlobals({ locale: state.locale });
  });
  $("reload").addEventListener("click", () => loadWidget());
  window.addEventListener("resize", () => {
    if (state.displayMode === "fullscreen") setGlobals({ maxHeight: maxHeight() });
  });
  remember();
  loadWidget();
}

main().catch((error) => {
  addLog("host", "error", `the preview page failed to start: ${error.message}`);
});
