// Workers RPC as workerd's own js-rpc tests see it: cloudflare:workers' RpcPromise, RpcProperty
// and ServiceStub classes (instanceof, "Illegal constructor"), RpcPromise/RpcProperty refusing to
// be serialized inside a value, the owner's disposer run when the last stub for an RpcTarget or
// function passed by reference is let go (and dup() under rpc_params_dup_stubs), RpcStub of a
// plain object, waitUntil refused at global scope, RPC on bindings under the experimental flag,
// props of a ctx.exports binding passed over RPC, and a property's catch()/finally().
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch, service } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const CALLEE = `
import { WorkerEntrypoint, RpcTarget } from "cloudflare:workers";
export default class extends WorkerEntrypoint {
  add(a, b) { return a + b; }
  async use(counter, by) { return await counter.increment(by); }
  passOn(fn) { return fn; }
  nested(fn) { return { value: fn() }; }
  get prop() { return 7; }
}`;

test("RpcPromise, RpcProperty, RpcStub and ServiceStub answer instanceof as in workerd and cannot be constructed; nested ones do not serialize", { timeout: scaled(60_000) }, async (t) => {
  const callee = await useWorker(t, { script: CALLEE });
  const worker = await useWorker(t, {
    bindings: { CALLEE: service(callee) },
    script: `import { RpcPromise, RpcProperty, RpcStub, RpcTarget, ServiceStub } from "cloudflare:workers";
      import * as workers from "cloudflare:workers";
      export default { async fetch(request, env) {
        const out = { names: ["RpcPromise", "RpcProperty", "ServiceStub"].filter((n) => n in workers) };
        for (const C of [RpcPromise, RpcProperty, ServiceStub]) { try { new C(); out[C.name] = "constructed"; } catch (e) { out[C.name] = e.name + ": " + e.message; } }
        const call = env.CALLEE.add(1, 2);
        out.call = [call instanceof RpcPromise, call instanceof Promise, await call];
        out.prop = [env.CALLEE.prop instanceof RpcProperty, await env.CALLEE.prop];
        out.service = [env.CALLEE instanceof ServiceStub, env.CALLEE instanceof RpcStub];
        const stub = new RpcStub({ sum(a, b) { return a + b; } });
        out.stub = [stub instanceof RpcStub, stub.sum instanceof RpcProperty, stub.sum(1, 1) instanceof RpcPromise, await stub.sum(2, 3)];
        try { new RpcStub([1]); } catch (e) { out.array = e.message; }
        stub[Symbol.dispose]();
        try { await stub.sum(1, 2); } catch (e) { out.disposed = e.message; }
        const inner = new RpcStub(() => 5);
        try { await env.CALLEE.nested(inner); } catch (e) { out.nested = e.name + ": " + e.message; }
        return Response.json(out);
      } };`,
  });
  const out = await (await dispatch(worker, "http://localhost/")).json();
  assert.deepEqual(out, {
    names: ["RpcPromise", "RpcProperty", "ServiceStub"],
    RpcPromise: "TypeError: Illegal constructor",
    RpcProperty: "TypeError: Illegal constructor",
    ServiceStub: "TypeError: Illegal constructor",
    call: [true, false, 3],
    prop: [true, 7],
    service: [true, false],
    stub: [true, true, true, 5],
    array: "RpcStubs can only wrap plain objects, functions, and RpcTarget derivatives.",
    disposed: "RPC stub used after being disposed.",
    nested: 'DataCloneError: Could not serialize object of type "RpcPromise". This type does not support serialization.',
  });
});

test("an RpcTarget or function passed by reference is disposed when the receiver lets it go; with rpc_params_dup_stubs one with dup() is duplicated", { timeout: scaled(60_000) }, async (t) => {
  const callee = await useWorker(t, { script: CALLEE });
  const worker = await useWorker(t, {
    bindings: { CALLEE: service(callee) },
    compatibilityFlags: ["rpc_params_dup_stubs"],
    script: `import { RpcTarget, RpcStub } from "cloudflare:workers";
      class Counter extends RpcTarget {
        count = { value: 0 }; disposed = 0; dups = 0;
        increment(by) { return (this.count.value += by); }
        [Symbol.dispose]() { this.disposed++; }
      }
      class Dupable extends Counter {
        dup() { const d = new Dupable(); d.count = this.count; d.parent = this; this.dups++; return d; }
        [Symbol.dispose]() { (this.parent ?? this).disposedDups = ((this.parent ?? this).disposedDups ?? 0) + 1; }
      }
      const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
      export default { async fetch(request, env) {
        const plain = new Counter();
        await env.CALLEE.use(plain, 2);
        await env.CALLEE.use(plain, 3);
        await settle();
        const dupable = new Dupable();
        await env.CALLEE.use(dupable, 4);
        await settle();
        const held = new Counter();
        const stub = new RpcStub(held);
        await env.CALLEE.use(stub, 1);
        await settle();
        const before = held.disposed;
        stub[Symbol.dispose]();
        return Response.json({
          plain: [plain.count.value, plain.disposed],
          dupable: [dupable.count.value, dupable.dups, dupable.disposedDups, dupable.disposed],
          stub: [held.count.value, before, held.disposed],
        });
      } };`,
  });
  const out = await (await dispatch(worker, "http://localhost/")).json();
  assert.deepEqual(out, { plain: [5, 2], dupable: [4, 1, 1, 0], stub: [1, 0, 1] });
});

test("waitUntil from cloudflare:workers throws workerd's global-scope error while the module runs", { timeout: scaled(60_000) }, async (t) => {
  const worker = await useWorker(t, {
    script: `import { waitUntil } from "cloudflare:workers";
      let atLoad;
      try { waitUntil(Promise.resolve()); atLoad = "allowed"; } catch (e) { atLoad = e.message; }
      export default { async fetch() { waitUntil(Promise.resolve()); return new Response(atLoad); } };`,
  });
  const text = await (await dispatch(worker, "http://localhost/")).text();
  assert.match(text, /^Disallowed operation called within global scope\./);
});

test("the experimental flag gives service bindings RPC methods before the rpc flag's date, as in workerd", { timeout: scaled(60_000) }, async (t) => {
  const callee = await useWorker(t, { script: CALLEE });
  const script = `export default { async fetch(request, env) { return new Response(String(typeof env.CALLEE.add === "function" ? await env.CALLEE.add(2, 3) : typeof env.CALLEE.add)); } };`;
  const old = await useWorker(t, { bindings: { CALLEE: service(callee) }, compatibilityDate: "2024-01-01", script });
  const experimental = await useWorker(t, { bindings: { CALLEE: service(callee) }, compatibilityDate: "2024-01-01", compatibilityFlags: ["experimental"], unsafeExperimental: true, script });
  assert.equal(await (await dispatch(old, "http://localhost/")).text(), "undefined");
  assert.equal(await (await dispatch(experimental, "http://localhost/")).text(), "5");
});

test("ctx.exports.<Entrypoint>({ props }) returned over RPC keeps its props; a property's catch() and finally() work as a promise's", { timeout: scaled(60_000) }, async (t) => {
  const factory = await useWorker(t, {
    compatibilityFlags: ["enable_ctx_exports"],
    script: `import { WorkerEntrypoint } from "cloudflare:workers";
      export class Greeter extends WorkerEntrypoint { greet(name) { return this.ctx.props.greeting + ", " + name + "!"; } }
      export default class extends WorkerEntrypoint {
        makeGreeter(greeting) { return this.ctx.exports.Greeter({ props: { greeting } }); }
        get answer() { return Promise.resolve(42); }
        get broken() { return Promise.reject(new Error("REJECTED")); }
      }`,
  });
  const worker = await useWorker(t, {
    bindings: { FACTORY: service(factory) },
    script: `export default { async fetch(request, env) {
      const greeter = await env.FACTORY.makeGreeter("Yo");
      let finallyRan = false;
      const answer = await env.FACTORY.answer.finally(() => { finallyRan = true; });
      const caught = await env.FACTORY.broken.catch((e) => e.message);
      return Response.json([await greeter.greet("Alice"), await env.FACTORY.makeGreeter("Hi").greet("Bob"), answer, finallyRan, caught]);
    } };`,
  });
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), ["Yo, Alice!", "Hi, Bob!", 42, true, "REJECTED"]);
});
