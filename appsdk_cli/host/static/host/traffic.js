// @ts-check
// Traffic: every message between host and widget, as a trace record (the shape `appsdk trace` writes).
// Pure: no DOM, so `node --test` drives it.

/**
 * @typedef {{ kind: AppsdkTrafficRecord["kind"], method: string | null, id: string | number | null }} MessageShape
 */

/**
 * What one message is: a request, a response, an error or a notification, with its method and id. Null
 * for what is not traffic (the bootstrap's own reports on the window.openai port: log, csp, autosize, …).
 * @param {"bridge" | "openai"} channel
 * @param {Record<string, any>} message
 * @returns {MessageShape | null}
 */
export function classify(channel, message) {
  if (channel === "bridge") {
    if (message.method !== undefined) {
      return { kind: message.id === undefined ? "notification" : "request", method: message.method, id: message.id ?? null };
    }
    return { kind: "error" in message ? "error" : "response", method: null, id: message.id ?? null };
  }
  if (message.type === "request") return { kind: "request", method: message.method, id: message.id };
  if (message.type === "response") return { kind: message.error ? "error" : "response", method: null, id: message.id };
  if (message.type === "globals") return { kind: "notification", method: "openai:set_globals", id: null };
  if (message.type === "notify") return { kind: "notification", method: message.method, id: null };
  return null;
}

// Requests still waiting for their answer: enough for any real widget, bounded for one that never answers
// (as the Tracer's PENDING_LIMIT).
export const IN_FLIGHT_LIMIT = 4096;

/**
 * The recorder of one host page: answers are matched to their requests (method, duration) per channel
 * and direction.
 * @param {{ run: string | null, now?: () => number, clock?: () => string }} options
 */
export function createTrafficRecorder({ run, now = () => performance.now(), clock = () => new Date().toISOString() }) {
  /** @type {Map<string, { method: string | null, at: number }>} `${channel}|${from}|${id}` → the request */
  const inFlight = new Map();
  const encoder = new TextEncoder();
  return {
    /**
     * @param {"bridge" | "openai"} channel
     * @param {string} from
     * @param {string} to
     * @param {unknown} message
     * @returns {AppsdkTrafficRecord | null}
     */
    record(channel, from, to, message) {
      const shape = message && typeof message === "object" ? classify(channel, message) : null;
      if (!shape) return null;
      const at = now();
      /** @type {AppsdkTrafficRecord} */
      const record = {
        time: clock(),
        channel,
        from,
        to,
        kind: shape.kind,
        method: shape.method,
        id: shape.id,
        size: encoder.encode(JSON.stringify(message) || "").length,
      };
      if (shape.kind === "request") {
        const key = `${channel}|${from}|${shape.id}`;
        inFlight.delete(key); // a reused id goes to the end: the oldest waiting are the first to go
        inFlight.set(key, { method: shape.method, at });
        if (inFlight.size > IN_FLIGHT_LIMIT) inFlight.delete(/** @type {string} */ (inFlight.keys().next().value));
      } else if (shape.kind === "response" || shape.kind === "error") {
        const key = `${channel}|${to}|${shape.id}`;
        const asked = inFlight.get(key);
        if (asked) {
          inFlight.delete(key);
          record.method = asked.method;
          record.duration_ms = Math.round((at - asked.at) * 10) / 10;
        }
      }
      if (run !== null) record.run = run;
      record.message = message;
      return record;
    },
    /** How many requests wait for their answer (at most IN_FLIGHT_LIMIT). */
    get waiting() {
      return inFlight.size;
    },
  };
}
