// console.log of the runtime's API objects shows them as workerd's console does: attributes in
// workerd's order, internal state in brackets, map-likes with their entries, promises with their
// state. Every expected string is what workerd (Miniflare 4.20260426.0) printed for the same code
// at the same compatibility date.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker, waitFor } from "./helpers.mjs";

const BODY = `
  show("Request", new Request("http://a/x?y=1#z", { method: "POST", body: "x", headers: { "X-A": "1" } }));
  show("RequestGet", new Request("https://b.example/"));
  show("Response", new Response("x", { status: 201, headers: { a: "b" } }));
  show("ResponseNull", new Response(null, { status: 204 }));
  show("Headers", new Headers({ a: "1", B: "2", "set-cookie": "c=1" }));
  show("HeadersEmpty", new Headers());
  show("URL", new URL("http://u:p@a.example:81/p?q=1#h"));
  show("USP", new URLSearchParams("a=1&b=2&a=3"));
  show("USPEmpty", new URLSearchParams());
  const ac = new AbortController(); show("AbortController", ac); ac.abort("why"); show("AbortSignalAborted", ac.signal);
  show("TextDecoder", new TextDecoder("utf-16le", { fatal: true })); show("TextEncoder", new TextEncoder());
  show("Blob", new Blob(["abc"], { type: "text/plain" })); show("File", new File(["abc"], "f.txt", { type: "text/plain", lastModified: 5 }));
  show("Event", new Event("x", { cancelable: true })); show("CustomEvent", new CustomEvent("c", { detail: { a: 1 } }));
  show("MessageEvent", new MessageEvent("message", { data: 1 }));
  show("EventTarget", new EventTarget());
  show("URLPattern", new URLPattern({ pathname: "/a/:id" }));
  show("crypto", crypto);
  show("CryptoKey", await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, true, ["sign"]));
  show("BLQS", new ByteLengthQueuingStrategy({ highWaterMark: 5 })); show("CQS", new CountQueuingStrategy({ highWaterMark: 2 }));
  show("TextDecoderStream", new TextDecoderStream()); show("DecompressionStream", new DecompressionStream("gzip"));
  const rs = new ReadableStream({ start(c) { c.enqueue("a"); c.close(); } }); show("RSclosed", rs);
  const er = new ReadableStream({ start(c) { c.error(new Error("boom")); } }); show("RSerrored", er);
  const ws = new WritableStream(); const w = ws.getWriter(); show("Writer", w); show("WS", ws);
  let bc; new ReadableStream({ type: "bytes", start(c) { bc = c; } }); show("ByteController", bc);
  const wsc = await new Promise((r) => new WritableStream({ start(c) { r(c); } })); show("WSController", wsc);
  const tsc = await new Promise((r) => new TransformStream({ start(c) { r(c); } })); show("TSController", tsc);
  show("caches", caches); show("scheduler", scheduler);
  show("WebSocketPair", new WebSocketPair());
  show("nested", { r: new Request("http://n/"), list: [new Headers({ x: "y" })] });
  show("CloseEvent", new CloseEvent("close", { code: 1000, reason: "r", wasClean: true }));
  show("TextEncoderStream", new TextEncoderStream()); show("CompressionStream", new CompressionStream("gzip"));
  const bs = new ReadableStream({ type: "bytes" }); show("BYOBReader", bs.getReader({ mode: "byob" })); show("lockedBytes", bs);
  const ws2 = new WritableStream(); const w2 = ws2.getWriter(); await w2.close(); show("closedWS", ws2);
  const ews = new WritableStream({ start(c) { c.error(new Error("x")); } }); await new Promise((r) => setTimeout(r, 1)); show("erroredWS", ews);
  show("promises", [Promise.resolve(5), Promise.resolve({ a: 1 }), new Promise(() => {})]);
  show("signalTimeout", AbortSignal.timeout(1000));
  show("respJson", Response.json({ a: 1 }));
  show("redirect", Response.redirect("http://x/", 302));
  show("fetchResp", new Response(new ReadableStream()));
  show("encoded", new Response("héllo").body);
  show("blobStream", new Blob(["abcd"]).stream());
`;

const WORKERD = {
  "Request": "Request {\n  method: 'POST',\n  url: 'http://a/x?y=1#z',\n  headers: Headers(2) {\n    'content-type' => 'text/plain;charset=UTF-8',\n    'x-a' => '1',\n    [immutable]: false\n  },\n  redirect: 'follow',\n  fetcher: null,\n  signal: AbortSignal { aborted: false, reason: undefined, onabort: null },\n  cf: undefined,\n  integrity: '',\n  keepalive: false,\n  cache: undefined,\n  body: ReadableStream {\n    locked: false,\n    [state]: 'readable',\n    [supportsBYOB]: true,\n    [length]: 1n\n  },\n  bodyUsed: false\n}",
  "RequestGet": "Request {\n  method: 'GET',\n  url: 'https://b.example/',\n  headers: Headers(0) { [immutable]: false },\n  redirect: 'follow',\n  fetcher: null,\n  signal: AbortSignal { aborted: false, reason: undefined, onabort: null },\n  cf: undefined,\n  integrity: '',\n  keepalive: false,\n  cache: undefined,\n  body: null,\n  bodyUsed: false\n}",
  "Response": "Response {\n  status: 201,\n  statusText: 'Created',\n  headers: Headers(2) {\n    'a' => 'b',\n    'content-type' => 'text/plain;charset=UTF-8',\n    [immutable]: false\n  },\n  ok: true,\n  redirected: false,\n  url: '',\n  webSocket: null,\n  cf: undefined,\n  type: 'default',\n  body: ReadableStream {\n    locked: false,\n    [state]: 'readable',\n    [supportsBYOB]: true,\n    [length]: 1n\n  },\n  bodyUsed: false\n}",
  "ResponseNull": "Response {\n  status: 204,\n  statusText: 'No Content',\n  headers: Headers(0) { [immutable]: false },\n  ok: true,\n  redirected: false,\n  url: '',\n  webSocket: null,\n  cf: undefined,\n  type: 'default',\n  body: null,\n  bodyUsed: false\n}",
  "Headers": "Headers(3) {\n  'a' => '1',\n  'b' => '2',\n  'set-cookie' => 'c=1',\n  [immutable]: false\n}",
  "HeadersEmpty": "Headers(0) { [immutable]: false }",
  "URL": "URL {\n  origin: 'http://a.example:81',\n  href: 'http://u:p@a.example:81/p?q=1#h',\n  protocol: 'http:',\n  username: 'u',\n  password: 'p',\n  host: 'a.example:81',\n  hostname: 'a.example',\n  port: '81',\n  pathname: '/p',\n  search: '?q=1',\n  hash: '#h',\n  searchParams: URLSearchParams(1) { 'q' => '1' }\n}",
  "USP": "URLSearchParams(3) { 'a' => '1', 'b' => '2', 'a' => '3' }",
  "USPEmpty": "URLSearchParams(0) {}",
  "AbortController": "AbortController {\n  signal: AbortSignal { aborted: false, reason: undefined, onabort: null }\n}",
  "AbortSignalAborted": "AbortSignal { aborted: true, reason: 'why', onabort: null }",
  "TextDecoder": "TextDecoder { encoding: 'utf-16le', fatal: true, ignoreBOM: false }",
  "TextEncoder": "TextEncoder { encoding: 'utf-8' }",
  "Blob": "Blob { size: 3, type: 'text/plain' }",
  "File": "File { name: 'f.txt', lastModified: 5, size: 3, type: 'text/plain' }",
  "Event": "Event {\n  type: 'x',\n  eventPhase: 0,\n  composed: false,\n  bubbles: false,\n  cancelable: true,\n  defaultPrevented: false,\n  returnValue: true,\n  currentTarget: undefined,\n  target: undefined,\n  srcElement: undefined,\n  timeStamp: 0,\n  isTrusted: false,\n  cancelBubble: false\n}",
  "CustomEvent": "CustomEvent {\n  detail: { a: 1 },\n  type: 'c',\n  eventPhase: 0,\n  composed: false,\n  bubbles: false,\n  cancelable: false,\n  defaultPrevented: false,\n  returnValue: true,\n  currentTarget: undefined,\n  target: undefined,\n  srcElement: undefined,\n  timeStamp: 0,\n  isTrusted: true,\n  cancelBubble: false,\n  NONE: 0,\n  CAPTURING_PHASE: 1,\n  AT_TARGET: 2,\n  BUBBLING_PHASE: 3\n}",
  "MessageEvent": "MessageEvent {\n  ports: [ [length]: 0 ],\n  source: null,\n  lastEventId: '',\n  origin: null,\n  data: 1,\n  type: 'message',\n  eventPhase: 0,\n  composed: false,\n  bubbles: false,\n  cancelable: false,\n  defaultPrevented: false,\n  returnValue: true,\n  currentTarget: undefined,\n  target: undefined,\n  srcElement: undefined,\n  timeStamp: 0,\n  isTrusted: true,\n  cancelBubble: false,\n  NONE: 0,\n  CAPTURING_PHASE: 1,\n  AT_TARGET: 2,\n  BUBBLING_PHASE: 3\n}",
  "EventTarget": "EventTarget {}",
  "URLPattern": "URLPattern {\n  protocol: '*',\n  username: '*',\n  password: '*',\n  hostname: '*',\n  port: '*',\n  pathname: '/a/:id',\n  search: '*',\n  hash: '*',\n  hasRegExpGroups: false\n}",
  "crypto": "Crypto { subtle: SubtleCrypto {} }",
  "CryptoKey": "CryptoKey {\n  usages: [ 'sign', [length]: 1 ],\n  algorithm: { name: 'HMAC', hash: { name: 'SHA-256' }, length: 512 },\n  extractable: true,\n  type: 'secret'\n}",
  "BLQS": "ByteLengthQueuingStrategy { highWaterMark: 5 }",
  "CQS": "CountQueuingStrategy { highWaterMark: 2 }",
  "TextDecoderStream": "TextDecoderStream {\n  encoding: 'utf-8',\n  fatal: false,\n  ignoreBOM: false,\n  readable: ReadableStream {\n    locked: false,\n    [state]: 'readable',\n    [supportsBYOB]: false,\n    [length]: undefined\n  },\n  writable: WritableStream { locked: false, [state]: 'writable', [expectsBytes]: false }\n}",
  "DecompressionStream": "DecompressionStream {\n  readable: ReadableStream {\n    locked: false,\n    [state]: 'readable',\n    [supportsBYOB]: true,\n    [length]: undefined\n  },\n  writable: WritableStream { locked: false, [state]: 'writable', [expectsBytes]: true }\n}",
  "RSclosed": "ReadableStream {\n  locked: false,\n  [state]: 'readable',\n  [supportsBYOB]: false,\n  [length]: undefined\n}",
  "RSerrored": "ReadableStream {\n  locked: false,\n  [state]: 'errored',\n  [supportsBYOB]: false,\n  [length]: undefined\n}",
  "Writer": "WritableStreamDefaultWriter {\n  closed: Promise { <pending> },\n  ready: Promise { <pending> },\n  desiredSize: 1\n}",
  "WS": "WritableStream { locked: true, [state]: 'writable', [expectsBytes]: false }",
  "ByteController": "ReadableByteStreamController { byobRequest: null, desiredSize: 0 }",
  "WSController": "WritableStreamDefaultController {\n  signal: AbortSignal { aborted: false, reason: undefined, onabort: null }\n}",
  "TSController": "TransformStreamDefaultController { desiredSize: 0 }",
  "caches": "CacheStorage { default: Cache {} }",
  "scheduler": "Scheduler {}",
  "WebSocketPair": "WebSocketPair {\n  '0': WebSocket {\n    readyState: 1,\n    url: null,\n    protocol: '',\n    extensions: '',\n    binaryType: 'arraybuffer'\n  },\n  '1': WebSocket {\n    readyState: 1,\n    url: null,\n    protocol: '',\n    extensions: '',\n    binaryType: 'arraybuffer'\n  }\n}",
  "nested": "{\n  r: Request {\n    method: 'GET',\n    url: 'http://n/',\n    headers: Headers(0) { [immutable]: false },\n    redirect: 'follow',\n    fetcher: null,\n    signal: AbortSignal { aborted: false, reason: undefined, onabort: null },\n    cf: undefined,\n    integrity: '',\n    keepalive: false,\n    cache: undefined,\n    body: null,\n    bodyUsed: false\n  },\n  list: [ Headers(1) { 'x' => 'y', [immutable]: false } ]\n}",
  "CloseEvent": "CloseEvent {\n  wasClean: true,\n  reason: 'r',\n  code: 1000,\n  type: 'close',\n  eventPhase: 0,\n  composed: false,\n  bubbles: false,\n  cancelable: false,\n  defaultPrevented: false,\n  returnValue: true,\n  currentTarget: undefined,\n  target: undefined,\n  srcElement: undefined,\n  timeStamp: 0,\n  isTrusted: true,\n  cancelBubble: false,\n  NONE: 0,\n  CAPTURING_PHASE: 1,\n  AT_TARGET: 2,\n  BUBBLING_PHASE: 3\n}",
  "TextEncoderStream": "TextEncoderStream {\n  encoding: 'utf-8',\n  readable: ReadableStream {\n    locked: false,\n    [state]: 'readable',\n    [supportsBYOB]: false,\n    [length]: undefined\n  },\n  writable: WritableStream { locked: false, [state]: 'writable', [expectsBytes]: false }\n}",
  "CompressionStream": "CompressionStream {\n  readable: ReadableStream {\n    locked: false,\n    [state]: 'readable',\n    [supportsBYOB]: true,\n    [length]: undefined\n  },\n  writable: WritableStream { locked: false, [state]: 'writable', [expectsBytes]: true }\n}",
  "BYOBReader": "ReadableStreamBYOBReader { closed: Promise { <pending> } }",
  "lockedBytes": "ReadableStream {\n  locked: true,\n  [state]: 'readable',\n  [supportsBYOB]: true,\n  [length]: undefined\n}",
  "closedWS": "WritableStream { locked: true, [state]: 'closed', [expectsBytes]: false }",
  "erroredWS": "WritableStream { locked: false, [state]: 'errored', [expectsBytes]: false }",
  "promises": "[ Promise { 5 }, Promise { { a: 1 } }, Promise { <pending> } ]",
  "signalTimeout": "AbortSignal { aborted: false, reason: undefined, onabort: null }",
  "respJson": "Response {\n  status: 200,\n  statusText: 'OK',\n  headers: Headers(1) { 'content-type' => 'application/json', [immutable]: false },\n  ok: true,\n  redirected: false,\n  url: '',\n  webSocket: null,\n  cf: undefined,\n  type: 'default',\n  body: ReadableStream {\n    locked: false,\n    [state]: 'readable',\n    [supportsBYOB]: true,\n    [length]: 7n\n  },\n  bodyUsed: false\n}",
  "redirect": "Response {\n  status: 302,\n  statusText: 'Found',\n  headers: Headers(1) { 'location' => 'http://x/', [immutable]: true },\n  ok: false,\n  redirected: false,\n  url: '',\n  webSocket: null,\n  cf: undefined,\n  type: 'default',\n  body: null,\n  bodyUsed: false\n}",
  "fetchResp": "Response {\n  status: 200,\n  statusText: 'OK',\n  headers: Headers(0) { [immutable]: false },\n  ok: true,\n  redirected: false,\n  url: '',\n  webSocket: null,\n  cf: undefined,\n  type: 'default',\n  body: ReadableStream {\n    locked: false,\n    [state]: 'readable',\n    [supportsBYOB]: false,\n    [length]: undefined\n  },\n  bodyUsed: false\n}",
  "encoded": "ReadableStream {\n  locked: false,\n  [state]: 'readable',\n  [supportsBYOB]: true,\n  [length]: 6n\n}",
  "blobStream": "ReadableStream {\n  locked: false,\n  [state]: 'readable',\n  [supportsBYOB]: true,\n  [length]: 4n\n}"
};

/** Runs BODY in a worker; returns each `show(label, value)` line as { label: text }. */
async function printed(t) {
  const lines = [];
  const script = `export default { async fetch() {
    const show = (label, value) => console.log("##" + label + "\\n", value);
    ${BODY}
    return new Response("done");
  } }`;
  const worker = await useWorker(t, { script, compatibilityDate: "2025-06-01", onLog: (level, message) => lines.push(message) });
  const response = await dispatch(worker, "http://localhost/");
  assert.equal(await response.text(), "done");
  await waitFor(() => lines.length >= Object.keys(WORKERD).length);
  return Object.fromEntries(lines.map((line) => {
    const [label, ...rest] = line.split("\n");
    return [label.slice(2), rest.join("\n").slice(1)];
  }));
}

test("console.log shows API objects, streams and promises as workerd does", async (t) => {
  const got = await printed(t);
  for (const [label, expected] of Object.entries(WORKERD)) assert.equal(got[label], expected, label);
});

test("streams have no enumerable fields of their own: Object.keys is empty and JSON.stringify gives {}", async (t) => {
  const out = await evalInWorker(t, `
    const rs = new ReadableStream();
    const ts = new TransformStream();
    const writer = ts.writable.getWriter();
    const keys = [rs, rs.getReader(), ts, writer, new Response("x").body, new CompressionStream("gzip").readable].map((o) => Object.keys(o));
    let forIn = 0;
    for (const key in writer) forIn++;
    return { keys, json: JSON.stringify({ rs, writer, ts }), forIn: forIn > 0, spread: Object.keys({ ...rs }) };`);
  assert.deepEqual(out, { keys: [[], [], [], [], [], []], json: '{"rs":{},"writer":{},"ts":{}}', forIn: true, spread: [] });
});

test("statusText defaults, Event, FormData and WebSocketPair values are workerd's", async (t) => {
  const out = await evalInWorker(t, `
    const e = new Event("x");
    const form = new FormData();
    form.append("b", new Blob(["x"]));
    form.append("c", new Blob(["x"]), "named.txt");
    const [a] = Object.values(new WebSocketPair());
    let byob;
    try { new CompressionStream("gzip").readable.getReader({ mode: "byob" }); byob = true; } catch (error) { byob = error.name; }
    return {
      statusText: [200, 201, 204, 404, 418, 299, 399, 500, 302, 599].map((status) => new Response(null, { status }).statusText),
      given: new Response(null, { status: 201, statusText: "" }).statusText,
      cloned: new Response(null, { status: 404 }).clone().statusText,
      trusted: [e.isTrusted, new CustomEvent("c").isTrusted, new MessageEvent("m", {}).isTrusted, new CloseEvent("close").isTrusted],
      target: [typeof e.target, typeof e.srcElement, e.timeStamp],
      form: [form.get("b").name, form.get("c").name],
      pair: [a.extensions, a.binaryType],
      byob,
      fetcher: new Request("http://x/").fetcher,
      cf: [new Response("x", { cf: { a: 1 } }).cf, new Response("x", { cf: { a: 1 } }).clone().cf, new Response("").cf === undefined],
      scheduler: Object.prototype.toString.call(scheduler),
    };`, { compatibilityDate: "2025-06-01" });
  // What workerd gave for the same code.
  assert.deepEqual(out, {
    statusText: ["OK", "Created", "No Content", "Not Found", "I'm a teapot", "Successful", "Redirection", "Internal Server Error", "Found", "Server Error"],
    given: "",
    cloned: "Not Found",
    trusted: [false, true, true, true],
    target: ["undefined", "undefined", 0],
    form: ["b", "named.txt"],
    pair: ["", "arraybuffer"],
    byob: true,
    fetcher: null,
    cf: [{ a: 1 }, { a: 1 }, true],
    scheduler: "[object Scheduler]",
  });
});

test("a worker's incoming request does not follow redirects, as workerd's", async (t) => {
  const out = await evalInWorker(t, "return request.redirect;");
  assert.equal(out, "manual");
});
