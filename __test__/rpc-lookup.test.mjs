// RPC member lookup as workerd does it, checked against what workerd printed for the same worker
// (workerd 2025-11-20, through ctx.exports): an instance field shadowing a class method fails as
// a missing method; a constructor that returns a Proxy is read through its traps (so private
// fields work); a missing property read fails; an object result carries a non-enumerable
// Symbol.dispose. Also: a default export with only tail() is a valid worker, as in workerd.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";

const WORKER = `
import { WorkerEntrypoint } from "cloudflare:workers";
export class N extends WorkerEntrypoint {
  constructor(ctx, env) { super(ctx, env); this.shadow = () => "instance"; return new Proxy(this, { get(t, k, r) { const v = Reflect.get(t, k, r); return typeof v === "function" ? v.bind(t) : v; } }); }
  #p = "private";
  shadow() { return "prototype"; }
  priv() { return this.#p; }
  obj() { return { hello: "world" }; }
}
export default { async fetch(req, env, ctx) {
  const out = {};
  const n = ctx.exports.N;
  try { out.shadow = await n.shadow(); } catch (e) { out.shadow = String(e); }
  try { out.priv = await n.priv(); } catch (e) { out.priv = String(e); }
  const o = await n.obj(); out.dispose = typeof o[Symbol.dispose]; out.enumerableSyms = Object.getOwnPropertySymbols(o).map(s => [String(s), Object.getOwnPropertyDescriptor(o, s).enumerable]);
  try { out.missing = String(await n.missingProp); } catch (e) { out.missing = String(e); }
  return Response.json(out);
} };`;

/** What workerd answered for WORKER. */
const WORKERD = {
  shadow: 'TypeError: The RPC receiver does not implement the method "shadow".',
  priv: "private",
  dispose: "function",
  enumerableSyms: [["Symbol(Symbol.dispose)", false]],
  missing: 'TypeError: The RPC receiver does not implement the method "missingProp".',
};

test("RPC lookup: shadowing instance fields, Proxy receivers, missing properties and result disposers as in workerd", async () => {
  const worker = await createWorker({ script: WORKER, format: "module", compatibilityDate: "2025-11-20", onLog() {} });
  try {
    assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), WORKERD);
  } finally {
    await worker.dispose();
  }
});

test("a default export with only a tail() handler is a valid worker", async () => {
  const worker = await createWorker({ script: "export default { tail() {} };", format: "module", compatibilityDate: "2024-01-01", onLog() {} });
  await worker.dispose();
});

test("ctx.props: {} without props; ctx.exports.<Entrypoint>({ props }) carries them, as workerd printed", async () => {
  const script = `
import { WorkerEntrypoint } from "cloudflare:workers";
export class N extends WorkerEntrypoint { hi() { return JSON.stringify({ p: this.ctx.props, t: typeof this.ctx.props }); } }
export default { async fetch(req, env, ctx) { return new Response(JSON.stringify({ top: ctx.props, t: typeof ctx.props, named: await ctx.exports.N.hi(), withProps: await ctx.exports.N({ props: { a: 1 } }).hi() })); } };`;
  const worker = await createWorker({ script, format: "module", compatibilityDate: "2025-11-20", onLog() {} });
  try {
    assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), { top: {}, t: "object", named: '{"p":{},"t":"object"}', withProps: '{"p":{"a":1},"t":"object"}' });
  } finally {
    await worker.dispose();
  }
});
