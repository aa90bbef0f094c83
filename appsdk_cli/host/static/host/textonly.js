// @ts-check
// The host without its UI (the "No UI" switch, `appsdk preview --no-ui`; noui.py): no widget frame, no
// window.openai, no MCP Apps bridge, and a session to the server that offers no io.modelcontextprotocol/ui.
// The page shows what a host that renders no widgets shows: the text the model gets for the call, and a
// line on what the server did differently from its answer to a widget host.

import { $, addLog } from "./page.js";

/** @typedef {import("./page.js").Host} Host */
/** @typedef {{ tool: Record<string, unknown> | null, result: McpCallToolResult, appMeta: Record<string, unknown>, differences: string[] }} TextOnlyAnswer */

export const UI_EXTENSION = "io.modelcontextprotocol/ui";

/**
 * One content block as the model reads it: text as is, anything else named.
 * @param {unknown} block
 * @returns {string}
 */
export function blockText(block) {
  if (!block || typeof block !== "object") return "[a content block that is not an object]";
  const item = /** @type {Record<string, any>} */ (block);
  if (item.type === "text") return String(item.text ?? "");
  if (item.type === "image" || item.type === "audio") return `[${item.type} ${item.mimeType || ""}]`.replace(" ]", "]");
  if (item.type === "resource_link") return `[link ${item.uri}]`;
  if (item.type === "resource") {
    const inner = item.resource && typeof item.resource === "object" ? item.resource : {};
    return typeof inner.text === "string" ? inner.text : `[resource ${inner.uri}]`;
  }
  return `[${item.type} block]`;
}

/**
 * The one-line note over the text: the capability withheld, and what the server did differently.
 * @param {string[]} differences
 */
export function withheldNote(differences) {
  const what = `UI capability withheld: no ${UI_EXTENSION} offered, no widget frame, no window.openai.`;
  return differences.length
    ? `${what} The server answered differently: ${differences.join("; ")}.`
    : `${what} The server answered as it does for a widget host.`;
}

/**
 * @param {string} tag
 * @param {string} text
 * @param {string} [className]
 */
function node(tag, text, className) {
  const made = document.createElement(tag);
  made.textContent = text;
  if (className) made.className = className;
  return made;
}

/**
 * The workbench sizes its frame of this page by the height the page reports.
 * @param {Host} host
 */
function reportSize(host) {
  const height = Math.ceil($("text-only").getBoundingClientRect().height) + 2; // the conversation's 1 px padding
  host.page.events.emit("size", { height });
}

/**
 * @param {Host} host
 * @param {TextOnlyAnswer} answer
 */
function render(host, answer) {
  const { result, differences } = answer;
  const blocks = Array.isArray(result.content) ? result.content : [];
  const text = blocks.map(blockText).join("\n\n");
  const parts = [node("p", withheldNote(differences), "note"), node("h3", "What the model gets (content)")];
  const shown = node("pre", text || "(no content: a host that passes on only content gives the model nothing)", "model-content");
  shown.id = "text-only-content";
  if (result.isError) shown.classList.add("error");
  parts.push(shown);
  if (result.structuredContent !== undefined) {
    const details = document.createElement("details");
    details.append(
      node("summary", "structuredContent: not shown in the conversation"),
      node(
        "p",
        "ChatGPT gives it to the model as well; a host that reads only content does not, which is why MCP has a tool repeat it as text in content.",
        "status",
      ),
      node("pre", JSON.stringify(result.structuredContent, null, 2)),
    );
    details.addEventListener("toggle", () => reportSize(host));
    parts.push(details);
  }
  if (Object.keys(answer.appMeta || {}).length) {
    parts.push(node("p", "_meta: for a widget only; neither the model nor the conversation sees it.", "status"));
  }
  $("text-only").replaceChildren(...parts);
  reportSize(host);
  for (const line of differences) addLog(host.page, "host", "info", `without the UI capability ${line}`);
}

/**
 * Show the call as a host without widgets gets it, in place of the widget (the server calls the tool
 * without the UI capability once per result of the run: a re-run calls again).
 * @param {Host} host
 */
export async function showTextOnly(host) {
  const { page } = host;
  page.records.settled = false;
  document.body.classList.add("no-ui");
  $("stage").hidden = true;
  const box = $("text-only");
  box.hidden = false;
  box.replaceChildren(node("p", `Calling ${host.session.tool.name} without the UI capability…`, "status"));
  try {
    /** @type {TextOnlyAnswer} */
    const answer = await page.api("/api/no-ui", {});
    if (!host.state.noUi) return {};
    render(host, answer);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    box.replaceChildren(node("p", `The call without the UI capability failed: ${message}`, "note error"));
    addLog(page, "host", "error", `the call without the UI capability failed: ${message}`);
    reportSize(host);
  }
  page.records.settled = true;
  page.events.emit("settled", {});
  return {};
}

/** The widget's stage back, the text-only view gone. */
export function hideTextOnly() {
  document.body.classList.remove("no-ui");
  $("text-only").hidden = true;
  $("text-only").replaceChildren();
  $("stage").hidden = false;
}
