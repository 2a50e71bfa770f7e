// Durable Objects: durableObject() namespaces, ids (idFromName, newUniqueId, idFromString),
// stubs with fetch() and RPC methods, one live instance per id with its constructor run once,
// ordering of concurrent calls, blockConcurrencyWhile(), ctx.storage's KV API on embedded
// SQLite (in memory and under dir, across dispose), and classes in another worker.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createWorker, dispatch, durableObject } from "../index.js";
import { useWorker } from "./helpers.mjs";

const OBJECTS = `
import { DurableObject } from "cloudflare:workers";

export class Counter extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.constructed = (globalThis.constructions = (globalThis.constructions ?? 0) + 1);
    ctx.blockConcurrencyWhile(async () => {
      await new Promise((r) => setTimeout(r, 20));
      this.ready = true;
    });
  }
  async increment(by = 1) {
    const value = ((await this.ctx.storage.get("count")) ?? 0) + by;
    await this.ctx.storage.put("count", value);
    return value;
  }
  info() {
    return { id: this.ctx.id.toString(), name: this.ctx.id.name ?? null, ready: this.ready, constructed: this.constructed };
  }
  async fetch(request) {
    return new Response(request.method + " " + new URL(request.url).pathname + " " + (await this.ctx.storage.get("count") ?? 0));
  }
  async storageTour() {
    const s = this.ctx.storage;
    await s.put({ "b": 2, "a": 1, "c": { nested: [new Date(3), new Map([["k", 1n]])] } });
    const many = await s.get(["a", "b", "missing"]);
    const listed = [...(await s.list())].map(([k]) => k);
    const prefixed = [...(await s.list({ prefix: "a" }))].map(([k]) => k);
    const reversed = [...(await s.list({ reverse: true, limit: 2 }))].map(([k]) => k);
    const c = await s.get("c");
    const deleted = [await s.delete("a"), await s.delete("a"), await s.delete(["b", "nope"])];
    const left = [...(await s.list())].map(([k]) => k);
    await s.deleteAll();
    return { many: [...many], listed, prefixed, reversed, c: [c.nested[0] instanceof Date, c.nested[1].get("k") === 1n], deleted, left, empty: (await s.list()).size };
  }
  fail() { throw new RangeError("object says no"); }
  async txnTour() {
    const s = this.ctx.storage;
    await s.put("t", 1);
    await s.transaction(async (txn) => { await txn.put("t", 2); await txn.put("u", 3); });
    const committed = [await s.get("t"), await s.get("u")];
    let inside;
    try {
      await s.transaction(async (txn) => {
        await txn.put("t", 99);
        await txn.delete("u");
        inside = [await txn.get("t"), await txn.get("u"), [...(await txn.list())].map(([k]) => k)];
        throw new Error("abort");
      });
    } catch {}
    const afterThrow = [await s.get("t"), await s.get("u")];
    await s.transaction(async (txn) => { await txn.put("t", 50); txn.rollback(); });
    const afterRollback = await s.get("t");
    s.transactionSync(() => { s.put("v", 7); s.delete("t"); });
    let syncThrew;
    try { s.transactionSync(() => { s.put("w", 1); throw new Error("x"); }); } catch (e) { syncThrew = e.message; }
    return { committed, inside, afterThrow, afterRollback, afterSync: [await s.get("t") ?? null, await s.get("v"), await s.get("w") ?? null], syncThrew };
  }
}

export class Plain {
  constructor(state) { this.state = state; }
  fetch() { return new Response("plain object " + this.state.id.toString().length); }
  method() { return 1; }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const name = url.searchParams.get("name") ?? "main";
    const stub = env.COUNTER.getByName(name);
    const body = await (async () => {
      switch (url.pathname) {
        case "/increment": return await stub.increment(Number(url.searchParams.get("by") ?? 1));
        case "/info": return await stub.info();
        case "/fetch": return await (await stub.fetch("http://do/path", { method: "PUT" })).text();
        case "/tour": return await stub.storageTour();
        case "/txn": return await stub.txnTour();
        case "/fail": try { await stub.fail(); } catch (e) { return [e.name, e.message]; }
        case "/ids": {
          const a = env.COUNTER.idFromName("x"), b = env.COUNTER.idFromName("x"), u = env.COUNTER.newUniqueId();
          let bad; try { env.COUNTER.idFromString("zz"); } catch (e) { bad = [e.name, e.message]; }
          return { same: a.equals(b), sameString: a.toString() === b.toString(), length: a.toString().length, name: a.name,
            unique: u.toString() !== a.toString() && u.name === undefined, roundTrip: env.COUNTER.idFromString(a.toString()).equals(a), bad,
            stubId: stub.id.toString() === env.COUNTER.idFromName(name).toString(), stubName: stub.name };
        }
        case "/plain": return await (await env.PLAIN.getByName("p").fetch("http://x/")).text();
        case "/plain-rpc": try { await env.PLAIN.getByName("p").method(); } catch (e) { return [e.name, e.message]; }
      }
    })();
    return Response.json(body ?? null);
  },
};
`;

async function objects(t, extra = {}) {
  return useWorker(t, { script: OBJECTS, filename: "objects.js", bindings: { COUNTER: durableObject("Counter"), PLAIN: durableObject("Plain"), ...extra.bindings }, ...extra.options });
}

async function get(worker, pathAndQuery) {
  return (await dispatch(worker, `http://localhost${pathAndQuery}`)).json();
}

test("ids: idFromName is stable and 64 hex digits, newUniqueId is new, idFromString validates; stubs carry id and name", async (t) => {
  const worker = await objects(t);
  const ids = await get(worker, "/ids?name=room");
  assert.deepEqual(ids, {
    same: true,
    sameString: true,
    length: 64,
    name: "x",
    unique: true,
    roundTrip: true,
    bad: ["TypeError", "Invalid Durable Object ID: must be 64 hex digits"],
    stubId: true,
    stubName: "room",
  });
});

test("one instance per id: the constructor runs once, calls wait for blockConcurrencyWhile, state is per object", async (t) => {
  const worker = await objects(t);
  const first = await get(worker, "/info?name=a");
  assert.equal(first.ready, true, "the first call waited for the constructor's blockConcurrencyWhile");
  assert.equal(first.name, "a");
  assert.equal(first.id.length, 64);
  assert.deepEqual(await get(worker, "/increment?name=a"), 1);
  assert.deepEqual(await get(worker, "/increment?name=a&by=5"), 6);
  assert.deepEqual(await get(worker, "/increment?name=b"), 1);
  const again = await get(worker, "/info?name=a");
  assert.equal(again.constructed, first.constructed, "the same instance answered");
  assert.equal(await get(worker, "/fetch?name=a"), "PUT /path 6");
});

test("100 concurrent increments through stubs give 100: storage calls never interleave", async (t) => {
  const worker = await objects(t);
  const results = await Promise.all(Array.from({ length: 100 }, () => get(worker, "/increment?name=busy")));
  assert.deepEqual([...results].sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i + 1));
  assert.equal(await get(worker, "/fetch?name=busy"), "PUT /path 100");
});

test("storage: put/get of many keys, structured values, list with prefix/reverse/limit, delete and deleteAll", async (t) => {
  const worker = await objects(t);
  assert.deepEqual(await get(worker, "/tour?name=tour"), {
    many: [["a", 1], ["b", 2]],
    listed: ["a", "b", "c"],
    prefixed: ["a"],
    reversed: ["c", "b"],
    c: [true, true],
    deleted: [true, false, 1],
    left: ["c"],
    empty: 0,
  });
});

test("transactions: writes land together on success, not at all on a throw or rollback(); reads see their own writes", async (t) => {
  const worker = await objects(t);
  assert.deepEqual(await get(worker, "/txn?name=txn"), {
    committed: [2, 3],
    inside: [99, null, ["t"]],
    afterThrow: [2, 3],
    afterRollback: 2,
    afterSync: [null, 7, null],
    syncThrew: "x",
  });
});

test("errors thrown by an object reach the caller; a class without DurableObject has fetch() but no RPC", async (t) => {
  const worker = await objects(t);
  assert.deepEqual(await get(worker, "/fail"), ["RangeError", "object says no"]);
  assert.equal(await get(worker, "/plain"), "plain object 64");
  const [name, message] = await get(worker, "/plain-rpc");
  assert.equal(name, "TypeError");
  assert.match(message, /class was not declared with `extends DurableObject`/);
});

test("storage under dir survives dispose and a new worker; one file per object", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "wb-do-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = await createWorker({ script: OBJECTS, onLog() {}, bindings: { COUNTER: durableObject("Counter", { dir }), PLAIN: durableObject("Plain") } });
  assert.equal(await get(first, "/increment?name=kept&by=7"), 7);
  await first.dispose();
  const second = await useWorker(t, { script: OBJECTS, bindings: { COUNTER: durableObject("Counter", { dir }), PLAIN: durableObject("Plain") } });
  assert.equal(await get(second, "/increment?name=kept"), 8);
  const ids = await get(second, "/info?name=kept");
  assert.ok(existsSync(path.join(dir, "Counter", `${ids.id}.sqlite3`)));
});

test("a namespace whose class lives in another worker: { worker }", async (t) => {
  const home = await objects(t);
  const caller = await useWorker(t, {
    script: `export default { async fetch(request, env) {
      const a = await env.REMOTE.getByName("shared").increment(3);
      const b = await env.REMOTE.getByName("shared").increment(4);
      return Response.json([a, b]);
    } }`,
    bindings: { REMOTE: durableObject("Counter", { worker: home }) },
  });
  assert.deepEqual(await get(caller, "/"), [3, 7]);
  // The same object, seen from its home worker's own binding.
  assert.equal(await get(home, "/fetch?name=shared"), "PUT /path 7");
});

test("durableObject() validates its arguments", () => {
  assert.throws(() => durableObject(""), /class name/);
  assert.throws(() => durableObject("Counter", { worker: {} }), /options.worker must be a workerbox worker/);
  assert.throws(() => durableObject("Counter", { dir: 5 }), /options.dir/);
  assert.throws(() => durableObject("Counter", { storage: "x" }), /unknown option storage/);
});

test("a missing class is a clear error at the call", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch(request, env) { try { await env.NOPE.getByName("x").hello(); } catch (e) { return Response.json([e.name, e.message]); } } }`,
    bindings: { NOPE: durableObject("Missing") },
  });
  assert.deepEqual(await get(worker, "/"), ["TypeError", 'The worker exports no Durable Object class named "Missing".']);
});
