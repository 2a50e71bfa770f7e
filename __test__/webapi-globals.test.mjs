// Worker globals beyond fetch: MessageChannel/MessagePort/MessageEvent, reportError() and the
// global "error" event (ErrorEvent), unhandledrejection/rejectionhandled (PromiseRejectionEvent),
// structuredClone's transfer list, WebAssembly.compileStreaming/instantiateStreaming,
// crypto.subtle.digest's rejection for unknown algorithms, and the incoming request's `cf`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker, waitFor } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
/** Runs `body` in a fresh worker whose log lines are collected; returns { result, lines }. */
async function runLogged(t, body, settleMs = 50) {
  const lines = [];
  const script = `export default { async fetch(request, env, ctx) {
    const result = await (async () => { ${body} })();
    return Response.json(result === undefined ? null : result);
  } }`;
  const worker = await useWorker(t, { script, filename: "logged.js", onLog: (level, message) => lines.push([level, message]) });
  const result = await (await dispatch(worker, "http://localhost/")).json();
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return { result, lines };
}

const errorsIn = (lines) => lines.filter(([level]) => level === "error").map(([, message]) => message.split("\n")[0]);

// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const ADD_WASM = "[0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3, 97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11]";
// (module (import "env" "f" (func (result i32))) (func (export "g") (result i32) call 0))
const IMPORT_WASM = "[0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 2, 9, 1, 3, 101, 110, 118, 1, 102, 0, 0, 3, 2, 1, 0, 7, 5, 1, 1, 103, 0, 1, 10, 6, 1, 4, 0, 16, 0, 11]";

test("MessageChannel: messages are structured clones, delivered asynchronously and in order as MessageEvents", async (t) => {
  const result = await evalInWorker(t, `
    const { port1, port2 } = new MessageChannel();
    const events = [];
    port2.onmessage = (event) => events.push(event);
    const original = { n: 1, when: new Date(0), map: new Map([["k", [1, 2]]]) };
    port1.postMessage(original);
    port1.postMessage("second");
    port1.postMessage(undefined);
    const syncCount = events.length;
    await new Promise((resolve) => setTimeout(resolve, 0));
    const [first] = events;
    // Messages go both ways.
    const back = new Promise((resolve) => port1.addEventListener("message", (e) => resolve(e.data)));
    port2.postMessage("back");
    return {
      syncCount,
      datas: events.map((e) => typeof e.data === "object" ? "object" : String(e.data)),
      cloned: first.data !== original && first.data.n === 1 && first.data.when instanceof Date && first.data.map.get("k")[1] === 2,
      fields: [first instanceof MessageEvent, first instanceof Event, first.type, first.origin, first.lastEventId, first.source === port2, first.ports.length],
      types: [port1 instanceof MessagePort, port1 instanceof EventTarget, Object.prototype.toString.call(new MessageChannel())],
      back: await back,
    };`);
  assert.equal(result.syncCount, 0);
  assert.deepEqual(result.datas, ["object", "second", "undefined"]);
  assert.equal(result.cloned, true);
  assert.deepEqual(result.fields, [true, true, "message", null, "", true, 0]);
  assert.deepEqual(result.types, [true, true, "[object MessageChannel]"]);
  assert.equal(result.back, "back");
});

test("MessagePort queues until started (start(), onmessage or a message listener), and close() closes both ends", async (t) => {
  const result = await evalInWorker(t, `
    const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
    const out = {};
    // Queued while nothing listens; start() delivers the queue in order.
    const a = new MessageChannel();
    a.port1.postMessage(1);
    a.port1.postMessage(2);
    const gotA = [];
    const listener = { handleEvent: (e) => gotA.push(e.data) };
    a.port2.addEventListener("message", listener); // starts the port, as in Node.js and workerd
    await tick();
    out.listenerStarts = gotA.slice();
    // With every listener removed, messages queue again until the next start.
    a.port2.removeEventListener("message", listener);
    a.port1.postMessage(3);
    await tick();
    out.afterRemove = gotA.slice();
    a.port2.onmessage = (e) => gotA.push("on:" + e.data);
    await tick();
    out.onmessageDrains = gotA.slice();
    // close(): a "close" event on both ports, later messages dropped silently.
    const b = new MessageChannel();
    const closes = [];
    b.port1.addEventListener("close", () => closes.push("port1"));
    b.port2.addEventListener("close", () => closes.push("port2"));
    const gotB = [];
    b.port2.onmessage = (e) => gotB.push(e.data);
    b.port1.close();
    b.port1.close();
    b.port1.postMessage("dropped");
    b.port2.postMessage("dropped too");
    await tick();
    out.closes = closes;
    out.gotB = gotB;
    return out;`);
  assert.deepEqual(result.listenerStarts, [1, 2]);
  assert.deepEqual(result.afterRemove, [1, 2]);
  assert.deepEqual(result.onmessageDrains, [1, 2, "on:3"]);
  assert.deepEqual(result.closes, ["port2", "port1"]);
  assert.deepEqual(result.gotB, []);
});

test("MessagePort refuses uncloneable data, transfer lists and direct construction; MessageEvent is constructible", async (t) => {
  const result = await evalInWorker(t, `
    const { port1 } = new MessageChannel();
    const attempt = (f) => { try { f(); return "no error"; } catch (e) { return e.name + ": " + e.message; } };
    const event = new MessageEvent("message", { data: { x: 1 } });
    return {
      uncloneable: attempt(() => port1.postMessage({ f() {} })),
      transfer: attempt(() => port1.postMessage(1, [new ArrayBuffer(1)])),
      transferOption: attempt(() => port1.postMessage(1, { transfer: [new ArrayBuffer(1)] })),
      emptyTransfer: attempt(() => port1.postMessage(1, { transfer: [] })),
      construct: attempt(() => new MessagePort()),
      event: [event.type, event.data.x, event.origin, event.lastEventId, event.source, event.ports.length],
      noType: attempt(() => new MessageEvent()),
    };`);
  assert.match(result.uncloneable, /^DataCloneError: /);
  assert.equal(result.transfer, "Error: Transfer list is not supported");
  assert.equal(result.transferOption, "Error: Transfer list is not supported");
  assert.equal(result.emptyTransfer, "no error");
  assert.equal(result.construct, "TypeError: Illegal constructor");
  assert.deepEqual(result.event, ["message", 1, null, "", null, 0]);
  assert.match(result.noType, /^TypeError: /);
});

test("MessageChannel is a global from expose_global_message_channel's date (2025-08-15); WebSocket messages are MessageEvents", async (t) => {
  const probe = `return [typeof MessageChannel, typeof MessagePort, typeof MessageEvent];`;
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2025-08-14" }), ["undefined", "undefined", "function"]);
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2025-08-15" }), ["function", "function", "function"]);
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2025-08-14", compatibilityFlags: ["expose_global_message_channel"] }), ["function", "function", "function"]);
  const socket = await evalInWorker(t, `
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    client.accept();
    const event = await new Promise((resolve) => { server.addEventListener("message", resolve); client.send("hi"); });
    return [event instanceof MessageEvent, event.data];`);
  assert.deepEqual(socket, [true, "hi"]);
});

test("reportError() dispatches an ErrorEvent at the global scope; preventDefault() keeps it out of the log", async (t) => {
  const { result, lines } = await runLogged(t, `
    const seen = [];
    addEventListener("error", (event) => {
      seen.push({ isErrorEvent: event instanceof ErrorEvent, message: event.message, filename: event.filename, lineno: event.lineno, colno: event.colno, error: event.error && event.error.message, cancelable: event.cancelable });
      if (event.error && event.error.message === "handled") event.preventDefault();
    });
    reportError(new Error("handled"));
    reportError(new RangeError("logged"));
    const made = new ErrorEvent("error", { message: "m", filename: "f.js", lineno: 3, colno: 4, error: 5 });
    return { seen, returned: String(reportError(new Error("handled"))), made: [made.type, made.message, made.filename, made.lineno, made.colno, made.error] };`);
  assert.equal(result.seen.length, 3);
  assert.deepEqual(result.seen[0], { isErrorEvent: true, message: "Uncaught Error: handled", filename: "logged.js", lineno: 8, colno: 16, error: "handled", cancelable: true });
  assert.equal(result.seen[1].message, "Uncaught RangeError: logged");
  assert.equal(result.returned, "undefined");
  assert.deepEqual(result.made, ["error", "m", "f.js", 3, 4, 5]);
  assert.deepEqual(errorsIn(lines), ["Uncaught RangeError: logged"]);
});

test("errors thrown by timers, listeners and microtasks reach the error event (and onerror) before the log", async (t) => {
  const { result, lines } = await runLogged(t, `
    const seen = [];
    globalThis.onerror = (event) => { seen.push("onerror:" + event.error.message); return event.error.message === "from a timer"; };
    addEventListener("error", (event) => {
      seen.push("listener:" + event.error.message);
      if (event.error.message === "from a listener") event.preventDefault();
      if (event.error.message === "from a microtask") throw new Error("thrown by the error listener");
    });
    setTimeout(() => { throw new Error("from a timer"); }, 0);
    const target = new EventTarget();
    target.addEventListener("ping", () => { throw new Error("from a listener"); });
    // As in workerd, a listener's exception leaves dispatchEvent() of a script's own target.
    try { target.dispatchEvent(new Event("ping")); } catch (error) { seen.push("thrown:" + error.message); }
    queueMicrotask(() => { throw new Error("from a microtask"); });
    await new Promise((resolve) => setTimeout(resolve, 10));
    return seen;`);
  assert.deepEqual(result, [
    "thrown:from a listener",
    "onerror:from a microtask", "listener:from a microtask",
    "onerror:from a timer", "listener:from a timer",
  ]);
  // The timer's error was cancelled by onerror returning true; the microtask's was not, and the error its listener threw is logged without another event.
  assert.deepEqual(errorsIn(lines).sort(), ["Uncaught Error: from a microtask", "Uncaught Error: thrown by the error listener"]);
});

test("unhandledrejection: a PromiseRejectionEvent with promise and reason; preventDefault() keeps it out of the log", async (t) => {
  const { result, lines } = await runLogged(t, `
    const seen = [];
    let quiet;
    addEventListener("unhandledrejection", (event) => {
      seen.push({ type: event.type, isEvent: event instanceof PromiseRejectionEvent, reason: event.reason.message, samePromise: event.promise === quiet, cancelable: event.cancelable });
      if (event.reason.message === "quiet") event.preventDefault();
    });
    globalThis.onunhandledrejection = (event) => seen.push("on:" + event.reason.message);
    quiet = Promise.reject(new Error("quiet"));
    Promise.reject(new Error("loud"));
    // Handled within the same turn: no event.
    Promise.reject(new Error("caught in time")).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 10));
    let construct;
    try { new PromiseRejectionEvent("unhandledrejection", { promise: quiet, reason: 1 }); } catch (e) { construct = e.name + ": " + e.message; }
    return { seen, construct };`);
  assert.deepEqual(result.seen, [
    "on:quiet", { type: "unhandledrejection", isEvent: true, reason: "quiet", samePromise: true, cancelable: true },
    "on:loud", { type: "unhandledrejection", isEvent: true, reason: "loud", samePromise: false, cancelable: true },
  ]);
  assert.equal(result.construct, "TypeError: Illegal constructor");
  assert.deepEqual(errorsIn(lines), ["Uncaught (in promise) Error: loud"]);
});

test("rejectionhandled fires when a reported rejection gets a handler later; a rejection in a handler is reported too", async (t) => {
  const { result, lines } = await runLogged(t, `
    const seen = [];
    let late;
    addEventListener("unhandledrejection", (event) => {
      seen.push("unhandled:" + event.reason);
      event.preventDefault();
      if (event.reason === "late") Promise.reject("from the handler");
    });
    addEventListener("rejectionhandled", (event) => {
      seen.push("handled:" + event.reason + ":" + (event.promise === late) + ":" + (event instanceof PromiseRejectionEvent));
    });
    late = Promise.reject("late");
    await new Promise((resolve) => setTimeout(resolve, 5));
    late.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 5));
    return seen;`);
  assert.deepEqual(result, ["unhandled:late", "unhandled:from the handler", "handled:undefined:true:true"]); // workerd's rejectionhandled has no reason
  assert.deepEqual(errorsIn(lines), []);
});

test("without listeners, unhandled rejections are still logged as before", async (t) => {
  const { lines } = await runLogged(t, `Promise.reject(new TypeError("nobody listens"));`);
  await waitFor(() => errorsIn(lines).length > 0);
  assert.deepEqual(errorsIn(lines), ["Uncaught (in promise) TypeError: nobody listens"]);
});

test("structuredClone moves the ArrayBuffers of its transfer list and checks the list as workerd does", async (t) => {
  const result = await evalInWorker(t, `
    const attempt = (f) => { try { f(); return "no error"; } catch (e) { return e.name + ": " + e.message; } };
    const buffer = new Uint8Array([1, 2, 3, 4]).buffer;
    const view = new Uint16Array(buffer, 2, 1);
    const copy = structuredClone({ buffer, view, again: buffer }, { transfer: [buffer, buffer] });
    const moved = {
      sourceDetached: [buffer.detached, buffer.byteLength, view.length],
      copy: [copy.buffer.byteLength, [...new Uint8Array(copy.buffer)], copy.view.buffer === copy.buffer, copy.again === copy.buffer, copy.view[0]],
    };
    // A view in the list moves its buffer.
    const bytes = new Uint8Array([9, 8]);
    const viaView = structuredClone(bytes, { transfer: [bytes] });
    // Without a transfer list, a copy: the source stays usable.
    const kept = new ArrayBuffer(8);
    const plain = structuredClone(kept);
    const memory = new WebAssembly.Memory({ initial: 1 });
    return {
      moved,
      viaView: [bytes.byteLength, [...viaView]],
      plain: [kept.byteLength, plain.byteLength, plain !== kept],
      plainObject: attempt(() => structuredClone(1, { transfer: [{}] })),
      number: attempt(() => structuredClone(1, { transfer: [1] })),
      shared: attempt(() => structuredClone(1, { transfer: [new SharedArrayBuffer(4)] })),
      detached: attempt(() => structuredClone(1, { transfer: [buffer] })),
      wasmMemory: attempt(() => structuredClone(1, { transfer: [memory.buffer] })),
      notASequence: attempt(() => structuredClone(1, { transfer: 5 })),
      empty: structuredClone({ a: 1 }, { transfer: [] }),
    };`);
  assert.deepEqual(result.moved.sourceDetached, [true, 0, 0]);
  assert.deepEqual(result.moved.copy, [4, [1, 2, 3, 4], true, true, 0x0403]);
  assert.deepEqual(result.viaView, [0, [9, 8]]);
  assert.deepEqual(result.plain, [8, 8, true]);
  assert.equal(result.plainObject, "TypeError: Object is not transferable");
  assert.equal(result.number, "TypeError: Object is not transferable");
  assert.equal(result.shared, "DataCloneError: Object is not transferable.");
  assert.match(result.detached, /^DataCloneError: An ArrayBuffer is detached/);
  assert.equal(result.wasmMemory, "DataCloneError: Object is not transferable.");
  assert.match(result.notASequence, /^TypeError: /);
  assert.deepEqual(result.empty, { a: 1 });
});

test("WebAssembly.compileStreaming and instantiateStreaming read an application/wasm Response", async (t) => {
  const result = await evalInWorker(t, `
    const wasm = (bytes, init = {}) => new Response(new Uint8Array(bytes), { headers: { "content-type": "application/wasm" }, ...init });
    const reason = (promise) => promise.then(() => "resolved", (e) => e.name + ": " + e.message);
    const module = await WebAssembly.compileStreaming(wasm(${ADD_WASM}));
    const { module: m2, instance } = await WebAssembly.instantiateStreaming(Promise.resolve(wasm(${IMPORT_WASM})), { env: { f: () => 41 } });
    const used = wasm(${ADD_WASM});
    await used.arrayBuffer();
    return {
      compiled: [module instanceof WebAssembly.Module, new WebAssembly.Instance(module).exports.add(2, 3)],
      instantiated: [m2 instanceof WebAssembly.Module, instance instanceof WebAssembly.Instance, instance.exports.g()],
      caseAndSpace: await reason(WebAssembly.compileStreaming(new Response(new Uint8Array(${ADD_WASM}), { headers: { "content-type": " Application/WASM " } }))),
      wrongType: await reason(WebAssembly.compileStreaming(new Response(new Uint8Array(${ADD_WASM}), { headers: { "content-type": "application/octet-stream" } }))),
      withParameters: await reason(WebAssembly.compileStreaming(new Response(new Uint8Array(${ADD_WASM}), { headers: { "content-type": "application/wasm; charset=utf-8" } }))),
      notOk: await reason(WebAssembly.instantiateStreaming(wasm(${ADD_WASM}, { status: 404 }))),
      notAResponse: await reason(WebAssembly.compileStreaming(new Uint8Array(${ADD_WASM}))),
      bodyUsed: await reason(WebAssembly.compileStreaming(used)),
      badBytes: await reason(WebAssembly.compileStreaming(wasm([1, 2, 3]))),
      rejected: await reason(WebAssembly.compileStreaming(Promise.reject(new RangeError("no response")))),
    };`);
  assert.deepEqual(result.compiled, [true, 5]);
  assert.deepEqual(result.instantiated, [true, true, 41]);
  assert.equal(result.caseAndSpace, "resolved");
  assert.match(result.wrongType, /^TypeError: WebAssembly\.compileStreaming\(\): Incorrect response MIME type "application\/octet-stream"/);
  assert.match(result.withParameters, /^TypeError: .*MIME type/);
  assert.match(result.notOk, /^TypeError: WebAssembly\.instantiateStreaming\(\): HTTP status code is not ok \(404\)/);
  assert.match(result.notAResponse, /^TypeError: .*must be a Response/);
  assert.match(result.bodyUsed, /^TypeError: /);
  assert.match(result.badBytes, /^CompileError: /);
  assert.equal(result.rejected, "RangeError: no response");
});

test("crypto.subtle.digest with an unknown algorithm rejects with workerd's NotSupportedError", async (t) => {
  const result = await evalInWorker(t, `
    const data = new Uint8Array([1]);
    let promise;
    try { promise = crypto.subtle.digest("SHA-3", data); } catch (e) { return "threw synchronously: " + e.name; }
    const outcome = await promise.then(() => "resolved", (e) => [e instanceof DOMException, e.name, e.message]);
    const objectForm = await crypto.subtle.digest({ name: "BLAKE3" }, data).then(() => "resolved", (e) => e.name);
    const known = new Uint8Array(await crypto.subtle.digest({ name: "sha-256" }, data)).length;
    let stream;
    try { new crypto.DigestStream("SHA-3"); } catch (e) { stream = e.name + ": " + e.message; }
    return { outcome, objectForm, known, stream };`);
  assert.deepEqual(result.outcome, [true, "NotSupportedError", "Unrecognized or unimplemented digest algorithm requested."]);
  assert.equal(result.objectForm, "NotSupportedError");
  assert.equal(result.known, 32);
  assert.equal(result.stream, "NotSupportedError: Unrecognized or unimplemented digest algorithm requested.");
});

test("an incoming request's cf is the documented default, deeply frozen; copies of the request get a mutable copy", async (t) => {
  const result = await evalInWorker(t, `
    const cf = request.cf;
    const copy = new Request(request);
    copy.cf.colo = "LHR";
    const withCf = new Request("http://x/", { cf: cf });
    const cloned = request.clone();
    let mutation;
    try { cf.colo = "LHR"; mutation = "allowed"; } catch (e) { mutation = e.name; }
    return {
      fields: [cf.colo, cf.country, cf.city, cf.asn, cf.timezone, cf.httpProtocol, cf.tlsVersion, cf.botManagement.score, cf.tlsClientAuth.certPresented],
      frozen: [Object.isFrozen(cf), Object.isFrozen(cf.botManagement), Object.isFrozen(cf.tlsClientAuth)],
      mutation,
      copy: [copy.cf.colo, cf.colo, Object.isFrozen(copy.cf), copy.cf !== cf],
      withCf: [withCf.cf !== cf, withCf.cf.colo, Object.isFrozen(withCf.cf)],
      cloned: [cloned.cf !== cf, cloned.cf.country],
      own: String(new Request("http://x/").cf),
    };`);
  assert.deepEqual(result.fields, ["DFW", "US", "Austin", 395747, "America/Chicago", "HTTP/1.1", "TLSv1.3", 99, "0"]);
  assert.deepEqual(result.frozen, [true, true, true]);
  assert.equal(result.mutation, "TypeError");
  assert.deepEqual(result.copy, ["LHR", "DFW", false, true]);
  assert.deepEqual(result.withCf, [true, "DFW", false]);
  assert.deepEqual(result.cloned, [true, "US"]);
  assert.equal(result.own, "undefined");
});

test("dispatch({ cf }) lays the host's cf over the default, key by key; a bad cf is a TypeError", async (t) => {
  const worker = await useWorker(t, { script: "export default { fetch(r) { return Response.json({ colo: r.cf.colo, country: r.cf.country, asn: r.cf.asn, extra: r.cf.extra, frozen: Object.isFrozen(r.cf) }) } }" });
  const seen = async (input) => (await dispatch(worker, input)).json();
  assert.deepEqual(await seen({ url: "http://localhost/", cf: { colo: "LHR", country: "GB", extra: { a: 1 } } }), { colo: "LHR", country: "GB", asn: 395747, extra: { a: 1 }, frozen: true });
  assert.equal((await seen("http://localhost/")).colo, "DFW");
  await assert.rejects(dispatch(worker, { url: "http://localhost/", cf: [1] }), /request\.cf must be an object/);
});

test("structuredClone shares a SharedArrayBuffer, copies Headers and DOMException and refuses other runtime classes, as workerd printed", async (t) => {
  const result = await evalInWorker(t, `
    const out = {};
    const sab = new SharedArrayBuffer(2);
    const copy = structuredClone({ a: new Uint8Array(sab) });
    copy.a[0] = 7;
    out.sab = [copy.a.buffer === sab, new Uint8Array(sab)[0]];
    const h = structuredClone(new Headers([["x", "1"], ["set-cookie", "a"], ["set-cookie", "b"]]));
    out.headers = [h instanceof Headers, [...h]];
    const d1 = new DOMException("m", "NotAllowedError");
    const d2 = structuredClone(d1);
    out.dom = [d2 instanceof DOMException, d2.name, d2.message, d2.code, d2.stack === d1.stack, d2 !== d1];
    try { structuredClone(new TextEncoder()); } catch (e) { out.encoder = [e.name, e.message, e instanceof DOMException]; }
    try { structuredClone({ blob: new Blob(["x"]) }); } catch (e) { out.blob = e.message; }
    const mark = Symbol.for("cloudflare:internal-class");
    const d = Object.getOwnPropertyDescriptor(Headers.prototype, mark);
    out.marker = [Headers.prototype[mark] === mark, new Response()[mark] === mark, TextEncoder.prototype[mark] === mark, [d.writable, d.enumerable, d.configurable]];
    class Mine { a = 1; }
    out.userClass = JSON.stringify(structuredClone(new Mine()));
    return out;`);
  // workerd 1.20260426's answers for the same code.
  assert.deepEqual(result, {
    sab: [false, 7],
    headers: [true, [["set-cookie", "a"], ["set-cookie", "b"], ["x", "1"]]],
    dom: [true, "NotAllowedError", "m", 0, true, true],
    encoder: ["DataCloneError", 'Could not serialize object of type "TextEncoder". This type does not support serialization.', true],
    blob: 'Could not serialize object of type "Blob". This type does not support serialization.',
    marker: [true, true, true, [false, false, false]],
    userClass: '{"a":1}',
  });
});

test("Blob reads a resizable buffer's bytes once every part is converted; blob() takes the last valid type of a list, as workerd printed", async (t) => {
  const result = await evalInWorker(
    t,
    `
    const out = {};
    const buffer = new ArrayBuffer(4, { maxByteLength: 16 });
    new Uint8Array(buffer).fill(0x41);
    const grow = { [Symbol.toPrimitive]() { buffer.resize(6); new Uint8Array(buffer, 4).fill(0x43); return "B"; } };
    out.grown = await new Blob([new Uint8Array(buffer), grow]).text();
    const shrink = new ArrayBuffer(4, { maxByteLength: 16 });
    new Uint8Array(shrink).fill(0x41);
    out.shrunk = await new Blob([new Uint8Array(shrink), { toString() { shrink.resize(1); return "B"; } }]).text();
    out.types = await Promise.all(["text/plain, x/y, text/html", "text/html, */*", 'a/b;x="1,2", bogus'].map(async (t) => (await new Response("x", { headers: { "content-type": t } }).blob()).type));
    return out;`,
    { compatibilityDate: "2025-01-01", compatibilityFlags: ["resizable_array_buffer_in_blob"] },
  );
  // workerd 1.20260426's answers for the same code.
  assert.deepEqual(result, { grown: "AAAACCB", shrunk: "AB", types: ["text/html", "text/html", 'a/b;x="1,2"'] });
});

test("a Blob holds at most 128 MiB, with workerd's RangeError", { timeout: scaled(60_000) }, async (t) => {
  const result = await evalInWorker(t, `
    const attempt = (f) => { try { f(); return "no error"; } catch (e) { return e.name + ": " + e.message; } };
    return [attempt(() => new Blob([new Uint8Array(64 * 1024 * 1024), new Uint8Array(64 * 1024 * 1024 + 1)])), attempt(() => new File([" ", new Blob([new Uint8Array(128 * 1024 * 1024)])], "f"))];`,
    // Room for the parts and their copies (the default 128 MB would fail the allocation first).
    { limits: { memoryMb: 512 } },
  );
  assert.deepEqual(result, ["RangeError: Blob size 134217729 exceeds limit 134217728", "RangeError: Blob size 134217729 exceeds limit 134217728"]);
});
