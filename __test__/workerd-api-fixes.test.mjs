// Web API and Node module behaviour brought in line with workerd 2026-04-26 (issue 44, from the
// failures of its own test suite; the expected values are what workerd gives for the same
// code): AbortController's reason and onabort, queueMicrotask's message, WebSocketPair
// destructuring, the 10 000 active timers of an event, CompressionStream output kept for the
// reader, "Decompression failed.", multipart bodies with bare LF line ends, FormData's live
// iterators, AsyncLocalStorage options, node:timers enroll and the promise forms' argument
// checks, a setImmediate of another request, diagnostics_channel's runStores, and node:util's
// debuglog, callbackify, inherits, promisify.custom, styleText and types.isKeyObject.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const DATE = "2026-04-01";

test("Web APIs: abort reason, onabort, queueMicrotask, WebSocketPair, timers per event", { timeout: scaled(60_000) }, async (t) => {
  const result = await evalInWorker(t, `
    const out = {};
    const ac = new AbortController(); ac.abort();
    out.reason = ac.signal.reason.message;
    out.staticReason = AbortSignal.abort().reason.message;
    const handler = {}; const s = new AbortController().signal;
    s.onabort = handler; out.onabortObject = s.onabort === handler;
    s.onabort = 123; out.onabortNumber = s.onabort;
    try { queueMicrotask(1); } catch (e) { out.queueMicrotask = e.constructor.name + ": " + e.message; }
    const [client, server] = new WebSocketPair();
    out.pair = [client instanceof WebSocket, server instanceof WebSocket];
    const ids = [];
    for (let i = 0; i < 10000; i++) ids.push(setTimeout(() => {}, 60000));
    try { setTimeout(() => {}); } catch (e) { out.tooMany = e.message; }
    clearTimeout(ids.pop());
    out.afterClear = typeof setTimeout(() => {}, 60000);
    return out;`, { compatibilityDate: DATE });
  assert.deepEqual(result, {
    reason: "The operation was aborted",
    staticReason: "The operation was aborted",
    onabortObject: true,
    onabortNumber: null,
    queueMicrotask: "TypeError: Failed to execute 'queueMicrotask' on 'ServiceWorkerGlobalScope': parameter 1 is not of type 'function'.",
    pair: [true, true],
    tooMany: "You have exceeded the number of active timeouts you may set. max active timeouts: 10000, current active timeouts: 10000, finished timeouts: 0",
    afterClear: "number",
  });
});

test("CompressionStream keeps its output for the reader; bad input is 'Decompression failed.'", { timeout: scaled(60_000) }, async (t) => {
  const result = await evalInWorker(t, `
    const enc = new TextEncoder(), dec = new TextDecoder();
    const cs = new CompressionStream("gzip");
    const writer = cs.writable.getWriter();
    await writer.write(enc.encode("hello ".repeat(1000)));
    await writer.close();
    const chunks = [];
    for await (const chunk of cs.readable) chunks.push(chunk);
    const compressed = new Uint8Array(await new Blob(chunks).arrayBuffer());
    const ds = new DecompressionStream("gzip");
    const dw = ds.writable.getWriter();
    await dw.write(compressed);
    await dw.close();
    const text = await new Response(ds.readable).text();
    // A small bomb: 16 MiB of zeros, compressed, written without a reader: the write waits past 1 MiB.
    const bomb = new CompressionStream("gzip");
    const bw = bomb.writable.getWriter();
    await bw.write(new Uint8Array(1 << 24)); await bw.close();
    const bombBytes = new Uint8Array(await new Response(bomb.readable).arrayBuffer());
    const inflate = new DecompressionStream("gzip");
    const iw = inflate.writable.getWriter();
    const pending = await Promise.race([iw.write(bombBytes).then(() => "written", () => "rejected"), new Promise((r) => setTimeout(() => r("waits for the reader"), 200))]);
    let read = 0;
    for await (const chunk of inflate.readable) { read += chunk.byteLength; if (read > (1 << 21)) break; }
    const bad = new DecompressionStream("gzip").writable.getWriter();
    let badError;
    try { await bad.write(enc.encode("hello world")); } catch (e) { badError = e.constructor.name + ": " + e.message; }
    return { same: text === "hello ".repeat(1000), smaller: compressed.byteLength < 6000, pending, readSome: read > (1 << 21), badError };`, { compatibilityDate: DATE });
  assert.deepEqual(result, { same: true, smaller: true, pending: "waits for the reader", readSome: true, badError: "TypeError: Decompression failed." });
});

test("FormData: multipart with LF line ends, workerd's messages, live iterators", { timeout: scaled(60_000) }, async (t) => {
  const result = await evalInWorker(t, `
    const out = {};
    const body = '---\\nContent-Disposition: form-data; name="a"\\n\\none\\n---\\nContent-Disposition: form-data; name="a"\\n\\ntwo\\n-----';
    const form = await new Request("http://x/", { method: "POST", body, headers: { "content-type": 'multipart/form-data; Boundary="-"' } }).formData();
    out.lf = form.getAll("a");
    const crlf = "--b\\r\\nContent-Disposition: form-data; name=\\"f\\"; filename=\\"f.txt\\"\\r\\nContent-Type: text/plain\\r\\n\\r\\nline1\\r\\nline2\\r\\n--b--\\r\\n";
    const file = (await new Request("http://x/", { method: "POST", body: crlf, headers: { "content-type": "multipart/form-data; boundary=b" } }).formData()).get("f");
    out.file = [file.name, file.type, await file.text()];
    const wrong = "--b\\nContent-Disposition: foobar\\n\\nx\\n--b--\\n";
    try { await new Request("http://x/", { method: "POST", body: wrong, headers: { "content-type": "multipart/form-data; boundary=b" } }).formData(); } catch (e) { out.disposition = e.message; }
    const bs = new FormData(); bs.set("foo", new File(["x"], "foo.txt\\\\"));
    try { new Request("http://x/", { method: "POST", body: bs }); } catch (e) { out.backslash = e.message; }
    const fd = new FormData(); const entries = fd.entries();
    out.first = entries.next().done;
    fd.append("key", "0");
    out.live = String(entries.next().value);
    return out;`, { compatibilityDate: DATE });
  assert.deepEqual(result, {
    lf: ["one", "two"],
    file: ["f.txt", "text/plain", "line1\r\nline2"],
    disposition: 'Content-Disposition header for FormData part must have the value "form-data", possibly followed by parameters. Got: "foobar"',
    backslash: "Name or filename can't end with backslash",
    first: true,
    live: "key,0",
  });
});

test("node: AsyncLocalStorage options, timers, diagnostics_channel, util", { timeout: scaled(60_000) }, async (t) => {
  const result = await evalInWorker(t, `
    const { AsyncLocalStorage } = await import("node:async_hooks");
    const timers = await import("node:timers");
    const timersPromises = await import("node:timers/promises");
    const dc = await import("node:diagnostics_channel");
    const util = await import("node:util");
    const { createSecretKey } = await import("node:crypto");
    const out = {};
    const als = new AsyncLocalStorage({ defaultValue: 1, name: "foo" });
    out.als = [als.name, als.getStore(), als.run(2, () => als.getStore()), als.getStore()];
    try { timers.enroll(); } catch (e) { out.enroll = e.message; }
    const codes = [];
    for (const call of [() => timersPromises.setTimeout("", null, {}), () => timersPromises.setTimeout(10, null, 1), () => timersPromises.setTimeout(10, null, { signal: {} }), () => timersPromises.setTimeout(10, null, { ref: 1 }), () => timersPromises.setImmediate(10, 1)]) {
      await call().then(() => codes.push("resolved"), (e) => codes.push(String(e).match(/ERR_[A-Z_]+/)?.[0]));
    }
    out.promiseChecks = codes;
    const store = new AsyncLocalStorage();
    const tc = dc.tracingChannel("s8");
    tc.start.bindStore(store);
    let seen;
    tc.subscribe({ start() { seen = store.getStore(); }, end() {}, asyncStart() {}, asyncEnd() {}, error() {} });
    const context = {};
    tc.traceSync(() => {}, context);
    out.storeInStart = seen === context;
    const logged = [];
    const log = console.log; console.log = (...args) => logged.push(args); util.debuglog("test")("hello %d", 1); console.log = log;
    out.debuglog = logged;
    async function asyncFn() {}
    const cb = util.callbackify(asyncFn);
    out.callbackify = [cb.name, cb.length];
    try { util.inherits(function A() {}, {}); } catch (e) { out.inherits = e.message; }
    function fn() {} fn[util.promisify.custom] = 42;
    try { util.promisify(fn); } catch (e) { out.promisifyCustom = e.code; }
    try { util.styleText("red", "x", { stream: {} }); } catch (e) { out.styleText = e.code; }
    out.styleTextUnchecked = util.styleText("red", "x", { stream: {}, validateStream: false });
    out.isKeyObject = [util.types.isKeyObject(createSecretKey("hello", "utf8")), util.types.isKeyObject({})];
    return out;`, { compatibilityDate: DATE, compatibilityFlags: ["nodejs_compat"] });
  assert.deepEqual(result, {
    als: ["foo", 1, 2, 1],
    enroll: "Not implemented. Please use setTimeout() instead.",
    promiseChecks: ["ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE"],
    storeInStart: true,
    debuglog: [["TEST: hello 1\n"]],
    callbackify: ["asyncFnCallbackified", 1],
    inherits: 'The "superCtor.prototype" property must be of type object. Received undefined',
    promisifyCustom: "ERR_INVALID_ARG_TYPE",
    styleText: "ERR_INVALID_ARG_TYPE",
    styleTextUnchecked: "\u001b[31mx\u001b[39m",
    isKeyObject: [true, false],
  });
});

test("node:timers: an Immediate of another request cannot be disposed or cleared there", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, {
    compatibilityDate: DATE,
    compatibilityFlags: ["nodejs_compat"],
    script: `import timers from "node:timers";
      let kept = null;
      export default { async fetch(request) {
        if (new URL(request.url).pathname === "/make") { kept = timers.setImmediate(() => {}); return new Response("made"); }
        const out = [];
        for (const use of [() => kept[Symbol.dispose](), () => timers.clearImmediate(kept)]) {
          try { use(); out.push("ok"); } catch (e) { out.push(e.message.slice(e.message.indexOf("(I/O type"))); }
        }
        return Response.json(out);
      } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/make")).text(), "made");
  assert.deepEqual(await (await dispatch(worker, "http://localhost/use")).json(), ["(I/O type: IoContext)", "(I/O type: IoContext)"]);
});

test("WebSocket subprotocols must be distinct tokens; CloseEvent's reason is a USVString; an IdentityTransformStream without highWaterMark reports no backpressure", { timeout: scaled(30_000) }, async (t) => {
  const result = await evalInWorker(t, `
    const out = {};
    for (const protocols of ["invalid protocol with spaces", ["chat", "chat"]]) {
      try { new WebSocket("wss://example.com/", protocols); out[String(protocols)] = "made"; } catch (e) { out[String(protocols)] = e.name; }
    }
    out.reason = new CloseEvent("close", { code: 1000, reason: "\\uD807" }).reason === "\\uFFFD";
    const ts = new IdentityTransformStream();
    const writer = ts.writable.getWriter();
    const ready = writer.ready;
    writer.write(new Uint8Array(1)); writer.write(new Uint8Array(9));
    out.desiredSize = writer.desiredSize;
    out.sameReady = ready === writer.ready;
    const reader = ts.readable.getReader();
    out.read = [(await reader.read()).value.byteLength, (await reader.read()).value.byteLength];
    return out;`, { compatibilityDate: DATE });
  assert.deepEqual(result, { "invalid protocol with spaces": "SyntaxError", "chat,chat": "SyntaxError", reason: true, desiredSize: 1, sameReady: true, read: [1, 9] });
});

test("MessagePort refuses a Blob and an RpcTarget; URLSearchParams skips a record's symbol keys", { timeout: scaled(30_000) }, async (t) => {
  const result = await evalInWorker(t, `
    const { RpcTarget } = await import("cloudflare:workers");
    const out = {};
    const { port1 } = new MessageChannel();
    for (const [name, value] of [["blob", new Blob([""])], ["rpc", new (class Foo extends RpcTarget {})()]]) {
      try { port1.postMessage(value); out[name] = "posted"; } catch (e) { out[name] = [e.name, e.code, e.message]; }
    }
    const search1 = new URLSearchParams("a=b");
    search1[Symbol.iterator] = undefined;
    search1.y = "z";
    const search2 = new URLSearchParams(search1);
    out.params = [search2.has("a"), search2.get("y")];
    return out;`, { compatibilityDate: "2026-04-01" });
  assert.deepEqual(result, {
    blob: ["DataCloneError", 25, 'Could not serialize object of type "Blob". This type does not support serialization.'],
    rpc: ["DataCloneError", 25, 'Could not serialize object of type "Foo". This type does not support serialization.'],
    params: [false, "z"],
  });
});

test("Request: cf.cacheControl cannot go with cf.cacheTtl or the cache option (workerd's TypeErrors)", { timeout: scaled(30_000) }, async (t) => {
  const result = await evalInWorker(t, `
    const out = [];
    for (const init of [{ cf: { cacheControl: "max-age=300", cacheTtl: 300 } }, { cache: "no-store", cf: { cacheControl: "no-cache" } }, { cf: { cacheControl: "max-age=300", cacheTtl: undefined } }, { cf: { cacheControl: "public" } }]) {
      try { new Request("https://example.org", init); out.push("ok"); } catch (e) { out.push(e.constructor.name + ": " + e.message.slice(0, 60)); }
    }
    return out;`, { compatibilityDate: "2026-04-01" });
  assert.deepEqual(result, [
    "TypeError: The 'cacheControl' and 'cacheTtl' options on cf are mutually",
    "TypeError: The 'cacheControl' option on cf cannot be used together with",
    "ok",
    "ok",
  ]);
});
