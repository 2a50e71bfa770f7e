// Benchmark: workerbox beside Miniflare, same machine, same run, same worker script.
//   create-worker time (script → ready), sequential dispatch latency (p50/p99),
//   and 64-way concurrent throughput.
// Prints one JSON object on stdout (progress goes to stderr).
//   node bench/dispatch.mjs [--quick] [--only=workerbox|miniflare]
import os from "node:os";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { createWorker, dispatch } = require("../index.js");

const args = new Set(process.argv.slice(2));
const quick = args.has("--quick");
const only = [...args].find((a) => a.startsWith("--only="))?.slice("--only=".length);

const SCRIPT = `export default { fetch(request) { return new Response("hello " + new URL(request.url).pathname) } }`;
const COUNTS = quick
  ? { wbCreate: 50, mfCreate: 5, wbSeq: 500, mfSeq: 100, warmup: 50, concurrentMs: 500 }
  : { wbCreate: 200, mfCreate: 20, wbSeq: 5000, mfSeq: 1000, warmup: 200, concurrentMs: 2000 };
const CONCURRENCY = 64;

const log = (...parts) => console.error("[bench]", ...parts);

function stats(samples, scale, unit) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (n) => Math.round(n * scale * 100) / 100;
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { unit, n: sorted.length, mean: round(mean), p50: round(at(0.5)), p99: round(at(0.99)), min: round(sorted[0]) };
}

/** Runs one engine's three measurements. `engine` abstracts create / fetch / dispose. */
async function measure(engine, counts) {
  const create = [];
  for (let i = 0; i < counts.create; i++) {
    const start = performance.now();
    const instance = await engine.create();
    create.push(performance.now() - start);
    await engine.dispose(instance);
  }
  log(engine.name, "create done");

  const instance = await engine.create();
  try {
    for (let i = 0; i < counts.warmup; i++) await engine.fetch(instance, `http://localhost/w${i}`);
    const latency = [];
    for (let i = 0; i < counts.seq; i++) {
      const start = performance.now();
      const text = await engine.fetch(instance, `http://localhost/s${i}`);
      latency.push(performance.now() - start);
      if (text !== `hello /s${i}`) throw new Error(`${engine.name}: unexpected body ${JSON.stringify(text)}`);
    }
    log(engine.name, "sequential done");

    let completed = 0;
    const deadline = performance.now() + counts.concurrentMs;
    const started = performance.now();
    const lane = async (lane) => {
      for (let i = 0; performance.now() < deadline; i++) {
        await engine.fetch(instance, `http://localhost/c${lane}-${i}`);
        completed++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => lane(i)));
    const seconds = (performance.now() - started) / 1000;
    log(engine.name, "concurrent done");

    return {
      createWorker: stats(create, 1, "ms"),
      sequentialDispatch: stats(latency, 1000, "us"),
      concurrent64: { unit: "req/s", requests: completed, seconds: Math.round(seconds * 100) / 100, throughput: Math.round(completed / seconds) },
    };
  } finally {
    await engine.dispose(instance);
  }
}

const workerbox = {
  name: "workerbox",
  create: () => createWorker({ script: SCRIPT, filename: "bench.js", onLog() {} }),
  fetch: async (worker, url) => (await dispatch(worker, url)).text(),
  dispose: (worker) => worker.dispose(),
};

function miniflareEngine() {
  const { Miniflare } = require("miniflare");
  return {
    name: "miniflare",
    create: async () => {
      const mf = new Miniflare({ modules: true, script: SCRIPT, compatibilityDate: "2024-09-23" });
      await mf.ready;
      return mf;
    },
    fetch: async (mf, url) => (await mf.dispatchFetch(url)).text(),
    dispose: (mf) => mf.dispose(),
  };
}

const result = {
  machine: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, platform: `${process.platform}-${process.arch}` },
  quick,
};

if (only !== "miniflare") {
  result.workerbox = await measure(workerbox, { create: COUNTS.wbCreate, seq: COUNTS.wbSeq, warmup: COUNTS.warmup, concurrentMs: COUNTS.concurrentMs });
}
if (only !== "workerbox") {
  try {
    let miniflare;
    try {
      miniflare = miniflareEngine();
    } catch (error) {
      throw new Error(`miniflare is not installed (npm ci installs it as a devDependency): ${error.message}`);
    }
    result.miniflare = await measure(miniflare, { create: COUNTS.mfCreate, seq: COUNTS.mfSeq, warmup: COUNTS.warmup, concurrentMs: COUNTS.concurrentMs });
  } catch (error) {
    result.miniflare = { error: String(error && error.message) };
  }
}

if (result.workerbox && result.miniflare && !result.miniflare.error) {
  const wb = result.workerbox;
  const mf = result.miniflare;
  const ratio = (a, b) => Math.round((a / b) * 10) / 10;
  result.ratio = {
    note: "how many times better workerbox is (miniflare / workerbox; throughput workerbox / miniflare)",
    createWorkerP50: ratio(mf.createWorker.p50, wb.createWorker.p50),
    dispatchP50: ratio(mf.sequentialDispatch.p50, wb.sequentialDispatch.p50),
    dispatchP99: ratio(mf.sequentialDispatch.p99, wb.sequentialDispatch.p99),
    throughput64: ratio(wb.concurrent64.throughput, mf.concurrent64.throughput),
  };
}

console.log(JSON.stringify(result, null, 2));
