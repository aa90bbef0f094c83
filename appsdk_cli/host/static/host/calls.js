// @ts-check
// The tool call the view belongs to, and the host's answers on the MCP Apps bridge: ui/initialize,
// tool-input exactly once per view then its result, approval, partial input, cancellation, a new
// result, and the requests a view makes (tools/call, resources/*, ui/*).

import { BridgeError, createBridge, logLevelOf, METHOD_NOT_FOUND, negotiateVersion } from "./bridge.js";
import { hostCapabilities, hostContext, permissionFor, toolResponseMetadata } from "./context.js";
import { markDeclaredModes, requestDisplayModeFromBridge } from "./controls.js";
import { downloadAll } from "./files.js";
import { $, addLog, keepTraffic, short } from "./page.js";
import {
  closeWidget,
  containerDimensions,
  deviceOf,
  loadWidget,
  profileOf,
  removeView,
  setHeight,
  teardownView,
  toOpenai,
  toWidget,
} from "./view.js";

/** @typedef {import("./page.js").Host} Host */

// tool-input-partial asked for before the view initialized: the newest this many wait for it.
const PARTIAL_INPUTS_KEPT = 50;

/**
 * What the model would see: context updates and the messages a widget adds to the conversation.
 * @param {Host} host
 * @param {string} kind
 * @param {unknown} params
 */
export function model(host, kind, params) {
  host.page.events.emit("model", { kind, params, time: new Date().toISOString() });
}

/**
 * A tools/call from the view, or window.openai.callTool, through the preview server.
 * @param {Host} host
 * @param {string} name
 * @param {unknown} args
 * @param {"bridge" | "openai"} via
 * @returns {Promise<McpCallToolResult>}
 */
export async function callTool(host, name, args, via) {
  addLog(host.page, via, "info", `callTool ${name} ${short(args)}`);
  try {
    const bridgeName = via === "openai" ? "openai" : "mcp-apps";
    const body = { name, arguments: args || {}, bridge: bridgeName, permissions: host.state.permissions };
    let answer = await host.page.api("/api/call", body);
    // The permission mode asks first: the server holds the call, and the widget's promise waits for the user.
    if (answer.held) answer = await decideHeldCall(host, answer.held);
    const { result } = answer;
    addLog(host.page, via, result.isError ? "warn" : "info", `${name} → ${short(result.structuredContent ?? result.content)}`);
    return result;
  } catch (error) {
    addLog(host.page, via, "error", `callTool ${name} refused: ${error instanceof Error ? error.message : error}`);
    throw error;
  }
}

/**
 * An approval step, in the host log and in the traffic (the workbench's panel): held, approved, denied.
 * @param {Host} host
 * @param {string} text
 * @param {Record<string, unknown>} [params]
 */
function noteApproval(host, text, params = {}) {
  addLog(host.page, "host", "info", text);
  keepTraffic(host.page, host.page.recorder.record("bridge", "host", "user", { jsonrpc: "2.0", method: text, params }));
}

/**
 * A widget's call the server holds for approval: a prompt in the stage until the user allows it (the
 * server makes the call then) or denies it (the call is never made, and the widget's promise rejects).
 * @param {Host} host
 * @param {{ id: string, tool: string, mode: AppsdkPermissionMode, label: string, reason: string }} held
 * @returns {Promise<{ result: McpCallToolResult }>}
 */
function decideHeldCall(host, held) {
  noteApproval(host, `held for approval: ${held.tool} (${held.label}: ${held.reason})`, { mode: held.mode });
  host.page.events.emit("approval", { kind: "call", held: true, tool: held.tool, mode: held.mode, reason: held.reason });
  return new Promise((resolve, reject) => {
    const item = document.createElement("li");
    const text = document.createElement("span");
    text.textContent = `The widget asks to call ${held.tool} (${held.label}: ${held.reason}).`;
    const allow = document.createElement("button");
    allow.type = "button";
    allow.className = "allow";
    allow.textContent = "Allow";
    const deny = document.createElement("button");
    deny.type = "button";
    deny.className = "deny";
    deny.textContent = "Deny";
    item.dataset.tool = held.tool;
    item.append(text, allow, deny);
    $("call-approvals").append(item);
    /** @param {boolean} approved */
    const settle = async (approved) => {
      item.remove();
      noteApproval(host, `${approved ? "approved" : "denied"}: ${held.tool}`);
      host.page.events.emit("approval", { kind: "call", held: false, tool: held.tool, approved });
      try {
        if (approved) {
          resolve(await host.page.api("/api/call/approve", { id: held.id }));
        } else {
          const { message } = await host.page.api("/api/call/deny", { id: held.id });
          reject(new Error(message));
        }
      } catch (error) {
        reject(error);
      }
    };
    allow.addEventListener("click", () => settle(true), { once: true });
    deny.addEventListener("click", () => settle(false), { once: true });
  });
}

/**
 * resources/list and resources/templates/list, passed through to the server (serverResources).
 * @param {Host} host
 * @param {string} method
 * @param {unknown} params
 */
async function forward(host, method, params) {
  const { result } = await host.page.api("/api/forward", { method, params });
  addLog(host.page, "bridge", "info", `${method} → ${short(result)}`);
  return result;
}

/**
 * The MCP Apps bridge's requests: method → handler returning the JSON-RPC result.
 * @param {Host} host
 * @returns {Record<string, import("./bridge.js").BridgeHandler>}
 */
function bridgeHandlers(host) {
  const log = /** @param {AppsdkLogLevel} level @param {string} text @param {string} [link] */ (level, text, link) =>
    addLog(host.page, "bridge", level, text, link);
  return {
    /** @param {import("./bridge.js").McpUiInitializeRequest["params"]} p @returns {import("./bridge.js").McpUiInitializeResult} */
    "ui/initialize": (p) => {
      const bridge = host.bridge;
      bridge.initializeSeen = true;
      const app = (p.appInfo && p.appInfo.name) || "widget";
      const modes = p.appCapabilities && p.appCapabilities.availableDisplayModes;
      bridge.appModes = Array.isArray(modes) ? modes : null;
      log("info", `ui/initialize from ${app} (protocol ${p.protocolVersion})`);
      markDeclaredModes(host);
      const profile = profileOf(host);
      return {
        protocolVersion: negotiateVersion(p.protocolVersion, host.session.protocolVersion),
        hostInfo: profile.hostInfo,
        hostCapabilities: hostCapabilities(profile, host.session.template.declaredCsp),
        hostContext: hostContext({
          session: host.session,
          state: host.state,
          profile,
          device: deviceOf(host),
          containerDimensions: containerDimensions(host),
        }),
      };
    },
    "tools/call": (p) => callTool(host, p.name, p.arguments, "bridge"),
    "resources/read": async (p) => (await host.page.api("/api/read", { uri: p.uri })).result,
    "resources/list": (p) => forward(host, "resources/list", p),
    "resources/templates/list": (p) => forward(host, "resources/templates/list", p),
    /** @param {import("@modelcontextprotocol/ext-apps").McpUiOpenLinkRequest["params"]} p */
    "ui/open-link": (p) => {
      log("info", `ui/open-link ${p.url}`, p.url);
      return {};
    },
    /** @param {import("@modelcontextprotocol/ext-apps").McpUiMessageRequest["params"]} p */
    "ui/message": (p) => {
      const text = (p.content || []).map((block) => ("text" in block ? block.text : undefined) ?? short(block)).join(" ");
      log("info", `ui/message (${p.role || "user"}): ${text}`);
      model(host, "message", p);
      return {};
    },
    /** @param {import("@modelcontextprotocol/ext-apps").McpUiRequestDisplayModeRequest["params"]} p */
    "ui/request-display-mode": (p) => requestDisplayModeFromBridge(host, p),
    /** @param {import("@modelcontextprotocol/ext-apps").McpUiUpdateModelContextRequest["params"]} p */
    "ui/update-model-context": (p) => {
      log("info", `ui/update-model-context ${short(p)}`);
      model(host, "update-model-context", p);
      return {};
    },
    /** @param {import("@modelcontextprotocol/ext-apps").McpUiDownloadFileRequest["params"]} p */
    "ui/download-file": (p) => {
      const profile = profileOf(host);
      if (!profile.downloadFile) throw new BridgeError(METHOD_NOT_FOUND, `${profile.label} has no hostCapabilities.downloadFile`);
      const names = downloadAll(p);
      log("info", `ui/download-file: ${names.join(", ") || "nothing to download"}`);
      return {};
    },
    ping: () => ({}),
  };
}

/**
 * The view's notifications.
 * @param {Host} host
 * @param {string} method
 * @param {Record<string, any>} p
 */
function onBridgeNotification(host, method, p) {
  const bridge = host.bridge;
  const log = /** @param {AppsdkLogLevel} level @param {string} text */ (level, text) => addLog(host.page, "bridge", level, text);
  if (method === "ui/notifications/initialized") {
    if (bridge.initialized) return; // tool-input goes exactly once per view
    bridge.initialized = true;
    const context = bridge.contextChanges;
    bridge.contextChanges = {};
    if (Object.keys(context).length) bridge.notify("ui/notifications/host-context-changed", context);
    const partial = bridge.partialInputs.splice(0);
    if (!bridge.cancelled) for (const args of partial) notifyPartialInput(host, args);
    if (bridge.held) {
      log("info", "ui/notifications/initialized; tool-input held until the call is approved");
      return;
    }
    const then = host.session.pending ? "tool-input (the call is in flight: tool-result follows)" : "tool-input, tool-result";
    log("info", `ui/notifications/initialized → ${then}`);
    sendInput(host);
  } else if (method === "ui/notifications/size-changed") {
    setHeight(host, p.height, "bridge");
  } else if (method === "ui/notifications/request-teardown") {
    log("info", "ui/notifications/request-teardown: the widget asks to close");
    closeWidget(host, "the widget asked to close (ui/notifications/request-teardown)");
  } else if (method === "notifications/message") {
    log(logLevelOf(p.level), `log: ${typeof p.data === "string" ? p.data : short(p.data)}`);
  } else {
    log("info", `${method} ${short(p)}`);
  }
}

/**
 * A view's endpoint, wired to this host. `own`: what a view answers its own way (a modal closes itself
 * and keeps its place), ahead of the host's; an own notification handler returns true when it took one.
 * @param {Host} host
 * @param {boolean} held
 * @param {{ handlers?: Record<string, import("./bridge.js").BridgeHandler>, onNotification?: (method: string, params: Record<string, any>) => boolean }} [own]
 */
export function bridgeFor(host, held, own = {}) {
  return createBridge({
    send: (message) => toWidget(host, message),
    handlers: { ...bridgeHandlers(host), ...own.handlers },
    onNotification: (method, params) => {
      if (!(own.onNotification && own.onNotification(method, params))) onBridgeNotification(host, method, params);
    },
    log: (kind, level, message) => addLog(host.page, kind, level, message),
    held,
  });
}

/**
 * tool-input exactly once per view, then the result it belongs to: at once, or (a call still in
 * flight, session.pending) when sendResult brings it, unless the call is cancelled first.
 * @param {Host} host
 */
function sendInput(host) {
  const bridge = host.bridge;
  bridge.inputSent = true;
  bridge.notify("ui/notifications/tool-input", { arguments: host.session.arguments });
  if (!host.session.pending && !bridge.cancelled) {
    bridge.notify("ui/notifications/tool-result", host.session.result);
    bridge.resultSent = true;
  }
  host.timing.changedAt = performance.now();
  host.page.records.bridge.initialized = true;
}

// ---- the lifecycle commands: approval, partial input, cancel, a new result ------------------------

/** @param {Host} host */
export function approve(host) {
  const bridge = host.bridge;
  if (!bridge.held) throw new Error("nothing is waiting for approval");
  if (bridge.cancelled) throw new Error("the call was cancelled");
  bridge.held = false;
  $("approval-bar").hidden = true;
  noteApproval(host, `approved: ${host.session.tool.name}`);
  host.page.events.emit("approval", { kind: "input", held: false, tool: host.session.tool.name, approved: true });
  const { session } = host;
  toOpenai(host, {
    type: "globals",
    globals: {
      toolInput: session.arguments,
      toolOutput: session.result.structuredContent ?? null,
      toolResponseMetadata: toolResponseMetadata(session.result),
    },
  });
  if (bridge.initialized) {
    addLog(host.page, "bridge", "info", session.deferred ? "approved → tool-input (the call runs now)" : "approved → tool-input, tool-result");
    sendInput(host);
  }
  host.timing.changedAt = performance.now();
  runDeferredCall(host);
  return { approved: true };
}

/**
 * The call the permission mode held back (session.deferred: `appsdk preview` did not make it), made now
 * that it is approved, or that the mode no longer asks. The session takes its result; true once it did.
 * @param {Host} host
 */
async function makeDeferredCall(host) {
  const { session } = host;
  if (!session.deferred || host.deferredCall) return false;
  host.deferredCall = true;
  addLog(host.page, "host", "info", `${session.tool.name} runs now: it was held for approval`);
  try {
    const { result } = await host.page.api("/api/rerun", {});
    Object.assign(session, { result, pending: false, deferred: false });
    showResult(result);
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    addLog(host.page, "host", "error", `${session.tool.name} failed after approval: ${message}`);
    cancelTool(host, `the call failed: ${message}`);
    return false;
  } finally {
    host.deferredCall = false;
  }
}

/**
 * Approved in the live view: the held call is made and its result reaches the view as a new result.
 * @param {Host} host
 */
async function runDeferredCall(host) {
  if (await makeDeferredCall(host)) sendResult(host, host.session.result);
}

/**
 * @param {Host} host
 * @param {Record<string, unknown>} args
 */
export function sendPartialInput(host, args) {
  const bridge = host.bridge;
  if (bridge.inputSent) throw new Error("tool-input was already sent: partial input stops once the complete input is sent");
  if (bridge.cancelled) throw new Error("the call was cancelled");
  if (!bridge.initialized) {
    // The model writes its arguments while the view is still starting: they go, in order, once it has
    // initialized (a host sends it nothing before). Each holds all the arguments so far, so only the
    // newest few are worth keeping.
    bridge.partialInputs.push(args || {});
    bridge.partialInputs.splice(0, bridge.partialInputs.length - PARTIAL_INPUTS_KEPT);
    addLog(host.page, "bridge", "info", `tool-input-partial ${short(args)} waits for the view's ui/notifications/initialized`);
    return { queued: true };
  }
  notifyPartialInput(host, args);
  return {};
}

/**
 * @param {Host} host
 * @param {Record<string, unknown>} args
 */
function notifyPartialInput(host, args) {
  host.bridge.notify("ui/notifications/tool-input-partial", { arguments: args || {} });
  addLog(host.page, "bridge", "info", `tool-input-partial ${short(args)}`);
}

/**
 * @param {Host} host
 * @param {unknown} [reason]
 */
export function cancelTool(host, reason) {
  const bridge = host.bridge;
  bridge.cancelled = true;
  if (bridge.held) {
    noteApproval(host, `denied: ${host.session.tool.name}`);
    host.page.events.emit("approval", { kind: "input", held: false, tool: host.session.tool.name, approved: false });
  }
  bridge.held = false;
  $("approval-bar").hidden = true;
  const p = reason ? { reason: String(reason) } : {};
  addLog(host.page, "host", "info", `the call was cancelled${reason ? `: ${reason}` : ""}`);
  if (bridge.initialized) bridge.notify("ui/notifications/tool-cancelled", p);
  return { cancelled: true, sent: bridge.initialized };
}

/** @param {McpCallToolResult} result */
export function showResult(result) {
  const text = (result.content || []).flatMap((b) => (b.type === "text" ? [b.text] : []));
  $("model-text").textContent = text.join("\n");
  $("result").textContent = JSON.stringify(result, null, 2);
}

/**
 * A new result for the live view (a re-run keeping widget state): tool-result again, and
 * window.openai's toolOutput. tool-input is not repeated: it goes once per view.
 * @param {Host} host
 * @param {unknown} result
 */
export function sendResult(host, result) {
  if (!result || typeof result !== "object") throw new Error("sendResult needs a CallToolResult object");
  const called = /** @type {McpCallToolResult} */ (result);
  const { session, bridge } = host;
  session.result = called;
  session.pending = false;
  showResult(called);
  toOpenai(host, {
    type: "globals",
    globals: { toolOutput: called.structuredContent ?? null, toolResponseMetadata: toolResponseMetadata(called) },
  });
  if (bridge.initialized && bridge.inputSent) {
    bridge.notify("ui/notifications/tool-result", called);
    bridge.resultSent = true;
  }
  addLog(host.page, "host", "info", `a new tool result for the widget: ${short(called.structuredContent ?? called.content)}`);
  return {};
}

/**
 * A new view of the template, read afresh.
 * @param {Host} host
 */
export async function reloadView(host) {
  // A call held back for approval that the mode (switched since) no longer asks about: made first, so the
  // new view's document carries its result, as a view of a call made at once does.
  if (host.session.deferred && !host.state.approval) await makeDeferredCall(host);
  const loaded = await loadWidget(host, { bridge: (held) => bridgeFor(host, held), modesChanged: () => markDeclaredModes(host) });
  if (host.bridge.held) {
    // The run's own call waits for the user (its permission mode asks about the tool): so does tool-input.
    const tool = host.session.tool.name;
    const decision = permissionFor(host.session, host.state.permissions);
    noteApproval(host, `held for approval: ${tool} (${decision.label}: ${decision.reason})`, { mode: decision.mode });
    host.page.events.emit("approval", { kind: "input", held: true, tool, mode: decision.mode, reason: decision.reason });
  }
  return loaded;
}

/**
 * The standalone page's "Re-run and reload": the view is torn down (its answer awaited), the tool is
 * called again, and a new view reads the template afresh and gets the new result.
 * @param {Host} host
 */
export async function rerunAndReload(host) {
  const button = /** @type {HTMLButtonElement} */ ($("reload"));
  const { session } = host;
  button.disabled = true;
  try {
    await teardownView(host);
    removeView(host, `running ${session.tool.name} again…`, "running");
    const { result } = await host.page.api("/api/rerun", {});
    session.result = result;
    showResult(result);
    addLog(host.page, "host", "info", `${session.tool.name} ran again → ${short(result.structuredContent ?? result.content)}`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    addLog(host.page, "host", "error", `re-running ${session.tool.name} failed: ${message}; reloading with the last result`);
  } finally {
    button.disabled = false;
  }
  await reloadView(host);
}
