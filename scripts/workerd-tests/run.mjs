// Running one translated config: on workerbox (createWorker per worker service, each behind a
// harness module that re-exports the test module and runs one exported `test(ctrl, env, ctx)`
// per request, as workerd's test runner calls it) and on the workerd binary (`workerd test`,
// whose `[ PASS ]`/`[ FAIL ]` lines are parsed). Both give { tests: { name: "pass" | "fail" },
// errors: { name: message }, note }; names are workerd's: `service` for the default export,
// `service:export` for a named one.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const MARK = "x-workerd-test";
// The harness's module name. workerd's /bundle lists only the modules whose names are file: URL
// paths, and the harness is none of the test's: so it gets a name of another scheme, which
// keeps it out of node:fs's view of the bundle. (The new module registry resolves imports as
// URLs against the importer's, which such a name cannot be: there the harness keeps a path.)
const HARNESS = "workerd-test-harness:main.js";
const HARNESS_NEW_REGISTRY = "__workerd_test_harness__.js";

/** workerd's variants: the oldest date (wd_test's default) and the far future (every dated flag on). */
export const VARIANTS = {
  config: { workerdDate: "2000-01-01", workerboxDate: "2000-01-01" },
  // workerbox refuses future dates, and its flag table is newer than the release's: the
  // release's newest flag date (set by scripts/workerd-tests.mjs from the tag's
  // compatibility-date.capnp) turns on the flags the binary turns on at 2999-12-31.
  "all-compat-flags": { workerdDate: "2999-12-31", workerboxDate: undefined },
};

// The harness is the worker's main script. It re-exports the test module (entrypoints, Durable
// Object classes and ctx.exports stay as they are) and wraps its default export so that a request
// carrying MARK runs one test (or lists them) while every other request goes to the module's own
// fetch handler.
function harness(main) {
  const spec = JSON.stringify(main);
  return `import * as ns from ${spec};
export * from ${spec};
const MARK = ${JSON.stringify(MARK)};
class TestController {}
const testable = (v) => (v !== null && typeof v === "object" && typeof v.test === "function") || (typeof v === "function" && typeof v.prototype?.test === "function");
function failed(e) {
  let text;
  try { text = e instanceof Error ? (e.stack ?? String(e)) : "thrown: " + String(e); } catch { text = "unprintable error"; }
  return new Response(text, { status: 500 });
}
// Not an async function: test() is called from a promise job through a bound function, so that
// no frame of the harness (nor an awaiting one) is on its stack, as when workerd's runner calls
// it from C++ (util.getCallSites() and the like see the test's frames alone).
function answer(request, env, ctx) {
  const name = request.headers.get(MARK);
  if (name === "?") return new Response(JSON.stringify(Object.keys(ns).filter((k) => testable(ns[k]))));
  let run;
  try {
    const v = ns[name];
    const target = typeof v === "function" ? new v(ctx, env) : v;
    const args = typeof v === "function" ? [new TestController()] : [new TestController(), env, ctx];
    run = Function.prototype.bind.call(target.test, target, ...args);
  } catch (e) {
    return failed(e);
  }
  return Promise.resolve().then(run).then(() => new Response("ok"), failed);
}
const base = ns.default;
let wrapped;
if (typeof base === "function") {
  wrapped = class extends base {
    fetch(request) {
      if (request.headers.has(MARK)) return answer(request, this.env, this.ctx);
      return super.fetch(request);
    }
  };
  Object.defineProperty(wrapped, "name", { value: base.name });
} else {
  wrapped = Object.create(base ?? null);
  wrapped.fetch = function fetch(request, env, ctx) {
    if (request.headers.has(MARK)) return answer(request, env, ctx);
    if (typeof base?.fetch !== "function") throw new Error("Handler does not export a fetch() function.");
    return base.fetch.call(this, request, env, ctx);
  };
}
export default wrapped;
// The default export above is the harness's own: where the module has none, ctx.exports (and
// cloudflare:workers' exports) leave it out, as workerd's have no default entrypoint then.
export const __workerboxExports = base === undefined ? (own) => { const { default: _, ...rest } = own; return Object.freeze(rest); } : undefined;
`;
}

/** A free loopback port, held by a server of ours until the listener for it takes it (`release()`). */
function reservePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    let released = null;
    const release = () => (released ??= new Promise((done) => server.close(() => done())));
    server.listen(0, "127.0.0.1", () => resolve({ port: server.address().port, release }));
  });
}

/** The addresses a worker's connect() may ask for a config's tcp socket by (`*` listens on every interface). */
function askedAddresses(address) {
  const colon = address.lastIndexOf(":");
  const host = address.slice(0, colon);
  const port = address.slice(colon + 1);
  const loopback = ["*", "localhost", "127.0.0.1", "[::1]", "0.0.0.0", "[::]"];
  return loopback.includes(host) ? ["localhost", "127.0.0.1", "[::1]", ...(host === "*" ? ["0.0.0.0"] : [])].map((h) => `${h}:${port}`) : [address];
}

const withTimeout = (promise, ms, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms).unref())]);

/**
 * Runs a plan's tests on workerbox in `variant`; `expected` (workerd's test names, when known)
 * fills in tests of a service whose worker would not start.
 */
export async function runWorkerbox(plan, variant, { timeoutMs = 30000, verbose = false, expected = [] } = {}) {
  const api = require("../../index.js");
  const { createWorker, dispatch, service, durableObject, kv, storage, queue, memoryCache, unsafeEval, analyticsEngine } = api;
  const result = { tests: {}, errors: {}, note: null };
  const workers = new Map();
  const patches = [];
  const logs = [];
  const onLog = (level, message) => {
    logs.push(`[${level}] ${message}`);
    if (verbose) process.stderr.write(`  [worker ${level}] ${message}\n`);
  };
  const startErrors = new Map();
  // The config's tcp sockets: a free loopback port each, which every worker's connect() reaches
  // by the socket's address (connectOverrides); the listeners start once the workers exist.
  const reserved = [];
  const connectOverrides = {};
  try {
    for (const t of plan.tcp ?? []) {
      const port = await reservePort();
      reserved.push(port);
      for (const from of askedAddresses(t.address)) connectOverrides[from] = `127.0.0.1:${port.port}`;
    }
    for (const w of plan.workers) {
      const bindings = {};
      // A service binding to one of the config's workers, filled in once every worker exists
      // (services may name each other or themselves).
      const serviceTo = (b) => {
        const def = service({ fetch: () => new Response("service not started", { status: 503 }) }, b.props !== undefined ? { props: b.props } : {});
        patches.push(() => {
          const target = workers.get(b.service);
          if (!target) return;
          def.handler = target;
          if (b.entrypoint !== undefined && b.entrypoint !== "default") def.entrypoint = b.entrypoint;
        });
        return def;
      };
      for (const b of w.bindings) {
        if (b.kind === "var") bindings[b.name] = b.value;
        else if (b.kind === "service") bindings[b.name] = serviceTo(b);
        else if (b.kind === "kv" && b.service) bindings[b.name] = kv({ service: serviceTo(b) });
        else if (b.kind === "queue" && b.service) bindings[b.name] = queue({ service: serviceTo(b) });
        else if (b.kind === "r2" && b.service) bindings[b.name] = storage({ service: serviceTo(b), bucket: b.bucket });
        else if (b.kind === "analyticsEngine") bindings[b.name] = analyticsEngine({ dataset: b.dataset, service: serviceTo(b) });
        else if (b.kind === "network") {
          bindings[b.name] = service(async (request) => {
            if (!b.address) return fetch(request);
            const url = new URL(request.url);
            url.host = b.address;
            return fetch(new Request(url, request));
          });
        } else if (b.kind === "durableObject") {
          const own = b.service === null || b.service === w.name;
          const home = own ? w : plan.workers.find((x) => x.name === b.service);
          const ns = durableObject(b.className, { sql: home?.doClasses[b.className]?.sql ?? false });
          if (!own) patches.push(() => { ns.worker = workers.get(b.service); });
          bindings[b.name] = ns;
        } else if (b.kind === "kv") bindings[b.name] = kv();
        else if (b.kind === "r2") bindings[b.name] = storage();
        else if (b.kind === "queue") bindings[b.name] = queue();
        else if (b.kind === "memoryCache") bindings[b.name] = memoryCache({ limits: b.limits, id: b.id });
        else if (b.kind === "unsafeEval") bindings[b.name] = unsafeEval();
        else if (b.kind === "workerLoader") bindings[b.name] = api.workerLoader(b.id === undefined ? {} : { id: b.id });
      }
      const modules = {};
      for (const m of w.modules) modules[m.name] = m.namedExports === undefined ? { type: m.kind, content: m.content } : { type: m.kind, content: m.content, namedExports: m.namedExports };
      const options = {
        script: harness(w.modules[0].name),
        filename: w.flags.includes("new_module_registry") ? HARNESS_NEW_REGISTRY : HARNESS,
        format: "module",
        modules,
        // The harness wraps the config's main module, which stays main (import.meta.main).
        mainModule: w.modules[0].name,
        bindings,
        onLog,
        compatibilityFlags: w.flags,
        unsafeExperimental: true,
        unsafeExposeGc: w.exposeGc === true,
        // `workerd test` sets no isolate memory limit (production's 128 MB is not enforced there):
        // a generous one here, so that tests making a 128 MiB file or large transcodes run.
        limits: { wallMs: timeoutMs, cpuMs: timeoutMs, waitUntilMs: 5000, memoryMb: 1024 },
        pool: false,
        ...(Object.keys(connectOverrides).length > 0 ? { connectOverrides } : {}),
      };
      if (VARIANTS[variant].workerboxDate) options.compatibilityDate = VARIANTS[variant].workerboxDate;
      // A global outbound naming an entrypoint (of this worker or another): a service binding to it.
      if (w.cacheService) options.cache = { service: serviceTo(w.cacheService) };
      if (w.tails?.length) options.tailConsumers = w.tails.map(serviceTo);
      if (w.streamingTails?.length) options.streamingTails = w.streamingTails.map(serviceTo);
      if (w.outbound && w.outboundEntrypoint !== undefined) options.outbound = serviceTo({ service: w.outbound, entrypoint: w.outboundEntrypoint });
      else if (w.outbound) options.outbound = (request) => dispatch(workers.get(w.outbound), request);
      try {
        workers.set(w.name, await withTimeout(createWorker(options), timeoutMs, "createWorker"));
      } catch (e) {
        startErrors.set(w.name, `worker did not start: ${e?.message ?? e}`);
      }
    }
    for (const patch of patches) patch();
    for (const [i, t] of (plan.tcp ?? []).entries()) {
      const worker = workers.get(t.service);
      const { port, release } = reserved[i];
      await release();
      if (!worker) continue;
      const onError = (e) => onLog("error", `tcp socket ${t.address}: connect handler failed: ${e?.stack ?? e}`);
      await worker.listenTcp({ port, host: "127.0.0.1", entrypoint: t.entrypoint, onError });
    }
    for (const w of plan.workers) {
      const worker = workers.get(w.name);
      if (!worker) {
        const prefix = w.name;
        for (const name of expected.filter((n) => n === prefix || n.startsWith(prefix + ":"))) {
          result.tests[name] = "fail";
          result.errors[name] = startErrors.get(w.name);
        }
        if (!result.note) result.note = `${w.name}: ${startErrors.get(w.name)}`;
        continue;
      }
      const call = async (name) => {
        const response = await withTimeout(dispatch(worker, { url: "http://workerd-test/", headers: { [MARK]: name } }), timeoutMs + 1000, "test");
        return { ok: response.status === 200, text: await response.text() };
      };
      let names;
      try {
        names = JSON.parse((await call("?")).text).sort();
      } catch (e) {
        result.note ??= `${w.name}: could not list tests: ${e?.message ?? e}`;
        continue;
      }
      for (const exp of names) {
        const name = exp === "default" ? w.name : `${w.name}:${exp}`;
        try {
          const { ok, text } = await call(exp);
          result.tests[name] = ok ? "pass" : "fail";
          if (!ok) result.errors[name] = text;
        } catch (e) {
          result.tests[name] = "fail";
          result.errors[name] = `${e?.code ?? ""} ${e?.message ?? e}`.trim();
        }
      }
    }
  } finally {
    // Disposing a worker closes its listeners.
    await Promise.all([...workers.values()].map((w) => w.dispose().catch(() => {})));
    await Promise.all(reserved.map((r) => r.release()));
  }
  return result;
}

/** Runs `workerd test` on a config in `variant` and parses its per-test lines. */
export function runWorkerd(binary, file, cwd, variant, { timeoutMs = 120000 } = {}) {
  return new Promise((resolve) => {
    const args = ["test", "--experimental", `--compat-date=${VARIANTS[variant].workerdDate}`, file];
    const child = spawn(binary, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const tests = {};
      for (const m of out.matchAll(/\[ (PASS|FAIL) \] (\S+)/g)) tests[m[2]] = m[1] === "PASS" ? "pass" : "fail";
      for (const m of out.matchAll(/\[ TEST \] (\S+)/g)) tests[m[1]] ??= "fail"; // started, never finished
      let note = null;
      if (signal) note = `workerd killed (${signal}) after ${timeoutMs} ms`;
      else if (Object.keys(tests).length === 0) note = (out.match(/(error|fatal)[^\n]*/i)?.[0] ?? `exit ${code}, no tests`).slice(0, 300);
      resolve({ tests, errors: {}, note, output: out });
    });
  });
}
