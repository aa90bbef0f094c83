// @ts-check
// The host frames: each widget of a run is the preview's own host page (/host?run=ID&embed=1) in a
// same-origin frame, one per profile shown; the workbench drives it through its window.appsdkPreview
// and follows its events into the inspector.

import { api, hostOptions, messageOf, MODES } from "./bench.js";

/** @typedef {import("./bench.js").Bench} Bench */
/** @typedef {import("./bench.js").PageRun} PageRun */

/**
 * The profiles a run's widget shows in: the chosen one, and with side by side the others after it
 * (three at most). Pure.
 * @param {{ sideBySide: boolean, profile: string }} prefs
 * @param {{ name: string }[]} profiles
 */
export function frameProfiles(prefs, profiles) {
  if (!prefs.sideBySide) return [prefs.profile];
  const names = profiles.map((p) => p.name);
  const ordered = [prefs.profile, ...names.filter((n) => n !== prefs.profile)];
  return ordered.slice(0, 3);
}

/**
 * @param {Bench} bench
 * @param {string} name
 */
export function profileLabel(bench, name) {
  const profile = bench.profiles.find((p) => p.name === name);
  return (profile && profile.label) || name;
}

/** @param {Bench} bench */
export function everyFrame(bench) {
  return [...bench.runs.values()].flatMap((run) => run.frames);
}

/** @param {PageRun} run */
export function clearFrames(run) {
  for (const frame of run.frames) frame.teardown();
  run.frames = [];
  run.element.querySelector(".frames")?.replaceChildren();
}

/**
 * @param {Bench} bench
 * @param {PageRun} run
 * @param {{ fresh?: boolean }} [options] fresh: a re-run's new result
 */
export function renderFrames(bench, run, { fresh } = {}) {
  const wanted = frameProfiles(bench.prefs, bench.profiles);
  const same = run.frames.length === wanted.length && run.frames.every((f, i) => f.profile === wanted[i]);
  if (same && fresh) {
    // A re-run: the same views get the new result (and a template read afresh), keeping their state.
    const template = Boolean(run.reloadTemplate);
    run.reloadTemplate = false;
    for (const frame of run.frames) if (run.data.result) frame.newResult(run.data.result, { template });
    return;
  }
  if (same && run.frames.length) return;
  clearFrames(run);
  const box = run.element.querySelector(".frames");
  if (!box) return;
  box.classList.toggle("single", wanted.length === 1);
  for (const profile of wanted) {
    const frame = new HostFrame(bench, run, profile);
    run.frames.push(frame);
    box.append(frame.element);
  }
}

/** @param {Bench} bench */
export function rerenderAllFrames(bench) {
  for (const run of bench.runs.values()) if (run.data.widget && run.data.status === "done") renderFrames(bench, run);
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Partial<HTMLElementTagNameMap[K]>} props
 * @returns {HTMLElementTagNameMap[K]}
 */
const make = (tag, props) => Object.assign(document.createElement(tag), props);

export class HostFrame {
  /**
   * @param {Bench} bench
   * @param {PageRun} run
   * @param {string} profile
   */
  constructor(bench, run, profile) {
    const { prefs } = bench;
    this.bench = bench;
    this.run = run;
    this.profile = profile;
    /** @type {McpUiDisplayMode} */
    this.mode = "inline";
    /** @type {AppsdkPreviewApi | null} the host page's API, once its frame loaded */
    this.api = null;
    this.height = 160;
    /** @type {string | undefined} a cancellation that waits for the host page to be wired */
    this.cancelOnWire = undefined;
    this.element = document.createElement("div");
    this.element.className = "host-frame";
    this.element.dataset.profile = profile;
    this.element.dataset.device = prefs.device;
    this.element.dataset.mode = "inline";
    const head = document.createElement("div");
    head.className = "host-frame-head";
    const name = document.createElement("span");
    name.className = "profile-name";
    name.textContent = profileLabel(bench, profile);
    this.note = document.createElement("span");
    this.note.className = "frame-note";
    const modes = document.createElement("div");
    modes.className = "mode-controls";
    modes.setAttribute("role", "group");
    modes.setAttribute("aria-label", "Display mode");
    /** @type {Record<string, HTMLButtonElement>} */
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
    // Shown while the run's own call waits for approval (the host page says so: its permission mode asks).
    const approval = document.createElement("span");
    approval.className = "approval";
    approval.hidden = true;
    this.approval = approval;
    const approve = make("button", { type: "button", className: "button small primary", textContent: "Approve" });
    approve.title = "Release the held tool-input to the widget";
    const decline = make("button", { type: "button", className: "button small ghost", textContent: "Decline" });
    decline.title = "Send tool-cancelled instead";
    // The server holds the run's call until it is approved (its permission mode asks): Approve sends it
    // and gives every frame of the run its tool-input; Decline cancels the call, which never runs.
    approve.addEventListener("click", async () => {
      for (const frame of this.run.frames) {
        if (frame.api && frame.api.approve) await frame.api.approve().catch(() => {});
        frame.approval.hidden = true;
      }
      await api("/api/runs/approve", { run: this.run.data.id }).catch(() => {});
    });
    decline.addEventListener("click", async () => {
      approval.hidden = true;
      if (this.run.data.status === "running") await api("/api/runs/cancel", { run: this.run.data.id }).catch(() => {});
      else if (this.api && this.api.cancel) await this.api.cancel("the user declined");
    });
    const partial = make("button", { type: "button", className: "button small ghost", textContent: "Stream input" });
    partial.title = "Send tool-input-partial as the model would while writing the arguments: one more argument each time";
    partial.addEventListener("click", async () => {
      const api = this.api;
      if (!api || !api.sendPartialInput) return;
      const entries = Object.entries(this.run.data.arguments || {});
      for (let count = 0; count <= entries.length; count++) {
        try {
          await api.sendPartialInput(Object.fromEntries(entries.slice(0, count)));
        } catch (error) {
          this.note.textContent = messageOf(error);
          return;
        }
      }
    });
    approval.append(partial, approve, decline);
    head.append(name, this.note, approval, modes, this.exit);
    this.box = document.createElement("div");
    this.box.className = "frame-box";
    this.iframe = document.createElement("iframe");
    this.iframe.title = `${run.data.tool} widget, ${profileLabel(bench, profile)} profile`;
    this.iframe.addEventListener("load", () => this.wire());
    this.box.append(this.iframe);
    this.element.append(head, this.box);
    this.iframe.src = this.url();
  }

  url() {
    const options = hostOptions(this.bench);
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
    query.set("permissions", options.permissions);
    query.set("noui", options.noUi ? "1" : "0");
    return `/host?${query}`;
  }

  describe() {
    return { profile: this.profile, mode: this.mode, device: this.element.dataset.device, height: this.height, api: Boolean(this.api && this.api.on) };
  }

  /** @returns {(Window & typeof globalThis) | null} the host page's window (same origin) */
  hostWindow() {
    return /** @type {(Window & typeof globalThis) | null} */ (this.iframe.contentWindow);
  }

  /** @param {string} id */
  hostElement(id) {
    const win = this.hostWindow();
    return win ? win.document.getElementById(id) : null;
  }

  wire() {
    const win = this.hostWindow();
    if (!win || !win.document || !win.appsdkPreview) return;
    const api = win.appsdkPreview;
    const panels = this.bench.panels;
    this.api = api;
    const source = { run: this.run.data.id, profile: this.profile, tool: this.run.data.tool };
    win.document.addEventListener("keydown", (event) => this.bench.onKey(event));
    if (typeof api.on === "function") {
      this.note.textContent = "";
      api.on("log", (entry) => panels.log(entry, source));
      api.on("model", (entry) => panels.model(entry, source));
      api.on("widget-state", (entry) => panels.widgetState(entry.state, source));
      api.on("csp", (entry) => panels.csp(entry, source));
      api.on("traffic", (record) => panels.traffic({ run: source.run, ...record }));
      api.on("display-mode", (entry) => this.showMode(entry.mode));
      api.on("size", (entry) => this.setHeight(entry.height));
      api.on("approval", (entry) => {
        if (entry.kind !== "input") return;
        this.approval.hidden = !entry.held;
        if (entry.held) this.approval.title = `${entry.tool} waits for approval: ${entry.reason || ""}`;
      });
      const bar = this.hostElement("approval-bar");
      if (bar && !bar.hidden) this.approval.hidden = false;
      const catalog = this.bench.catalog;
      const profile = catalog && catalog.profiles && catalog.profiles[this.profile];
      this.offerModes(profile ? profile.displayModes : undefined);
      if (this.cancelOnWire !== undefined) this.cancelCall(this.cancelOnWire);
      this.cancelOnWire = undefined;
    } else {
      this.fallbackWiring(win, api, source);
    }
  }

  /**
   * A host page without the embed API (appsdkPreview.on): hide its own chrome, follow its size and
   * display mode by observing it (same origin), and read its log as it grows.
   * @param {Window & typeof globalThis} win
   * @param {{ log?: unknown }} api
   * @param {PanelSource} source
   */
  fallbackWiring(win, api, source) {
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

  /**
   * @param {AppsdkLogEntry} entry
   * @param {PanelSource} source
   */
  fallbackEntry(entry, source) {
    const panels = this.bench.panels;
    panels.log(entry, source);
    if (entry.kind === "csp") panels.csp({ directive: "", blockedURI: "", message: entry.message }, source);
    const model = /^(ui\/update-model-context|ui\/message|sendFollowUpMessage)/.exec(entry.message);
    if (model) panels.model({ kind: model[1], params: { text: entry.message }, time: Date.now() }, source);
  }

  /** @param {unknown} height */
  setHeight(height) {
    if (this.mode === "fullscreen" || typeof height !== "number" || !isFinite(height)) return;
    this.height = Math.max(40, Math.ceil(height));
    this.iframe.style.height = `${this.height}px`;
  }

  /** @param {string | undefined} mode */
  showMode(mode) {
    const known = MODES.find((m) => m === mode);
    if (!known || known === this.mode) return;
    const was = this.mode;
    this.mode = known;
    this.element.dataset.mode = known;
    for (const [name, button] of Object.entries(this.modeButtons)) button.setAttribute("aria-pressed", String(name === known));
    if (known === "fullscreen") {
      this.iframe.style.height = "";
      this.exit.focus();
    } else {
      this.iframe.style.height = `${this.height}px`;
      if (was === "fullscreen") this.modeButtons.fullscreen.focus();
    }
  }

  /** @param {McpUiDisplayMode} mode */
  async setMode(mode) {
    const api = this.api;
    if (api && typeof api.setDisplayMode === "function") {
      // The host decides (a profile may lack a mode); its display-mode event moves this frame.
      try {
        await api.setDisplayMode(mode);
        this.showMode(mode);
        this.note.textContent = "";
      } catch (error) {
        this.note.textContent = messageOf(error);
      }
      return;
    }
    this.showMode(mode);
    // Without the embed API: drive the host page's own control, which tells the widget.
    const select = this.hostElement("display-mode");
    // (An element of the host page's document is not an instance of this window's HTMLElement.)
    if (select && "value" in select) {
      select.value = mode;
      select.dispatchEvent(new Event("change"));
    }
  }

  /** @param {string[] | undefined} modes */
  offerModes(modes) {
    for (const [name, button] of Object.entries(this.modeButtons)) {
      const offered = !modes || modes.includes(name);
      button.disabled = !offered;
      button.title = offered ? `Display mode ${name}` : `${profileLabel(this.bench, this.profile)} has no ${name} mode`;
    }
  }

  /**
   * A command to the host page: through its API, else through its own control, else by reloading it
   * (it reads theme, locale, time zone and device from its URL).
   * @param {"setTheme" | "setLocale" | "setTimeZone" | "setDevice"} name
   * @param {string} value
   * @param {string | null} selectId
   */
  async command(name, value, selectId) {
    const api = this.api;
    if (api && typeof api[name] === "function") return api[name](value);
    const control = selectId ? this.hostElement(selectId) : null;
    if (control && "value" in control) {
      control.value = value;
      control.dispatchEvent(new Event("change"));
      return undefined;
    }
    this.reload();
    return undefined;
  }

  reload() {
    this.iframe.src = this.url();
  }

  async reloadTemplate() {
    const api = this.api;
    if (api && typeof api.reloadTemplate === "function") return api.reloadTemplate();
    const button = this.hostElement("reload");
    if (button) button.click();
    else this.reload();
    return undefined;
  }

  /**
   * A re-run of the same call: the live view gets the new result (tool-result, toolOutput) and keeps
   * its state; with `template`, a view of the template read afresh replaces it, with that result.
   * @param {McpCallToolResult} result
   * @param {{ template?: boolean }} [options]
   */
  async newResult(result, { template = false } = {}) {
    const api = this.api;
    if (api && typeof api.sendResult === "function" && typeof api.reloadTemplate === "function") {
      await api.sendResult(result);
      if (template) await api.reloadTemplate();
      return undefined;
    }
    this.reload();
    return undefined;
  }

  /**
   * The run ended without a result: the view gets tool-cancelled (now, or once its host page is wired).
   * @param {string} reason
   */
  async cancelCall(reason) {
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

/** @typedef {{ run: string, profile: string, tool: string }} PanelSource */

// ---- widget state ---------------------------------------------------------------------------------

/**
 * The run's widget state: from its live view, else as the server keeps it.
 * @param {Bench} bench
 * @param {string} runId
 */
export async function readWidgetState(bench, runId) {
  const run = bench.runs.get(runId);
  const frame = run && run.frames[0];
  if (frame && frame.api && typeof frame.api.getWidgetState === "function") return frame.api.getWidgetState();
  const answer = await api(`/api/widget-state?run=${encodeURIComponent(runId)}`);
  return answer.state;
}

/**
 * An edit in the inspector: into the live views, else kept by the server for the next load.
 * @param {Bench} bench
 * @param {string} runId
 * @param {unknown} state
 */
export async function applyWidgetState(bench, runId, state) {
  const run = bench.runs.get(runId);
  if (!run) return;
  const live = run.frames.filter((f) => f.api && typeof f.api.setWidgetState === "function");
  if (live.length) {
    for (const frame of live) await frame.api?.setWidgetState(state);
    return;
  }
  await api(`/api/widget-state?run=${encodeURIComponent(runId)}`, { state });
  for (const frame of run.frames) frame.reload(); // the widget reads its state when it loads
}
