// I/O objects tied to the request that made them (issue 44 point 3): one request makes an object
// and keeps it in a module-level variable while it waits (on a timer, so it stays alive); a
// second request uses it. The expected outcomes are what workerd 2026-04-26 gave for the same
// worker (two concurrent requests, `workerd serve`): workerd's "Cannot perform I/O on behalf of a
// different request" error with its "(I/O type: …)" suffix for the runtime's I/O objects, and no
// error for what the worker made itself (a JavaScript ReadableStream or WritableStream, a Blob) or
// for awaiting another request's pending fetch() (only its body is tied). The loopback upstream
// server and every worker are closed when their test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const OTHER_REQUEST =
  "Error: Cannot perform I/O on behalf of a different request. I/O objects (such as streams, request/response bodies, and others) created in the context of one request handler cannot be accessed from a different request's handler. This is a limitation of Cloudflare Workers which allows us to improve overall performance.";
const xreq = (type) => `THREW ${OTHER_REQUEST} (I/O type: ${type})`;

/** What request 2 gets on workerd, per case (probed with the same worker code). */
const EXPECTED = {
  "response-body": xreq("ReadableStreamSource"),
  "response-text": xreq("ReadableStreamSource"),
  "response-clone": xreq("ReadableStreamSource"),
  "request-body": xreq("ReadableStreamSource"),
  "request-text": xreq("ReadableStreamSource"),
  "new-response-body": xreq("ReadableStreamSource"),
  "new-request-body": xreq("ReadableStreamSource"),
  "pending-fetch": xreq("ReadableStreamSource"),
  "pending-fetch-await": "status 200",
  "transform-writer": xreq("$_5>"),
  "transform-readable": xreq("$_1>"),
  "identity-writer": xreq("Writable"),
  "fixed-length": xreq("Writable"),
  "ws-pair": xreq("Native"),
  "ws-close": xreq("Native"),
  abort: xreq("RefcountedCanceler"),
  // AbortSignal.aborted and throwIfAborted (workerd's cross-context-promise-test checks the former).
  "signal-aborted": xreq("RefcountedCanceler"),
  "signal-throw": xreq("RefcountedCanceler"),
  "js-readable": "x",
  "js-response": "jsbody",
  "js-writable": "wrote",
  blob: "abc",
};

const SCRIPT = (upstream) => `
let shared = null;
let ready = false;
let flag = false;
const release = () => { flag = true; };
// Request 1 waits on a timer loop (so it keeps pending I/O, as workerd needs), until request 2 is done.
const wait = async () => { flag = false; while (!flag) await new Promise((r) => setTimeout(r, 10)); };
const describe = (e) => e instanceof Error ? e.constructor.name + ": " + e.message : "value: " + String(e);
const UP = ${JSON.stringify(upstream)};
export default {
  async fetch(req) {
    const url = new URL(req.url);
    const c = url.searchParams.get("case");
    if (url.pathname === "/make") {
      ready = false;
      if (c === "response-body") shared = (await fetch(UP)).body;
      if (c === "response-text" || c === "response-clone") shared = await fetch(UP);
      if (c === "request-body") shared = req.body;
      if (c === "request-text") shared = req;
      if (c === "pending-fetch" || c === "pending-fetch-await") shared = fetch(UP + "?slow=1");
      if (c === "transform-writer" || c === "transform-readable") { shared = new TransformStream(); if (c === "transform-readable") shared.writable.getWriter().write("q"); }
      if (c === "identity-writer") shared = new IdentityTransformStream();
      if (c === "fixed-length") shared = new FixedLengthStream(5);
      if (c === "js-readable") shared = new ReadableStream({ pull(controller) { controller.enqueue("x"); } });
      if (c === "js-writable") shared = new WritableStream({ write() {} });
      if (c === "js-response") shared = new Response(new ReadableStream({ start(controller) { controller.enqueue(new TextEncoder().encode("jsbody")); controller.close(); } }));
      if (c === "ws-pair" || c === "ws-close") { const [a, b] = Object.values(new WebSocketPair()); a.accept(); b.accept(); shared = a; }
      if (c === "blob") shared = new Blob(["abc"]);
      if (c === "abort") shared = new AbortController();
      if (c === "signal-aborted" || c === "signal-throw") shared = AbortSignal.abort();
      if (c === "new-response-body") shared = new Response("plain");
      if (c === "new-request-body") shared = new Request("http://x/", { method: "POST", body: "reqbody" });
      if (c === "same") shared = await fetch(UP);
      ready = true;
      await wait();
      if (c === "same") return new Response(await shared.text());
      return new Response("made " + c);
    }
    // Request 2 goes on only once request 1 has stored its object (under emulation, making it can
    // take longer than the host's head start).
    while (!ready) await new Promise((r) => setTimeout(r, 5));
    let out;
    try {
      if (c === "response-body" || c === "request-body") { const { value } = await shared.getReader().read(); out = new TextDecoder().decode(value); }
      if (c === "response-text" || c === "request-text" || c === "new-response-body" || c === "new-request-body" || c === "js-response" || c === "blob") out = await shared.text();
      if (c === "response-clone") { const copy = shared.clone(); out = "cloned " + await copy.text(); }
      if (c === "pending-fetch") { const r = await shared; out = "status " + r.status + " " + await r.text(); }
      if (c === "pending-fetch-await") { const r = await shared; out = "status " + r.status; }
      if (c === "transform-writer" || c === "identity-writer" || c === "fixed-length") { await shared.writable.getWriter().write(new TextEncoder().encode("abcde")); out = "wrote"; }
      if (c === "transform-readable") out = (await shared.readable.getReader().read()).value;
      if (c === "js-readable") out = (await shared.getReader().read()).value;
      if (c === "js-writable") { await shared.getWriter().write("x"); out = "wrote"; }
      if (c === "ws-pair") { shared.send("hi"); out = "sent"; }
      if (c === "ws-close") { shared.close(1000, "bye"); out = "closed"; }
      if (c === "abort") { shared.abort(); out = "aborted"; }
      if (c === "signal-aborted") out = String(shared.aborted);
      if (c === "signal-throw") { shared.throwIfAborted(); out = "not thrown"; }
    } catch (e) { out = "THREW " + describe(e); }
    release();
    return new Response(String(out));
  },
};`;

async function upstreamServer(t) {
  const server = http.createServer((req, res) => {
    const send = () => res.end("hello upstream");
    if (req.url.includes("slow")) setTimeout(send, 200);
    else send();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${server.address().port}/up`;
}

/** Request 1 makes the object for `c` and waits; request 2 uses it: both answers. */
async function both(worker, c) {
  const url = `http://localhost/make?case=${c}`;
  const first = dispatch(worker, c.startsWith("request-") ? new Request(url, { method: "POST", body: "posted-data" }) : url);
  // Request 2 starts a little after request 1; in the worker it waits until request 1 has stored
  // its object (and is waiting on its timer loop).
  await new Promise((resolve) => setTimeout(resolve, 50));
  const second = await dispatch(worker, `http://localhost/use?case=${c}`);
  return [await (await first).text(), await second.text()];
}

test("an I/O object used from another request throws workerd's error, with workerd's I/O type", { timeout: scaled(60_000) }, async (t) => {
  const upstream = await upstreamServer(t);
  const worker = await useWorker(t, { script: SCRIPT(upstream), filename: "cross-request.js", compatibilityDate: "2026-04-01" });
  const got = {};
  for (const c of Object.keys(EXPECTED)) {
    const [made, used] = await both(worker, c);
    assert.equal(made, `made ${c}`, `request 1 of ${c} ends normally`);
    got[c] = used;
  }
  assert.deepEqual(got, EXPECTED);
});

test("the request that made a fetch() response still reads it after another request touched nothing", { timeout: scaled(30_000) }, async (t) => {
  const upstream = await upstreamServer(t);
  const worker = await useWorker(t, { script: SCRIPT(upstream), filename: "cross-request.js", compatibilityDate: "2026-04-01" });
  const [made] = await both(worker, "same");
  assert.equal(made, "hello upstream");
});

test("the runtime's I/O objects work as before within the request that made them", { timeout: scaled(30_000) }, async (t) => {
  const script = `
export default {
  async fetch(req) {
    const ts = new IdentityTransformStream();
    const writer = ts.writable.getWriter();
    const reading = new Response(ts.readable).text();
    await writer.write(new TextEncoder().encode("same request"));
    await writer.close();
    const [a, b] = Object.values(new WebSocketPair()); a.accept(); b.accept(); a.send("x"); a.close();
    const ac = new AbortController(); ac.abort();
    return new Response(await reading);
  },
};`;
  const worker = await useWorker(t, { script, filename: "not-tied.js", compatibilityDate: "2026-04-01" });
  assert.equal(await (await dispatch(worker, "http://localhost/same")).text(), "same request");
  assert.equal(await (await dispatch(worker, "http://localhost/same")).text(), "same request");
});
