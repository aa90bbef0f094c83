// @ts-check
// The host's controls: theme, locale, time zone, device and display mode, each set from the page's
// bar, from the workbench (window.appsdkPreview) or by the widget, and told to the view through both
// APIs. The page's URL keeps them across a reload.

import { isPermissionMode, isTheme, isTimeZone, permissionFor, rememberedQuery } from "./context.js";
import { bridgeModeRefusal, HOST_MODES, isHostMode, modeOnDevice } from "./modes.js";
import { $, addLog, element } from "./page.js";
import { applyHeight, containerDimensions, contextChanged, deviceOf, maxHeight, profileOf, toOpenai } from "./view.js";

/** @typedef {import("./page.js").Host} Host */

/** @param {Host} host */
const modesOffered = (host) => profileOf(host).displayModes;

/**
 * Reloading the page keeps the host's choices.
 * @param {Host} host
 */
export function remember(host) {
  history.replaceState(null, "", `?${rememberedQuery(new URLSearchParams(location.search), host.state)}`);
}

/**
 * @param {Host} host
 * @param {string} mode
 * @param {string} [why]
 */
export function setDisplayMode(host, mode, why) {
  if (!isHostMode(mode)) throw new Error(`unknown display mode ${mode}; one of ${HOST_MODES.join(", ")}`);
  const shown = modeOnDevice(mode, why, deviceOf(host));
  const { state } = host;
  state.displayMode = shown.mode;
  element("display-mode", HTMLSelectElement).value = shown.mode;
  $("stage").dataset.mode = shown.mode;
  $("exit-label").textContent = shown.mode === "pip" ? "Exit picture-in-picture" : "Exit fullscreen";
  applyHeight(host);
  remember(host);
  addLog(host.page, "host", "info", `display mode → ${shown.mode}${shown.why ? ` (${shown.why})` : ""}`);
  host.page.events.emit("display-mode", { mode: shown.mode });
  toOpenai(host, { type: "globals", globals: { displayMode: shown.mode, maxHeight: maxHeight(host) } });
  contextChanged(host, { displayMode: shown.mode, containerDimensions: containerDimensions(host) });
  return { mode: shown.mode };
}

/**
 * ui/request-display-mode: a refused request is answered with the mode the view stays in.
 * @param {Host} host
 * @param {{ mode: string }} params
 */
export function requestDisplayModeFromBridge(host, params) {
  const refusal = bridgeModeRefusal(params.mode, {
    offered: modesOffered(host),
    declared: host.bridge.appModes,
    hostLabel: profileOf(host).label,
  });
  if (refusal) {
    addLog(host.page, "bridge", "warn", `ui/request-display-mode ${params.mode} refused: ${refusal}; staying ${host.state.displayMode}`);
    return { mode: host.state.displayMode };
  }
  return setDisplayMode(host, params.mode, "ui/request-display-mode");
}

/**
 * window.openai.requestDisplayMode.
 * @param {Host} host
 * @param {{ mode: string }} params
 */
export function requestDisplayModeFromOpenai(host, params) {
  if (!modesOffered(host).includes(/** @type {McpUiDisplayMode} */ (params.mode))) {
    addLog(host.page, "openai", "warn", `requestDisplayMode ${params.mode}: ${profileOf(host).label} has no such mode`);
    return { mode: host.state.displayMode };
  }
  return setDisplayMode(host, params.mode, "requestDisplayMode");
}

/**
 * @param {Host | null} host
 * @param {string} why
 */
export function exitMode(host, why) {
  if (!host || host.state.displayMode === "inline") return;
  setDisplayMode(host, "inline", why);
}

/**
 * The display-mode control offers what the host has and the view declared.
 * @param {Host} host
 */
export function markDeclaredModes(host) {
  const offered = modesOffered(host);
  const declared = host.bridge.appModes;
  for (const option of element("display-mode", HTMLSelectElement).options) {
    const undeclared = declared && !declared.includes(option.value);
    const unoffered = !offered.includes(/** @type {McpUiDisplayMode} */ (option.value));
    option.disabled = (Boolean(undeclared) || unoffered) && option.value !== host.state.displayMode;
    option.title = unoffered
      ? `${profileOf(host).label} has no ${option.value} mode`
      : undeclared
        ? "the widget does not declare this display mode"
        : "";
  }
}

/**
 * @param {Host} host
 * @param {string} theme
 */
export function setTheme(host, theme) {
  if (!isTheme(theme)) throw new Error(`unknown theme ${theme}; light or dark`);
  host.state.theme = theme;
  document.body.dataset.theme = theme;
  element("theme", HTMLSelectElement).value = theme;
  remember(host);
  toOpenai(host, { type: "globals", globals: { theme } });
  contextChanged(host, { theme, styles: { variables: /** @type {import("@modelcontextprotocol/ext-apps").McpUiStyles} */ (profileOf(host).styles[theme]) } });
  return { theme };
}

/**
 * @param {Host} host
 * @param {unknown} locale
 */
export function setLocale(host, locale) {
  const { state } = host;
  state.locale = String(locale || host.session.defaults.locale);
  element("locale", HTMLInputElement).value = state.locale;
  remember(host);
  toOpenai(host, { type: "globals", globals: { locale: state.locale } });
  contextChanged(host, { locale: state.locale });
  return { locale: state.locale };
}

/**
 * @param {Host} host
 * @param {string} timeZone
 */
export function setTimeZone(host, timeZone) {
  if (!isTimeZone(timeZone)) throw new Error(`unknown time zone ${timeZone} (an IANA name, such as Europe/Oslo)`);
  host.state.timeZone = timeZone;
  element("time-zone", HTMLInputElement).value = timeZone;
  remember(host);
  contextChanged(host, { timeZone });
  return { timeZone };
}

/** @param {Host} host */
function applyDevice(host) {
  const chosen = deviceOf(host);
  document.body.dataset.device = chosen.name;
  element("device", HTMLSelectElement).value = chosen.name;
  $("conversation").style.setProperty("--device-width", `${chosen.viewport.width}px`);
  $("conversation").style.setProperty("--device-height", `${chosen.viewport.height}px`);
  const insets = chosen.safeAreaInsets;
  for (const side of /** @type {const} */ (["top", "right", "bottom", "left"])) {
    $("stage").style.setProperty(`--safe-${side}`, `${insets[side]}px`);
  }
}

/**
 * @param {Host} host
 * @param {string} name
 */
export function setDevice(host, name) {
  if (!host.catalog.devices[name]) {
    throw new Error(`unknown device ${name}; one of ${Object.keys(host.catalog.devices).join(", ")}`);
  }
  host.state.device = name;
  applyDevice(host);
  remember(host);
  const chosen = deviceOf(host);
  addLog(host.page, "host", "info", `device → ${name}`);
  toOpenai(host, { type: "globals", globals: { userAgent: chosen.openaiUserAgent, safeArea: { insets: chosen.safeAreaInsets } } });
  contextChanged(host, {
    platform: chosen.platform,
    deviceCapabilities: chosen.deviceCapabilities,
    safeAreaInsets: chosen.safeAreaInsets,
    containerDimensions: containerDimensions(host),
  });
  if (host.state.displayMode === "pip" && chosen.pipBecomesFullscreen) setDisplayMode(host, "fullscreen", "device");
  return { device: name };
}

/**
 * Every control shows the host's state.
 * @param {Host} host
 */
export function syncControls(host) {
  const { state } = host;
  document.body.dataset.theme = state.theme;
  document.body.dataset.profile = state.profile;
  element("profile", HTMLSelectElement).value = state.profile;
  element("theme", HTMLSelectElement).value = state.theme;
  element("display-mode", HTMLSelectElement).value = state.displayMode;
  $("stage").dataset.mode = state.displayMode;
  element("api", HTMLSelectElement).value = state.openai ? "openai" : "bridge";
  element("locale", HTMLInputElement).value = state.locale;
  element("time-zone", HTMLInputElement).value = state.timeZone;
  element("cdn", HTMLInputElement).checked = state.cdn;
  $("cdn-toggle").hidden = profileOf(host).cdnAllowance.length === 0;
  element("permissions", HTMLSelectElement).value = state.permissions;
  describeApproval(host);
  element("no-ui", HTMLInputElement).checked = state.noUi;
  applyDevice(host);
}

/**
 * The approval bar says which mode holds the run's own call, and why (the server's rule).
 * @param {Host} host
 */
export function describeApproval(host) {
  const decision = permissionFor(host.session, host.state.permissions);
  $("approval-reason").textContent =
    `${host.session.tool.name} needs approval before the widget gets its input (${decision.label}: ${decision.reason}).`;
}

/**
 * @param {HTMLSelectElement} select
 * @param {[string, string][]} entries value, label
 */
export function fillSelect(select, entries) {
  select.replaceChildren(
    ...entries.map(([value, label]) => {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = label;
      return option;
    }),
  );
}

/**
 * The bar's controls, Escape and the window's size.
 * @param {Host} host
 * @param {{ reload: () => void, rerun: () => void, approve: () => void, deny: () => void }} actions
 */
export function wireControls(host, actions) {
  const { state } = host;
  const defaults = host.session.defaults;
  /**
   * @template {HTMLInputElement | HTMLSelectElement} T
   * @param {string} id
   * @param {new () => T} kind
   * @param {(target: T) => void} apply
   */
  const onChange = (id, kind, apply) => {
    const control = element(id, kind);
    control.addEventListener("change", () => apply(control));
  };
  onChange("theme", HTMLSelectElement, (target) => setTheme(host, target.value));
  onChange("display-mode", HTMLSelectElement, (target) => setDisplayMode(host, target.value, "host"));
  onChange("device", HTMLSelectElement, (target) => setDevice(host, target.value));
  onChange("locale", HTMLInputElement, (target) => setLocale(host, target.value || defaults.locale));
  onChange("time-zone", HTMLInputElement, (target) => {
    try {
      setTimeZone(host, target.value);
    } catch (error) {
      addLog(host.page, "host", "warn", error instanceof Error ? error.message : String(error));
      target.value = state.timeZone;
    }
  });
  // What changes the frame itself (its sandbox, its CSP, its API) needs a new view.
  /**
   * @template {HTMLInputElement | HTMLSelectElement} T
   * @param {string} id
   * @param {new () => T} kind
   * @param {(target: T) => void} apply
   */
  const reloadOn = (id, kind, apply) =>
    onChange(id, kind, (target) => {
      apply(target);
      remember(host);
      actions.reload();
    });
  reloadOn("api", HTMLSelectElement, (target) => (state.openai = target.value === "openai"));
  reloadOn("cdn", HTMLInputElement, (target) => (state.cdn = target.checked));
  reloadOn("permissions", HTMLSelectElement, (target) => {
    if (isPermissionMode(target.value)) state.permissions = target.value;
    state.approval = permissionFor(host.session, state.permissions).ask;
    describeApproval(host);
  });
  reloadOn("no-ui", HTMLInputElement, (target) => (state.noUi = target.checked));
  reloadOn("profile", HTMLSelectElement, (target) => {
    state.profile = target.value;
    state.openai = profileOf(host).openai && !defaults.bridge_only;
    state.cdn = profileOf(host).cdnAllowance.length > 0;
    if (!modesOffered(host).includes(state.displayMode)) state.displayMode = "inline";
    syncControls(host);
  });
  $("reload").addEventListener("click", () => actions.rerun());
  $("approve").addEventListener("click", () => actions.approve());
  $("deny").addEventListener("click", () => actions.deny());
  $("exit-mode").addEventListener("click", () => exitMode(host, "exit control"));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !event.defaultPrevented) exitMode(host, "Escape");
  });
  window.addEventListener("resize", () => {
    if (state.displayMode !== "fullscreen") return;
    toOpenai(host, { type: "globals", globals: { maxHeight: maxHeight(host) } });
    contextChanged(host, { containerDimensions: containerDimensions(host) });
  });
}
