#!/usr/bin/env node
// Web Platform Tests runner: runs WPT `.any.js` files (those meant for workers) inside workerbox
// workers and reports pass rates per directory. The WPT files are not part of this repository:
// point it at a checkout (or a partial copy) of web-platform-tests.
//
//   node scripts/wpt.mjs <wpt-root> [dir ...] [--json out.json] [--filter substr]
//                        [--timeout ms] [--verbose] [--list] [--window-pure]
//
// Each test file becomes one service-worker script: a prelude (location, GLOBAL, relative fetch),
// resources/testharness.js, a reporter that collects results through add_result_callback and
// add_completion_callback, the `// META: script=` includes and the test file. All of it runs in
// one function called from the worker's fetch handler (so timers and fetch() run in a request, as
// in production), and the dispatch answers with the results as JSON. Files the tests fetch (e.g.
// url/resources/urltestdata.json) are served from <wpt-root> through the worker's `outbound`
// handler at http://wpt.test/<path>. `// META: variant=` runs the file once per variant.
// `--window-pure` also runs `.window.js` files that never mention the document, the window,
// frames or XMLHttpRequest (url/IdnaTestV2.window.js, url/toascii.window.js, …), as workerd's
// own WPT runs do.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ORIGIN = "http://wpt.test";
const STATUS = ["PASS", "FAIL", "TIMEOUT", "NOTRUN", "PRECONDITION_FAILED"];
const HARNESS = ["OK", "ERROR", "TIMEOUT", "PRECONDITION_FAILED"];
const DEFAULT_DIRS = ["url", "urlpattern", "encoding", "streams", "FileAPI", "dom", "fetch/api", "WebCryptoAPI", "webidl", "html/webappapis"];
// Paths wptserve serves under another name.
const ALIASES = { "/resources/WebIDLParser.js": "/resources/webidl2/lib/webidl2.js" };
const TYPES = { ".json": "application/json", ".js": "text/javascript", ".txt": "text/plain", ".html": "text/html", ".idl": "text/plain", ".png": "image/png" };

function parseArgs(argv) {
  const opts = { root: null, dirs: [], json: null, filter: [], timeout: 10000, verbose: false, list: false, windowPure: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--json") opts.json = argv[++i];
    else if (a === "--filter") opts.filter.push(argv[++i]);
    else if (a === "--timeout") opts.timeout = Number(argv[++i]);
    else if (a === "--verbose") opts.verbose = true;
    else if (a === "--list") opts.list = true;
    else if (a === "--window-pure") opts.windowPure = true;
    else if (a.startsWith("--")) throw new Error(`unknown option ${a}`);
    else if (!opts.root) opts.root = path.resolve(a);
    else opts.dirs.push(a.replace(/\/+$/, ""));
  }
  if (!opts.root) throw new Error("usage: node scripts/wpt.mjs <wpt-root> [dir ...] [--json out.json] [--filter substr] [--timeout ms]");
  if (!existsSync(path.join(opts.root, "resources", "testharness.js"))) throw new Error(`${opts.root}/resources/testharness.js not found`);
  if (opts.dirs.length === 0) opts.dirs = DEFAULT_DIRS.filter((d) => existsSync(path.join(opts.root, d)));
  return opts;
}

const WINDOW_ONLY = /\b(document|window|iframe|XMLHttpRequest|navigator)\b/;

function walk(dir, windowPure, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full, windowPure, out);
    else if (name.endsWith(".any.js")) out.push(full);
    else if (windowPure && name.endsWith(".window.js") && !WINDOW_ONLY.test(readFileSync(full, "utf8"))) out.push(full);
  }
  return out;
}

/** The `// META:` lines at the top of a test file. */
export function readMeta(source) {
  const meta = { global: null, scripts: [], variants: [], title: null, timeout: null };
  for (const line of source.split("\n")) {
    const m = /^\/\/ META: *([a-z]+) *= *(.*?)\s*$/.exec(line);
    if (!m) {
      if (line.trim() === "" || line.startsWith("//")) continue;
      break;
    }
    const [, key, value] = m;
    if (key === "global") meta.global = value.split(",").map((s) => s.trim()).filter(Boolean);
    else if (key === "script") meta.scripts.push(value);
    else if (key === "variant") meta.variants.push(value);
    else if (key === "title") meta.title = value;
    else if (key === "timeout") meta.timeout = value;
  }
  return meta;
}

/** Whether a file's `global=` list has a worker scope (default: window,dedicatedworker). */
export function runsInWorkers(globals) {
  if (!globals) return true;
  const wanted = new Set();
  for (const g of globals) {
    if (g.startsWith("!")) wanted.delete(g.slice(1));
    else wanted.add(g);
  }
  return [...wanted].some((g) => /worker/.test(g) && !g.startsWith("shadowrealm") || g === "jsshell");
}

// Runs inside the worker before testharness.js: what a WPT worker scope has and workers lack.
// `location` is a WorkerLocation-like record of the test's URL; relative fetch() resolves against it.
function prelude(url, title) {
  return `
var META_TITLE = ${JSON.stringify(title ?? "")};
(() => {
  const href = ${JSON.stringify(url)};
  const u = new URL(href);
  const location = {};
  for (const k of ["href", "origin", "protocol", "host", "hostname", "port", "pathname", "search", "hash"]) location[k] = u[k];
  location.toString = () => href;
  Object.defineProperty(globalThis, "location", { value: location, writable: true, configurable: true });
  globalThis.GLOBAL = { isWindow: () => false, isWorker: () => true, isShadowRealm: () => false };
  // Relative URLs resolve against the test's URL, as in a browser's worker (workerd's own WPT
  // harness does the same for fetch, Request and Response.redirect).
  // An input that does not resolve is passed on as it is, for the API under test to reject.
  const resolve = (input) => (typeof input === "string" || input instanceof URL ? URL.parse(String(input), href)?.href ?? input : input);
  const realFetch = globalThis.fetch;
  globalThis.fetch = function fetch(input, init) {
    return realFetch.call(this, resolve(input), init);
  };
  const RealRequest = globalThis.Request;
  const RequestProxy = new Proxy(RealRequest, {
    construct(target, args, newTarget) {
      if (args.length > 0) args[0] = resolve(args[0]);
      return Reflect.construct(target, args, newTarget === RequestProxy ? target : newTarget);
    },
  });
  globalThis.Request = RequestProxy;
  const redirect = globalThis.Response.redirect;
  Object.defineProperty(globalThis.Response, "redirect", {
    value: function redirect_(url, status) { return redirect.call(this, resolve(url), ...Array.prototype.slice.call(arguments, 1)); },
    writable: true, configurable: true,
  });
  // testharness.js picks its environment from these; a shell environment fits a worker whose
  // tests all run from one script (no install or message events, no document).
  globalThis.__wptHidden = {};
  for (const name of ["ServiceWorkerGlobalScope", "WorkerGlobalScope", "DedicatedWorkerGlobalScope"]) {
    const d = Object.getOwnPropertyDescriptor(globalThis, name);
    if (d && d.configurable) { globalThis.__wptHidden[name] = d; delete globalThis[name]; }
  }
})();
`;
}

// Runs right after testharness.js: restores what the prelude hid and collects results.
const REPORTER = `
for (const [name, d] of Object.entries(globalThis.__wptHidden)) Object.defineProperty(globalThis, name, d);
delete globalThis.__wptHidden;
add_result_callback((t) => __wpt.results.push({ name: String(t.name), status: t.status, message: t.message == null ? null : String(t.message).slice(0, 500) }));
add_completion_callback((tests, harness) => {
  // The final list: it also has the tests a harness timeout stopped (TIMEOUT, NOTRUN), which
  // never reach the result callback.
  __wpt.results = tests.map((t) => ({ name: String(t.name), status: t.status, message: t.message == null ? null : String(t.message).slice(0, 500) }));
  __wpt.harness = { status: harness.status, message: harness.message == null ? null : String(harness.message).slice(0, 500) };
  __wpt.finish();
});
`;

function buildScript(root, file, variant, timeoutMs) {
  const rel = path.relative(root, file).split(path.sep).join("/");
  const source = readFileSync(file, "utf8");
  const meta = readMeta(source);
  const url = `${ORIGIN}/${rel.replace(/\.any\.js$/, ".any.worker.html").replace(/\.window\.js$/, ".window.html")}${variant}`;
  const parts = [];
  for (const s of meta.scripts) {
    const target = s.startsWith("/") ? path.join(root, ALIASES[s] ?? s) : path.join(path.dirname(file), s);
    parts.push(`// --- ${s}\n${readFileSync(target.split("?")[0], "utf8")}`);
  }
  // In a browser each included script's top-level functions are globals (idlharness.js calls
  // globalThis.fetch_spec); here they are hoisted inside one function, so they are copied onto
  // the global scope first.
  const functions = new Set();
  for (const text of [...parts, source]) for (const m of text.matchAll(/^(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)\s*\(/gm)) functions.add(m[1]);
  // (A name the regex found inside a closure is not in scope here: typeof skips it.)
  const exported = [...functions].map((name) => `if (typeof ${name} === "function") globalThis[${JSON.stringify(name)}] = ${name};`).join("\n");
  const body = [
    exported,
    `// --- resources/testharness.js\n${readFileSync(path.join(root, "resources", "testharness.js"), "utf8")}`,
    REPORTER,
    ...parts,
    `// --- ${rel}\n${source}`,
  ].join("\n;\n");
  return `${prelude(url, meta.title)}
const __wpt = { results: [], harness: null, loadError: null, finish: null };
function __wptMain() {
${body}
}
addEventListener("fetch", (event) => event.respondWith((async () => {
  const finished = new Promise((resolve) => (__wpt.finish = resolve));
  try {
    __wptMain();
  } catch (e) {
    __wpt.loadError = String(e && e.stack || e).slice(0, 1000);
    try { done(); } catch {}
  }
  let timer = setTimeout(() => {
    try { timeout(); } catch {}
    timer = setTimeout(() => __wpt.finish(), 200);
  }, ${timeoutMs});
  await finished;
  clearTimeout(timer);
  return new Response(JSON.stringify({ results: __wpt.results, harness: __wpt.harness, loadError: __wpt.loadError }));
})()));
`;
}

function serveFromDisk(root, log) {
  return async (request) => {
    const url = new URL(request.url);
    if (url.origin !== ORIGIN) return new Response("not a WPT resource", { status: 502 });
    const file = path.join(root, ALIASES[url.pathname] ?? decodeURIComponent(url.pathname));
    if (!file.startsWith(root + path.sep) || !existsSync(file) || !statSync(file).isFile()) {
      log?.(`404 ${url.pathname}`);
      return new Response("not found", { status: 404 });
    }
    return new Response(readFileSync(file), { headers: { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" } });
  };
}

async function runOne(api, root, file, variant, opts) {
  const meta = readMeta(readFileSync(file, "utf8"));
  const timeoutMs = meta.timeout === "long" ? opts.timeout * 3 : opts.timeout;
  const logs = [];
  let worker = null;
  const started = Date.now();
  try {
    worker = await api.createWorker({
      script: buildScript(root, file, variant, timeoutMs),
      filename: `${ORIGIN}/${path.relative(root, file).split(path.sep).join("/")}`,
      format: "service-worker",
      // As workerd's own WPT runs (its build/wpt_test.bzl): pedantic_wpt has no date, and without
      // it a few events and streams behaviours are workerd's older, non-standard ones.
      compatibilityFlags: ["pedantic_wpt"],
      pool: false,
      codeCache: false,
      limits: { wallMs: timeoutMs + 20000, cpuMs: timeoutMs + 20000, memoryMb: 256 },
      onLog: (level, message) => logs.push(`${level}: ${message}`.slice(0, 300)),
      outbound: serveFromDisk(root, (m) => logs.push(m)),
    });
    let hostTimer;
    const hostTimeout = new Promise((_, reject) => {
      hostTimer = setTimeout(() => reject(new Error("host timeout: the worker did not answer")), timeoutMs + 15000);
    });
    const response = await Promise.race([api.dispatch(worker, `${ORIGIN}/__run`), hostTimeout]).finally(() => clearTimeout(hostTimer));
    const out = JSON.parse(await response.text());
    return { ...out, ms: Date.now() - started, logs };
  } catch (e) {
    return { results: [], harness: null, crash: String(e && e.stack || e).slice(0, 1000), ms: Date.now() - started, logs };
  } finally {
    if (worker) await worker.dispose().catch(() => {});
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
  const api = (await import(path.join(repo, "index.js"))).default;
  const summary = {};
  const files = {};
  for (const dir of opts.dirs) {
    const stats = (summary[dir] = { files: 0, skipped: 0, subtests: 0, passed: 0, failed: 0, timedOut: 0, notRun: 0, errored: 0 });
    const abs = path.join(opts.root, dir);
    if (!existsSync(abs)) continue;
    for (const file of walk(abs, opts.windowPure)) {
      const rel = path.relative(opts.root, file).split(path.sep).join("/");
      if (opts.filter.length && !opts.filter.some((f) => rel.includes(f))) continue;
      const meta = readMeta(readFileSync(file, "utf8"));
      if (file.endsWith(".any.js") && !runsInWorkers(meta.global)) {
        stats.skipped++;
        continue;
      }
      for (const variant of meta.variants.length ? meta.variants : [""]) {
        const key = rel + variant;
        if (opts.list) {
          console.log(key);
          continue;
        }
        const r = await runOne(api, opts.root, file, variant, opts);
        stats.files++;
        const entry = { subtests: r.results.length, passed: 0, failures: [], ms: r.ms };
        for (const t of r.results) {
          stats.subtests++;
          if (t.status === 0) {
            stats.passed++;
            entry.passed++;
          } else {
            if (t.status === 2) stats.timedOut++;
            else if (t.status === 3) stats.notRun++;
            else stats.failed++;
            entry.failures.push({ name: t.name, status: STATUS[t.status] ?? t.status, message: t.message });
          }
        }
        const harnessBad = r.crash || r.loadError || (r.harness && r.harness.status !== 0);
        if (harnessBad) {
          stats.errored++;
          entry.harness = r.crash ? `CRASH ${r.crash}` : r.loadError ? `LOAD ${r.loadError}` : `${HARNESS[r.harness.status]} ${r.harness.message ?? ""}`;
        }
        if (opts.verbose && r.logs.length) entry.logs = r.logs.slice(0, 20);
        files[key] = entry;
        process.stderr.write(`${entry.passed}/${entry.subtests}${harnessBad ? " !" : ""}\t${key} (${r.ms} ms)\n`);
      }
    }
  }
  if (opts.list) return;
  const total = { files: 0, skipped: 0, subtests: 0, passed: 0, failed: 0, timedOut: 0, notRun: 0, errored: 0 };
  for (const s of Object.values(summary)) for (const k of Object.keys(total)) total[k] += s[k];
  const failing = {};
  for (const [k, e] of Object.entries(files)) if (e.failures.length || e.harness) failing[k] = { harness: e.harness, failures: e.failures.map((f) => `${f.status}: ${f.name}`) };
  const report = { wpt: opts.root, summary, total, failing };
  if (opts.json) writeFileSync(opts.json, JSON.stringify({ ...report, files }, null, 1));
  console.log(JSON.stringify(report, null, 1));
  process.stderr.write("\n| directory | files | subtests passed / total | % |\n| --- | ---: | ---: | ---: |\n");
  for (const [d, s] of [...Object.entries(summary), ["total", total]]) {
    process.stderr.write(`| ${d} | ${s.files} | ${s.passed} / ${s.subtests} | ${s.subtests ? ((100 * s.passed) / s.subtests).toFixed(1) : "-"} |\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e.message);
    process.exit(2);
  });
}
