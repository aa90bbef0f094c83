// @ts-check
// Files: window.openai's uploads against the host's file store, the host's own file chooser, and
// ui/download-file. The functions touch the DOM only when called; decoding is pure.

import { webLink } from "./page.js";

/**
 * What ui/download-file saves for one content item: an embedded resource's bytes with a file name from
 * its URI, or a link the browser fetches. Null for an item it cannot save.
 * @param {import("@modelcontextprotocol/ext-apps").McpUiDownloadFileRequest["params"]["contents"][number]} item
 * @returns {{ kind: "bytes", name: string, bytes: Uint8Array, type: string } | { kind: "link", href: string, name: string } | null}
 */
export function downloadOf(item) {
  if (item && item.type === "resource" && item.resource) {
    const { uri, mimeType } = item.resource;
    const text = "text" in item.resource ? item.resource.text : undefined;
    const blob = "blob" in item.resource ? item.resource.blob : undefined;
    const bytes =
      typeof blob === "string"
        ? Uint8Array.from(atob(blob), (c) => c.charCodeAt(0))
        : new TextEncoder().encode(text || "");
    const name = String(uri || "download").split(/[/:]/).filter(Boolean).pop() || "download";
    return { kind: "bytes", name, bytes, type: mimeType || "application/octet-stream" };
  }
  if (item && item.type === "resource_link" && item.uri) return { kind: "link", href: item.uri, name: item.name || "" };
  return null;
}

/** @param {Blob} blob @returns {Promise<string>} the blob's bytes as base64 */
export function base64Of(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error || new Error("the file could not be read"));
    reader.readAsDataURL(blob);
  });
}

/**
 * The host's own file chooser, as ChatGPT opens one; the widget's click is the user activation it needs.
 * @param {HTMLInputElement} picker
 * @returns {Promise<File[]>}
 */
export function pickFiles(picker) {
  picker.value = "";
  return new Promise((resolve) => {
    const done = () => {
      picker.removeEventListener("change", done);
      picker.removeEventListener("cancel", done);
      resolve([...(picker.files || [])]);
    };
    picker.addEventListener("change", done);
    picker.addEventListener("cancel", done);
    picker.click();
  });
}

/**
 * Save through an anchor in a new browsing context: a link the browser will not download (cross-origin
 * URLs ignore `download`) opens in a tab of its own, or is stopped by the popup blocker, and never
 * navigates the host page.
 * @param {string} href
 * @param {string} name
 */
function downloadLocally(href, name) {
  const anchor = document.createElement("a");
  anchor.href = href;
  anchor.download = name;
  anchor.target = "_blank";
  anchor.rel = "noopener noreferrer";
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

/**
 * ui/download-file: embedded contents are saved from their data; a link is fetched by the browser.
 * @param {import("@modelcontextprotocol/ext-apps").McpUiDownloadFileRequest["params"]} params
 * @returns {string[]} what was saved, for the host log
 */
export function downloadAll(params) {
  const names = [];
  for (const item of params.contents || []) {
    const download = downloadOf(item);
    if (!download) continue;
    if (download.kind === "bytes") {
      const url = URL.createObjectURL(new Blob([/** @type {Uint8Array<ArrayBuffer>} */ (download.bytes)], { type: download.type }));
      downloadLocally(url, download.name);
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      names.push(`${download.name} (${download.bytes.length} bytes)`);
    } else {
      const href = webLink(download.href);
      if (!href) {
        names.push(`${download.href.slice(0, 80)} (refused: only http and https links are downloaded)`);
        continue;
      }
      downloadLocally(href, download.name);
      names.push(download.name || href);
    }
  }
  return names;
}
