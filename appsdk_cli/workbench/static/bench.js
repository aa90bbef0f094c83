// @ts-check
// The workbench page's state, made once at start: the user's preferences (kept in localStorage), what
// the server said (info, tools, profiles), the runs on the page, and requests to the server.

/** @typedef {import("./frames.js").HostFrame} HostFrame */

/**
 * @typedef {object} PageRun one run on the page
 * @property {AppsdkRun} data the newest the page heard
 * @property {HTMLElement} element
 * @property {HostFrame[]} frames one per profile shown
 * @property {boolean} [inFlight] its widget shows while the call is still running
 * @property {boolean} [reloadTemplate] the next result goes to a view of the template read afresh
 * @property {{ task?: string, progress?: string, log?: string }} [notes] the MCP task, the newest progress and log line of the call in flight
 * @property {string} [rerunNote] the page made the call again by itself after a save: said beside its outcome
 */

/**
 * @typedef {object} Prefs
 * @property {"auto" | "light" | "dark"} scheme the page's colour scheme
 * @property {string} profile "" until the user picks one: then the server's default (--profile) applies
 * @property {boolean} [pickedProfile]
 * @property {boolean} sideBySide
 * @property {string} device "" until the user picks one, as profile
 * @property {boolean} [pickedDevice]
 * @property {string} theme the widgets' theme: auto (the page's), light or dark
 * @property {string} locale
 * @property {string} timeZone
 * @property {boolean} rerun re-run the last call when the server changes
 * @property {boolean} inspector
 * @property {number} [inspectorWidth]
 * @property {string} [permissions] ChatGPT's permission mode the frames play; "" or absent: the server's default
 * @property {boolean} [noUi] a host without widgets: each run's text, no frame (unset: --no-ui decides)
 */

/**
 * @typedef {object} Bench
 * @property {Prefs} prefs
 * @property {AppsdkWorkbenchInfo | null} info
 * @property {AppsdkWorkbenchTool[]} tools
 * @property {AppsdkWorkbenchTool | null} selected
 * @property {ReturnType<typeof import("./form.js").createForm> | null} form
 * @property {Map<string, PageRun>} runs id → run
 * @property {{ name: string, label: string }[]} profiles
 * @property {boolean} profilesServed
 * @property {AppsdkProfileCatalog | null} catalog
 * @property {EventSource | null} events
 * @property {number} reloads
 * @property {AppsdkReloadEvent | null} lastReload the newest reload pushed, its news merged in
 * @property {number} trafficSeq the newest server traffic record shown
 * @property {ReturnType<typeof import("./panels.js").createPanels>} panels
 * @property {(event: KeyboardEvent) => void} onKey the page's keys, also pressed inside a host frame
 */

export const FALLBACK_PROFILES = [
  { name: "chatgpt", label: "ChatGPT" },
  { name: "mcp-apps", label: "MCP Apps host" },
  { name: "claude", label: "Claude-like" },
];
export const MODES = /** @type {McpUiDisplayMode[]} */ (["inline", "pip", "fullscreen"]);
const PREFS_KEY = "appsdk-workbench";

/** @param {string} id */
export function $(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the workbench page has no #${id}`);
  return found;
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
 * @param {Pick<Bench, "panels" | "onKey">} parts
 * @returns {Bench}
 */
export function createBench({ panels, onKey }) {
  return {
    prefs: loadPrefs(),
    info: null,
    tools: [],
    selected: null,
    form: null,
    runs: new Map(),
    profiles: FALLBACK_PROFILES,
    profilesServed: false,
    catalog: null,
    events: null,
    reloads: 0,
    lastReload: null,
    trafficSeq: 0,
    panels,
    onKey,
  };
}

// ---- preferences ----------------------------------------------------------------------------------

/** @returns {Prefs} */
function loadPrefs() {
  /** @type {Prefs} */
  const defaults = { scheme: "auto", profile: "", sideBySide: false, device: "", theme: "auto", locale: "", timeZone: "", rerun: true, inspector: true };
  try {
    return { ...defaults, ...JSON.parse(localStorage.getItem(PREFS_KEY) || "{}") };
  } catch {
    return defaults;
  }
}

/** @param {Prefs} prefs */
export function savePrefs(prefs) {
  try {
    const saved = { ...prefs };
    if (!prefs.pickedProfile) saved.profile = "";
    if (!prefs.pickedDevice) saved.device = "";
    localStorage.setItem(PREFS_KEY, JSON.stringify(saved));
  } catch {
    /* private mode: preferences last for this page only */
  }
}

/** @param {Prefs} prefs */
function schemeIsDark(prefs) {
  if (prefs.scheme === "dark") return true;
  if (prefs.scheme === "light") return false;
  return matchMedia("(prefers-color-scheme: dark)").matches;
}

/** @param {Prefs} prefs @returns {McpUiTheme} */
export function widgetTheme(prefs) {
  if (prefs.theme === "light" || prefs.theme === "dark") return prefs.theme;
  return schemeIsDark(prefs) ? "dark" : "light";
}

/**
 * What every host frame is asked to show.
 * @param {Bench} bench
 */
export function hostOptions(bench) {
  const { prefs } = bench;
  return {
    theme: widgetTheme(prefs),
    locale: prefs.locale || (bench.info && bench.info.defaults.locale) || "en-US",
    timeZone: prefs.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone,
    device: prefs.device,
    permissions: prefs.permissions || (bench.info && bench.info.defaults.permissions) || "never",
    noUi: prefs.noUi ?? Boolean(bench.info && bench.info.defaults.noUi),
  };
}

// ---- talking to the server ------------------------------------------------------------------------

/**
 * @param {string} path
 * @param {unknown} [body] a POST's JSON body; undefined: a GET
 * @returns {Promise<any>}
 */
export async function api(path, body) {
  const response = await fetch(path, body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const answer = await response.json().catch(() => ({ error: { message: `HTTP ${response.status}` } }));
  if (!response.ok) throw new Error((answer.error && answer.error.message) || `HTTP ${response.status}`);
  return answer;
}

/**
 * An error's message. Duck-typed: an error from a host frame's window is not an instance of this
 * window's Error.
 * @param {unknown} error
 */
export const messageOf = (error) =>
  error && typeof error === "object" && "message" in error && typeof error.message === "string" ? error.message : String(error);
