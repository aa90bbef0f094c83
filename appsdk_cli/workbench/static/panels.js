// @ts-check
// The inspector: traffic (the timeline from traffic.js), what the model reads, widget state (view and
// edit), CSP violations and the host log, fed by the host frames' appsdkPreview.on(...) events.

/** @param {string} id */
const $ = (id) => {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the workbench page has no #${id}`);
  return found;
};
/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} kind
 * @returns {T}
 */
const element = (id, kind) => {
  const found = $(id);
  if (!(found instanceof kind)) throw new Error(`#${id} is not a ${kind.name}`);
  return found;
};

/** @typedef {{ run: string, profile: string, tool: string }} Source which host frame an event came from */

/**
 * An error's message (duck-typed: a host frame's errors are not this window's Error).
 * @param {unknown} error
 */
const messageOf = (error) =>
  error && typeof error === "object" && "message" in error && typeof error.message === "string" ? error.message : String(error);
const MAX_ENTRIES = 500;

/** @param {string | number | undefined} value */
function time(value) {
  const date = value ? new Date(value) : new Date();
  return date.toLocaleTimeString(undefined, { hour12: false, hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/**
 * @param {{ what: string, where?: string, when?: string | number, text?: string, json?: unknown, level?: string }} parts
 */
function entry({ what, where, when, text, json, level }) {
  const item = document.createElement("li");
  item.className = "entry";
  if (level) item.dataset.level = level;
  const head = document.createElement("div");
  head.className = "entry-head";
  const label = document.createElement("span");
  label.className = "what";
  label.textContent = what;
  const place = document.createElement("span");
  place.textContent = where || "";
  const stamp = document.createElement("time");
  stamp.textContent = time(when);
  head.append(label, place, stamp);
  item.append(head);
  if (text) item.append(Object.assign(document.createElement("p"), { textContent: text }));
  if (json !== undefined) item.append(Object.assign(document.createElement("pre"), { className: "json", textContent: JSON.stringify(json, null, 2) }));
  return item;
}

/**
 * @param {HTMLElement} list
 * @param {HTMLElement} item
 */
function append(list, item) {
  list.querySelector(".empty")?.remove();
  list.append(item);
  while (list.children.length > MAX_ENTRIES) list.firstElementChild?.remove();
}

/**
 * @param {HTMLElement} list
 * @param {string} text
 */
function empty(list, text) {
  if (!list.children.length) list.append(Object.assign(document.createElement("li"), { className: "empty", textContent: text }));
}

/**
 * @param {{ onApplyState: (runId: string, state: unknown) => Promise<void>, onReadState: (runId: string) => Promise<unknown> }} hooks
 */
export function createPanels({ onApplyState, onReadState }) {
  const counts = { model: 0, csp: 0, log: 0, logBad: 0 };
  /** @type {Map<string, unknown>} run id → last known widget state */
  const states = new Map();
  /** @type {AppsdkRun[]} */
  let runs = [];
  /** @type {ReturnType<typeof import("./traffic.js").createTrafficPanel> | null} */
  let traffic = null;
  /** @type {AppsdkTrafficRecord[]} */
  const waitingTraffic = [];
  let trafficFailed = false;
  let trafficAvailable = true;

  // -- tabs
  const tabs = [...document.querySelectorAll("#inspector-tabs [role=tab]")].filter((tab) => tab instanceof HTMLElement);
  /** @param {HTMLElement} tab */
  const select = (tab) => {
    for (const other of tabs) {
      const chosen = other === tab;
      other.setAttribute("aria-selected", String(chosen));
      other.tabIndex = chosen ? 0 : -1;
      const panel = document.querySelector(`.panel[data-panel="${other.dataset.panel}"]`);
      if (panel instanceof HTMLElement) panel.hidden = !chosen;
    }
  };
  tabs.forEach((tab, index) => {
    tab.tabIndex = index === 0 ? 0 : -1;
    tab.addEventListener("click", () => select(tab));
    tab.addEventListener("keydown", (event) => {
      const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      const next = tabs[(index + step + tabs.length) % tabs.length];
      select(next);
      next.focus();
    });
  });

  /** @param {Source | undefined} source */
  const where = (source) => (source ? `${source.tool} · ${source.profile}` : "");
  /**
   * @param {string} id
   * @param {number | string} value
   * @param {unknown} [bad]
   */
  const count = (id, value, bad) => {
    const node = $(id);
    node.textContent = value ? String(value) : "";
    node.classList.toggle("bad", Boolean(bad));
  };

  // -- traffic
  const mount = $("traffic-panel");
  const fallbackList = document.createElement("ol");
  fallbackList.className = "entries";
  import("./traffic.js")
    .then((module) => {
      traffic = module.createTrafficPanel(mount, { title: "Traffic", byTime: true });
      for (const record of waitingTraffic.splice(0)) traffic.add(record);
    })
    .catch(() => {
      trafficFailed = true;
      const note = document.createElement("p");
      note.className = "waiting";
      note.textContent =
        "The traffic timeline (traffic.js) is not in this build yet, so this is a plain list of what was recorded: " +
        "MCP messages between the workbench and the server, and bridge messages the host pages report.";
      mount.append(note, fallbackList);
      for (const record of waitingTraffic.splice(0)) fallbackTraffic(record);
      empty(fallbackList, "No messages yet.");
    });

  /** @param {AppsdkTrafficRecord} record */
  function fallbackTraffic(record) {
    const arrow = `${record.from || "?"} → ${record.to || "?"}`;
    append(
      fallbackList,
      entry({
        what: `${record.channel || "mcp"} ${record.kind || ""} ${record.method || ""}`.trim(),
        where: `${arrow}${record.size ? ` · ${record.size} B` : ""}${record.duration_ms != null ? ` · ${record.duration_ms} ms` : ""}`,
        when: record.time,
        json: record.message,
      }),
    );
  }

  // -- widget state
  const stateRun = element("state-run", HTMLSelectElement);
  const stateEditor = element("state-editor", HTMLTextAreaElement);
  const stateMessage = $("state-message");
  let editing = false;
  stateEditor.addEventListener("input", () => (editing = true));
  /** @param {string} runId */
  const showState = (runId) => {
    if (editing && document.activeElement === stateEditor) return;
    const state = states.get(runId);
    stateEditor.value = state === undefined ? "" : JSON.stringify(state, null, 2);
    stateEditor.placeholder = runId ? "null: the widget has set no state yet" : "Run a tool with a widget first.";
  };
  const readState = async () => {
    const runId = stateRun.value;
    if (!runId) return;
    try {
      states.set(runId, await onReadState(runId));
      editing = false;
      showState(runId);
      stateMessage.textContent = "";
    } catch (error) {
      stateMessage.textContent = messageOf(error);
    }
  };
  stateRun.addEventListener("change", () => {
    editing = false;
    readState();
  });
  $("state-refresh").addEventListener("click", () => {
    editing = false;
    readState();
  });
  $("state-apply").addEventListener("click", async () => {
    const runId = stateRun.value;
    if (!runId) return;
    let state;
    try {
      state = stateEditor.value.trim() ? JSON.parse(stateEditor.value) : null;
    } catch (error) {
      stateMessage.textContent = `Not JSON: ${messageOf(error)}`;
      stateEditor.setAttribute("aria-invalid", "true");
      return;
    }
    stateEditor.removeAttribute("aria-invalid");
    try {
      await onApplyState(runId, state);
      states.set(runId, state);
      editing = false;
      stateMessage.textContent = "";
    } catch (error) {
      stateMessage.textContent = messageOf(error);
    }
  });

  empty($("model-entries"), "Nothing yet: run a tool.");
  empty($("csp-entries"), "No violations. A blocked fetch, script or image shows up here.");
  empty($("log-entries"), "The host log of every widget appears here.");
  const logLevel = element("log-level", HTMLSelectElement);
  logLevel.addEventListener("change", () => {
    const wanted = logLevel.value;
    for (const item of $("log-entries").children) {
      if (!(item instanceof HTMLElement)) continue;
      const level = item.dataset.level || "info";
      item.hidden = wanted === "warn" ? level === "info" : wanted === "error" ? level !== "error" : false;
    }
  });

  return {
    /** @param {boolean} available the server records MCP traffic */
    setTrafficAvailable(available) {
      trafficAvailable = available;
      if (!available && !mount.querySelector(".server-waiting")) {
        const note = document.createElement("p");
        note.className = "waiting server-waiting";
        note.textContent = "The server side records no MCP traffic in this build (appsdk_cli.trace is missing); host-page messages still show.";
        mount.prepend(note);
      }
    },
    /** @param {AppsdkTrafficRecord} record */
    traffic(record) {
      if (traffic) traffic.add(record);
      else if (trafficFailed) fallbackTraffic(record);
      else waitingTraffic.push(record);
    },
    /**
     * @param {AppsdkLogEntry} item
     * @param {Source} [source]
     */
    log(item, source) {
      const level = item.level || "info";
      const node = entry({ what: item.kind || "host", where: where(source), text: item.message, level });
      const wanted = logLevel.value;
      node.hidden = wanted === "warn" ? level === "info" : wanted === "error" ? level !== "error" : false;
      append($("log-entries"), node);
      counts.log += 1;
      if (level !== "info") counts.logBad += 1;
      count("count-log", counts.logBad || "", counts.logBad);
    },
    /**
     * @param {AppsdkModelEvent} item
     * @param {Source} [source]
     */
    model(item, source) {
      append($("model-entries"), entry({ what: item.kind, where: where(source), when: item.time, json: item.params }));
      counts.model += 1;
      count("count-model", counts.model);
    },
    /** @param {AppsdkRun} run */
    modelResult(run) {
      /** @type {Partial<McpCallToolResult>} */
      const result = run.result || {};
      const texts = (result.content || []).flatMap((b) => (b && b.type === "text" ? [b.text] : []));
      append(
        $("model-entries"),
        entry({
          what: `${run.tool} result`,
          where: result.isError ? "isError" : "",
          text: texts.join("\n") || "(no text content)",
          json: result.structuredContent,
        }),
      );
      counts.model += 1;
      count("count-model", counts.model);
    },
    /**
     * @param {unknown} state
     * @param {Source} source
     */
    widgetState(state, source) {
      states.set(source.run, state);
      if (stateRun.value === source.run) showState(source.run);
    },
    /**
     * @param {AppsdkCspEvent} item
     * @param {Source} [source]
     */
    csp(item, source) {
      // Libraries probe for eval and fall back when it is refused (zod does): worth a line, not an alarm.
      const probe = item.blockedURI === "eval";
      const where_ = item.sourceFile ? ` (${item.sourceFile}:${item.line})` : "";
      const text = item.message || (probe
        ? `eval refused by ${item.directive || "script-src"}${where_}; fine if the widget only probes for it`
        : `${item.directive || "a directive"} blocked ${item.blockedURI || "an inline resource"}${where_}`);
      append($("csp-entries"), entry({ what: item.directive || "CSP", where: where(source), text, level: probe ? "info" : "error" }));
      if (!probe) counts.csp += 1;
      count("count-csp", counts.csp, true);
    },
    /** @param {AppsdkRun[]} list the runs with a widget */
    setRuns(list) {
      runs = list;
      const chosen = stateRun.value;
      stateRun.replaceChildren(
        ...runs.map((run) => Object.assign(document.createElement("option"), { value: run.id, textContent: `#${run.sequence} ${run.tool}` })),
      );
      if (runs.some((run) => run.id === chosen)) stateRun.value = chosen;
      else if (runs.length) {
        stateRun.value = runs[runs.length - 1].id;
        readState();
      } else showState("");
    },
    get trafficAvailable() {
      return trafficAvailable;
    },
  };
}
