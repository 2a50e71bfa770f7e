// Benchmark: many live workers in one process. Memory per idle worker (RSS growth over N idle
// workers, counting Miniflare's workerd processes too) and N live workers each answering a
// request, workerbox beside Miniflare (one Miniflare instance holding N workers), same run.
// workerbox's creates are timed one after another (all of them, the 10th and the last), and
// then the N workers are made again, 8 creates at a time; last, one after another again with the
// host's memory backed first (a diagnostic, see workerboxBackedMemory).
// Prints one JSON object on stdout; progress on stderr.
//   node bench/workers.mjs [--quick] [--only=workerbox|miniflare]
import os from "node:os";
import { createRequire } from "node:module";
import { spawnSync } from "node:child_process";
import { treeRss } from "./lib.mjs";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const IDLE = quick ? 50 : 200;
const LIVE = quick ? 200 : 1000;
const PARALLEL = 8;
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

const script = (i) => `const id = ${i};\nexport default { fetch(request) { return new Response("worker " + id); } }`;

const mb = (bytes) => Math.round((bytes / 2 ** 20) * 100) / 100;
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** The k-th create as the median of the ten around it (one create alone is too noisy on a shared machine). */
function medianAround(values, k) {
  const window = values.slice(Math.max(0, k - 5), k + 5).sort((a, b) => a - b);
  return Math.round(window[Math.floor(window.length / 2)] * 100) / 100;
}

async function workerbox() {
  const { createWorker, dispatch } = require("..");
  // One worker first, so process-wide set-up (V8, the startup snapshot) is not counted.
  const first = await createWorker({ script: script(-1), onLog() {} });
  await dispatch(first, "http://localhost/");
  await settle();
  const base = treeRss();
  const workers = [];
  // Every create is timed (all LIVE of them, the IDLE first ones included), to see whether
  // creating gets slower as live workers pile up.
  const createMs = [];
  // What each create cost the kernel: page faults (first touches of new memory) and kernel CPU
  // time, process-wide, to tell the engine's work apart from the cost of new pages on this host.
  const createFaults = [];
  const createKernelMs = [];
  const createUserMs = [];
  const timedCreate = async (i) => {
    const before = process.resourceUsage();
    const start = performance.now();
    workers.push(await createWorker({ script: script(i), onLog() {} }));
    createMs.push(performance.now() - start);
    const after = process.resourceUsage();
    createFaults.push(after.minorPageFault - before.minorPageFault);
    createKernelMs.push((after.systemCPUTime - before.systemCPUTime) / 1000);
    createUserMs.push((after.userCPUTime - before.userCPUTime) / 1000);
  };
  for (let i = 0; i < IDLE; i++) await timedCreate(i);
  await settle();
  const idle = { workers: IDLE, rssGrowthMb: mb(treeRss() - base), perWorkerMb: mb((treeRss() - base) / IDLE) };
  progress("workerbox idle done");
  const start = performance.now();
  for (let i = IDLE; i < LIVE; i++) await timedCreate(i);
  const created = performance.now() - start;
  const answerStart = performance.now();
  const answers = await Promise.all(workers.map((w) => dispatch(w, "http://localhost/").then((r) => r.text())));
  const answered = performance.now() - answerStart;
  answers.forEach((text, i) => {
    if (text !== `worker ${i}`) throw new Error(`workerbox: worker ${i} answered ${JSON.stringify(text)}`);
  });
  const around = (k, values = createMs) => medianAround(values, k);
  // Page faults, kernel time and user time per create, and kernel µs per fault, around the 10th
  // and the last. User time is the engine's own work; kernel time is mostly those faults.
  if (process.platform === "win32") console.error("workers: page faults per create are unavailable on Windows");
  const kernel = (k) => {
    // Windows' libuv counts no minor page faults (always 0): null there, not a false zero.
    const faults = process.platform === "win32" ? null : around(k, createFaults);
    const kernelMs = around(k, createKernelMs);
    return { faults, kernelMs, userMs: around(k, createUserMs), kernelUsPerFault: faults > 0 ? Math.round((kernelMs * 1000 / faults) * 100) / 100 : null };
  };
  const creates = { allMs: Math.round(createMs.reduce((a, b) => a + b, 0)), tenthMs: around(9), lastMs: around(LIVE - 6), tenthKernel: kernel(9), lastKernel: kernel(LIVE - 6) };
  const live = { workers: LIVE, rssGrowthMb: mb(treeRss() - base), perWorkerMb: mb((treeRss() - base) / LIVE), createRestMs: Math.round(created), creates, oneRequestEachMs: Math.round(answered) };
  await Promise.all(workers.map((w) => w.dispose()));
  // The same number of workers again, created PARALLEL at a time (as a test runner or a host
  // starting many tenants would), each answering one request once all are up.
  await settle();
  const parallelStart = performance.now();
  const again = [];
  let next = 0;
  const lane = async () => {
    while (next < LIVE) {
      const i = next++;
      again[i] = await createWorker({ script: script(i), onLog() {} });
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  creates.parallel = { at: PARALLEL, allMs: Math.round(performance.now() - parallelStart) };
  const texts = await Promise.all(again.map((w) => dispatch(w, "http://localhost/").then((r) => r.text())));
  texts.forEach((text, i) => {
    if (text !== `worker ${i}`) throw new Error(`workerbox: worker ${i} (created in parallel) answered ${JSON.stringify(text)}`);
  });
  await Promise.all([first, ...again].map((w) => w.dispose()));
  // What stays resident once every worker has ended (a test run's process after its last file,
  // a host after its tenants left), over the RSS with one worker live, a second later: the
  // engine hands freed memory back a quarter second after the last worker ends.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const ended = { rssOverOneWorkerMb: mb(treeRss() - base) };
  progress("workerbox live done");
  return { idle, live, ended };
}

async function miniflare() {
  const { Miniflare } = require("miniflare");
  const make = (n) => new Miniflare({ workers: Array.from({ length: n }, (_, i) => ({ name: `w${i}`, modules: true, script: script(i), compatibilityDate: "2024-09-23" })) });
  const result = {};
  for (const [label, n] of [["idle", IDLE], ["live", LIVE]]) {
    const empty = new Miniflare({ modules: true, script: script(-1), compatibilityDate: "2024-09-23" });
    await empty.ready;
    await settle();
    const baseOne = treeRss();
    await empty.dispose();
    await settle();
    const base = treeRss();
    const start = performance.now();
    const mf = make(n);
    try {
      await mf.ready;
      const ready = performance.now() - start;
      await settle();
      const entry = { workers: n, rssGrowthMb: mb(treeRss() - base), perWorkerMb: mb((treeRss() - base) / n), oneWorkerInstanceMb: mb(baseOne - base), readyMs: Math.round(ready) };
      if (label === "live") {
        const answerStart = performance.now();
        const answers = [];
        for (let i = 0; i < n; i += 50) {
          const batch = [];
          for (let j = i; j < Math.min(n, i + 50); j++) batch.push(mf.getWorker(`w${j}`).then((w) => w.fetch("http://localhost/")).then((r) => r.text()));
          answers.push(...(await Promise.all(batch)));
        }
        entry.oneRequestEachMs = Math.round(performance.now() - answerStart);
        answers.forEach((text, i) => {
          if (text !== `worker ${i}`) throw new Error(`miniflare: worker ${i} answered ${JSON.stringify(text)}`);
        });
      }
      result[label] = entry;
    } finally {
      await mf.dispose();
    }
    progress(`miniflare ${label} done`);
  }
  return result;
}

/**
 * Diagnostic, beside the target: the same creates one after another, in a process that a child
 * has just made touch and free as much memory as they need (LIVE × 4 MiB). On a virtual machine
 * that hands free pages back to its host (virtio-balloon free page reporting), a page touched for
 * the first time costs the kernel 10-15 µs instead of under 1 µs, and which creates get such
 * pages depends on what ran before; pages freed a moment ago are still backed and are handed out
 * first. This series shows the engine's creates with that taken out. The target row stays on
 * the series above.
 */
async function workerboxBackedMemory() {
  const { createWorker } = require("..");
  const touch = `const keep = []; for (let i = 0; i < ${Math.ceil((LIVE * 4) / 64)}; i++) { const b = Buffer.alloc(64 << 20); for (let j = 0; j < b.length; j += 4096) b[j] = 1; keep.push(b); }`;
  const child = spawnSync(process.execPath, ["-e", touch], { stdio: "ignore" });
  if (child.status !== 0) throw new Error(`the memory-touching child failed (status ${child.status}, ${child.signal ?? "no signal"})`);
  const workers = [];
  const createMs = [];
  for (let i = 0; i < LIVE; i++) {
    const start = performance.now();
    // Scripts not created before, as in the first series (a script created before may have a
    // spare waiting in the warm pool).
    workers.push(await createWorker({ script: script(LIVE + i), onLog() {} }));
    createMs.push(performance.now() - start);
  }
  await Promise.all(workers.map((w) => w.dispose()));
  const tenthMs = medianAround(createMs, 9);
  const lastMs = medianAround(createMs, LIVE - 6);
  progress("workerbox creates after backing memory done");
  return { touchedMb: LIVE * 4, allMs: Math.round(createMs.reduce((a, b) => a + b, 0)), tenthMs, lastMs, quotient: Math.round((lastMs / tenthMs) * 100) / 100 };
}

const result = { machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}` }, quick };
if (only !== "miniflare") {
  result.workerbox = await workerbox();
  await settle();
  result.workerbox.live.createsAfterBackedMemory = await workerboxBackedMemory();
}
if (only !== "workerbox") {
  try {
    result.miniflare = await miniflare();
  } catch (error) {
    result.miniflare = { error: String(error?.message ?? error) };
  }
}
if (result.workerbox && result.miniflare?.idle) {
  result.ratio = { note: "miniflare / workerbox (> 1: workerbox uses less)", perIdleWorkerMb: Math.round((result.miniflare.idle.perWorkerMb / result.workerbox.idle.perWorkerMb) * 10) / 10 };
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
