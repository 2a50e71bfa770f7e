// The worker's event loop: concurrent requests in one isolate, queueing limits, waitUntil,
// wall-clock limits, scheduled events, uncaught errors, and zero CPU while idle.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createWorker, dispatch, clearPool } from "../index.js";
import { evalInWorker, useWorker, waitFor } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

test("2,000 concurrent dispatches: each answered exactly once, interleaving at awaits", async (t) => {
  const worker = await useWorker(t, {
    script: `let active = 0, peak = 0;
      export default { async fetch(request) {
        active++; peak = Math.max(peak, active);
        const n = Number(new URL(request.url).searchParams.get("n"));
        await new Promise((resolve) => setTimeout(resolve, n % 7));
        active--;
        return Response.json({ n, peak });
      } }`,
  });
  const results = await Promise.all(Array.from({ length: 2000 }, (_, n) => dispatch(worker, `http://localhost/?n=${n}`).then((r) => r.json())));
  assert.deepEqual(results.map((r) => r.n), Array.from({ length: 2000 }, (_, n) => n));
  assert.ok(Math.max(...results.map((r) => r.peak)) > 1, "requests overlapped in the isolate");
});

test("concurrent dispatches finish out of order, sharing module globals", async (t) => {
  const worker = await useWorker(t, {
    script: `const finished = [];
      export default { async fetch(request) {
        const delay = Number(new URL(request.url).searchParams.get("delay"));
        await new Promise((resolve) => setTimeout(resolve, delay));
        finished.push(delay);
        return new Response(finished.join(","));
      } }`,
  });
  // Delays ten times longer under an emulator, where the three dispatches alone take milliseconds.
  const [long, short, middle] = [scaled(30), scaled(1), scaled(15)];
  const order = [];
  await Promise.all([long, short, middle].map((delay) => dispatch(worker, `http://localhost/?delay=${delay}`).then(async (r) => order.push(await r.text()))));
  assert.deepEqual(order, [`${short}`, `${short},${middle}`, `${short},${middle},${long}`]);
});

test("limits.maxInFlight queues requests in FIFO order; limits.maxQueued rejects beyond it", async (t) => {
  const worker = await useWorker(t, {
    limits: { maxInFlight: 2, maxQueued: 3 },
    script: `let active = 0, peak = 0; const started = [];
      export default { async fetch(request) {
        const n = new URL(request.url).pathname.slice(1);
        started.push(n); active++; peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 10));
        active--;
        return Response.json({ peak, started: [...started] });
      } }`,
  });
  const attempts = Array.from({ length: 7 }, (_, i) => dispatch(worker, `http://localhost/${i}`).then((r) => r.json(), (e) => e));
  const results = await Promise.all(attempts);
  const rejected = results.filter((r) => r instanceof Error);
  assert.equal(rejected.length, 2);
  for (const error of rejected) {
    assert.equal(error.code, "ERR_OVERLOADED");
    assert.match(error.message, /limits\.maxQueued/);
  }
  const answered = results.filter((r) => !(r instanceof Error));
  assert.equal(Math.max(...answered.map((r) => r.peak)), 2);
  assert.deepEqual(answered.at(-1).started, ["0", "1", "2", "3", "4"]);
});

test("ctx.waitUntil: dispatch resolves first; waitUntilSettled() waits; failures reach onLog", async (t) => {
  const lines = [];
  const worker = await useWorker(t, {
    onLog: (level, message) => lines.push([level, message]),
    script: `export let done = 0;
      export default { fetch(request, env, ctx) {
        ctx.waitUntil(new Promise((resolve) => setTimeout(() => { globalThis.finished = true; resolve(); }, 30)));
        ctx.waitUntil(Promise.reject(new Error("background failed")));
        if (new URL(request.url).pathname === "/check") return new Response(String(globalThis.finished === true));
        return new Response("responded");
      } }`,
  });
  const res = await dispatch(worker, "http://localhost/");
  assert.equal(await res.text(), "responded");
  await worker.waitUntilSettled();
  await waitFor(() => lines.some(([level, m]) => level === "error" && m.includes("background failed")));
  // The background work really ran to completion before waitUntilSettled resolved.
  assert.equal(await (await dispatch(worker, "http://localhost/check")).text(), "true");
  await worker.waitUntilSettled();
});

test("waitUntilSettled resolves at once with no background work, and does not hang on a promise that can never settle", async (t) => {
  const lines = [];
  const worker = await useWorker(t, {
    onLog: (level, message) => lines.push([level, message]),
    script: `export default { fetch(request, env, ctx) { ctx.waitUntil(new Promise(() => {})); return new Response("x"); } }`,
  });
  await worker.waitUntilSettled();
  await dispatch(worker, "http://localhost/");
  await worker.waitUntilSettled();
  await waitFor(() => lines.some(([level, m]) => level === "warn" && /waitUntil\(\) promise\(s\) will never settle/.test(m)));
});

test("limits.wallMs bounds a request that waits too long", async (t) => {
  const worker = await useWorker(t, {
    limits: { wallMs: 50 },
    script: `export default { async fetch(request) {
      if (new URL(request.url).pathname === "/slow") await new Promise((resolve) => setTimeout(resolve, 5000));
      return new Response("quick");
    } }`,
  });
  await assert.rejects(dispatch(worker, "http://localhost/slow"), (e) => e.code === "ERR_WALL_LIMIT" && /50 ms/.test(e.message));
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "quick");
});

test("limits are validated and name the field", async () => {
  const script = `export default { fetch() { return new Response("") } }`;
  for (const [limits, pattern] of [
    [{ maxInFlight: 0 }, /options\.limits\.maxInFlight must be an integer of at least 1/],
    [{ maxQueued: -1 }, /options\.limits\.maxQueued/],
    [{ maxInFlight: 1.5 }, /options\.limits\.maxInFlight/],
    [{ wallMs: "10" }, /options\.limits\.wallMs/],
    [{ wallMs: Infinity }, /options\.limits\.wallMs/],
    [{ cpuMS: 10 }, /unknown limit "options\.limits\.cpuMS"/],
    [{ cpuMs: -5 }, /options\.limits\.cpuMs/],
    [{ memoryMb: 8 }, /options\.limits\.memoryMb must be an integer number of megabytes from 16/],
    ["fast", /options\.limits must be an object/],
  ]) {
    await assert.rejects(createWorker({ script, limits, onLog() {} }), (e) => e instanceof TypeError && pattern.test(e.message), String(pattern));
  }
});

test("scheduled events run scheduled(controller, env, ctx) and report the outcome", async (t) => {
  const lines = [];
  const worker = await useWorker(t, {
    bindings: { NAME: "cron-worker" },
    onLog: (level, message) => lines.push(message),
    script: `export default {
      async scheduled(controller, env, ctx) {
        if (controller.cron === "fail") throw new RangeError("cron failed");
        if (controller.cron === "no-retry") controller.noRetry();
        ctx.waitUntil(new Promise((resolve) => setTimeout(() => { console.log("background done"); resolve(); }, 20)));
        console.log(env.NAME, controller.cron, controller.scheduledTime);
      },
    };`,
  });
  const ok = await dispatch(worker, { type: "scheduled", cron: "*/5 * * * *", scheduledTime: 1700000000000 });
  assert.deepEqual(ok, { outcome: "ok", noRetry: false });
  // The outcome waited for the event's waitUntil work.
  assert.ok(lines.includes("background done"));
  assert.ok(lines.includes("cron-worker */5 * * * * 1700000000000"));
  assert.deepEqual(await dispatch(worker, { type: "scheduled", cron: "no-retry", scheduledTime: new Date(0) }), { outcome: "ok", noRetry: true });
  const failed = await dispatch(worker, { type: "scheduled", cron: "fail" });
  assert.equal(failed.outcome, "exception");
  assert.ok(failed.error instanceof RangeError);
  assert.equal(failed.error.message, "cron failed");
  // A fetch to a scheduled-only worker rejects with workerd's message.
  await assert.rejects(dispatch(worker, "http://localhost/"), /Handler does not export a fetch\(\) function/);
});

test("service-worker scripts receive scheduled events too", async (t) => {
  const worker = await useWorker(t, {
    script: `addEventListener("scheduled", (event) => {
      event.waitUntil(new Promise((resolve) => setTimeout(resolve, 5)));
      if (event.cron === "stop") event.noRetry();
    });`,
  });
  assert.deepEqual(await dispatch(worker, { type: "scheduled", cron: "stop" }), { outcome: "ok", noRetry: true });
});

test("a worker without a scheduled handler rejects scheduled events clearly", async (t) => {
  const worker = await useWorker(t, { script: `export default { fetch() { return new Response("") } }` });
  await assert.rejects(dispatch(worker, { type: "scheduled", cron: "* * * * *" }), (e) => e instanceof TypeError && /no scheduled\(\) handler/.test(e.message));
  await assert.rejects(dispatch(worker, { type: "email" }), /unknown event type "email" \(expected "fetch", "scheduled" or "queue"\)/);
  await assert.rejects(dispatch(worker, { type: "scheduled", cron: 5 }), /event\.cron must be a string/);
});

test("errors thrown by timer callbacks and unhandled rejections reach onLog", async (t) => {
  const lines = [];
  const worker = await useWorker(t, {
    onLog: (level, message) => lines.push([level, message]),
    // The event stays alive until its waitUntil settles, so its timer fires (timers of an
    // event that is over are dropped, as in production).
    script: `export default { fetch(request, env, ctx) {
      setTimeout(() => { throw new TypeError("timer exploded"); });
      ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 20)));
      Promise.reject(new Error("nobody caught me"));
      return new Response("ok");
    } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "ok");
  await waitFor(() => lines.length >= 2);
  assert.ok(lines.some(([level, m]) => level === "error" && m.startsWith("Uncaught (in promise) Error: nobody caught me")), JSON.stringify(lines));
  assert.ok(lines.some(([level, m]) => level === "error" && m.startsWith("Uncaught TypeError: timer exploded")), JSON.stringify(lines));
});

test("the NANO runtime's regression list", async (t) => {
  const result = await evalInWorker(t, `
    const out = {};
    // A promise chain 1,000 deep.
    let p = Promise.resolve(0);
    for (let i = 0; i < 1000; i++) p = p.then((n) => n + 1);
    out.chain = await p;
    // Promise.all mixing timers and plain values.
    out.all = await Promise.all([1, new Promise((r) => setTimeout(() => r(2), 5)), Promise.resolve(3), new Promise((r) => setTimeout(r, 0, 4))]);
    // Timers firing while other work is pending.
    const seen = [];
    const slow = new Promise((r) => setTimeout(() => { seen.push("slow"); r(); }, 20));
    await new Promise((r) => setTimeout(() => { seen.push("fast"); r(); }, 1));
    seen.push("between");
    await slow;
    out.pending = seen;
    // Mixed async patterns: async/await, then-chains, microtasks, nested timers.
    const mixed = [];
    await new Promise((resolve) => {
      setTimeout(() => {
        mixed.push("t1");
        queueMicrotask(() => mixed.push("m1"));
        Promise.resolve().then(() => mixed.push("p1")).then(() => setTimeout(() => { mixed.push("t2"); resolve(); }, 0));
      }, 0);
    });
    out.mixed = mixed;
    out.clock = performance.now() > 0 && performance.now() <= performance.now();
    return out;`);
  assert.equal(result.chain, 1000);
  assert.deepEqual(result.all, [1, 2, 3, 4]);
  assert.deepEqual(result.pending, ["fast", "between", "slow"]);
  assert.deepEqual(result.mixed, ["t1", "m1", "p1", "t2"]);
  assert.equal(result.clock, true);
});

function workerThreadCpuTicks() {
  let ticks = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
      if (!name.startsWith("wb-")) continue;
      // Fields after the ")" of the name: utime and stime are the 12th and 13th of them.
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return ticks;
}

test("idle workers use no CPU: their threads' CPU time does not grow over a quiet second", async (t) => {
  // Spares left by earlier tests would be reclaimed (disposed) during the quiet second; the
  // spare these workers get (booted well before the window) idles like them.
  await clearPool();
  const workers = await Promise.all(Array.from({ length: 5 }, () => useWorker(t, { script: `export default { fetch() { return new Response("") } }` })));
  for (const worker of workers) await dispatch(worker, "http://localhost/");
  // Work the requests left (finishing on background threads) settles first: ten times longer under an emulator.
  await new Promise((resolve) => setTimeout(resolve, scaled(100)));
  const before = workerThreadCpuTicks();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = workerThreadCpuTicks();
  // Clock ticks are 10 ms: a polling loop in 10 threads would burn far more than one tick.
  assert.ok(after - before <= 1, `worker threads used ${after - before} ticks while idle`);
});

test("WebAssembly compiles and instantiates through the promise APIs without hanging", async (t) => {
  // (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
  const result = await evalInWorker(t, `
    const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3, 97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11]);
    const module = await WebAssembly.compile(bytes);
    const { instance } = await WebAssembly.instantiate(bytes);
    const second = await WebAssembly.instantiate(module);
    return [instance.exports.add(2, 3), second.exports.add(40, 2), new WebAssembly.Instance(module).exports.add(1, 1)];`);
  assert.deepEqual(result, [5, 42, 2]);
});

test("a ReadableStream whose start() enqueues and closes synchronously is read to the end", async (t) => {
  const result = await evalInWorker(t, `
    const stream = new ReadableStream({ start(controller) { controller.enqueue("a"); controller.enqueue("b"); controller.close(); } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const reader = new ReadableStream({ start(c) { c.close(); } }).getReader();
    const empty = await reader.read();
    const piped = [];
    await new ReadableStream({ start(c) { c.enqueue(1); c.enqueue(2); c.close(); } })
      .pipeThrough(new TransformStream({ transform(chunk, c) { c.enqueue(chunk * 10); } }))
      .pipeTo(new WritableStream({ write(chunk) { piped.push(chunk); } }));
    return { chunks, empty, piped };`);
  assert.deepEqual(result, { chunks: ["a", "b"], empty: { done: true }, piped: [10, 20] });
});
