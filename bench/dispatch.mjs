// bench/dispatch.mjs: workerbox beside Miniflare, in one run on one machine, same worker script.
//
// For each engine it measures:
//   1. createWorker: time from "create" to ready, repeated (each instance disposed); ms.
//        workerbox: await createWorker({ script, filename })
//        miniflare: new Miniflare({ modules: true, script }) + await mf.ready
//   2. sequential: one warm instance, 200 warm-up requests, then N requests one at a time,
//      body read and checked; microseconds per request.
//   3. concurrent64: 64 requests kept in flight for a fixed time (or a fixed count); req/s.
//
// Output: one JSON object on stdout ({ machine, workerbox, miniflare, ratio }); progress on stderr.
// ratio = how many times better workerbox is: miniflare / workerbox for times, workerbox /
// miniflare for throughput (> 1 means workerbox wins). An engine that fails reports { error }.
//
//   node bench/dispatch.mjs [--quick] [--only=workerbox|miniflare] [--concurrent-count=N]
//     --quick               small counts, whole run well under 60 s
//     --concurrent-count=N  phase 3 stops after N requests instead of after a fixed time
import os from "node:os";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const flag = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const quick = process.argv.includes("--quick");
const only = flag("only");
if (only && only !== "workerbox" && only !== "miniflare") throw new Error(`--only must be workerbox or miniflare, got ${only}`);
const concurrentCount = flag("concurrent-count") ? Number(flag("concurrent-count")) : Infinity;

// Per-engine counts: Miniflare starts a workerd process per instance, so it gets fewer samples.
const COUNTS = quick
  ? { workerbox: { create: 20, warmup: 50, seq: 300 }, miniflare: { create: 3, warmup: 50, seq: 100 }, concurrentMs: 500 }
  : { workerbox: { create: 200, warmup: 200, seq: 2000 }, miniflare: { create: 20, warmup: 200, seq: 500 }, concurrentMs: 2000 };
const CONCURRENCY = 64;
const SCRIPT = `export default { fetch(req) { return new Response("hello " + new URL(req.url).pathname) } }`;
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

// An engine: create() -> instance, fetch(instance) -> body text, dispose(instance).
const engines = {
  workerbox() {
    const { createWorker, dispatch } = require("..");
    return {
      create: () => createWorker({ script: SCRIPT, filename: "bench.js" }),
      fetch: async (worker) => (await dispatch(worker, new Request(URL_))).text(),
      dispose: (worker) => worker.dispose(),
    };
  },
  miniflare() {
    const { Miniflare } = require("miniflare");
    return {
      create: async () => {
        const mf = new Miniflare({
          modules: true,
          script: SCRIPT,
          compatibilityDate: "2025-01-01",
          // workerd's own stdout/stderr would otherwise go to our stdout. (Forward chunks
          // rather than pipe(): 20+ pipes into process.stderr trip MaxListenersExceededWarning.)
          handleRuntimeStdio: (out, err) => {
            for (const stream of [out, err]) stream.on("data", (chunk) => process.stderr.write(chunk));
          },
        });
        await mf.ready;
        return mf;
      },
      fetch: async (mf) => (await mf.dispatchFetch(URL_)).text(),
      dispose: (mf) => mf.dispose(),
    };
  },
};

async function measure(name) {
  const engine = engines[name]();
  const counts = COUNTS[name];

  // 1. create → ready, each instance disposed before the next.
  const create = [];
  for (let i = 0; i < counts.create; i++) {
    const start = performance.now();
    const instance = await engine.create();
    create.push(performance.now() - start);
    await engine.dispose(instance);
  }
  progress(name, `createWorker x${counts.create} done`);

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

    return {
      createWorkerMs: summary(create, 1),
      sequentialUs: summary(seq, 1000),
      concurrent64: { requests: completed, seconds: round(seconds, 3), rps: Math.round(completed / seconds) },
    };
  } finally {
    await engine.dispose(instance);
  }
}

const result = { machine: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, platform: `${process.platform}-${process.arch}` } };
for (const name of ["workerbox", "miniflare"]) {
  if (only && only !== name) continue;
  progress(`${name}…`);
  try {
    result[name] = await measure(name);
  } catch (error) {
    progress(name, "failed:", error);
    result[name] = { error: String(error?.message ?? error) };
  }
}

const wb = result.workerbox;
const mf = result.miniflare;
if (wb && mf && !wb.error && !mf.error) {
  const r = (a, b) => round(a / b, 2);
  result.ratio = {
    createWorkerMean: r(mf.createWorkerMs.mean, wb.createWorkerMs.mean),
    createWorkerP50: r(mf.createWorkerMs.p50, wb.createWorkerMs.p50),
    createWorkerP99: r(mf.createWorkerMs.p99, wb.createWorkerMs.p99),
    sequentialP50: r(mf.sequentialUs.p50, wb.sequentialUs.p50),
    sequentialP99: r(mf.sequentialUs.p99, wb.sequentialUs.p99),
    sequentialMean: r(mf.sequentialUs.mean, wb.sequentialUs.mean),
    concurrent64Rps: r(wb.concurrent64.rps, mf.concurrent64.rps),
  };
} else {
  result.ratio = null; // needs both engines to have run
}

printJson(result);
