// @ts-check
// A form generated from a tool's inputSchema (JSON Schema): strings, numbers, integers, booleans, enums,
// arrays, nested objects, defaults and required fields, with a message under each field that is wrong.
// createForm(schema) → { element, value(), setValue(v), validate() → [problems], onChange(fn) }.
// A schema part it cannot draw as fields (a oneOf of objects, a tuple…) becomes a small JSON box, so
// every tool stays callable.

const MAX_DEPTH = 8;
// Fields drawn per form. A server's schema can name one $def ten times a level, eight levels deep: 10^8
// fields, a tab that never answers. Past the bound, the rest of the form is JSON boxes (and the rest of
// the defaults is left out), so the walk costs what the schema's text does.
export const MAX_FIELDS = 500;

/** @typedef {{ left: number }} Budget schema nodes the form may still expand */

/** @typedef {Record<string, any>} Schema a JSON Schema node: the server's, untyped by nature */

/**
 * One editor per schema node.
 * @typedef {object} Editor
 * @property {HTMLElement} element
 * @property {() => any} get the value, or undefined when it is left out
 * @property {(value: any) => void} set
 * @property {() => string[]} check the problems, each as "path: problem"
 * @property {() => boolean} isEmpty
 * @property {string} [name]
 */

/**
 * @typedef {object} Files the file parameters (openai/fileParams) and their upload
 * @property {string[]} names
 * @property {(file: File) => Promise<AppsdkStoredFile>} upload
 */

/**
 * @typedef {object} EditorOptions
 * @property {string} label
 * @property {boolean} [required]
 * @property {number} depth
 * @property {() => void} changed
 * @property {string} path
 * @property {Files | null} [files]
 * @property {Budget} budget shared by every editor of one form
 */

/**
 * @param {unknown} schema
 * @param {Schema} root
 * @param {number} [seen] $refs followed so far
 * @returns {Schema}
 */
function resolve(schema, root, seen = 0) {
  // Local $ref (pydantic puts nested models under $defs), and the Optional[...] shape pydantic emits:
  // anyOf [X, {type: null}] is X, not required to be present.
  let node = /** @type {Schema | null | undefined} */ (schema);
  while (node && typeof node.$ref === "string" && node.$ref.startsWith("#/") && seen < 20) {
    const target = node.$ref
      .slice(2)
      .split("/")
      .reduce((/** @type {any} */ at, /** @type {string} */ key) => (at ? at[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined), root);
    const { $ref, ...rest } = node;
    node = { ...(target || {}), ...rest };
    seen += 1;
  }
  if (node && Array.isArray(node.anyOf || node.oneOf)) {
    const options = node.anyOf || node.oneOf;
    const real = options.filter((/** @type {Schema | null} */ o) => !(o && o.type === "null"));
    if (real.length === 1) {
      const { anyOf, oneOf, ...rest } = node;
      return { ...resolve(real[0], root, seen + 1), ...rest, nullable: real.length < options.length };
    }
  }
  if (node && Array.isArray(node.type)) {
    const real = node.type.filter((/** @type {string} */ t) => t !== "null");
    if (real.length === 1) return { ...node, type: real[0], nullable: true };
  }
  return node || {};
}

/** @param {Schema} schema */
function kindOf(schema) {
  if (Array.isArray(schema.enum)) return "enum";
  if (schema.const !== undefined) return "const";
  const type = schema.type || (schema.properties ? "object" : schema.items ? "array" : undefined);
  if (["string", "number", "integer", "boolean", "array", "object"].includes(type)) return type;
  return "json";
}

let fieldCounter = 0;
const fieldId = () => `wb-field-${++fieldCounter}`;

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>} [attrs] attributes; class, text and on* are special
 * @param {...(Node | string | null)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

// A file parameter (openai/fileParams): a file picker that uploads to the host's file store; the value
// is the stored file's id, which the workbench turns into ChatGPT's file object when it calls the tool.
/**
 * @param {Schema} node
 * @param {{ label: string, required?: boolean, changed: () => void, path: string, upload: Files["upload"] }} options
 * @returns {Editor}
 */
function fileEditor(node, { label, required, changed, path, upload }) {
  const id = fieldId();
  const message = el("p", { class: "field-message", id: `${id}-msg`, role: "status" });
  const status = el("p", { class: "field-help", text: "No file chosen: it is uploaded to the local file store." });
  const input = el("input", { type: "file", id, class: "control", "aria-describedby": `${id}-msg` });
  const wrap = el("div", { class: "field field-file", "data-path": path });
  const title = label || node.title || path;
  wrap.append(
    el("label", { for: id, class: "field-label" }, title, required ? el("span", { class: "required", text: " *" }) : null),
    input,
    status,
    message,
  );
  /** @type {string | undefined} */
  let fileId;
  input.addEventListener("change", async () => {
    const file = input.files && input.files[0];
    fileId = undefined;
    if (!file) return changed();
    status.textContent = `Uploading ${file.name}…`;
    try {
      const stored = await upload(file);
      fileId = stored.fileId;
      status.textContent = `${stored.fileName} (${stored.mimeType}, ${stored.size} bytes) → ${stored.fileId}`;
      message.textContent = "";
    } catch (error) {
      message.textContent = `upload failed: ${error instanceof Error ? error.message : error}`;
    }
    changed();
  });
  return {
    element: wrap,
    get: () => fileId,
    set(value) {
      fileId = typeof value === "string" ? value : value && (value.file_id || value.fileId);
      status.textContent = fileId ? `uploaded file ${fileId}` : "No file chosen: it is uploaded to the local file store.";
    },
    check() {
      const problem = required && !fileId ? "choose a file" : "";
      message.textContent = problem;
      wrap.classList.toggle("invalid", Boolean(problem));
      return problem ? [`${path}: ${problem}`] : [];
    },
    isEmpty: () => !fileId,
  };
}

// One editor per schema node: { element, get() → value | undefined, set(v), check(path) → problems }.
/**
 * @param {unknown} schema
 * @param {Schema} root
 * @param {EditorOptions} options
 * @returns {Editor}
 */
function editor(schema, root, { label, required, depth, changed, path, files, budget }) {
  const node = resolve(schema, root);
  if (files && depth === 1 && files.names.includes(path)) return fileEditor(node, { label, required, changed, path, upload: files.upload });
  budget.left -= 1;
  const spent = budget.left < 0;
  const kind = depth > MAX_DEPTH || spent ? "json" : kindOf(node);
  const id = fieldId();
  const message = el("p", { class: "field-message", id: `${id}-msg`, role: "status" });
  const about = spent && kindOf(node) !== "json" ? "Too many fields to draw: type this part as JSON." : joined(node.description, patternNote(node));
  const describe = about ? el("p", { class: "field-help", text: about }) : null;
  const title = label ?? node.title ?? "";
  const labelNode = title
    ? el("label", { for: id, class: "field-label" }, title, required ? el("span", { class: "required", title: "required", text: " *" }) : null)
    : null;
  const wrap = el("div", { class: `field field-${kind}`, "data-path": path || "(root)" });
  /** @param {string} text */
  const problem = (text) => {
    message.textContent = text || "";
    wrap.classList.toggle("invalid", Boolean(text));
    const input = wrap.querySelector(":scope > .control, :scope > .control-row .control");
    if (input) input.setAttribute("aria-invalid", text ? "true" : "false");
    return text ? [`${path || "arguments"}: ${text}`] : [];
  };

  if (kind === "object") {
    const properties = node.properties || {};
    const requiredSet = new Set(node.required || []);
    /** @type {Record<string, Editor>} */
    const children = {};
    const box = el("fieldset", { class: depth === 0 ? "object root" : "object" });
    if (depth > 0 && title) box.append(el("legend", {}, title, required ? el("span", { class: "required", text: " *" }) : null));
    if (depth > 0 && node.description) box.append(el("p", { class: "field-help", text: node.description }));
    for (const [name, child] of Object.entries(properties)) {
      children[name] = editor(child, root, {
        label: resolve(child, root).title || name,
        required: requiredSet.has(name),
        depth: depth + 1,
        changed,
        path: path ? `${path}.${name}` : name,
        files,
        budget,
      });
      children[name].name = name;
      box.append(children[name].element);
    }
    const extra = node.additionalProperties && !Object.keys(properties).length;
    /** @type {Editor | null} */
    let extraEditor = null;
    if (extra || (!Object.keys(properties).length && depth > 0)) {
      extraEditor = editor({}, root, { label: "", depth: MAX_DEPTH + 1, changed, path, budget });
      box.append(extraEditor.element);
    }
    if (!Object.keys(properties).length && depth === 0 && !extraEditor) {
      box.append(el("p", { class: "empty-note", text: "This tool takes no arguments." }));
    }
    wrap.append(box, message);
    return {
      element: wrap,
      get() {
        if (extraEditor) return extraEditor.get();
        /** @type {Record<string, unknown>} */
        const out = {};
        for (const [name, child] of Object.entries(children)) {
          const value = child.get();
          if (value !== undefined) out[name] = value;
        }
        // An optional object nobody filled in is left out, not sent as {name: ""}.
        if (depth > 0 && !required && Object.values(children).every((child) => child.isEmpty())) return undefined;
        return out;
      },
      isEmpty: () => (extraEditor ? extraEditor.isEmpty() : Object.values(children).every((child) => child.isEmpty())),
      set(value) {
        const object = value && typeof value === "object" && !Array.isArray(value) ? value : {};
        if (extraEditor) return extraEditor.set(value);
        for (const [name, child] of Object.entries(children)) child.set(object[name]);
      },
      check() {
        // An optional object left empty has nothing to check (its required fields apply once it is used).
        if (depth > 0 && !required && Object.values(children).every((child) => child.isEmpty())) {
          wrap.querySelectorAll(".field-message").forEach((node) => (node.textContent = ""));
          wrap.querySelectorAll(".invalid").forEach((node) => node.classList.remove("invalid"));
          return [];
        }
        /** @type {string[]} */
        const problems = [];
        for (const child of Object.values(children)) problems.push(...child.check());
        if (extraEditor) problems.push(...extraEditor.check());
        return problems;
      },
    };
  }

  if (kind === "array") {
    const items = node.items || {};
    const list = el("ol", { class: "array-items" });
    /** @type {Editor[]} */
    const rows = [];
    /** @param {unknown} value */
    const add = (value) => {
      const item = editor(items, root, { label: "", required: true, depth: depth + 1, changed, path: `${path}[]`, budget });
      const row = el("li", { class: "array-item" });
      const remove = el("button", {
        type: "button",
        class: "icon-button",
        title: "Remove this item",
        "aria-label": `Remove item from ${title || "list"}`,
        text: "×",
        onclick: () => {
          rows.splice(rows.indexOf(item), 1);
          row.remove();
          changed();
        },
      });
      row.append(item.element, remove);
      list.append(row);
      rows.push(item);
      if (value !== undefined) item.set(value);
      return item;
    };
    const addButton = el("button", {
      type: "button",
      class: "button small ghost",
      id,
      text: `+ Add ${resolve(items, root).title || "item"}`,
      onclick: () => {
        add(undefined);
        changed();
      },
    });
    // The label names the list, not the button (the button says what it adds).
    if (labelNode) {
      labelNode.removeAttribute("for");
      labelNode.id = `${id}-label`;
      list.setAttribute("aria-labelledby", labelNode.id);
    }
    wrap.append(...[labelNode, describe, list, addButton, message].filter((part) => part !== null));
    let touched = false;
    return {
      element: wrap,
      get() {
        if (!rows.length && !required && !touched) return undefined;
        return rows.map((r) => r.get()).map((v) => (v === undefined ? null : v));
      },
      set(value) {
        rows.length = 0;
        list.replaceChildren();
        touched = Array.isArray(value);
        if (Array.isArray(value)) value.forEach((v) => add(v));
      },
      isEmpty: () => rows.length === 0,
      check() {
        const problems = rows.flatMap((r) => r.check());
        const count = rows.length;
        if (node.minItems !== undefined && count < node.minItems && (required || count > 0)) {
          return [...problems, ...problem(`needs at least ${node.minItems} item${node.minItems === 1 ? "" : "s"}`)];
        }
        if (node.maxItems !== undefined && count > node.maxItems) return [...problems, ...problem(`at most ${node.maxItems} items`)];
        problem("");
        return problems;
      },
    };
  }

  /** @type {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} */
  let control;
  /** @type {() => any} */
  let get;
  /** @type {(value: any) => void} */
  let set;
  /** @param {...(HTMLElement | null)} parts */
  const place = (...parts) => wrap.append(...parts.filter((part) => part !== null));
  if (kind === "boolean") {
    const box = el("input", { type: "checkbox", id, class: "control switch", role: "switch", onchange: changed });
    control = box;
    const row = el("div", { class: "control-row" }, box, labelNode);
    // Sent once the user set it (or the schema gives it a default or requires it); left out otherwise.
    const explicit = () => box.dataset.explicit === "1";
    box.addEventListener("change", () => (box.dataset.explicit = "1"));
    get = () => (explicit() || required || node.default !== undefined ? box.checked : undefined);
    set = (value) => {
      box.dataset.explicit = typeof value === "boolean" ? "1" : "";
      box.checked = value === true;
    };
    place(row, describe, message);
  } else if (kind === "enum" || kind === "const") {
    /** @type {unknown[]} */
    const values = kind === "const" ? [node.const] : node.enum;
    const select = el("select", { id, class: "control", onchange: changed, "aria-describedby": `${id}-msg` });
    control = select;
    if (!required || node.default === undefined) select.append(el("option", { value: "", text: required ? "Choose…" : "—" }));
    values.forEach((value, index) => select.append(el("option", { value: String(index), text: typeof value === "string" ? value : JSON.stringify(value) })));
    get = () => (control.value === "" ? undefined : values[Number(control.value)]);
    set = (value) => {
      const index = values.findIndex((v) => JSON.stringify(v) === JSON.stringify(value));
      select.value = index < 0 ? "" : String(index);
    };
    place(labelNode, select, describe, message);
  } else if (kind === "number" || kind === "integer") {
    control = el("input", {
      type: "number",
      id,
      class: "control",
      step: kind === "integer" ? "1" : "any",
      min: node.minimum,
      max: node.maximum,
      inputmode: kind === "integer" ? "numeric" : "decimal",
      oninput: changed,
      "aria-describedby": `${id}-msg`,
    });
    get = () => (control.value.trim() === "" ? undefined : Number(control.value));
    set = (value) => (control.value = typeof value === "number" ? String(value) : "");
    place(labelNode, control, describe, message);
  } else if (kind === "string") {
    const long = (node.maxLength || 0) > 200 || /description|text|body|content|prompt|message/i.test(title);
    /** @type {Record<string, string>} */
    const inputTypes = { email: "email", uri: "url", date: "date", "date-time": "datetime-local", time: "time" };
    const inputType = inputTypes[node.format] || "text";
    const text = long
      ? el("textarea", { id, class: "control", rows: "3", oninput: changed, "aria-describedby": `${id}-msg` })
      : el("input", { type: inputType, id, class: "control", oninput: changed, "aria-describedby": `${id}-msg`, spellcheck: "false" });
    control = text;
    if (node.examples && node.examples.length) text.placeholder = String(node.examples[0]);
    else if (node.default === undefined && node.format) text.placeholder = node.format;
    get = () => {
      if (control.value === "") return required ? "" : undefined;
      if (inputType === "datetime-local") return new Date(control.value).toISOString();
      return control.value;
    };
    set = (value) => {
      if (inputType === "datetime-local" && typeof value === "string" && value) {
        const date = new Date(value);
        control.value = isNaN(date.getTime()) ? "" : new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
      } else control.value = typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
    };
    place(labelNode, control, describe, message);
  } else {
    control = el("textarea", { id, class: "control code", rows: "3", spellcheck: "false", oninput: changed, placeholder: "JSON", "aria-describedby": `${id}-msg` });
    get = () => {
      if (control.value.trim() === "") return undefined;
      try {
        return JSON.parse(control.value);
      } catch {
        return control.value; // reported by check()
      }
    };
    set = (value) => (control.value = value === undefined ? "" : JSON.stringify(value, null, 2));
    place(labelNode, control, describe, message);
  }

  const check = () => {
    const value = get();
    if (value === undefined || value === "") {
      // An empty required string is refused as missing, as `appsdk call` refuses a missing argument.
      if (required) return problem("required");
      return problem("");
    }
    if (kind === "json" && control.value.trim()) {
      try {
        JSON.parse(control.value);
      } catch (error) {
        return problem(`not JSON: ${error instanceof Error ? error.message : error}`);
      }
    }
    if (kind === "integer" && !Number.isInteger(value)) return problem("a whole number");
    if ((kind === "number" || kind === "integer") && Number.isNaN(value)) return problem("a number");
    if (typeof value === "number") {
      if (node.minimum !== undefined && value < node.minimum) return problem(`at least ${node.minimum}`);
      if (node.maximum !== undefined && value > node.maximum) return problem(`at most ${node.maximum}`);
      if (node.exclusiveMinimum !== undefined && value <= node.exclusiveMinimum) return problem(`more than ${node.exclusiveMinimum}`);
      if (node.exclusiveMaximum !== undefined && value >= node.exclusiveMaximum) return problem(`less than ${node.exclusiveMaximum}`);
    }
    if (typeof value === "string" && kind === "string") {
      if (node.minLength !== undefined && value.length < node.minLength) return problem(`at least ${node.minLength} characters`);
      if (node.maxLength !== undefined && value.length > node.maxLength) return problem(`at most ${node.maxLength} characters`);
      // node.pattern is not run here: JavaScript's RegExp backtracks, and a server's `^(a|a)*$` against what
      // the user types would freeze the page. appsdk checks it in linear time when the tool runs
      // (workbench/server.py argument_problems); the field's help says so (patternNote).
      if (node.format === "email" && !/^[^@\s]+@[^@\s]+$/.test(value)) return problem("an e-mail address");
    }
    return problem("");
  };
  const isEmpty = () => {
    if (kind === "boolean") return control.dataset.explicit !== "1";
    return control.value.trim() === "";
  };
  return { element: wrap, get, set, check, isEmpty };
}

/**
 * What the field's help says of a server's `pattern`, which this page does not run (see check()).
 * @param {Schema} node
 * @returns {string | undefined}
 */
function patternNote(node) {
  if (typeof node.pattern !== "string" || kindOf(node) !== "string") return undefined;
  const shown = node.pattern.length > 80 ? `${node.pattern.slice(0, 77)}...` : node.pattern;
  return `Must match ${shown}: checked when the tool runs, not as you type.`;
}

/**
 * @param {string | undefined} first
 * @param {string | undefined} second
 * @returns {string | undefined}
 */
function joined(first, second) {
  return first && second ? `${first} ${second}` : first || second;
}

/**
 * The schema's defaults as a value (an object's from its properties'), from at most MAX_FIELDS nodes.
 * @param {unknown} schema
 * @param {Schema} root
 * @param {number} [depth]
 * @param {Budget} [budget]
 * @returns {unknown}
 */
export function defaults(schema, root, depth = 0, budget = { left: MAX_FIELDS }) {
  if (--budget.left < 0) return undefined;
  const node = resolve(schema, root);
  if (node.default !== undefined) return node.default;
  if (kindOf(node) === "object" && depth < MAX_DEPTH) {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [name, child] of Object.entries(node.properties || {})) {
      const value = defaults(child, root, depth + 1, budget);
      if (value !== undefined) out[name] = value;
    }
    return Object.keys(out).length || depth === 0 ? out : undefined;
  }
  return undefined;
}

/**
 * @param {unknown} schema the tool's inputSchema
 * @param {{ fileParams?: string[], upload?: Files["upload"] }} [options]
 */
export function createForm(schema, { fileParams = [], upload } = {}) {
  /** @type {Schema} */
  const root = schema && typeof schema === "object" ? schema : { type: "object" };
  /** @type {(() => void)[]} */
  const listeners = [];
  let quiet = false;
  const changed = () => {
    if (!quiet) listeners.forEach((fn) => fn());
  };
  const files = fileParams.length && upload ? { names: fileParams, upload } : null;
  const budget = { left: MAX_FIELDS };
  const top = editor({ type: "object", ...root }, root, { label: "", required: true, depth: 0, changed, path: "", files, budget });
  const initial = defaults(root, root) || {};
  quiet = true;
  top.set(initial);
  quiet = false;
  return {
    element: top.element,
    value: () => top.get() || {},
    /** @param {Record<string, unknown>} value */
    setValue(value) {
      quiet = true;
      try {
        top.set(value);
      } finally {
        quiet = false;
      }
    },
    validate: () => top.check(),
    onChange: (/** @type {() => void} */ fn) => listeners.push(fn),
    defaults: () => initial,
  };
}
