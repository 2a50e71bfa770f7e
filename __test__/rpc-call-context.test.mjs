// Workers RPC details of order and context, asserted against what workerd (1.20260426) printed
// for the same worker: a call on an argument stub still on its way when the call ends reaches
// its object before the stub is let go (many times over, as the race was timing-dependent); an
// AbortSignal received over RPC aborts with workerd's "implicitly aborted" error when its sender
// drops the trigger without a release (`skipReleaseForTest()`, a hook of the `experimental` flag
// only), stays as it is after a clean release, and, received as a call's argument, still hears
// an abort after that call returned (in its waitUntil work); and a call on an object returned over RPC runs
// in the request that made it (its AbortController, its AsyncLocalStorage snapshot under
// bind_asynclocalstorage_snapshot_to_request); and a fetch into an entrypoint arrives as an incoming
// request (redirect "manual", immutable headers).
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const SCRIPT = `
import { WorkerEntrypoint, RpcTarget } from "cloudflare:workers";
import { AsyncLocalStorage } from "node:async_hooks";
class Wrapped extends RpcTarget {
  constructor() { super(); this.ac = new AbortController(); }
  forget() { this.ac.signal.skipReleaseForTest(); }
  getSignal() { return this.ac.signal; }
}
export class S extends WorkerEntrypoint {
  make() {
    const ac = new AbortController();
    const snapshot = AsyncLocalStorage.snapshot();
    return { abort() { ac.abort("x"); return ac.signal.aborted; }, snap() { return snapshot(() => "ok"); } };
  }
  wrapped() { return new Wrapped(); }
  nested(t) { const f = () => {}; f.value = t.get(); return f; }
  keep(signal) {
    this.ctx.waitUntil((async () => { await scheduler.wait(100); seen = [signal.aborted, String(signal.reason)]; })());
    return "kept";
  }
  seen() { return seen; }
}
let seen = "unset";
let disposed = 0;
class T extends RpcTarget { get() { return 5; } [Symbol.dispose]() { disposed++; } }
const attempt = (p) => Promise.resolve(p).catch((e) => e.name + ": " + e.message);
export default {
  async fetch(request, env, ctx) {
    const S = ctx.exports.S;
    const out = { hook: typeof AbortSignal.prototype.skipReleaseForTest };
    if (new URL(request.url).pathname === "/plain") return Response.json(out);
    const made = await S.make();
    out.abort = await attempt(made.abort());
    out.snap = await attempt(made.snap());
    const w = await S.wrapped();
    const signal = await w.getSignal();
    await w.forget();
    out.lost = [signal.aborted, signal.reason?.name, signal.reason instanceof DOMException, signal.reason?.message];
    const w2 = await S.wrapped();
    const s2 = await w2.getSignal();
    w2[Symbol.dispose]();
    await scheduler.wait(20);
    out.clean = s2.aborted;
    const ac = new AbortController();
    out.kept = await S.keep(ac.signal);
    await scheduler.wait(20);
    ac.abort("late");
    await scheduler.wait(200);
    out.seen = await S.seen();
    out.nested = [];
    for (let i = 0; i < 40; i++) out.nested.push(await attempt(S.nested(new T()).value));
    await scheduler.wait(50);
    out.disposed = disposed;
    return Response.json(out);
  },
};`;

const options = (flags) => ({ script: SCRIPT, compatibilityDate: "2025-12-01", compatibilityFlags: flags, unsafeExperimental: true });

test("RPC order and context: argument stubs outlive their calls in flight, lost AbortSignal triggers, calls in the object's request", { timeout: scaled(60_000) }, async (t) => {
  const worker = await useWorker(t, options(["nodejs_compat", "enable_abortsignal_rpc", "experimental"]));
  const out = await (await dispatch(worker, "http://x/")).json();
  assert.deepEqual(out, {
    hook: "function",
    abort: true,
    snap: "ok",
    lost: [true, "AbortError", true, "An AbortSignal received over RPC was implicitly aborted because the connection back to its trigger was lost."],
    clean: false,
    kept: "kept",
    seen: [true, "late"],
    nested: Array(40).fill(5),
    disposed: 40,
  });
});

test("AbortSignal's skipReleaseForTest() is there with the experimental flag only, as in workerd", async (t) => {
  const worker = await useWorker(t, options(["nodejs_compat", "enable_abortsignal_rpc"]));
  assert.deepEqual(await (await dispatch(worker, "http://x/plain")).json(), { hook: "undefined" });
});

test("a fetch into an entrypoint arrives as workerd delivers a request: redirect \"manual\" and immutable headers, so passing it on does not follow a 3xx", async (t) => {
  // workerd 2026-04-26 (workerd serve) answered this worker's /outer with exactly this line.
  const script = `
import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint { async fetch(request) {
  const path = new URL(request.url).pathname;
  if (path === "/inner") { let m = "mutable"; try { request.headers.set("x-a", "1"); } catch (e) { m = e.message; } return new Response("inner sees " + request.redirect + " " + m); }
  if (path === "/home") return new Response(null, { status: 302, headers: { location: "/index" } });
  if (path === "/index") return new Response("index");
  if (path === "/relay") return this.env.SELF.fetch(request);
  const a = await (await this.ctx.exports.default.fetch("http://x/inner", { redirect: "manual" })).text();
  const b = await (await this.ctx.exports.default.fetch("http://x/inner")).text();
  const c = (await this.ctx.exports.default.fetch("http://x/home")).status;
  const d = (await this.ctx.exports.default.fetch("http://x/home", { redirect: "manual" })).status;
  const e = (await this.ctx.exports.default.fetch(new Request("http://x/home", request))).status;
  // A handler reached by ctx.exports passes its request on: the 302 comes back as it is.
  const f = (await this.ctx.exports.default.fetch("http://x/relay-home", { redirect: "manual" })).status;
  return new Response([a, b, "follow:" + c, "manual:" + d, "incoming(" + request.redirect + "):" + e, "relayed:" + f].join("; "));
} }`;
  const worker = await useWorker(t, { script: script.replace('if (path === "/relay")', 'if (path === "/relay-home") return this.ctx.exports.default.fetch(new Request("http://x/home", request));\n  if (path === "/relay")'), compatibilityDate: "2026-04-01" });
  assert.equal(
    await (await dispatch(worker, "http://x/outer")).text(),
    "inner sees manual Can't modify immutable headers.; inner sees manual Can't modify immutable headers.; follow:200; manual:302; incoming(manual):302; relayed:302",
  );
});
