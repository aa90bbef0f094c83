// @ts-check
// The widget's size: the heights the host allows per display mode, the container it reports in
// hostContext, and which reported height wins. Pure arithmetic: no DOM, so `node --test` drives it.

// window.openai.maxHeight and the cap for heights the host measures itself (a 100vh page would otherwise
// grow without end); pip is a fixed-size overlay. A bridge view in inline mode is flexible: the host
// grows it to whatever it reports, up to a limit that only stops a runaway resize loop.
export const MAX_HEIGHT = { inline: 640, pip: 480 };
export const RUNAWAY_HEIGHT = 8000;
// Start low: a widget measuring documentElement.scrollHeight would otherwise report the start height back.
export const START_HEIGHT = 150;
export const MIN_HEIGHT = 40;

/** @typedef {"measured" | "openai" | "bridge"} HeightSource
 * "measured": the bootstrap's own measurement; "openai": notifyIntrinsicHeight; "bridge":
 * ui/notifications/size-changed. */

/**
 * The tallest the view may be in a mode. Fullscreen: what the frame gets of the window (the exit
 * control's row is the host's), never under 200.
 * @param {McpUiDisplayMode} mode
 * @param {number} fullscreenHeight the frame's height in fullscreen (or the window's, before it has one)
 */
export function maxHeight(mode, fullscreenHeight) {
  if (mode === "fullscreen") return Math.max(200, fullscreenHeight);
  return MAX_HEIGHT[mode];
}

/**
 * hostContext.containerDimensions for a mode.
 * @param {{ mode: McpUiDisplayMode, width: number, fullscreenHeight: number, inlineContainer: AppsdkProfile["inlineContainer"] }} where
 * @returns {NonNullable<McpUiHostContext["containerDimensions"]>}
 */
export function containerDimensions({ mode, width, fullscreenHeight, inlineContainer }) {
  if (mode === "fullscreen") return { height: maxHeight(mode, fullscreenHeight), width };
  if (mode === "pip") return { maxHeight: MAX_HEIGHT.pip, width };
  if (!inlineContainer) return { width }; // flexible height: the frame follows the view's size-changed
  // The profile's probed container (ChatGPT: 400 × at most 768), narrowed to a smaller device's column.
  const dimensions = { ...inlineContainer };
  if (dimensions.maxWidth !== undefined) dimensions.maxWidth = Math.min(dimensions.maxWidth, width || dimensions.maxWidth);
  return /** @type {NonNullable<McpUiHostContext["containerDimensions"]>} */ (dimensions);
}

/**
 * The frame's height outside fullscreen for what the widget reported, and the limit it ran into when
 * a height the widget reported itself was cut (a resize loop, probably).
 * @param {{ mode: "inline" | "pip", reported: number | null, source: HeightSource | null }} view
 * @returns {{ height: number, limit: number, runaway: boolean, wanted: number }}
 */
export function frameHeight({ mode, reported, source }) {
  const wanted = reported || START_HEIGHT;
  const limit = mode === "inline" && source === "bridge" ? RUNAWAY_HEIGHT : MAX_HEIGHT[mode];
  return {
    height: Math.min(Math.max(wanted, MIN_HEIGHT), limit),
    limit,
    wanted,
    runaway: wanted > limit && source === "bridge",
  };
}

/**
 * Whether a reported height replaces the current one: a height the widget reports itself wins over the
 * bootstrap's measurement from then on.
 * @param {unknown} height
 * @param {HeightSource} source
 * @param {HeightSource | null} current the source of the height in force
 * @returns {height is number}
 */
export function acceptsHeight(height, source, current) {
  if (typeof height !== "number" || !isFinite(height)) return false;
  return !(source === "measured" && current);
}
