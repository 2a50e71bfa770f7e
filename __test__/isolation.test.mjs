// isolation: "per-request": every request runs in a fresh context (the script evaluated anew),
// its leftovers are cleared when it is over, and the warm isolate is replaced after an error
// or after maxReuse contexts — without losing queued requests.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { useWorker, waitFor } from "./helpers.mjs";

const COUNTER = `
let count = 0;
globalThis.touched = (globalThis.touched ?? 0);
export default {
  async fetch(request) {
    count++;
    globalThis.touched++;
    const polluted = [].polluted === true;
    Array.prototype.polluted = true;
    const path = new URL(request.url).pathname;
    if (path === "/fail") throw new RangeError("failed on purpose");
    if (path === "/slow") await new Promise((resolve) => setTimeout(resolve, 20));
    return Response.json({ count, touched: globalThis.touched, polluted });
  },
};`;

async function json(worker, path = "/") {
  return (await dispatch(worker, `http://localhost${path}`)).json();
}

test("shared (default): requests share module globals, as in production", async (t) => {
  const worker = await useWorker(t, { script: COUNTER });
  assert.deepEqual(await json(worker), { count: 1, touched: 1, polluted: false });
  assert.deepEqual(await json(worker), { count: 2, touched: 2, polluted: true });
});

test("per-request: each request sees a fresh module scope, globals and builtins", async (t) => {
  const worker = await useWorker(t, { script: COUNTER, isolation: "per-request" });
  for (let i = 0; i < 5; i++) {
    assert.deepEqual(await json(worker), { count: 1, touched: 1, polluted: false });
  }
  // Concurrent requests each get their own context too.
  const all = await Promise.all(Array.from({ length: 20 }, (_, i) => json(worker, i % 2 ? "/slow" : "/")));
  for (const body of all) assert.deepEqual(body, { count: 1, touched: 1, polluted: false });
});

test("per-request: a failed request does not break the next ones (the isolate is renewed)", async (t) => {
  const worker = await useWorker(t, { script: COUNTER, isolation: "per-request" });
  await assert.rejects(dispatch(worker, "http://localhost/fail"), (error) => {
    assert.equal(error.name, "RangeError");
    assert.equal(error.message, "failed on purpose");
    assert.match(error.stack, /worker\.js:\d+/);
    return true;
  });
  // Concurrent requests across the renewal: none is lost, each sees a fresh scope.
  const mixed = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => json(worker, i % 4 === 0 ? "/fail" : "/slow")));
  mixed.forEach((outcome, i) => {
    if (i % 4 === 0) assert.equal(outcome.status, "rejected");
    else assert.deepEqual(outcome.value, { count: 1, touched: 1, polluted: false });
  });
  assert.deepEqual(await json(worker), { count: 1, touched: 1, polluted: false });
});

test("per-request: maxReuse 1 renews the isolate after every request; queued requests survive", async (t) => {
  const worker = await useWorker(t, { script: COUNTER, isolation: "per-request", maxReuse: 1, limits: { maxInFlight: 4 } });
  const all = await Promise.all(Array.from({ length: 24 }, (_, i) => json(worker, i % 3 ? "/" : "/slow")));
  for (const body of all) assert.deepEqual(body, { count: 1, touched: 1, polluted: false });
});

test("timers a request leaves behind are cleared once it is over, in both isolation modes", async (t) => {
  // The interval ticks while the event's waitUntil keeps it alive (so the check is not vacuous),
  // and stops once the event is over.
  const script = `export default { fetch(request, env, ctx) {
    setInterval(() => console.log("tick"), 2);
    ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 30)));
    return new Response("ok");
  } }`;
  for (const isolation of ["shared", "per-request"]) {
    const lines = [];
    const worker = await useWorker(t, { script, isolation, onLog: (level, message) => lines.push(message) });
    assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "ok");
    await worker.waitUntilSettled();
    const count = () => lines.filter((l) => l === "tick").length;
    const ticks = count();
    assert.ok(ticks > 0, `${isolation}: the interval ran while the event lived`);
    // A tick already on its way when the event ended may still land; a live 2 ms interval would
    // add dozens over the next 100 ms.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = count();
    assert.ok(after - ticks <= 1, `${isolation}: ${after - ticks} ticks after the event was over`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(count(), after, `${isolation}: the interval is stopped`);
  }
});

test("per-request: waitUntil work and streamed bodies outlive the response, then the context goes", async (t) => {
  const script = `export default { fetch(request, env, ctx) {
    ctx.waitUntil(new Promise((resolve) => setTimeout(() => { console.log("background done"); resolve(); }, 20)));
    let n = 0;
    const body = new ReadableStream({
      pull(controller) {
        return new Promise((resolve) => setTimeout(() => {
          if (++n > 3) controller.close(); else controller.enqueue(new TextEncoder().encode("chunk" + n + ";"));
          resolve();
        }, 5));
      },
    });
    return new Response(body);
  } }`;
  const lines = [];
  const worker = await useWorker(t, { script, isolation: "per-request", onLog: (level, message) => lines.push(message) });
  const response = await dispatch(worker, "http://localhost/");
  assert.equal(await response.text(), "chunk1;chunk2;chunk3;");
  await worker.waitUntilSettled();
  assert.ok(lines.includes("background done"), `logs: ${JSON.stringify(lines)}`);
});

test("per-request: a waitUntil promise that can never settle does not pin the context", async (t) => {
  const script = `let n = 0; export default { fetch(request, env, ctx) {
    ctx.waitUntil(new Promise(() => {}));
    return new Response(String(++n));
  } }`;
  const lines = [];
  const worker = await useWorker(t, { script, isolation: "per-request", maxReuse: 2, onLog: (level, message) => lines.push(message) });
  for (let i = 0; i < 4; i++) assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "1");
  await worker.waitUntilSettled();
  await waitFor(() => lines.some((l) => /will never settle/.test(l)));
});

test("per-request: request bodies, bindings and the service-worker format work in fresh contexts", async (t) => {
  const { kv } = await import("../index.js");
  const worker = await useWorker(t, {
    isolation: "per-request",
    script: `let seen = 0;
      addEventListener("fetch", (event) => event.respondWith((async () => {
        seen++;
        const text = await event.request.text();
        await STORE.put("last", text);
        return new Response(seen + ":" + (await STORE.get("last")));
      })()));`,
    bindings: { STORE: kv() },
  });
  for (const word of ["one", "two"]) {
    const response = await dispatch(worker, { url: "http://localhost/", method: "POST", body: word });
    assert.equal(await response.text(), `1:${word}`);
  }
});

test("per-request: options are checked", async () => {
  await assert.rejects(createWorker({ script: COUNTER, isolation: "fresh" }), /options\.isolation must be "shared".*"per-request"/);
  await assert.rejects(createWorker({ script: COUNTER, isolation: "per-request", maxReuse: 0 }), /options\.maxReuse must be a positive integer/);
  await assert.rejects(createWorker({ script: COUNTER, maxReuse: 5 }), /maxReuse applies only with isolation: "per-request"/);
});

test("per-request: cron events get fresh contexts too", async (t) => {
  const lines = [];
  const worker = await useWorker(t, {
    isolation: "per-request",
    script: `let n = 0; export default { scheduled(controller) { n++; console.log(controller.cron + " n=" + n); } };`,
    onLog: (level, message) => lines.push(message),
  });
  for (const cron of ["*/5 * * * *", "0 0 * * *"]) {
    assert.deepEqual(await dispatch(worker, { type: "scheduled", cron }), { outcome: "ok", noRetry: false });
  }
  await waitFor(() => lines.length >= 2);
  assert.deepEqual(lines, ["*/5 * * * * n=1", "0 0 * * * n=1"]);
});

test("per-request: a script whose top level leaves an unhandled rejection still serves (no renewal loop)", async (t) => {
  const lines = [];
  const worker = await useWorker(t, {
    isolation: "per-request",
    script: `Promise.reject(new Error("top-level rejection")); let n = 0; export default { fetch() { return new Response(String(++n)); } };`,
    onLog: (level, message) => lines.push(message),
  });
  for (let i = 0; i < 5; i++) assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "1");
  assert.ok(lines.some((l) => /top-level rejection/.test(l)), JSON.stringify(lines));
});
