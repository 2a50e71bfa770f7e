// Benchmark: a 100 MB request body streamed through a worker that echoes it
// (`new Response(request.body)`) and read back by Node, workerbox beside Miniflare, same run.
// Reports time, throughput and peak RSS growth: Node's own process, plus (for Miniflare) its
// workerd child processes, since workerbox runs in-process and Miniflare does not.
// Prints one JSON object on stdout; progress on stderr.
//   node bench/streaming.mjs [--quick] [--only=workerbox|miniflare] [--mb=N]
//     --quick  20 MB instead of 100 MB
//     --mb=N   stream N MB (a whole number) instead; Miniflare takes about 2 s per MB here
import os from "node:os";
import crypto from "node:crypto";
import { createRequire } from "node:module";
import { treeRss } from "./lib.mjs";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const mbFlag = process.argv.find((a) => a.startsWith("--mb="))?.split("=")[1];
const MB = mbFlag !== undefined ? Number(mbFlag) : quick ? 20 : 100;
if (!Number.isInteger(MB) || MB < 1) throw new Error(`--mb must be a whole number of megabytes ≥ 1, got ${mbFlag}`);
const CHUNK = 64 * 1024;
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

const SCRIPT = `export default { fetch(request) { return new Response(request.body); } }`;

function body(chunks) {
  const block = crypto.randomBytes(CHUNK);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent === chunks) return controller.close();
      sent++;
      controller.enqueue(new Uint8Array(block));
    },
  });
}

async function measure(name, send) {
  const chunks = (MB * 2 ** 20) / CHUNK;
  // Warm up with a small body.
  for await (const _ of (await send(body(4))).body);
  const before = treeRss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRss());
  }, 20);
  const start = performance.now();
  let received = 0;
  try {
    const response = await send(body(chunks));
    for await (const chunk of response.body) received += chunk.byteLength;
  } finally {
    clearInterval(sampler);
  }
  const ms = performance.now() - start;
  peak = Math.max(peak, treeRss());
  if (received !== chunks * CHUNK) throw new Error(`${name}: received ${received} bytes, expected ${chunks * CHUNK}`);
  progress(name, "done");
  return { megabytes: MB, ms: Math.round(ms), mbPerSecond: Math.round((MB / ms) * 1000), peakRssGrowthMb: Math.round(((peak - before) / 2 ** 20) * 10) / 10 };
}

const result = { machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}` }, quick };

if (only !== "miniflare") {
  const { createWorker, dispatch } = require("..");
  const worker = await createWorker({ script: SCRIPT, onLog() {} });
  try {
    result.workerbox = await measure("workerbox", (stream) => dispatch(worker, { url: "http://localhost/", method: "POST", body: stream }));
  } finally {
    await worker.dispose();
  }
}
if (only !== "workerbox") {
  try {
    const { Miniflare } = require("miniflare");
    const mf = new Miniflare({ modules: true, script: SCRIPT, compatibilityDate: "2024-09-23" });
    await mf.ready;
    try {
      result.miniflare = await measure("miniflare", (stream) => mf.dispatchFetch("http://localhost/", { method: "POST", body: stream, duplex: "half" }));
    } finally {
      await mf.dispose();
    }
  } catch (error) {
    result.miniflare = { error: String(error?.message ?? error) };
  }
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
