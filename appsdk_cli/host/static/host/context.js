// @ts-check
// The host being played: the state the page starts in (from its URL, the session's defaults and the
// profile), and what the view is told of it (hostContext, hostCapabilities). Pure: no DOM, so
// `node --test` drives it.

import { isHostMode } from "./modes.js";

/**
 * @typedef {object} HostState
 * @property {string} profile
 * @property {string} device
 * @property {McpUiTheme} theme
 * @property {McpUiDisplayMode} displayMode
 * @property {boolean} openai window.openai is given to the widget (besides the bridge)
 * @property {string} locale
 * @property {string} timeZone
 * @property {boolean} cdn ChatGPT's CDN allowance
 * @property {AppsdkPermissionMode} permissions ChatGPT's permission mode the host plays
 * @property {boolean} approval tool-input waits for the call's approval (the mode asks about the tool)
 * @property {boolean} noUi a host without widgets: no MCP Apps extension offered, no frame (textonly.js)
 * @property {unknown} widgetState
 * @property {number | null} reportedHeight
 * @property {import("./sizing.js").HeightSource | null} heightSource
 * @property {boolean} [runawayLogged]
 */

/** @type {AppsdkPermissionMode[]} */
export const PERMISSION_MODES = ["always", "changes", "important", "never"];

/** @param {unknown} mode @returns {mode is AppsdkPermissionMode} */
export const isPermissionMode = (mode) => PERMISSION_MODES.includes(/** @type {AppsdkPermissionMode} */ (mode));

/**
 * The run's own call under a mode: does it wait for approval, and why (the server's rule, permissions.py).
 * @param {AppsdkSession} session
 * @param {AppsdkPermissionMode} mode
 * @returns {AppsdkPermissionDecision}
 */
export function permissionFor(session, mode) {
  const known = session.permissions && session.permissions[mode];
  return known || { mode, label: mode, ask: false, reason: "" };
}

/** @param {unknown} theme @returns {theme is McpUiTheme} */
export const isTheme = (theme) => theme === "light" || theme === "dark";

/** @param {string | null | undefined} zone */
export function isTimeZone(zone) {
  try {
    return Boolean(zone) && Boolean(new Intl.DateTimeFormat("en", { timeZone: zone || undefined }));
  } catch {
    return false;
  }
}

/**
 * The host's choices at start: the page's URL (a reload keeps them), else the session's defaults (the
 * command line), else the profile's.
 * @param {URLSearchParams} params
 * @param {AppsdkSession} session
 * @param {AppsdkProfileCatalog} catalog
 * @returns {HostState}
 */
export function initialState(params, session, catalog) {
  const defaults = session.defaults;
  const asked = params.get("profile");
  const name = asked && catalog.profiles[asked] ? asked : defaults.profile || catalog.defaultProfile;
  const chosen = catalog.profiles[name] || catalog.profiles[catalog.defaultProfile];
  const askedDevice = params.get("device");
  const deviceName = askedDevice && catalog.devices[askedDevice] ? askedDevice : defaults.device || catalog.defaultDevice;
  const zone = params.get("tz") || defaults.time_zone;
  const displayMode = params.get("displayMode");
  const legacyMode = params.get("mode");
  const mode = isHostMode(displayMode) ? displayMode : isHostMode(legacyMode) ? legacyMode : defaults.display_mode;
  const theme = params.get("theme");
  const askedMode = params.get("permissions");
  const permissions = isPermissionMode(askedMode) ? askedMode : isPermissionMode(defaults.permissions) ? defaults.permissions : "never";
  return {
    profile: chosen.name,
    device: catalog.devices[deviceName] ? deviceName : catalog.defaultDevice,
    theme: isTheme(theme) ? theme : defaults.theme,
    displayMode: chosen.displayModes.includes(mode) ? mode : "inline",
    openai: params.has("openai") ? params.get("openai") !== "0" : chosen.openai && !defaults.bridge_only,
    locale: params.get("locale") || defaults.locale,
    timeZone: zone && isTimeZone(zone) ? zone : Intl.DateTimeFormat().resolvedOptions().timeZone,
    cdn: params.has("cdn") ? params.get("cdn") !== "0" : chosen.cdnAllowance.length > 0,
    permissions,
    approval: permissionFor(session, permissions).ask,
    noUi: params.has("noui") ? params.get("noui") === "1" : Boolean(defaults.no_ui),
    widgetState: session.widgetState ?? null,
    reportedHeight: null,
    heightSource: null,
  };
}

/**
 * The query that keeps the host's choices across a reload of the page.
 * @param {URLSearchParams} query the page's own query (other keys, such as run and embed, stay)
 * @param {HostState} state
 */
export function rememberedQuery(query, state) {
  const kept = new URLSearchParams(query);
  kept.set("profile", state.profile);
  kept.set("device", state.device);
  kept.set("theme", state.theme);
  kept.set("displayMode", state.displayMode);
  kept.set("openai", state.openai ? "1" : "0");
  kept.set("locale", state.locale);
  kept.set("tz", state.timeZone);
  kept.set("cdn", state.cdn ? "1" : "0");
  kept.set("permissions", state.permissions);
  kept.set("noui", state.noUi ? "1" : "0");
  return kept;
}

/**
 * ui/initialize's hostContext.
 * @param {{ session: AppsdkSession, state: HostState, profile: AppsdkProfile, device: AppsdkDevice, containerDimensions: McpUiHostContext["containerDimensions"] }} host
 * @returns {McpUiHostContext}
 */
export function hostContext({ session, state, profile, device, containerDimensions }) {
  return {
    // The tool exactly as tools/list gave it: the spec's toolInfo.tool is a complete MCP Tool.
    toolInfo: { tool: session.toolDefinition },
    theme: state.theme,
    // The profile's variables name a subset of the spec's keys (a host sets what it has).
    styles: { variables: /** @type {import("@modelcontextprotocol/ext-apps").McpUiStyles} */ (profile.styles[state.theme]) },
    displayMode: state.displayMode,
    availableDisplayModes: profile.displayModes,
    containerDimensions,
    locale: state.locale,
    timeZone: state.timeZone,
    userAgent: profile.userAgent,
    platform: device.platform,
    deviceCapabilities: device.deviceCapabilities,
    safeAreaInsets: device.safeAreaInsets,
  };
}

/**
 * ui/initialize's hostCapabilities: the profile's, with the widget's declared CSP as sandbox.csp.
 * @param {AppsdkProfile} profile
 * @param {McpUiResourceCsp | null} declaredCsp
 * @returns {McpUiHostCapabilities}
 */
export function hostCapabilities(profile, declaredCsp) {
  const capabilities = JSON.parse(JSON.stringify(profile.hostCapabilities));
  if (declaredCsp) capabilities.sandbox = { csp: declaredCsp };
  return capabilities;
}

/**
 * window.openai.toolResponseMetadata for a tool result: ChatGPT's envelope (status, call_tool_result,
 * mcp_tool_result: the whole MCP result) over the result's own _meta keys, which stay at the top level
 * for widgets written to the older reference. host/widget.py `tool_response_metadata` builds the same
 * for the widget document; the reasons are written there.
 * @param {McpCallToolResult} result
 * @returns {Record<string, unknown>}
 */
export function toolResponseMetadata(result) {
  const meta = result._meta && typeof result._meta === "object" ? result._meta : {};
  return { ...meta, status: result.isError ? "failed" : "completed", call_tool_result: result, mcp_tool_result: result };
}
