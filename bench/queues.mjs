// Benchmark: queue throughput, messages per second from send to ack, in two workloads: a
// producer worker answers each request with one sendBatch() of 100 messages ("batch"), or with
// one send() ("single"); JSON bodies; the consumer (the same worker) acks every batch of up to 100. workerbox: the clock stops when queue.idle() resolves,
// i.e. every message was acked. Miniflare (same script, same machine, same run): the consumer
// reports each batch to the host through an outbound fetch before it returns, and the clock
// stops when the host has counted every message (the ack itself, after the handler returns, is
// not included, which favours Miniflare slightly).
// Prints one JSON object on stdout; progress on stderr.
//   node bench/queues.mjs [--quick] [--only=workerbox|miniflare]
import os from "node:os";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const WORKLOADS = {
  batch: { perRequest: 100, requests: { workerbox: quick ? 20 : 200, miniflare: quick ? 10 : 100 } },
  single: { perRequest: 1, requests: { workerbox: quick ? 500 : 5000, miniflare: quick ? 200 : 1000 } },
};
const CONCURRENCY = 8;
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

const SCRIPT = `export default {
  async fetch(request, env) {
    const n = Number(new URL(request.url).searchParams.get("n"));
    const start = Number(new URL(request.url).searchParams.get("start"));
    if (n === 1) await env.Q.send({ i: start, text: "message " + start });
    else await env.Q.sendBatch(Array.from({ length: n }, (_, i) => ({ body: { i: start + i, text: "message " + (start + i) } })));
    return new Response("sent");
  },
  async queue(batch, env) {
    let sum = 0;
    for (const m of batch.messages) sum += m.body.i;
    if (env.REPORT) await fetch("http://report.invalid/acked?n=" + batch.messages.length + "&sum=" + sum);
    batch.ackAll();
  },
}`;

/** Sends `requests` requests of `perRequest` messages through `fetchText`, CONCURRENCY at a time. */
async function produce(fetchText, requests, perRequest) {
  let next = 0;
  const lanes = Array.from({ length: CONCURRENCY }, async () => {
    while (next < requests) {
      const r = next++;
      const text = await fetchText(`http://localhost/?n=${perRequest}&start=${r * perRequest}`);
      if (text !== "sent") throw new Error(`unexpected producer answer ${JSON.stringify(text)}`);
    }
  });
  await Promise.all(lanes);
}

function rate(messages, ms) {
  return { unit: "messages per second, send to ack", messages, ms: Math.round(ms), perSecond: Math.round((messages / ms) * 1000) };
}

const result = {
  machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}`, loadavg: os.loadavg().map((l) => Math.round(l * 100) / 100) },
  quick,
  setup: { workloads: WORKLOADS, concurrency: CONCURRENCY, maxBatchSize: 100, maxBatchTimeout: 1, body: "json object" },
  workerbox: {},
  miniflare: {},
};

if (only !== "miniflare") {
  const { createWorker, dispatch, queue } = require("..");
  const run = async (requests, perRequest) => {
    const q = queue({ maxBatchSize: 100, maxBatchTimeout: 1 });
    const worker = await createWorker({ script: SCRIPT, bindings: { Q: q }, onLog() {} });
    try {
      const start = performance.now();
      await produce(async (url) => (await dispatch(worker, url)).text(), requests, perRequest);
      await q.idle();
      const ms = performance.now() - start;
      const { acked, batches } = q.stats;
      if (acked !== requests * perRequest) throw new Error(`workerbox: ${acked} of ${requests * perRequest} messages acked`);
      return { ...rate(acked, ms), batches };
    } finally {
      await worker.dispose();
    }
  };
  for (const [name, { perRequest, requests }] of Object.entries(WORKLOADS)) {
    await run(5, perRequest); // warm-up
    result.workerbox[name] = await run(requests.workerbox, perRequest);
    progress("workerbox", name, JSON.stringify(result.workerbox[name]));
  }
}

if (only !== "workerbox") {
  let mf;
  try {
    const { Miniflare } = require("miniflare");
    let counted = 0;
    let target = Infinity;
    let reached = null;
    mf = new Miniflare({
      modules: true,
      script: SCRIPT,
      compatibilityDate: "2024-09-23",
      bindings: { REPORT: true },
      queueProducers: { Q: { queueName: "bench" } },
      queueConsumers: { bench: { maxBatchSize: 100, maxBatchTimeout: 1 } },
      outboundService(request) {
        counted += Number(new URL(request.url).searchParams.get("n"));
        if (counted >= target) reached?.();
        return new Response("ok");
      },
    });
    await mf.ready;
    const run = async (requests, perRequest) => {
      counted = 0;
      target = requests * perRequest;
      const done = new Promise((resolve) => (reached = resolve));
      const start = performance.now();
      await produce(async (url) => (await mf.dispatchFetch(url)).text(), requests, perRequest);
      await done;
      return rate(counted, performance.now() - start);
    };
    for (const [name, { perRequest, requests }] of Object.entries(WORKLOADS)) {
      await run(2, perRequest); // warm-up
      result.miniflare[name] = await run(requests.miniflare, perRequest);
      progress("miniflare", name, JSON.stringify(result.miniflare[name]));
    }
  } catch (error) {
    result.miniflare = { error: `Miniflare could not run here: ${String(error?.message ?? error)}` };
  } finally {
    await mf?.dispose().catch(() => {});
  }
}
if (only === undefined && !result.miniflare.error) {
  result.ratio = { note: "workerbox / miniflare messages per second (> 1: workerbox is faster)" };
  for (const name of Object.keys(WORKLOADS)) result.ratio[name] = Math.round((result.workerbox[name].perSecond / result.miniflare[name].perSecond) * 10) / 10;
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
