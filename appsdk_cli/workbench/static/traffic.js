// @ts-check
// The traffic panel: one timeline of trace records (appsdk_cli/trace/record.py describes the record), with a
// filter, a JSON viewer, request/response pairing and a JSON-lines export. A plain module, no build step.
//
//   import { createTrafficPanel } from "./traffic.js";
//   const panel = createTrafficPanel(element, { filename: "trace.jsonl" });
//   panel.add(record);          // any number, any rate: rows are drawn in batches, only those in view
//   panel.records();            // every record kept, in order (copies of the array, not of the records)
//   panel.exportJsonLines();    // one JSON.stringify(record) per line, each ending in "\n"
//   panel.exportBlob();         // the same as a Blob, built from chunks (no one string of it all)
//   panel.dropped();            // how many earlier records are not here (let go of, or never received)
//   panel.clear();
//
// Options: filename (of the download), onSelect(record | null), channels (the toggles shown; default
// mcp, bridge, openai), maxRecords and maxBytes (of messages, by their `size`): past either the
// oldest records are let go of, down to nine tenths of both, so what the panel holds stays flat
// however long a session runs; the toolbar says how many went. Everything a record carries is untrusted text (a server or a widget wrote it):
// it only ever reaches the page through textContent, never as markup.

const ROW_HEIGHT = 26; // px; must match .traffic-row in traffic.css (rows are positioned, not flowed)
const OVERSCAN = 12; // rows drawn above and below the visible ones
const HAYSTACK_LIMIT = 20000; // characters of a message the text filter searches
const STRING_PREVIEW = 600; // characters of a long string shown before "show all"
const CHILDREN_PAGE = 200;
const OPEN_DEPTH = 5; // levels of a message's JSON open at first // object keys / array items shown before "show more"
const MAX_RECORDS = 20000;
const MAX_BYTES = 32e6; // of messages: their bodies are most of what the panel holds
const KEEP_AFTER_TRIM = 0.9; // trimmed in batches, down to this share of both bounds: O(1) a record
const EXPORT_CHUNK = 1000; // records per string of an export
/** @type {Record<string, string>} */
const PARTIES = { appsdk: "appsdk", workbench: "workbench", server: "server", host: "host", widget: "widget" };

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** @param {unknown} bytes */
function formatSize(bytes) {
  if (typeof bytes !== "number" || !Number.isFinite(bytes)) return "";
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1e6) return `${(bytes / 1000).toFixed(bytes < 1e4 ? 1 : 0)} kB`;
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/**
 * A duration in six characters at most ("999 ms", "1.23 s", "12.3 s", "123 s"): the column stays narrow.
 * @param {unknown} ms
 */
export function formatDuration(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  if (ms < 1) return "<1 ms";
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  if (ms < 99950) return `${(ms / 1000).toFixed(ms < 9995 ? 2 : 1)} s`;
  return `${Math.round(ms / 1000)} s`;
}

/**
 * The time since the first message, in six characters at most, as precise as that allows: "1.234" and
 * "12.34" (seconds), "1:30.1" and "12:30" (minutes:seconds), "1h02" (hours and minutes). The row's title
 * has the exact offset and the wall-clock time.
 * @param {number} ms
 */
export function shortOffset(ms) {
  if (!Number.isFinite(ms)) return "";
  const sign = ms < 0 ? "-" : "";
  const abs = Math.abs(ms);
  const seconds = abs / 1000;
  if (seconds < 9.9995) return `${sign}${seconds.toFixed(3)}`;
  if (seconds < 59.995) return `${sign}${seconds.toFixed(2)}`;
  const minutes = Math.floor(seconds / 60);
  if (seconds < 599.95) {
    const rest = (seconds - minutes * 60).toFixed(1).padStart(4, "0");
    return rest === "60.0" ? `${sign}${minutes + 1}:00.0` : `${sign}${minutes}:${rest}`;
  }
  if (minutes < 60) return `${sign}${minutes}:${String(Math.floor(seconds - minutes * 60)).padStart(2, "0")}`;
  return `${sign}${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}`;
}

// The prefixes every notification shares: a narrow panel shows the rest (the row's • already says
// notification, its channel colour says bridge or MCP); the title and the detail view have the full name.
const METHOD_PREFIXES = ["ui/notifications/", "notifications/"];

/**
 * A method name as [the shared prefix a narrow panel leaves out, the rest]. Pure.
 * @param {string} method
 * @returns {[string, string]}
 */
export function methodParts(method) {
  const prefix = METHOD_PREFIXES.find((p) => method.startsWith(p) && method.length > p.length);
  return prefix ? [prefix, method.slice(prefix.length)] : ["", method];
}

/**
 * Whose request an MCP exchange carries when not its client's own (a widget's own tools/call). Pure.
 * @param {AppsdkTrafficRecord} record
 */
export function callerText(record) {
  return typeof record.caller === "string" ? `, for the ${record.caller}'s own request` : "";
}

// What a narrow panel calls a party (the route column stays short enough for the method to show).
/** @type {Record<string, string>} */
const SHORT_PARTIES = { workbench: "bench" };

/** @param {number} ms */
function formatOffset(ms) {
  if (!Number.isFinite(ms)) return "";
  const sign = ms < 0 ? "-" : "";
  const abs = Math.abs(ms);
  if (abs < 60000) return `${sign}${(abs / 1000).toFixed(3)}`;
  const minutes = Math.floor(abs / 60000);
  return `${sign}${minutes}:${((abs % 60000) / 1000).toFixed(3).padStart(6, "0")}`;
}

/**
 * A label with a long and a short form; a narrow panel (traffic.css) shows the short one.
 * @param {string} className
 * @param {string} long
 * @param {string} short
 */
function dual(className, long, short) {
  const node = el("span", className);
  node.append(el("span", "traffic-long", long), el("span", "traffic-short", short));
  return node;
}

/** @param {unknown} id */
function idText(id) {
  return id === null || id === undefined ? "" : String(id);
}

// A tool result with isError is an answer, but a failed one: it is marked like a JSON-RPC error.
/** @param {AppsdkTrafficRecord} record */
function isFailure(record) {
  if (record.kind === "error") return true;
  const message = /** @type {{ result?: unknown } | null | undefined} */ (record.message);
  const result = message && typeof message === "object" ? message.result : null;
  return Boolean(result && typeof result === "object" && "isError" in result && result.isError === true);
}

/**
 * @param {AppsdkTrafficRecord} record
 * @param {unknown} asker
 */
function pairKey(record, asker) {
  return `${record.channel}\u0000${record.run ?? ""}\u0000${asker}\u0000${JSON.stringify(record.id)}`;
}

/** @param {AppsdkTrafficRecord} record */
function sizeOf(record) {
  return typeof record.size === "number" && Number.isFinite(record.size) && record.size > 0 ? record.size : 0;
}

/**
 * The first position in a sorted array whose value is at least `value`. Pure.
 * @param {number[]} sorted
 * @param {number} value
 */
export function lowerBound(sorted, value) {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle] < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * How many of the oldest records (their sizes, oldest first) go so that the rest fit within nine tenths
 * of both bounds; 0 while within the bounds themselves. Pure.
 * @param {number[]} sizes
 * @param {number} bytes the sum of `sizes`
 * @param {{ maxRecords: number, maxBytes: number }} bounds
 */
export function oldestToDrop(sizes, bytes, { maxRecords, maxBytes }) {
  if (sizes.length <= maxRecords && bytes <= maxBytes) return 0;
  const records = Math.floor(maxRecords * KEEP_AFTER_TRIM);
  const budget = maxBytes * KEEP_AFTER_TRIM;
  let drop = 0;
  while (drop < sizes.length && (sizes.length - drop > records || bytes > budget)) {
    bytes -= sizes[drop];
    drop += 1;
  }
  return drop;
}

/**
 * One record in the panel.
 * @typedef {object} Entry
 * @property {AppsdkTrafficRecord} record
 * @property {number} index its number among every record added since the last clear (`all[index - base]`)
 * @property {number} time
 * @property {string | null} haystack what the text filter searches, made when first needed
 * @property {Entry | null} partner a request's answer, an answer's request
 */

/**
 * @param {HTMLElement} element
 * @param {{ channels?: string[], filename?: string, title?: string, maxRecords?: number, maxBytes?: number, byTime?: boolean, onSelect?: (record: AppsdkTrafficRecord | null) => void }} [options]
 *   byTime: a record that arrives after a later one goes where its time puts it (else: in arrival order)
 */
export function createTrafficPanel(element, options = {}) {
  const channels = options.channels ?? ["mcp", "bridge", "openai"];
  const filename = options.filename ?? "trace.jsonl";
  const byTime = options.byTime === true;
  const bounds = { maxRecords: Math.max(1, options.maxRecords ?? MAX_RECORDS), maxBytes: options.maxBytes ?? MAX_BYTES };
  /** @type {Entry[]} the kept records, oldest first */
  const all = [];
  let base = 0; // the index of all[0]: how many records were let go of since the last clear
  let keptBytes = 0; // the sizes of the kept records' messages
  /** @type {number | null} the newest server sequence number heard; null: the next one starts afresh */
  let lastSeq = 0;
  let missing = 0; // records the server numbered but the panel never got (a backlog begins late, a gap)
  let shifted = 0; // rows let go of since the last frame: the view moves up by as many to stay put
  /** @type {number[]} indexes (Entry.index) of the kept records that pass the filter, in order */
  let shown = [];
  /** @type {Map<string, Entry>} pairKey -> entry, requests waiting for their answer */
  const openRequests = new Map();
  /** @type {Record<string, number>} */
  const counts = Object.fromEntries(channels.map((c) => [c, 0]));
  /** @type {{ words: string[], channels: Set<string>, hideNotifications: boolean }} */
  const filter = { words: [], channels: new Set(channels), hideNotifications: false };
  /** @type {number | null} */
  let firstTime = null;
  /** @type {Entry | null} */
  let selected = null;
  let follow = true; // keep the newest row in view while the user has not scrolled up
  let frame = 0;
  let rebuild = false;

  // --- the skeleton

  element.classList.add("traffic-panel");
  element.replaceChildren();
  const toolbar = el("div", "traffic-toolbar");
  const search = el("input", "traffic-search");
  search.type = "search";
  search.placeholder = "Filter: method, id, party, text…";
  search.setAttribute("aria-label", "Filter the traffic");
  const toggles = el("div", "traffic-toggles");
  toggles.setAttribute("role", "group");
  toggles.setAttribute("aria-label", "Channels");
  /** @type {Record<string, HTMLButtonElement>} */
  const toggleButtons = {};
  for (const channel of channels) {
    const button = el("button", "traffic-toggle");
    button.type = "button";
    button.dataset.channel = channel;
    button.setAttribute("aria-pressed", "true");
    button.append(el("span", "traffic-toggle-name", channel), el("span", "traffic-toggle-count", "0"));
    button.addEventListener("click", () => {
      if (filter.channels.has(channel)) filter.channels.delete(channel);
      else filter.channels.add(channel);
      button.setAttribute("aria-pressed", String(filter.channels.has(channel)));
      refilter();
    });
    toggleButtons[channel] = button;
    toggles.append(button);
  }
  const hideLabel = el("label", "traffic-hide");
  const hideBox = el("input");
  hideBox.type = "checkbox";
  hideLabel.append(hideBox, document.createTextNode(" Hide notifications"));
  const total = el("span", "traffic-count", "0 messages");
  total.setAttribute("aria-live", "polite");
  const droppedNote = el("span", "traffic-dropped");
  droppedNote.hidden = true;
  const clearButton = el("button", "traffic-button", "Clear");
  clearButton.type = "button";
  const exportButton = el("button", "traffic-button traffic-primary", "Export");
  exportButton.type = "button";
  exportButton.title = "Download the trace as JSON lines";
  // The count and the buttons wrap as one, at the right: Export never ends up alone on a line.
  const actions = el("span", "traffic-actions");
  actions.append(total, droppedNote, clearButton, exportButton);
  toolbar.append(search, toggles, hideLabel, actions);

  const header = el("div", "traffic-row traffic-head");
  header.setAttribute("aria-hidden", "true");
  for (const [cls, text, short] of [
    ["t-time", "Time", "Time"],
    ["t-channel", "Channel", ""],
    ["t-route", "From → To", "From → To"],
    ["t-method", "Method", "Method"],
    ["t-id", "Id", ""],
    ["t-size", "Size", ""],
    ["t-duration", "Duration", "Took"],
  ]) {
    header.append(short === text ? el("span", cls, text) : dual(cls, text, short));
  }
  header.firstElementChild?.setAttribute("title", "seconds since the first message");

  const viewport = el("div", "traffic-viewport");
  viewport.tabIndex = 0;
  viewport.setAttribute("role", "listbox");
  viewport.setAttribute("aria-label", "Messages");
  const sizer = el("div", "traffic-sizer");
  const empty = el("div", "traffic-empty", "No traffic yet.");
  viewport.append(sizer, empty);

  const detail = el("section", "traffic-detail");
  detail.hidden = true;
  detail.setAttribute("aria-label", "Message");

  element.append(toolbar, header, viewport, detail);

  // --- adding

  /** @param {AppsdkTrafficRecord} record */
  function add(record) {
    if (!record || typeof record !== "object") return;
    /** @type {Entry} */
    const entry = { record, index: base + all.length, time: Date.parse(record.time), haystack: null, partner: null };
    // In the workbench records come by two roads (the host page's at once, the server's over the event
    // stream), so one may arrive after a later one: byTime puts it where its time does, so request and answer
    // read in the order they happened (a widget's own call: its request, the MCP exchange, then its answer).
    let at = all.length;
    if (byTime && Number.isFinite(entry.time)) while (at > 0 && all[at - 1].time > entry.time) at -= 1;
    all.splice(at, 0, entry);
    if (at < all.length - 1) for (let i = at; i < all.length; i++) all[i].index = base + i;
    keptBytes += sizeOf(record);
    if (typeof record.seq === "number") {
      if (lastSeq !== null && record.seq > lastSeq + 1) missing += record.seq - lastSeq - 1;
      if (lastSeq === null || record.seq > lastSeq) lastSeq = record.seq;
    }
    if (firstTime === null && Number.isFinite(entry.time)) firstTime = entry.time;
    if (record.channel in counts) counts[record.channel] += 1;
    pair(entry);
    if (at < all.length - 1) refilter();
    else if (passes(entry)) shown.push(entry.index);
    trim();
    schedule();
  }

  /** @param {number} index an Entry.index; undefined once that record was let go of */
  function entryAt(index) {
    return index >= base ? all[index - base] : undefined;
  }

  // Past a bound, the oldest go in one batch (down to nine tenths), with whatever still points at them.
  function trim() {
    if (all.length <= bounds.maxRecords && keptBytes <= bounds.maxBytes) return;
    const drop = oldestToDrop(
      all.map((entry) => sizeOf(entry.record)),
      keptBytes,
      bounds,
    );
    if (!drop) return;
    for (const gone of all.splice(0, drop)) {
      keptBytes -= sizeOf(gone.record);
      if (gone.record.channel in counts) counts[gone.record.channel] -= 1;
      if (gone.partner) gone.partner.partner = null;
      gone.partner = null;
      const r = gone.record;
      if (r.kind === "request" && r.id !== null && r.id !== undefined) {
        const key = pairKey(r, r.from);
        if (openRequests.get(key) === gone) openRequests.delete(key);
      }
    }
    base += drop;
    const before = lowerBound(shown, base);
    shown.splice(0, before);
    shifted += before;
  }

  /** @param {Entry} entry */
  function pair(entry) {
    const record = entry.record;
    if (record.id === null || record.id === undefined) return;
    if (record.kind === "request") {
      openRequests.set(pairKey(record, record.from), entry);
    } else if (record.kind === "response" || record.kind === "error") {
      const key = pairKey(record, record.to);
      const request = openRequests.get(key);
      if (request) {
        openRequests.delete(key);
        request.partner = entry;
        entry.partner = request;
      }
    }
  }

  /** @param {Entry} entry */
  function haystack(entry) {
    if (entry.haystack === null) {
      const r = entry.record;
      let text = "";
      try {
        text = JSON.stringify(r.message ?? null) ?? "";
      } catch {
        text = "";
      }
      entry.haystack = [r.method, r.kind, r.from, r.to, r.caller, r.channel, idText(r.id), r.run, r.failure, text.slice(0, HAYSTACK_LIMIT)]
        .filter((part) => part !== undefined && part !== null)
        .join("\u0001")
        .toLowerCase();
    }
    return entry.haystack;
  }

  /** @param {Entry} entry */
  function passes(entry) {
    const r = entry.record;
    if (!filter.channels.has(r.channel) && channels.includes(r.channel)) return false;
    if (filter.hideNotifications && r.kind === "notification") return false;
    if (filter.words.length) {
      const text = haystack(entry);
      for (const word of filter.words) if (!text.includes(word)) return false;
    }
    return true;
  }

  function refilter() {
    shown = [];
    for (const entry of all) if (passes(entry)) shown.push(entry.index);
    rebuild = true;
    schedule();
  }

  search.addEventListener("input", () => {
    filter.words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    refilter();
  });
  hideBox.addEventListener("change", () => {
    filter.hideNotifications = hideBox.checked;
    refilter();
  });

  // --- drawing: only the rows in view, in one animation frame per batch of changes

  function schedule() {
    if (!frame) frame = requestAnimationFrame(draw);
  }

  /** @type {Map<number, HTMLElement>} entry index -> row element */
  const drawn = new Map();

  function draw() {
    frame = 0;
    for (const channel of channels) {
      const count = toggleButtons[channel].lastChild;
      if (count) count.textContent = counts[channel].toLocaleString("en-US");
    }
    const filtered = shown.length !== all.length;
    const earlier = base + missing;
    total.textContent = filtered
      ? `${shown.length.toLocaleString("en-US")} of ${all.length.toLocaleString("en-US")}`
      : `${all.length.toLocaleString("en-US")} message${all.length === 1 ? "" : "s"}`;
    droppedNote.hidden = !earlier;
    droppedNote.textContent = earlier ? `${earlier.toLocaleString("en-US")} earlier dropped` : "";
    total.title = droppedNote.title = earlier
      ? `The panel keeps the newest ${bounds.maxRecords.toLocaleString("en-US")} messages or ${formatSize(bounds.maxBytes)} of them; ` +
        `${earlier.toLocaleString("en-US")} earlier ones are not here.`
      : "";
    exportButton.title = earlier
      ? `Download the ${all.length.toLocaleString("en-US")} messages kept as JSON lines (${earlier.toLocaleString("en-US")} earlier ones were dropped)`
      : "Download the trace as JSON lines";
    empty.hidden = shown.length > 0;
    empty.textContent = all.length ? "Nothing matches the filter." : "No traffic yet.";
    sizer.style.height = `${shown.length * ROW_HEIGHT}px`;
    if (follow) viewport.scrollTop = viewport.scrollHeight;
    else if (shifted) viewport.scrollTop = Math.max(0, viewport.scrollTop - shifted * ROW_HEIGHT);
    shifted = 0;
    if (rebuild) {
      for (const row of drawn.values()) row.remove();
      drawn.clear();
      rebuild = false;
    }
    const top = viewport.scrollTop;
    const height = viewport.clientHeight || 400;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(shown.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const wanted = new Set();
    for (let position = first; position < last; position++) {
      const index = shown[position];
      wanted.add(index);
      let row = drawn.get(index);
      if (!row) {
        row = makeRow(/** @type {Entry} */ (entryAt(index)));
        drawn.set(index, row);
        sizer.append(row);
      }
      row.style.transform = `translateY(${position * ROW_HEIGHT}px)`;
      row.classList.toggle("is-selected", selected !== null && selected.index === index);
      row.classList.toggle("is-partner", selected !== null && selected.partner !== null && selected.partner.index === index);
      row.setAttribute("aria-selected", String(selected !== null && selected.index === index));
    }
    for (const [index, row] of drawn) {
      if (!wanted.has(index)) {
        row.remove();
        drawn.delete(index);
      }
    }
  }

  viewport.addEventListener("scroll", () => {
    follow = viewport.scrollTop + viewport.clientHeight >= viewport.scrollHeight - ROW_HEIGHT;
    schedule();
  });
  if (typeof ResizeObserver === "function") new ResizeObserver(() => schedule()).observe(viewport);

  /** @param {Entry} entry */
  function makeRow(entry) {
    const r = entry.record;
    const row = el("div", "traffic-row");
    row.setAttribute("role", "option");
    row.dataset.index = String(entry.index);
    row.dataset.kind = String(r.kind ?? "");
    row.dataset.channel = String(r.channel ?? "");
    if (isFailure(r)) row.classList.add("is-error");
    const since = firstTime !== null && Number.isFinite(entry.time) ? entry.time - firstTime : NaN;
    const time = el("span", "t-time", shortOffset(since));
    if (Number.isFinite(since)) time.title = `${formatOffset(since)} s after the first message (${r.time})`;
    const channel = el("span", "t-channel");
    channel.append(el("span", "traffic-badge", String(r.channel ?? "?")));
    const route = el("span", "t-route");
    /** @param {unknown} party */
    const partyName = (party) => {
      const name = String(party ?? "?");
      const short = SHORT_PARTIES[name];
      return short ? dual(`traffic-party p-${PARTIES[name] ?? "other"}`, name, short) : el("span", `traffic-party p-${PARTIES[name] ?? "other"}`, name);
    };
    route.append(partyName(r.from), el("span", "traffic-arrow", "→"), partyName(r.to));
    route.title = `${r.from ?? "?"} → ${r.to ?? "?"}${callerText(r)}`;
    const method = el("span", "t-method");
    const name = el("span", "traffic-method-name");
    const [prefix, rest] = methodParts(String(r.method ?? "(unknown)"));
    if (prefix) name.append(el("span", "traffic-method-prefix", prefix));
    name.append(rest);
    method.append(el("span", "traffic-kind", kindMark(r)), name);
    if (typeof r.caller === "string") method.append(el("span", "traffic-caller", `for ${r.caller}`));
    method.title = `${r.kind ?? ""} ${r.method ?? ""}`.trim() + (r.failure ? ` — ${r.failure}` : "");
    row.append(
      time,
      channel,
      route,
      method,
      el("span", "t-id", idText(r.id)),
      el("span", "t-size", formatSize(r.size)),
      el("span", "t-duration", formatDuration(r.duration_ms)),
    );
    return row;
  }

  /** @param {AppsdkTrafficRecord} record */
  function kindMark(record) {
    if (record.kind === "request") return "→";
    if (record.kind === "response") return isFailure(record) ? "✕" : "←";
    if (record.kind === "error") return "✕";
    return "•";
  }

  // --- selecting and the detail view

  /**
   * @param {Entry | null} entry
   * @param {{ scroll?: boolean }} [how]
   */
  function select(entry, { scroll = false } = {}) {
    selected = entry;
    if (entry === null) {
      detail.hidden = true;
      detail.replaceChildren();
    } else {
      // Looking at a message: new traffic must not scroll it away (End or scrolling down follows again).
      follow = false;
      renderDetail(entry);
      scrollToEntry(entry, { reveal: scroll });
    }
    draw();
    if (typeof options.onSelect === "function") options.onSelect(entry ? entry.record : null);
  }

  /**
   * @param {Entry} entry
   * @param {{ reveal?: boolean }} [how]
   */
  function scrollToEntry(entry, { reveal = true } = {}) {
    if (entry.index < base) return; // let go of: its detail still shows, its row is gone
    let position = positionOf(entry.index);
    if (position < 0 && reveal) {
      // The partner is filtered out: clear the filter's text so both can be seen.
      search.value = "";
      filter.words = [];
      filter.channels.add(entry.record.channel);
      toggleButtons[entry.record.channel]?.setAttribute("aria-pressed", "true");
      if (entry.record.kind === "notification") {
        filter.hideNotifications = false;
        hideBox.checked = false;
      }
      shown = all.filter(passes).map((e) => e.index);
      rebuild = true;
      position = positionOf(entry.index);
    }
    if (position < 0) return;
    const top = position * ROW_HEIGHT;
    if (top < viewport.scrollTop || top + ROW_HEIGHT > viewport.scrollTop + viewport.clientHeight) {
      viewport.scrollTop = Math.max(0, top - viewport.clientHeight / 2);
    }
  }

  /** @param {number} index an Entry.index; its row's position among those shown, or -1 */
  function positionOf(index) {
    const position = lowerBound(shown, index);
    return shown[position] === index ? position : -1;
  }

  viewport.addEventListener("click", (event) => {
    const row = event.target instanceof Element ? event.target.closest(".traffic-row") : null;
    if (!(row instanceof HTMLElement) || !row.dataset.index) return;
    const entry = entryAt(Number(row.dataset.index));
    if (!entry) return;
    select(selected === entry ? null : entry);
    viewport.focus({ preventScroll: true });
  });

  viewport.addEventListener("keydown", (event) => {
    if (!shown.length) return;
    const current = selected ? positionOf(selected.index) : -1;
    let next = null;
    if (event.key === "ArrowDown") next = Math.min(shown.length - 1, current + 1);
    else if (event.key === "ArrowUp") next = Math.max(0, current < 0 ? shown.length - 1 : current - 1);
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = shown.length - 1;
    else if (event.key === "Escape" && selected) {
      select(null);
      event.preventDefault();
      return;
    }
    if (next === null) return;
    event.preventDefault();
    select(entryAt(shown[next]) ?? null, { scroll: true });
  });

  /** @param {Entry} entry */
  function renderDetail(entry) {
    const r = entry.record;
    detail.hidden = false;
    const head = el("header", "traffic-detail-head");
    const title = el("div", "traffic-detail-title");
    title.append(
      el("span", `traffic-kind-label k-${isFailure(r) ? "error" : String(r.kind ?? "")}`, String(r.kind ?? "?")),
      el("strong", "traffic-detail-method", String(r.method ?? "(unknown method)")),
    );
    if (r.id !== null && r.id !== undefined) title.append(el("span", "traffic-muted", `id ${idText(r.id)}`));
    const close = el("button", "traffic-button traffic-close", "×");
    close.type = "button";
    close.title = "Close (Esc)";
    close.setAttribute("aria-label", "Close the message");
    close.addEventListener("click", () => select(null));
    const copy = el("button", "traffic-button", "Copy JSON");
    copy.type = "button";
    copy.addEventListener("click", () => {
      const text = JSON.stringify(r.message ?? null, null, 2);
      navigator.clipboard?.writeText(text).then(
        () => flash(copy, "Copied"),
        () => flash(copy, "Copy failed"),
      );
    });
    const actions = el("div", "traffic-detail-actions");
    if (entry.partner) {
      const partner = entry.partner;
      const jump = el("button", "traffic-button traffic-partner", partner.record.kind === "request" ? "← Its request" : "Its answer →");
      jump.type = "button";
      jump.title = `${partner.record.kind} ${partner.record.method ?? ""}`;
      jump.addEventListener("click", () => select(partner, { scroll: true }));
      actions.append(jump);
    } else if (r.kind === "request" && r.id !== null && r.id !== undefined) {
      actions.append(el("span", "traffic-muted", "no answer yet"));
    }
    actions.append(copy, close);
    head.append(title, actions);

    // One line of what is always there, then lines only for what this record has.
    const facts = el("div", "traffic-facts");
    const summary = el("div", "traffic-facts-line");
    /** @param {string} text @param {string} [cls] */
    const part = (text, cls = "") => {
      if (text) summary.append(el("span", `traffic-fact ${cls}`.trim(), text));
    };
    part(String(r.time ?? ""), "traffic-fact-time");
    part(`${r.from ?? "?"} → ${r.to ?? "?"}${callerText(r)}`);
    part(String(r.channel ?? ""));
    part(formatSize(r.size));
    if (r.kind === "response" || r.kind === "error") {
      part(r.duration_ms == null ? "duration unknown" : `${formatDuration(r.duration_ms)} after its request`);
    }
    if (r.run) part(`run ${r.run}`);
    if (r.status !== undefined && r.status !== null) part(`HTTP ${r.status}`, "traffic-fact-bad");
    facts.append(summary);
    if (r.failure) facts.append(el("div", "traffic-failure", String(r.failure)));
    if (r.redacted) facts.append(el("div", "traffic-muted", "Secrets in this message were replaced by [redacted]."));

    const tree = el("div", "traffic-json");
    tree.setAttribute("role", "tree");
    if (r.message === null || r.message === undefined) tree.append(el("p", "traffic-muted", "No JSON-RPC message came back (the failure above says what did)."));
    else tree.append(jsonNode(null, r.message, 0));
    detail.replaceChildren(head, facts, tree);
  }

  /**
   * @param {HTMLElement} button
   * @param {string} text
   */
  function flash(button, text) {
    const before = button.textContent;
    button.textContent = text;
    setTimeout(() => {
      button.textContent = before;
    }, 1200);
  }

  // --- the JSON viewer: objects and arrays fold; children are built when first opened

  /**
   * @param {string | number | null} key
   * @param {unknown} value
   * @param {number} depth
   * @returns {HTMLElement}
   */
  function jsonNode(key, value, depth) {
    const isContainer = value !== null && typeof value === "object";
    if (!isContainer) {
      const line = el("div", "j-line");
      line.setAttribute("role", "treeitem");
      if (key !== null) line.append(keyLabel(key));
      line.append(scalar(value));
      return line;
    }
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    const node = el("details", "j-node");
    node.setAttribute("role", "treeitem");
    node.dataset.close = Array.isArray(value) ? "]" : "}";
    const summary = el("summary", "j-summary");
    if (key !== null) summary.append(keyLabel(key));
    const brackets = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
    summary.append(
      el("span", "j-punct", brackets[0]),
      el("span", "j-preview", entries.length ? ` ${entries.length} ${Array.isArray(value) ? (entries.length === 1 ? "item" : "items") : entries.length === 1 ? "key" : "keys"} ` : ""),
      el("span", "j-punct", brackets[1]),
    );
    node.append(summary);
    let built = false;
    const build = () => {
      if (built) return;
      built = true;
      const children = el("div", "j-children");
      children.setAttribute("role", "group");
      let shownCount = 0;
      const more = el("button", "traffic-link j-more");
      more.type = "button";
      const page = () => {
        const end = Math.min(entries.length, shownCount + CHILDREN_PAGE);
        const fragment = document.createDocumentFragment();
        for (; shownCount < end; shownCount++) fragment.append(jsonNode(entries[shownCount][0], entries[shownCount][1], depth + 1));
        children.insertBefore(fragment, more.isConnected ? more : null);
        if (shownCount < entries.length) {
          more.textContent = `show ${Math.min(CHILDREN_PAGE, entries.length - shownCount)} more of ${entries.length - shownCount}`;
          if (!more.isConnected) children.append(more);
        } else more.remove();
      };
      more.addEventListener("click", page);
      page();
      node.append(children);
    };
    node.addEventListener("toggle", () => {
      if (node.open) build();
    });
    // Open the first levels (a message at a glance); deeper or long ones wait to be asked for.
    if (depth < OPEN_DEPTH && entries.length <= 50) {
      node.open = true;
      build();
    }
    return node;
  }

  /** @param {string | number} key */
  function keyLabel(key) {
    const label = el("span", typeof key === "number" ? "j-index" : "j-key", typeof key === "number" ? String(key) : JSON.stringify(key));
    const wrap = el("span", "j-keywrap");
    wrap.append(label, el("span", "j-punct", ": "));
    return wrap;
  }

  /** @param {unknown} value */
  function scalar(value) {
    if (typeof value === "string") {
      const text = JSON.stringify(value);
      const span = el("span", "j-string");
      if (text.length <= STRING_PREVIEW) {
        span.textContent = text;
        return span;
      }
      span.textContent = `${text.slice(0, STRING_PREVIEW)}…`;
      const all = el("button", "traffic-link j-more", `show all ${value.length.toLocaleString("en-US")} characters`);
      all.type = "button";
      all.addEventListener("click", () => {
        span.textContent = text;
        all.remove();
      });
      const wrap = el("span", "j-longstring");
      wrap.append(span, all);
      return wrap;
    }
    if (typeof value === "number") return el("span", "j-number", String(value));
    if (typeof value === "boolean") return el("span", "j-boolean", String(value));
    return el("span", "j-null", "null");
  }

  // --- export and the rest of the API

  // The export in strings of EXPORT_CHUNK records: a Blob is made of them, never one string of it all
  // (a string of hundreds of MB is slow to build and near V8's limit on a string's length).
  function exportChunks() {
    /** @type {string[]} */
    const chunks = [];
    for (let start = 0; start < all.length; start += EXPORT_CHUNK) {
      let text = "";
      const end = Math.min(all.length, start + EXPORT_CHUNK);
      for (let n = start; n < end; n++) text += `${JSON.stringify(all[n].record)}\n`;
      chunks.push(text);
    }
    return chunks;
  }

  function exportJsonLines() {
    return exportChunks().join("");
  }

  function exportBlob() {
    return new Blob(exportChunks(), { type: "application/x-ndjson" });
  }

  exportButton.addEventListener("click", () => {
    const blob = exportBlob();
    const url = URL.createObjectURL(blob);
    const link = el("a");
    link.href = url;
    link.download = filename;
    link.style.display = "none";
    element.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });

  function clear() {
    all.length = 0;
    base = 0;
    keptBytes = 0;
    missing = 0;
    shifted = 0;
    lastSeq = null; // what was cleared is not missing: the next record numbers afresh
    shown = [];
    openRequests.clear();
    for (const channel of channels) counts[channel] = 0;
    firstTime = null;
    follow = true;
    rebuild = true;
    if (selected) select(null);
    else schedule();
  }
  clearButton.addEventListener("click", clear);

  schedule();
  return {
    add,
    clear,
    records: () => all.map((entry) => entry.record),
    exportJsonLines,
    exportBlob,
    dropped: () => base + missing,
  };
}
