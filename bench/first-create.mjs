// bench/first-create.mjs: the first createWorker in a fresh Node process — what every CLI run,
// dev-server restart and Vitest worker pays. Spawns fresh processes: without a snapshot on disk
// (WORKERBOX_CACHE_DIR=""), with an empty per-user cache (the process makes and saves the
// snapshot), and with a warm one (the next process loads it). Prints one JSON object (medians).
//
// Node loads its own fetch classes (Response, Headers) on first use, 12-25 ms on Node 24: the
// first dispatch pays that (createWorker does not touch them), as any first use of Node's fetch
// does. `warmUserCacheFetchLoaded` is the warm case in a process that loaded them before the
// clock starts, so its firstRequestMs is the engine's alone.
//
//   node bench/first-create.mjs [--quick]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const index = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), "index.js");
const ROUNDS = process.argv.includes("--quick") ? 3 : 9;
const code = `const t0 = performance.now(); const { createWorker, dispatch } = require(${JSON.stringify(index)}); const t1 = performance.now();
(async () => { const w = await createWorker({ script: "export default { fetch() { return new Response('ok') } }", pool: false, onLog() {} }); const t2 = performance.now();
await (await dispatch(w, "http://x/")).text(); const t3 = performance.now(); await w.dispose();
console.log(JSON.stringify({ requireMs: t1 - t0, createMs: t2 - t1, firstRequestMs: t3 - t2 })); })();`;
const run = (cacheDir, prefix = "") => JSON.parse(execFileSync(process.execPath, ["-e", prefix + code], { env: { ...process.env, WORKERBOX_CACHE_DIR: cacheDir }, encoding: "utf8" }));

const samples = { noDiskCache: [], coldUserCache: [], warmUserCache: [], warmUserCacheFetchLoaded: [] };
for (let i = 0; i < ROUNDS; i++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-first-create-"));
  try {
    samples.noDiskCache.push(run(""));
    samples.coldUserCache.push(run(dir));
    samples.warmUserCache.push(run(dir));
    samples.warmUserCacheFetchLoaded.push(run(dir, "void globalThis.Response; "));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
const median = (values) => +[...values].sort((a, b) => a - b)[values.length >> 1].toFixed(2);
const summary = (runs) => ({ createMs: median(runs.map((r) => r.createMs)), firstRequestMs: median(runs.map((r) => r.firstRequestMs)), requireMs: median(runs.map((r) => r.requireMs)) });
console.log(JSON.stringify({ bench: "first-create", node: process.version, rounds: ROUNDS, ...Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summary(v)])) }));
