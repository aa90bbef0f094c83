// @ts-check
// The workbench's own controls: colour scheme, inspector (shown, width), and the host options every
// frame follows (profile, side by side, approval, device, theme, locale, time zone), plus the keys.

import { $, api, element, hostOptions, savePrefs, widgetTheme } from "./bench.js";
import { everyFrame, rerenderAllFrames } from "./frames.js";
import { clearRuns, submitRun } from "./runs.js";
import { renderToolList, selectTool, setTools, showEditor, syncFormFromJson } from "./tools.js";

/** @typedef {import("./bench.js").Bench} Bench */

const SCHEME_LABELS = { auto: "follows the system", light: "light", dark: "dark" };
/** @type {Record<string, "auto" | "light" | "dark">} the scheme toggle's cycle */
const NEXT_SCHEME = { auto: "light", light: "dark", dark: "auto" };

/** @param {Bench} bench */
export function applyScheme(bench) {
  const { prefs } = bench;
  const root = document.documentElement;
  if (prefs.scheme === "auto") delete root.dataset.scheme;
  else root.dataset.scheme = prefs.scheme;
  const label = SCHEME_LABELS[prefs.scheme];
  $("scheme-toggle").title = `Colour scheme: ${label} (click to change)`;
  $("scheme-toggle").setAttribute("aria-label", `Colour scheme: ${label}`);
}

/** @param {Bench} bench */
export function applyInspector(bench) {
  $("layout").classList.toggle("inspector-hidden", !bench.prefs.inspector);
  $("inspector-toggle").setAttribute("aria-expanded", String(bench.prefs.inspector));
}

/**
 * The profiles the frames may play (/api/profiles), into the profile control.
 * @param {Bench} bench
 */
export async function loadProfiles(bench) {
  const { prefs } = bench;
  try {
    const answer = await api("/api/profiles");
    bench.catalog = answer;
    const list = Array.isArray(answer) ? answer : Array.isArray(answer.profiles) ? answer.profiles : Object.entries(answer.profiles || {}).map(([name, p]) => ({ name, ...p }));
    if (list.length) {
      bench.profiles = list.map((/** @type {{ name: string, label?: string, title?: string }} */ p) => ({ name: p.name, label: p.label || p.title || p.name }));
      bench.profilesServed = true;
    }
  } catch {
    bench.profilesServed = false;
  }
  const select = element("profile", HTMLSelectElement);
  select.replaceChildren(...bench.profiles.map((p) => Object.assign(document.createElement("option"), { value: p.name, textContent: p.label })));
  if (!bench.profiles.some((p) => p.name === prefs.profile)) prefs.profile = bench.profiles[0].name;
  select.value = prefs.profile;
  select.title = bench.profilesServed ? "The host the widget runs in" : "Waiting for host profiles: this build's host page does not serve /api/profiles yet, so every frame is the generic preview host";
}

/**
 * @param {Bench} bench
 * @param {(info: AppsdkWorkbenchInfo) => void} setInfo
 */
export function wireControls(bench, setInfo) {
  const { prefs } = bench;
  /** @param {"setTheme" | "setLocale" | "setTimeZone"} name @param {string} value @param {string | null} selectId */
  const tellFrames = (name, value, selectId) => everyFrame(bench).forEach((f) => f.command(name, value, selectId));
  /**
   * @template {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} T
   * @param {string} id
   * @param {new () => T} kind
   * @param {(control: T) => void} apply
   * @param {string} [type]
   */
  const on = (id, kind, apply, type = "change") => {
    const control = element(id, kind);
    control.addEventListener(type, () => apply(control));
    return control;
  };
  $("scheme-toggle").addEventListener("click", () => {
    prefs.scheme = NEXT_SCHEME[prefs.scheme];
    savePrefs(prefs);
    applyScheme(bench);
    if (prefs.theme === "auto") tellFrames("setTheme", widgetTheme(prefs), "theme");
  });
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    if (prefs.scheme === "auto" && prefs.theme === "auto") tellFrames("setTheme", widgetTheme(prefs), "theme");
  });
  $("inspector-toggle").addEventListener("click", () => {
    prefs.inspector = !prefs.inspector;
    savePrefs(prefs);
    applyInspector(bench);
  });
  on("profile", HTMLSelectElement, (control) => {
    prefs.profile = control.value;
    prefs.pickedProfile = true;
    savePrefs(prefs);
    rerenderAllFrames(bench);
  });
  on("permissions", HTMLSelectElement, (control) => {
    prefs.permissions = control.value;
    savePrefs(prefs);
    for (const frame of everyFrame(bench)) frame.reload();
  });
  on("no-ui", HTMLInputElement, (control) => {
    prefs.noUi = control.checked;
    savePrefs(prefs);
    for (const frame of everyFrame(bench)) frame.reload();
  });
  on("side-by-side", HTMLInputElement, (control) => {
    prefs.sideBySide = control.checked;
    savePrefs(prefs);
    rerenderAllFrames(bench);
  });
  on("device", HTMLSelectElement, (control) => {
    prefs.device = control.value;
    prefs.pickedDevice = true;
    savePrefs(prefs);
    for (const frame of everyFrame(bench)) {
      frame.element.dataset.device = prefs.device;
      frame.command("setDevice", prefs.device, null);
    }
  });
  on("theme", HTMLSelectElement, (control) => {
    prefs.theme = control.value;
    savePrefs(prefs);
    tellFrames("setTheme", widgetTheme(prefs), "theme");
  });
  on("locale", HTMLInputElement, (control) => {
    prefs.locale = control.value.trim();
    savePrefs(prefs);
    tellFrames("setLocale", hostOptions(bench).locale, "locale");
  });
  on("timezone", HTMLInputElement, (control) => {
    prefs.timeZone = control.value.trim();
    try {
      if (prefs.timeZone) new Intl.DateTimeFormat("en", { timeZone: prefs.timeZone });
      control.removeAttribute("aria-invalid");
    } catch {
      control.setAttribute("aria-invalid", "true");
      control.title = `${prefs.timeZone} is not a time zone this browser knows`;
      return;
    }
    savePrefs(prefs);
    tellFrames("setTimeZone", hostOptions(bench).timeZone, null);
  });
  on("rerun-on-change", HTMLInputElement, (control) => {
    prefs.rerun = control.checked;
    savePrefs(prefs);
  });
  $("reload-dismiss").addEventListener("click", () => ($("reload-banner").hidden = true));
  $("refresh-tools").addEventListener("click", () =>
    api("/api/tools?refresh=1")
      .then((listing) => setTools(bench, listing, setInfo))
      .catch((error) => setTools(bench, { tools: bench.tools, error: error.message }, setInfo)),
  );
  $("tool-filter").addEventListener("input", () => renderToolList(bench));
  $("call-form").addEventListener("submit", (event) => submitRun(bench, event));
  $("reset-button").addEventListener("click", () => bench.selected && selectTool(bench, bench.selected));
  $("tab-form").addEventListener("click", () => showEditor(bench, "form"));
  $("tab-json").addEventListener("click", () => showEditor(bench, "json"));
  $("json-editor").addEventListener("input", () => syncFormFromJson(bench));
  $("clear-runs").addEventListener("click", () => clearRuns(bench));
  document.addEventListener("keydown", (event) => bench.onKey(event));

  element("side-by-side", HTMLInputElement).checked = prefs.sideBySide;
  element("permissions", HTMLSelectElement).value = hostOptions(bench).permissions;
  element("no-ui", HTMLInputElement).checked = hostOptions(bench).noUi;
  element("device", HTMLSelectElement).value = prefs.device;
  element("theme", HTMLSelectElement).value = prefs.theme;
  element("locale", HTMLInputElement).value = prefs.locale;
  const timezone = element("timezone", HTMLInputElement);
  timezone.value = prefs.timeZone;
  timezone.placeholder = Intl.DateTimeFormat().resolvedOptions().timeZone;
  element("rerun-on-change", HTMLInputElement).checked = prefs.rerun;
  const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  $("timezones").replaceChildren(...zones.map((zone) => Object.assign(document.createElement("option"), { value: zone })));
}

/**
 * The inspector's width: dragged, or with the arrow keys; kept in the preferences.
 * @param {Bench} bench
 */
export function wireResizer(bench) {
  const { prefs } = bench;
  const layout = $("layout");
  const handle = $("inspector-resizer");
  /** @param {number} width */
  const apply = (width) => {
    const clamped = Math.round(Math.min(Math.max(width, 300), Math.max(320, window.innerWidth - 640)));
    layout.style.setProperty("--inspector-width", `${clamped}px`);
    prefs.inspectorWidth = clamped;
  };
  if (prefs.inspectorWidth) apply(prefs.inspectorWidth);
  /** @param {string} value */
  const framesPointer = (value) =>
    document.querySelectorAll("iframe").forEach((frame) => (frame.style.pointerEvents = value));
  handle.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    handle.setPointerCapture(event.pointerId);
    handle.classList.add("dragging");
    // Frames would swallow the pointer while it crosses them.
    framesPointer("none");
    /** @param {PointerEvent} moved */
    const move = (moved) => apply(window.innerWidth - moved.clientX);
    const up = () => {
      handle.classList.remove("dragging");
      handle.removeEventListener("pointermove", move);
      framesPointer("");
      savePrefs(prefs);
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", up, { once: true });
  });
  handle.addEventListener("keydown", (event) => {
    const step = event.key === "ArrowLeft" ? 24 : event.key === "ArrowRight" ? -24 : 0;
    if (!step) return;
    event.preventDefault();
    apply($("inspector").getBoundingClientRect().width + step);
    savePrefs(prefs);
  });
}

/**
 * Escape leaves a frame's fullscreen or pip (from the page or from inside a host frame); Ctrl/Cmd+Enter
 * runs the composer's call.
 * @param {Bench} bench
 * @param {KeyboardEvent} event
 */
export function onKey(bench, event) {
  if (event.key === "Escape") {
    const full = everyFrame(bench).filter((f) => f.mode === "fullscreen" || f.mode === "pip");
    const target = full.find((f) => f.mode === "fullscreen") || full[0];
    if (target) {
      event.preventDefault();
      target.setMode("inline");
    }
  } else if (event.key === "Enter" && (event.metaKey || event.ctrlKey) && bench.selected) {
    event.preventDefault();
    submitRun(bench);
  }
}
