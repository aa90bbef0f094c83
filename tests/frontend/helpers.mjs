// Shared by the node tests: where the shipped front-end lives, and the real JSON the Python side serves.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const HOST = new URL("../../appsdk_cli/host/static/host/", import.meta.url).href;
export const WORKBENCH = new URL("../../appsdk_cli/workbench/static/", import.meta.url).href;

/**
 * What a Python expression in appsdk_cli evaluates to, as JSON: the profiles catalog, a template's
 * CSP… the same data the host page reads from the preview server.
 * @param {string} imports
 * @param {string} expression
 */
export function python(imports, expression) {
  const code = `import json\n${imports}\nprint(json.dumps(${expression}))`;
  const out = execFileSync(process.env.PYTHON || "python3", ["-c", code], {
    cwd: REPO,
    env: { ...process.env, PYTHONPATH: REPO },
    encoding: "utf-8",
  });
  return JSON.parse(out);
}
