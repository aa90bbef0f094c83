// @ts-check
// Display modes: which the host offers, which a request may switch to, and what a device makes of pip.
// Pure: no DOM, so `node --test` drives it.

/** @type {McpUiDisplayMode[]} */
export const HOST_MODES = ["inline", "pip", "fullscreen"];

/**
 * @param {unknown} mode
 * @returns {mode is McpUiDisplayMode}
 */
export function isHostMode(mode) {
  return HOST_MODES.includes(/** @type {McpUiDisplayMode} */ (mode));
}

/**
 * The mode the host actually shows for a wanted one on a device, and why when it differs: ChatGPT on a
 * phone has no room for a floating widget, so pip opens fullscreen there.
 * @param {McpUiDisplayMode} mode
 * @param {string | undefined} why
 * @param {Pick<AppsdkDevice, "label" | "pipBecomesFullscreen">} device
 * @returns {{ mode: McpUiDisplayMode, why: string | undefined }}
 */
export function modeOnDevice(mode, why, device) {
  if (mode === "pip" && device.pipBecomesFullscreen) {
    return { mode: "fullscreen", why: `${why || "host"}; pip is fullscreen on ${device.label.toLowerCase()}` };
  }
  return { mode, why };
}

/**
 * Why a view's ui/request-display-mode is refused, or null when the host may switch. The host MUST NOT
 * switch to a mode the view did not declare (appCapabilities.availableDisplayModes), nor to one it does
 * not offer itself.
 * @param {string} mode
 * @param {{ offered: string[], declared: string[] | null, hostLabel: string }} modes
 * @returns {string | null}
 */
export function bridgeModeRefusal(mode, { offered, declared, hostLabel }) {
  if (!offered.includes(mode)) return `${hostLabel} offers ${offered.join(", ")}`;
  if (declared && !declared.includes(mode)) {
    return `it declared only ${declared.join(", ")} in appCapabilities.availableDisplayModes`;
  }
  return null;
}
