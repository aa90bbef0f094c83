// @ts-check
// Injected by appsdk preview into a widget served from the app's Vite dev server (appsdk dev, web/):
// a build error (syntax, from Vite) or a type error (from appsdk's checker) shows as one line at the top
// of the widget, while the last good widget stays up beneath it; the next good save clears it.
import { createHotContext } from "/@vite/client";

const hot = createHotContext("/@appsdk/widget-dev");
/** @type {{ build: string | null, types: string | null }} */
const problems = { build: null, types: null };
const banner = document.createElement("div");
banner.setAttribute("role", "alert");
banner.setAttribute("data-appsdk-preview", "build-error");
banner.style.cssText = [
  // Sticky at the top of the body: it pushes the widget down (the frame grows) rather than covering it.
  "position:sticky", "top:0", "z-index:2147483647", "margin:0", "padding:6px 10px",
  "background:#b91c1c", "color:#fff", "font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace",
  "white-space:pre-wrap", "word-break:break-word", "box-shadow:0 1px 4px rgba(0,0,0,.3)",
].join(";");

/**
 * @param {unknown} file
 * @param {unknown} line
 * @param {unknown} column
 */
function where(file, line, column) {
  if (!file) return "";
  let place = String(file).split("?")[0];
  const web = place.lastIndexOf("/src/");
  if (place.startsWith("/") && web >= 0) place = "web" + place.slice(web);
  else if (!place.startsWith("web/")) place = "web/" + place.replace(/^\.?\//, "");
  if (line) place += ":" + line + (column ? ":" + column : "");
  return place + ": ";
}

/** @param {unknown} message */
function firstLine(message) {
  const lines = String(message || "").split("\n").map((line) => line.trim()).filter(Boolean);
  const text = lines.find((line) => !/^(Build failed|Transform failed|\[vite\])/i.test(line)) || lines[0] || "";
  return text.replace(/^\[[\w:-]+\]\s*/, "").replace(/^(Error|SyntaxError):\s*/, "");
}

function show() {
  const text = problems.build || problems.types;
  if (!text) {
    banner.remove();
    return;
  }
  banner.textContent = text;
  if (!banner.isConnected) document.body.prepend(banner);
}

hot.on("vite:error", (/** @type {{ err?: Record<string, any> } | undefined} */ payload) => {
  const error = payload && payload.err ? payload.err : {};
  const loc = error.loc || {};
  // Vite's own transform errors carry no loc, only a code frame that names the place: ─[ src/App.tsx:20:43 ]
  const framed = /─\[\s*([^\]\s]+?):(\d+):(\d+)\s*\]/.exec(String(error.message) + "\n" + String(error.frame || ""));
  const file = loc.file || error.id || (framed && framed[1]);
  const line = loc.line || (framed && framed[2]);
  const column = loc.column !== undefined ? loc.column : framed && framed[3];
  problems.build = "Build error: " + where(file, line, column) + firstLine(error.message);
  show();
});
hot.on("vite:afterUpdate", () => {
  problems.build = null;
  show();
});
hot.on("appsdk:types-error", (/** @type {{ errors?: { file?: string, line?: number, column?: number, message?: string }[] } | undefined} */ data) => {
  const errors = (data && data.errors) || [];
  const first = errors[0] || {};
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : "";
  problems.types = "Type error: " + where(first.file, first.line, first.column) + (first.message || "") + more;
  show();
});
hot.on("appsdk:types-ok", () => {
  problems.types = null;
  show();
});
