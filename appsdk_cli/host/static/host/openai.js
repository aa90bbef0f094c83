// @ts-check
// window.openai, host side: the bootstrap inside the widget relays each call over its MessageChannel,
// with its own reports (errors, failed loads, CSP violations, what data the widget read, its size).

import { callTool, model } from "./calls.js";
import { toolResponseMetadata } from "./context.js";
import { exitMode, requestDisplayModeFromOpenai } from "./controls.js";
import { judgeCspViolation } from "./csp.js";
import { base64Of, pickFiles } from "./files.js";
import { closeModal, openModal, otherViews } from "./modal.js";
import { addLog, element, keepTraffic, short } from "./page.js";
import { closeWidget, noteActivity, setHeight, toOpenai } from "./view.js";

/** @typedef {import("./page.js").Host} Host */

/**
 * The widget's state, kept by the server (a reload of the view gets it back).
 * @param {Host} host
 * @param {unknown} widgetState
 */
async function saveWidgetState(host, widgetState) {
  await host.page.api("/api/widget-state", { state: widgetState });
  host.state.widgetState = widgetState;
  host.page.events.emit("widget-state", { state: widgetState });
  // The inline view and its modal are one widget: each sees the state the other set.
  for (const other of otherViews(host)) {
    other.state.widgetState = widgetState;
    toOpenai(other, { type: "globals", globals: { widgetState } });
  }
}

/**
 * An edit in the inspector: kept by the server like the widget's own, and pushed into the live widget.
 * @param {Host} host
 * @param {unknown} widgetState
 */
export async function setWidgetStateFromHost(host, widgetState) {
  await saveWidgetState(host, widgetState);
  addLog(host.page, "host", "info", `widget state set by the host: ${short(widgetState)}`);
  toOpenai(host, { type: "globals", globals: { widgetState } });
  return { state: widgetState };
}

/**
 * Into the host's file store.
 * @param {Host} host
 * @param {unknown} file
 * @returns {Promise<AppsdkStoredFile>}
 */
async function storeFile(host, file) {
  if (!(file instanceof Blob)) throw new Error("uploadFile needs a File (or Blob)");
  const stored = await host.page.api("/api/files", {
    fileName: file instanceof File ? file.name || "file" : "file",
    mimeType: file.type || "",
    data: await base64Of(file),
  });
  addLog(host.page, "openai", "info", `stored ${stored.fileName} (${stored.mimeType}, ${stored.size} bytes) as ${stored.fileId}`);
  return stored;
}

/**
 * window.openai requests, relayed by the bootstrap. Each returns the value the widget's promise
 * resolves to.
 * @param {Host} host
 * @returns {Record<string, (params: Record<string, any>) => unknown>}
 */
function openaiMethods(host) {
  /** @param {string} text @param {string} [link] */
  const log = (text, link) => addLog(host.page, "openai", "info", text, link);
  return {
    callTool: (p) => callTool(host, p.name, p.args, "openai"),
    setWidgetState: async (p) => {
      await saveWidgetState(host, p.state);
      log(`setWidgetState ${short(p.state)}`);
      return {};
    },
    sendFollowUpMessage: (p) => {
      log(`sendFollowUpMessage: ${p.prompt ?? short(p)}`);
      model(host, "follow-up", p);
      return {};
    },
    openExternal: (p) => {
      log(`openExternal ${p.href}`, p.href);
      return {};
    },
    requestDisplayMode: (p) => requestDisplayModeFromOpenai(host, { mode: p.mode }),
    requestModal: (p) => openModal(host, p),
    requestClose: () => {
      log("requestClose");
      closeWidget(host, "the widget asked to close (requestClose)");
      return {};
    },
    setOpenInAppUrl: (p) => {
      log(`setOpenInAppUrl ${p.href ?? short(p)}`);
      return {};
    },
    uploadFile: async (p) => ({ fileId: (await storeFile(host, p.file)).fileId }),
    // The shape of selectFiles' answer is not published; each chosen file as uploadFile's, plus its name and type.
    selectFiles: async () => {
      const chosen = await pickFiles(element("file-picker", HTMLInputElement));
      const stored = [];
      for (const file of chosen) stored.push(await storeFile(host, file));
      log(`selectFiles: ${stored.length} file(s) chosen`);
      return stored.map((s) => ({ fileId: s.fileId, fileName: s.fileName, mimeType: s.mimeType }));
    },
    getFileDownloadUrl: async (p) => {
      const { downloadUrl } = await host.page.api("/api/files/url", { fileId: p.fileId });
      log(`getFileDownloadUrl ${p.fileId}`);
      return { downloadUrl };
    },
  };
}

/**
 * What a modal's view answers its own way: requestClose closes the modal (not the inline view), a modal
 * opens no other, and it keeps its place rather than changing display mode.
 * @param {Host} host
 * @param {import("./modal.js").Modal} modal
 * @returns {Record<string, (params: Record<string, any>) => unknown>}
 */
function modalMethods(host, modal) {
  /** @param {string} text */
  const log = (text) => addLog(host.page, "openai", "info", text);
  return {
    requestModal: (p) => openModal(host, p),
    requestClose: () => {
      log("requestClose from the modal: it closes");
      closeModal(modal, "the modal asked to close (requestClose)");
      return {};
    },
    requestDisplayMode: (p) => {
      log(`requestDisplayMode ${p.mode} from the modal: a modal keeps its place`);
      return { mode: host.state.displayMode };
    },
  };
}

/**
 * The bootstrap's port: window.openai's calls and the bootstrap's reports.
 * @param {Host} host the view the port is from (the inline one, or a modal's)
 * @param {MessagePort} port
 */
export function connectOpenai(host, port) {
  if (host.openaiPort) host.openaiPort.close();
  host.openaiPort = port;
  const methods = { ...openaiMethods(host), ...(host.inModal ? modalMethods(host, host.inModal) : {}) };
  port.onmessage = (event) => onOpenai(host, methods, event.data);
  catchUp(host);
}

/**
 * A view whose document was built while its call was in flight, and whose result came (sendResult)
 * before its bootstrap connected: the result reaches it now, as it would have over a port already there.
 * Not while the call waits for approval: approving sends the input and the result together.
 * @param {Host} host
 */
function catchUp(host) {
  const { session, bridge } = host;
  if (!host.documentPending || session.pending || bridge.held || bridge.cancelled) return;
  host.documentPending = false;
  const globals = { toolOutput: session.result.structuredContent ?? null, toolResponseMetadata: toolResponseMetadata(session.result) };
  toOpenai(host, { type: "globals", globals });
}

/**
 * @param {Host} host
 * @param {ReturnType<typeof openaiMethods>} methods
 * @param {AppsdkOpenaiFromWidget | null} message
 */
async function onOpenai(host, methods, message) {
  if (!message) return;
  const { health, page } = host;
  if (message.type === "activity") return noteActivity(host, message.busy); // housekeeping, not traffic
  if (host.state.openai) keepTraffic(page, page.recorder.record("openai", "widget", "host", message));
  if (message.type === "log") {
    addLog(page, message.kind, message.level, message.message);
    if (message.kind === "error") health.errors.push(message.message.split("\n")[0]);
  } else if (message.type === "load-failed") {
    const fatal = message.what.includes("script") || message.what === "stylesheet";
    addLog(page, "error", fatal ? "error" : "warn", `${message.what} failed to load: ${message.url}`);
    if (fatal) health.loadFailures.push(`${message.what} failed to load: ${message.url}`);
  } else if (message.type === "csp") {
    const judged = judgeCspViolation(message);
    page.events.emit("csp", judged.event);
    addLog(page, "csp", judged.level, judged.text);
    if (judged.loadFailure) health.loadFailures.push(judged.loadFailure);
  } else if (message.type === "read") {
    health.read.add(message.key);
    host.timing.changedAt = performance.now();
  } else if (message.type === "autosize") {
    setHeight(host, message.height, "measured");
  } else if (message.type === "key" && message.key === "Escape") {
    if (host.inModal) closeModal(host.inModal, "Escape");
    else exitMode(host, "Escape");
  } else if (message.type === "notify" && message.method === "notifyIntrinsicHeight") {
    setHeight(host, message.params.height, "openai");
  } else if (message.type === "request") {
    const method = Object.hasOwn(methods, message.method) ? methods[message.method] : undefined;
    try {
      if (!method) throw new Error(`window.openai.${message.method} is not supported by appsdk preview`);
      const result = await method(message.params || {});
      toOpenai(host, { type: "response", id: message.id, result });
    } catch (error) {
      toOpenai(host, { type: "response", id: message.id, error: { message: error instanceof Error ? error.message : String(error) } });
    }
  }
}
