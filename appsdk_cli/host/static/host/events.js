// @ts-check
// The host page's events (window.appsdkPreview.on): what the workbench, tests and `--screenshot` follow.
// Pure: no DOM, so `node --test` drives it.

/** @type {AppsdkPreviewEventType[]} */
export const EVENT_TYPES = ["traffic", "log", "model", "widget-state", "csp", "display-mode", "size", "settled", "approval"];
// Kept whole for a listener that subscribes late (the workbench attaches after the frame loaded); the
// others are states, so only the latest is replayed.
const HISTORY_TYPES = new Set(["traffic", "log", "model", "csp"]);
export const HISTORY_LIMIT = 5000;

/**
 * @typedef {object} EventHub
 * @property {<T extends AppsdkPreviewEventType>(type: T, detail: AppsdkPreviewEvents[T]) => void} emit
 * @property {<T extends AppsdkPreviewEventType>(type: T, listener: (detail: AppsdkPreviewEvents[T]) => void) => () => void} on
 *   on(type, listener) → unsubscribe. Past traffic, log, model and csp events are replayed to a new
 *   listener; of the other types, the latest one.
 */

/**
 * @param {{ limit?: number, onListenerError?: (type: string, error: unknown) => void }} [options]
 * @returns {EventHub}
 */
export function createEventHub({ limit = HISTORY_LIMIT, onListenerError } = {}) {
  /** @type {Map<string, Set<(detail: any) => void>>} */
  const listeners = new Map(EVENT_TYPES.map((type) => [type, new Set()]));
  /** @type {Map<string, unknown[]>} */
  const history = new Map(EVENT_TYPES.map((type) => [type, []]));
  const report =
    onListenerError || ((type, error) => console.error(`appsdkPreview ${type} listener failed:`, error));

  /** @param {string} type */
  const known = (type) => {
    const kept = history.get(type);
    const subscribed = listeners.get(type);
    if (!kept || !subscribed) throw new Error(`unknown event type ${type}; one of ${EVENT_TYPES.join(", ")}`);
    return { kept, subscribed };
  };

  return {
    emit(type, detail) {
      const { kept, subscribed } = known(type);
      if (HISTORY_TYPES.has(type)) {
        kept.push(detail);
        if (kept.length > limit) kept.shift();
      } else {
        kept.splice(0, kept.length, detail);
      }
      for (const listener of subscribed) {
        try {
          listener(detail);
        } catch (error) {
          report(type, error);
        }
      }
    },
    on(type, listener) {
      const { kept, subscribed } = known(type);
      for (const past of kept) listener(/** @type {any} */ (past));
      subscribed.add(listener);
      return () => subscribed.delete(listener);
    },
  };
}
