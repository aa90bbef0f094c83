// @ts-check
// `appsdk dev`'s reloads, pushed after every save: the banner says what happened, and the last call
// runs again (when its tool or the app's code changed) while the other widgets read their template
// afresh.

import { $, element } from "./bench.js";
import { rerun } from "./runs.js";
import { loadSkills } from "./skills.js";

/** @typedef {import("./bench.js").Bench} Bench */

/**
 * The banner's text for a reload. Pure.
 * @param {AppsdkReloadEvent} event
 */
export function reloadText(event) {
  const changed = event.files || [];
  const files = changed.slice(0, 3).join(", ") + (changed.length > 3 ? " …" : "");
  return event.appOk
    ? `Reloaded${event.seconds != null ? ` in ${event.seconds.toFixed(2)} s` : ""}${files ? ` (${files})` : ""}`
    : brokenText(event.problem, changed);
}

/**
 * The banner's text while the app is broken: after a save (which files), or since dev started. Pure.
 * @param {string | null | undefined} problem one line: "server.py:12: SyntaxError: invalid syntax"
 * @param {string[]} [changed] the files of the save that broke it
 */
export function brokenText(problem, changed = []) {
  const files = changed.slice(0, 3).join(", ") + (changed.length > 3 ? " …" : "");
  const why = problem ? ` (${problem})` : "";
  return files
    ? `The app failed to import after saving ${files}${why}; the widgets keep the last good version (see the terminal).`
    : `The app failed to import${why}; save a fix and the page follows (see the terminal).`;
}

/**
 * Show the banner for a broken app (a page opened while it is broken, or one open when it broke); an app
 * that imports again leaves the banner to the next reload's.
 * @param {{ ok: boolean, problem?: string | null }} app
 * @param {AppsdkReloadEvent | null} [lastReload]
 */
export function showAppState(app, lastReload) {
  if (app.ok) return;
  const banner = $("reload-banner");
  banner.hidden = false;
  banner.className = "banner error";
  const files = lastReload && !lastReload.appOk ? lastReload.files || [] : [];
  $("reload-text").textContent = brokenText(app.problem, files);
  $("reload-notice").replaceChildren();
}

/**
 * @param {Bench} bench
 * @param {AppsdkReloadEvent} event
 * @param {{ reloads: number, lastReloadAt?: number }} exposed window.appsdkWorkbench
 */
export async function onReload(bench, event, exposed) {
  bench.reloads += 1;
  exposed.reloads = bench.reloads;
  exposed.lastReloadAt = Date.now(); // for benchmarks/workbench.py: when the push arrived
  const banner = $("reload-banner");
  banner.hidden = false;
  banner.className = `banner${event.appOk ? "" : " error"}`;
  $("reload-text").textContent = reloadText(event);
  bench.lastReload = event;
  showNotice(event.notice);
  if (!event.appOk) return;
  const last = lastDoneRun(bench);
  const rerunLast = last && element("rerun-on-change", HTMLInputElement).checked && (event.codeChanged || changes(event.tools, last));
  const done = [...bench.runs.values()].filter((run) => run.data.status === "done");
  /** @type {Promise<unknown>[]} */
  const views = [];
  if (rerunLast) views.push(rerun(bench, last.data.id, { template: true, afterSave: event.files || [] }));
  for (const run of done) {
    if (rerunLast && run === last) continue;
    for (const frame of run.frames) views.push(frame.reloadTemplate());
  }
  // A save may have changed the skills too: asked for once the widgets have what they need, so the
  // server's answer never stands in the way of the re-render.
  await Promise.allSettled(views);
  await loadSkills();
}

/**
 * What the reload pushed changed in the tools, once dev has read the new code (it pushes the reload the
 * moment the new code answers, and this right after): the notice, and the last call run again if its
 * tool changed and the save, not being code, did not run it again already.
 * @param {Bench} bench
 * @param {{ tools: AppsdkReloadEvent["tools"], notice: string | null }} news
 */
export async function onReloadNews(bench, news) {
  const reload = bench.lastReload;
  if (!reload || !reload.appOk) return;
  bench.lastReload = { ...reload, tools: news.tools, notice: news.notice };
  showNotice(news.notice);
  const last = lastDoneRun(bench);
  if (!last || reload.codeChanged || !changes(news.tools, last)) return;
  if (!element("rerun-on-change", HTMLInputElement).checked) return;
  await rerun(bench, last.data.id, { template: true, afterSave: reload.files || [] });
}

/** @param {string | null | undefined} text ours (the terminal's words), with **bold** for the control to press */
function showNotice(text) {
  const notice = $("reload-notice");
  notice.replaceChildren();
  if (!text) return;
  for (const [index, part] of text.split("**").entries()) {
    notice.append(index % 2 ? Object.assign(document.createElement("b"), { textContent: part }) : part);
  }
}

/** @param {Bench} bench */
function lastDoneRun(bench) {
  const done = [...bench.runs.values()].filter((run) => run.data.status === "done");
  return done.sort((a, b) => b.data.sequence - a.data.sequence)[0];
}

/**
 * @param {AppsdkReloadEvent["tools"]} tools
 * @param {import("./bench.js").PageRun} run
 */
function changes(tools, run) {
  return Boolean(tools && [...(tools.changed || []), ...(tools.added || [])].includes(run.data.tool));
}
