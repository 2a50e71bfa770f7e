// bench/dispatch.mjs: workerbox beside Miniflare, in one run on one machine, same worker script.
//
// For each engine it measures:
//   1. createWorker: time from "create" to ready, repeated (each instance disposed); ms.
//        workerbox: await createWorker({ script, filename })
//        miniflare: new Miniflare({ modules: true, script }) + await mf.ready
//      With the tiny SCRIPT below (createWorkerMs, the headline number) and with BIG_SCRIPT, the
//      same handler plus ~170 KB of generated functions and classes it references, so V8 has
//      real work to compile:
//        workerbox createColdMs    codeCache: false, and a script unique per iteration
//        workerbox createCachedMs  one script, code cache on (default), after one warm-up create
//        workerbox createPooledMs  only if the build has the `pool` option: pool on, one script,
//                                  repeated create + dispose, the first create excluded
//        miniflare createBigMs     BIG_SCRIPT; Miniflare has no user-facing code cache, so its
//                                  one number stands beside cold, cached and pooled alike
//      When the build has `pool`, every workerbox create but createPooledMs passes pool: false.
//   2. sequential: one warm instance, 200 warm-up requests, then N requests one at a time,
//      body read and checked; microseconds per request.
//   3. concurrent64: 64 requests kept in flight for a fixed time (or a fixed count); req/s.
//
// The third engine, edge-runtime (Vercel's, a devDependency), runs the same handler as a
// service worker in a node:vm context on Node's own thread: no isolate, no sandbox, no thread
// hop, so it is the floor an in-process engine is measured against.
//
// Output: one JSON object on stdout ({ machine, workerbox, miniflare, "edge-runtime", ratio,
// ratioEdge }); progress on stderr. ratio = how many times better workerbox is: miniflare /
// workerbox for times, workerbox / miniflare for throughput (> 1 means workerbox wins); ratioEdge
// the same against edge-runtime. An engine that fails reports { error }.
//
//   node bench/dispatch.mjs [--quick] [--only=workerbox|miniflare|edge-runtime] [--concurrent-count=N]
//     --quick               small counts, whole run well under 60 s
//     --concurrent-count=N  phase 3 stops after N requests instead of after a fixed time
import os from "node:os";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const flag = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const quick = process.argv.includes("--quick");
const only = flag("only");
const ENGINES = ["workerbox", "miniflare", "edge-runtime"];
if (only && !ENGINES.includes(only)) throw new Error(`--only must be one of ${ENGINES.join(", ")}, got ${only}`);
const concurrentCount = flag("concurrent-count") ? Number(flag("concurrent-count")) : Infinity;

// Per-engine counts: Miniflare starts a workerd process per instance, so it gets fewer samples.
const COUNTS = quick
  ? { workerbox: { create: 20, warmup: 50, seq: 300 }, miniflare: { create: 3, warmup: 50, seq: 100 }, "edge-runtime": { create: 20, warmup: 50, seq: 300 }, concurrentMs: 500 }
  : { workerbox: { create: 200, warmup: 200, seq: 2000 }, miniflare: { create: 20, warmup: 200, seq: 500 }, "edge-runtime": { create: 200, warmup: 200, seq: 2000 }, concurrentMs: 2000 };
const CONCURRENCY = 64;
const SCRIPT = `export default { fetch(req) { return new Response("hello " + new URL(req.url).pathname) } }`;
const BIG_SCRIPT = bigScript();
const URL_ = "http://localhost/x";
const EXPECTED = "hello /x";

// Keep stdout for the JSON alone: anything logged during the run goes to stderr.
const printJson = (value) => process.stdout.write(JSON.stringify(value, null, 2) + "\n");
console.log = console.info = console.debug = console.error;
const progress = (...parts) => console.error("[bench]", ...parts);

const round = (n, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
function summary(samplesMs, scale) {
  const s = [...samplesMs].sort((a, b) => a - b);
  const pct = (q) => s[Math.max(0, Math.ceil(q * s.length) - 1)] * scale; // nearest rank
  const mean = (s.reduce((a, b) => a + b, 0) / s.length) * scale;
  return { n: s.length, mean: round(mean), p50: round(pct(0.5)), p99: round(pct(0.99)) };
}

/**
 * The tiny handler plus a generated library of plausible code it reaches: FUNCTIONS small
 * functions and CLASSES small classes, registered in tables the handler looks up, so nothing is
 * dead code. `tag` goes in a leading comment to make the source unique.
 */
function bigScript(tag = "") {
  const FUNCTIONS = 160;
  const CLASSES = 70;
  const out = [`// generated benchmark library${tag && ` (${tag})`}`];
  for (let i = 0; i < FUNCTIONS; i++) {
    out.push(`function normalize${i}(value, options = {}) {
  const prefix = options.prefix ?? "n${i}";
  const text = typeof value === "string" ? value : String(value);
  const trimmed = text.trim().toLowerCase();
  let hash = ${(i * 2654435761) % 1000003};
  for (let j = 0; j < trimmed.length; j++) hash = (hash * 31 + trimmed.charCodeAt(j)) | 0;
  switch (hash & 3) {
    case 0: return { key: \`\${prefix}:\${trimmed}\`, hash, kind: "even", length: trimmed.length };
    case 1: return { key: prefix + "/" + trimmed, hash, kind: "odd", length: trimmed.length };
    default: return { key: [prefix, trimmed].join("."), hash, kind: "other", length: trimmed.length, parts: trimmed.split("/").filter(Boolean) };
  }
}`);
  }
  for (let i = 0; i < CLASSES; i++) {
    out.push(`class Model${i} {
  #cache = new Map();
  constructor(data = {}) {
    this.id = data.id ?? ${i};
    this.name = data.name ?? "model${i}";
    this.tags = Array.isArray(data.tags) ? data.tags.slice() : ["t${i % 7}"];
    this.created = data.created ?? 0;
  }
  get label() { return \`Model${i}(\${this.name})\`; }
  validate() {
    if (typeof this.name !== "string" || this.name.length === 0) throw new TypeError("Model${i}: name is required");
    return this.tags.every((tag) => typeof tag === "string" && tag.length < 64);
  }
  lookup(key) {
    if (!this.#cache.has(key)) this.#cache.set(key, normalize${i % FUNCTIONS}(key, { prefix: "m${i}" }));
    return this.#cache.get(key);
  }
  toJSON() { return { type: "Model${i}", id: this.id, name: this.name, tags: this.tags, created: this.created }; }
  static from(json) { return new Model${i}(typeof json === "string" ? JSON.parse(json) : json); }
}`);
  }
  out.push(`const NORMALIZERS = [${Array.from({ length: FUNCTIONS }, (_, i) => `normalize${i}`).join(", ")}];`);
  out.push(`const MODELS = [${Array.from({ length: CLASSES }, (_, i) => `Model${i}`).join(", ")}];`);
  out.push(`export default { fetch(req) {
  const path = new URL(req.url).pathname;
  const normalized = NORMALIZERS[path.length % NORMALIZERS.length](path);
  const model = MODELS[normalized.length % MODELS.length].from({ name: path });
  if (!model.validate() || model.lookup(path).length !== normalized.length) throw new Error("bench library broke");
  return new Response("hello " + path);
} }`);
  return out.join("\n");
}

// An engine: create() -> instance, fetch(instance) -> body text, dispose(instance), and
// createSeries: more create-time series, { script(i), options, warmup } each.
const engines = {
  async workerbox() {
    const { createWorker, dispatch, codeCacheStats } = require("..");
    // Warm-pool detection. A later build may add createWorker's `pool` option (default true: a
    // spare isolate per known script, so a repeat create is a hand-off). This build rejects
    // unknown options with a TypeError saying "unknown option"; if so, run without it and skip
    // createPooledMs. If the option exists, every series but createPooledMs passes pool: false,
    // so `create`, cold and cached stay real creates.
    let hasPool = true;
    try {
      await (await createWorker({ script: SCRIPT, pool: false, onLog() {} })).dispose();
    } catch (error) {
      if (!String(error?.message).includes("unknown option")) throw error;
      hasPool = false;
    }
    const noPool = hasPool ? { pool: false } : {};
    const create = (script, options) => createWorker({ script, filename: "bench.js", ...options });
    return {
      hasPool,
      codeCacheStats,
      create: () => create(SCRIPT, noPool),
      createSeries: {
        createColdMs: { script: (i) => bigScript(`cold ${i} ${process.pid}`), options: { codeCache: false, ...noPool }, warmup: 0 },
        createCachedMs: { script: () => BIG_SCRIPT, options: noPool, warmup: 1 },
        ...(hasPool && { createPooledMs: { script: () => BIG_SCRIPT, options: { pool: true }, warmup: 1 } }),
      },
      createWith: create,
      // A URL string, as the other engines are given (no Node Request to build first).
      fetch: async (worker) => (await dispatch(worker, URL_)).text(),
      dispose: (worker) => worker.dispose(),
    };
  },
  async miniflare() {
    const { Miniflare } = require("miniflare");
    const create = async (script) => {
      const mf = new Miniflare({
        modules: true,
        script,
        compatibilityDate: "2025-01-01",
        // workerd's own stdout/stderr would otherwise go to our stdout. (Forward chunks
        // rather than pipe(): 20+ pipes into process.stderr trip MaxListenersExceededWarning.)
        handleRuntimeStdio: (out, err) => {
          for (const stream of [out, err]) stream.on("data", (chunk) => process.stderr.write(chunk));
        },
      });
      await mf.ready;
      return mf;
    };
    return {
      create: () => create(SCRIPT),
      // No user-facing code cache: one big-script number, shown beside cold, cached and pooled.
      createSeries: { createBigMs: { script: () => BIG_SCRIPT, options: {}, warmup: 0 } },
      createWith: create,
      fetch: async (mf) => (await mf.dispatchFetch(URL_)).text(),
      dispose: (mf) => mf.dispose(),
    };
  },
};

/** A module worker's source as a service worker (edge-runtime runs only that format). */
function asServiceWorker(script) {
  const at = script.lastIndexOf("export default {");
  if (at < 0) throw new Error("asServiceWorker: no `export default {` in the script");
  return `${script.slice(0, at)}const handler = {${script.slice(at + "export default {".length)}
addEventListener("fetch", (event) => event.respondWith(handler.fetch(event.request)));`;
}
engines["edge-runtime"] = async function edgeRuntime() {
  const { EdgeRuntime } = require("edge-runtime");
  const create = async (script) => new EdgeRuntime({ initialCode: asServiceWorker(script) });
  return {
    create: () => create(SCRIPT),
    // A node:vm context compiles the script anew each time: one big-script number, like Miniflare's.
    createSeries: { createBigMs: { script: () => BIG_SCRIPT, options: {}, warmup: 0 } },
    createWith: create,
    fetch: async (runtime) => (await runtime.dispatchFetch(URL_)).text(),
    dispose: async () => {},
  };
};

async function measure(name) {
  const engine = await engines[name]();
  const counts = COUNTS[name];
  const result = {};
  if (engine.hasPool !== undefined) result.poolOption = engine.hasPool;

  // 1. create → ready, each instance disposed before the next.
  const create = [];
  for (let i = 0; i < counts.create; i++) {
    const start = performance.now();
    const instance = await engine.create();
    create.push(performance.now() - start);
    await engine.dispose(instance);
  }
  result.createWorkerMs = summary(create, 1);
  progress(name, `createWorker x${counts.create} done`);

  // 1b. the same with the big script; the handler's answer is checked outside the timing.
  for (const [key, series] of Object.entries(engine.createSeries)) {
    const times = [];
    const statsBefore = engine.codeCacheStats?.();
    for (let i = -series.warmup; i < counts.create; i++) {
      const script = series.script(i);
      const start = performance.now();
      const instance = await engine.createWith(script, series.options);
      if (i >= 0) times.push(performance.now() - start);
      try {
        const body = await engine.fetch(instance);
        if (body !== EXPECTED) throw new Error(`${key}: unexpected body ${JSON.stringify(body)}`);
      } finally {
        await engine.dispose(instance);
      }
    }
    result[key] = { scriptKb: round(BIG_SCRIPT.length / 1024), ...summary(times, 1) };
    if (statsBefore) {
      const after = engine.codeCacheStats();
      result[key].codeCache = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - statsBefore[k]]));
    }
    progress(name, `${key} x${counts.create} done`);
  }

  const instance = await engine.create();
  try {
    const fetchChecked = async () => {
      const body = await engine.fetch(instance);
      if (body !== EXPECTED) throw new Error(`unexpected body ${JSON.stringify(body)}`);
    };

    // 2. sequential latency on a warm instance.
    for (let i = 0; i < counts.warmup; i++) await fetchChecked();
    const seq = [];
    for (let i = 0; i < counts.seq; i++) {
      const start = performance.now();
      await fetchChecked();
      seq.push(performance.now() - start);
    }
    result.sequentialUs = summary(seq, 1000);
    progress(name, `sequential x${counts.seq} done`);

    // 3. 64 lanes, each issuing its next request as soon as the previous one finishes.
    let started = 0;
    let completed = 0;
    const t0 = performance.now();
    const deadline = concurrentCount === Infinity ? t0 + COUNTS.concurrentMs : Infinity;
    const lane = async () => {
      while (performance.now() < deadline && started < concurrentCount) {
        started++;
        await fetchChecked();
        completed++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    const seconds = (performance.now() - t0) / 1000;
    progress(name, `concurrent64: ${completed} requests in ${seconds.toFixed(2)} s`);
    result.concurrent64 = { requests: completed, seconds: round(seconds, 3), rps: Math.round(completed / seconds) };
    return result;
  } finally {
    await engine.dispose(instance);
  }
}

const result = { machine: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, platform: `${process.platform}-${process.arch}` }, quick };
for (const name of ENGINES) {
  if (only && only !== name) continue;
  progress(`${name}…`);
  try {
    result[name] = await measure(name);
  } catch (error) {
    progress(name, "failed:", error);
    result[name] = { error: String(error?.message ?? error) };
  }
}

/**
 * How many times better workerbox is than `peer`: peer / workerbox for times, workerbox / peer
 * for throughput; null unless both ran. Every peer has one big-script number (createBigMs),
 * set against each workerbox variant.
 */
function ratiosAgainst(peer) {
  const wb = result.workerbox;
  if (!wb || !peer || wb.error || peer.error) return null;
  const r = (a, b) => round(a / b, 2);
  return {
    createWorkerMean: r(peer.createWorkerMs.mean, wb.createWorkerMs.mean),
    createWorkerP50: r(peer.createWorkerMs.p50, wb.createWorkerMs.p50),
    createWorkerP99: r(peer.createWorkerMs.p99, wb.createWorkerMs.p99),
    createColdP50: r(peer.createBigMs.p50, wb.createColdMs.p50),
    createCachedP50: r(peer.createBigMs.p50, wb.createCachedMs.p50),
    ...(wb.createPooledMs && { createPooledP50: r(peer.createBigMs.p50, wb.createPooledMs.p50) }),
    sequentialP50: r(peer.sequentialUs.p50, wb.sequentialUs.p50),
    sequentialP99: r(peer.sequentialUs.p99, wb.sequentialUs.p99),
    sequentialMean: r(peer.sequentialUs.mean, wb.sequentialUs.mean),
    concurrent64Rps: r(wb.concurrent64.rps, peer.concurrent64.rps),
  };
}
result.ratio = ratiosAgainst(result.miniflare);
result.ratioEdge = ratiosAgainst(result["edge-runtime"]);

printJson(result);
