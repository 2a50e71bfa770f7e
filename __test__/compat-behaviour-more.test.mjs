// Compatibility flags that select older behaviour, continued from compat-behaviour.test.mjs (same
// pattern): for each flag, the behaviour on both sides of its date and with its explicit enable
// and disable flags. These are the flags about Web IDL conversions, writers, internal writables, structs, prototypes
// and WebSocket compression. Every worker runs on loopback only and is disposed when its test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { storage } from "../index.js";
import { evalInWorker } from "./helpers.mjs";

const OLD = "2021-01-01";

/** `body`'s result in a worker with `compatibilityDate`/`compatibilityFlags` as given. */
function run(t, body, compatibilityDate = undefined, compatibilityFlags = undefined, extra = {}) {
  return evalInWorker(t, body, { compatibilityDate, compatibilityFlags, ...extra });
}

test("dont_substitute_null_on_type_error: a Request signal or Response webSocket of the wrong type is a TypeError from 2022-06-01, null before", async (t) => {
  const body = `
    const attempt = (f) => { try { return f(); } catch (e) { return e.name + ": " + e.message; } };
    const controller = new AbortController();
    const input = new Request("https://x.example/", { signal: controller.signal });
    return [
      attempt(() => { controller.abort(); return new Request(input, { signal: 5 }).signal.aborted; }),
      attempt(() => new Response(null, { webSocket: {} }).status),
    ];`;
  const now = [
    "TypeError: Incorrect type for the 'signal' field on 'RequestInitializerDict': the provided value is not of type 'AbortSignal'.",
    "TypeError: Incorrect type for the 'webSocket' field on 'InitializerDict': the provided value is not of type 'WebSocket'.",
  ];
  // Before: taken as null, so the input's (aborted) signal is dropped and there is no webSocket.
  const then = [false, 200];
  assert.deepEqual(await run(t, body), now);
  assert.deepEqual(await run(t, body, "2022-05-31"), then);
  assert.deepEqual(await run(t, body, "2022-06-01"), now);
  assert.deepEqual(await run(t, body, undefined, ["substitute_null_on_type_error"]), then);
  assert.deepEqual(await run(t, body, OLD, ["dont_substitute_null_on_type_error"]), now);
});

test("writable_stream_spec_compliant_writer: from 2026-03-24 a writer's ready follows backpressure and releaseLock() rejects it; before, ready waits for start and survives a release", async (t) => {
  const body = `
    const state = (p) => Promise.race([p.then(() => "resolved", () => "rejected"), new Promise((r) => setTimeout(() => r("pending"), 20))]);
    const out = [];
    // Ready while start() has not finished.
    const slow = new WritableStream({ start() { return new Promise(() => {}); } }).getWriter();
    out.push(await state(slow.ready));
    // Ready on a started stream with backpressure (high water mark 0).
    const full = new WritableStream({}, { highWaterMark: 0 });
    await new Promise((r) => setTimeout(r, 5));
    out.push(await state(full.getWriter().ready));
    // A resolved ready after releaseLock().
    const released = new WritableStream({}).getWriter();
    await released.ready;
    released.releaseLock();
    out.push(await state(released.ready), await state(released.closed));
    // A write whose size() releases the lock.
    let writer;
    const written = [];
    const sized = new WritableStream({ write(chunk) { written.push(chunk); } }, { size() { writer.releaseLock(); return 1; } });
    writer = sized.getWriter();
    await writer.ready;
    out.push(await state(writer.write("x")), written.length, sized.locked);
    return out;`;
  const now = ["resolved", "pending", "rejected", "rejected", "rejected", 0, false];
  const then = ["pending", "resolved", "resolved", "rejected", "resolved", 1, false];
  assert.deepEqual(await run(t, body), now);
  assert.deepEqual(await run(t, body, "2026-03-23"), then);
  assert.deepEqual(await run(t, body, "2026-03-24"), now);
  assert.deepEqual(await run(t, body, undefined, ["no_writable_stream_spec_compliant_writer"]), then);
  assert.deepEqual(await run(t, body, OLD, ["streams_enable_constructors", "writable_stream_spec_compliant_writer"]), now);
});

test("enable_fast_jsg_struct: from 2025-12-03 dictionaries the runtime returns have their undefined members; before, those are left out", async (t) => {
  const body = `
    const key = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, true, ["sign"]);
    const jwk = await crypto.subtle.exportKey("jwk", key);
    const reader = new ReadableStream({ start(c) { c.close(); } }).getReader();
    await env.BUCKET.put("k", "v", { httpMetadata: { contentType: "text/plain" } });
    const object = await env.BUCKET.head("k");
    const list = await env.BUCKET.list();
    return [Object.keys(jwk), Object.keys(await reader.read()), Object.keys(object.httpMetadata), Object.keys(list)];`;
  const now = [
    ["kty", "use", "key_ops", "alg", "ext", "crv", "x", "y", "d", "n", "e", "p", "q", "dp", "dq", "qi", "oth", "k"],
    ["value", "done"],
    ["contentType", "contentLanguage", "contentDisposition", "contentEncoding", "cacheControl", "cacheExpiry"],
    ["objects", "truncated", "cursor", "delimitedPrefixes"],
  ];
  const then = [["kty", "key_ops", "alg", "ext", "k"], ["done"], ["contentType"], ["objects", "truncated", "delimitedPrefixes"]];
  assert.deepEqual(await run(t, body, undefined, undefined, { bindings: { BUCKET: storage() } }), now);
  assert.deepEqual(await run(t, body, "2025-12-02", undefined, { bindings: { BUCKET: storage() } }), then);
  assert.deepEqual(await run(t, body, "2025-12-03", undefined, { bindings: { BUCKET: storage() } }), now);
  assert.deepEqual(await run(t, body, undefined, ["disable_fast_jsg_struct"], { bindings: { BUCKET: storage() } }), then);
  assert.deepEqual(await run(t, body, "2024-01-01", ["enable_fast_jsg_struct"], { bindings: { BUCKET: storage() } }), now);
});

test("rpc_params_dup_stubs: from 2026-01-20 a stub passed as an RPC argument stays usable by the caller; before, it is handed over and gone after the call", async (t) => {
  const { createWorker } = await import("../index.js");
  const service = await createWorker({
    onLog: () => {},
    script: `import { WorkerEntrypoint, RpcTarget } from "cloudflare:workers";
      class Counter extends RpcTarget { n = 0; inc() { return ++this.n; } }
      export default class extends WorkerEntrypoint { getCounter() { return new Counter(); } async use(counter) { return await counter.inc(); } }`,
  });
  t.after(() => service.dispose());
  const body = `
    const counter = await env.SERVICE.getCounter();
    const out = [await counter.inc(), await env.SERVICE.use(counter)];
    try { out.push(await counter.inc()); } catch (e) { out.push(e.message); }
    return out;`;
  const bindings = { SERVICE: service };
  const now = [1, 2, 3];
  const then = [1, 2, "RPC stub used after being disposed."];
  assert.deepEqual(await run(t, body, undefined, undefined, { bindings }), now);
  assert.deepEqual(await run(t, body, "2026-01-19", undefined, { bindings }), then);
  assert.deepEqual(await run(t, body, "2026-01-20", undefined, { bindings }), now);
  assert.deepEqual(await run(t, body, undefined, ["rpc_params_transfer_stubs"], { bindings }), then);
  assert.deepEqual(await run(t, body, "2024-06-01", ["rpc_params_dup_stubs"], { bindings }), now);
});

test("internal_writable_stream_abort_clears_queue: from 2024-09-02 abort() on an internal writable rejects its pending writes at once; before, it waits for the write in progress", async (t) => {
  // The legacy TransformStream (transformstream_disable_standard_constructor) is an internal
  // stream in workerd. Results checked against workerd.
  const body = `
    const state = (p) => Promise.race([p.then(() => "resolved", (e) => "rejected: " + e.message), new Promise((r) => setTimeout(() => r("pending"), 30))]);
    const { writable, readable } = new TransformStream();
    const writer = writable.getWriter();
    const first = writer.write(new Uint8Array([1]));
    const second = writer.write(new Uint8Array([2]));
    const aborted = writer.abort(new Error("boom"));
    const again = writer.abort(new Error("again"));
    const out = [await state(first), await state(aborted), await state(writer.closed)];
    const reader = readable.getReader();
    out.push(await state(reader.read()), await state(first), await state(second), await state(aborted), await state(again), await state(writer.closed), await state(reader.read()));
    return out;`;
  const boom = "rejected: boom";
  const now = [boom, "resolved", boom, boom, boom, boom, "resolved", "resolved", boom, boom];
  // Before: nothing happens until the reader takes the first chunk; then the rest is rejected.
  const then = ["pending", "pending", "pending", "resolved", "resolved", boom, "resolved", "resolved", boom, boom];
  const legacy = ["transformstream_disable_standard_constructor"];
  assert.deepEqual(await run(t, body, undefined, legacy), now);
  assert.deepEqual(await run(t, body, "2024-09-01", legacy), then);
  assert.deepEqual(await run(t, body, "2024-09-02", legacy), now);
  assert.deepEqual(await run(t, body, OLD), then);
  assert.deepEqual(await run(t, body, undefined, [...legacy, "internal_writable_stream_abort_does_not_clear_queue"]), then);
  assert.deepEqual(await run(t, body, OLD, ["internal_writable_stream_abort_clears_queue"]), now);
  // The standard TransformStream is not an internal stream: its abort is the standard's.
  assert.deepEqual(await run(t, body, "2024-09-01"), now);
});
test("immutable_api_prototypes: with the flag an API class's prototype property is read-only; without it (the default, the flag has no date) it is writable", async (t) => {
  const body = `
    const attrs = (C) => { const { writable, enumerable, configurable } = Object.getOwnPropertyDescriptor(C, "prototype"); return [writable, enumerable, configurable]; };
    const out = [attrs(Request), attrs(Event), attrs(ReadableStream), attrs(Array)];
    try {
      const old = Headers.prototype;
      const replacement = { x: 1 };
      Headers.prototype = replacement;
      const made = new Headers();
      out.push(Object.getPrototypeOf(made) === replacement, made instanceof Headers);
      Headers.prototype = old;
    } catch (e) {
      out.push(e.name);
    }
    class Mine extends Response { extra() { return "mine"; } }
    const mine = new Mine("hi", { status: 201 });
    const request = new Request("https://x.example/");
    out.push(mine.status, mine.extra(), await mine.text(), request.constructor === Request, request instanceof Request,
      Object.getPrototypeOf(request) === Request.prototype, typeof Response.json, (await Response.json({ a: 1 }).json()).a, Request.name);
    try { Request("https://x.example/"); } catch (e) { out.push(e.constructor === TypeError); }
    return out;`;
  const tail = [201, "mine", "hi", true, true, true, "function", 1, "Request", true];
  // Checked against workerd (the descriptors and the reassigned prototype).
  const mutable = [[true, false, false], [true, false, false], [true, false, false], [false, false, false], true, true, ...tail];
  const immutable = [[false, false, false], [false, false, false], [false, false, false], [false, false, false], "TypeError", ...tail];
  assert.deepEqual(await run(t, body), mutable);
  assert.deepEqual(await run(t, body, OLD), mutable);
  assert.deepEqual(await run(t, body, undefined, ["mutable_api_prototypes"]), mutable);
  assert.deepEqual(await run(t, body, undefined, ["immutable_api_prototypes"]), immutable);
  assert.deepEqual(await run(t, body, OLD, ["immutable_api_prototypes"]), immutable);
});
