// Faults: scripts that loop forever, exhaust memory or overflow the stack are stopped with an
// error naming the limit; the worker restarts with a fresh isolate and keeps serving; the host
// process never crashes or hangs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { useWorker, waitFor } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const ROUTES = `
  let served = 0;
  export default { async fetch(request) {
    served++;
    const path = new URL(request.url).pathname;
    if (path === "/spin") while (true) {}
    if (path === "/spin-later") { await new Promise((r) => setTimeout(r, 5)); while (true) {} }
    if (path === "/microtasks") { const loop = () => Promise.resolve().then(loop); loop(); await new Promise(() => setTimeout(() => {}, 60000)); }
    if (path === "/arrays") { const keep = []; while (true) keep.push(new Array(100000).fill(keep.length)); }
    if (path === "/strings") { const keep = []; let s = "x"; while (true) { s = s + s; keep.push(s.slice(1)); } }
    if (path === "/buffers") { const keep = []; while (true) keep.push(new ArrayBuffer(16 * 1024 * 1024)); }
    if (path === "/recurse") { const f = (n) => f(n + 1) + 1; return new Response(String(f(0))); }
    if (path === "/slow") await new Promise((r) => setTimeout(r, 60000));
    return new Response("served " + served);
  } };`;

async function expectLimit(worker, path, code, pattern) {
  await assert.rejects(dispatch(worker, `http://localhost${path}`), (error) => {
    assert.equal(error.code, code, `${path}: ${error.stack}`);
    assert.match(error.message, pattern);
    return true;
  });
  // The worker restarted with a fresh isolate and serves again (module state is new).
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "served 1");
}

test("an infinite loop is stopped by limits.cpuMs, and the worker restarts", async (t) => {
  const lines = [];
  // The restarted isolate's first request must fit the limit too (an emulator's is 10 times slower).
  const worker = await useWorker(t, { script: ROUTES, limits: { cpuMs: scaled(50) }, onLog: (level, m) => lines.push([level, m]) });
  await expectLimit(worker, "/spin", "ERR_CPU_LIMIT", new RegExp(`CPU time limit of ${scaled(50)} ms \\(limits\\.cpuMs\\)`));
  await expectLimit(worker, "/spin-later", "ERR_CPU_LIMIT", /limits\.cpuMs/);
  assert.ok(lines.some(([level, m]) => level === "warn" && /restarted with a fresh isolate/.test(m)));
});

test("a tight loop V8's optimizing compiler would unroll is stopped too (it lost its interrupt check in V8 15.2)", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch(request) {
      if (request.url.endsWith("/ok")) return new Response("fine");
      let a;
      for (;;) { a = new Array(1000); a.fill(0); }
    } }`,
    limits: { cpuMs: 100 },
  });
  await assert.rejects(dispatch(worker, "http://localhost/"), (e) => e.code === "ERR_CPU_LIMIT" && /limits\.cpuMs/.test(e.message));
  assert.equal(await (await dispatch(worker, "http://localhost/ok")).text(), "fine");
});

test("an infinite microtask loop is stopped too", async (t) => {
  const worker = await useWorker(t, { script: ROUTES, limits: { cpuMs: 50 } });
  await expectLimit(worker, "/microtasks", "ERR_CPU_LIMIT", /limits\.cpuMs/);
});

test("limits.wallMs stops JavaScript that never yields, even with no CPU limit", async (t) => {
  const worker = await useWorker(t, { script: ROUTES, limits: { cpuMs: 0, wallMs: 100 } });
  await expectLimit(worker, "/spin", "ERR_WALL_LIMIT", /wall-clock limit of 100 ms/);
});

test("other requests in flight on a stopped isolate fail with a clear error", async (t) => {
  const worker = await useWorker(t, { script: ROUTES, limits: { cpuMs: 50 } });
  const waiting = dispatch(worker, "http://localhost/slow").then(() => "answered", (e) => e);
  await new Promise((resolve) => setTimeout(resolve, 20));
  await assert.rejects(dispatch(worker, "http://localhost/spin"), (e) => e.code === "ERR_CPU_LIMIT");
  const other = await waiting;
  assert.equal(other.code, "ERR_WORKER_RECYCLED");
  assert.match(other.message, /cancelled because the worker restarted.*limits\.cpuMs/);
});

for (const [path, what] of [["/arrays", "growing arrays"], ["/strings", "huge strings"], ["/buffers", "huge ArrayBuffers"]]) {
  test(`a memory bomb of ${what} never crashes the host`, async (t) => {
    const worker = await useWorker(t, { script: ROUTES, limits: { memoryMb: 64, cpuMs: 10000 } });
    const error = await dispatch(worker, `http://localhost${path}`).then(() => null, (e) => e);
    assert.ok(error, "the bomb request failed");
    // Either the memory limit stopped the isolate, or V8 refused the allocation with a
    // RangeError inside the script (huge strings, capped ArrayBuffers); both are clean.
    assert.ok(error.code === "ERR_MEMORY_LIMIT" || error.name === "RangeError", `${error.code} ${error.stack}`);
    if (error.code === "ERR_MEMORY_LIMIT") assert.match(error.message, /memory limit of 64 MB \(limits\.memoryMb\)/);
    const res = await dispatch(worker, "http://localhost/");
    assert.match(await res.text(), /^served \d+$/);
  });
}

test("a stack overflow is a RangeError in the worker, which keeps serving", async (t) => {
  const worker = await useWorker(t, { script: ROUTES });
  await assert.rejects(dispatch(worker, "http://localhost/recurse"), (e) => e.name === "RangeError" && /call stack/i.test(e.message));
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "served 2");
});

test("a script that loops forever at start-up fails createWorker with the CPU limit", async () => {
  await assert.rejects(
    createWorker({ script: "while (true) {}\nexport default { fetch() {} }", limits: { cpuMs: 50 }, onLog() {} }),
    (e) => e.code === "ERR_CPU_LIMIT" && /limits\.cpuMs/.test(e.message),
  );
});

test("dispose stops a worker stuck in a loop and answers its requests", async () => {
  const worker = await createWorker({ script: ROUTES, limits: { cpuMs: 0, wallMs: 0 }, onLog() {} });
  const stuck = assert.rejects(dispatch(worker, "http://localhost/spin"), (e) => e.code === "ERR_WORKER_DISPOSED");
  await new Promise((resolve) => setTimeout(resolve, 30));
  await worker.dispose();
  await stuck;
});

test("CPU time is summed per request across awaits, and charged to the request that used it", async (t) => {
  const worker = await useWorker(t, {
    limits: { cpuMs: 100 },
    script: `export default { async fetch(request) {
      const spin = (ms) => { const end = Date.now() + ms; while (Date.now() < end) {} };
      if (new URL(request.url).pathname === "/greedy") {
        // 15 stretches of 20 ms: each is under the limit, together they are not (ten times as many
        // under an emulator, whose niced, loaded thread gets only part of each 20 ms of wall time).
        for (let i = 0; i < ${scaled(15)}; i++) { spin(20); await new Promise((r) => setTimeout(r, 1)); }
        return new Response("finished");
      }
      spin(20);
      await new Promise((r) => setTimeout(r, 1));
      spin(20);
      return new Response("modest");
    } }`,
  });
  // A request using 40 ms of CPU in two stretches is fine.
  assert.equal(await (await dispatch(worker, "http://localhost/modest")).text(), "modest");
  await assert.rejects(dispatch(worker, "http://localhost/greedy"), (e) => e.code === "ERR_CPU_LIMIT" && /100 ms/.test(e.message));
  assert.equal(await (await dispatch(worker, "http://localhost/modest")).text(), "modest");
});
