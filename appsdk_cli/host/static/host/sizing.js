// @ts-check
// The widget's size: the heights the host allows per display mode, the container it reports in
// hostContext, and which reported height wins. Pure arithmetic: no DOM, so `node --test` drives it.

// One model of the inline height, read from the profile's inline container (profiles.py) with the
// spec's meaning of containerDimensions, so what the view is told and what the frame does agree:
//   {height}     fixed: the frame is that tall whatever the view reports, and the view fills it;
//   {maxHeight}  flexible: the frame follows the view's height up to that;
//   neither      unbounded: the frame follows the view's height (ChatGPT's cards, and the spec's
//                generic host), stopped only at RUNAWAY_HEIGHT, which is a resize loop, not a layout.
// pip is a fixed-size overlay in every profile; fullscreen is what the window gives.
export const PIP_MAX_HEIGHT = 480;
export const RUNAWAY_HEIGHT = 8000;
// Where an inline frame starts: low, since a widget measuring documentElement.scrollHeight would
// otherwise report the start height back and never shrink below it.
export const START_HEIGHT = 150;
export const MIN_HEIGHT = 40;

/** @typedef {"measured" | "openai" | "bridge"} HeightSource
 * "measured": the bootstrap's own measurement; "openai": notifyIntrinsicHeight; "bridge":
 * ui/notifications/size-changed. */

/** @typedef {AppsdkProfile["inlineContainer"]} InlineContainer */

/**
 * The tallest the view may be in a mode (window.openai.maxHeight), or undefined inline when the
 * profile bounds nothing there (ChatGPT leaves window.openai.maxHeight undefined inline). Fullscreen:
 * what the frame gets of the window (the exit control's row is the host's), never under 200.
 * @param {McpUiDisplayMode} mode
 * @param {number} fullscreenHeight the frame's height in fullscreen (or the window's, before it has one)
 * @param {InlineContainer} [inlineContainer]
 * @returns {number | undefined}
 */
export function maxHeight(mode, fullscreenHeight, inlineContainer = null) {
  if (mode === "fullscreen") return Math.max(200, fullscreenHeight);
  if (mode === "pip") return PIP_MAX_HEIGHT;
  return inlineContainer ? (inlineContainer.height ?? inlineContainer.maxHeight) : undefined;
}

/**
 * hostContext.containerDimensions for a mode.
 * @param {{ mode: McpUiDisplayMode, width: number, fullscreenHeight: number, inlineContainer: InlineContainer }} where
 * @returns {NonNullable<McpUiHostContext["containerDimensions"]>}
 */
export function containerDimensions({ mode, width, fullscreenHeight, inlineContainer }) {
  if (mode === "fullscreen") return { height: maxHeight(mode, fullscreenHeight) ?? fullscreenHeight, width };
  if (mode === "pip") return { maxHeight: PIP_MAX_HEIGHT, width };
  if (!inlineContainer) return { width }; // unbounded height: the frame follows the view's size-changed
  // The profile's container, narrowed to a smaller device's column.
  const dimensions = { ...inlineContainer };
  if (dimensions.maxWidth !== undefined) dimensions.maxWidth = Math.min(dimensions.maxWidth, width || dimensions.maxWidth);
  return /** @type {NonNullable<McpUiHostContext["containerDimensions"]>} */ (dimensions);
}

/**
 * The frame's height outside fullscreen for what the widget reported, the limit it ran into, and
 * whether that was a runaway (a height past RUNAWAY_HEIGHT: a resize loop, probably).
 * @param {{ mode: "inline" | "pip", reported: number | null, source: HeightSource | null, inlineContainer?: InlineContainer }} view
 * @returns {{ height: number, limit: number, runaway: boolean, wanted: number }}
 */
export function frameHeight({ mode, reported, inlineContainer = null }) {
  const fixed = mode === "inline" && inlineContainer ? inlineContainer.height : undefined;
  if (fixed !== undefined) return { height: fixed, limit: fixed, wanted: reported || fixed, runaway: false };
  const wanted = reported || START_HEIGHT;
  const limit = mode === "pip" ? PIP_MAX_HEIGHT : (inlineContainer && inlineContainer.maxHeight) || RUNAWAY_HEIGHT;
  return {
    height: Math.min(Math.max(wanted, MIN_HEIGHT), limit),
    limit,
    wanted,
    runaway: wanted > limit && limit === RUNAWAY_HEIGHT,
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
