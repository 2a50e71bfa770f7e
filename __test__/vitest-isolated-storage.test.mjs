// workerbox/vitest's `isolatedStorage: true` (lib/vitest/isolated-storage.js over
// lib/storage-checkpoint.js): each test starts from the storage the file's beforeAll left — KV,
// R2, D1 (rows and tables) and Durable Objects (KV-style and SQL storage, objects made in a test,
// live instances) — and without the option writes carry over from test to test.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runVitest } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const WORKER = `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS hits (n INTEGER)");
  }
  async increment() {
    this.ctx.storage.sql.exec("INSERT INTO hits VALUES (1)");
    const count = ((await this.ctx.storage.get("count")) ?? 0) + 1;
    await this.ctx.storage.put("count", count);
    this.cached = count;
    return count;
  }
  async read() {
    return { count: (await this.ctx.storage.get("count")) ?? 0, hits: this.ctx.storage.sql.exec("SELECT count(*) AS n FROM hits").one().n, cached: this.cached ?? null };
  }
}
export default {
  fetch(request, env, ctx) {
    // Written after the response, as real workers often do.
    ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 200)).then(() => env.KV.put("later", "1")));
    return new Response("ok");
  },
};
`;

const ISOLATED = `import { env, listDurableObjectIds } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, beforeEach, describe, it, expect } from "vitest";

const seed = () => env.COUNTER.get(env.COUNTER.idFromName("seed"));
beforeAll(async () => {
  await env.KV.put("seed", "kv");
  await env.BUCKET.put("seed", "r2");
  await env.DB.prepare("CREATE TABLE notes (text TEXT)").run();
  await env.DB.prepare("INSERT INTO notes VALUES ('seed')").run();
  expect(await seed().increment()).toBe(1);
});
// A beforeEach of the file writes inside the test's checkpoint: undone with the test's writes.
beforeEach(async () => {
  await env.KV.put("each", String(Math.random()));
});

async function state() {
  const { results: tables } = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%' ORDER BY name").all();
  const { count, hits } = await seed().read();
  return {
    kv: (await env.KV.list()).keys.map((k) => k.name),
    r2: (await env.BUCKET.list()).objects.map((o) => o.key),
    notes: (await env.DB.prepare("SELECT text FROM notes ORDER BY text").all()).results.map((r) => r.text),
    tables: tables.map((t) => t.name),
    seed: { count, hits },
    objects: (await listDurableObjectIds(env.COUNTER)).length,
  };
}
const AFTER_BEFORE_ALL = { kv: ["each", "seed"], r2: ["seed"], notes: ["seed"], tables: ["notes"], seed: { count: 1, hits: 1 }, objects: 1 };

it("writes to every store", async () => {
  expect(await state()).toEqual(AFTER_BEFORE_ALL);
  await env.KV.put("a", "x");
  await env.KV.delete("seed");
  await env.BUCKET.put("a", "x");
  await env.BUCKET.delete("seed");
  await env.DB.batch([env.DB.prepare("INSERT INTO notes VALUES ('a')"), env.DB.prepare("DELETE FROM notes WHERE text = 'seed'"), env.DB.prepare("CREATE TABLE extra (v)")]);
  expect(await seed().increment()).toBe(2);
  const other = env.COUNTER.get(env.COUNTER.idFromName("other"));
  expect(await other.increment()).toBe(1);
  expect(await state()).toEqual({ kv: ["a", "each"], r2: ["a"], notes: ["a"], tables: ["extra", "notes"], seed: { count: 2, hits: 2 }, objects: 2 });
});

it("starts from what beforeAll left", async () => {
  expect(await state()).toEqual(AFTER_BEFORE_ALL);
  expect(await env.COUNTER.get(env.COUNTER.idFromName("other")).read()).toEqual({ count: 0, hits: 0, cached: null });
  expect(await seed().increment()).toBe(2);
  await env.KV.put("b", "y");
});

it("again, with the Durable Object's instance made anew", async () => {
  expect(await state()).toEqual(AFTER_BEFORE_ALL);
  expect((await seed().read()).cached).toBe(null);
});

describe("a describe block", () => {
  beforeAll(async () => {
    await env.KV.put("block", "1");
    await env.DB.prepare("INSERT INTO notes VALUES ('block')").run();
  });
  it("starts from what its beforeAll left", async () => {
    expect(await env.KV.get("block")).toBe("1");
    await env.KV.put("inner", "x");
  });
  it("and not from the previous test's writes", async () => {
    expect(await env.KV.get("inner")).toBe(null);
    expect((await env.DB.prepare("SELECT text FROM notes ORDER BY text").all()).results.map((r) => r.text)).toEqual(["block", "seed"]);
  });
  // Written after the block's last test was undone: undone with the block.
  afterAll(async () => {
    await env.KV.put("block-after-all", "1");
  });
});

describe("a second block, right after the first", () => {
  beforeAll(async () => {
    await env.KV.put("second", "1");
  });
  it("starts from its own beforeAll, not from the first block's", async () => {
    expect((await env.KV.list()).keys.map((k) => k.name)).toEqual(["each", "second", "seed"]);
  });
});

it("after the block: what its beforeAll wrote is undone", async () => {
  expect(await state()).toEqual(AFTER_BEFORE_ALL);
});

it("starts a request whose waitUntil() writes after the response", async () => {
  expect(await (await exports.default.fetch("http://w/")).text()).toBe("ok");
});

it("the write was waited for and undone, not carried into this test", async () => {
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(await env.KV.get("later")).toBe(null);
});
`;

const SHARED = `import { env } from "cloudflare:test";
import { it, expect } from "vitest";

const seed = () => env.COUNTER.get(env.COUNTER.idFromName("seed"));
it("writes", async () => {
  await env.KV.put("a", "x");
  await env.DB.prepare("CREATE TABLE notes (text TEXT)").run();
  expect(await seed().increment()).toBe(1);
});
it("sees the previous test's writes (isolatedStorage is off by default)", async () => {
  expect(await env.KV.get("a")).toBe("x");
  expect((await env.DB.prepare("SELECT count(*) AS n FROM notes").first()).n).toBe(0);
  expect(await seed().increment()).toBe(2);
});
`;

function project(t, isolatedStorage) {
  const dir = fs.mkdtempSync(path.join(root, "examples", ".tmp-vitest-isolated-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "test"));
  fs.writeFileSync(
    path.join(dir, "wrangler.jsonc"),
    JSON.stringify({
      name: "isolated",
      main: "worker.js",
      compatibility_date: "2026-08-01",
      kv_namespaces: [{ binding: "KV", id: "kv" }],
      r2_buckets: [{ binding: "BUCKET", bucket_name: "bucket" }],
      d1_databases: [{ binding: "DB", database_name: "db", database_id: "db" }],
      durable_objects: { bindings: [{ name: "COUNTER", class_name: "Counter" }] },
      migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }],
    }),
  );
  fs.writeFileSync(path.join(dir, "worker.js"), WORKER);
  const options = isolatedStorage === undefined ? "{}" : JSON.stringify({ isolatedStorage });
  fs.writeFileSync(path.join(dir, "vitest.config.mjs"), `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest(${options})] };\n`);
  fs.writeFileSync(path.join(dir, "test", "storage.test.js"), isolatedStorage ? ISOLATED : SHARED);
  return dir;
}

test("isolatedStorage: true: KV, R2, D1 and Durable Objects are rolled back after each test, to the state beforeAll left (a describe block's own beforeAll: until the block ends)", { timeout: scaled(120_000) }, async (t) => {
  const { code, report, output } = await runVitest(project(t, true));
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 9, output);
});

test("isolatedStorage is off by default: a test sees the previous test's writes", { timeout: scaled(120_000) }, async (t) => {
  const { code, report, output } = await runVitest(project(t, undefined));
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});

test("isolatedStorage refuses concurrent tests with an error naming the test", { timeout: scaled(120_000) }, async (t) => {
  const dir = project(t, true);
  fs.writeFileSync(path.join(dir, "test", "storage.test.js"), `import { it, expect } from "vitest";\nit.concurrent("runs beside another", () => { expect(1).toBe(1); });\nit.concurrent("the other", () => { expect(1).toBe(1); });\n`);
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 1, output);
  assert.equal(report.numFailedTests, 2, output);
  assert.match(output, /isolatedStorage does not work with concurrent tests \("runs beside another" is test\.concurrent\)/);
});

test("isolatedStorage must be a boolean", { timeout: scaled(120_000) }, async (t) => {
  const { code, output } = await runVitest(project(t, "yes"));
  assert.notEqual(code, 0);
  assert.match(output, /cloudflareTest\(\{ isolatedStorage \}\) must be a boolean, got string/);
});

test("checkpointStorage(): a worker's KV, R2, D1 and Durable Object writes are undone by rollback(), kept by release(); a store in a file is refused", { timeout: scaled(60_000) }, async (t) => {
  const { createWorker, dispatch, kv, storage, d1, durableObject, checkpointStorage } = await import("../index.js");
  const bindings = { KV: kv(), BUCKET: storage(), DB: d1(), COUNTER: durableObject("Counter") };
  const worker = await createWorker({
    format: "module",
    compatibilityDate: "2026-08-01",
    bindings,
    script: `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  async fetch() { const n = ((await this.ctx.storage.get("n")) ?? 0) + 1; await this.ctx.storage.put("n", n); return new Response(String(n)); }
}
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/write") {
      await env.KV.put("k", "v");
      await env.BUCKET.put("o", "v");
      await env.DB.prepare("INSERT INTO t VALUES (1)").run();
    }
    const counted = await (await env.COUNTER.get(env.COUNTER.idFromName("a")).fetch("http://do/")).text();
    const rows = (await env.DB.prepare("SELECT count(*) AS n FROM t").first()).n;
    return Response.json({ kv: await env.KV.get("k"), r2: (await env.BUCKET.list()).objects.length, rows, counted: Number(counted) });
  },
};`,
  });
  t.after(() => worker.dispose());
  await bindings.DB.database().exec("CREATE TABLE t (n INTEGER)");
  const read = async (path) => (await dispatch(worker, { url: `http://w${path}` })).json();
  assert.deepEqual(await read("/"), { kv: null, r2: 0, rows: 0, counted: 1 });
  const mark = await checkpointStorage(bindings);
  assert.deepEqual(await read("/write"), { kv: "v", r2: 1, rows: 1, counted: 2 });
  await mark.rollback();
  assert.deepEqual(await read("/"), { kv: null, r2: 0, rows: 0, counted: 2 });
  await mark.rollback();
  await read("/write");
  await mark.release();
  assert.deepEqual(await read("/"), { kv: "v", r2: 1, rows: 1, counted: 3 });
  await assert.rejects(mark.rollback(), /rollback\(\) after release\(\)/);
  const dir = fs.mkdtempSync(path.join((await import("node:os")).tmpdir(), "workerbox-checkpoint-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  await assert.rejects(checkpointStorage({ FILED: kv({ dir }) }), /FILED: kv\(\): .*only an in-memory database takes checkpoints/);
});

test("checkpointStorage(): after a rollback, Durable Objects' alarms are armed as their storage says (a deleted one fires again, one set since does not)", { timeout: scaled(60_000) }, async (t) => {
  const { createWorker, dispatch, durableObject, checkpointStorage } = await import("../index.js");
  const bindings = { ALARMED: durableObject("Alarmed") };
  const worker = await createWorker({
    format: "module",
    compatibilityDate: "2026-08-01",
    bindings,
    script: `import { DurableObject } from "cloudflare:workers";
export class Alarmed extends DurableObject {
  async fetch(request) {
    const what = new URL(request.url).pathname;
    if (what === "/set") await this.ctx.storage.setAlarm(Date.now() + 300);
    if (what === "/delete") await this.ctx.storage.deleteAlarm();
    return Response.json({ fired: (await this.ctx.storage.get("fired")) ?? 0 });
  }
  async alarm() { await this.ctx.storage.put("fired", ((await this.ctx.storage.get("fired")) ?? 0) + 1); }
}
export default { fetch(request, env) { return env.ALARMED.get(env.ALARMED.idFromName(new URL(request.url).searchParams.get("o"))).fetch(request); } };`,
  });
  t.after(() => worker.dispose());
  const call = async (path) => (await (await dispatch(worker, { url: `http://w${path}` })).json()).fired;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // An alarm set before the mark and deleted after it: back with the rollback, and it fires.
  await call("/set?o=a");
  let mark = await checkpointStorage(bindings);
  await call("/delete?o=a");
  await mark.rollback();
  await mark.release();
  await sleep(700);
  assert.equal(await call("/?o=a"), 1);
  // An alarm set after the mark: gone with the rollback, it does not fire.
  mark = await checkpointStorage(bindings);
  await call("/set?o=b");
  await mark.rollback();
  await mark.release();
  await sleep(700);
  assert.equal(await call("/?o=b"), 0);
});
