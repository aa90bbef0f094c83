// appsdk's side of a widget project (web/): run by `appsdk build` and `appsdk dev` as
//   node runner.mjs build
//   node runner.mjs dev [ALLOWED_ORIGIN_REGEX]
// with web/ as the working directory. It uses the project's own Vite and TypeScript (resolved from
// web/node_modules), and talks to appsdk in JSON lines on stdout, each starting with "@@appsdk ";
// anything else a plugin prints is passed on as it is.
//
// build: type-check, then `vite build` into dist/ (one self-contained index.html); exit 1 on an error.
// dev:   a Vite dev server on 127.0.0.1 (what the local preview loads, with hot module replacement)
//        that answers across origins only the origins ALLOWED_ORIGIN_REGEX matches (none without it),
//        a watching TypeScript checker, and a watching production build into a staging folder whose
//        index.html is copied to dist/ only when it bundled and type-checked: dist/ (what the server
//        hands ChatGPT) is always the last good widget.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { isMainThread, parentPort, Worker } from "node:worker_threads";

const mode = process.argv[2];
const root = process.cwd();
const projectRequire = createRequire(path.join(root, "package.json"));
const STAGING = path.join(root, "node_modules", ".appsdk", "build");
const DIST = path.join(root, "dist");

// Marks a page built by appsdk from web/, so the preview knows which widget Vite serves the source of.
export const SOURCE_MARK = "appsdk-widget-source";
const markSource = () => ({
  name: "appsdk-widget-source",
  transformIndexHtml: () => [{ tag: "meta", attrs: { name: SOURCE_MARK, content: "web/index.html" }, injectTo: "head" }],
});

// Type-only imports vanish from the bundle's module graph, so the watching build would never see them
// change: tools.gen.ts above all, which appsdk dev rewrites when the Python models change. dist/ would then
// stay older than its sources, and `appsdk check` (which counts every file under src/) would say to build.
// Each build therefore watches every file under src/, found again at the start of every build.
function sourceFiles(dir) {
  try {
    return fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
  } catch {
    return [];
  }
}
const watchSources = () => ({
  name: "appsdk-watch-sources",
  buildStart() {
    for (const file of sourceFiles(path.join(root, "src"))) this.addWatchFile(file);
  },
});

function emit(event) {
  if (parentPort) parentPort.postMessage(event);
  else process.stdout.write("@@appsdk " + JSON.stringify(event) + "\n");
}

async function load(name) {
  let resolved;
  try {
    resolved = projectRequire.resolve(name);
  } catch {
    emit({ event: "fatal", message: `${name} is not installed in ${root}: run \`npm install\` there` });
    process.exit(1);
  }
  return import(pathToFileURL(resolved).href);
}

function relative(file) {
  if (!file) return null;
  const clean = String(file).split("?")[0];
  return path.isAbsolute(clean) ? path.relative(root, clean) : clean;
}

// One readable line per error: file, line, column and the first line of the message, without the
// plugin's name, the code frame or the stack.
function describeBuildError(error) {
  const inner = Array.isArray(error?.errors) && error.errors.length ? error.errors[0] : error;
  const raw = String(inner?.message ?? error?.message ?? error);
  let file = relative(inner?.id ?? inner?.loc?.file ?? error?.id ?? error?.loc?.file);
  let line = inner?.loc?.line ?? error?.loc?.line ?? null;
  // Rollup-style locations count columns from 0; people (and the code frame) count from 1.
  const located = inner?.loc?.column ?? error?.loc?.column;
  let column = typeof located === "number" ? located + 1 : null;
  const framed = raw.match(/─\[\s*([^\]\s]+?):(\d+):(\d+)\s*\]/) ?? raw.match(/([\w./-]+\.[cm]?[jt]sx?|[\w./-]+\.css):(\d+):(\d+)/);
  if (framed) {
    file = file ?? relative(framed[1]);
    line = line ?? Number(framed[2]);
    column = column ?? Number(framed[3]);
  }
  const text = raw
    .split("\n")
    .map((part) => part.trim())
    .find((part) => part && !/^(Build failed|error during build|Transform failed|\[vite\]|x Build failed)/i.test(part)) ?? raw;
  const message = text.replace(/^\[[\w:-]+\]\s*/, "").replace(/^(Error|SyntaxError):\s*/, "");
  return { file, line, column, message: message.slice(0, 500) };
}

// --- TypeScript -------------------------------------------------------------------------------------

function diagnosticOf(ts, diagnostic) {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n").split("\n")[0];
  if (!diagnostic.file || diagnostic.start === undefined) {
    return { file: null, line: null, column: null, message: `TS${diagnostic.code}: ${message}` };
  }
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return { file: relative(diagnostic.file.fileName), line: line + 1, column: character + 1, message: `TS${diagnostic.code}: ${message}` };
}

function configPath(ts) {
  const found = ts.findConfigFile(root, ts.sys.fileExists, "tsconfig.json");
  return found && path.dirname(found) === root ? found : null;
}

function typecheckOnce(ts) {
  const config = configPath(ts);
  if (!config) return [];
  const read = ts.readConfigFile(config, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root);
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, noEmit: true } });
  return ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error);
}

function watchTypes(ts, onResult) {
  const config = configPath(ts);
  if (!config) {
    onResult([]);
    return;
  }
  let errors = [];
  const host = ts.createWatchCompilerHost(
    config,
    { noEmit: true },
    ts.sys,
    ts.createEmitAndSemanticDiagnosticsBuilderProgram,
    (diagnostic) => {
      if (diagnostic.category === ts.DiagnosticCategory.Error) errors.push(diagnosticOf(ts, diagnostic));
    },
    (diagnostic) => {
      // 6031/6032: a check starts; 6193/6194: it finished (with the error count).
      if (diagnostic.code === 6031 || diagnostic.code === 6032) errors = [];
      if (diagnostic.code === 6193 || diagnostic.code === 6194) onResult(errors);
    },
  );
  ts.createWatchProgram(host);
}

// --- modes ------------------------------------------------------------------------------------------

async function build() {
  const ts = (await load("typescript")).default;
  const started = Date.now();
  const errors = typecheckOnce(ts).map((d) => diagnosticOf(ts, d));
  if (errors.length) {
    emit({ event: "types", ok: false, errors });
    process.exit(1);
  }
  emit({ event: "types", ok: true, errors: [] });
  const vite = await load("vite");
  try {
    await vite.build({ root, logLevel: "silent", plugins: [markSource()], build: { outDir: DIST, emptyOutDir: true } });
  } catch (error) {
    emit({ event: "build-error", error: describeBuildError(error) });
    process.exit(1);
  }
  emit({ event: "built", ms: Date.now() - started, published: true, file: relative(path.join(DIST, "index.html")) });
}

// The checker and the watching build run on a worker thread: a type check is synchronous work of a second
// or more, and on the dev server's thread it would hold every hot update back until it finished. The worker
// also has an environment of its own, so its build is a production one while the dev server's is not.
async function devBuilder() {
  const vite = await load("vite");
  const ts = (await load("typescript")).default;
  const state = { typesOk: null, bundleOk: false, buildStarted: 0 };

  // dist/ gets the staged build only when the bundle succeeded and the types check: the last good widget.
  const publish = () => {
    if (!(state.bundleOk && state.typesOk)) return false;
    const built = path.join(STAGING, "index.html");
    if (!fs.existsSync(built)) return false;
    fs.mkdirSync(DIST, { recursive: true });
    const temporary = path.join(DIST, `.index.html.${process.pid}.tmp`);
    fs.copyFileSync(built, temporary);
    fs.renameSync(temporary, path.join(DIST, "index.html"));
    state.bundleOk = false; // published; the next bundle publishes again
    return true;
  };

  watchTypes(ts, (errors) => {
    state.typesOk = errors.length === 0;
    emit({ event: "types", ok: state.typesOk, errors });
    if (publish()) emit({ event: "built", ms: Date.now() - state.buildStarted, published: true, file: "dist/index.html" });
  });

  process.env.NODE_ENV = "production";
  const watcher = await vite.build({
    root,
    logLevel: "silent",
    mode: "production",
    plugins: [markSource(), watchSources()],
    build: { outDir: STAGING, emptyOutDir: true, watch: {} },
  });
  watcher.on("event", (event) => {
    if (event.code === "BUNDLE_START") state.buildStarted = Date.now();
    if (event.code === "ERROR") {
      state.bundleOk = false;
      emit({ event: "build-error", error: describeBuildError(event.error) });
    }
    if (event.code === "BUNDLE_END") {
      event.result?.close?.();
      state.bundleOk = true;
      const published = publish();
      emit({ event: "built", ms: event.duration ?? Date.now() - state.buildStarted, published, file: "dist/index.html" });
    }
  });
}

// Vite's default CORS admits every origin on loopback: any widget the user previews (another server's,
// on another port or under .localhost) could read the project's sources from it. appsdk passes the one
// origin pattern that may: the view origin that shows this project's widget. Same-origin requests (Vite's
// own page, its module graph and HMR) need no CORS header and are not affected; the HMR websocket admits
// a cross-origin page only with the token in /@vite/client, which only an admitted origin can read.
function crossOrigin(pattern) {
  if (!pattern) return false;
  try {
    return { origin: new RegExp(pattern) };
  } catch (error) {
    emit({ event: "fatal", message: `not a valid origin pattern ${JSON.stringify(pattern)}: ${error.message}` });
    process.exit(2);
  }
}

async function dev(allowedOrigin) {
  const cors = crossOrigin(allowedOrigin);
  const vite = await load("vite");
  const server = await vite.createServer({
    root,
    logLevel: "silent",
    clearScreen: false,
    server: {
      host: "127.0.0.1",
      port: Number(process.env.APPSDK_VITE_PORT || 0),
      strictPort: true,
      cors,
      // The preview shows build errors itself, as one line above the last good widget.
      hmr: { overlay: false },
    },
  });
  await server.listen();
  const address = server.httpServer.address();
  emit({ event: "dev-server", url: `http://127.0.0.1:${address.port}/` });
  server.watcher.on("change", (file) => emit({ event: "changed", file: relative(file), at: Date.now() }));

  const builder = new Worker(new URL(import.meta.url), { argv: ["dev-builder"], env: { ...process.env } });
  builder.on("message", (event) => {
    emit(event);
    // Type errors reach the page as well (Vite reports syntax errors there itself).
    if (event.event === "types") {
      server.ws.send({ type: "custom", event: event.ok ? "appsdk:types-ok" : "appsdk:types-error", data: { errors: event.errors } });
    }
  });
  builder.on("error", (error) => emit({ event: "build-error", error: describeBuildError(error) }));

  const stop = async () => {
    await Promise.allSettled([server.close(), builder.terminate()]);
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // appsdk keeps our stdin open for as long as it runs: end of input means it is gone, so are we.
  process.stdin.on("end", stop);
  process.stdin.resume();
}

if (mode === "build") await build();
else if (mode === "dev") await dev(process.argv[3]);
else if (mode === "dev-builder" && !isMainThread) await devBuilder();
else {
  emit({ event: "fatal", message: `unknown mode ${mode}` });
  process.exit(2);
}
