// @ts-check
// The tools: the list on the left (filter, keyboard), and the composer for the selected one (its
// badges, the form generated from its inputSchema, and the JSON editor kept in step with it).

import { $, api, element, messageOf } from "./bench.js";
import { createForm } from "./form.js";

/** @typedef {import("./bench.js").Bench} Bench */

/**
 * A new tools/list: the list redraws, and the selected tool's form follows a changed schema.
 * @param {Bench} bench
 * @param {AppsdkToolListing} listing
 * @param {(info: AppsdkWorkbenchInfo) => void} setInfo
 */
export function setTools(bench, listing, setInfo) {
  bench.tools = listing.tools || [];
  const error = $("tools-error");
  error.hidden = !listing.error;
  // A server that wants a sign-in is not broken: the page says so and offers Sign in below.
  const signIn = Boolean(listing.signIn && listing.signIn.needed);
  error.classList.toggle("wants-sign-in", signIn);
  error.textContent = !listing.error ? "" : signIn ? `Sign in to see the tools: ${listing.error}` : `Could not list the tools: ${listing.error}`;
  showSignIn(listing.signIn);
  $("tool-count").textContent = bench.tools.length ? String(bench.tools.length) : "";
  if (listing.serverInfo && bench.info) setInfo({ ...bench.info, serverInfo: listing.serverInfo });
  renderToolList(bench);
  if (bench.selected) {
    const selected = bench.selected;
    const fresh = bench.tools.find((t) => t.name === selected.name);
    if (fresh && JSON.stringify(fresh.tool) !== JSON.stringify(selected.tool)) selectTool(bench, fresh, { keepValues: true });
    else if (fresh) bench.selected = fresh;
  } else if (bench.tools.length) {
    selectTool(bench, bench.tools.find((t) => t.template) || bench.tools[0]);
  }
}

/**
 * The way on when the server wants a sign-in the page must ask for: a Sign in button, which has the
 * workbench sign in as `appsdk call` does (its sign-in page opens in the browser).
 * @param {AppsdkToolListing["signIn"]} signIn
 */
function showSignIn(signIn) {
  const box = $("sign-in");
  const button = element("sign-in-button", HTMLButtonElement);
  const offered = Boolean(signIn && (signIn.needed || signIn.busy));
  box.hidden = !offered;
  box.dataset.offered = String(offered);
  button.hidden = !offered;
  button.disabled = Boolean(signIn && signIn.busy);
  button.textContent = signIn && signIn.busy ? "Signing in…" : "Sign in";
  if (signIn && !signIn.busy && !signIn.needed) $("sign-in-status").replaceChildren();
}

/** The Sign in button asks the workbench to sign in; the `signin` and `tools` events say how it goes. */
export function wireSignIn() {
  element("sign-in-button", HTMLButtonElement).addEventListener("click", async () => {
    $("sign-in-status").textContent = "Signing in…";
    try {
      await api("/api/sign-in", {});
    } catch (error) {
      $("sign-in-status").textContent = `Could not start the sign-in: ${messageOf(error)}`;
    }
  });
}

/**
 * A sign-in step's words, with the sign-in page as a link: where it names the page's URL ("opening URL in
 * your browser"), and where it says "that URL" (no browser could be started) with `url` the one it named
 * before, so the link outlives the next step. Pure but for making the nodes.
 * @param {string} message
 * @param {string | undefined} url
 * @returns {{ nodes: (string | Node)[], url: string | undefined }}
 */
export function signInStepNodes(message, url) {
  const named = /(https?:\/\/\S+) in your browser/.exec(message);
  /** @param {string} href */
  const link = (href) => Object.assign(document.createElement("a"), { href, target: "_blank", rel: "noopener", textContent: "the sign-in page" });
  if (named) return { nodes: [message.split(named[1])[0], link(named[1]), " in your browser"], url: named[1] };
  if (url && message.includes("that URL")) {
    const [before, after] = message.split("that URL");
    return { nodes: [before, link(url), after], url };
  }
  return { nodes: [message], url: message.startsWith("signed in") ? undefined : url };
}

/**
 * A step of a sign-in the workbench is making (for the page's Sign in, a run or a widget's own call): said
 * under the tool list, with the sign-in page as a link in case no browser could open it.
 * @param {{ message: string }} note
 */
export function showSignInStep(note) {
  const status = $("sign-in-status");
  const message = note.message.split("; tokens cached in")[0]; // where the cache is: the terminal's business
  const { nodes, url } = signInStepNodes(message, status.dataset.url);
  if (url) status.dataset.url = url;
  else delete status.dataset.url;
  status.replaceChildren(...nodes);
  // A run's or a widget's sign-in is said here too; the button stays for the page's own Sign in.
  const box = $("sign-in");
  const offered = box.dataset.offered === "true";
  element("sign-in-button", HTMLButtonElement).hidden = !offered;
  box.hidden = false;
  if (!offered && message.startsWith("signed in")) {
    // Done: said for a moment, then the tool list has its room back.
    setTimeout(() => {
      if (status.textContent === message && box.dataset.offered !== "true") box.hidden = true;
    }, 4000);
  }
}

/**
 * The list on the left, drawn afresh (a new listing, the filter): one fragment, no listener per item (the
 * list's own, wired once, find the tool by the item's name), so thousands of tools draw in one go.
 * @param {Bench} bench
 */
export function renderToolList(bench) {
  const filter = element("tool-filter", HTMLInputElement).value.trim().toLowerCase();
  const list = $("tool-list");
  wireToolList(bench, list);
  const selectedName = bench.selected && bench.selected.name;
  const items = document.createDocumentFragment();
  for (const tool of bench.tools) {
    const haystack = `${tool.name} ${tool.title || ""} ${tool.description || ""}`.toLowerCase();
    if (filter && !haystack.includes(filter)) continue;
    const item = document.createElement("li");
    item.className = "tool-item";
    item.setAttribute("role", "option");
    item.tabIndex = selectedName === tool.name ? 0 : -1;
    item.dataset.tool = tool.name;
    item.setAttribute("aria-selected", String(selectedName === tool.name));
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = tool.name;
    const kind = document.createElement("span");
    kind.className = `kind${tool.template ? " widget" : ""}`;
    kind.textContent = tool.template ? "widget" : "text";
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = tool.title || tool.description || "";
    item.append(name, kind, title);
    items.append(item);
  }
  list.replaceChildren(items);
  const first = list.firstElementChild;
  if (!list.querySelector('[tabindex="0"]') && first instanceof HTMLElement) first.tabIndex = 0;
}

/**
 * The list's clicks and keys, handled once for all its items.
 * @param {Bench} bench
 * @param {HTMLElement} list
 */
function wireToolList(bench, list) {
  if (list.dataset.wired) return;
  list.dataset.wired = "true";
  /** @param {EventTarget | null} target */
  const itemOf = (target) => (target instanceof Element ? /** @type {HTMLElement | null} */ (target.closest(".tool-item")) : null);
  /** @param {HTMLElement} item */
  const toolOf = (item) => bench.tools.find((t) => t.name === item.dataset.tool);
  list.addEventListener("click", (event) => {
    const item = itemOf(event.target);
    const tool = item && toolOf(item);
    if (tool) selectTool(bench, tool);
  });
  list.addEventListener("keydown", (event) => {
    const item = itemOf(event.target);
    if (!item) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      const tool = toolOf(item);
      if (!tool) return;
      selectTool(bench, tool);
      /** @type {HTMLElement | null} */ ($("form-pane").querySelector("input, select, textarea, button"))?.focus();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const sibling = event.key === "ArrowDown" ? item.nextElementSibling : item.previousElementSibling;
      if (sibling instanceof HTMLElement) sibling.focus();
    }
  });
}

/**
 * The selection moves in the list as drawn: two items change, the others stay.
 * @param {string} name
 */
function markSelected(name) {
  const list = $("tool-list");
  for (const item of list.querySelectorAll('.tool-item[aria-selected="true"], .tool-item[tabindex="0"]')) {
    item.setAttribute("aria-selected", "false");
    /** @type {HTMLElement} */ (item).tabIndex = -1;
  }
  const chosen = [...list.children].find((item) => item instanceof HTMLElement && item.dataset.tool === name);
  const target = chosen instanceof HTMLElement ? chosen : list.firstElementChild;
  if (chosen instanceof HTMLElement) chosen.setAttribute("aria-selected", "true");
  if (target instanceof HTMLElement) target.tabIndex = 0;
}

/**
 * @param {string} text
 * @param {string} [kind]
 * @param {string} [title]
 */
function badge(text, kind, title) {
  const item = document.createElement("li");
  item.className = `badge${kind ? ` ${kind}` : ""}`;
  item.textContent = text;
  if (title) item.title = title;
  return item;
}

/**
 * @param {Bench} bench
 * @param {AppsdkWorkbenchTool} tool
 * @param {{ keepValues?: boolean, values?: Record<string, unknown> }} [options]
 */
export function selectTool(bench, tool, { keepValues = false, values } = {}) {
  const previous = keepValues && bench.form ? bench.form.value() : null;
  bench.selected = tool;
  $("composer-empty").hidden = true;
  $("composer-body").hidden = false;
  $("tool-title").textContent = tool.title || tool.name;
  $("tool-name").textContent = tool.name;
  $("tool-description").textContent = tool.description || "";
  const badges = $("tool-badges");
  badges.replaceChildren();
  if (tool.template) badges.append(badge("widget", "accent", tool.template));
  if (tool.readOnly) badges.append(badge("read-only"));
  if (tool.destructive) badges.append(badge("destructive", "warn"));
  if (tool.openWorld) badges.append(badge("open world"));
  if (tool.idempotent) badges.append(badge("idempotent"));
  if (tool.widgetAccessible) badges.append(badge("widget may call", "", 'openai/widgetAccessible: the widget may call this tool'));
  if (!tool.visibility.includes("model")) badges.append(badge("app only", "warn", "_meta.ui.visibility leaves out the model"));
  if (tool.fileParams.length) badges.append(badge(`files: ${tool.fileParams.join(", ")}`, "", "openai/fileParams"));
  if (tool.invoking) badges.append(badge(`“${tool.invoking}”`, "", "openai/toolInvocation/invoking"));
  const form = createForm(tool.tool.inputSchema || { type: "object" }, { fileParams: tool.fileParams, upload: uploadFile });
  bench.form = form;
  form.onChange(() => syncJsonFromForm(bench));
  $("form-pane").replaceChildren(form.element);
  if (values) form.setValue(values);
  else if (previous) form.setValue(previous);
  syncJsonFromForm(bench);
  $("form-problems").textContent = "";
  $("tool-json").textContent = JSON.stringify(tool.tool, null, 2);
  markSelected(tool.name);
}

/**
 * Into the host's file store (the same one window.openai.uploadFile uses), base64 over JSON.
 * @param {File} file
 * @returns {Promise<AppsdkStoredFile>}
 */
async function uploadFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return api("/api/files", { fileName: file.name, mimeType: file.type || "application/octet-stream", data: btoa(binary) });
}

/** @param {Bench} bench */
export function syncJsonFromForm(bench) {
  const editor = element("json-editor", HTMLTextAreaElement);
  editor.value = JSON.stringify(bench.form ? bench.form.value() : {}, null, 2);
  $("json-message").textContent = "";
  editor.removeAttribute("aria-invalid");
}

/**
 * The JSON editor's arguments into the form; null (and a message) when they are not a JSON object.
 * @param {Bench} bench
 * @returns {Record<string, unknown> | null}
 */
export function syncFormFromJson(bench) {
  const editor = element("json-editor", HTMLTextAreaElement);
  const text = editor.value;
  try {
    const value = text.trim() ? JSON.parse(text) : {};
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("the arguments must be a JSON object");
    if (bench.form) bench.form.setValue(value);
    $("json-message").textContent = "";
    editor.removeAttribute("aria-invalid");
    return value;
  } catch (error) {
    $("json-message").textContent = messageOf(error);
    editor.setAttribute("aria-invalid", "true");
    return null;
  }
}

/**
 * @param {Bench} bench
 * @param {"form" | "json"} which
 */
export function showEditor(bench, which) {
  const json = which === "json";
  $("tool-form-area").classList.toggle("show-json", json);
  $("tab-form").setAttribute("aria-selected", String(!json));
  $("tab-json").setAttribute("aria-selected", String(json));
  if (json) syncJsonFromForm(bench);
  else syncFormFromJson(bench);
}
