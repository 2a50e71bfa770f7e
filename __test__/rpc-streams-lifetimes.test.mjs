// Workers RPC behaviours of workerd's js-rpc, js-rpc-params-ownership, cross-context-promise and
// request-signal tests, asserted as workerd (1.20260426) gives them: ReadableStreams and
// WritableStreams crossing RPC as streams (arguments and results, locked ones refused, workerd's
// disconnect errors), a stub for the caller's own object coming home in a result and disposed
// locally, a request canceled with workerd's "hung" error when nothing of its own is left to
// settle it while other requests go on, and request.signal (enable_request_signal) aborting when
// the caller of a fetch into an entrypoint gives up, left behind by subrequests and RPC unless
// request_signal_passthrough, a service binding's connect() into an entrypoint's connect(socket),
// the end of a call's context (its stubs let go, ctx.abort()) and a Durable Object's ctx.abort().
// Every worker is disposed when its test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const FLAGS = ["nodejs_compat", "rpc", "enable_ctx_exports", "streams_enable_constructors"];

const STREAMS = `import { WorkerEntrypoint } from "cloudflare:workers";
const enc = new TextEncoder();
export class S extends WorkerEntrypoint {
  async read(stream) { return await new Response(stream).text(); }
  async write(stream) { const w = stream.getWriter(); await w.write(enc.encode("a, ")); await w.write(enc.encode("b")); await w.close(); }
  abortIt(stream) { stream.getWriter().abort(new Error("boom")); }
  async failing(stream) { const w = stream.getWriter(); for (;;) await w.write(enc.encode("x")); }
  give() { const { readable, writable } = new IdentityTransformStream(); this.ctx.waitUntil(this.write(writable)); return readable; }
  echo(v) { return v; }
}
export default { async fetch(req, env, ctx) {
  const S = ctx.exports.S;
  const out = {};
  {
    const { readable, writable } = new IdentityTransformStream();
    const p = S.read(readable);
    const w = writable.getWriter();
    await w.write(enc.encode("x, "));
    await w.write(enc.encode("y"));
    await w.close();
    out.readableArgument = await p;
  }
  {
    let text = "";
    const dec = new TextDecoder();
    await S.write(new WritableStream({ write(c) { text += dec.decode(c, { stream: true }); } }));
    out.writableArgument = text;
  }
  out.readableResult = await new Response(await S.give()).text();
  out.roundTrip = await new Response(await S.echo(await S.give())).text();
  {
    const { readable } = new IdentityTransformStream();
    readable.getReader();
    try { await S.read(readable); } catch (e) { out.locked = e.name + ": " + e.message; }
  }
  {
    const { promise, resolve } = Promise.withResolvers();
    await S.abortIt(new WritableStream({ abort(reason) { resolve(reason.message); } }));
    out.abortedByReceiver = await promise;
  }
  {
    let writes = 0;
    try { await S.failing(new WritableStream({ write() { writes++; throw new Error("sink failed"); } })); } catch (e) { out.sinkError = [e.message, writes]; }
  }
  {
    const { readable, writable } = new IdentityTransformStream();
    const p = S.read(readable);
    const w = writable.getWriter();
    await w.write(enc.encode("x"));
    await w.abort("gone");
    try { await p; } catch (e) { out.premature = e.name + ": " + e.message; }
  }
  return Response.json(out);
} };`;

test("ReadableStreams and WritableStreams cross RPC as streams, with workerd's errors", { timeout: scaled(60_000) }, async (t) => {
  const worker = await useWorker(t, { script: STREAMS, format: "module", compatibilityFlags: FLAGS });
  const out = await (await dispatch(worker, "http://x/")).json();
  assert.deepEqual(out, {
    readableArgument: "x, y",
    writableArgument: "a, b",
    readableResult: "a, b",
    roundTrip: "a, b",
    locked: "TypeError: The ReadableStream has been locked to a reader.",
    abortedByReceiver: "WritableStream received over RPC was disconnected because the remote execution context has endeded.",
    sinkError: ["sink failed", 1],
    premature: "Error: ReadableStream received over RPC disconnected prematurely.",
  });
});

const OWN = `import { WorkerEntrypoint, RpcTarget, RpcStub } from "cloudflare:workers";
class Counter extends RpcTarget { disposeCount = 0; increment() { return 1; } [Symbol.dispose]() { ++this.disposeCount; } }
export class T extends WorkerEntrypoint { roundTrip(stub) { return { stub: stub.dup() }; } }
export default { async fetch(req, env, ctx) {
  const counter = new Counter();
  const seen = [];
  {
    using stub = new RpcStub(counter);
    using back = (await ctx.exports.T.roundTrip(stub)).stub;
    seen.push(await back.increment());
    await scheduler.wait(0);
    seen.push(counter.disposeCount);
  }
  seen.push(counter.disposeCount);
  return Response.json(seen);
} };`;

test("a stub for the caller's own object comes home in a result: disposing it and the original disposes the object at once", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, { script: OWN, format: "module", compatibilityFlags: [...FLAGS, "rpc_params_dup_stubs"] });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), [1, 0, 1]);
});

const HUNG = "The Workers runtime canceled this request because it detected that your Worker's code had hung and would never generate a response. Refer to: https://developers.cloudflare.com/workers/observability/errors/";

const HANGING = `import { WorkerEntrypoint } from "cloudflare:workers";
export class S extends WorkerEntrypoint { never() { return new Promise(() => {}); } }
export default { async fetch(req, env, ctx) {
  const path = new URL(req.url).pathname;
  if (path === "/stuck") { await new Promise(() => {}); }
  if (path === "/slow") { await scheduler.wait(1500); return new Response("slow done"); }
  try { await ctx.exports.S.never(); return new Response("resolved"); } catch (e) { return new Response(e.name + ": " + e.message); }
} };`;

test("a request or entrypoint call with nothing of its own left to settle it fails with workerd's hung error while others go on", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, { script: HANGING, format: "module", compatibilityFlags: FLAGS });
  assert.equal(await (await dispatch(worker, "http://x/call")).text(), `Error: ${HUNG}`);
  const order = [];
  const slow = dispatch(worker, "http://x/slow").then(async (r) => order.push(await r.text()));
  const stuck = dispatch(worker, "http://x/stuck").then(
    () => order.push("stuck answered"),
    (e) => order.push(e.message),
  );
  await Promise.all([slow, stuck]);
  assert.deepEqual(order, [HUNG, "slow done"]);
});

const SIGNAL = `import { WorkerEntrypoint } from "cloudflare:workers";
let aborted = null, rpcReason = "not called", subrequest = null;
export class Other extends WorkerEntrypoint {
  async fetch() { await scheduler.wait(150); return new Response("completed"); }
  save(req) { rpcReason = req.signal.reason?.message ?? null; }
}
export class Server extends WorkerEntrypoint {
  async fetch(req) {
    req.signal.onabort = () => {
      aborted = [req.signal.reason.name, req.signal.reason.message];
      this.ctx.waitUntil(this.ctx.exports.Other.save(req.clone()));
    };
    this.ctx.waitUntil(this.ctx.exports.Other.fetch(new Request(req)).then((r) => r.text()).then((t) => (subrequest = t), (e) => (subrequest = "aborted: " + e.message)));
    for (;;) await scheduler.wait(86400);
  }
}
export default { async fetch(req, env, ctx) {
  const out = {};
  try { await ctx.exports.Server.fetch("http://x/", { signal: AbortSignal.timeout(100) }); } catch (e) { out.caller = e.name; }
  out.aborted = aborted;
  out.rpcReason = rpcReason;
  await scheduler.wait(400);
  out.subrequest = subrequest;
  return Response.json(out);
} };`;

test("request.signal aborts when the caller of a fetch into an entrypoint gives up; subrequests and RPC leave it behind unless request_signal_passthrough", { timeout: scaled(30_000) }, async (t) => {
  const flags = [...FLAGS, "enable_request_signal", "enable_abortsignal_rpc"];
  const plain = await useWorker(t, { script: SIGNAL, format: "module", compatibilityFlags: flags, unsafeExperimental: true });
  assert.deepEqual(await (await dispatch(plain, "http://x/")).json(), {
    caller: "TimeoutError",
    aborted: ["AbortError", "The client has disconnected"],
    rpcReason: null,
    subrequest: "completed",
  });
  const passthrough = await useWorker(t, { script: SIGNAL, format: "module", compatibilityFlags: [...flags, "request_signal_passthrough"], unsafeExperimental: true });
  assert.deepEqual(await (await dispatch(passthrough, "http://x/")).json(), {
    caller: "TimeoutError",
    aborted: ["AbortError", "The client has disconnected"],
    rpcReason: "The client has disconnected",
    subrequest: "aborted: The client has disconnected",
  });
});

const CONNECT = `import { WorkerEntrypoint } from "cloudflare:workers";
export class S extends WorkerEntrypoint {
  async connect(socket) {
    const reader = socket.readable.getReader();
    const { value } = await reader.read();
    const writer = socket.writable.getWriter();
    await writer.write(new TextEncoder().encode("hello " + new TextDecoder().decode(value)));
    await writer.close();
  }
}
export default { async fetch(req, env, ctx) {
  const socket = ctx.exports.S.connect("localhost:8081");
  await socket.opened;
  const writer = socket.writable.getWriter();
  await writer.write(new TextEncoder().encode("there"));
  let text = "";
  const dec = new TextDecoder();
  for await (const chunk of socket.readable) text += dec.decode(chunk, { stream: true });
  await socket.closed;
  return new Response(text + dec.decode());
} };`;

test("a service binding's connect() reaches the entrypoint's connect(socket) handler, its two directions as streams", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, { script: CONNECT, format: "module", compatibilityFlags: FLAGS });
  assert.equal(await (await dispatch(worker, "http://x/")).text(), "hello there");
});

const TEARDOWN = `import { WorkerEntrypoint, RpcTarget } from "cloudflare:workers";
class Counter extends RpcTarget {
  constructor() { super(); this.disposed = false; }
  increment() { return 1; }
  [Symbol.dispose]() { this.disposed = true; }
}
export class S extends WorkerEntrypoint {
  keep(counter) {
    const dup = counter.dup();
    return { use() { return dup.increment(); }, [Symbol.dispose]() { dup[Symbol.dispose](); } };
  }
  leakPlain(counter) { counter.dup(); return { foo: 1 }; }
  leak(counter) { counter.dup(); const ctx = this.ctx; return { abort() { ctx.abort(new RangeError("stop")); } }; }
}
async function until(f) { for (let i = 0; i < 200 && !f(); i++) await scheduler.wait(10); return f(); }
export default { async fetch(req, env, ctx) {
  const S = ctx.exports.S;
  const out = {};
  {
    const counter = new Counter();
    const obj = await S.keep(counter);
    out.keptWhileHeld = [await obj.use(), counter.disposed];
    obj[Symbol.dispose]();
    out.resultDisposerRan = await until(() => counter.disposed);
  }
  {
    const counter = new Counter();
    await S.leakPlain(counter);
    out.plainResultEndsContext = await until(() => counter.disposed);
  }
  {
    const counter = new Counter();
    const obj = await S.leak(counter);
    await scheduler.wait(20);
    const before = counter.disposed;
    let error;
    try { await obj.abort(); } catch (e) { error = e.name + ": " + e.message; }
    out.abort = [before, error, await until(() => counter.disposed)];
  }
  return Response.json(out);
} };`;

test("a call's context lasts while its result's objects are held: then the result's disposer runs and the stubs it kept go; ctx.abort() lets them go at once", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, { script: TEARDOWN, format: "module", compatibilityFlags: [...FLAGS, "rpc_params_dup_stubs"] });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), {
    keptWhileHeld: [1, false],
    resultDisposerRan: true,
    plainResultEndsContext: true,
    abort: [false, "RangeError: stop", true],
  });
});

const DURABLE_ABORT = `import { DurableObject, RpcTarget } from "cloudflare:workers";
class Tester extends RpcTarget {
  constructor(ctx) { super(); this.ctx = ctx; }
  ping() { return "pong"; }
  hang() { return new Promise(() => {}); }
  abort() { this.ctx.abort("aborted here"); }
  async breakIt() { await this.ctx.blockConcurrencyWhile(() => { throw new Error("broken section"); }); }
}
export class Actor extends DurableObject {
  n = 0;
  increment() { return ++this.n; }
  tester() { return new Tester(this.ctx); }
}
export default { async fetch(req, env, ctx) {
  const outcome = (p) => p.then((v) => "ok " + v, (e) => e.name + ": " + e.message);
  const out = {};
  for (const how of ["abort", "breakIt"]) {
    const id = ctx.exports.Actor.newUniqueId();
    const actor = ctx.exports.Actor.get(id);
    await actor.increment();
    const stub = await actor.tester();
    const hang = stub.hang();
    const ping = await stub.ping();
    const failing = stub[how]();
    const pingAfter = stub.ping();
    out[how] = [ping, await outcome(failing), await outcome(pingAfter), await outcome(hang), await outcome(stub.ping()), await outcome(actor.increment()), await outcome(ctx.exports.Actor.get(id).increment())];
  }
  return Response.json(out);
} };`;

test("a Durable Object's ctx.abort() (or a failed blockConcurrencyWhile) fails the calls in flight, cuts off its stubs and resets it, as workerd does", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, { script: DURABLE_ABORT, format: "module", compatibilityFlags: FLAGS });
  const gone = "Error: The execution context which hosts this callback is no longer running.";
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), {
    abort: ["pong", "Error: aborted here", "Error: aborted here", "Error: aborted here", gone, "Error: aborted here", "ok 1"],
    breakIt: ["pong", "Error: broken section", "Error: broken section", "Error: broken section", gone, "Error: broken section", "ok 1"],
  });
});

const STREAMED_ANSWER = `import { WorkerEntrypoint } from "cloudflare:workers";
let aborted = null;
export class Server extends WorkerEntrypoint {
  async fetch(req) {
    req.signal.onabort = () => { aborted = req.signal.reason.message; };
    const { readable, writable } = new IdentityTransformStream();
    const writer = writable.getWriter();
    this.ctx.waitUntil(writer.write(new TextEncoder().encode("first")).then(() => scheduler.wait(86400)));
    return new Response(readable);
  }
}
export default { async fetch(req, env, ctx) {
  const res = await ctx.exports.Server.fetch("http://x/");
  const reader = res.body.getReader();
  const { value } = await reader.read();
  const before = aborted;
  await reader.cancel();
  return Response.json([new TextDecoder().decode(value), before, aborted]);
} };`;

test("a named entrypoint's answer of unknown length streams to its caller; cancelling it aborts the request's signal (enable_request_signal)", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, { script: STREAMED_ANSWER, format: "module", compatibilityFlags: [...FLAGS, "enable_request_signal"] });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), ["first", null, "The client has disconnected"]);
});
