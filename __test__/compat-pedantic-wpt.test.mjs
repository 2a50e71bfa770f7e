// pedantic_wpt / non_pedantic_wpt (no date: off unless given): each test runs the same worker code
// without the flag (the default), with non_pedantic_wpt and with pedantic_wpt, and checks
// workerbox's results. The expected values are what workerd printed for the same code (Miniflare
// 4.20260426.0, compatibility date 2025-10-01, with and without pedantic_wpt). Every worker runs
// on loopback only and is disposed when its test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

const DATE = "2025-10-01";

/** `body`'s result without the flag, with non_pedantic_wpt, and with pedantic_wpt. */
async function both(t, body) {
  const off = await evalInWorker(t, body, { compatibilityDate: DATE });
  const disabled = await evalInWorker(t, body, { compatibilityDate: DATE, compatibilityFlags: ["non_pedantic_wpt"] });
  assert.deepEqual(disabled, off, "non_pedantic_wpt is the default");
  const on = await evalInWorker(t, body, { compatibilityDate: DATE, compatibilityFlags: ["pedantic_wpt"] });
  return { off, on };
}

test("pedantic_wpt: Event.currentTarget outside a dispatch, and isTrusted as an own property", async (t) => {
  const { off, on } = await both(t, `
    const out = {};
    const target = new EventTarget(); const event = new Event("x"); let during;
    target.addEventListener("x", (e) => { during = e.currentTarget === target; });
    const before = event.currentTarget; target.dispatchEvent(event);
    const describe = (v) => v === target ? "target" : v === null ? "null" : typeof v;
    out.before = describe(before); out.during = during; out.after = describe(event.currentTarget);
    out.target = describe(event.target);
    const own = Object.getOwnPropertyDescriptor(event, "isTrusted");
    out.own = own === undefined ? null : { value: own.value, writable: own.writable, enumerable: own.enumerable, configurable: own.configurable };
    out.onPrototype = Object.hasOwn(Event.prototype, "isTrusted");
    out.keys = Object.keys(event).join(",");
    out.subclassOwn = Object.hasOwn(new (class extends Event {})("y"), "isTrusted");
    const controller = new AbortController(); let abortEvent;
    controller.signal.onabort = (e) => { abortEvent = e; }; controller.abort();
    out.abort = [Object.hasOwn(abortEvent, "isTrusted"), abortEvent.isTrusted, describe(abortEvent.currentTarget) === "object" ? "signal" : describe(abortEvent.currentTarget)];
    return out;`);
  assert.deepEqual(off, {
    before: "undefined", during: true, after: "target", target: "target", own: null, onPrototype: true, keys: "", subclassOwn: false,
    abort: [false, true, "signal"],
  });
  assert.deepEqual(on, {
    before: "null", during: true, after: "null", target: "target",
    own: { value: false, writable: false, enumerable: true, configurable: true }, onPrototype: false, keys: "isTrusted", subclassOwn: true,
    abort: [true, true, "null"],
  });
});

test("pedantic_wpt: TextDecoderStream is fatal by default when options are given, without the flag", async (t) => {
  const { off, on } = await both(t, `
    const out = {};
    out.fatal = [new TextDecoderStream().fatal, new TextDecoderStream("utf-8", {}).fatal,
      new TextDecoderStream("utf-8", { fatal: false }).fatal, new TextDecoderStream("utf-8", { ignoreBOM: true }).fatal];
    const stream = new TextDecoderStream("utf-8", {});
    const writer = stream.writable.getWriter();
    writer.write(new Uint8Array([0x61, 0xff, 0x62])).catch(() => {}); writer.close().catch(() => {});
    try { let text = ""; for await (const chunk of stream.readable) text += chunk; out.decoded = text; } catch (e) { out.decoded = e.name; }
    return out;`);
  assert.deepEqual(off, { fatal: [false, true, false, true], decoded: "TypeError" });
  assert.deepEqual(on, { fatal: [false, false, false, false], decoded: "a\uFFFDb" });
});

test("pedantic_wpt: WebSocket.close() codes: 1000-4999 but 1004/1005/1006/1015 without the flag, 1000 or 3000-4999 with it", async (t) => {
  const { off, on } = await both(t, `
    const out = {};
    for (const code of [999, 1000, 1001, 1004, 1005, 1006, 1011, 1015, 2999, 3000, 4999, 5000]) {
      const pair = new WebSocketPair(); pair[0].accept(); pair[1].accept();
      try { pair[0].close(code, "r"); out[code] = "ok"; } catch (e) { out[code] = e.name; }
    }
    return out;`);
  const bad = "InvalidAccessError";
  assert.deepEqual(off, { 999: bad, 1000: "ok", 1001: "ok", 1004: bad, 1005: bad, 1006: bad, 1011: "ok", 1015: bad, 2999: "ok", 3000: "ok", 4999: "ok", 5000: bad });
  assert.deepEqual(on, { 999: bad, 1000: "ok", 1001: bad, 1004: bad, 1005: bad, 1006: bad, 1011: bad, 1015: bad, 2999: bad, 3000: "ok", 4999: "ok", 5000: bad });
});

test("pedantic_wpt: WritableStream abort() without a reason, close() when errored, desiredSize while erroring, sink type", async (t) => {
  const { off, on } = await both(t, `
    const out = {};
    const describe = (v) => v === undefined ? "undefined" : v instanceof Error || v?.name ? v.name : String(v);
    let signal; const aborted = new WritableStream({ start(c) { signal = c.signal; } }); await aborted.abort();
    let writerSignal; const viaWriter = new WritableStream({ start(c) { writerSignal = c.signal; } }); await viaWriter.getWriter().abort();
    let givenSignal; const given = new WritableStream({ start(c) { givenSignal = c.signal; } }); await given.abort("r");
    out.signal = [signal.aborted, describe(signal.reason), describe(writerSignal.reason), describe(givenSignal.reason)];

    let controller; const errored = new WritableStream({ start(c) { controller = c; } });
    controller.error(new RangeError("boom")); await new Promise((r) => setTimeout(r, 1));
    const settle = (p) => p.then(() => "ok", (e) => describe(e) + ": " + e.message);
    let controller2; const errored2 = new WritableStream({ start(c) { controller2 = c; } }); const writer2 = errored2.getWriter();
    controller2.error(new RangeError("boom")); await new Promise((r) => setTimeout(r, 1));
    out.close = [await settle(errored.close()), (await settle(writer2.close())).split(":")[0]];

    let finishWrite; const slow = new WritableStream({ write() { return new Promise((r) => (finishWrite = r)); } }, { highWaterMark: 4 });
    const writer = slow.getWriter(); await writer.ready; writer.write("a"); await new Promise((r) => setTimeout(r, 1));
    const before = writer.desiredSize; const aborting = writer.abort("x"); const erroring = writer.desiredSize;
    finishWrite(); await aborting.catch(() => {});
    out.desiredSize = [before, erroring, writer.desiredSize];

    const ts = new TransformStream(); const tsWriter = ts.writable.getWriter(); await ts.readable.cancel("R");
    out.transformClose = await tsWriter.close().then(() => "ok", (e) => describe(e));

    out.sinkType = ["bytes", "foo", null, undefined].map((type) => { try { new WritableStream({ type }); return "ok"; } catch (e) { return e.name; } });
    return out;`);
  assert.deepEqual(off, {
    signal: [true, "undefined", "undefined", "r"],
    close: ["RangeError: boom", "RangeError"],
    desiredSize: [3, 3, null],
    transformClose: "R",
    sinkType: ["ok", "ok", "ok", "ok"],
  });
  assert.deepEqual(on, {
    signal: [true, "AbortError", "AbortError", "r"],
    close: [on.close[0], "TypeError"],
    desiredSize: [3, null, null],
    transformClose: "TypeError",
    sinkType: ["RangeError", "RangeError", "RangeError", "ok"],
  });
  assert.match(on.close[0], /^TypeError: /);
});

test("pedantic_wpt: a byte stream's close() with a BYOB read whose request was not asked for", async (t) => {
  const { off, on } = await both(t, `
    let controller; const stream = new ReadableStream({ type: "bytes", start(c) { controller = c; } });
    const reader = stream.getReader({ mode: "byob" });
    let settled = "pending";
    reader.read(new Uint8Array(8)).then((r) => { settled = "done=" + r.done + " length=" + r.value.byteLength; });
    await new Promise((r) => setTimeout(r, 1));
    controller.close();
    const request = controller.byobRequest === null ? "null" : "request";
    await new Promise((r) => setTimeout(r, 1));
    const afterClose = settled;
    controller.byobRequest?.respond(0);
    await new Promise((r) => setTimeout(r, 1));
    return { request, afterClose, settled };`);
  // workerd drops the request without the flag; with it the request stays for respond(0). (Its
  // read ended at close() either way, where the standard and workerbox wait for respond(0).)
  assert.deepEqual(off, { request: "null", afterClose: "done=true length=0", settled: "done=true length=0" });
  assert.deepEqual(on, { request: "request", afterClose: "pending", settled: "done=true length=0" });
});

test("pedantic_wpt: respondWithNewView() on a closed byte stream takes any empty view without the flag", async (t) => {
  const { off, on } = await both(t, `
    const out = {};
    const views = {
      otherLength: () => new Uint8Array(new ArrayBuffer(16), 0, 0),
      zeroLength: () => new Uint8Array(new ArrayBuffer(0), 0, 0),
      own: (request) => new Uint8Array(request.view.buffer, 0, 0),
      ownOffset1: (request) => new Uint8Array(request.view.buffer, 1, 0),
      ownNotEmpty: (request) => new Uint8Array(request.view.buffer, 0, 1),
    };
    for (const [name, makeView] of Object.entries(views)) {
      let controller; const stream = new ReadableStream({ type: "bytes", start(c) { controller = c; } });
      const reader = stream.getReader({ mode: "byob" });
      let settled = "pending";
      reader.read(new Uint8Array(8)).then((r) => { settled = "done=" + r.done + " buffer=" + r.value.buffer.byteLength; });
      await new Promise((r) => setTimeout(r, 1));
      const request = controller.byobRequest; controller.close();
      let result; try { request.respondWithNewView(makeView(request)); result = "ok"; } catch (e) { result = e.name; }
      await new Promise((r) => setTimeout(r, 1));
      // (workerd ends the read at close() either way; here it waits for a response.)
      out[name] = [result, controller.byobRequest === null ? "null" : "request", result === "ok" ? settled : "-"];
    }
    return out;`);
  const done = "done=true buffer=8";
  assert.deepEqual(off, {
    otherLength: ["ok", "null", done], zeroLength: ["ok", "null", done], own: ["ok", "null", done], ownOffset1: ["ok", "null", done],
    ownNotEmpty: ["TypeError", "request", "-"],
  });
  assert.deepEqual(on, {
    otherLength: ["RangeError", "request", "-"], zeroLength: ["RangeError", "request", "-"], own: ["ok", "null", done], ownOffset1: ["RangeError", "request", "-"],
    ownNotEmpty: ["TypeError", "request", "-"],
  });
});
