// @ts-check
// The sandbox proxy (MCP Apps, "Sandbox proxy"): the frame between a host page and a view, on an origin of
// its own. It says it is ready, takes the view's resource from the host page, frames the view origin's
// copy of that document (the host stored it under the token this page was opened with, so it loads as a
// page of its own site under its CSP header), then forwards every other message between the two,
// untouched, ports included. Its own sandbox-* notifications are never forwarded; it originates nothing
// else but telling the host page when the view has loaded.
//
// One appsdk extension, for our own host page only (a third-party host never sends it, and gets the
// spec's proxy): a re-render of the same call (a save in `appsdk dev`) sends
// { __appsdk: { type: "replace-view", swap, document, resource } } instead of building a new proxy frame.
// The proxy removes its view and frames a fresh one of the new document (another token, so still a new
// document on the view origin under that document's CSP), and first tells the host page
// { __appsdk: { type: "view-replaced", swap }}: messages from here to the host page keep their order, so
// whatever the old view sent before it went arrives before that line, and the host page drops it; once
// the old view is gone, nothing of it is forwarded at all (only the current view's window is). The view
// cannot send either of these messages as the proxy: the proxy's own appsdk messages from the view are
// dropped, as its sandbox-* notifications are.
(() => {
  "use strict";
  const PROXY_READY = "ui/notifications/sandbox-proxy-ready";
  const RESOURCE_READY = "ui/notifications/sandbox-resource-ready";
  const SANDBOX_PREFIX = "ui/notifications/sandbox-";
  const configElement = document.getElementById("appsdk-proxy");
  /** @type {{ hostOrigins: string[], viewOrigin: string }} */
  const config = JSON.parse((configElement && configElement.textContent) || "{}");
  /** the token of the document the view frames: the one this page was opened with, then a re-render's */
  let documentToken = new URLSearchParams(location.search).get("document") || "";
  /** what only the proxy says to the host page (never forwarded from the view) */
  const PROXY_OWN = new Set(["view-loaded", "view-replaced"]);
  /** @type {string | null} the host page's origin, once it spoke */
  let hostOrigin = null;
  /** @type {HTMLIFrameElement | null} */
  let view = null;

  /** @param {unknown} data */
  const isSandboxMessage = (data) =>
    typeof data === "object" &&
    data !== null &&
    "method" in data &&
    typeof data.method === "string" &&
    data.method.startsWith(SANDBOX_PREFIX);

  /** @param {unknown} data @returns {Record<string, unknown> | null} an appsdk message's body */
  const appsdkOf = (data) =>
    typeof data === "object" && data !== null && "__appsdk" in data && typeof data.__appsdk === "object" && data.__appsdk !== null
      ? /** @type {Record<string, unknown>} */ (data.__appsdk)
      : null;

  /** @param {Record<string, unknown>} permissions the spec's McpUiResourcePermissions */
  const allowOf = (permissions) => {
    const features = { camera: "camera", microphone: "microphone", geolocation: "geolocation", clipboardWrite: "clipboard-write" };
    return Object.entries(features)
      .filter(([key]) => permissions && permissions[key])
      .map(([, feature]) => feature)
      .join("; ");
  };

  /** @param {Record<string, unknown>} params sandbox-resource-ready's */
  const render = (params) => {
    if (typeof params.html !== "string") return;
    if (view) view.remove();
    view = document.createElement("iframe");
    view.setAttribute("sandbox", typeof params.sandbox === "string" ? params.sandbox : "allow-scripts allow-same-origin");
    const permissions = params.permissions && typeof params.permissions === "object" ? params.permissions : null;
    if (permissions) view.allow = allowOf(/** @type {Record<string, unknown>} */ (permissions));
    view.title = document.title;
    view.addEventListener("load", () => {
      if (hostOrigin) window.parent.postMessage({ __appsdk: { type: "view-loaded" } }, hostOrigin);
    });
    view.src = `${config.viewOrigin}/view?document=${encodeURIComponent(documentToken)}`;
    document.body.append(view);
  };

  window.addEventListener("message", (event) => {
    const data = event.data;
    if (event.source === window.parent && config.hostOrigins.includes(event.origin)) {
      hostOrigin = event.origin;
      if (isSandboxMessage(data)) {
        if (data.method === RESOURCE_READY && data.params && typeof data.params === "object") render(data.params);
        return;
      }
      const own = appsdkOf(data);
      if (own && own.type === "replace-view") {
        const { swap, document: token, resource } = own;
        if (typeof swap !== "string" || typeof token !== "string" || !resource || typeof resource !== "object") return;
        documentToken = token;
        // Said first (nothing of the old view can be forwarded between this line and the next: one
        // handler at a time), so the host page is not kept waiting on the old frame's removal.
        window.parent.postMessage({ __appsdk: { type: "view-replaced", swap } }, event.origin);
        if (view) view.remove(); // nothing of the old view is forwarded from here on
        view = null;
        render(/** @type {Record<string, unknown>} */ (resource));
        return;
      }
      if (view && view.contentWindow) view.contentWindow.postMessage(data, config.viewOrigin, [...event.ports]);
      return;
    }
    if (!view || event.source !== view.contentWindow || event.origin !== config.viewOrigin) return;
    if (isSandboxMessage(data)) return; // a view cannot speak for the proxy
    const own = appsdkOf(data);
    if (own && typeof own.type === "string" && PROXY_OWN.has(own.type)) return;
    if (hostOrigin) window.parent.postMessage(data, hostOrigin, [...event.ports]);
  });

  // Before the host page speaks, its origin is one of two (127.0.0.1 or localhost): the browser delivers
  // the one whose target origin matches the parent's.
  for (const origin of config.hostOrigins) window.parent.postMessage({ jsonrpc: "2.0", method: PROXY_READY, params: {} }, origin);
})();
