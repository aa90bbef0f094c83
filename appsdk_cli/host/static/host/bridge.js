// @ts-check
// The MCP Apps bridge, host side: JSON-RPC 2.0 over the window's postMessage, one endpoint per view.
// It routes what the view sends (a request to its handler, a notification to the host, an answer to the
// host's own request) and keeps the view's lifecycle flags. What each method does is the host's
// business (session.js); this module touches no DOM, so `node --test` drives it with real messages.

/** @typedef {import("@modelcontextprotocol/ext-apps").McpUiInitializeRequest} McpUiInitializeRequest */
/** @typedef {import("@modelcontextprotocol/ext-apps").McpUiInitializeResult} McpUiInitializeResult */

/** The extension versions this host speaks; a view asking for another gets the session's. */
export const PROTOCOL_VERSIONS = ["2026-01-26"];
export const METHOD_NOT_FOUND = -32601;
export const INTERNAL_ERROR = -32603;

/**
 * @typedef {{ jsonrpc: "2.0", id?: string | number, method?: string, params?: any, result?: any, error?: { code: number, message: string, data?: unknown } }} JsonRpcMessage
 * @typedef {(params: any) => unknown} BridgeHandler a request handler: its value (or promise) is the result
 * @typedef {(method: string, params: Record<string, any>) => void} BridgeNotificationHandler
 * @typedef {(kind: string, level: AppsdkLogLevel, message: string) => void} BridgeLog
 */

/** An error whose JSON-RPC code the answer carries (else -32603). */
export class BridgeError extends Error {
  /** @param {number} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * @param {string | undefined} asked the view's protocolVersion
 * @param {string} fallback the session's
 */
export function negotiateVersion(asked, fallback) {
  return asked && PROTOCOL_VERSIONS.includes(asked) ? asked : fallback;
}

/**
 * The host log's level for an MCP notifications/message level.
 * @param {unknown} level
 * @returns {AppsdkLogLevel}
 */
export function logLevelOf(level) {
  if (level === "error" || level === "critical" || level === "alert" || level === "emergency") return "error";
  return level === "warning" ? "warn" : "info";
}

/**
 * One view's endpoint.
 * @param {{
 *   send: (message: JsonRpcMessage) => void,
 *   handlers: Record<string, BridgeHandler>,
 *   onNotification: BridgeNotificationHandler,
 *   log: BridgeLog,
 *   held?: boolean,
 * }} options
 */
export function createBridge({ send, handlers, onNotification, log, held = false }) {
  /** @type {Map<string | number, (answer: JsonRpcMessage) => void>} */
  const pending = new Map();
  let nextHostId = 0;
  const bridge = {
    /** ui/notifications/initialized came: the view is ready for its data. */
    initialized: false,
    /** ui/initialize came (whether or not the view completed it). */
    initializeSeen: false,
    inputSent: false,
    resultSent: false,
    /** tool-input waits for the call's approval. */
    held,
    cancelled: false,
    /** @type {Record<string, unknown>[]} tool-input-partial asked for before the view initialized (calls.js) */
    partialInputs: [],
    /** @type {Record<string, unknown>} host context changed after ui/initialize was answered, before the view initialized (view.js) */
    contextChanges: {},
    /** @type {string[] | null} the view's appCapabilities.availableDisplayModes */
    appModes: null,

    /**
     * A request from the host to the view (ui/resource-teardown): resolves with the view's answer, or
     * with null when it gives none in time.
     * @param {string} method
     * @param {Record<string, unknown>} params
     * @param {number} waitMs
     * @returns {Promise<JsonRpcMessage | null>}
     */
    request(method, params, waitMs) {
      const id = `appsdk-host-${++nextHostId}`;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve(null);
        }, waitMs);
        pending.set(id, (answer) => {
          clearTimeout(timer);
          resolve(answer);
        });
        send({ jsonrpc: "2.0", id, method, params });
      });
    },

    /**
     * @param {string} method
     * @param {Record<string, unknown>} params
     */
    notify(method, params) {
      send({ jsonrpc: "2.0", method, params });
    },

    /**
     * One message from the view.
     * @param {JsonRpcMessage} message
     * @returns {Promise<void>}
     */
    async receive(message) {
      if (message.method === undefined) {
        // An answer to a host request (ui/resource-teardown).
        const waiting = message.id === undefined ? undefined : pending.get(message.id);
        if (waiting && message.id !== undefined) {
          pending.delete(message.id);
          waiting(message);
        }
        return;
      }
      if (message.id === undefined) {
        onNotification(message.method, message.params || {});
        return;
      }
      if (!bridge.initializeSeen && message.method !== "ui/initialize" && message.method !== "ping") {
        log("bridge", "warn", `${message.method} before ui/initialize`);
      }
      const handler = Object.hasOwn(handlers, message.method) ? handlers[message.method] : undefined;
      if (!handler) {
        log("bridge", "warn", `unsupported request ${message.method}`);
        send({ jsonrpc: "2.0", id: message.id, error: { code: METHOD_NOT_FOUND, message: `Method not found: ${message.method}` } });
        return;
      }
      try {
        const result = await handler(message.params || {});
        send({ jsonrpc: "2.0", id: message.id, result });
      } catch (error) {
        const code = error instanceof BridgeError ? error.code : INTERNAL_ERROR;
        const text = error instanceof Error ? error.message : String(error);
        if (code === METHOD_NOT_FOUND) log("bridge", "warn", `${message.method} refused: ${text}`);
        send({ jsonrpc: "2.0", id: message.id, error: { code, message: text } });
      }
    },
  };
  return bridge;
}

/** @typedef {ReturnType<typeof createBridge>} Bridge */
