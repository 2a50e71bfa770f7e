// workers_api_getters_setters_on_prototype (2022-01-31; disable flag
// workers_api_getters_setters_on_instance): before it, workerd gave API objects their attributes as
// own properties of each instance (live, enumerable, configurable, reading as data properties,
// writable only with a setter) and left them off the prototypes. The expected values below were
// checked against workerd (Miniflare 4.20260426.0 at 2021-11-01 and 2022-02-01, and with both
// flags); where workerbox differs from workerd for reasons unrelated to this flag, a comment says so.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

const body = `
  const shape = (o) => Object.getOwnPropertyNames(o).map((k) => {
    const d = Object.getOwnPropertyDescriptor(o, k);
    return k + ":" + ("get" in d ? "accessor" : "data") + (d.writable ? ",w" : "") + (d.enumerable ? ",e" : "") + (d.configurable ? ",c" : "");
  });
  const attempt = (f) => { try { return f(); } catch (e) { return e.name + ": " + e.message; } };
  const made = new Request("https://x.example/a", { method: "POST", body: "hi" });
  const event = new Event("x");
  const out = {
    incoming: Object.keys(request),
    request: Object.keys(made),
    requestJson: JSON.parse(JSON.stringify(new Request("https://x.example/a"), (k, v) => k === "body" ? undefined : v)),
    response: Object.keys(new Response("hi")),
    event: Object.keys(event),
    eventShape: shape(event).filter((s) => s.startsWith("type:") || s.startsWith("cancelBubble:")),
    customEvent: Object.keys(new CustomEvent("x", { detail: 1 })).length,
    controller: Object.keys(new AbortController()),
    signal: Object.keys(new AbortController().signal),
    file: Object.keys(new File(["ab"], "f.txt")),
    spreadBlob: { ...new Blob(["ab"], { type: "text/plain" }) },
    decoder: Object.keys(new TextDecoder()),
    encoder: Object.keys(new TextEncoder()),
    crypto: Object.keys(crypto),
    url: Object.keys(new URL("https://u.example/p?q=1#h")),
    urlShape: shape(new URL("https://u.example/")).filter((s) => s.startsWith("href:") || s.startsWith("origin:")),
    webSocket: Object.keys(new WebSocketPair()[0]),
    transformWrappers: [new TextEncoderStream(), new CompressionStream("gzip")].map((o) => Object.keys(o)),
    onPrototype: ["method" in Request.prototype && Object.hasOwn(Request.prototype, "method"), Object.hasOwn(Event.prototype, "type"), Object.hasOwn(Blob.prototype, "size")],
    forIn: (() => { const keys = []; for (const k in new TextDecoder()) keys.push(k); return keys.slice(0, 3); })(),
    sloppySet: Reflect.set(made, "method", "GET"),
    strictSet: attempt(() => { made.method = "GET"; return made.method; }),
    deleted: (() => { const e = new Event("y"); return [delete e.type, String(e.type)]; })(),
  };
  // Objects the runtime makes itself.
  const controller = new AbortController();
  let abortEvent;
  controller.signal.addEventListener("abort", (e) => { abortEvent = e; });
  controller.abort();
  out.made = [made.clone(), Response.json({}), Response.redirect("https://x.example/"), new Response("x").clone(), abortEvent, AbortSignal.abort(), AbortSignal.timeout(1000), await new Blob(["a"]).slice(0, 1)]
    .map((o) => Object.keys(o).length);
  out.bodyUsedBefore = made.bodyUsed;
  await made.text();
  out.bodyUsedAfter = Object.getOwnPropertyDescriptor(made, "bodyUsed")?.value ?? made.bodyUsed;
  return out;`;

// What workerd gives before the date (its methods are enumerable there, so its for…in goes on
// to them).
const before = {
  incoming: ["keepalive", "integrity", "cf", "signal", "fetcher", "redirect", "headers", "url", "method", "bodyUsed", "body"],
  request: ["keepalive", "integrity", "cf", "signal", "fetcher", "redirect", "headers", "url", "method", "bodyUsed", "body"],
  requestJson: { keepalive: false, integrity: "", signal: { aborted: false }, fetcher: null, redirect: "follow", headers: {}, url: "https://x.example/a", method: "GET", bodyUsed: false },
  response: ["type", "cf", "webSocket", "url", "redirected", "ok", "headers", "statusText", "status", "bodyUsed", "body"],
  event: ["cancelBubble", "isTrusted", "timeStamp", "srcElement", "target", "currentTarget", "returnValue", "defaultPrevented", "cancelable", "bubbles", "composed", "eventPhase", "type"],
  eventShape: ["cancelBubble:data,w,e,c", "type:data,e,c"],
  customEvent: 13,
  controller: ["signal"],
  signal: ["reason", "aborted"],
  file: ["lastModified", "name", "type", "size"],
  spreadBlob: { type: "text/plain", size: 2 },
  decoder: ["ignoreBOM", "fatal", "encoding"],
  encoder: ["encoding"],
  crypto: ["subtle"],
  url: ["hash", "searchParams", "search", "pathname", "port", "hostname", "host", "password", "username", "protocol", "origin", "href"],
  urlShape: ["origin:data,e,c", "href:data,w,e,c"],
  webSocket: ["binaryType", "extensions", "protocol", "url", "readyState"],
  transformWrappers: [["writable", "readable"], ["writable", "readable"]],
  onPrototype: [false, false, false],
  forIn: ["ignoreBOM", "fatal", "encoding"],
  sloppySet: false,
  strictSet: "TypeError: Cannot assign to read only property 'method' of object '#<Request>'",
  deleted: [true, "undefined"],
  made: [11, 11, 11, 11, 13, 2, 2, 2],
  bodyUsedBefore: false,
  bodyUsedAfter: true,
};
// From the date: nothing of their own, the accessors on the prototypes (the legacy URL's too, as
// url_standard comes later). workerd's strict-mode message here is V8's read-only one; workerbox's
// JS getters give V8's getter-only one.
const after = {
  incoming: [], request: [], requestJson: {}, response: [], event: [], eventShape: [], customEvent: 0,
  controller: [], signal: [], file: [], spreadBlob: {}, decoder: [], encoder: [], crypto: [], url: [], urlShape: [],
  webSocket: [], transformWrappers: [[], []], onPrototype: [true, true, true],
  // workerd's for…in goes on to the prototype's accessors and methods, which are enumerable
  // there; workerbox's class accessors are not (whatever the date).
  forIn: [],
  sloppySet: false, strictSet: "TypeError: Cannot set property method of #<Request> which has only a getter",
  deleted: [true, "y"], made: [0, 0, 0, 0, 0, 0, 0, 0], bodyUsedBefore: false, bodyUsedAfter: true,
};

function run(t, compatibilityDate, compatibilityFlags, source = body) {
  return evalInWorker(t, source, { compatibilityDate, compatibilityFlags });
}

test("workers_api_getters_setters_on_prototype: before 2022-01-31 API objects carry their attributes as own properties; from then on, their prototypes do", async (t) => {
  const now = await run(t, undefined, undefined);
  assert.deepEqual(now.request, []);
  assert.deepEqual(now.onPrototype, [true, true, true]);
  const old = await run(t, "2021-11-01", undefined);
  assert.deepEqual(old, before);
  assert.deepEqual(await run(t, "2022-01-31", undefined), after);
  assert.deepEqual(await run(t, "2022-02-01", ["workers_api_getters_setters_on_instance"]), before);
  assert.deepEqual(await run(t, "2021-11-01", ["workers_api_getters_setters_on_prototype"]), after);
});

test("workers_api_getters_setters_on_prototype: a Response from fetch() has its attributes of its own before 2022-01-31", async (t) => {
  const http = await import("node:http");
  const server = http.createServer((req, res) => res.end("hi"));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const fetched = `const res = await fetch("http://127.0.0.1:${server.address().port}/"); return [Object.keys(res), await res.text(), res.bodyUsed];`;
  const keys = ["type", "cf", "webSocket", "url", "redirected", "ok", "headers", "statusText", "status", "bodyUsed", "body"];
  assert.deepEqual(await run(t, "2021-11-01", undefined, fetched), [keys, "hi", true]);
  assert.deepEqual(await run(t, "2022-01-31", undefined, fetched), [[], "hi", true]);
});

test("workers_api_getters_setters_on_prototype: streams, readers and writers have their attributes of their own before 2022-01-31", async (t) => {
  const streams = `
  const keys = (o) => Object.keys(o);
  const own = (o) => Object.getOwnPropertyNames(o);
  const out = {};
  const rs = new ReadableStream();
  out.readable = [keys(rs), own(rs), Object.getOwnPropertyNames(ReadableStream.prototype).filter((k) => k === "locked")];
  const reader = rs.getReader();
  out.reader = [keys(reader), Object.getOwnPropertyNames(ReadableStreamDefaultReader.prototype).filter((k) => k === "closed")];
  out.lockedLive = rs.locked;
  const bytes = new ReadableStream({ type: "bytes" });
  const byob = bytes.getReader({ mode: "byob" });
  out.byob = keys(byob);
  const ws = new WritableStream();
  out.writable = keys(ws);
  const writer = ws.getWriter();
  out.writer = keys(writer);
  out.writerDesc = Object.getOwnPropertyDescriptor(writer, "desiredSize") ? Object.entries(Object.getOwnPropertyDescriptor(writer, "desiredSize")).map(([k, v]) => k + ":" + typeof v) : null;
  const ts = new TransformStream();
  out.transform = keys(ts);
  out.fromResponse = keys(new Response("x").body);
  out.tee = new ReadableStream().tee().map(keys);
  out.json = JSON.stringify(writer);
  return out;`;
  const flags = ["streams_enable_constructors", "transformstream_enable_standard_constructor"];
  // What workerd gave for the same code at each date.
  assert.deepEqual(await run(t, "2022-01-30", flags, streams), {
    readable: [["locked"], ["locked"], []], reader: [["closed"], []], lockedLive: true, byob: ["closed"], writable: ["locked"],
    writer: ["desiredSize", "ready", "closed"], writerDesc: ["value:number", "writable:boolean", "enumerable:boolean", "configurable:boolean"],
    transform: ["writable", "readable"], fromResponse: ["locked"], tee: [["locked"], ["locked"]], json: '{"desiredSize":1,"ready":{},"closed":{}}',
  });
  assert.deepEqual(await run(t, "2022-01-31", flags, streams), {
    readable: [[], [], ["locked"]], reader: [[], ["closed"]], lockedLive: true, byob: [], writable: [], writer: [], writerDesc: null,
    transform: [], fromResponse: [], tee: [[], []], json: "{}",
  });
});
