// Stubs kept as data, as workerd keeps them: service stubs (env service bindings,
// ctx.exports.<Entrypoint>({ props })) and Durable Object classes (ctx.exports.<Class>({ props }))
// in Durable Object storage under allow_irrevocable_stub_storage (put/get, several keys, list,
// transactions, nested values, read back by a new worker on the same storage, received over RPC
// first), workerd's DataCloneErrors for what cannot be stored, and the same stubs carried in the
// props of a ctx.exports binding that is itself sent over RPC (workerd's stub-storage-test).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createWorker, dispatch, durableObject, service } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const FLAGS = ["nodejs_compat", "allow_irrevocable_stub_storage", "enable_ctx_exports", "rpc"];

const OTHER = `
import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint { hi() { return "other " + JSON.stringify(this.ctx.props); } }`;

const SCRIPT = `
import { WorkerEntrypoint, DurableObject, RpcTarget } from "cloudflare:workers";

export class Store extends DurableObject {
  put(key, value) { return this.ctx.storage.put(key, value); }
  get(key) { return this.ctx.storage.get(key); }
  async tryPut(value) {
    try { await this.ctx.storage.put("tried", value); return "stored"; } catch (e) { return e.name + ": " + e.message; }
  }
  async tryOwn(what) {
    const ex = this.ctx.exports;
    const make = {
      loopback: () => ex.Greeter,
      namespace: () => ex.Facet,
      durableStub: () => this.env.STORE.getByName("other"),
      fn: () => () => 1,
      target: () => ({ stub: ex.Greeter({ props: {} }), target: new (class extends RpcTarget {})() }),
      service: () => this.env.OTHER,
      greeter: () => ex.Greeter({ props: { greeting: "Hey" } }),
      facetClass: () => ex.Facet({ props: { greeting: "Hi" } }),
    }[what];
    return this.tryPut(make());
  }
  async tour() {
    const ex = this.ctx.exports;
    const storage = this.ctx.storage;
    await storage.put({ a: ex.Greeter({ props: { greeting: "A" } }), b: 2 });
    await storage.put("nested", { list: [this.env.OTHER], map: new Map([["g", ex.Greeter({ props: { greeting: "M" } })]]) });
    await storage.transaction(async (txn) => { await txn.put("t", ex.Greeter({ props: { greeting: "T" } })); });
    const many = await storage.get(["a", "b"]);
    const listed = await storage.list();
    const nested = await storage.get("nested");
    return {
      many: [await many.get("a").greet("x"), many.get("b")],
      listed: [[...listed.keys()].join(","), await listed.get("a").greet("y")],
      nested: [await nested.list[0].hi(), await nested.map.get("g").greet("z")],
      txn: await (await storage.get("t")).greet("w"),
      fetched: await (await (await storage.get("a")).fetch("http://x/")).text(),
    };
  }
  async useFacet(key) {
    const facet = this.ctx.facets.get(key, async () => ({ class: await this.ctx.storage.get(key), id: key }));
    await facet.setName("Bob");
    return await facet.greet();
  }
}

export class Facet extends DurableObject {
  async setName(name) { await this.ctx.storage.put("name", name); }
  async greet() { return this.ctx.props.greeting + ", " + (await this.ctx.storage.get("name")) + "?"; }
}

export class Greeter extends WorkerEntrypoint {
  greet(name) { return this.ctx.props.greeting + ", " + name + "!"; }
  fetch() { return new Response("fetched " + this.ctx.props.greeting); }
}

export class Target extends RpcTarget { hi() { return 1; } }

export class UseProps extends WorkerEntrypoint {
  async run() {
    const store = this.env.STORE.getByName("props");
    await store.put("g", this.ctx.props.Greeter);
    await store.put("f", this.ctx.props.Facet);
    return { greet: await (await store.get("g")).greet("Props"), facet: await store.useFacet("f"), other: await this.ctx.props.Other.hi() };
  }
}

export class Relay extends WorkerEntrypoint { run(stub) { return stub.run(); } }

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const store = env.STORE.getByName(url.searchParams.get("name") ?? "main");
    const out = {};
    switch (url.pathname) {
      case "/store": {
        await store.put("greeter", ctx.exports.Greeter({ props: { greeting: "Yo" } }));
        await store.put("facet", ctx.exports.Facet({ props: { greeting: "Hiya" } }));
        await store.put("other", env.OTHER);
        out.greet = await (await store.get("greeter")).greet("Alice");
        out.facet = await store.useFacet("facet");
        out.other = await (await store.get("other")).hi();
        out.fetched = await (await ctx.exports.Greeter({ props: { greeting: "F" } }).fetch("http://x/")).text();
        return Response.json(out);
      }
      case "/read": {
        try {
          out.greet = await (await store.get("greeter")).greet("again");
          out.other = await (await store.get("other")).hi();
        } catch (e) { out.error = e.name + ": " + e.message; }
        return Response.json(out);
      }
      case "/tour": return Response.json(await store.tour());
      case "/errors": {
        for (const what of ["loopback", "namespace", "durableStub", "fn", "target", "service", "greeter", "facetClass"]) out[what] = await store.tryOwn(what);
        out.receivedTarget = await store.tryPut(new Target());
        return Response.json(out);
      }
      case "/props": {
        const stub = ctx.exports.UseProps({ props: { Greeter: ctx.exports.Greeter({ props: { greeting: "Yo" } }), Facet: ctx.exports.Facet({ props: { greeting: "Hiya" } }), Other: env.OTHER } });
        return Response.json(await ctx.exports.Relay.run(stub));
      }
      case "/bad-props": {
        for (const [name, props] of [["fn", { f: () => 1 }], ["target", { t: new Target() }], ["durableStub", { s: env.STORE.getByName("x") }]]) {
          try { ctx.exports.Greeter({ props }); out[name] = "made"; } catch (e) { out[name] = e.name + ": " + e.message; }
        }
        return Response.json(out);
      }
    }
    return new Response("not found", { status: 404 });
  },
};`;

async function storeWorker(t, { flags = FLAGS, dir, other } = {}) {
  other ??= await useWorker(t, { script: OTHER, compatibilityDate: "2025-06-01" });
  const worker = await useWorker(t, { script: SCRIPT, compatibilityDate: "2025-06-01", compatibilityFlags: flags, bindings: { STORE: durableObject("Store", { sql: true, dir }), OTHER: service(other, { props: { p: 1 } }) } });
  return { worker, other };
}

const get = async (worker, path) => (await dispatch(worker, `http://localhost${path}`)).json();

test("service stubs and Durable Object classes received over RPC are stored and read back as working stubs", { timeout: scaled(60_000) }, async (t) => {
  const { worker } = await storeWorker(t);
  assert.deepEqual(await get(worker, "/store"), { greet: "Yo, Alice!", facet: "Hiya, Bob?", other: 'other {"p":1}', fetched: "fetched F" });
  assert.deepEqual(await get(worker, "/tour?name=tour"), {
    many: ["A, x!", 2],
    listed: ["a,b,nested,t", "A, y!"],
    nested: ['other {"p":1}', "M, z!"],
    txn: "T, w!",
    fetched: "fetched A",
  });
});

test("workerd's DataCloneErrors for what storage cannot keep", { timeout: scaled(60_000) }, async (t) => {
  const { worker } = await storeWorker(t);
  assert.deepEqual(await get(worker, "/errors?name=errors"), {
    loopback: "DataCloneError: #<LoopbackServiceStub> could not be cloned.",
    namespace: "DataCloneError: #<LoopbackDurableObjectNamespace> could not be cloned.",
    durableStub: 'DataCloneError: Could not serialize object of type "DurableObject". This type does not support serialization.',
    fn: "DataCloneError: () => 1 could not be cloned.",
    target: "DataCloneError: Remote RPC references can only be serialized for RPC.",
    service: "stored",
    greeter: "stored",
    facetClass: "stored",
    receivedTarget: "DataCloneError: #<RpcStub> could not be cloned.",
  });
  // Without allow_irrevocable_stub_storage, as workerd words it.
  const { worker: plain } = await storeWorker(t, { flags: ["nodejs_compat", "enable_ctx_exports", "rpc"] });
  const out = await get(plain, "/errors?name=errors");
  assert.deepEqual([out.service, out.greeter, out.facetClass], [
    "DataCloneError: ServiceStub cannot be serialized in this context.",
    "DataCloneError: ServiceStub cannot be serialized in this context.",
    "DataCloneError: DurableObjectClass cannot be serialized in this context.",
  ]);
});

test("a stored stub works for a new worker on the same storage; without the flag it is refused on reading", { timeout: scaled(60_000) }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "workerbox-stub-storage-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const other = await useWorker(t, { script: OTHER, compatibilityDate: "2025-06-01" });
  const make = (flags) => createWorker({ script: SCRIPT, compatibilityDate: "2025-06-01", compatibilityFlags: flags, onLog() {}, bindings: { STORE: durableObject("Store", { sql: true, dir }), OTHER: service(other, { props: { p: 1 } }) } });
  const first = await make(FLAGS);
  try {
    assert.equal((await get(first, "/store?name=kept")).greet, "Yo, Alice!");
  } finally {
    await first.dispose();
  }
  const second = await make(FLAGS);
  try {
    assert.deepEqual(await get(second, "/read?name=kept"), { greet: "Yo, again!", other: 'other {"p":1}' });
  } finally {
    await second.dispose();
  }
  const third = await make(["nodejs_compat", "enable_ctx_exports", "rpc"]);
  try {
    assert.deepEqual(await get(third, "/read?name=kept"), { error: "DataCloneError: ServiceStub cannot be deserialized in this context." });
  } finally {
    await third.dispose();
  }
});

test("props of a ctx.exports binding carry service stubs and Durable Object classes, also when the binding is sent over RPC", { timeout: scaled(60_000) }, async (t) => {
  const { worker } = await storeWorker(t);
  assert.deepEqual(await get(worker, "/props"), { greet: "Yo, Props!", facet: "Hiya, Bob?", other: 'other {"p":1}' });
  assert.deepEqual(await get(worker, "/bad-props"), {
    fn: "DataCloneError: () => 1 could not be cloned.",
    target: "DataCloneError: Remote RPC references can only be serialized for RPC.",
    durableStub: 'DataCloneError: Could not serialize object of type "DurableObject". This type does not support serialization.',
  });
});

test("a stub of another worker's binding, received over RPC, is refused by storage with workerbox's reason", { timeout: scaled(60_000) }, async (t) => {
  const { worker: home } = await storeWorker(t);
  const other = await useWorker(t, { script: OTHER, compatibilityDate: "2025-06-01" });
  const caller = await useWorker(t, {
    compatibilityDate: "2025-06-01",
    compatibilityFlags: FLAGS,
    bindings: { REMOTE: durableObject("Store", { worker: home, sql: true }), MINE: service(other) },
    script: `export default { async fetch(request, env) { return Response.json(await env.REMOTE.getByName("foreign").tryPut(env.MINE)); } };`,
  });
  assert.match(await (await dispatch(caller, "http://localhost/")).json(), /^DataCloneError: .*binding of another worker.*workerbox keeps only a worker's own bindings/);
});
