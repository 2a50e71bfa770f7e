// Benchmark: Workers RPC and Durable Objects, each request timed from the host (Date.now() and
// performance.now() do not advance while a Worker runs), workerbox beside Miniflare (workerd) on
// the same machine in the same run.
//   plainDispatch       worker A answers String(i + 1) itself: the dispatch baseline
//   rpc                 worker A answers String(await env.SVC.add(i, 1)): one RPC call through a
//                       service binding to worker B (default export: a WorkerEntrypoint with add())
//                       rpcCost = rpc - plainDispatch, the RPC call's share of a request
//   durableObjectRpc    a worker's fetch takes the stub for idFromName("bench") and awaits
//                       stub.increment(), a method that reads "n" from ctx.storage, adds 1 and
//                       puts it back; each answer must be exactly one more than the one before
//   durableObjectFetch  the same increment through stub.fetch() (another object) instead of RPC
// plainDispatch and rpc run interleaved (one request of each in turn), as do the two
// durableObject series, so drift over the run falls on both alike.
// Storage: workerbox durableObject("Counter") in memory; workerboxFile durableObject("Counter",
// { dir }) on SQLite in a temporary folder (removed afterwards); Miniflare's Durable Objects in
// memory (no persist option).
// Prints one JSON object on stdout; progress on stderr.
//   node bench/durable.mjs [--quick] [--only=workerbox|miniflare]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const WARMUP = quick ? 50 : 200;
const REQUESTS = { workerbox: quick ? 1000 : 5000, workerboxFile: quick ? 300 : 2000, miniflare: quick ? 200 : 1000 }; // per series
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

const CALLEE = `import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint {
  add(a, b) { return a + b; }
}`;
const CALLER = `export default { async fetch(request, env) {
  const url = new URL(request.url);
  const i = Number(url.searchParams.get("i"));
  if (url.pathname === "/plain") return new Response(String(i + 1));
  return new Response(String(await env.SVC.add(i, 1)));
} }`;
const OBJECTS = `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  async increment() {
    const n = ((await this.ctx.storage.get("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return n;
  }
  async fetch() { return new Response(String(await this.increment())); }
}
export default { async fetch(request, env) {
  if (new URL(request.url).pathname === "/fetch") {
    return env.COUNTER.get(env.COUNTER.idFromName("bench-fetch")).fetch("http://do/increment");
  }
  const stub = env.COUNTER.get(env.COUNTER.idFromName("bench"));
  return new Response(String(await stub.increment()));
} }`;

// One series: k runs over warm-up and samples alike, so the checks see every answer in order.
const SERIES = {
  plainDispatch: { unit: "ms per request (dispatch, no RPC)", url: (k) => `http://localhost/plain?i=${k}`, expect: (k) => String(k + 1) },
  rpc: { unit: "ms per request (dispatch + one RPC call)", url: (k) => `http://localhost/rpc?i=${k}`, expect: (k) => String(k + 1) },
  durableObjectRpc: { unit: "ms per request (stub.increment(): storage get + put)", url: () => "http://localhost/rpc", expect: (k) => String(k + 1) },
  durableObjectFetch: { unit: "ms per request (stub.fetch(): storage get + put)", url: () => "http://localhost/fetch", expect: (k) => String(k + 1) },
};

const round = (ms) => Math.round(ms * 1000) / 1000;

function summary(unit, samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.max(0, Math.ceil(q * s.length) - 1)];
  return { unit, n: s.length, mean: round(s.reduce((a, b) => a + b, 0) / s.length), p50: round(at(0.5)), p99: round(at(0.99)) };
}

// The series given together run interleaved, one request of each in turn, so drift over the run
// (warm-up, GC, the machine's other load) falls on all of them alike and their difference holds.
async function measure(label, names, fetchText, count) {
  const call = async (name, k) => {
    const { url, expect } = SERIES[name];
    const text = await fetchText(url(k));
    if (text !== expect(k)) throw new Error(`${label} ${name}: request ${k}: expected ${JSON.stringify(expect(k))}, got ${JSON.stringify(text)}`);
  };
  for (let k = 0; k < WARMUP; k++) for (const name of names) await call(name, k);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < count; i++) {
    for (const name of names) {
      const start = performance.now();
      await call(name, WARMUP + i);
      samples[name].push(performance.now() - start);
    }
  }
  progress(label, names.join(" + "), "done");
  return Object.fromEntries(names.map((name) => [name, summary(SERIES[name].unit, samples[name])]));
}

/** Runs series into engine[name]; a failure becomes { error } there and the others go on. */
async function run(engine, label, names, fetchText, count) {
  try {
    Object.assign(engine, await measure(label, names, fetchText, count));
  } catch (error) {
    progress(label, names.join(" + "), "FAILED:", error?.stack ?? error);
    for (const name of names) engine[name] = { error: String(error?.message ?? error) };
  }
}

function rpcCost(engine) {
  const { plainDispatch: plain, rpc } = engine;
  if (!plain?.p50 || !rpc?.p50) return;
  engine.rpcCost = { note: "rpc - plainDispatch, ms per call", mean: round(rpc.mean - plain.mean), p50: round(rpc.p50 - plain.p50) };
}

const result = { machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}` }, quick };

if (only !== "miniflare") {
  const { createWorker, dispatch, service, durableObject } = require("..");
  const fetchText = (worker) => async (url) => (await dispatch(worker, url)).text();
  const workerbox = (result.workerbox = {});

  const callee = await createWorker({ script: CALLEE, onLog() {} });
  try {
    const caller = await createWorker({ script: CALLER, bindings: { SVC: service(callee) }, onLog() {} });
    try {
      await run(workerbox, "workerbox", ["plainDispatch", "rpc"], fetchText(caller), REQUESTS.workerbox);
      rpcCost(workerbox);
    } finally {
      await caller.dispose();
    }
  } finally {
    await callee.dispose();
  }

  const objects = await createWorker({ script: OBJECTS, bindings: { COUNTER: durableObject("Counter") }, onLog() {} });
  try {
    await run(workerbox, "workerbox", ["durableObjectRpc", "durableObjectFetch"], fetchText(objects), REQUESTS.workerbox);
  } finally {
    await objects.dispose();
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-durable-"));
  try {
    const workerboxFile = (result.workerboxFile = {});
    const onDisk = await createWorker({ script: OBJECTS, bindings: { COUNTER: durableObject("Counter", { dir }) }, onLog() {} });
    try {
      await run(workerboxFile, "workerboxFile", ["durableObjectRpc"], fetchText(onDisk), REQUESTS.workerboxFile);
    } finally {
      await onDisk.dispose();
    }
    const files = fs.existsSync(path.join(dir, "Counter")) ? fs.readdirSync(path.join(dir, "Counter")).filter((f) => f.endsWith(".sqlite3")) : [];
    workerboxFile.note = `durableObject("Counter", { dir }): storage on SQLite under a temporary folder (${files.length} .sqlite3 file(s) written)`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (Object.values(result.workerbox).some((s) => s.error) || Object.values(result.workerboxFile).some((s) => s.error)) process.exitCode = 1;
}

if (only !== "workerbox") {
  let Miniflare;
  try {
    ({ Miniflare } = require("miniflare"));
  } catch (error) {
    result.miniflare = { error: `Miniflare could not be loaded on Node ${process.version}: ${String(error?.message ?? error)}` };
  }
  if (Miniflare) {
    const miniflare = (result.miniflare = {});
    const fetchText = (mf) => async (url) => (await mf.dispatchFetch(url)).text();
    // One Miniflare instance for `series`; if it cannot start, each of them gets the { error }.
    const withMiniflare = async (options, series, after) => {
      let mf;
      try {
        mf = new Miniflare({
          // workerd's own stdout/stderr would otherwise reach our stdout.
          handleRuntimeStdio: (out, err) => {
            for (const stream of [out, err]) stream.on("data", (chunk) => process.stderr.write(chunk));
          },
          ...options,
        });
        await mf.ready;
        await run(miniflare, "miniflare", series, fetchText(mf), REQUESTS.miniflare);
        after?.();
      } catch (error) {
        progress("miniflare FAILED:", error?.stack ?? error);
        const message = `Miniflare could not run on Node ${process.version}: ${String(error?.message ?? error)}`;
        for (const name of series) miniflare[name] ??= { error: message };
      } finally {
        await mf?.dispose();
      }
    };
    await withMiniflare(
      {
        workers: [
          { name: "a", modules: true, script: CALLER, serviceBindings: { SVC: "b" }, compatibilityDate: "2025-01-01" },
          { name: "b", modules: true, script: CALLEE, compatibilityDate: "2025-01-01" },
        ],
      },
      ["plainDispatch", "rpc"],
      () => rpcCost(miniflare),
    );
    await withMiniflare({ modules: true, script: OBJECTS, durableObjects: { COUNTER: "Counter" }, compatibilityDate: "2025-01-01" }, ["durableObjectRpc", "durableObjectFetch"]);
    // Nothing ran at all: one error for the engine, as the other benches report it.
    const errors = Object.values(miniflare).map((s) => s.error);
    if (errors.length && errors.every(Boolean) && new Set(errors).size === 1) result.miniflare = { error: errors[0] };
  }
}

if (result.workerbox && result.miniflare && !result.miniflare.error) {
  const ratio = { note: "miniflare / workerbox (> 1: workerbox is faster)" };
  for (const series of Object.keys(SERIES)) {
    const wb = result.workerbox[series];
    const mf = result.miniflare[series];
    if (wb?.p50 && mf?.p50) ratio[series] = { p50: Math.round((mf.p50 / wb.p50) * 10) / 10, mean: Math.round((mf.mean / wb.mean) * 10) / 10 };
  }
  result.ratio = ratio;
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
