// nodejs_compat: `node:` imports and AsyncLocalStorage following the logical async flow.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, kv } from "../index.js";
import { useWorker } from "./helpers.mjs";

const ALS_SCRIPT = `
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
const als = new AsyncLocalStorage();
const target = new EventTarget();
let heard;
target.addEventListener("ping", () => { heard = als.getStore()?.id; });
export default { async fetch(request, env, ctx) {
  const id = new URL(request.url).searchParams.get("id");
  return als.run({ id }, async () => {
    const seen = {};
    seen.sync = als.getStore()?.id;
    await null;
    seen.await = als.getStore()?.id;
    await new Promise((resolve) => setTimeout(resolve, Number(id) % 5));
    seen.afterTimer = als.getStore()?.id;
    seen.inTimer = await new Promise((resolve) => setTimeout(() => resolve(als.getStore()?.id), 1));
    seen.inInterval = await new Promise((resolve) => { const t = setInterval(() => { clearInterval(t); resolve(als.getStore()?.id); }, 1); });
    seen.inMicrotask = await new Promise((resolve) => queueMicrotask(() => resolve(als.getStore()?.id)));
    target.dispatchEvent(new Event("ping"));
    seen.inListener = heard;
    await env.KV.put("k" + id, id);
    seen.afterBinding = als.getStore()?.id;
    const chunks = [];
    await new ReadableStream({ pull(c) { chunks.push(als.getStore()?.id); c.close(); } }).getReader().read();
    seen.inStream = chunks[0];
    let inWaitUntil;
    ctx.waitUntil(Promise.resolve().then(() => { inWaitUntil = als.getStore()?.id; }));
    await new Promise((resolve) => setTimeout(resolve, 1));
    seen.inWaitUntil = inWaitUntil;
    const resource = new AsyncResource("job");
    seen.resource = als.run({ id: "other" }, () => resource.runInAsyncScope(() => als.getStore()?.id));
    seen.exit = String(als.exit(() => als.getStore()));
    seen.bound = als.run({ id: "other" }, () => AsyncLocalStorage.bind(() => als.getStore()?.id))();
    return Response.json(seen);
  });
} }`;

test("AsyncLocalStorage follows each request through awaits, timers, microtasks, listeners, bindings, streams and waitUntil", async (t) => {
  const worker = await useWorker(t, { script: ALS_SCRIPT, compatibilityFlags: ["nodejs_compat"], bindings: { KV: kv() } });
  // 40 concurrent requests interleave in one isolate: none may see another's store.
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => dispatch(worker, `http://localhost/?id=${i}`).then((r) => r.json())));
  results.forEach((seen, i) => {
    const id = String(i);
    assert.deepEqual(seen, {
      sync: id, await: id, afterTimer: id, inTimer: id, inInterval: id, inMicrotask: id, inListener: id,
      afterBinding: id, inStream: id, inWaitUntil: id, resource: id, exit: "undefined", bound: "other",
    });
  });
});

test("a request outside als.run() sees no store, even right after one that used it", async (t) => {
  const worker = await useWorker(t, {
    compatibilityFlags: ["nodejs_compat"],
    script: `import { AsyncLocalStorage } from "node:async_hooks";
      const als = new AsyncLocalStorage();
      export default { async fetch(request) {
        if (request.url.endsWith("/enter")) { als.enterWith("leaked?"); setTimeout(() => {}, 0); return new Response("entered"); }
        await null;
        return new Response(String(als.getStore()));
      } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/enter")).text(), "entered");
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "undefined");
});

test("node: imports: named and default exports, bare specifiers, and workerd's message for modules not there", async (t) => {
  const worker = await useWorker(t, {
    compatibilityFlags: ["nodejs_compat"],
    script: `import hooks, { AsyncLocalStorage } from "node:async_hooks";
      import bare from "async_hooks";
      export default { fetch() { return Response.json([hooks.AsyncLocalStorage === AsyncLocalStorage, bare === hooks, typeof hooks.AsyncResource]); } }`,
  });
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), [true, true, "function"]);
  await assert.rejects(
    createWorker({ compatibilityFlags: ["nodejs_compat"], script: `import nope from "node:nope"; export default { fetch() {} }`, onLog() {} }),
    (error) => error.name === "Error" && /^No such module "node:nope"\. The worker may import node:_http_agent, .*node:assert, node:assert\/strict, node:async_hooks, node:buffer, /.test(error.message),
  );
});

test("without nodejs_compat, node: imports do not resolve (workerd's error, and what it needs)", async () => {
  await assert.rejects(
    createWorker({ compatibilityDate: "2024-01-01", script: `import { AsyncLocalStorage } from "node:async_hooks"; export default { fetch() {} }`, onLog() {} }),
    /^Error: No such module "node:async_hooks"\. node: modules need the nodejs_compat compatibility flag/,
  );
  await assert.rejects(
    createWorker({ compatibilityFlags: ["no_nodejs_compat"], script: `import { AsyncLocalStorage } from "node:async_hooks"; export default { fetch() {} }`, onLog() {} }),
    /No such module "node:async_hooks"/,
  );
});

test("AsyncLocalStorage keeps each request's store across await fetch() to a loopback server", async (t) => {
  const http = await import("node:http");
  const server = http.createServer((req, res) => setTimeout(() => res.end(req.url), 5));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const worker = await useWorker(t, {
    compatibilityFlags: ["nodejs_compat"],
    script: `import { AsyncLocalStorage } from "node:async_hooks";
      const als = new AsyncLocalStorage();
      export default { fetch(request) {
        const id = new URL(request.url).searchParams.get("id");
        return als.run({ id }, async () => {
          const response = await fetch("http://127.0.0.1:${server.address().port}/echo/" + id);
          const afterFetch = als.getStore()?.id;
          const body = await response.text();
          const afterBody = als.getStore()?.id;
          const inThen = await fetch("http://127.0.0.1:${server.address().port}/x").then(() => als.getStore()?.id);
          return Response.json({ afterFetch, afterBody, inThen, body });
        });
      } }`,
  });
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => dispatch(worker, `http://localhost/?id=${i}`).then((r) => r.json())));
  results.forEach((seen, i) => assert.deepEqual(seen, { afterFetch: String(i), afterBody: String(i), inThen: String(i), body: `/echo/${i}` }));
});

test("nodejs_als alone makes node:async_hooks importable (and nothing else), as in workerd", async (t) => {
  const worker = await useWorker(t, {
    compatibilityDate: "2024-01-01",
    compatibilityFlags: ["nodejs_als"],
    script: `import { AsyncLocalStorage } from "node:async_hooks";
      const als = new AsyncLocalStorage();
      export default { fetch() { return als.run("kept", async () => { await null; return new Response(als.getStore() + " " + typeof Buffer); }); } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "kept undefined");
  await assert.rejects(
    createWorker({ compatibilityDate: "2024-01-01", compatibilityFlags: ["nodejs_als"], script: `import "node:buffer"; export default { fetch() {} }`, onLog() {} }),
    /^Error: No such module "node:buffer"\. The worker may import node:async_hooks\.$/,
  );
  await assert.rejects(
    createWorker({ compatibilityDate: "2024-01-01", compatibilityFlags: ["nodejs_als"], script: `import "async_hooks"; export default { fetch() {} }`, onLog() {} }),
    /Cannot resolve module "async_hooks"/,
  );
});
