// Node 20 has no fs.globSync, which the conformance suite 0.1.16 imports (only its tier-check command
// calls it). This loader hook gives the `fs` module that one extra export, so the suite's client and
// server scenarios run on Debian's Node 20: `node --import ./node20-globsync.mjs .../conformance/dist/index.js`.
import { register } from "node:module";

const hooks = `
const SHIM = "appsdk-node20-fs:fs";
export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL !== SHIM) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url === SHIM) {
    const source = "import fs from 'node:fs'; export * from 'node:fs'; export default fs;" +
      "export const globSync = fs.globSync ?? (() => { throw new Error('fs.globSync needs Node 22'); });";
    return { format: "module", source, shortCircuit: true };
  }
  return next(url, context);
}
`;
register("data:text/javascript," + encodeURIComponent(hooks));
