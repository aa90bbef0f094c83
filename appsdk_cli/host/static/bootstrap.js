// @ts-check
// appsdk preview: injected at the top of the widget document, before any of the widget's own scripts.
// It reports the widget's errors, failed loads and CSP violations to the host page, and (unless the host
// withholds it to test the MCP Apps bridge) provides window.openai the way ChatGPT does.
//
// All of that travels over a MessageChannel of its own, handed to the host page once at start. The
// window's own postMessage channel is the MCP Apps bridge, and a view that speaks it (the official SDK's
// App, or hand-written JSON-RPC) must see nothing there but the spec's JSON-RPC messages.
(() => {
  "use strict";
  /** @type {AppsdkBootstrapConfig} */
  const config = __APPSDK_CONFIG__;
  const channel = new MessageChannel();
  const port = channel.port1;
  // The parent is the host's sandbox proxy, which hands the port on to the host page.
  window.parent.postMessage({ __appsdk: { type: "connect" } }, config.parentOrigin, [channel.port2]);
  /** @param {AppsdkOpenaiFromWidget} message */
  const post = (message) => port.postMessage(message);

  // The widget document's query string is the host's business; a location reads better without it.
  /** @param {unknown} text */
  const place = (text) => String(text || "").replace(/(\/view)\?[^\s#:)]*/g, "$1");
  /** @param {unknown} value */
  const describe = (value) => {
    if (value instanceof Error) return value.stack || String(value);
    if (typeof value === "string") return value;
    try {
      return JSON.stringify(value);
    } catch {
      return String(value);
    }
  };
  for (const level of /** @type {const} */ (["error", "warn"])) {
    const original = console[level].bind(console);
    console[level] = (/** @type {unknown[]} */ ...args) => {
      post({ type: "log", kind: "console", level, message: place(args.map(describe).join(" ")) });
      original(...args);
    };
  }
  // Which fetches failed, from resource timing (it has the HTTP status): an inline module's failed
  // import names no URL on its error event, and a status says more than "failed".
  const reported = new Set();
  /** @param {PerformanceEntry} entry resource timing's status (Chromium; 0 where unknown) */
  const statusOf = (entry) => /** @type {PerformanceResourceTiming} */ (entry).responseStatus || 0;
  const failedFetches = () =>
    performance
      .getEntriesByType("resource")
      .filter((entry) => statusOf(entry) >= 400 && !reported.has(entry.name))
      .map((entry) => {
        reported.add(entry.name);
        return `${entry.name} (HTTP ${statusOf(entry)})`;
      });
  /** @param {string} url */
  const withStatus = (url) => {
    const entry = performance.getEntriesByName(url, "resource").find((e) => statusOf(e) >= 400);
    reported.add(url);
    return entry ? `${url} (HTTP ${statusOf(entry)})` : url;
  };
  // Capture phase: a <script>, <link> or <img> that fails to load fires a non-bubbling error event at
  // itself, which only a capturing listener on window sees. Uncaught exceptions arrive as ErrorEvents.
  window.addEventListener(
    "error",
    (event) => {
      // An element that failed to load: a script, a stylesheet or other link, an image, …
      const element = /** @type {(HTMLElement & { src?: string, href?: string, type?: string, rel?: string }) | null} */ (
        event.target
      );
      if (element && /** @type {unknown} */ (element) !== window && element.tagName) {
        const own = element.src || element.href || "";
        const url = own ? withStatus(own) : failedFetches().join(", ") || "an import of an inline module";
        const tag = element.tagName.toLowerCase();
        const what =
          tag === "script"
            ? element.type === "module"
              ? "module script"
              : "script"
            : tag === "link" && /\bstylesheet\b/i.test(element.rel || "")
              ? "stylesheet"
              : tag === "link"
                ? `link rel=${element.rel}`
                : tag;
        post({ type: "load-failed", what, url });
        return;
      }
      const where = event.filename ? ` (${place(event.filename)}:${event.lineno})` : "";
      const text = /^uncaught/i.test(event.message) ? event.message : `Uncaught ${event.message}`;
      const stack = event.error instanceof Error && event.error.stack ? `\n${place(event.error.stack)}` : "";
      post({ type: "log", kind: "error", level: "error", message: `${text}${where}${stack}` });
    },
    true,
  );
  window.addEventListener("unhandledrejection", (event) => {
    post({ type: "log", kind: "error", level: "error", message: `unhandled rejection: ${describe(event.reason)}` });
  });
  // Every violation, once: the capture listener on window runs before any of the widget's own (which could
  // stop it), the one on document sees violations raised where window's capture missed them (a document
  // written later), and the de-duplication keeps the two from reporting one twice.
  const seenViolations = new WeakSet();
  /** @param {SecurityPolicyViolationEvent} event */
  const onViolation = (event) => {
    if (seenViolations.has(event)) return;
    seenViolations.add(event);
    post({
      type: "csp",
      directive: event.effectiveDirective || event.violatedDirective,
      blocked: event.blockedURI || (event.sample ? "inline" : ""),
      source: place(event.sourceFile),
      line: event.lineNumber,
      column: event.columnNumber,
      sample: event.sample || "",
      disposition: event.disposition,
    });
  };
  window.addEventListener("securitypolicyviolation", onViolation, true);
  document.addEventListener("securitypolicyviolation", onViolation, true);
  // Escape leaves fullscreen and pip, as in ChatGPT, even with the focus inside the widget: unless the
  // widget handled the key itself.
  window.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !event.defaultPrevented) post({ type: "key", key: "Escape" });
  });

  // ChatGPT sizes an inline widget to its content even when the widget never reports a height; the host
  // cannot measure a cross-origin frame, so the bootstrap measures from inside and the host uses it
  // until the widget reports a height of its own.
  const measure = () => post({ type: "autosize", height: document.documentElement.getBoundingClientRect().height });
  new ResizeObserver(measure).observe(document.documentElement);
  const activity = watchActivity();

  if (!config.openai) return;

  // ---- window.openai ------------------------------------------------------------------------------
  const globals = { ...config.globals };
  let nextId = 1;
  /** @type {Map<number, { resolve: (value: unknown) => void, reject: (error: Error) => void }>} */
  const pending = new Map();
  /** @param {string} method @param {Record<string, unknown>} params @returns {Promise<unknown>} */
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      post({ type: "request", id, method, params });
    });

  port.onmessage = (event) => {
    /** @type {AppsdkOpenaiToWidget | null} */
    const message = event.data;
    if (!message) return;
    const waiting = message.type === "response" ? pending.get(message.id) : undefined;
    if (message.type === "response" && waiting) {
      const { resolve, reject } = waiting;
      pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
    } else if (message.type === "globals") {
      Object.assign(globals, message.globals);
      window.dispatchEvent(new CustomEvent("openai:set_globals", { detail: { globals: message.globals } }));
    }
    activity.handled();
  };

  // The arguments are the widget's, passed on as given: window.openai's types are ChatGPT's.
  /** @typedef {Record<string, any> | undefined} Args */
  const api = {
    callTool: (/** @type {string} */ name, /** @type {Args} */ args) => request("callTool", { name, args: args ?? {} }),
    setWidgetState: (/** @type {unknown} */ state) => {
      globals.widgetState = state;
      return request("setWidgetState", { state });
    },
    sendFollowUpMessage: (/** @type {Args} */ args) => request("sendFollowUpMessage", args ?? {}),
    openExternal: (/** @type {Args} */ args) => request("openExternal", args ?? {}),
    requestDisplayMode: (/** @type {Args} */ args) => request("requestDisplayMode", args ?? {}),
    // The host opens a modal of its own with a second view of the widget (host/modal.js); that view's
    // globals.view is {mode: "modal", params}, this one's {mode: "inline", params: null}.
    requestModal: (/** @type {AppsdkRequestModalArgs | undefined} */ args) => request("requestModal", args ?? {}),
    requestClose: () => request("requestClose", {}),
    notifyIntrinsicHeight: (/** @type {number} */ height) => post({ type: "notify", method: "notifyIntrinsicHeight", params: { height } }),
    setOpenInAppUrl: (/** @type {Args} */ args) => request("setOpenInAppUrl", args ?? {}),
    // Files travel to the host as File objects (structured clone over the port); it stores them.
    uploadFile: (/** @type {unknown} */ file) =>
      file instanceof Blob
        ? request("uploadFile", { file })
        : Promise.reject(new TypeError("uploadFile(file) needs a File or Blob")),
    selectFiles: () => request("selectFiles", {}),
    getFileDownloadUrl: (/** @type {Args} */ args) => request("getFileDownloadUrl", { fileId: args && args.fileId }),
  };
  // The widget's data: reading one of these tells the host the widget took its data from window.openai
  // (a screenshot of a widget that never did shows a dead widget, and says so).
  const data = new Set(["toolInput", "toolOutput", "toolResponseMetadata", "widgetState"]);
  const read = new Set();
  // Globals are read live, so a widget that reads window.openai.theme after set_globals sees the new value.
  // maxHeight always has its getter: undefined inline where the host bounds nothing, a number once in pip or fullscreen.
  for (const key of new Set([...Object.keys(globals), "maxHeight"])) {
    const get = () => {
      if (data.has(key) && !read.has(key)) {
        read.add(key);
        post({ type: "read", key });
      }
      return globals[key];
    };
    Object.defineProperty(api, key, { get, enumerable: true });
  }
  Object.defineProperty(window, "openai", { value: api, configurable: false, writable: false, enumerable: true });

  // ---- when the widget is still changing ------------------------------------------------------------
  // The host calls the widget settled once it took its data and went quiet, and it cannot look into this
  // cross-origin document: so the bootstrap says when the document changed (a mutation) and how much
  // work is pending that is about to change it (a short timer, a fetch, an image or a font loading), and
  // answers each message from the host once the widget's own handlers for it have run. A fixed quiet
  // window would have to be long enough for the slowest widget; this lets the host settle as soon as the
  // widget really is idle, and still wait for one that renders in two steps.
  /** @returns {{ handled: () => void }} */
  function watchActivity() {
    const SHORT_TIMER_MS = 1000; // a longer timer is a schedule (a clock, a poll), not rendering in progress
    const realSetTimeout = window.setTimeout.bind(window);
    const realClearTimeout = window.clearTimeout.bind(window);
    /** @type {Set<number>} */
    const timers = new Set();
    let fetches = 0;
    let queued = false;
    const loading = () => {
      let images = 0;
      for (const image of Array.from(document.images)) if (!image.complete) images += 1;
      return images + (document.fonts && document.fonts.status === "loading" ? 1 : 0);
    };
    const report = () => {
      if (queued) return;
      queued = true;
      queueMicrotask(() => {
        queued = false;
        post({ type: "activity", busy: timers.size + fetches + loading() });
      });
    };
    /** @type {any} */ (window).setTimeout = (/** @type {any} */ handler, /** @type {number} */ delay, /** @type {any[]} */ ...args) => {
      if (typeof handler !== "function" || !(Number(delay || 0) <= SHORT_TIMER_MS)) return realSetTimeout(handler, delay, ...args);
      const id = realSetTimeout(() => {
        timers.delete(id);
        try {
          handler(...args);
        } finally {
          report();
        }
      }, delay);
      timers.add(id);
      report();
      return id;
    };
    /** @type {any} */ (window).clearTimeout = (/** @type {number | undefined} */ id) => {
      if (id !== undefined && timers.delete(id)) report();
      realClearTimeout(id);
    };
    const realFetch = window.fetch.bind(window);
    window.fetch = (...args) => {
      fetches += 1;
      report();
      return realFetch(...args).finally(() => {
        fetches -= 1;
        report();
      });
    };
    const realSend = XMLHttpRequest.prototype.send;
    /** @param {Document | XMLHttpRequestBodyInit | null} [body] */
    XMLHttpRequest.prototype.send = function (body) {
      fetches += 1;
      report();
      this.addEventListener("loadend", () => {
        fetches -= 1;
        report();
      }, { once: true });
      return realSend.call(this, body);
    };
    new MutationObserver(report).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    // Images and fonts end their loading with no mutation: their events do (load and error do not bubble).
    window.addEventListener("load", report, true);
    window.addEventListener("error", report, true);
    if (document.fonts) document.fonts.addEventListener("loadingdone", report);
    // The host's message (a tool result, say) has been handled once a task queued behind it runs.
    const handled = () => realSetTimeout(report, 0);
    window.addEventListener("message", (event) => {
      if (event.source === window.parent) handled();
    });
    report();
    return { handled };
  }
})();
