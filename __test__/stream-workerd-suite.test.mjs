// WHATWG streams as workerd has them where its own test suite (scripts/workerd-tests.mjs) found
// workerbox differing: byte streams' default autoAllocateChunkSize and byobRequest.atLeast,
// start() errors, tee() cancels, abort() memoised, the runtime's ("internal") streams' reads
// (one at a time, rejected by a cancel, not detached before streams_byob_reader_detaches_buffer,
// with writes taken when made), DecompressionStream's errors, expectedLength and a known body
// length over a service binding, util.inspect's breakLength, when pull() is called, and an
// identity pipe's abort. Every expected value was printed by workerd (Miniflare 4.20260426.0)
// from the same code; workers run on loopback only and are disposed when each test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, service } from "../index.js";
import { evalInWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const OPTIONS = { compatibilityDate: "2026-04-01", compatibilityFlags: ["nodejs_compat"] };
const SETTLE = `
  const settle = async (p) => { try { await p; return "fulfilled"; } catch (e) { return "rejected: " + (e instanceof Error ? e.name + ": " + e.message : typeof e); } };
  const sync = (f) => { try { const v = f(); if (v && typeof v.then === "function") { v.catch(() => {}); return "promise"; } return "ok"; } catch (e) { return "threw: " + e.name + ": " + e.message; } };`;

test("a byte stream the worker makes has workerd's autoAllocateChunkSize (4096), byobRequest.atLeast and readAtLeast (in elements, one call at a time); its tee() branches fill their own BYOB reads", { timeout: scaled(60_000) }, async (t) => {
  const body = `
    const out = {};
    { const rs = new ReadableStream({ type: "bytes", pull(c) { out.pullView = c.byobRequest?.view.byteLength ?? null; c.byobRequest.view[0] = 65; c.byobRequest.respond(1); c.close(); } });
      const r = await rs.getReader().read(); out.first = [r.value.byteLength, r.value.buffer.byteLength]; }
    { const enc = new TextEncoder(); const rs = new ReadableStream({ type: "bytes", pull(c) { const n = enc.encodeInto("hello", c.byobRequest.view).written; c.byobRequest.respond(n); c.close(); } }); out.text = await new Response(rs).text(); }
    { const rs = new ReadableStream({ type: "bytes", start(c) { c.enqueue(new Uint8Array(10000)); c.enqueue(new Uint8Array(3)); c.enqueue(new Uint8Array(5)); c.close(); } }); const r = rs.getReader(); out.reads = []; for (;;) { const x = await r.read(); if (x.done) break; out.reads.push([x.value.byteLength, x.value.buffer.byteLength]); } }
    { const rs = new ReadableStream({ type: "bytes", autoAllocateChunkSize: 16, start(c) { c.enqueue(new Uint8Array(20)); c.enqueue(new Uint8Array(3)); } }); const x = await rs.getReader().read(); out.explicit = [x.value.byteLength, x.value.buffer.byteLength]; }
    { const x = await new Response("abc").body.getReader().read(); out.body = x.value.byteLength; }
    { const chunk = new Uint8Array(5); new ReadableStream({ type: "bytes", start(c) { c.enqueue(chunk); try { c.enqueue(chunk); out.second = "ok"; } catch (e) { out.second = e.name + ": " + e.message; } } }); }
    { const seen = []; const chunks = ["hello", "there"]; const rs = new ReadableStream({ type: "bytes", pull(c) { if (!chunks.length) { c.close(); c.byobRequest.respond(0); return; } seen.push(c.byobRequest.atLeast); new TextEncoder().encodeInto(chunks.shift(), c.byobRequest.view); c.byobRequest.respond(5); } });
      const res = await rs.getReader({ mode: "byob" }).readAtLeast(100, new Uint8Array(100)); out.atLeast = [seen, new TextDecoder().decode(res.value), res.done]; }
    { const rs = new ReadableStream({ type: "bytes", pull(c) { c.byobRequest.view[0] = 1; c.byobRequest.respond(1); } }); const u8 = new Uint8Array(3); const p = rs.getReader({ mode: "byob" }).read(u8); out.jsDetaches = u8.byteLength; await p; }
    { let controller; const dec = new TextDecoder(); const rs = new ReadableStream({ type: "bytes", start(c) { controller = c; } }); const [b1, b2] = rs.tee();
      const r1 = b1.getReader({ mode: "byob" }), r2 = b2.getReader({ mode: "byob" }); const ps = [r1.read(new Uint8Array(2)), r2.read(new Uint8Array(3))];
      controller.enqueue(new TextEncoder().encode("hello")); const res = await Promise.all(ps); const more = await r1.read(new Uint8Array(10));
      out.teeByob = [dec.decode(res[0].value), dec.decode(res[1].value), dec.decode(more.value)]; }
    { const seen = []; const chunks = ["abcde", "fghij"]; const enc = new TextEncoder(); const dec = new TextDecoder();
      const rs = new ReadableStream({ type: "bytes", pull(c) { if (!chunks.length) { c.close(); c.byobRequest.respond(0); return; } seen.push(c.byobRequest.atLeast); enc.encodeInto(chunks.shift(), c.byobRequest.view); c.byobRequest.respond(5); } });
      const [a, b] = rs.tee(); const ra = a.getReader({ mode: "byob" }), rb = b.getReader({ mode: "byob" });
      const [x, y] = await Promise.all([ra.readAtLeast(50, new Uint8Array(50)), rb.readAtLeast(3, new Uint8Array(4))]);
      out.teeAtLeast = [seen, dec.decode(x.value), dec.decode(y.value)]; }
    const oneByte = () => { let i = 1; return new ReadableStream({ type: "bytes", pull(c) { if (i > 8) { c.close(); c.byobRequest?.respond(0); return; } const v = c.byobRequest.view; v[0] = i++; c.byobRequest.respond(1); } }); };
    out.elements = [];
    { const r = oneByte().getReader({ mode: "byob" }); const x = await r.readAtLeast(2, new Uint16Array(4)); out.elements.push(x.value.constructor.name, x.value.length); }
    { const r = oneByte().getReader({ mode: "byob" }); const x = await r.readAtLeast(1, new Uint32Array(2)); out.elements.push(x.value.length); }
    { const r = oneByte().getReader({ mode: "byob" }); const [a, b] = await Promise.all([r.readAtLeast(2, new Uint16Array(2)), r.readAtLeast(2, new Uint8Array(2))]); out.elements.push(Array.from(a.value), Array.from(b.value)); }
    { const r = oneByte().getReader({ mode: "byob" }); try { await r.readAtLeast(3, new Uint16Array(2)); } catch (e) { out.elements.push(e.message); } }
    return out;`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    pullView: 4096,
    first: [1, 4096],
    text: "hello",
    reads: [[4096, 4096], [4096, 4096], [1816, 4096]],
    explicit: [16, 16],
    body: 3,
    second: "TypeError: Cannot enqueue a zero-length ArrayBuffer.",
    atLeast: [[100, 95], "hellothere", false],
    jsDetaches: 0,
    teeByob: ["he", "hel", "llo"],
    teeAtLeast: [[50, 45], "abcdefghij", "abcd"],
    elements: ["Uint16Array", 2, 1, [513, 1027], [5, 6], "Minimum bytes to read (6) exceeds size of buffer (4)."],
  });
});

test("with the experimental streams_no_default_auto_allocate_chunk_size a byte stream has no default autoAllocateChunkSize", { timeout: 60_000 }, async (t) => {
  const body = `
    const out = [];
    const rs = new ReadableStream({ type: "bytes", pull(c) { out.push(c.byobRequest === null); c.enqueue(new Uint8Array([1, 2])); c.close(); } });
    const x = await rs.getReader().read(); out.push(x.value.byteLength);
    const rs2 = new ReadableStream({ type: "bytes", autoAllocateChunkSize: 8, pull(c) { out.push(c.byobRequest?.view.byteLength ?? null); c.byobRequest.respond(1); c.close(); } });
    out.push((await rs2.getReader().read()).value.byteLength);
    return out;`;
  const options = { compatibilityDate: "2026-04-01", compatibilityFlags: ["nodejs_compat", "experimental", "streams_no_default_auto_allocate_chunk_size"], unsafeExperimental: true };
  assert.deepEqual(await evalInWorker(t, body, options), [true, 2, 8, 1]);
});

test("start() errors, tee() cancels, abort(), size(), pipes, cancel reasons and the runtime streams' reads are workerd's", { timeout: scaled(60_000) }, async (t) => {
  const body = `${SETTLE}
    const out = {};
    { const rs = new ReadableStream({ start() { throw new Error("boom"); } }); out.rsStart = await settle(rs.getReader().read()); }
    { const ws = new WritableStream({ start() { throw new Error("boom"); } }); out.wsStart = await settle(ws.getWriter().write(1)); }
    { const ts = new TransformStream({ start() { throw new Error("boom"); } }); out.tsStart = [await settle(ts.writable.getWriter().write("x")), await settle(ts.readable.getReader().read())]; }
    { let reason; const rs = new ReadableStream({ pull(c) { c.enqueue("d"); }, cancel(r) { reason = r; } }); const [a, b] = rs.tee(); const ra = a.getReader(), rb = b.getReader(); await ra.read(); await rb.read(); await ra.cancel("one"); out.teeFirst = reason === undefined; await rb.cancel("two"); out.teeCancelled = reason !== undefined; }
    { const ws = new WritableStream({ abort() { throw new Error("boom"); } }); const w = ws.getWriter(); out.abort = [await settle(w.abort(1)), await settle(w.abort(2))]; }
    { const ws = new WritableStream({ write() {} }); const w = ws.getWriter(); w.write(1); w.close(); out.doubleClose = sync(() => w.close()); }
    { const rs = new ReadableStream(); out.pipeToNothing = sync(() => rs.pipeTo()); out.pipeToNothingAwaited = await settle(new ReadableStream().pipeTo()); }
    { let tc; const ts = new TransformStream({ start(c) { tc = c; }, transform(chunk, c) { c.enqueue(chunk); } }, {}, { highWaterMark: 1, size() { tc.error(new Error("from size")); return 1; } }); const w = ts.writable.getWriter(); const r = ts.readable.getReader(); const [, y] = await Promise.allSettled([w.write("a"), r.read()]); out.sizeError = [y.status, y.reason?.message]; }
    { const r = new IdentityTransformStream().readable.getReader(); r.read(); out.secondRead = await settle(r.read()); }
    out.cancelReasons = [];
    for (const reason of ["test", undefined, new RangeError("r")]) { const ts = new IdentityTransformStream(); const w = ts.writable.getWriter(); const r = ts.readable.getReader(); const wp = w.write(new Uint8Array([1])); await r.cancel(reason); out.cancelReasons.push(await settle(wp)); }
    { const r = new IdentityTransformStream().readable.getReader(); const p = r.read(); r.cancel(new Error("boom")); out.readOnCancel = await settle(p); }
    { const r = new CompressionStream("deflate").readable.getReader(); const p = r.read(); r.cancel(new Error("boom")); out.codecReadOnCancel = await settle(p); }
    { const r = new ReadableStream().getReader(); const p = r.read(); r.cancel(new Error("boom")); out.jsReadOnCancel = await settle(p); }
    { const r = new ReadableStream().getReader(); const p = r.read(); r.releaseLock(); out.released = await settle(p); }
    out.decompress = [];
    const valid = new Uint8Array([120, 156, 75, 4, 0, 0, 98, 0, 98]);
    for (const chunks of [[valid.slice(0, 5)], [valid, new Uint8Array(1)], [new Uint8Array([1, 2, 3, 4])]]) out.decompress.push(await settle(Array.fromAsync(new Blob(chunks).stream().pipeThrough(new DecompressionStream("deflate")))));
    { const rs = new ReadableStream({ start(c) { c.enqueue(new Uint8Array([1])); c.enqueue("str"); c.close(); } }); const got = []; try { for await (const x of rs.pipeThrough(new IdentityTransformStream())) got.push(x.byteLength); } catch (e) { got.push(e.message); } out.pipeNotBytes = got; }
    { const controller = new AbortController(); let ready = false;
      const source = new ReadableStream({ start(c) { c.enqueue(new Uint8Array([1])); }, pull() { if (ready) controller.abort(new Error("boom")); } });
      const { readable, writable } = new TransformStream(); const reader = readable.getReader(); ready = true;
      out.pipeAbortedInPull = [await settle(source.pipeTo(writable, { signal: controller.signal })), await settle(reader.read())]; }
    { const got = []; const rs = new ReadableStream({ start(c) { c.enqueue("a"); c.enqueue("b"); c.close(); } });
      await rs.pipeTo(new WritableStream({ write(x) { got.push(x); }, close() { got.push("closed"); } })); out.pipeAll = got; }
    { const got = []; const rs = new ReadableStream({ pull(c) { if (got.length < 3) c.enqueue(got.length); else c.close(); } }, { highWaterMark: 0 });
      await rs.pipeTo(new WritableStream({ write(x) { got.push(x); } })); out.pipePulled = got; }
    return out;`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    rsStart: "rejected: Error: boom",
    wsStart: "rejected: Error: boom",
    tsStart: ["rejected: Error: boom", "rejected: Error: boom"],
    teeFirst: true,
    teeCancelled: true,
    abort: ["rejected: Error: boom", "rejected: Error: boom"],
    doubleClose: "promise",
    pipeToNothing: "promise",
    pipeToNothingAwaited: "rejected: TypeError: Failed to execute 'pipeTo' on 'ReadableStream': parameter 1 is not of type 'WritableStream'.",
    sizeError: ["rejected", "from size"],
    secondRead: "rejected: TypeError: This ReadableStream only supports a single pending read request at a time.",
    cancelReasons: ["rejected: Error: test", "rejected: Error: Stream was cancelled.", "rejected: RangeError: r"],
    readOnCancel: "rejected: Error: boom",
    codecReadOnCancel: "rejected: Error: boom",
    jsReadOnCancel: "fulfilled",
    released: "rejected: TypeError: This ReadableStream reader has been released.",
    decompress: [
      "rejected: TypeError: Called close() on a decompression stream with incomplete data",
      "rejected: TypeError: Trailing bytes after end of compressed data",
      "rejected: TypeError: Decompression failed.",
    ],
    pipeNotBytes: [1, "This WritableStream only supports writing byte types."],
    pipeAbortedInPull: ["rejected: Error: boom", "rejected: Error: boom"],
    pipeAll: ["a", "b", "closed"],
    pipePulled: [0, 1, 2],
  });
});

test("before capture_async_api_throws a second close() and pipeTo() without a WritableStream throw", { timeout: scaled(60_000) }, async (t) => {
  const body = `${SETTLE}
    const out = {};
    { const ws = new WritableStream({ write() {} }); const w = ws.getWriter(); w.write(1); w.close(); out.doubleClose = sync(() => w.close()); }
    out.pipeToNothing = sync(() => new ReadableStream().pipeTo());
    out.pipeToObject = sync(() => new ReadableStream().pipeTo({}));
    { const rs = new ReadableStream(); rs.getReader(); out.pipeLocked = sync(() => rs.pipeTo(new WritableStream())); }
    return out;`;
  const old = { compatibilityDate: "2022-01-01", compatibilityFlags: ["streams_enable_constructors", "transformstream_enable_standard_constructor"] };
  assert.deepEqual(await evalInWorker(t, body, old), {
    doubleClose: "threw: TypeError: Cannot close a writer that is already being closed",
    pipeToNothing: "threw: TypeError: Failed to execute 'pipeTo' on 'ReadableStream': parameter 1 is not of type 'WritableStream'.",
    pipeToObject: "threw: TypeError: Failed to execute 'pipeTo' on 'ReadableStream': parameter 1 is not of type 'WritableStream'.",
    pipeLocked: "promise",
  });
});

test("an IdentityTransformStream takes a write's bytes when it is made; without streams_byob_reader_detaches_buffer its BYOB reads keep the caller's buffer", { timeout: scaled(60_000) }, async (t) => {
  const body = `
    const out = {};
    { const { writable, readable } = new IdentityTransformStream(); const w = writable.getWriter(); const r = readable.getReader();
      const a = new Uint8Array(new ArrayBuffer(8, { maxByteLength: 16 })); a.set([1, 2, 3, 4, 5, 6, 7, 8]); const b = new Uint8Array([9, 9]);
      w.write(a); w.write(b); a.buffer.resize(4); b.buffer.transfer();
      out.writes = [Array.from((await r.read()).value), Array.from((await r.read()).value)]; }
    { const ts = new IdentityTransformStream(); const r = ts.readable.getReader({ mode: "byob" }); const w = ts.writable.getWriter();
      const buffer = new ArrayBuffer(4096, { maxByteLength: 8192 }); const p = r.read(new Uint8Array(buffer)); buffer.resize(64); await w.write(new Uint8Array(100).fill(7)); const x = await p; out.shrunk = [x.done, x.value.byteLength, x.value.buffer.byteLength]; }
    { const ts = new IdentityTransformStream(); const r = ts.readable.getReader({ mode: "byob" }); const w = ts.writable.getWriter();
      const buffer = new ArrayBuffer(4096); const p = r.read(new Uint8Array(buffer)); buffer.transfer(); await w.write(new Uint8Array(10)); const x = await p; out.transferred = [x.done, x.value.byteLength, x.value.buffer.byteLength]; }
    { const ts = new IdentityTransformStream(); const r = ts.readable.getReader({ mode: "byob" }); const w = ts.writable.getWriter();
      const buffer = new ArrayBuffer(8192, { maxByteLength: 16384 }); const p = r.read(new Uint8Array(buffer, 4096, 1024)); buffer.resize(2048); await w.write(new Uint8Array(100)); const x = await p; out.outOfBounds = [x.done, x.value.byteLength]; }
    { const ts = new IdentityTransformStream(); const r = ts.readable.getReader({ mode: "byob" }); const u8 = new Uint8Array(4); const p = r.read(u8); out.keeps = u8.byteLength; const w = ts.writable.getWriter(); await w.write(new Uint8Array(2)); await p; }
    { const rs = new ReadableStream({ type: "bytes", pull(c) { c.byobRequest.view[0] = 1; c.byobRequest.respond(1); } }); const u8 = new Uint8Array(3); const p = rs.getReader({ mode: "byob" }).read(u8); out.jsDetaches = u8.byteLength; await p; }
    return out;`;
  const flags = { compatibilityDate: "2026-04-01", compatibilityFlags: ["nodejs_compat", "streams_byob_reader_does_not_detach_buffer"] };
  assert.deepEqual(await evalInWorker(t, body, flags), {
    writes: [[1, 2, 3, 4, 5, 6, 7, 8], [9, 9]],
    shrunk: [false, 64, 64],
    transferred: [false, 0, 0],
    outOfBounds: [false, 0],
    keeps: 4,
    jsDetaches: 0,
  });
});

test("expectedLength is a stream's length: util.inspect shows it, and a service binding's request carries it (and a whole body's) as content-length", { timeout: scaled(60_000) }, async (t) => {
  const inspected = await evalInWorker(t, `
    const util = await import("node:util");
    const rs = new ReadableStream({ expectedLength: 10, start(c) { c.enqueue(new Uint8Array(10)); c.close(); } });
    const long = { alpha: "a".repeat(30), beta: "b".repeat(30), gamma: "c".repeat(30) };
    return [util.inspect(new ReadableStream(), { breakLength: Infinity }), util.inspect(long, { breakLength: Infinity }), util.inspect(long, { breakLength: 200 }), util.inspect(long), util.inspect(rs, { breakLength: Infinity }), util.inspect(new TransformStream({ expectedLength: 3 }).readable, { breakLength: Infinity })];`, OPTIONS);
  const line = "{ alpha: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', beta: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', gamma: 'cccccccccccccccccccccccccccccc' }";
  assert.deepEqual(inspected, [
    "ReadableStream { locked: false, [state]: 'readable', [supportsBYOB]: false, [length]: undefined }",
    line,
    line,
    "{\n  alpha: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',\n  beta: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',\n  gamma: 'cccccccccccccccccccccccccccccc'\n}",
    "ReadableStream { locked: false, [state]: 'readable', [supportsBYOB]: false, [length]: 10n }",
    "ReadableStream { locked: false, [state]: 'readable', [supportsBYOB]: false, [length]: 3n }",
  ]);

  const binding = service({ fetch: () => new Response("not started", { status: 503 }) });
  const script = `export default { async fetch(request, env) {
    if (request.headers.get("x-inner")) return new Response(String(request.headers.get("content-length")));
    const bodies = () => ["hellohello", new Uint8Array(10), new ReadableStream({ start(c) { c.enqueue(new Uint8Array(3)); c.close(); } }), new ReadableStream({ expectedLength: 3, start(c) { c.enqueue(new Uint8Array(3)); c.close(); } }), new Blob(["abc"]).stream(), new Response("abcd").body, ""];
    const out = [];
    for (const body of bodies()) out.push(await (await env.S.fetch("http://x/", { method: "POST", body, headers: { "x-inner": "1" } })).text());
    const { readable, writable } = new TransformStream({ expectedLength: 2 });
    const w = writable.getWriter(); w.write(new Uint8Array(2)); w.close();
    out.push(await (await env.S.fetch(new Request("http://x/", { method: "POST", body: readable, headers: { "x-inner": "1" } }))).text());
    return Response.json(out);
  } }`;
  const worker = await createWorker({ script, filename: "length.js", ...OPTIONS, bindings: { S: binding }, onLog: () => {} });
  t.after(() => worker.dispose());
  binding.handler = worker;
  const response = await dispatch(worker, "http://localhost/");
  assert.deepEqual(await response.json(), ["10", "10", "null", "3", "3", "4", "0", "2"]);
});

test("a read that takes what is queued does not call pull(); a read waiting on an empty queue does, until the queue is full", { timeout: scaled(60_000) }, async (t) => {
  const body = `
    const log = [];
    const tick = () => new Promise((r) => setTimeout(r, 5));
    let n = 0;
    const rs = new ReadableStream({ pull(c) { log.push("pull" + n); c.enqueue(n++); if (n > 6) c.close(); } }, { highWaterMark: 2 });
    await tick(); log.push("q=" + n);
    const r = rs.getReader();
    for (let i = 0; i < 4; i++) { log.push("read " + (await r.read()).value); await tick(); log.push("n=" + n); }
    let m = 0;
    const rs2 = new ReadableStream({ pull(c) { log.push("p2-" + m); if (m === 0) c.enqueue("x"); if (m === 1) c.close(); m++; } });
    const r2 = rs2.getReader(); await tick(); log.push("before m=" + m);
    await r2.read(); await tick(); log.push("after m=" + m);
    let k = 0;
    const bytes = new ReadableStream({ type: "bytes", pull(c) { log.push("b" + k); c.enqueue(new Uint8Array([k++])); if (k > 6) c.close(); } }, { highWaterMark: 2 });
    await tick();
    const br = bytes.getReader({ mode: "byob" });
    for (let i = 0; i < 3; i++) { log.push("byob " + (await br.read(new Uint8Array(1))).value[0]); await tick(); log.push("k=" + k); }
    br.releaseLock();
    log.push("default " + (await bytes.getReader().read()).value.length); await tick(); log.push("k=" + k);
    return log;`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), [
    "pull0", "pull1", "q=2", "read 0", "n=2", "read 1", "n=2", "pull2", "pull3", "pull4", "read 2", "n=5", "read 3", "n=5",
    "p2-0", "before m=1", "after m=1",
    "b0", "b1", "byob 0", "k=2", "byob 1", "k=2", "b2", "b3", "b4", "byob 2", "k=5", "default 2", "k=5",
  ]);
});

test("an identity pipe's readable side meets an abort or the end when it is read; util.inspect shows its writable side errored or closed at once", { timeout: 60_000 }, async (t) => {
  const body = `
    const util = await import("node:util");
    const show = (x) => util.inspect(x, { breakLength: Infinity });
    const tick = () => new Promise((r) => setTimeout(r, 5));
    const out = [];
    const ts = new IdentityTransformStream();
    const w = ts.writable.getWriter();
    const ap = w.abort(new Error("Oops"));
    out.push(show(ts.writable));
    await tick();
    out.push(show(ts.readable));
    const r = ts.readable.getReader();
    let closed = "pending"; r.closed.then(() => closed = "ok", (e) => closed = "rejected " + e.message);
    await tick(); out.push("closed " + closed);
    try { await ap; out.push("abort ok"); } catch (e) { out.push("abort rejected " + e.message); }
    try { await r.read(); out.push("read ok"); } catch (e) { out.push("read rejected " + e.message); }
    await tick(); out.push("closed " + closed, show(ts.readable));
    const f = new FixedLengthStream(2); const fw = f.writable.getWriter(); fw.write(new Uint8Array(2)); fw.close();
    out.push(show(f.writable));
    const fixed = new FixedLengthStream(5); const w5 = fixed.writable.getWriter();
    w5.write(new Uint8Array([1, 2, 3])); w5.write(new Uint8Array([4, 5])); w5.close();
    const r5 = fixed.readable.getReader();
    for (let i = 0; i < 3; i++) { const x = await r5.read(); out.push([x.done, x.value?.byteLength ?? null], show(fixed.readable)); }
    const short = new FixedLengthStream(5); const ws = short.writable.getWriter(); ws.write(new Uint8Array([1])); ws.close();
    const rs = short.readable.getReader(); out.push((await rs.read()).value.byteLength, show(short.readable));
    try { await rs.read(); out.push("read ok"); } catch (e) { out.push("read rejected " + e.message); }
    return out;`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), [
    "WritableStream { locked: true, [state]: 'errored', [expectsBytes]: true }",
    "ReadableStream { locked: false, [state]: 'readable', [supportsBYOB]: true, [length]: undefined }",
    "closed pending",
    "abort ok",
    "read rejected Oops",
    "closed rejected Oops",
    "ReadableStream { locked: true, [state]: 'errored', [supportsBYOB]: true, [length]: undefined }",
    "WritableStream { locked: true, [state]: 'closed', [expectsBytes]: true }",
    [false, 3], "ReadableStream { locked: true, [state]: 'readable', [supportsBYOB]: true, [length]: 2n }",
    [false, 2], "ReadableStream { locked: true, [state]: 'readable', [supportsBYOB]: true, [length]: 0n }",
    [true, null], "ReadableStream { locked: true, [state]: 'closed', [supportsBYOB]: true, [length]: 0n }",
    1, "ReadableStream { locked: true, [state]: 'readable', [supportsBYOB]: true, [length]: 4n }",
    "read rejected FixedLengthStream did not see all expected bytes before close().",
  ]);
});

test("CompressionStream's bytes are workerd's (zlib's own deflate, gzip header with OS 3), and they decompress back", { timeout: scaled(60_000) }, async (t) => {
  const out = await evalInWorker(t, `
    const enc = new TextEncoder();
    const hex = (u) => [...u].map((b) => b.toString(16).padStart(2, "0")).join("");
    const out = {};
    for (const format of ["gzip", "deflate", "deflate-raw"]) {
      const cs = new CompressionStream(format);
      const w = cs.writable.getWriter();
      w.write(enc.encode("0123456789".repeat(1000)));
      w.write(enc.encode("hello hello hello world"));
      w.close();
      const bytes = new Uint8Array(await new Response(cs.readable).arrayBuffer());
      const back = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream(format))).text();
      out[format] = [hex(bytes), back.length];
    }
    return out;`, OPTIONS);
  // Printed by workerd for the same code.
  const stream = "edc6bb0980301400c0551c21267e927d22583c08a4717d5b5710ae392eadb96cfb71d696cccccccccccccccccccccccccccccccccccccc7ebbfb8a18cbd767cce82f";
  assert.deepEqual(out, {
    gzip: [`1f8b0800000000000003${stream}364a8a0e27270000`, 10023],
    deflate: [`789c${stream}175a0c05`, 10023],
    "deflate-raw": [stream, 10023],
  });
});

test("a service binding's answer from a worker arrives as it is written: readAtLeast() waits for enough of it, chunk by chunk (workerd's readAtLeastByobReader)", { timeout: scaled(60_000) }, async (t) => {
  const binding = service({ fetch: () => new Response("not started", { status: 503 }) });
  const script = `const enc = new TextEncoder();
  export default { async fetch(request, env) {
    if (new URL(request.url).pathname === "/chunked") {
      return new Response(new ReadableStream({ type: "bytes", async pull(c) {
        for (const part of ["foo", "bar", "b", "a", "z"]) { c.enqueue(enc.encode(part)); await scheduler.wait(1); }
        c.close();
      } }));
    }
    const response = await env.S.fetch("http://x/chunked");
    const reader = response.body.getReader({ mode: "byob" });
    const dec = new TextDecoder();
    const out = [];
    for (const step of ["atLeast", "read", "atLeast", "atLeast"]) {
      const r = step === "read" ? await reader.read(new Uint8Array(20)) : await reader.readAtLeast(4, new Uint8Array(20));
      out.push([dec.decode(r.value), r.done, r.value instanceof Uint8Array]);
    }
    // An answer never read does not hold anything up.
    await env.S.fetch("http://x/chunked");
    return Response.json(out);
  } }`;
  const worker = await createWorker({ script, filename: "chunked.js", compatibilityDate: "2026-04-01", compatibilityFlags: ["internal_stream_byob_return_view", "streams_byob_reader_detaches_buffer"], bindings: { S: binding }, onLog: () => {} });
  t.after(() => worker.dispose());
  binding.handler = worker;
  const response = await dispatch(worker, "http://localhost/");
  // What workerd gives (its streams-test readAtLeastByobReader asserts the same).
  assert.deepEqual(await response.json(), [["foobar", false, true], ["b", false, true], ["az", false, true], ["", true, true]]);
});
