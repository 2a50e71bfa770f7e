// bench/node-compat.mjs: what nodejs_compat costs createWorker. Creates (pool: false, code cache
// on, so the script compile is the same in every case) a tiny worker without the flag (a date
// before it), with it on (the default date: node: imports resolve, Buffer/process/global are
// installed as lazy globals), and with a script that imports node:buffer, node:events,
// node:util and node:stream (modules compiled on first import); prints one JSON object with
// the create times (ms) of each.
//
//   node bench/node-compat.mjs [--quick]
import { createWorker } from "../index.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 30 : 200;

const TINY = `export default { fetch() { return new Response("ok") } }`;
const IMPORTING = `import { Buffer } from "node:buffer"; import EventEmitter from "node:events";
import { inspect } from "node:util"; import { Readable } from "node:stream";
export default { fetch() { return new Response(inspect({ b: Buffer.from("x"), e: typeof EventEmitter, r: typeof Readable })) } }`;

const CASES = {
  withoutFlag: { script: TINY, compatibilityDate: "2024-01-01" },
  withFlag: { script: TINY },
  withFlagImportingModules: { script: IMPORTING },
};

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: samples.length, p50: +at(0.5).toFixed(2), p99: +at(0.99).toFixed(2) };
}

const samples = Object.fromEntries(Object.keys(CASES).map((name) => [name, []]));
// Warm-up (startup snapshot, code cache), then the cases interleaved round by round.
for (const options of Object.values(CASES)) await (await createWorker({ ...options, pool: false, onLog() {} })).dispose();
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, options] of Object.entries(CASES)) {
    const start = performance.now();
    const worker = await createWorker({ ...options, pool: false, onLog() {} });
    samples[name].push(performance.now() - start);
    await worker.dispose();
  }
}
const result = { bench: "node-compat", node: process.version, createMs: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summary(v)])) };
result.ratio = { flagOverNoFlag: +(result.createMs.withFlag.p50 / result.createMs.withoutFlag.p50).toFixed(2), importingOverNoFlag: +(result.createMs.withFlagImportingModules.p50 / result.createMs.withoutFlag.p50).toFixed(2) };
console.log(JSON.stringify(result));
