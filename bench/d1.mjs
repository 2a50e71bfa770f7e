// Benchmark: one D1 insert + select per request, workerbox (embedded in-memory d1(), and
// d1({ dir }) on a temporary folder, whose every write is fsynced) beside Miniflare (its D1
// database, a SQLite Durable Object in workerd, not persisted), same machine and run.
// Prints one JSON object on stdout; progress on stderr.
//   node bench/d1.mjs [--quick] [--only=workerbox|miniflare]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const WARMUP = quick ? 20 : 100;
const REQUESTS = { workerbox: quick ? 300 : 2000, workerboxFile: quick ? 100 : 500, miniflare: quick ? 50 : 300 };
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

const SCHEMA = "CREATE TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY, path TEXT NOT NULL, at INTEGER NOT NULL)";
const SCRIPT = `export default { async fetch(request, env) {
  const path = new URL(request.url).pathname;
  const { meta } = await env.DB.prepare("INSERT INTO hits (path, at) VALUES (?, ?)").bind(path, Date.now()).run();
  const row = await env.DB.prepare("SELECT path FROM hits WHERE id = ?").bind(meta.last_row_id).first();
  return new Response(row.path);
} }`;

function summary(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.max(0, Math.ceil(q * s.length) - 1)];
  const us = (ms) => Math.round(ms * 1000) / 1000;
  return { unit: "ms per request (insert + select)", n: s.length, mean: us(s.reduce((a, b) => a + b, 0) / s.length), p50: us(at(0.5)), p99: us(at(0.99)) };
}

async function measure(name, fetchText, count) {
  for (let i = 0; i < WARMUP; i++) await fetchText(`http://localhost/warm${i}`);
  const samples = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const text = await fetchText(`http://localhost/k${i}`);
    samples.push(performance.now() - start);
    if (text !== `/k${i}`) throw new Error(`${name}: unexpected body ${JSON.stringify(text)}`);
  }
  progress(name, "done");
  return summary(samples);
}

const result = { machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}` }, quick };

if (only !== "miniflare") {
  const { createWorker, dispatch, d1 } = require("..");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-d1-"));
  try {
    for (const [name, DB] of [["workerbox", d1()], ["workerboxFile", d1({ dir })]]) {
      await DB.database().exec(SCHEMA);
      const worker = await createWorker({ script: SCRIPT, bindings: { DB }, onLog() {} });
      try {
        result[name] = await measure(name, async (url) => (await dispatch(worker, url)).text(), REQUESTS[name]);
      } finally {
        await worker.dispose();
      }
    }
    result.workerboxFile.note = "d1({ dir }): WAL, synchronous = FULL (each insert fsynced)";
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
if (only !== "workerbox") {
  try {
    const { Miniflare } = require("miniflare");
    const mf = new Miniflare({ modules: true, script: SCRIPT, d1Databases: ["DB"], compatibilityDate: "2024-09-23" });
    await mf.ready;
    try {
      await (await mf.getD1Database("DB")).exec(SCHEMA);
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
