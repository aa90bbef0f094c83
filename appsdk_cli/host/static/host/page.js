// @ts-check
// The host page's own objects, made once at start: what its URL says, its events, its traffic
// recorder, its requests to the server, and (once the session is loaded) the host it plays.

import { createEventHub, HISTORY_LIMIT } from "./events.js";
import { createTrafficRecorder } from "./traffic.js";

/**
 * @typedef {object} Page
 * @property {URLSearchParams} params the page's query at start
 * @property {string | null} run the run this page shows (absent: the preview's single session)
 * @property {boolean} embed the workbench's widget area: only the widget shows
 * @property {boolean} screenshot `appsdk preview --screenshot`
 * @property {import("./events.js").EventHub} events
 * @property {ReturnType<typeof createTrafficRecorder>} recorder
 * @property {PreviewRecords} records what window.appsdkPreview exposes as plain data
 * @property {(path: string, body?: unknown) => Promise<any>} api a request to the preview server
 * @property {Promise<void>} logged the last log line told to the page's listeners (addLog)
 * @property {Host | null} host
 */

/**
 * @typedef {object} PreviewRecords
 * @property {boolean} settled
 * @property {AppsdkLogEntry[]} log
 * @property {AppsdkTrafficRecord[]} traffic
 * @property {{ initialized: boolean }} bridge
 */

/**
 * @typedef {object} Health what went wrong inside the widget, and which of its data it read
 * @property {Set<string>} read window.openai's data keys the widget read
 * @property {string[]} errors
 * @property {string[]} loadFailures
 */

/**
 * @typedef {object} Host the host being played, once the session and the profiles are loaded
 * @property {Page} page
 * @property {AppsdkSession} session
 * @property {AppsdkProfileCatalog} catalog
 * @property {import("./context.js").HostState} state
 * @property {HTMLIFrameElement | null} frame the current view's frame (null once removed)
 * @property {MessagePort | null} openaiPort the bootstrap's port (window.openai and its reports)
 * @property {{ html: string, sandbox: string, csp?: McpUiResourceCsp } | null} resource what the
 *   sandbox proxy gets in ui/notifications/sandbox-resource-ready once it says it is ready
 * @property {import("./bridge.js").Bridge} bridge the current view's MCP Apps endpoint
 * @property {Health} health
 * @property {import("./view.js").Timing} timing for "settled"
 * @property {boolean} loaded a view was loaded at least once
 * @property {boolean} [documentPending] the current view's document was built while the call was in
 *   flight, so its window.openai globals lack the result (openai.js connectOpenai catches it up)
 * @property {boolean} [deferredCall] the call held for approval is being made now (calls.js runDeferredCall)
 * @property {HTMLIFrameElement | null} [proxyFrame] the frame whose sandbox proxy said it was ready (a
 *   re-render may hand it a new view: view.js loadWidget)
 * @property {string | null} [swap] a re-render's id while its proxy has not yet said the old view is gone:
 *   until then, whatever comes from that frame is the old view's, and is dropped (main.js)
 * @property {import("./modal.js").Modal | null} [modal] the modal this view opened (requestModal), while open
 * @property {import("./modal.js").Modal} [inModal] on a modal's own view: the modal it shows in
 */

/**
 * @param {Location} where
 * @returns {Page}
 */
export function createPage(where) {
  const params = new URLSearchParams(where.search);
  const run = params.get("run");
  return {
    params,
    run,
    embed: params.get("embed") === "1",
    screenshot: params.get("screenshot") === "1",
    events: createEventHub({ limit: HISTORY_LIMIT }),
    recorder: createTrafficRecorder({ run }),
    records: { settled: false, log: [], traffic: [], bridge: { initialized: false } },
    api: (path, body) => request(apiPath(path, where.href, run), body),
    logged: Promise.resolve(),
    host: null,
  };
}

/**
 * A link a widget gave, if it is one the host page may put in an anchor: http(s) only. A javascript: or
 * data: URL clicked in the host page would run with the host's origin.
 * @param {unknown} link
 * @returns {string | null}
 */
export function webLink(link) {
  try {
    const url = new URL(String(link));
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * Every /api/* request names the run this page shows.
 * @param {string} path
 * @param {string} base
 * @param {string | null} run
 */
export function apiPath(path, base, run) {
  const url = new URL(path, base);
  if (run !== null) url.searchParams.set("run", run);
  return url.pathname + url.search;
}

/**
 * @param {string} path
 * @param {unknown} body a POST's JSON body; undefined: a GET
 */
async function request(path, body) {
  const init =
    body === undefined
      ? {}
      : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, init);
  const answer = await response.json().catch(() => ({ error: { message: `HTTP ${response.status}` } }));
  if (!response.ok || answer.error) throw new Error((answer.error && answer.error.message) || `HTTP ${response.status}`);
  return answer;
}

/**
 * @param {Page} page
 * @param {AppsdkTrafficRecord | null} record
 */
export function keepTraffic(page, record) {
  if (!record) return;
  page.records.traffic.push(record);
  if (page.records.traffic.length > HISTORY_LIMIT) page.records.traffic.shift();
  page.events.emit("traffic", record);
}

/**
 * A value for a log line: JSON, cut at 300 characters.
 * @param {unknown} value
 */
export const short = (value) => {
  const text = JSON.stringify(value);
  return text && text.length > 300 ? text.slice(0, 300) + "…" : String(text);
};

/** @param {string} id */
export function $(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the host page has no #${id}`);
  return element;
}

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} kind
 * @returns {T}
 */
export function element(id, kind) {
  const found = $(id);
  if (!(found instanceof kind)) throw new Error(`#${id} is not a ${kind.name}`);
  return found;
}

/**
 * A line of the host log: on the page, to listeners, and to the terminal.
 * @param {Page} page
 * @param {string} kind
 * @param {AppsdkLogLevel | string} level
 * @param {string} message
 * @param {string} [link]
 */
export function addLog(page, kind, level, message, link) {
  const entry = { kind, level, message };
  page.records.log.push(entry);
  const item = document.createElement("li");
  item.dataset.kind = kind;
  item.dataset.level = level;
  const label = document.createElement("b");
  label.textContent = kind;
  const text = document.createTextNode(message);
  item.append(label, text);
  const href = link ? webLink(link) : null;
  if (href) {
    const anchor = document.createElement("a");
    anchor.href = href;
    anchor.target = "_blank";
    anchor.rel = "noopener noreferrer";
    anchor.textContent = " open";
    item.append(anchor);
  }
  $("log").append(item);
  // The server names a line of the widget's document as its template's (host/place.py, the one mapping):
  // the page and its listeners (the workbench's Log panel) show the line as it answered, in the order the
  // lines came. The terminal shows the same log; losing a line there is no reason to disturb the page.
  const named = page.api("/api/log", entry).then(
    (answer) => {
      if (answer && typeof answer.message === "string") entry.message = text.data = answer.message;
    },
    () => {},
  );
  page.logged = page.logged
    .then(() => named)
    .then(() => page.events.emit("log", entry))
    .catch(() => {});
}
