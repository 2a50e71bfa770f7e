// bench/als.mjs: what AsyncLocalStorage costs inside a worker (nodejs_compat). One worker answers
// sequential requests that each await 100 times, inside `als.run()` (reading the store after every
// await) or without it; prints one JSON object with the per-request times and their ratio.
//
//   node bench/als.mjs [--quick]
import { createWorker, dispatch } from "../index.js";

const quick = process.argv.includes("--quick");
const REQUESTS = quick ? 300 : 3000;

const script = `import { AsyncLocalStorage } from "node:async_hooks";
const als = new AsyncLocalStorage();
async function work(read) {
  let sum = 0;
  for (let i = 0; i < 100; i++) { await null; if (read) sum += als.getStore().n; }
  return sum;
}
export default { async fetch(request) {
  const inside = new URL(request.url).pathname === "/als";
  const sum = inside ? await als.run({ n: 1 }, () => work(true)) : await work(false);
  return new Response(String(sum));
} }`;

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return { n: samples.length, mean: +mean.toFixed(1), p50: +at(0.5).toFixed(1), p99: +at(0.99).toFixed(1) };
}

async function measure(worker, path) {
  const samples = [];
  for (let i = 0; i < REQUESTS; i++) {
    const start = performance.now();
    const response = await dispatch(worker, `http://localhost${path}`);
    await response.text();
    samples.push((performance.now() - start) * 1000);
  }
  return summary(samples);
}

const worker = await createWorker({ script, compatibilityFlags: ["nodejs_compat"], onLog() {}, pool: false });
try {
  // Warm up both paths, then alternate to spread the machine's noise over both.
  await measure(worker, "/plain");
  await measure(worker, "/als");
  const plain = await measure(worker, "/plain");
  const als = await measure(worker, "/als");
  console.log(JSON.stringify({
    machine: { node: process.version },
    quick,
    unit: "µs per request (100 awaits each)",
    withoutAls: plain,
    insideAlsRun: als,
    ratioP50: +(als.p50 / plain.p50).toFixed(2),
  }, null, 2));
} finally {
  await worker.dispose();
}
