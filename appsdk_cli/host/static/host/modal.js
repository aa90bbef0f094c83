// @ts-check
// window.openai.requestModal({ template?, params?, title? }): a modal the host owns, over the
// conversation, showing the call's template or another `ui://` template the server lists, while the
// inline view stays live underneath with its state. One at a time; the host's close control, Escape and
// the modal's own requestClose (or the bridge's request-teardown) close it, and only it.
//
// The modal is a second view of the same call, through the same origin model as the first: a proxy frame
// on the sandbox origin framing the view origin's document, its own window.openai port and its own MCP
// Apps bridge endpoint; main.js routes each frame's messages to its own view (viewFor).
//
// OpenAI's reference lists `view` among window.openai's context and `requestModal` among its methods
// without giving either shape. This follows the peers: `window.openai.view` is `{ mode, params }` (mode
// "inline" or "modal", params what requestModal passed: Skybridge's View type and useRequestModal,
// MCPJam's ChatGPT renderer), the modal gets the inline view's toolInput and toolOutput and stays in
// displayMode "inline" (MCPJam), and `template` names a registered `ui://` template (sunpeak's
// OpenAIRequestModalParams). The widget's promise resolves once the modal shows.

import { bridgeFor } from "./calls.js";
import { markDeclaredModes } from "./controls.js";
import { $, addLog, short } from "./page.js";
import { applyHeight, detachedBridge, documentQuery, newTiming, profileOf, teardownView } from "./view.js";

/** @typedef {import("./page.js").Host} Host */

/**
 * @typedef {object} Modal
 * @property {Host} opener the inline view's host
 * @property {Host} view the modal's own view: its frame, window.openai port and bridge endpoint
 * @property {string} template the template it shows
 * @property {Record<string, unknown> | null} params
 * @property {Promise<void> | null} closing
 * @property {() => void} unwire removes the listeners the open modal added to the page
 * @property {(why: string) => Promise<void>} close for view.js: the modal goes with the view that opened it
 */

/** Margins around the modal's panel in the host page's area, for the height the workbench gives it. */
const MODAL_MARGIN = 48;

/**
 * The view a message came from, for main.js: the inline view's proxy frame, or the open modal's; null
 * for anything else, which the host page ignores.
 * @param {Host | null} host
 * @param {MessageEventSource | null} source
 * @returns {Host | null}
 */
export function viewFor(host, source) {
  if (!host || !source) return null;
  if (host.frame && source === host.frame.contentWindow) return host;
  const view = host.modal ? host.modal.view : null;
  if (view && view.frame && source === view.frame.contentWindow) return view;
  return null;
}

/**
 * The other view of the same widget (the modal's opener, or the open modal), which shares its state.
 * @param {Host} host
 * @returns {Host[]}
 */
export function otherViews(host) {
  if (host.inModal) return [host.inModal.opener];
  return host.modal ? [host.modal.view] : [];
}

/**
 * requestModal's arguments, checked: a one-line refusal for anything the host would not open.
 * @param {Host} host
 * @param {Record<string, any>} p
 */
export function modalRequest(host, p) {
  if (host.inModal) throw new Error("requestModal: the modal is already open (one at a time)");
  if (host.modal) throw new Error("requestModal: a modal is already open (one at a time)");
  const template = p.template === undefined || p.template === null ? host.session.template.uri : p.template;
  if (typeof template !== "string" || !template.startsWith("ui://")) {
    throw new Error(`requestModal: template must be a ui:// resource URI, not ${short(template)}`);
  }
  const params = p.params === undefined ? null : p.params;
  if (params !== null && (typeof params !== "object" || Array.isArray(params))) {
    throw new Error(`requestModal: params must be an object, not ${short(params)}`);
  }
  const title = typeof p.title === "string" && p.title ? p.title : template;
  return { template, params: /** @type {Record<string, unknown> | null} */ (params), title };
}

/**
 * The modal's own view: the same call, page and session as its opener; its own frame, channels, health
 * and sizing. Its size is the modal's business, so it never reaches the page's "size" event (the
 * workbench sizes its frame by it).
 * @param {Host} opener
 * @param {HTMLIFrameElement} frame
 * @returns {Host}
 */
function modalView(opener, frame) {
  const page = opener.page;
  const events = {
    on: page.events.on,
    /** @type {typeof page.events.emit} */
    emit: (type, detail) => {
      if (type !== "size") page.events.emit(type, detail);
    },
  };
  return {
    page: { ...page, events },
    session: opener.session,
    catalog: opener.catalog,
    state: { ...opener.state, displayMode: "inline", approval: false, reportedHeight: null, heightSource: null, runawayLogged: false },
    frame,
    openaiPort: null,
    resource: null,
    bridge: detachedBridge(),
    health: { read: new Set(), errors: [], loadFailures: [] },
    timing: newTiming(),
    loaded: true,
    modal: null,
  };
}

/**
 * The host page's area the modal covers grows, in the workbench, to the modal's panel: the workbench
 * sizes the frame it embeds the page in by the page's "size" events.
 * @param {Modal} modal
 */
function fitEmbed(modal) {
  const { opener } = modal;
  if (!opener.page.embed || modal.closing) return;
  const panel = $("modal-panel");
  const inline = opener.frame ? opener.frame.getBoundingClientRect().height : 0;
  opener.page.events.emit("size", { height: Math.ceil(Math.max(inline, panel.getBoundingClientRect().height + MODAL_MARGIN)) });
}

/**
 * window.openai.requestModal from the inline view: the modal shows, or the widget's promise is refused
 * with one line, which the host log shows too.
 * @param {Host} host
 * @param {Record<string, any>} p
 */
export async function openModal(host, p) {
  try {
    return await showModal(host, modalRequest(host, p));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    addLog(host.page, "openai", "error", message.startsWith("requestModal") ? message : `requestModal: ${message}`);
    throw error;
  }
}

/**
 * @param {Host} opener
 * @param {{ template: string, params: Record<string, unknown> | null, title: string }} request
 */
async function showModal(opener, { template, params, title }) {
  const frame = document.createElement("iframe");
  frame.id = "modal-frame";
  frame.title = `${title} (modal)`;
  frame.setAttribute("sandbox", profileOf(opener).sandbox);
  const view = modalView(opener, frame);
  /** @type {Modal} */
  const modal = { opener, view, template, params, closing: null, unwire: () => {}, close: (why) => closeModal(modal, why) };
  view.inModal = modal;
  opener.modal = modal; // taken now: a second request while this one loads is refused
  let token = "";
  try {
    const query = documentQuery(view);
    query.set("view", "modal");
    query.set("viewParams", JSON.stringify(params));
    if (template !== opener.session.template.uri) query.set("template", template);
    /** @type {{ html: string, csp: string, document: string }} */
    const widgetDocument = await opener.page.api(`/api/widget?${query}`);
    token = widgetDocument.document;
    view.resource = {
      html: widgetDocument.html,
      sandbox: profileOf(opener).sandbox,
      csp: template === opener.session.template.uri ? opener.session.template.declaredCsp || undefined : undefined,
    };
  } catch (error) {
    opener.modal = null;
    throw error;
  }
  if (modal.closing) throw new Error("requestModal: the widget went before its modal opened");
  view.bridge = bridgeFor(view, false, {
    // A modal keeps its place: it answers with the mode it is in rather than leaving the overlay.
    handlers: { "ui/request-display-mode": () => ({ mode: view.state.displayMode }) },
    onNotification: (method) => {
      if (method !== "ui/notifications/request-teardown") return false;
      addLog(opener.page, "bridge", "info", "ui/notifications/request-teardown from the modal: it closes");
      closeModal(modal, "the modal asked to close");
      return true;
    },
  });
  frame.src = `${opener.session.sandboxOrigin}/proxy?${new URLSearchParams({ document: token })}`;
  $("modal-title").textContent = title;
  $("modal-body").replaceChildren(frame);
  const overlay = $("modal");
  overlay.style.setProperty("--device-width", $("conversation").style.getPropertyValue("--device-width"));
  overlay.hidden = false;
  applyHeight(view);
  const close = () => closeModal(modal, "the host's close button");
  /** @param {KeyboardEvent} event */
  const onKey = (event) => {
    if (event.key === "Escape") closeModal(modal, "Escape");
  };
  /** @param {MouseEvent} event a click on the backdrop, outside the panel */
  const onBackdrop = (event) => {
    if (event.target === overlay) closeModal(modal, "a click outside it");
  };
  const closeButton = $("modal-close");
  closeButton.addEventListener("click", close);
  document.addEventListener("keydown", onKey);
  overlay.addEventListener("click", onBackdrop);
  const resized = new ResizeObserver(() => fitEmbed(modal));
  resized.observe($("modal-panel"));
  modal.unwire = () => {
    closeButton.removeEventListener("click", close);
    document.removeEventListener("keydown", onKey);
    overlay.removeEventListener("click", onBackdrop);
    resized.disconnect();
  };
  closeButton.focus();
  addLog(opener.page, "openai", "info", `requestModal: ${template} opens in a modal${params ? ` with params ${short(params)}` : ""}`);
  return {};
}

/**
 * Closes the modal, and only it: the view is asked to tear down (its answer awaited, as for the inline
 * view), then its frame and channels go; the inline view underneath is untouched.
 * @param {Modal} modal
 * @param {string} why
 */
export function closeModal(modal, why) {
  if (modal.closing) return modal.closing;
  modal.closing = (async () => {
    const { opener, view } = modal;
    await teardownView(view);
    modal.unwire();
    if (view.openaiPort) view.openaiPort.close();
    view.openaiPort = null;
    view.frame = null;
    $("modal").hidden = true;
    $("modal-body").replaceChildren();
    if (opener.modal === modal) opener.modal = null;
    addLog(opener.page, "host", "info", `the modal closed (${why}); the inline view stays`);
    markDeclaredModes(opener);
    applyHeight(opener); // the workbench's frame goes back to the inline view's size
  })();
  return modal.closing;
}
