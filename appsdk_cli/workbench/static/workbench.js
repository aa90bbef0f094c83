// appsdk workbench: the page. Tools and a generated form on the left, the runs as a conversation in
// the middle (each widget is the preview's own host page, /host?run=ID&embed=1, one per profile), and
// the inspector on the right (traffic, what the model reads, widget state, CSP, host log).
// The server pushes run outcomes, tool lists, dev reloads and MCP traffic over /api/events (SSE).

import { createForm } from "./form.js";
import { createPanels } from "./panels.js";

const $ = (id) => document.getElementById(id);
const FALLBACK_PROFILES = [
  { name: "chatgpt", label: "ChatGPT" },
  { name: "mcp-apps", label: "MCP Apps host" },
  { name: "claude", label: "Claude-like" },
];
const DEVICES = ["desktop", "tablet", "mobile"];
const MODES = ["inline", "pip", "fullscreen"];
const PREFS_KEY = "appsdk-workbench";

const prefs = loadPrefs();
const page = {
  info: null,
  tools: [],
  selected: null,
  form: null,
  runs: new Map(), // id → { data, element, frames: [HostFrame] }
  profiles: FALLBACK_PROFILES,
  profilesServed: false,
  events: null,
  reloads: 0,
  trafficSeq: 0,
};
// For tests and scripts: the page's own state, read without scraping the DOM.
window.appsdkWorkbench = {
  ready: false,
  reloads: 0,
  runs: () => [...page.runs.values()].map((r) => r.data),
  frames: (id) => (page.runs.get(id) ? page.runs.get(id).frames.map((f) => f.describe()) : []),
  page,
};

const panels = createPanels({ onApplyState: applyWidgetState, onReadState: readWidgetState });

// ---- preferences ----------------------------------------------------------------------------------

function loadPrefs() {
  // profile and device: "" until the user picks one, then the server's defaults (--profile, --device) apply.
  const defaults = { scheme: "auto", profile: "", sideBySide: false, device: "", theme: "auto", locale: "", timeZone: "", rerun: true, inspector: true };
  try {
    return { ...defaults, ...JSON.parse(localStorage.getItem(PREFS_KEY) || "{}") };
  } catch {
    return defaults;
  }
}

function savePrefs() {
  try {
    const saved = { ...prefs };
    if (!prefs.pickedProfile) saved.profile = "";
    if (!prefs.pickedDevice) saved.device = "";
    localStorage.setItem(PREFS_KEY, JSON.stringify(saved));
  } catch {
    /* private mode: preferences last for this page only */
  }
}

function schemeIsDark() {
  if (prefs.scheme === "dark") return true;
  if (prefs.scheme === "light") return false;
  return matchMedia("(prefers-color-scheme: dark)").matches;
}

function applyScheme() {
  const root = document.documentElement;
  if (prefs.scheme === "auto") delete root.dataset.scheme;
  else root.dataset.scheme = prefs.scheme;
  const label = { auto: "follows the system", light: "light", dark: "dark" }[prefs.scheme];
  $("scheme-toggle").title = `Colour scheme: ${label} (click to change)`;
  $("scheme-toggle").setAttribute("aria-label", `Colour scheme: ${label}`);
}

function widgetTheme() {
  if (prefs.theme === "light" || prefs.theme === "dark") return prefs.theme;
  return schemeIsDark() ? "dark" : "light";
}

function hostOptions() {
  return {
    theme: widgetTheme(),
    locale: prefs.locale || (page.info && page.info.defaults.locale) || "en-US",
    timeZone: prefs.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone,
    device: prefs.device,
  };
}

// ---- talking to the server ------------------------------------------------------------------------

async function api(path, body) {
  const response = await fetch(path, body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const answer = await response.json().catch(() => ({ error: { message: `HTTP ${response.status}` } }));
  if (!response.ok) throw new Error((answer.error && answer.error.message) || `HTTP ${response.status}`);
  return answer;
}

function connectEvents() {
  const source = new EventSource("/api/events");
  page.events = source;
  source.addEventListener("hello", (event) => {
    const hello = JSON.parse(event.data);
    setInfo(hello.info);
    for (const run of hello.runs) upsertRun(run);
    for (const record of hello.traffic || []) serverTraffic(record);
    setConnection("live");
  });
  source.addEventListener("run", (event) => upsertRun(JSON.parse(event.data)));
  source.addEventListener("tools", (event) => setTools(JSON.parse(event.data)));
  source.addEventListener("reload", (event) => onReload(JSON.parse(event.data)));
  source.addEventListener("traffic", (event) => serverTraffic(JSON.parse(event.data)));
  source.addEventListener("error", () => setConnection(source.readyState === EventSource.CLOSED ? "down" : "retrying"));
}

function serverTraffic(record) {
  // The server's records carry a sequence number: one heard twice (the hello's backlog and the live
  // push overlap by a moment, and a reconnect replays) is shown once.
  if (typeof record.seq === "number") {
    if (record.seq <= page.trafficSeq) return;
    page.trafficSeq = record.seq;
  }
  panels.traffic(record);
}

function setConnection(state) {
  const dot = $("connection-dot");
  dot.className = `dot ${state === "live" ? "live" : state === "down" || state === "retrying" ? "down" : ""}`;
  dot.title = { live: "connected: the page follows the server", retrying: "lost the workbench; reconnecting…", down: "the workbench stopped" }[state] || "";
}

function setInfo(info) {
  page.info = info;
  const name = info.serverInfo && info.serverInfo.name ? `${info.serverInfo.name} · ${info.server}` : info.server;
  $("server-name").textContent = name;
  $("server-line").title = `${info.dev ? "appsdk dev: follows every save. " : ""}${info.server}`;
  if (!$("locale").value) $("locale").placeholder = info.defaults.locale;
  panels.setTrafficAvailable(info.traffic);
}

// ---- tools ----------------------------------------------------------------------------------------

function setTools(listing) {
  page.tools = listing.tools || [];
  const error = $("tools-error");
  error.hidden = !listing.error;
  error.textContent = listing.error ? `Could not list the tools: ${listing.error}` : "";
  $("tool-count").textContent = page.tools.length ? String(page.tools.length) : "";
  if (listing.serverInfo && page.info) setInfo({ ...page.info, serverInfo: listing.serverInfo });
  renderToolList();
  if (page.selected) {
    const fresh = page.tools.find((t) => t.name === page.selected.name);
    if (fresh && JSON.stringify(fresh.tool) !== JSON.stringify(page.selected.tool)) selectTool(fresh, { keepValues: true });
    else if (fresh) page.selected = fresh;
  } else if (page.tools.length) {
    selectTool(page.tools.find((t) => t.template) || page.tools[0]);
  }
}

function renderToolList() {
  const filter = $("tool-filter").value.trim().toLowerCase();
  const list = $("tool-list");
  list.replaceChildren();
  for (const tool of page.tools) {
    const haystack = `${tool.name} ${tool.title || ""} ${tool.description || ""}`.toLowerCase();
    if (filter && !haystack.includes(filter)) continue;
    const item = document.createElement("li");
    item.className = "tool-item";
    item.setAttribute("role", "option");
    item.tabIndex = page.selected && page.selected.name === tool.name ? 0 : -1;
    item.dataset.tool = tool.name;
    item.setAttribute("aria-selected", String(Boolean(page.selected && page.selected.name === tool.name)));
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = tool.name;
    const kind = document.createElement("span");
    kind.className = `kind${tool.template ? " widget" : ""}`;
    kind.textContent = tool.template ? "widget" : "text";
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = tool.title || tool.description || "";
    item.append(name, kind, title);
    item.addEventListener("click", () => selectTool(tool));
    item.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        selectTool(tool);
        $("form-pane").querySelector("input, select, textarea, button")?.focus();
      } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        const sibling = event.key === "ArrowDown" ? item.nextElementSibling : item.previousElementSibling;
        if (sibling) sibling.focus();
      }
    });
    list.append(item);
  }
  if (!list.querySelector('[tabindex="0"]') && list.firstElementChild) list.firstElementChild.tabIndex = 0;
}

function badge(text, kind, title) {
  const item = document.createElement("li");
  item.className = `badge${kind ? ` ${kind}` : ""}`;
  item.textContent = text;
  if (title) item.title = title;
  return item;
}

function selectTool(tool, { keepValues = false, values } = {}) {
  const previous = keepValues && page.form ? page.form.value() : null;
  page.selected = tool;
  $("composer-empty").hidden = true;
  $("composer-body").hidden = false;
  $("tool-title").textContent = tool.title || tool.name;
  $("tool-name").textContent = tool.name;
  $("tool-description").textContent = tool.description || "";
  const badges = $("tool-badges");
  badges.replaceChildren();
  if (tool.template) badges.append(badge("widget", "accent", tool.template));
  if (tool.readOnly) badges.append(badge("read-only"));
  if (tool.destructive) badges.append(badge("destructive", "warn"));
  if (tool.openWorld) badges.append(badge("open world"));
  if (tool.idempotent) badges.append(badge("idempotent"));
  if (tool.widgetAccessible) badges.append(badge("widget may call", "", 'openai/widgetAccessible: the widget may call this tool'));
  if (!tool.visibility.includes("model")) badges.append(badge("app only", "warn", "_meta.ui.visibility leaves out the model"));
  if (tool.fileParams.length) badges.append(badge(`files: ${tool.fileParams.join(", ")}`, "", "openai/fileParams"));
  if (tool.invoking) badges.append(badge(`“${tool.invoking}”`, "", "openai/toolInvocation/invoking"));
  page.form = createForm(tool.tool.inputSchema || { type: "object" }, { fileParams: tool.fileParams, upload: uploadFile });
  page.form.onChange(() => syncJsonFromForm());
  $("form-pane").replaceChildren(page.form.element);
  if (values) page.form.setValue(values);
  else if (previous) page.form.setValue(previous);
  syncJsonFromForm();
  $("form-problems").textContent = "";
  $("tool-json").textContent = JSON.stringify(tool.tool, null, 2);
  renderToolList();
}

async function uploadFile(file) {
  // Into the host's file store (the same one window.openai.uploadFile uses), base64 over JSON.
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return api("/api/files", { fileName: file.name, mimeType: file.type || "application/octet-stream", data: btoa(binary) });
}

function syncJsonFromForm() {
  $("json-editor").value = JSON.stringify(page.form.value(), null, 2);
  $("json-message").textContent = "";
  $("json-editor").removeAttribute("aria-invalid");
}

function syncFormFromJson() {
  const text = $("json-editor").value;
  try {
    const value = text.trim() ? JSON.parse(text) : {};
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("the arguments must be a JSON object");
    page.form.setValue(value);
    $("json-message").textContent = "";
    $("json-editor").removeAttribute("aria-invalid");
    return value;
  } catch (error) {
    $("json-message").textContent = error.message;
    $("json-editor").setAttribute("aria-invalid", "true");
    return null;
  }
}

function showEditor(which) {
  const json = which === "json";
  $("tool-form-area").classList.toggle("show-json", json);
  $("tab-form").setAttribute("aria-selected", String(!json));
  $("tab-json").setAttribute("aria-selected", String(json));
  if (json) syncJsonFromForm();
  else syncFormFromJson();
}

// ---- runs -----------------------------------------------------------------------------------------

async function submitRun(event) {
  if (event) event.preventDefault();
  if (!page.selected) return;
  const jsonMode = $("tool-form-area").classList.contains("show-json");
  let args;
  if (jsonMode) {
    args = syncFormFromJson();
    if (args === null) return;
  }
  const problems = page.form.validate();
  $("form-problems").textContent = problems.length ? `Fix ${problems.length === 1 ? "this" : "these"} first: ${problems.join("; ")}` : "";
  if (problems.length) {
    const first = $("form-pane").querySelector(".field.invalid .control, .field.invalid input, .field.invalid select");
    if (first && !jsonMode) first.focus();
    return;
  }
  if (!jsonMode) args = page.form.value();
  const { run } = await api("/api/runs", { tool: page.selected.name, arguments: args, locale: hostOptions().locale }).catch((error) => {
    $("form-problems").textContent = error.message;
    return {};
  });
  if (run) {
    upsertRun(run);
    page.runs.get(run.id).element.scrollIntoView({ block: "start", behavior: "smooth" });
  }
}

function callText(data) {
  const node = document.createDocumentFragment();
  const tool = document.createElement("span");
  tool.className = "tool";
  tool.textContent = data.tool;
  const args = Object.keys(data.arguments || {}).length ? JSON.stringify(data.arguments) : "";
  node.append(tool, `(${args})`);
  return node;
}

function statusText(data) {
  const seconds = data.durationMs != null ? `${(data.durationMs / 1000).toFixed(2)} s` : "";
  switch (data.status) {
    case "running":
      return [data.invoking || `Calling ${data.tool}…`, ""];
    case "done":
      return [data.invoked || (data.result && data.result.isError ? `${data.tool} returned an error` : `Called ${data.tool}`), seconds];
    case "cancelled":
      return ["Cancelled", seconds];
    case "invalid":
      return ["Not sent: the arguments do not fit the tool", ""];
    default:
      return ["The call failed", seconds];
  }
}

function upsertRun(data) {
  let run = page.runs.get(data.id);
  const previous = run ? run.data : null;
  // The POST's answer and the pushed events race: keep the newest.
  if (previous && (data.version ?? 0) < (previous.version ?? 0)) return;
  if (!run) {
    const element = $("run-template").content.firstElementChild.cloneNode(true);
    run = { data, element, frames: [] };
    page.runs.set(data.id, run);
    element.dataset.run = data.id;
    element.querySelector('[data-action="rerun"]').addEventListener("click", () => rerun(data.id));
    element.querySelector('[data-action="cancel"]').addEventListener("click", () => api("/api/runs/cancel", { run: data.id }).catch(() => {}));
    element.querySelector('[data-action="edit"]').addEventListener("click", () => editArguments(data.id));
    element.querySelector('[data-action="reload"]').addEventListener("click", () => reloadRun(data.id));
    const runs = $("runs");
    const after = [...runs.children].find((child) => page.runs.get(child.dataset.run).data.sequence > data.sequence);
    runs.insertBefore(element, after || null);
    $("runs-empty").hidden = true;
  }
  run.data = data;
  const element = run.element;
  element.dataset.status = data.status;
  element.dataset.widget = data.widget ? "1" : "0";
  element.querySelector(".call-text").replaceChildren(callText(data));
  const [text, meta] = statusText(data);
  element.querySelector(".status-text").textContent = text;
  element.querySelector(".run-meta").textContent = [meta, data.calls > 1 ? `run ${data.calls}×` : ""].filter(Boolean).join(" · ");
  const problem = element.querySelector(".run-problem");
  const warnings = data.warnings || [];
  problem.hidden = !data.error && !warnings.length;
  problem.classList.toggle("warn", !data.error);
  problem.textContent = data.error || warnings.join("\n");
  renderModelText(element, data);
  // A first call with a widget shows it while the call is in flight, as ChatGPT does: the views get
  // tool-input now, then tool-result (newResult) or tool-cancelled (cancelCall) when the run ends.
  if (data.status === "running" && data.widget && !data.calls && !run.frames.length) {
    run.inFlight = true;
    renderFrames(run);
  }
  const finishedNow = data.status === "done" && (!previous || previous.status !== "done" || previous.calls !== data.calls);
  if (finishedNow) {
    panels.modelResult(data);
    if (data.widget && run.inFlight) {
      run.inFlight = false;
      for (const frame of run.frames) frame.newResult(data.result);
    } else if (data.widget) renderFrames(run, { fresh: Boolean(previous && previous.calls && previous.calls !== data.calls) });
    else clearFrames(run);
  } else if (run.inFlight && data.status !== "running") {
    run.inFlight = false;
    for (const frame of run.frames) frame.cancelCall(data.error || `the call ${data.status === "cancelled" ? "was cancelled" : "failed"}`);
  }
  panels.setRuns([...page.runs.values()].filter((r) => r.data.widget).map((r) => r.data));
}

function renderModelText(element, data) {
  const box = element.querySelector(".model-content");
  const details = element.querySelector(".model-text");
  box.replaceChildren();
  const result = data.result;
  details.hidden = !result;
  if (!result) return;
  const texts = (result.content || []).filter((b) => b && b.type === "text").map((b) => b.text);
  const label = (text) => Object.assign(document.createElement("div"), { className: "label", textContent: text });
  box.append(label("content"));
  for (const text of texts.length ? texts : ["(no text content)"]) box.append(Object.assign(document.createElement("p"), { textContent: text }));
  const others = (result.content || []).filter((b) => b && b.type !== "text");
  if (others.length) box.append(Object.assign(document.createElement("p"), { textContent: `+ ${others.length} non-text block${others.length > 1 ? "s" : ""} (${others.map((b) => b.type).join(", ")})` }));
  if (result.structuredContent !== undefined) {
    box.append(label("structuredContent"));
    box.append(Object.assign(document.createElement("pre"), { className: "json", textContent: JSON.stringify(result.structuredContent, null, 2) }));
  }
  if (!data.widget || result.isError) details.open = true;
}

function editArguments(id) {
  const run = page.runs.get(id);
  const tool = page.tools.find((t) => t.name === run.data.tool);
  if (!tool) return;
  selectTool(tool, { values: run.data.arguments });
  $("form-pane").querySelector("input, select, textarea")?.focus();
}

async function rerun(id, { template = false } = {}) {
  const pending = page.runs.get(id);
  if (pending) pending.reloadTemplate = template;
  await api("/api/runs/rerun", { run: id, locale: hostOptions().locale }).then(({ run }) => upsertRun(run)).catch((error) => {
    const run = page.runs.get(id);
    if (run) {
      const problem = run.element.querySelector(".run-problem");
      problem.hidden = false;
      problem.textContent = error.message;
    }
  });
}

function reloadRun(id) {
  // "Reload widget": call the tool again and render the fresh result in a freshly read template,
  // keeping the widget state (the old preview's button reloaded the page and showed the old result).
  return rerun(id, { template: true });
}

async function clearRuns() {
  for (const run of page.runs.values()) for (const frame of run.frames) await frame.teardown();
  for (const run of page.runs.values()) run.element.remove();
  page.runs.clear();
  await api("/api/runs/clear", {}).catch(() => {});
  $("runs-empty").hidden = false;
  panels.setRuns([]);
}

// ---- host frames ----------------------------------------------------------------------------------

function frameProfiles() {
  if (!prefs.sideBySide) return [prefs.profile];
  const names = page.profiles.map((p) => p.name);
  const ordered = [prefs.profile, ...names.filter((n) => n !== prefs.profile)];
  return ordered.slice(0, 3);
}

function clearFrames(run) {
  for (const frame of run.frames) frame.teardown();
  run.frames = [];
  run.element.querySelector(".frames").replaceChildren();
}

function renderFrames(run, { fresh } = {}) {
  const wanted = frameProfiles();
  const same = run.frames.length === wanted.length && run.frames.every((f, i) => f.profile === wanted[i]);
  if (same && fresh) {
    // A re-run: the same views get the new result (and a template read afresh), keeping their state.
    const template = Boolean(run.reloadTemplate);
    run.reloadTemplate = false;
    for (const frame of run.frames) frame.newResult(run.data.result, { template });
    return;
  }
  if (same && run.frames.length) return;
  clearFrames(run);
  const box = run.element.querySelector(".frames");
  box.classList.toggle("single", wanted.length === 1);
  for (const profile of wanted) {
    const frame = new HostFrame(run, profile);
    run.frames.push(frame);
    box.append(frame.element);
  }
}

function rerenderAllFrames() {
  for (const run of page.runs.values()) if (run.data.widget && run.data.status === "done") renderFrames(run);
}

class HostFrame {
  constructor(run, profile) {
    this.run = run;
    this.profile = profile;
    this.mode = "inline";
    this.api = null;
    this.height = 160;
    this.element = document.createElement("div");
    this.element.className = "host-frame";
    this.element.dataset.profile = profile;
    this.element.dataset.device = prefs.device;
    this.element.dataset.mode = "inline";
    const head = document.createElement("div");
    head.className = "host-frame-head";
    const name = document.createElement("span");
    name.className = "profile-name";
    name.textContent = profileLabel(profile);
    this.note = document.createElement("span");
    this.note.className = "frame-note";
    const modes = document.createElement("div");
    modes.className = "mode-controls";
    modes.setAttribute("role", "group");
    modes.setAttribute("aria-label", "Display mode");
    this.modeButtons = {};
    for (const mode of MODES) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = mode;
      button.setAttribute("aria-pressed", String(mode === "inline"));
      button.title = `Display mode ${mode}`;
      button.addEventListener("click", () => this.setMode(mode));
      this.modeButtons[mode] = button;
      modes.append(button);
    }
    this.exit = document.createElement("button");
    this.exit.type = "button";
    this.exit.className = "button small exit-fullscreen";
    this.exit.textContent = "Exit fullscreen";
    this.exit.title = "Back to inline (Esc)";
    this.exit.addEventListener("click", () => this.setMode("inline"));
    const approval = document.createElement("span");
    approval.className = "approval";
    approval.hidden = !prefs.approval;
    const approve = Object.assign(document.createElement("button"), { type: "button", className: "button small primary", textContent: "Approve" });
    approve.title = "Release the held tool-input to the widget";
    const decline = Object.assign(document.createElement("button"), { type: "button", className: "button small ghost", textContent: "Decline" });
    decline.title = "Send tool-cancelled instead";
    approve.addEventListener("click", async () => {
      if (this.api && this.api.approve) await this.api.approve();
      approval.hidden = true;
    });
    decline.addEventListener("click", async () => {
      if (this.api && this.api.cancel) await this.api.cancel("the user declined");
      approval.hidden = true;
    });
    const partial = Object.assign(document.createElement("button"), { type: "button", className: "button small ghost", textContent: "Stream input" });
    partial.title = "Send tool-input-partial as the model would while writing the arguments: one more argument each time";
    partial.addEventListener("click", async () => {
      if (!this.api || !this.api.sendPartialInput) return;
      const entries = Object.entries(this.run.data.arguments || {});
      for (let count = 0; count <= entries.length; count++) {
        try {
          await this.api.sendPartialInput(Object.fromEntries(entries.slice(0, count)));
        } catch (error) {
          this.note.textContent = error.message;
          return;
        }
      }
    });
    approval.append(partial, approve, decline);
    head.append(name, this.note, approval, modes, this.exit);
    this.box = document.createElement("div");
    this.box.className = "frame-box";
    this.iframe = document.createElement("iframe");
    this.iframe.title = `${run.data.tool} widget, ${profileLabel(profile)} profile`;
    this.iframe.addEventListener("load", () => this.wire());
    this.box.append(this.iframe);
    this.element.append(head, this.box);
    this.iframe.src = this.url();
  }

  url() {
    const options = hostOptions();
    const query = new URLSearchParams({
      run: this.run.data.id,
      profile: this.profile,
      embed: "1",
      theme: options.theme,
      locale: options.locale,
      tz: options.timeZone,
      device: options.device,
      mode: this.mode,
      displayMode: this.mode,
    });
    if (prefs.approval) query.set("approval", "1");
    return `/host?${query}`;
  }

  describe() {
    return { profile: this.profile, mode: this.mode, device: this.element.dataset.device, height: this.height, api: Boolean(this.api && this.api.on) };
  }

  hostWindow() {
    return this.iframe.contentWindow;
  }

  wire() {
    const win = this.hostWindow();
    if (!win || !win.document || !win.appsdkPreview) return;
    const api = win.appsdkPreview;
    this.api = api;
    const source = { run: this.run.data.id, profile: this.profile, tool: this.run.data.tool };
    win.document.addEventListener("keydown", (event) => onKey(event));
    if (typeof api.on === "function") {
      this.note.textContent = "";
      api.on("log", (entry) => panels.log(entry, source));
      api.on("model", (entry) => panels.model(entry, source));
      api.on("widget-state", (entry) => panels.widgetState(entry.state, source));
      api.on("csp", (entry) => panels.csp(entry, source));
      api.on("traffic", (record) => panels.traffic({ run: source.run, ...record }));
      api.on("display-mode", (entry) => this.showMode(entry.mode));
      api.on("size", (entry) => this.setHeight(entry.height));
      const profile = page.catalog && page.catalog.profiles && page.catalog.profiles[this.profile];
      this.offerModes(profile && profile.displayModes);
      if (this.cancelOnWire !== undefined) this.cancelCall(this.cancelOnWire);
      this.cancelOnWire = undefined;
    } else {
      this.fallbackWiring(win, api, source);
    }
  }

  fallbackWiring(win, api, source) {
    // A host page without the embed API (appsdkPreview.on): hide its own chrome, follow its size and
    // display mode by observing it (same origin), and read its log as it grows.
    this.note.textContent = "";
    const doc = win.document;
    for (const id of ["bar", "panel", "request", "model-text"]) {
      const node = doc.getElementById(id);
      if (node) node.style.display = "none";
    }
    const conversation = doc.getElementById("conversation");
    if (conversation) {
      conversation.style.padding = "0";
      conversation.style.overflow = "hidden";
    }
    const status = doc.getElementById("status");
    if (status) status.style.display = "none";
    const stage = doc.getElementById("stage");
    if (stage) {
      new win.ResizeObserver(() => this.setHeight(stage.getBoundingClientRect().height)).observe(stage);
      new win.MutationObserver(() => this.showMode(stage.dataset.mode)).observe(stage, { attributes: true, attributeFilter: ["data-mode"] });
    }
    const log = api.log;
    if (Array.isArray(log)) {
      for (const entry of log) this.fallbackEntry(entry, source);
      const push = log.push.bind(log);
      log.push = (...entries) => {
        entries.forEach((entry) => this.fallbackEntry(entry, source));
        return push(...entries);
      };
    }
  }

  fallbackEntry(entry, source) {
    panels.log(entry, source);
    if (entry.kind === "csp") panels.csp({ directive: "", blockedURI: "", message: entry.message }, source);
    const model = /^(ui\/update-model-context|ui\/message|sendFollowUpMessage)/.exec(entry.message);
    if (model) panels.model({ kind: model[1], params: { text: entry.message }, time: Date.now() }, source);
  }

  setHeight(height) {
    if (this.mode === "fullscreen" || typeof height !== "number" || !isFinite(height)) return;
    this.height = Math.max(40, Math.ceil(height));
    this.iframe.style.height = `${this.height}px`;
  }

  showMode(mode) {
    if (!MODES.includes(mode) || mode === this.mode) return;
    const was = this.mode;
    this.mode = mode;
    this.element.dataset.mode = mode;
    for (const [name, button] of Object.entries(this.modeButtons)) button.setAttribute("aria-pressed", String(name === mode));
    if (mode === "fullscreen") {
      this.iframe.style.height = "";
      this.exit.focus();
    } else {
      this.iframe.style.height = `${this.height}px`;
      if (was === "fullscreen") this.modeButtons.fullscreen.focus();
    }
  }

  async setMode(mode) {
    const api = this.api;
    if (api && typeof api.setDisplayMode === "function") {
      // The host decides (a profile may lack a mode); its display-mode event moves this frame.
      try {
        await api.setDisplayMode(mode);
        this.showMode(mode);
        this.note.textContent = "";
      } catch (error) {
        this.note.textContent = error.message;
      }
      return;
    }
    this.showMode(mode);
    // Without the embed API: drive the host page's own control, which tells the widget.
    const select = this.hostWindow() && this.hostWindow().document.getElementById("display-mode");
    if (select) {
      select.value = mode;
      select.dispatchEvent(new Event("change"));
    }
  }

  offerModes(modes) {
    for (const [name, button] of Object.entries(this.modeButtons)) {
      const offered = !modes || modes.includes(name);
      button.disabled = !offered;
      button.title = offered ? `Display mode ${name}` : `${profileLabel(this.profile)} has no ${name} mode`;
    }
  }

  async command(name, value, selectId) {
    const api = this.api;
    if (api && typeof api[name] === "function") return api[name](value);
    const control = selectId && this.hostWindow() && this.hostWindow().document.getElementById(selectId);
    if (control) {
      control.value = value;
      control.dispatchEvent(new Event("change"));
      return undefined;
    }
    this.reload(); // the host page reads theme, locale, time zone and device from its URL
    return undefined;
  }

  reload() {
    this.iframe.src = this.url();
  }

  async reloadTemplate() {
    const api = this.api;
    if (api && typeof api.reloadTemplate === "function") return api.reloadTemplate();
    const button = this.hostWindow() && this.hostWindow().document.getElementById("reload");
    if (button) button.click();
    else this.reload();
    return undefined;
  }

  async newResult(result, { template = false } = {}) {
    // A re-run of the same call: the live view gets the new result (tool-result, toolOutput) and keeps
    // its state; with `template`, a view of the template read afresh replaces it, with that result.
    const api = this.api;
    if (api && typeof api.sendResult === "function" && typeof api.reloadTemplate === "function") {
      await api.sendResult(result);
      if (template) await api.reloadTemplate();
      return undefined;
    }
    this.reload();
    return undefined;
  }

  async cancelCall(reason) {
    // The run ended without a result: the view gets tool-cancelled (now, or once its host page is wired).
    const api = this.api;
    if (api && typeof api.cancel === "function") {
      await api.cancel(reason).catch(() => {});
      return;
    }
    this.cancelOnWire = reason;
  }

  async teardown() {
    const api = this.api;
    if (api && typeof api.teardown === "function") {
      try {
        await api.teardown();
      } catch {
        /* the view is going away anyway */
      }
    }
  }
}

function profileLabel(name) {
  const profile = page.profiles.find((p) => p.name === name);
  return (profile && (profile.label || profile.title)) || name;
}

function everyFrame() {
  return [...page.runs.values()].flatMap((run) => run.frames);
}

// ---- dev reloads ----------------------------------------------------------------------------------

async function onReload(event) {
  page.reloads += 1;
  window.appsdkWorkbench.reloads = page.reloads;
  window.appsdkWorkbench.lastReloadAt = Date.now(); // for benchmarks/workbench.py: when the push arrived
  const banner = $("reload-banner");
  banner.hidden = false;
  banner.className = `banner${event.appOk ? "" : " error"}`;
  const files = (event.files || []).slice(0, 3).join(", ") + ((event.files || []).length > 3 ? " …" : "");
  $("reload-text").textContent = event.appOk
    ? `Reloaded${event.seconds != null ? ` in ${event.seconds.toFixed(2)} s` : ""}${files ? ` (${files})` : ""}`
    : `The app failed to import after saving ${files}; the widgets keep the last good version (see the terminal).`;
  const notice = $("reload-notice");
  notice.replaceChildren();
  if (event.notice) {
    // The notice is ours (the same text the terminal shows), with **bold** for the control to press.
    for (const [index, part] of event.notice.split("**").entries()) {
      notice.append(index % 2 ? Object.assign(document.createElement("b"), { textContent: part }) : part);
    }
  }
  if (!event.appOk) return;
  const done = [...page.runs.values()].filter((run) => run.data.status === "done");
  const last = done.sort((a, b) => b.data.sequence - a.data.sequence)[0];
  const changedTools = event.tools ? [...(event.tools.changed || []), ...(event.tools.added || [])] : [];
  const rerunLast = last && $("rerun-on-change").checked && (event.codeChanged || changedTools.includes(last.data.tool));
  if (rerunLast) rerun(last.data.id, { template: true });
  for (const run of done) {
    if (rerunLast && run === last) continue;
    for (const frame of run.frames) frame.reloadTemplate();
  }
}

// ---- widget state ---------------------------------------------------------------------------------

async function readWidgetState(runId) {
  const run = page.runs.get(runId);
  const frame = run && run.frames[0];
  if (frame && frame.api && typeof frame.api.getWidgetState === "function") return frame.api.getWidgetState();
  const answer = await api(`/api/widget-state?run=${encodeURIComponent(runId)}`);
  return answer.state;
}

async function applyWidgetState(runId, state) {
  const run = page.runs.get(runId);
  if (!run) return;
  const live = run.frames.filter((f) => f.api && typeof f.api.setWidgetState === "function");
  if (live.length) {
    for (const frame of live) await frame.api.setWidgetState(state);
    return;
  }
  await api(`/api/widget-state?run=${encodeURIComponent(runId)}`, { state });
  for (const frame of run.frames) frame.reload(); // the widget reads its state when it loads
}

// ---- host controls --------------------------------------------------------------------------------

async function loadProfiles() {
  try {
    const answer = await api("/api/profiles");
    page.catalog = answer;
    const list = Array.isArray(answer) ? answer : Array.isArray(answer.profiles) ? answer.profiles : Object.entries(answer.profiles || {}).map(([name, p]) => ({ name, ...p }));
    if (list.length) {
      page.profiles = list.map((p) => ({ name: p.name, label: p.label || p.title || p.name }));
      page.profilesServed = true;
    }
  } catch {
    page.profilesServed = false;
  }
  const select = $("profile");
  select.replaceChildren(...page.profiles.map((p) => Object.assign(document.createElement("option"), { value: p.name, textContent: p.label })));
  if (!page.profiles.some((p) => p.name === prefs.profile)) prefs.profile = page.profiles[0].name;
  select.value = prefs.profile;
  select.title = page.profilesServed ? "The host the widget runs in" : "Waiting for host profiles: this build's host page does not serve /api/profiles yet, so every frame is the generic preview host";
}

function wireControls() {
  $("scheme-toggle").addEventListener("click", () => {
    prefs.scheme = { auto: "light", light: "dark", dark: "auto" }[prefs.scheme];
    savePrefs();
    applyScheme();
    if (prefs.theme === "auto") everyFrame().forEach((f) => f.command("setTheme", widgetTheme(), "theme"));
  });
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    if (prefs.scheme === "auto" && prefs.theme === "auto") everyFrame().forEach((f) => f.command("setTheme", widgetTheme(), "theme"));
  });
  $("inspector-toggle").addEventListener("click", () => {
    prefs.inspector = !prefs.inspector;
    savePrefs();
    applyInspector();
  });
  $("profile").addEventListener("change", (event) => {
    prefs.profile = event.target.value;
    prefs.pickedProfile = true;
    savePrefs();
    rerenderAllFrames();
  });
  $("approval").addEventListener("change", (event) => {
    prefs.approval = event.target.checked;
    savePrefs();
    for (const frame of everyFrame()) frame.reload();
    document.querySelectorAll(".host-frame .approval").forEach((node) => (node.hidden = !prefs.approval));
  });
  $("side-by-side").addEventListener("change", (event) => {
    prefs.sideBySide = event.target.checked;
    savePrefs();
    rerenderAllFrames();
  });
  $("device").addEventListener("change", (event) => {
    prefs.device = event.target.value;
    prefs.pickedDevice = true;
    savePrefs();
    for (const frame of everyFrame()) {
      frame.element.dataset.device = prefs.device;
      frame.command("setDevice", prefs.device, null);
    }
  });
  $("theme").addEventListener("change", (event) => {
    prefs.theme = event.target.value;
    savePrefs();
    everyFrame().forEach((f) => f.command("setTheme", widgetTheme(), "theme"));
  });
  $("locale").addEventListener("change", (event) => {
    prefs.locale = event.target.value.trim();
    savePrefs();
    everyFrame().forEach((f) => f.command("setLocale", hostOptions().locale, "locale"));
  });
  $("timezone").addEventListener("change", (event) => {
    prefs.timeZone = event.target.value.trim();
    try {
      if (prefs.timeZone) new Intl.DateTimeFormat("en", { timeZone: prefs.timeZone });
      event.target.removeAttribute("aria-invalid");
    } catch {
      event.target.setAttribute("aria-invalid", "true");
      event.target.title = `${prefs.timeZone} is not a time zone this browser knows`;
      return;
    }
    savePrefs();
    everyFrame().forEach((f) => f.command("setTimeZone", hostOptions().timeZone, null));
  });
  $("rerun-on-change").addEventListener("change", (event) => {
    prefs.rerun = event.target.checked;
    savePrefs();
  });
  $("reload-dismiss").addEventListener("click", () => ($("reload-banner").hidden = true));
  $("refresh-tools").addEventListener("click", () => api("/api/tools?refresh=1").then(setTools).catch((error) => setTools({ tools: page.tools, error: error.message })));
  $("tool-filter").addEventListener("input", renderToolList);
  $("call-form").addEventListener("submit", submitRun);
  $("reset-button").addEventListener("click", () => page.selected && selectTool(page.selected));
  $("tab-form").addEventListener("click", () => showEditor("form"));
  $("tab-json").addEventListener("click", () => showEditor("json"));
  $("json-editor").addEventListener("input", () => syncFormFromJson());
  $("clear-runs").addEventListener("click", clearRuns);
  document.addEventListener("keydown", onKey);

  $("side-by-side").checked = prefs.sideBySide;
  $("approval").checked = Boolean(prefs.approval);
  $("device").value = prefs.device;
  $("theme").value = prefs.theme;
  $("locale").value = prefs.locale;
  $("timezone").value = prefs.timeZone;
  $("timezone").placeholder = Intl.DateTimeFormat().resolvedOptions().timeZone;
  $("rerun-on-change").checked = prefs.rerun;
  const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  $("timezones").replaceChildren(...zones.map((zone) => Object.assign(document.createElement("option"), { value: zone })));
}

function wireResizer() {
  const layout = $("layout");
  const handle = $("inspector-resizer");
  const apply = (width) => {
    const clamped = Math.round(Math.min(Math.max(width, 300), Math.max(320, window.innerWidth - 640)));
    layout.style.setProperty("--inspector-width", `${clamped}px`);
    prefs.inspectorWidth = clamped;
  };
  if (prefs.inspectorWidth) apply(prefs.inspectorWidth);
  handle.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    handle.setPointerCapture(event.pointerId);
    handle.classList.add("dragging");
    // Frames would swallow the pointer while it crosses them.
    document.querySelectorAll("iframe").forEach((frame) => (frame.style.pointerEvents = "none"));
    const move = (moved) => apply(window.innerWidth - moved.clientX);
    const up = () => {
      handle.classList.remove("dragging");
      handle.removeEventListener("pointermove", move);
      document.querySelectorAll("iframe").forEach((frame) => (frame.style.pointerEvents = ""));
      savePrefs();
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", up, { once: true });
  });
  handle.addEventListener("keydown", (event) => {
    const step = { ArrowLeft: 24, ArrowRight: -24 }[event.key];
    if (!step) return;
    event.preventDefault();
    apply($("inspector").getBoundingClientRect().width + step);
    savePrefs();
  });
}

function applyInspector() {
  $("layout").classList.toggle("inspector-hidden", !prefs.inspector);
  $("inspector-toggle").setAttribute("aria-expanded", String(prefs.inspector));
}

function onKey(event) {
  if (event.key === "Escape") {
    const full = everyFrame().filter((f) => f.mode === "fullscreen" || f.mode === "pip");
    const target = full.find((f) => f.mode === "fullscreen") || full[0];
    if (target) {
      event.preventDefault();
      target.setMode("inline");
    }
  } else if (event.key === "Enter" && (event.metaKey || event.ctrlKey) && page.selected) {
    event.preventDefault();
    submitRun();
  }
}

async function main() {
  applyScheme();
  applyInspector();
  wireResizer();
  try {
    setInfo(await api("/api/workbench"));
  } catch {
    /* the push channel's hello brings it too */
  }
  const defaults = (page.info && page.info.defaults) || {};
  if (!prefs.profile) prefs.profile = defaults.profile || "chatgpt";
  if (!prefs.device) prefs.device = defaults.device || "desktop";
  wireControls();
  await loadProfiles();
  connectEvents();
  try {
    setTools(await api("/api/tools"));
  } catch (error) {
    setTools({ tools: [], error: error.message });
  }
  window.appsdkWorkbench.ready = true;
}

main();
