// Workers RPC behaviours workerd's own js-rpc, rpc-error and deserialize-hardening tests check,
// asserted against what workerd (1.20260426) printed for the same worker: an error's own
// properties and the caller's stack (enhanced_error_serialization), member lookup along a path
// (own properties of plain objects, "not a function", reserved names through
// getRpcMethodForTestOnly), workerd's DataCloneErrors for class instances, null-prototype objects
// and Proxies, a `new RpcStub()` handed over when sent and a received stub released at the end of
// the call even when a dup() of it is returned, Headers/Request/Response as values, a service
// binding's queue() (service_binding_extra_handlers) with bodies, serialized bodies and a crafted
// host object, ctx.exports for a named object of handlers, a stub or pipelined call of one request
// used from another (workerd's I/O-context errors), cloudflare:workers' waitUntil in an RPC call,
// a service binding's fetch() following redirects, and Response.error() as workerd treats it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, service } from "../index.js";

import { scaled } from "./child-node.mjs";
const WORKER = `import { WorkerEntrypoint, RpcTarget, RpcStub, waitUntil } from "cloudflare:workers";
let shared;
let later;
class Counter extends RpcTarget { constructor(i) { super(); this.i = i; } increment(j) { return (this.i += j); } }
class Plain { x = 1; }
export class S extends WorkerEntrypoint {
  throwing() { const e = new RangeError("boom"); e.code = "E_BOOM"; throw e; }
  get config() { return { limits: { max: 3, get() { return 9; } }, n: 5 }; }
  plain() { return { obj: new Plain() }; }
  nullProto() { return Object.create(null); }
  async use(counter) { return await counter.increment(1); }
  keep(counter) { return { counter: counter.dup(), later: () => counter.increment(1) }; }
  headers() { const h = new Headers(); h.append("set-cookie", "a"); h.append("set-cookie", "b"); h.append("x", "1"); return h; }
  request() { return new Request("http://x/p", { method: "PUT", body: "req body", redirect: "manual", headers: { a: "1" } }); }
  response() { return new Response("res body", { status: 404, headers: { "content-type": "text/x" } }); }
  echo(v) { return v; }
  makeCounter(i) { return new Counter(i); }
  errorValue() { const e = new Error("boom"); e.stack2 = e.stack; e.code = 7; return { a: e }; }
  async awaitShared() { return await shared; }
  async pipelineShared() { return await shared.increment(1); }
  waitImported() { let r; later = new Promise((x) => (r = x)); waitUntil(scheduler.wait(50).then(() => r("done"))); }
}
export const handlers = { ping(arg, env, ctx) { return "pong " + arg; } };
export default {
  async queue(batch) { batch.ackAll(); },
  async fetch(req, env, ctx) { return Response.json(await run(env, ctx)); },
  async test(ctrl, env, ctx) { console.log("RESULT " + JSON.stringify(await run(env, ctx))); },
};
async function run(env, ctx) {
  const S = ctx.exports.S;
  const out = {};
  const attempt = async (f) => { try { return await f(); } catch (e) { return \`\${e.name}: \${e.message}\`; } };
  try { await S.throwing(); } catch (e) { out.error = [e.name, e.message, e.code, e.remote, e instanceof RangeError, e.stack.includes("throwing")]; }
  out.path = await S.config.limits.get();
  out.notFunction = await attempt(() => S.config.n());
  out.ownMissing = await attempt(() => S.config.limits.nope());
  out.reserved = await attempt(() => S.getRpcMethodForTestOnly("fetch")());
  out.plain = await attempt(() => S.plain());
  out.nullProto = await attempt(() => S.nullProto());
  out.proxy = await attempt(() => S.echo(new Proxy(new Plain(), {})));
  const counter = new Counter(1);
  const stub = new RpcStub(counter);
  const dup = stub.dup();
  out.used = await S.use(stub);
  out.afterSend = await attempt(() => stub.increment(1));
  out.dupStill = await dup.increment(1);
  const k = await S.keep(new Counter(5));
  out.keepLater = await attempt(() => k.later());
  out.keepDup = await k.counter.increment(1);
  const h = await S.headers();
  out.headers = [h instanceof Headers, [...h]];
  const r = await S.request();
  out.request = [r instanceof Request, r.url, r.method, r.redirect, r.headers.get("a"), await r.text()];
  const res = await S.response();
  out.response = [res instanceof Response, res.status, res.statusText, res.headers.get("content-type"), await res.text()];
  const e = await S.echo(new Request("http://y/", { method: "POST", body: "hi" }));
  out.echo = [e.method, e.url, await e.text()];
  out.queue = await env.SELF.queue("q", [{ id: "1", timestamp: new Date(0), attempts: 1, body: { a: 1 } }]);
  out.queueBad = await attempt(() => env.SELF.queue("q", [{ id: "1", timestamp: new Date(0), attempts: 1 }]));
  const crafted = new Uint8Array([0xff, 0x0f, 0x5c, 0x04, 0x00, 0x81, 0x08]).buffer;
  out.queueCrafted = (await env.SELF.queue("q", [{ id: "2", timestamp: new Date(0), attempts: 1, serializedBody: crafted }])).outcome;
  out.named = await ctx.exports.handlers.ping("x");
  shared = S.makeCounter(1);
  out.sharedStub = await attempt(() => S.awaitShared());
  out.sharedPipeline = await attempt(() => S.pipelineShared());
  const ev = await S.errorValue();
  out.errorInValue = [ev.a instanceof Error, ev.a.message, ev.a.code, typeof ev.a.stack2, ev.a.stack2 !== ev.a.stack];
  await S.waitImported();
  out.imported = await later;
  return out;
}
`;

const OTHER_REQUEST =
  "Cannot perform I/O on behalf of a different request. I/O objects (such as streams, request/response bodies, and others) created in the context of one request handler cannot be accessed from a different request's handler. This is a limitation of Cloudflare Workers which allows us to improve overall performance.";

/** What workerd printed for WORKER (compatibility date 2025-12-01 and the flags below). */
const WORKERD = {
  error: ["RangeError", "boom", "E_BOOM", true, true, false],
  path: 9,
  notFunction: 'TypeError: "config.n" is not a function.',
  ownMissing: 'TypeError: The RPC receiver does not implement the method "nope".',
  reserved: "TypeError: 'fetch' is a reserved method and cannot be called over RPC.",
  plain: 'DataCloneError: Could not serialize object of type "Plain". This type does not support serialization.',
  nullProto: 'DataCloneError: Could not serialize object of type "Object". This type does not support serialization.',
  proxy: "DataCloneError: Proxy could not be serialized because it is not a valid RPC receiver type. The Proxy must emulate either a plain object or an RpcTarget, as indicated by the Proxy's prototype chain.",
  used: 2,
  afterSend: "Error: RPC stub used after being disposed.",
  dupStill: 3,
  keepLater: "Error: RPC stub used after being disposed.",
  keepDup: 6,
  headers: [true, [["set-cookie", "a"], ["set-cookie", "b"], ["x", "1"]]],
  request: [true, "http://x/p", "PUT", "manual", "1", "req body"],
  response: [true, 404, "Not Found", "text/x", "res body"],
  echo: ["POST", "http://y/", "hi"],
  queue: { outcome: "ok", ackAll: true, retryBatch: { retry: false }, explicitAcks: [], retryMessages: [] },
  queueBad: "TypeError: Expected one of body or serializedBody for each message",
  queueCrafted: "exception",
  named: "pong x",
  sharedStub: `Error: ${OTHER_REQUEST} (I/O type: Client)`,
  sharedPipeline: `Error: ${OTHER_REQUEST} (I/O type: JsRpcPromise)`,
  errorInValue: [true, "boom", 7, "string", true],
  imported: "done",
};

test("RPC errors, lookup, DataCloneErrors, stub handover, HTTP values, queue() and named handlers as in workerd", { timeout: scaled(60_000) }, async () => {
  const self = service({ fetch: () => new Response("not started", { status: 503 }) });
  const worker = await createWorker({
    script: WORKER,
    format: "module",
    compatibilityDate: "2025-12-01",
    compatibilityFlags: ["nodejs_compat", "enhanced_error_serialization", "service_binding_extra_handlers", "experimental"],
    unsafeExperimental: true,
    bindings: { SELF: self },
    onLog() {},
  });
  try {
    self.handler = worker;
    const response = await dispatch(worker, "http://x/");
    assert.deepEqual(await response.json(), WORKERD);
  } finally {
    await worker.dispose();
  }
});

const REDIRECTS = `import { WorkerEntrypoint } from "cloudflare:workers";
export class Server extends WorkerEntrypoint {
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/echo") return new Response(\`\${req.method} \${req.url} \${req.headers.get("authorization") ?? "-"} \${await req.text()}\`);
    if (path === "/same") return Response.redirect("http://a.example/echo", 302);
    if (path === "/cross") return Response.redirect("http://b.example/echo", 307);
    return new Response("?");
  }
}
async function run(env) {
  const out = {};
  const go = async (url, init) => { const r = await env.Server.fetch(url, init); return [r.status, r.redirected, r.url, await r.text()]; };
  out.same = await go("http://a.example/same", { method: "POST", body: "x", headers: { authorization: "secret" } });
  out.cross = await go("http://a.example/cross", { method: "POST", body: "y", headers: { authorization: "secret" } });
  out.manual = await go("http://a.example/same", { redirect: "manual" });
  return out;
}
export default { async fetch(req, env) { return Response.json(await run(env)); }, async test(c, env) { console.log("RESULT " + JSON.stringify(await run(env))); } };
`;

test("a service binding's fetch() follows redirects to the same service, dropping Authorization across origins, as workerd printed", { timeout: scaled(60_000) }, async () => {
  const server = service({ fetch: () => new Response("not started", { status: 503 }) });
  const worker = await createWorker({ script: REDIRECTS, format: "module", compatibilityDate: "2025-12-01", compatibilityFlags: ["nodejs_compat"], bindings: { Server: server }, onLog() {} });
  try {
    server.handler = worker;
    server.entrypoint = "Server";
    const out = await (await dispatch(worker, "http://x/")).json();
    // workerd 1.20260426 (its unfollowed response's url is the request's; here it is "").
    assert.deepEqual(out.same, [200, true, "http://a.example/echo", "GET http://a.example/echo secret "]);
    assert.deepEqual(out.cross, [200, true, "http://b.example/echo", "POST http://b.example/echo - y"]);
    assert.deepEqual([out.manual[0], out.manual[1], out.manual[3]], [302, false, ""]);
  } finally {
    await worker.dispose();
  }
});

const ERROR_RESPONSE = `import { WorkerEntrypoint } from "cloudflare:workers";
export class S extends WorkerEntrypoint {
  fetch(req) { return new URL(req.url).pathname === "/error" ? Response.error() : new Response("ok"); }
  errorResponse() { return Response.error(); }
}
async function run(env) {
  const out = {};
  try { await env.S.fetch("http://x/error"); out.fetchError = "no error"; } catch (e) { out.fetchError = e.name + ": " + e.message; }
  try { new Response("", Response.error()); } catch (e) { out.construct = e.name + ": " + e.message; }
  try { new Response("", { status: 600 }); } catch (e) { out.status600 = e.name + ": " + e.message; }
  const r = await env.S.errorResponse();
  out.rpc = [r instanceof Response, r.type, r.status, r.ok];
  return out;
}
export default { async fetch(req, env) { return Response.json(await run(env)); }, async test(c, env) { console.log("RESULT " + JSON.stringify(await run(env))); } };
`;

test("Response.error(): refused as a fetch handler's answer, and crossing RPC as itself; the Response status range error, as workerd printed", { timeout: scaled(60_000) }, async () => {
  const s = service({ fetch: () => new Response("not started", { status: 503 }) });
  const worker = await createWorker({ script: ERROR_RESPONSE, format: "module", compatibilityDate: "2025-12-01", compatibilityFlags: ["nodejs_compat"], bindings: { S: s }, onLog() {} });
  try {
    s.handler = worker;
    s.entrypoint = "S";
    assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), {
      fetchError: "TypeError: Return value from serve handler must not be an error response (like Response.error())",
      construct: "RangeError: Responses may only be constructed with status codes in the range 200 to 599, inclusive.",
      status600: "RangeError: Responses may only be constructed with status codes in the range 200 to 599, inclusive.",
      rpc: [true, "error", 0, false],
    });
  } finally {
    await worker.dispose();
  }
});
