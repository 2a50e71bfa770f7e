// Durable Objects, second part: the SQL API (ctx.storage.sql) with every SQLite type and
// workerd's rules, transactions over SQL and KV together, alarms (on time, retried, deleted,
// found again by a new process), the host API on a namespace (ids, get, runInDurableObject,
// runAlarm, evict), idle eviction, ctx.exports, and limits hit inside an object.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createWorker, dispatch, durableObject } from "../index.js";
import { useWorker, runChild } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const INDEX = fileURLToPath(new URL("../index.js", import.meta.url));

const OBJECTS = `
import { DurableObject, WorkerEntrypoint, exports as ownExports } from "cloudflare:workers";

export class Store extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    globalThis.constructions = (globalThis.constructions ?? 0) + 1;
    this.constructedAt = globalThis.constructions;
    this.secret = "in memory";
  }
  sqlTour() {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, r REAL, s TEXT, b BLOB, n)");
    const inserted = sql.exec("INSERT INTO t (id, r, s, b, n) VALUES (?, ?, ?, ?, ?)", 7, 2.5, "héllo", new Uint8Array([1, 2, 255]), null);
    sql.exec("INSERT INTO t (id, s, b) VALUES (?, ?, ?)", 8, "second", new Uint8Array([9]).buffer);
    const cursor = sql.exec("SELECT id, r, s, b, n, typeof(id) AS tid FROM t ORDER BY id");
    const columns = cursor.columnNames;
    const first = cursor.next().value;
    const rest = cursor.toArray();
    const raw = sql.exec("SELECT id, s FROM t ORDER BY id").raw().toArray();
    const iterated = [...sql.exec("SELECT id FROM t ORDER BY id DESC")].map((row) => row.id);
    const one = sql.exec("SELECT count(*) AS n FROM t").one();
    const errors = [];
    for (const attempt of [
      () => sql.exec("SELECT * FROM nope"),
      () => sql.exec("BEGIN TRANSACTION"),
      () => sql.exec("SELECT * FROM _cf_KV"),
      () => sql.exec("SELECT 1 WHERE 1 = ?", true),
      () => sql.exec("SELECT id FROM t").one(),
      () => sql.exec("SELECT id FROM t WHERE id = 0").one(),
      () => sql.exec("INSERT INTO t (id) VALUES (7)"),
    ]) {
      try { attempt(); errors.push(null); } catch (e) { errors.push(e.name + ": " + e.message); }
    }
    const multi = sql.exec("CREATE TABLE m (x); INSERT INTO m VALUES (1), (2), (3); SELECT sum(x) AS total FROM m WHERE x > ?", 1).one();
    return {
      rowsWritten: inserted.rowsWritten, columns,
      first: { ...first, b: [...new Uint8Array(first.b)], bIsArrayBuffer: first.b instanceof ArrayBuffer },
      rest: rest.map((row) => ({ ...row, b: [...new Uint8Array(row.b)] })),
      raw, iterated, one, errors, multi, sizeIsPositive: sql.databaseSize > 0,
    };
  }
  async txnTour() {
    const s = this.ctx.storage;
    s.sql.exec("CREATE TABLE IF NOT EXISTS log (v)");
    try {
      s.transactionSync(() => {
        s.sql.exec("INSERT INTO log VALUES ('sync')");
        s.put("k", "sync");
        throw new Error("undo");
      });
    } catch {}
    await s.transaction(async (txn) => {
      s.sql.exec("INSERT INTO log VALUES ('async')");
      await txn.put("k", "async");
    });
    await s.transaction(async (txn) => {
      s.sql.exec("INSERT INTO log VALUES ('rolled back')");
      await txn.put("k", "rolled back");
      txn.rollback();
    });
    return { log: s.sql.exec("SELECT v FROM log").toArray().map((r) => r.v), k: await s.get("k") };
  }
  async schedule(ms, failTimes = 0) {
    await this.ctx.storage.put("failTimes", failTimes);
    await this.ctx.storage.setAlarm(Date.now() + ms);
    return await this.ctx.storage.getAlarm();
  }
  async cancel() {
    await this.ctx.storage.deleteAlarm();
    return await this.ctx.storage.getAlarm();
  }
  async alarm(info) {
    const runs = (await this.ctx.storage.get("alarmRuns")) ?? [];
    runs.push({ retryCount: info.retryCount, isRetry: info.isRetry, alarmNow: await this.ctx.storage.getAlarm() });
    await this.ctx.storage.put("alarmRuns", runs);
    const failTimes = (await this.ctx.storage.get("failTimes")) ?? 0;
    if (runs.length <= failTimes) throw new Error("alarm failure " + runs.length);
  }
  async runs() { return (await this.ctx.storage.get("alarmRuns")) ?? []; }
  whoami() { return { constructedAt: this.constructedAt, constructions: globalThis.constructions }; }
  spin() { for (;;) {} }
  async bump() { const n = ((await this.ctx.storage.get("n")) ?? 0) + 1; await this.ctx.storage.put("n", n); return n; }
  async fetch(request) { return new Response("store " + new URL(request.url).pathname + " " + ((await this.ctx.storage.get("n")) ?? 0)); }
}

export class Broken extends DurableObject {
  constructor(ctx, env) { super(ctx, env); throw new SyntaxError("constructor refused"); }
  hello() { return "never"; }
}

export class Greeter extends WorkerEntrypoint {
  hello(name) { return "hello " + name; }
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const stub = env.STORE.getByName(url.searchParams.get("name") ?? "main");
    const result = await (async () => {
      switch (url.pathname) {
        case "/sql": return stub.sqlTour();
        case "/txn": return stub.txnTour();
        case "/schedule": return stub.schedule(Number(url.searchParams.get("ms")), Number(url.searchParams.get("fail") ?? 0));
        case "/cancel": return stub.cancel();
        case "/runs": return stub.runs();
        case "/whoami": return stub.whoami();
        case "/bump": return stub.bump();
        case "/spin": try { await stub.spin(); return "returned"; } catch (e) { return [e.name, e.message]; }
        case "/broken": try { await env.BROKEN.getByName("b").hello(); } catch (e) { return [e.name, e.message]; }
        case "/exports": return {
          keys: Object.keys(ctx.exports).sort(),
          greeting: await ctx.exports.Greeter.hello("self"),
          viaModule: await ownExports.Greeter.hello("module"),
          counter: await ctx.exports.Store.getByName("via-exports").bump(),
          sameObjectAsBinding: await env.STORE.getByName("via-exports").bump(),
          defaultFetch: url.searchParams.has("deep") ? null : await (await ctx.exports.default.fetch("http://self/whoami?name=e&deep=1")).json(),
        };
      }
    })();
    return Response.json(result ?? null);
  },
};
`;

async function get(worker, pathAndQuery) {
  return (await dispatch(worker, `http://localhost${pathAndQuery}`)).json();
}

function tempDir(t) {
  const dir = mkdtempSync(path.join(tmpdir(), "wb-do2-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function objects(t, options = {}, storeOptions = {}) {
  const STORE = durableObject("Store", storeOptions);
  const worker = await useWorker(t, { script: OBJECTS, filename: "objects.js", bindings: { STORE, BROKEN: durableObject("Broken") }, ...options });
  return { worker, STORE };
}

test("SQL API: every SQLite type round trips, cursors, workerd's errors, several statements", async (t) => {
  const { worker } = await objects(t);
  const tour = await get(worker, "/sql?name=sql");
  assert.equal(tour.rowsWritten, 1);
  assert.deepEqual(tour.columns, ["id", "r", "s", "b", "n", "tid"]);
  assert.deepEqual(tour.first, { id: 7, r: 2.5, s: "héllo", b: [1, 2, 255], n: null, tid: "integer", bIsArrayBuffer: true });
  assert.deepEqual(tour.rest, [{ id: 8, r: null, s: "second", b: [9], n: null, tid: "integer" }]);
  assert.deepEqual(tour.raw, [[7, "héllo"], [8, "second"]]);
  assert.deepEqual(tour.iterated, [8, 7]);
  assert.deepEqual(tour.one, { n: 2 });
  assert.equal(tour.errors[0], "Error: no such table: nope: SQLITE_ERROR");
  assert.match(tour.errors[1], /^Error: To execute a transaction, use the state\.storage\.transaction\(\)/);
  assert.match(tour.errors[2], /^Error: not authorized: access to _cf_KV is prohibited/);
  assert.match(tour.errors[3], /^TypeError: Unsupported type for SQL binding 1/);
  assert.equal(tour.errors[4], "Error: Expected exactly one result from SQL query, but got multiple results.");
  assert.equal(tour.errors[5], "Error: Expected exactly one result from SQL query, but got no results.");
  assert.match(tour.errors[6], /UNIQUE constraint failed: t\.id: SQLITE_CONSTRAINT/);
  assert.deepEqual(tour.multi, { total: 5 });
  assert.equal(tour.sizeIsPositive, true);
});

test("transactions cover SQL and KV writes together; sql: false gives a clear error", async (t) => {
  const { worker } = await objects(t);
  assert.deepEqual(await get(worker, "/txn?name=txn"), { log: ["async"], k: "async" });
  const noSql = await useWorker(t, {
    script: `import { DurableObject } from "cloudflare:workers";
      export class Kv extends DurableObject { probe() { try { this.ctx.storage.sql; return "sql"; } catch (e) { return e.message; } } }
      export default { async fetch(req, env) { return new Response(await env.KV_ONLY.getByName("x").probe()); } }`,
    bindings: { KV_ONLY: durableObject("Kv", { sql: false }) },
  });
  assert.match(await (await dispatch(noSql, "http://localhost/")).text(), /SQL is not enabled for this Durable Object class/);
});

test("alarms: run on time with the alarm cleared, can be deleted, and a throwing handler is retried", async (t) => {
  const { worker } = await objects(t);
  const scheduled = await get(worker, "/schedule?name=on-time&ms=60");
  assert.equal(typeof scheduled, "number");
  const started = Date.now();
  let runs = [];
  while (runs.length === 0 && Date.now() - started < scaled(3000)) {
    await new Promise((r) => setTimeout(r, 20));
    runs = await get(worker, "/runs?name=on-time");
  }
  assert.deepEqual(runs, [{ retryCount: 0, isRetry: false, alarmNow: null }]);

  assert.equal(await get(worker, `/schedule?name=cancelled&ms=${scaled(80)}`) > Date.now() - 1000, true);
  assert.equal(await get(worker, "/cancel?name=cancelled"), null);
  await new Promise((r) => setTimeout(r, scaled(200)));
  assert.deepEqual(await get(worker, "/runs?name=cancelled"), []);

  // Fails once; workerd retries 2 s later with retryCount 1.
  await get(worker, "/schedule?name=retried&ms=10&fail=1");
  const deadline = Date.now() + scaled(5000);
  while ((runs = await get(worker, "/runs?name=retried")).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(runs.map((r) => [r.retryCount, r.isRetry]), [[0, false], [1, true]]);
});

test("host API: idFromName, ids, get() stubs from Node, runInDurableObject, runAlarm, evict", async (t) => {
  const dir = tempDir(t);
  const { worker, STORE } = await objects(t, {}, { dir, evictAfterMs: Infinity });
  assert.equal(await get(worker, "/bump?name=alpha"), 1);
  const id = STORE.idFromName("alpha");
  assert.deepEqual(await STORE.ids(), [id]);
  const stub = STORE.get(id);
  assert.equal(await stub.bump(), 2);
  assert.equal(await (await stub.fetch("http://do/path")).text(), "store /path 2");
  await assert.rejects(stub.spinNope(), /does not implement the method "spinNope"/);
  const seen = await STORE.runInDurableObject(id, async (instance, state, arg) => ({ secret: instance.secret, n: await state.storage.get("n"), arg, id: state.id.toString() }), { x: 1 });
  assert.deepEqual(seen, { secret: "in memory", n: 2, arg: { x: 1 }, id });
  assert.equal(await STORE.runAlarm(id), false);
  await get(worker, "/schedule?name=alpha&ms=600000");
  assert.equal(await STORE.runAlarm(id), true);
  assert.deepEqual((await stub.runs()).map((r) => r.retryCount), [0]);
  assert.equal(await STORE.runAlarm(id), false);
  const before = await get(worker, "/whoami?name=alpha");
  assert.equal(await STORE.evict(id), 1);
  const after = await get(worker, "/whoami?name=alpha");
  assert.equal(after.constructedAt, before.constructions + 1, "evicted: constructed again");
  assert.equal(await get(worker, "/bump?name=alpha"), 3, "storage survives eviction");
  assert.throws(() => STORE.get("nope"), /64 hex digits/);
});

test("idle objects are evicted after evictAfterMs; their storage stays", async (t) => {
  const { worker } = await objects(t, {}, { evictAfterMs: 0 });
  const first = await get(worker, "/whoami?name=idle");
  assert.equal(await get(worker, "/bump?name=idle"), 1);
  await new Promise((r) => setTimeout(r, 100));
  const second = await get(worker, "/whoami?name=idle");
  assert.ok(second.constructedAt > first.constructedAt, "constructed again after being idle");
  assert.equal(await get(worker, "/bump?name=idle"), 2);
});

test("ctx.exports: the worker's own entrypoints and Durable Object classes as bindings", async (t) => {
  const { worker } = await objects(t, {}, { evictAfterMs: Infinity });
  const result = await get(worker, "/exports");
  assert.deepEqual(result.keys, ["Broken", "Greeter", "Store", "default"]);
  assert.equal(result.greeting, "hello self");
  assert.equal(result.viaModule, "hello module");
  assert.deepEqual([result.counter, result.sameObjectAsBinding], [1, 2]);
  assert.equal(typeof result.defaultFetch.constructions, "number");
});

test("a throwing constructor reaches the caller; a limit inside an object resets it, storage on disk stays", async (t) => {
  const { worker } = await objects(t);
  assert.deepEqual(await get(worker, "/broken"), ["SyntaxError", "constructor refused"]);
  const dir = tempDir(t);
  const home = await useWorker(t, { script: OBJECTS, bindings: { STORE: durableObject("Store", { dir }), BROKEN: durableObject("Broken") }, limits: { cpuMs: 100 } });
  const caller = await useWorker(t, {
    script: `export default { async fetch(request, env) {
      const stub = env.REMOTE.getByName("limited");
      const path = new URL(request.url).pathname;
      if (path === "/bump") return Response.json(await stub.bump());
      if (path === "/whoami") return Response.json(await stub.whoami());
      try { await stub.spin(); return Response.json("returned"); } catch (e) { return Response.json([e.name, e.message]); }
    } }`,
    bindings: { REMOTE: durableObject("Store", { worker: home, dir }) },
  });
  assert.equal(await get(caller, "/bump"), 1);
  const [name, message] = await get(caller, "/spin");
  assert.equal(name, "Error");
  assert.match(message, /CPU/i);
  assert.equal((await get(caller, "/whoami")).constructions, 1, "a new isolate: the object is constructed afresh");
  assert.equal(await get(caller, "/bump"), 2, "storage on disk is kept");
});

test("storage, SQL tables and a pending alarm survive into a new process", async (t) => {
  const dir = tempDir(t);
  const child = await runChild(
    `const { createWorker, dispatch, durableObject } = require(${JSON.stringify(INDEX)});
     (async () => {
       const script = ${JSON.stringify(OBJECTS)};
       const worker = await createWorker({ script, onLog() {}, bindings: { STORE: durableObject("Store", { dir: ${JSON.stringify(dir)} }), BROKEN: durableObject("Broken") } });
       const get = async (p) => (await dispatch(worker, "http://localhost" + p)).json();
       const out = { bump: await get("/bump?name=durable"), sql: (await get("/sql?name=durable")).one, alarm: await get("/schedule?name=durable&ms=400") };
       await worker.dispose();
       process.stdout.write(JSON.stringify(out));
     })();`,
    {},
    20_000,
  );
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual([child.bump, child.sql], [1, { n: 2 }]);
  const { worker, STORE } = await objects(t, {}, { dir });
  const id = STORE.idFromName("durable");
  // The alarm set by the other process fires here once its time comes.
  const deadline = Date.now() + 5000;
  let runs = [];
  while (runs.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    runs = await STORE.get(id).runs();
  }
  assert.equal(runs.length, 1);
  assert.ok(Date.now() >= child.alarm, "not before its time");
  assert.equal(await get(worker, "/bump?name=durable"), 2);
  const rows = await STORE.runInDurableObject(id, (instance, state) => state.storage.sql.exec("SELECT count(*) AS n FROM t").one());
  assert.deepEqual(rows, { n: 2 });
});

test("durableObject() checks its new options", async () => {
  assert.throws(() => durableObject("Store", { sql: "yes" }), /options\.sql must be a boolean/);
  assert.throws(() => durableObject("Store", { evictAfterMs: -1 }), /options\.evictAfterMs/);
  await assert.rejects(durableObject("Store").ids(), /not bound to a running worker/);
});
