// appsdk preview: injected at the top of the widget document, before any of the widget's own scripts.
// It reports the widget's console errors and CSP violations to the host page, and (unless the host
// withholds it to test the MCP Apps bridge) provides window.openai the way ChatGPT does. Everything it
// does goes through postMessage to the host page: the widget runs on its own origin.
(() => {
  "use strict";
  const config = __APPSDK_CONFIG__;
  const host = window.parent;
  const post = (message) => host.postMessage({ __appsdk: message }, config.hostOrigin);

  const describe = (value) => {
    if (value instanceof Error) return value.stack || String(value);
    if (typeof value === "string") return value;
    try {
      return JSON.stringify(value);
    } catch {
      return String(value);
    }
  };
  for (const level of ["error", "warn"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
      post({ type: "log", kind: "console", level, message: args.map(describe).join(" ") });
      original(...args);
    };
  }
  window.addEventListener("error", (event) => {
    const where = event.filename ? ` (${event.filename}:${event.lineno})` : "";
    post({ type: "log", kind: "error", level: "error", message: `${event.message}${where}` });
  });
  window.addEventListener("unhandledrejection", (event) => {
    post({ type: "log", kind: "error", level: "error", message: `unhandled rejection: ${describe(event.reason)}` });
  });
  document.addEventListener("securitypolicyviolation", (event) => {
    post({
      type: "csp",
      directive: event.effectiveDirective || event.violatedDirective,
      blocked: event.blockedURI,
      source: event.sourceFile,
      line: event.lineNumber,
    });
  });

  // ChatGPT sizes an inline widget to its content even when the widget never reports a height; the host
  // cannot measure a cross-origin frame, so the bootstrap measures from inside and the host uses it
  // until the widget reports a height of its own.
  const measure = () => post({ type: "autosize", height: document.documentElement.getBoundingClientRect().height });
  new ResizeObserver(measure).observe(document.documentElement);

  if (!config.openai) return;

  // ---- window.openai ------------------------------------------------------------------------------
  const globals = { ...config.globals };
  let nextId = 1;
  const pending = new Map();
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      post({ type: "request", id, method, params });
    });

  window.addEventListener("message", (event) => {
    if (event.source !== host || event.origin !== config.hostOrigin) return;
    const message = event.data && event.data.__appsdk;
    if (!message) return;
    if (message.type === "response" && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
    } else if (message.type === "globals") {
      Object.assign(globals, message.globals);
      window.dispatchEvent(new CustomEvent("openai:set_globals", { detail: { globals: message.globals } }));
    }
  });

  const notSupported = (name) => () => Promise.reject(new Error(`${name} is not available in appsdk preview`));
  const api = {
    callTool: (name, args) => request("callTool", { name, args: args ?? {} }),
    setWidgetState: (state) => {
      globals.widgetState = state;
      return request("setWidgetState", { state });
    },
    sendFollowUpMessage: (args) => request("sendFollowUpMessage", args ?? {}),
    openExternal: (args) => request("openExternal", args ?? {}),
    requestDisplayMode: (args) => request("requestDisplayMode", args ?? {}),
    requestModal: (args) => request("requestModal", args ?? {}),
    requestClose: () => request("requestClose", {}),
    notifyIntrinsicHeight: (height) => post({ type: "notify", method: "notifyIntrinsicHeight", params: { height } }),
    setOpenInAppUrl: (args) => request("setOpenInAppUrl", args ?? {}),
    uploadFile: notSupported("uploadFile"),
    selectFiles: notSupported("selectFiles"),
    getFileDownloadUrl: notSupported("getFileDownloadUrl"),
  };
  // Globals are read live, so a widget that reads window.openai.theme after set_globals sees the new value.
  for (const key of Object.keys(globals)) {
    Object.defineProperty(api, key, { get: () => globals[key], enumerable: true });
  }
  Object.defineProperty(window, "openai", { value: api, configurable: false, writable: false, enumerable: true });
})();
