// @ts-check
// The runs: the conversation in the middle. A call from the composer, each run's card (its status,
// what the model reads, its widgets), re-runs, and the run's frames following its outcome.

import { $, api, element, hostOptions, messageOf } from "./bench.js";
import { clearFrames, renderFrames } from "./frames.js";
import { selectTool, signInStepNodes, syncFormFromJson } from "./tools.js";

/** @typedef {import("./bench.js").Bench} Bench */
/** @typedef {import("./bench.js").PageRun} PageRun */

/**
 * A run's status line and its timing, as ChatGPT words the call. Pure.
 * @param {Pick<AppsdkRun, "status" | "tool" | "invoking" | "invoked" | "durationMs" | "result"> & { crash?: AppsdkToolCrash | null, widgetError?: string | null }} data
 * @returns {[string, string]}
 */
export function statusText(data) {
  const seconds = data.durationMs != null ? `${(data.durationMs / 1000).toFixed(2)} s` : "";
  switch (data.status) {
    case "running":
      return [data.invoking || `Calling ${data.tool}…`, ""];
    case "done":
      // An isError result is a failed call, whatever the tool's "invoked" text says.
      if (data.result && data.result.isError) {
        return [data.crash ? `${data.tool} raised ${data.crash.type}` : `${data.tool} returned an error`, seconds];
      }
      if (data.widgetError) return [`${data.invoked || `Called ${data.tool}`}; its widget threw`, seconds];
      return [data.invoked || `Called ${data.tool}`, seconds];
    case "cancelled":
      return ["Cancelled", seconds];
    case "invalid":
      return ["Not sent: the arguments do not fit the tool", ""];
    default:
      return ["The call failed", seconds];
  }
}

/**
 * What appsdk dev saw a crashed tool raise, as lines: the exception, then each of the user's frames
 * (file:line in function, and its code), innermost last. Pure.
 * @param {AppsdkToolCrash} crash
 * @returns {{ summary: string, frames: { where: string, code: string }[] }}
 */
export function crashLines(crash) {
  const summary = crash.message ? `${crash.type}: ${crash.message}` : crash.type;
  const frames = (crash.frames || []).map((frame) => ({ where: `${frame.file}:${frame.line} in ${frame.function}`, code: frame.code || "" }));
  if (!frames.length && crash.file) frames.push({ where: `${crash.file}:${crash.line ?? "?"}${crash.function ? ` in ${crash.function}` : ""}`, code: "" });
  return { summary, frames };
}

/**
 * A progress or log notification of a call in flight, as one short line. Pure.
 * @param {{ method?: string | null, params?: Record<string, any> }} note
 */
export function progressText(note) {
  const params = note.params || {};
  if (note.method === "notifications/progress") {
    const of = typeof params.total === "number" ? `${params.progress}/${params.total}` : String(params.progress ?? "");
    return [of, typeof params.message === "string" ? params.message : ""].filter(Boolean).join(" · ");
  }
  if (note.method === "notifications/message") {
    const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data ?? "");
    return `${params.level || "log"}: ${data}`.slice(0, 200);
  }
  if (note.method === "task") {
    // The tool runs only as an MCP task: the call became this task, whose result the workbench waits for.
    const status = [params.status, params.statusMessage].filter((s) => typeof s === "string" && s).join(": ");
    return `running as MCP task ${String(params.taskId ?? "")}${status ? ` (${status})` : ""}`.slice(0, 200);
  }
  return "";
}

// Image types a browser shows from a data: URL without running anything (no SVG, which is a document).
const SHOWN_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"]);
const MAX_IMAGE_BASE64 = 16 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** @param {unknown} data */
const approxBytes = (data) => (typeof data === "string" ? Math.floor((data.length * 3) / 4) : 0);

/**
 * How the run's result view shows one non-text content block: an image as a data: URL built from its
 * base64 (only of an image type in SHOWN_IMAGE_TYPES, and only when the data is base64), anything else
 * as a line saying what it is. The server's text is never made HTML. Pure.
 * @param {Record<string, any>} block
 * @returns {{ image: string, text: string } | { image?: undefined, text: string }}
 */
export function contentBlockView(block) {
  const mime = typeof block.mimeType === "string" ? block.mimeType.toLowerCase().trim() : "";
  const size = `about ${approxBytes(block.data)} bytes`;
  switch (block.type) {
    case "image": {
      const data = typeof block.data === "string" ? block.data : "";
      let refused = "";
      if (!SHOWN_IMAGE_TYPES.has(mime)) refused = `not an image type the workbench shows (${[...SHOWN_IMAGE_TYPES].join(", ")})`;
      else if (!data || data.length > MAX_IMAGE_BASE64) refused = data ? "too large to show" : "no data";
      else if (data.length % 4 !== 0 || !BASE64.test(data)) refused = "its data is not base64";
      if (refused) return { text: `image ${mime || "(no mimeType)"}, ${size}: not shown, ${refused}` };
      return { image: `data:${mime};base64,${data}`, text: `image ${mime}, ${size}` };
    }
    case "audio":
      return { text: `audio ${mime || "(no mimeType)"}, ${size} (not played here)` };
    case "resource_link":
      return { text: `resource link ${String(block.uri ?? "")}${block.name ? ` (${String(block.name)})` : ""}${mime ? ` ${mime}` : ""}` };
    case "resource": {
      const resource = block.resource && typeof block.resource === "object" ? block.resource : {};
      const kind = typeof resource.text === "string" ? `text, ${resource.text.length} characters` : `binary, ${approxBytes(resource.blob)} bytes`;
      const type = typeof resource.mimeType === "string" ? `${resource.mimeType}, ` : "";
      return { text: `embedded resource ${String(resource.uri ?? "")} (${type}${kind})` };
    }
    default:
      return { text: `a ${String(block.type ?? "untyped")} block` };
  }
}

/**
 * Whether a run the page heard is older than the one it has: the POST's answer and the pushed events
 * race, and the page keeps the newest. Pure.
 * @param {Pick<AppsdkRun, "version">} heard
 * @param {Pick<AppsdkRun, "version"> | null} kept
 */
export function isStale(heard, kept) {
  return Boolean(kept && (heard.version ?? 0) < (kept.version ?? 0));
}

/**
 * The composer's Run: the form's (or the JSON editor's) arguments, checked, then called.
 * @param {Bench} bench
 * @param {Event} [event]
 */
export async function submitRun(bench, event) {
  if (event) event.preventDefault();
  const selected = bench.selected;
  const form = bench.form;
  if (!selected || !form) return;
  const jsonMode = $("tool-form-area").classList.contains("show-json");
  let args;
  if (jsonMode) {
    args = syncFormFromJson(bench);
    if (args === null) return;
  }
  const problems = form.validate();
  $("form-problems").textContent = problems.length ? `Fix ${problems.length === 1 ? "this" : "these"} first: ${problems.join("; ")}` : "";
  if (problems.length) {
    const first = $("form-pane").querySelector(".field.invalid .control, .field.invalid input, .field.invalid select");
    if (first instanceof HTMLElement && !jsonMode) first.focus();
    return;
  }
  if (!jsonMode) args = form.value();
  const { locale, permissions } = hostOptions(bench);
  /** @type {{ run?: AppsdkRun }} */
  const { run } = await api("/api/runs", { tool: selected.name, arguments: args, locale, permissions }).catch((error) => {
    $("form-problems").textContent = messageOf(error);
    return {};
  });
  if (run) {
    upsertRun(bench, run);
    bench.runs.get(run.id)?.element.scrollIntoView({ block: "start", behavior: "smooth" });
  }
}

/** @param {AppsdkRun} data */
function callText(data) {
  const node = document.createDocumentFragment();
  const tool = document.createElement("span");
  tool.className = "tool";
  tool.textContent = data.tool;
  const args = Object.keys(data.arguments || {}).length ? JSON.stringify(data.arguments) : "";
  node.append(tool, `(${args})`);
  return node;
}

/**
 * @param {HTMLElement} card
 * @param {string} selector
 */
function part(card, selector) {
  const found = card.querySelector(selector);
  if (!(found instanceof HTMLElement)) throw new Error(`a run card has no ${selector}`);
  return found;
}

/**
 * A run the page heard of (its POST's answer, or a push): its card is made or updated, and its
 * widgets follow its outcome.
 * @param {Bench} bench
 * @param {AppsdkRun} data
 */
export function upsertRun(bench, data) {
  let run = bench.runs.get(data.id);
  const previous = run ? run.data : null;
  if (isStale(data, previous)) return;
  if (!run) {
    const template = element("run-template", HTMLTemplateElement).content.firstElementChild;
    if (!template) throw new Error("#run-template is empty");
    const card = /** @type {HTMLElement} */ (template.cloneNode(true));
    run = { data, element: card, frames: [] };
    bench.runs.set(data.id, run);
    card.dataset.run = data.id;
    part(card, '[data-action="rerun"]').addEventListener("click", () => rerun(bench, data.id));
    part(card, '[data-action="cancel"]').addEventListener("click", () => api("/api/runs/cancel", { run: data.id }).catch(() => {}));
    part(card, '[data-action="edit"]').addEventListener("click", () => editArguments(bench, data.id));
    part(card, '[data-action="reload"]').addEventListener("click", () => reloadRun(bench, data.id));
    const runs = $("runs");
    const after = [...runs.children].find((child) => {
      const other = child instanceof HTMLElement && child.dataset.run ? bench.runs.get(child.dataset.run) : undefined;
      return other !== undefined && other.data.sequence > data.sequence;
    });
    runs.insertBefore(card, after || null);
    $("runs-empty").hidden = true;
  }
  run.data = data;
  const card = run.element;
  card.dataset.status = data.status;
  card.dataset.widget = data.widget ? "1" : "0";
  part(card, ".call-text").replaceChildren(callText(data));
  const [text, meta] = statusText(data);
  part(card, ".status-text").textContent = text;
  part(card, ".run-meta").textContent = [meta, data.calls > 1 ? `run ${data.calls}×` : "", run.rerunNote].filter(Boolean).join(" · ");
  card.dataset.outcome = (data.status === "done" && data.result && data.result.isError) || data.widgetError ? "error" : "";
  renderCrash(card, data);
  if (data.status !== "running") {
    part(card, ".run-progress").hidden = true;
    run.notes = {};
  }
  const problem = part(card, ".run-problem");
  // A widget that threw says so on its card (a React widget that throws is a blank card otherwise).
  const warnings = [...(data.widgetError ? [`The widget threw: ${data.widgetError}`] : []), ...(data.warnings || [])];
  problem.hidden = !data.error && !warnings.length;
  problem.classList.toggle("warn", !data.error && !data.widgetError);
  problem.textContent = data.error || warnings.join("\n");
  renderModelText(card, data);
  // A first call with a widget shows it while the call is in flight, as ChatGPT does: the views get
  // tool-input now, then tool-result (newResult) or tool-cancelled (cancelCall) when the run ends.
  if (data.status === "running" && data.widget && !data.calls && !run.frames.length) {
    run.inFlight = true;
    renderFrames(bench, run);
  }
  const finishedNow = data.status === "done" && (!previous || previous.status !== "done" || previous.calls !== data.calls);
  if (finishedNow) {
    bench.panels.modelResult(data);
    if (data.widget && run.inFlight) {
      run.inFlight = false;
      for (const frame of run.frames) if (data.result) frame.newResult(data.result);
    } else if (data.widget) renderFrames(bench, run, { fresh: Boolean(previous && previous.calls && previous.calls !== data.calls) });
    else clearFrames(run);
  } else if (run.inFlight && data.status !== "running") {
    run.inFlight = false;
    for (const frame of run.frames) frame.cancelCall(data.error || `the call ${data.status === "cancelled" ? "was cancelled" : "failed"}`);
  }
  bench.panels.setRuns([...bench.runs.values()].filter((r) => r.data.widget).map((r) => r.data));
}

/**
 * A failed call's report: what the tool raised (appsdk dev's crash report: exception, the user's frames,
 * file:line) and what to tell the developer; the widget never sees it.
 * @param {HTMLElement} card
 * @param {AppsdkRun} data
 */
function renderCrash(card, data) {
  const box = part(card, ".run-crash");
  box.replaceChildren();
  const failed = data.status === "done" && data.result && data.result.isError;
  box.hidden = !failed || (!data.crash && !data.hint);
  if (box.hidden) return;
  if (data.crash) {
    const { summary, frames } = crashLines(data.crash);
    box.append(Object.assign(document.createElement("div"), { className: "crash-summary", textContent: summary }));
    const list = Object.assign(document.createElement("ol"), { className: "crash-frames" });
    for (const frame of frames) {
      const item = document.createElement("li");
      item.append(
        Object.assign(document.createElement("code"), { className: "crash-where", textContent: frame.where }),
        Object.assign(document.createElement("code"), { className: "crash-code", textContent: frame.code }),
      );
      list.append(item);
    }
    if (frames.length) box.append(list);
  }
  if (data.hint) box.append(Object.assign(document.createElement("p"), { className: "crash-hint", textContent: `Hint: ${data.hint}` }));
}

/**
 * A progress or log notification of a run's call in flight (the traffic panel has the message too).
 * @param {Bench} bench
 * @param {{ run: string, method?: string | null, params?: Record<string, any> }} note
 */
export function showProgress(bench, note) {
  const run = bench.runs.get(note.run);
  if (!run || run.data.status !== "running") return;
  const text = progressText(note);
  if (!text) return;
  // The newest progress and the newest log line, side by side: a log line must not hide the progress.
  /** @type {{ task?: string, progress?: string, log?: string }} */
  const notes = run.notes || {};
  run.notes = notes;
  if (note.method === "task") notes.task = text;
  else if (note.method === "notifications/progress") notes.progress = text;
  else notes.log = text;
  const line = part(run.element, ".run-progress");
  line.hidden = false;
  line.textContent = [notes.task, notes.progress, notes.log].filter(Boolean).join(" — ");
}

/**
 * A step of the sign-in a run's call waits for (a 401, or a step-up for more scope): the card says it waits
 * for the user, with the sign-in page as a link that stays, and its Cancel stops the wait.
 * @param {Bench} bench
 * @param {{ run?: string, message: string }} note
 */
export function showRunSignIn(bench, note) {
  const run = note.run ? bench.runs.get(note.run) : undefined;
  if (!run || run.data.status !== "running") return;
  const message = note.message.split("; tokens cached in")[0];
  const line = part(run.element, ".run-progress");
  const { nodes, url } = signInStepNodes(message, line.dataset.url);
  if (url) line.dataset.url = url;
  else delete line.dataset.url;
  const waiting = !message.startsWith("signed in") && !message.includes("approves without a browser");
  part(run.element, ".status-text").textContent = waiting ? "Waiting for you to sign in (Cancel stops waiting)…" : statusText(run.data)[0];
  line.hidden = false;
  line.replaceChildren(...nodes);
}

/**
 * What the model reads of the result: its text content and its structuredContent.
 * @param {HTMLElement} card
 * @param {AppsdkRun} data
 */
function renderModelText(card, data) {
  const box = part(card, ".model-content");
  const details = /** @type {HTMLDetailsElement} */ (part(card, ".model-text"));
  box.replaceChildren();
  const result = data.result;
  details.hidden = !result;
  if (!result) return;
  const blocks = result.content || [];
  const texts = blocks.flatMap((b) => (b && b.type === "text" ? [b.text] : []));
  /** @param {string} text */
  const label = (text) => Object.assign(document.createElement("div"), { className: "label", textContent: text });
  box.append(label("content"));
  for (const text of texts.length ? texts : ["(no text content)"]) box.append(Object.assign(document.createElement("p"), { textContent: text }));
  for (const block of blocks.filter((b) => b && typeof b === "object" && b.type !== "text")) {
    const view = contentBlockView(block);
    const figure = Object.assign(document.createElement("figure"), { className: "content-block" });
    figure.dataset.type = String(block.type);
    if (view.image) figure.append(Object.assign(document.createElement("img"), { src: view.image, alt: view.text, className: "content-image" }));
    figure.append(Object.assign(document.createElement("figcaption"), { textContent: view.text }));
    box.append(figure);
  }
  if (result.structuredContent !== undefined) {
    box.append(label("structuredContent"));
    box.append(Object.assign(document.createElement("pre"), { className: "json", textContent: JSON.stringify(result.structuredContent, null, 2) }));
  }
  if (!data.widget || result.isError) details.open = true;
}

/**
 * @param {Bench} bench
 * @param {string} id
 */
function editArguments(bench, id) {
  const run = bench.runs.get(id);
  const tool = run && bench.tools.find((t) => t.name === run.data.tool);
  if (!run || !tool) return;
  selectTool(bench, tool, { values: run.data.arguments });
  /** @type {HTMLElement | null} */ ($("form-pane").querySelector("input, select, textarea"))?.focus();
}

/**
 * @param {Bench} bench
 * @param {string} id
 * @param {{ template?: boolean, afterSave?: string[] }} [options] afterSave: the page re-runs it by itself
 *   after a save of these files (the card and dev's terminal say so, so its outcome is not taken for the save's)
 */
export async function rerun(bench, id, { template = false, afterSave } = {}) {
  const pending = bench.runs.get(id);
  if (pending) {
    pending.reloadTemplate = template;
    pending.rerunNote = afterSave ? `re-run by the workbench after ${afterSave.length ? `the save of ${afterSave.slice(0, 3).join(", ")}` : "a save"}` : "";
  }
  await api("/api/runs/rerun", { run: id, locale: hostOptions(bench).locale, ...(afterSave ? { afterSave } : {}) })
    .then(({ run }) => upsertRun(bench, run))
    .catch((error) => {
      const run = bench.runs.get(id);
      if (run) {
        const problem = part(run.element, ".run-problem");
        problem.hidden = false;
        problem.textContent = messageOf(error);
      }
    });
}

/**
 * "Reload widget": call the tool again and render the fresh result in a freshly read template,
 * keeping the widget state (the old preview's button reloaded the page and showed the old result).
 * @param {Bench} bench
 * @param {string} id
 */
function reloadRun(bench, id) {
  return rerun(bench, id, { template: true });
}

/** @param {Bench} bench */
export async function clearRuns(bench) {
  for (const run of bench.runs.values()) for (const frame of run.frames) await frame.teardown();
  for (const run of bench.runs.values()) run.element.remove();
  bench.runs.clear();
  await api("/api/runs/clear", {}).catch(() => {});
  $("runs-empty").hidden = false;
  bench.panels.setRuns([]);
}
