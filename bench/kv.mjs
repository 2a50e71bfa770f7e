// Benchmark: one KV put + get per request, workerbox (embedded in-memory kv()) beside Miniflare
// (its KV namespace, backed by workerd's local storage), same machine and run.
// Prints one JSON object on stdout; progress on stderr.
//   node bench/kv.mjs [--quick] [--only=workerbox|miniflare]
import os from "node:os";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const WARMUP = quick ? 20 : 100;
const REQUESTS = { workerbox: quick ? 300 : 2000, miniflare: quick ? 50 : 300 };
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

const SCRIPT = `export default { async fetch(request, env) {
  const key = new URL(request.url).pathname;
  await env.CACHE.put(key, "value for " + key);
  return new Response(await env.CACHE.get(key));
} }`;

function summary(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.max(0, Math.ceil(q * s.length) - 1)];
  const us = (ms) => Math.round(ms * 1000) / 1000;
  return { unit: "ms per request (put + get)", n: s.length, mean: us(s.reduce((a, b) => a + b, 0) / s.length), p50: us(at(0.5)), p99: us(at(0.99)) };
}

async function measure(name, fetchText, count) {
  for (let i = 0; i < WARMUP; i++) await fetchText(`http://localhost/warm${i}`);
  const samples = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const text = await fetchText(`http://localhost/k${i}`);
    samples.push(performance.now() - start);
    if (text !== `value for /k${i}`) throw new Error(`${name}: unexpected body ${JSON.stringify(text)}`);
  }
  progress(name, "done");
  return summary(samples);
}

const result = { machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}` }, quick };

if (only !== "miniflare") {
  const { createWorker, dispatch, kv } = require("..");
  const worker = await createWorker({ script: SCRIPT, bindings: { CACHE: kv() }, onLog() {} });
  try {
    result.workerbox = await measure("workerbox", async (url) => (await dispatch(worker, url)).text(), REQUESTS.workerbox);
  } finally {
    await worker.dispose();
  }
}
if (only !== "workerbox") {
  try {
    const { Miniflare } = require("miniflare");
    const mf = new Miniflare({ modules: true, script: SCRIPT, kvNamespaces: ["CACHE"], compatibilityDate: "2024-09-23" });
    await mf.ready;
    try {
      result.miniflare = await measure("miniflare", async (url) => (await mf.dispatchFetch(url)).text(), REQUESTS.miniflare);
    } finally {
      await mf.dispose();
    }
  } catch (error) {
    result.miniflare = { error: String(error?.message ?? error) };
  }
}
if (result.workerbox && result.miniflare && !result.miniflare.error) {
  result.ratio = { note: "miniflare / workerbox (> 1: workerbox is faster)", p50: Math.round((result.miniflare.p50 / result.workerbox.p50) * 10) / 10, mean: Math.round((result.miniflare.mean / result.workerbox.mean) * 10) / 10 };
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
