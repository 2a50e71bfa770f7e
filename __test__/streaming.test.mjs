// Bodies stream chunk by chunk between Node and the worker, in both directions, with
// backpressure and cancellation; and outbound fetch() bodies stream to and from a real HTTP
// server on 127.0.0.1 (started here).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import crypto from "node:crypto";
import { dispatch, service } from "../index.js";
import { useWorker, waitFor } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

/** A promise with its resolve function, for gating one side on the other. */
function gate() {
  let open;
  const promise = new Promise((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const text = (chunk) => Buffer.from(chunk).toString();

test("response bodies reach Node chunk by chunk, while the worker is still producing them", async (t) => {
  const go = gate();
  const worker = await useWorker(t, {
    bindings: { GATE: service(async () => (await go.promise, new Response("open"))) },
    script: `export default { async fetch(request, env) {
      const encoder = new TextEncoder();
      return new Response(new ReadableStream({
        async start(controller) {
          controller.enqueue(encoder.encode("first;"));
          await env.GATE.fetch("http://gate/");  // waits until the host has read "first;"
          controller.enqueue(encoder.encode("second"));
          controller.close();
        },
      }), { headers: { "content-type": "text/plain" } });
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  assert.equal(response.headers.get("content-type"), "text/plain");
  const reader = response.body.getReader();
  const first = await reader.read();
  assert.equal(text(first.value), "first;");
  go.open();
  const rest = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(text(r.value));
  assert.equal(rest.join(""), "second");
});

test("a returned body is first read in the microtask turn workerd reads it in (a streaming render's first chunk holds what finished by then)", async (t) => {
  // Each path logs the microtasks m1…m8 queued before the handler returned, and "pull" when the
  // body is first read. The expected lines are what the workerd binary of the Miniflare
  // devDependency answered for the same script (compatibility date 2025-09-01).
  const worker = await useWorker(t, {
    script: `export default { fetch(request) {
      const log = [];
      const stream = new ReadableStream({ pull(c) { log.push("pull"); c.enqueue(new TextEncoder().encode(log.join(","))); c.close(); } }, { highWaterMark: 0 });
      let p = Promise.resolve();
      for (let i = 1; i <= 8; i++) p = p.then(() => log.push("m" + i));
      switch (new URL(request.url).pathname) {
        case "/async": return (async () => { await null; return new Response(stream); })();
        case "/async0": return (async () => new Response(stream))();
        case "/async2": return (async () => { await null; await null; return new Response(stream); })();
        case "/thenable": return { then(resolve) { log.push("then"); resolve(new Response(stream)); } };
        case "/resolved": return Promise.resolve(new Response(stream));
        default: return new Response(stream);
      }
    } };`,
  });
  const seen = {};
  for (const path of ["/", "/async", "/async0", "/async2", "/thenable", "/resolved"]) {
    seen[path] = await (await dispatch(worker, new Request(`http://x${path}`))).text();
  }
  assert.deepEqual(seen, {
    "/": "m1,pull",
    "/async": "m1,m2,m3,pull",
    "/async0": "m1,m2,pull",
    "/async2": "m1,m2,m3,m4,pull",
    "/thenable": "m1,then,m2,m3,pull",
    "/resolved": "m1,m2,pull",
  });
});

test("a slow reader in Node slows the worker's stream (backpressure)", async (t) => {
  const worker = await useWorker(t, {
    script: `let produced = 0;
    export default { async fetch(request) {
      if (new URL(request.url).pathname === "/produced") return Response.json(produced);
      const chunk = new Uint8Array(16 * 1024);
      return new Response(new ReadableStream({
        pull(controller) {
          if (produced === 1000) return controller.close();
          produced++;
          controller.enqueue(chunk.slice());
        },
      }));
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  const reader = response.body.getReader();
  await reader.read();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const whilePaused = await (await dispatch(worker, "http://localhost/produced")).json();
  // 1000 chunks would be 16 MB; only about the host's 64 KB window (plus a few in flight) is made.
  assert.ok(whilePaused < 16, `the worker produced ${whilePaused} chunks while the host read one`);
  let total = 16 * 1024;
  for (let r = await reader.read(); !r.done; r = await reader.read()) total += r.value.byteLength;
  assert.equal(total, 1000 * 16 * 1024);
  assert.equal(await (await dispatch(worker, "http://localhost/produced")).json(), 1000);
});

test("cancelling the body in Node cancels the worker's stream, with the reason", async (t) => {
  const worker = await useWorker(t, {
    script: `let cancelled = null;
    export default { async fetch(request) {
      if (new URL(request.url).pathname === "/state") return Response.json(cancelled);
      return new Response(new ReadableStream({
        pull(controller) { controller.enqueue(new Uint8Array(1024)); },
        cancel(reason) { cancelled = String(reason); },
      }));
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  const reader = response.body.getReader();
  await reader.read();
  await reader.cancel("enough");
  assert.equal(await cancelledReason(worker), "enough");
});

// A worker response body that gives one chunk and then never another, while an interval keeps
// the event alive; its stream's cancel() records the reason in the script's `cancelled`.
const STUCK_BODY = `let first = true;
      return new Response(new ReadableStream({
        pull(controller) {
          if (first) { first = false; controller.enqueue(new TextEncoder().encode("head;")); return; }
          setInterval(() => {}, 20);
          return new Promise(() => {});
        },
        cancel(reason) { cancelled = String(reason); },
      }));`;

/** Polls the worker's /state (its `cancelled`) until the stream's cancel() has run, for up to 5 s. */
async function cancelledReason(worker) {
  let state = null;
  for (const deadline = Date.now() + scaled(5000); state === null && Date.now() < deadline; ) {
    state = await (await dispatch(worker, "http://localhost/state")).json();
    if (state === null) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return state;
}

test("a body that stops producing while a timer keeps the worker busy errors the read after limits.bodyIdleMs, and is cancelled in the worker", async (t) => {
  const worker = await useWorker(t, {
    // The bound and the pauses around it are ten times longer under an emulator (the worker's
    // steady 100 ms chunks stay well inside it).
    limits: { bodyIdleMs: scaled(300) },
    script: `let cancelled = null;
    export default { async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/state") return Response.json(cancelled);
      if (path === "/steady") {
        // A chunk every 100 ms: never idle for 300 ms.
        let n = 0;
        return new Response(new ReadableStream({ async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          if (++n > 5) controller.close(); else controller.enqueue(new TextEncoder().encode("chunk " + n + ";"));
        } }));
      }
      ${STUCK_BODY}
    } }`,
  });
  const started = Date.now();
  const response = await dispatch(worker, "http://localhost/stall");
  const reader = response.body.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), "head;");
  await assert.rejects(reader.read(), (error) => error.code === "ERR_BODY_STALLED" && error.message.includes(`${scaled(300)} ms`) && /limits\.bodyIdleMs/.test(error.message));
  const took = Date.now() - started;
  assert.ok(took >= scaled(250) && took < scaled(5000), `stalled after ${took} ms`);
  const state = await cancelledReason(worker);
  assert.match(String(state), /bodyIdleMs/);
  // A body that keeps producing, and a reader that pauses longer than the bound, are fine.
  const steady = await dispatch(worker, "http://localhost/steady");
  await new Promise((resolve) => setTimeout(resolve, scaled(600)));
  assert.equal(await steady.text(), "chunk 1;chunk 2;chunk 3;chunk 4;chunk 5;");
});

test("cancelling in Node a body whose worker stream is stuck cancels the worker's stream at once", async (t) => {
  const worker = await useWorker(t, {
    script: `let cancelled = null;
    export default { async fetch(request) {
      if (new URL(request.url).pathname === "/state") return Response.json(cancelled);
      ${STUCK_BODY}
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/stuck");
  const reader = response.body.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), "head;");
  // Let the worker's pump go back to waiting on its stream before the cancel.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await reader.cancel("the client went away");
  const state = await cancelledReason(worker);
  assert.equal(state, "the client went away");
});

test("an error in the worker's stream errors the body in Node with the worker's message", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch() {
      let n = 0;
      return new Response(new ReadableStream({
        pull(controller) {
          if (n++ === 0) controller.enqueue(new TextEncoder().encode("partial"));
          else controller.error(new RangeError("generator broke"));
        },
      }));
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  const reader = response.body.getReader();
  assert.equal(text((await reader.read()).value), "partial");
  await assert.rejects(reader.read(), (error) => error.name === "RangeError" && /generator broke/.test(error.message));
});

test("a worker stream that produces strings errors the body with a TypeError", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch() { return new Response(new ReadableStream({ start(c) { c.enqueue("not bytes"); c.close(); } })); } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  await assert.rejects(response.text(), (error) => error.name === "TypeError" && /Uint8Array/.test(error.message));
});

test("disposing the worker errors a response body still streaming", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch() {
      return new Response(new ReadableStream({ async pull(c) { await scheduler.wait(5); c.enqueue(new Uint8Array(8)); } }));
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  const reader = response.body.getReader();
  await reader.read();
  await worker.dispose();
  await assert.rejects(async () => {
    for (;;) if ((await reader.read()).done) break;
  }, /worker stopped before the response body was complete/);
});

test("request bodies stream into the worker as it reads them", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch(request) {
      const reader = request.body.getReader();
      const first = await reader.read();
      return new Response(first.value);  // answers before the host's stream has finished
    } }`,
  });
  let pulls = 0;
  let cancelledWith = null;
  const body = new ReadableStream({
    async pull(controller) {
      pulls++;
      if (pulls === 1) controller.enqueue(new TextEncoder().encode("head of a long upload"));
      else await new Promise(() => {}); // the rest never comes
    },
    cancel(reason) {
      cancelledWith = String(reason);
    },
  });
  const response = await dispatch(worker, { url: "http://localhost/", method: "POST", body });
  assert.equal(await response.text(), "head of a long upload");
  // Once the response is complete, the unread rest of the request body is cancelled.
  await waitFor(() => cancelledWith !== null);
});

test("the worker cancelling the request body cancels Node's stream", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch(request) {
      const reader = request.body.getReader();
      await reader.read();
      await reader.cancel("seen enough");
      return new Response("ok");
    } }`,
  });
  let cancelledWith = null;
  const body = new ReadableStream({
    pull(controller) {
      controller.enqueue(new Uint8Array(100));
    },
    cancel(reason) {
      cancelledWith = reason;
    },
  });
  const response = await dispatch(worker, { url: "http://localhost/", method: "PUT", body });
  assert.equal(await response.text(), "ok");
  await waitFor(() => cancelledWith !== null);
  assert.equal(cancelledWith, "seen enough");
});

test("every kind of request body reaches the worker, with the content-type it implies", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch(request) {
      const type = request.headers.get("content-type");
      if (type && type.startsWith("multipart/form-data")) {
        const form = await request.formData();
        const file = form.get("file");
        return Response.json({ type: "multipart", name: form.get("name"), file: [file.name, file.type, await file.text()] });
      }
      return Response.json({ type, text: await request.text() });
    } }`,
  });
  const send = async (body, extra = {}) => (await dispatch(worker, { url: "http://localhost/", method: "POST", body, ...extra })).json();
  assert.deepEqual(await send("plain"), { type: null, text: "plain" });
  assert.deepEqual(await send(Buffer.from("buffer")), { type: null, text: "buffer" });
  assert.deepEqual(await send(new Uint16Array([0x6968])), { type: null, text: "hi" });
  assert.deepEqual(await send(new URLSearchParams({ a: "1 2", b: "&" })), { type: "application/x-www-form-urlencoded;charset=UTF-8", text: "a=1+2&b=%26" });
  assert.deepEqual(await send(new Blob(["from ", "a blob"], { type: "text/x-blob" })), { type: "text/x-blob", text: "from a blob" });
  const form = new FormData();
  form.append("name", "Ada");
  form.append("file", new Blob(["file body"], { type: "text/plain" }), "notes.txt");
  assert.deepEqual(await send(form), { type: "multipart", name: "Ada", file: ["notes.txt", "text/plain", "file body"] });
  const request = new Request("http://localhost/", { method: "POST", body: "from a Request", headers: { "content-type": "text/x-req" } });
  assert.deepEqual(await (await dispatch(worker, request)).json(), { type: "text/x-req", text: "from a Request" });
  await assert.rejects(dispatch(worker, { url: "http://localhost/", method: "POST", body: { not: "a body" } }), /request\.body must be/);
});

test("100 MB passes through the worker (echoed) with bounded memory", async (t) => {
  const worker = await useWorker(t, { script: `export default { fetch(request) { return new Response(request.body); } }` });
  const CHUNK = 64 * 1024;
  const COUNT = 1600; // 100 MiB
  const expected = crypto.createHash("sha256");
  let sent = 0;
  const body = new ReadableStream({
    pull(controller) {
      if (sent === COUNT) return controller.close();
      const chunk = crypto.randomBytes(CHUNK);
      expected.update(chunk);
      sent++;
      controller.enqueue(chunk);
    },
  });
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  try {
    const response = await dispatch(worker, { url: "http://localhost/", method: "POST", body });
    const actual = crypto.createHash("sha256");
    let received = 0;
    for await (const chunk of response.body) {
      actual.update(chunk);
      received += chunk.byteLength;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    assert.equal(received, CHUNK * COUNT);
    assert.equal(actual.digest("hex"), expected.digest("hex"));
  } finally {
    clearInterval(sampler);
  }
  // Holding the body anywhere whole would take at least 100 MB more (the worker's copy alone).
  const grewMb = (peak - before) / 2 ** 20;
  assert.ok(grewMb < 80, `RSS grew by ${grewMb.toFixed(1)} MB while 100 MB streamed through`);
});

// ---- outbound fetch() bodies ------------------------------------------------------------------

let server;
let origin;
let uploadReceived = 0;
let releaseStream = null;

before(async () => {
  server = http.createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    switch (url.pathname) {
      case "/trickle": {
        // First chunk now; the rest only once the test says so.
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("early;");
        const go = gate();
        releaseStream = go.open;
        await go.promise;
        res.end("late");
        return;
      }
      case "/big": {
        const size = Number(url.searchParams.get("mb")) * 2 ** 20;
        res.writeHead(200, { "content-type": "application/octet-stream" });
        const block = Buffer.alloc(64 * 1024, 7);
        let left = size;
        const pump = () => {
          while (left > 0) {
            left -= block.length;
            if (!res.write(block)) return res.once("drain", pump);
          }
          res.end();
        };
        pump();
        return;
      }
      case "/upload": {
        uploadReceived = 0;
        const hash = crypto.createHash("sha256");
        req.on("data", (chunk) => {
          uploadReceived += chunk.length;
          hash.update(chunk);
        });
        req.on("end", () => res.end(JSON.stringify({ bytes: uploadReceived, sha256: hash.digest("hex"), encoding: req.headers["transfer-encoding"] ?? null })));
        return;
      }
      case "/received": {
        // ?atLeast=n: answers once n bytes of the upload arrived (or after 10 s with what did), so a
        // chunk still in flight on a loaded machine is waited for, and a body held back is not.
        const atLeast = Number(url.searchParams.get("atLeast") ?? 0);
        const started = Date.now();
        const answer = () => {
          if (uploadReceived >= atLeast || Date.now() - started > 10_000) return res.end(String(uploadReceived));
          setTimeout(answer, 5);
        };
        answer();
        return;
      }
      case "/endless": {
        res.writeHead(200);
        const timer = setInterval(() => res.write("tick;"), 5);
        res.on("close", () => clearInterval(timer));
        return;
      }
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

test("fetch: a response body streams into the worker before the server has finished", async (t) => {
  const worker = await useWorker(t, {
    bindings: { ORIGIN: origin },
    // The worker reads the first chunk before the server sent the rest, answers with it, then
    // goes on reading through the same reader (a stream that was read from cannot be a new
    // Response's body, as in workerd). All in one request: another request may not touch this
    // request's body, as in workerd (docs/runtime.md#cross-request-io).
    script: `export default { async fetch(request, env) {
      const response = await fetch(env.ORIGIN + "/trickle");
      const reader = response.body.getReader();
      const first = await reader.read();
      return new Response(new ReadableStream({
        start(c) { c.enqueue(first.value); },
        async pull(c) { const { value, done } = await reader.read(); if (done) c.close(); else c.enqueue(value); },
      }));
    } }`,
  });
  const reader = (await dispatch(worker, "http://localhost/")).body.getReader();
  const decoder = new TextDecoder();
  assert.equal(decoder.decode((await reader.read()).value), "early;");
  releaseStream();
  let rest = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
  assert.equal(rest, "late");
});

test("fetch: a large upstream body is proxied to Node as a stream", async (t) => {
  const worker = await useWorker(t, { bindings: { ORIGIN: origin }, script: `export default { fetch(request, env) { return fetch(env.ORIGIN + "/big?mb=20"); } }` });
  const response = await dispatch(worker, "http://localhost/");
  assert.equal(response.headers.get("content-type"), "application/octet-stream");
  let total = 0;
  let sevens = true;
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    if (chunk.some((b) => b !== 7)) sevens = false;
  }
  assert.equal(total, 20 * 2 ** 20);
  assert.ok(sevens);
});

test("fetch: a ReadableStream request body is uploaded chunk by chunk", async (t) => {
  const worker = await useWorker(t, {
    bindings: { ORIGIN: origin },
    script: `export default { async fetch(request, env) {
      const chunks = ["one;", "two;", "three"];
      let seenByServer = null;
      let i = 0;
      const body = new ReadableStream({
        async pull(controller) {
          if (i === 1) seenByServer = Number(await (await fetch(env.ORIGIN + "/received?atLeast=4")).text());
          if (i === chunks.length) return controller.close();
          controller.enqueue(new TextEncoder().encode(chunks[i++]));
        },
      });
      const response = await fetch(env.ORIGIN + "/upload", { method: "POST", body });
      return Response.json({ server: await response.json(), seenByServer });
    } }`,
  });
  const result = await (await dispatch(worker, "http://localhost/")).json();
  assert.equal(result.server.bytes, "one;two;three".length);
  assert.equal(result.server.sha256, crypto.createHash("sha256").update("one;two;three").digest("hex"));
  assert.equal(result.server.encoding, "chunked");
  // The server had the first chunk before the worker produced the second.
  assert.equal(result.seenByServer, 4);
});

test("fetch: aborting after the response arrived errors its body with an AbortError", async (t) => {
  const worker = await useWorker(t, {
    bindings: { ORIGIN: origin },
    script: `export default { async fetch(request, env) {
      const controller = new AbortController();
      const response = await fetch(env.ORIGIN + "/endless", { signal: controller.signal });
      const reader = response.body.getReader();
      const first = await reader.read();
      controller.abort();
      try {
        for (;;) if ((await reader.read()).done) return Response.json("ended normally");
      } catch (error) {
        return Response.json({ first: first.value.byteLength > 0, name: error.name });
      }
    } }`,
  });
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), { first: true, name: "AbortError" });
});

test("fetch: cancelling a response body stops the download, and the worker goes on", async (t) => {
  const worker = await useWorker(t, {
    bindings: { ORIGIN: origin },
    script: `export default { async fetch(request, env) {
      const response = await fetch(env.ORIGIN + "/endless");
      const reader = response.body.getReader();
      await reader.read();
      await reader.cancel();
      const again = await fetch(env.ORIGIN + "/received");
      return new Response("cancelled; next fetch " + again.status);
    } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "cancelled; next fetch 200");
});
