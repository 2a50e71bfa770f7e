// Local state shared with wrangler (lib/project/wrangler-state.js, wrangler-kv.js, wrangler-r2.js,
// state-cli.js): Miniflare 4 (what `wrangler dev --local` and `wrangler d1 execute --local` run)
// writes D1, KV, R2 and Durable Object state under <project>/.wrangler/state/v3 through its own API
// and workerbox reads it live, and the other way round (R2 multipart uploads Miniflare made
// included; Durable Objects' ids, KV and SQL storage and alarms); state in the old
// .workerbox/state layout is carried over; the CLI's d1 execute, kv key and r2 object commands.
// scripts/wrangler-state-roundtrip.mjs does the same with wrangler, run by the last test when
// wrangler is installed in bench/.tools and a Node 22.12+ is at hand (this one, or WRANGLER_NODE);
// otherwise that test is skipped (CI does not install wrangler).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadProject } from "workerbox/project";
import { createWorker, dispatch, kv, d1, storage } from "workerbox";
import { CLI, execNode, underEmulator, scaled } from "./child-node.mjs";

const require = (await import("node:module")).createRequire(import.meta.url);
const { miniflareObjectId } = require("../lib/project/wrangler-state.js");

const CONFIG = {
  name: "shared-state",
  main: "src/index.js",
  compatibility_date: "2025-01-01",
  d1_databases: [{ binding: "DB", database_name: "my-db", database_id: "my-d1-id" }],
  kv_namespaces: [{ binding: "KV", id: "kv-ns-id" }],
  r2_buckets: [{ binding: "R2", bucket_name: "bucket1" }],
};

const WORKER = `export default {
  async fetch(request, env) {
    const row = await env.DB.prepare("SELECT b FROM t WHERE a = 1").first();
    const { value, metadata } = await env.KV.getWithMetadata("k1");
    const object = await env.R2.get("obj/a.txt");
    return Response.json({ d1: row?.b ?? null, kv: value, metadata, r2: object && (await object.text()), type: object?.httpMetadata.contentType ?? null, custom: object?.customMetadata ?? null });
  },
};`;

function project(t, config = CONFIG) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-wrangler-state-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "wrangler.json"), JSON.stringify(config));
  fs.writeFileSync(path.join(dir, "src", "index.js"), WORKER);
  return dir;
}

// Miniflare runs workerd, which is built for glibc: on musl (Alpine) its tests are skipped.
const noWorkerd = process.platform === "linux" && !process.report.getReport().header.glibcVersionRuntime ? "workerd (Miniflare) needs glibc" : false;
const { Miniflare } = noWorkerd ? {} : await import("miniflare");

/** A Miniflare on the project's state folder, with its bindings as wrangler dev makes them. */
function miniflare(dir) {
  return new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response(null, { status: 404 }) } }",
    d1Databases: { DB: "my-d1-id" },
    kvNamespaces: { KV: "kv-ns-id" },
    r2Buckets: { R2: "bucket1" },
    defaultPersistRoot: path.join(dir, ".wrangler", "state", "v3"),
  });
}

async function ask(t, loaded) {
  const worker = await createWorker({ ...loaded.options, onLog() {} });
  t.after(() => worker.dispose());
  return (await dispatch(worker, "http://localhost/")).json();
}

test("Miniflare's object ids: D1, KV and R2 files are named as Miniflare names them", () => {
  assert.equal(miniflareObjectId("miniflare-D1DatabaseObject", "my-d1-id"), "c8a7574b25a5ddbdf5cd2fdc4d4fb42675d8cabdf0cae32c0960d2a6f247b792");
  assert.equal(miniflareObjectId("miniflare-KVNamespaceObject", "kv-ns-id"), "d55384eab401b448fd924877f3b9d91d43a4d7636120d5b62b6f990ac5829e19");
  assert.equal(miniflareObjectId("miniflare-R2BucketObject", "bucket1"), "5119f97670da2434ff11c04f885214b156999ea3e0554409a360ecc837888202");
});

test("written by Miniflare (wrangler's local mode), read by workerbox: D1, KV and R2 live", { skip: noWorkerd }, async (t) => {
  const dir = project(t);
  const mf = miniflare(dir);
  const db = await mf.getD1Database("DB");
  await db.exec("CREATE TABLE t (a INTEGER, b TEXT)");
  await db.prepare("INSERT INTO t VALUES (1, ?)").bind("from-miniflare").run();
  await (await mf.getKVNamespace("KV")).put("k1", "v1", { metadata: { m: 1 }, expirationTtl: 3600 });
  await (await mf.getKVNamespace("KV")).put("gone", "x", { expirationTtl: 60 });
  await (await mf.getR2Bucket("R2")).put("obj/a.txt", "hello r2", { httpMetadata: { contentType: "text/plain" }, customMetadata: { x: "y" } });
  await mf.dispose();

  const loaded = await loadProject(dir);
  assert.equal(loaded.stateDir, path.join(dir, ".wrangler", "state", "v3"));
  assert.deepEqual(loaded.stateNotes, []);
  assert.deepEqual(await ask(t, loaded), { d1: "from-miniflare", kv: "v1", metadata: { m: 1 }, r2: "hello r2", type: "text/plain", custom: { x: "y" } });
  const [{ expiration }] = (await loaded.bindings.KV.namespace().list()).keys.filter((k) => k.name === "k1");
  assert.ok(expiration > Date.now() / 1000 + 3000 && expiration <= Date.now() / 1000 + 3600, `expiration ${expiration} kept`);

  assert.deepEqual((await loaded.bindings.KV.namespace().list()).keys.map((k) => k.name), ["gone", "k1"]);

  // A second start imports nothing again; D1 and KV are the same files, so Miniflare's later writes show.
  const again = await loadProject(dir);
  assert.deepEqual(again.stateNotes, []);
  const mf2 = miniflare(dir);
  await (await mf2.getD1Database("DB")).prepare("UPDATE t SET b = 'changed by miniflare'").run();
  await (await mf2.getKVNamespace("KV")).put("k1", "v2 from miniflare");
  await (await mf2.getKVNamespace("KV")).delete("gone");
  // R2 too, a multipart upload included (its parts are blobs of their own in Miniflare's layout).
  const bucket = await mf2.getR2Bucket("R2");
  await bucket.put("obj/a.txt", "changed by miniflare", { httpMetadata: { contentType: "text/markdown", cacheExpiry: new Date(1_800_000_000_000) } });
  const upload = await bucket.createMultipartUpload("big.bin", { customMetadata: { parts: "2" } });
  const part1 = await upload.uploadPart(1, new Uint8Array(5 * 1024 * 1024).fill(1));
  const part2 = await upload.uploadPart(2, new Uint8Array([2, 3, 4]));
  const { etag: multipartEtag } = await upload.complete([part1, part2]);
  await mf2.dispose();
  assert.equal((await again.bindings.DB.database().prepare("SELECT b FROM t").first()).b, "changed by miniflare");
  assert.equal(await again.bindings.KV.namespace().get("k1"), "v2 from miniflare");
  assert.equal(await again.bindings.KV.namespace().get("gone"), null);
  const r2 = again.bindings.R2.bucket();
  const a = await r2.get("obj/a.txt");
  assert.equal(await a.text(), "changed by miniflare");
  assert.equal(a.httpMetadata.contentType, "text/markdown");
  assert.equal(new Date(a.httpMetadata.cacheExpiry).getTime(), 1_800_000_000_000);
  const big = await r2.get("big.bin");
  const bytes = new Uint8Array(await big.arrayBuffer());
  assert.equal(bytes.length, 5 * 1024 * 1024 + 3);
  assert.deepEqual([bytes[0], bytes[5 * 1024 * 1024 - 1], ...bytes.subarray(5 * 1024 * 1024)], [1, 1, 2, 3, 4]);
  assert.equal(big.etag, multipartEtag, "the multipart etag (<md5 of part md5s>-2) as Miniflare made it");
  assert.deepEqual(big.customMetadata, { parts: "2" });
  const tail = await r2.get("big.bin", { range: { suffix: 4 } });
  assert.deepEqual([...new Uint8Array(await tail.arrayBuffer())], [1, 2, 3, 4]);
  assert.deepEqual((await r2.list()).objects.map((o) => [o.key, o.size]), [["big.bin", 5 * 1024 * 1024 + 3], ["obj/a.txt", 20]]);
});

test("written by workerbox (D1 queries and migrations, KV puts and deletes), read by Miniflare", { skip: noWorkerd }, async (t) => {
  const dir = project(t);
  fs.mkdirSync(path.join(dir, "migrations"));
  fs.writeFileSync(path.join(dir, "migrations", "0001_init.sql"), "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);");
  const loaded = await loadProject(dir);
  assert.deepEqual(loaded.migrations.map((m) => m.applied), [["0001_init.sql"]]);
  const db = loaded.bindings.DB.database();
  await db.prepare("INSERT INTO notes (body) VALUES (?)").bind("from workerbox").run();
  await db.prepare("CREATE TABLE blobs (b BLOB)").run();
  await db.prepare("INSERT INTO blobs VALUES (?)").bind(new Uint8Array([1, 2, 3])).run();
  const namespace = loaded.bindings.KV.namespace();
  await namespace.put("a", "from workerbox", { metadata: { by: "workerbox" }, expirationTtl: 600 });
  await namespace.put("b", new Uint8Array([0, 255]));
  await namespace.put("c", "replaced");
  await namespace.put("c", "replacement");
  await namespace.put("d", "deleted");
  await namespace.delete("d");
  const blobs = path.join(dir, ".wrangler", "state", "v3", "kv", "kv-ns-id", "blobs");
  await new Promise((resolve) => setTimeout(resolve, 50)); // replaced blobs are removed in the background
  assert.equal(fs.readdirSync(blobs).length, 3, "one blob file per live key");
  const file = path.join(dir, ".wrangler", "state", "v3", "d1", "miniflare-D1DatabaseObject", `${miniflareObjectId("miniflare-D1DatabaseObject", "my-d1-id")}.sqlite`);
  assert.ok(fs.existsSync(file));

  const mf = miniflare(dir);
  t.after(() => mf.dispose());
  const theirs = await mf.getD1Database("DB");
  assert.deepEqual((await theirs.prepare("SELECT body FROM notes").all()).results, [{ body: "from workerbox" }]);
  assert.deepEqual((await theirs.prepare("SELECT name FROM d1_migrations").all()).results, [{ name: "0001_init.sql" }]);
  assert.deepEqual([...new Uint8Array((await theirs.prepare("SELECT b FROM blobs").first()).b)], [1, 2, 3]);
  const kvTheirs = await mf.getKVNamespace("KV");
  const a = await kvTheirs.getWithMetadata("a");
  assert.deepEqual([a.value, a.metadata], ["from workerbox", { by: "workerbox" }]);
  assert.deepEqual([...new Uint8Array(await kvTheirs.get("b", "arrayBuffer"))], [0, 255]);
  assert.equal(await kvTheirs.get("c"), "replacement");
  assert.equal(await kvTheirs.get("d"), null);
  const listed = await kvTheirs.list();
  assert.deepEqual(listed.keys.map((k) => k.name), ["a", "b", "c"]);
  assert.ok(Math.abs(listed.keys[0].expiration - (Date.now() / 1000 + 600)) < 30);
});

test("written by workerbox (R2 puts, replacements and deletes from a worker and from Node), read by Miniflare", { skip: noWorkerd, timeout: scaled(120_000) }, async (t) => {
  const dir = project(t);
  fs.writeFileSync(
    path.join(dir, "src", "index.js"),
    `export default { async fetch(request, env) {
      await env.R2.put("from-worker.txt", "written in the worker", { httpMetadata: { contentType: "text/plain", cacheControl: "max-age=60" }, customMetadata: { who: "worker" } });
      await env.R2.put("gone.txt", "deleted below");
      await env.R2.delete("gone.txt");
      return new Response("ok");
    } };`,
  );
  const loaded = await loadProject(dir);
  const worker = await createWorker({ ...loaded.options, onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "ok");
  const bucket = loaded.bindings.R2.bucket();
  await bucket.put("node.bin", new Uint8Array([0, 1, 2, 255]), { customMetadata: { who: "node" } });
  await bucket.put("replaced.txt", "first");
  await bucket.put("replaced.txt", "second");
  await new Promise((resolve) => setTimeout(resolve, 50)); // replaced blobs are removed in the background
  assert.equal(fs.readdirSync(path.join(dir, ".wrangler", "state", "v3", "r2", "bucket1", "blobs")).length, 3, "one blob file per live object");

  const mf = miniflare(dir);
  t.after(() => mf.dispose());
  const theirs = await mf.getR2Bucket("R2");
  const object = await theirs.get("from-worker.txt");
  assert.equal(await object.text(), "written in the worker");
  assert.deepEqual([object.httpMetadata.contentType, object.httpMetadata.cacheControl, object.customMetadata.who], ["text/plain", "max-age=60", "worker"]);
  assert.equal(object.etag, (await bucket.head("from-worker.txt")).etag);
  assert.deepEqual([...new Uint8Array(await (await theirs.get("node.bin")).arrayBuffer())], [0, 1, 2, 255]);
  assert.equal(await (await theirs.get("replaced.txt")).text(), "second");
  assert.equal(await theirs.get("gone.txt"), null);
  assert.deepEqual((await theirs.list()).objects.map((o) => o.key), ["from-worker.txt", "node.bin", "replaced.txt"]);
  // Miniflare replaces one of workerbox's objects; workerbox sees it at once.
  await theirs.put("node.bin", "by miniflare");
  assert.equal(await (await bucket.get("node.bin")).text(), "by miniflare");
});

// Durable Objects are shared live: the same worker under Miniflare (workerd) and under workerbox
// reads what the other wrote — storage through the KV API and the SQL API, the alarm — with the
// same ids from idFromName(), newUniqueId() and idFromString() (workerd's MAC check and errors).
const DO_WORKER = `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  async fetch(request) {
    const url = new URL(request.url);
    const s = this.ctx.storage;
    if (url.pathname === "/write") {
      const who = url.searchParams.get("who");
      await s.put("k", { n: 1, who });
      await s.put("é-" + who, who);
      s.sql.exec("CREATE TABLE IF NOT EXISTS u (a TEXT)");
      s.sql.exec("INSERT INTO u VALUES (?)", who);
      await s.setAlarm(Number(url.searchParams.get("alarm")));
      return new Response("ok");
    }
    const rows = s.sql.exec("SELECT name FROM sqlite_master WHERE name = 'u'").toArray().length ? s.sql.exec("SELECT a FROM u ORDER BY rowid").toArray().map((r) => r.a) : [];
    return Response.json({ list: [...(await s.list()).entries()], rows, alarm: await s.getAlarm(), id: this.ctx.id.toString() });
  }
  async alarm() {
    await this.ctx.storage.put("alarmed", "yes");
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/unique") return new Response(env.NS.newUniqueId().toString());
    if (url.pathname === "/check") {
      try {
        return new Response("valid " + env.NS.idFromString(url.searchParams.get("id")).toString());
      } catch (error) {
        return new Response(error.name + ": " + error.message);
      }
    }
    const id = url.searchParams.has("id") ? env.NS.idFromString(url.searchParams.get("id")) : env.NS.idFromName(url.searchParams.get("name") ?? "x");
    return env.NS.get(id).fetch(request);
  },
};`;

test("Durable Objects shared with Miniflare (wrangler's local mode): ids, KV and SQL storage and alarms, both ways", { skip: noWorkerd, timeout: scaled(180_000) }, async (t) => {
  const dir = project(t, {
    ...CONFIG,
    durable_objects: { bindings: [{ name: "NS", class_name: "Counter" }] },
    migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }],
  });
  fs.writeFileSync(path.join(dir, "src", "index.js"), DO_WORKER);
  const v3 = path.join(dir, ".wrangler", "state", "v3");
  const start = () =>
    new Miniflare({
      name: "shared-state",
      modules: true,
      script: DO_WORKER,
      durableObjects: { NS: { className: "Counter", useSQLite: true } },
      defaultPersistRoot: v3,
    });
  const text = async (target, url) => (await target.dispatchFetch(url)).text();

  // Miniflare writes: an object by name and one by a unique id.
  let mf = start();
  assert.equal(await text(mf, "http://localhost/write?who=miniflare&alarm=1800000000000"), "ok");
  const theirUnique = await text(mf, "http://localhost/unique");
  assert.equal(await text(mf, `http://localhost/write?id=${theirUnique}&who=mf-unique&alarm=1800000000000`), "ok");
  const forged = theirUnique.slice(0, 63) + (theirUnique[63] === "0" ? "1" : "0");
  const theirChecks = [await text(mf, `http://localhost/check?id=${forged}`), await text(mf, "http://localhost/check?id=zz"), await text(mf, `http://localhost/check?id=${theirUnique.toUpperCase()}`)];
  await mf.dispose();

  // workerbox reads them, with the same ids and the same idFromString() answers.
  const loaded = await loadProject(dir);
  assert.deepEqual(loaded.stateNotes, []);
  assert.equal(loaded.bindings.NS.idFromName("x"), miniflareObjectId("shared-state-Counter", "x"));
  // The Node side checks ids as the worker does.
  assert.equal(loaded.bindings.NS.idFromString(theirUnique.toUpperCase()), theirUnique);
  assert.throws(() => loaded.bindings.NS.idFromString(forged), /^TypeError: Durable Object ID is not valid for this namespace\.$/);
  assert.equal(loaded.bindings.NS.idFromString(loaded.bindings.NS.newUniqueId()).length, 64);
  let worker = await createWorker({ ...loaded.options, onLog() {} });
  const wb = { dispatchFetch: (url) => dispatch(worker, url) };
  const read = async (target, query = "") => JSON.parse(await text(target, `http://localhost/read${query}`));
  assert.deepEqual(await read(wb), {
    list: [["k", { n: 1, who: "miniflare" }], ["é-miniflare", "miniflare"]],
    rows: ["miniflare"],
    alarm: 1_800_000_000_000,
    id: miniflareObjectId("shared-state-Counter", "x"),
  });
  assert.deepEqual((await read(wb, `?id=${theirUnique}`)).rows, ["mf-unique"]);
  const ourChecks = [await text(wb, `http://localhost/check?id=${forged}`), await text(wb, "http://localhost/check?id=zz"), await text(wb, `http://localhost/check?id=${theirUnique.toUpperCase()}`)];
  assert.deepEqual(ourChecks, theirChecks);
  assert.deepEqual(ourChecks, ["TypeError: Durable Object ID is not valid for this namespace.", "TypeError: Invalid Durable Object ID: must be 64 hex digits", `valid ${theirUnique}`]);

  // workerbox writes: the same object, one by its own unique id, and an alarm due in a moment.
  assert.equal(await text(wb, "http://localhost/write?who=workerbox&alarm=1900000000000"), "ok");
  const ourUnique = await text(wb, "http://localhost/unique");
  assert.equal(await text(wb, `http://localhost/write?id=${ourUnique}&who=wb-unique&alarm=1900000000000`), "ok");
  assert.equal(await text(wb, `http://localhost/write?name=soon&who=wb-soon&alarm=${Date.now() + 1500}`), "ok");
  assert.deepEqual((await loaded.bindings.NS.ids()).sort(), [theirUnique, ourUnique, miniflareObjectId("shared-state-Counter", "x"), miniflareObjectId("shared-state-Counter", "soon")].sort());
  await worker.dispose();
  const files = fs.readdirSync(path.join(v3, "do", "shared-state-Counter")).filter((f) => f.endsWith(".sqlite")).sort();
  assert.deepEqual(files, [...[theirUnique, ourUnique, miniflareObjectId("shared-state-Counter", "x"), miniflareObjectId("shared-state-Counter", "soon")].map((id) => `${id}.sqlite`), "metadata.sqlite"].sort());

  // Miniflare reads them, and runs the alarm workerbox set (from metadata.sqlite's _cf_ALARM).
  mf = start();
  let running = true;
  t.after(() => running && mf.dispose());
  assert.deepEqual(await read(mf), {
    list: [["k", { n: 1, who: "workerbox" }], ["é-miniflare", "miniflare"], ["é-workerbox", "workerbox"]],
    rows: ["miniflare", "workerbox"],
    alarm: 1_900_000_000_000,
    id: miniflareObjectId("shared-state-Counter", "x"),
  });
  assert.deepEqual((await read(mf, `?id=${ourUnique}`)).rows, ["wb-unique"]);
  let soon;
  for (let i = 0; i < 50; i++) {
    soon = await read(mf, "?name=soon");
    if (soon.alarm === null) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.deepEqual(soon.list, [["alarmed", "yes"], ["k", { n: 1, who: "wb-soon" }], ["é-wb-soon", "wb-soon"]], "workerd ran the alarm workerbox stored");
  running = false;
  await mf.dispose();

  // And workerbox again, after Miniflare: the alarm it ran is gone here too.
  worker = await createWorker({ ...(await loadProject(dir)).options, onLog() {} });
  t.after(() => worker.dispose());
  assert.equal((await read({ dispatchFetch: (url) => dispatch(worker, url) }, "?name=soon")).alarm, null);
});

test("Durable Objects kept in workerbox's own layout before stay there, and the log says why", async (t) => {
  const dir = project(t, { ...CONFIG, durable_objects: { bindings: [{ name: "NS", class_name: "Counter" }] }, migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }] });
  fs.writeFileSync(path.join(dir, "src", "index.js"), DO_WORKER);
  const own = path.join(dir, ".wrangler", "state", "v3", "workerbox", "do", "Counter");
  fs.mkdirSync(own, { recursive: true });
  fs.writeFileSync(path.join(own, `${"ab".repeat(32)}.sqlite3`), "");
  const loaded = await loadProject(dir);
  assert.equal(loaded.bindings.NS.uniqueKey, undefined);
  assert.equal(loaded.stateNotes.length, 1, loaded.stateNotes.join("\n"));
  assert.match(loaded.stateNotes[0], /^Durable Objects NS \(Counter\): its objects stay in workerbox's own layout .* their ids cannot be turned into workerd's/);
});

test("state in the old .workerbox/state layout is copied to .wrangler/state/v3 on the first start", async (t) => {
  const dir = project(t);
  const legacy = path.join(dir, ".workerbox", "state");
  const oldDb = d1({ dir: path.join(legacy, "d1", "my-d1-id") }).database();
  await oldDb.exec("CREATE TABLE t (a INTEGER, b TEXT)");
  await oldDb.prepare("INSERT INTO t VALUES (1, 'kept from before')").run();
  await kv({ dir: path.join(legacy, "kv", "kv-ns-id") }).namespace().put("k1", "old value");
  await storage({ dir: path.join(legacy, "r2", "bucket1") }).bucket().put("obj/a.txt", "old object", { httpMetadata: { contentType: "text/old" }, customMetadata: { x: "old" } });
  const loaded = await loadProject(dir);
  assert.equal(loaded.stateNotes.length, 3, loaded.stateNotes.join("\n"));
  assert.match(loaded.stateNotes[0], /copied the state kept in .*\.workerbox.state \(D1 DB, KV KV, R2 R2\)/);
  assert.match(loaded.stateNotes[1], /^KV KV: moved 1 key\(s\) from workerbox's own store .* into wrangler's layout/);
  assert.match(loaded.stateNotes[2], /^R2 R2: moved 1 object\(s\) from workerbox's own store .* into wrangler's layout/);
  const answer = await ask(t, loaded);
  assert.equal(answer.d1, "kept from before");
  assert.equal(answer.kv, "old value");
  assert.deepEqual([answer.r2, answer.type, answer.custom], ["old object", "text/old", { x: "old" }]);
  assert.deepEqual((await loadProject(dir)).stateNotes, [], "moved once");
  assert.ok(fs.existsSync(legacy), "the old folder is left in place");
});

test("CLI: d1 execute --json, kv key put/get/list, r2 object put/get on the project's local state", async (t) => {
  const dir = project(t);
  const cli = (...args) => execNode([CLI, ...args, "--config", dir], { cwd: dir, encoding: "utf8", timeout: 30_000, input: "" });
  const created = JSON.parse(cli("d1", "execute", "my-db", "--local", "--json", "--command", "CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'cli')"));
  assert.equal(created.length, 2);
  assert.deepEqual(created.map((r) => r.success), [true, true]);
  const selected = JSON.parse(cli("d1", "execute", "DB", "--json", "--command", "SELECT * FROM t"));
  assert.deepEqual(selected.map((r) => r.results), [[{ a: 1, b: "cli" }]]);
  assert.equal(typeof selected[0].meta.duration, "number");
  const failed = (() => {
    try {
      cli("d1", "execute", "DB", "--json", "--command", "SELECT * FROM nope");
    } catch (error) {
      return JSON.parse(error.stdout);
    }
  })();
  assert.deepEqual(failed, { error: { text: "no such table: nope: SQLITE_ERROR" } }); // wrangler's words

  assert.match(cli("kv", "key", "put", "--binding", "KV", "--local", "k1", "v1"), /Writing the value "v1" to key "k1" on namespace binding: "KV"/);
  assert.equal(cli("kv", "key", "get", "--binding", "KV", "--local", "k1"), "v1");
  assert.equal(cli("kv", "key", "get", "--binding", "KV", "--text", "missing"), "Value not found\n");
  assert.deepEqual(JSON.parse(cli("kv", "key", "list", "--binding", "KV")), [{ name: "k1" }]);

  const upload = path.join(dir, "upload.txt");
  fs.writeFileSync(upload, "object body");
  assert.match(cli("r2", "object", "put", "bucket1/docs/a.txt", "--file", upload, "--content-type", "text/plain", "--local"), /Upload complete/);
  assert.equal(cli("r2", "object", "get", "bucket1/docs/a.txt", "--pipe", "--local"), "object body");

  // What the CLI wrote is what the project's worker sees.
  const answer = await ask(t, await loadProject(dir));
  assert.equal(answer.d1, "cli");
  assert.equal(answer.kv, "v1");
});

const WRANGLER = path.join(path.dirname(CLI), "..", "bench", ".tools", "wrangler", "node_modules", "wrangler", "bin", "wrangler.js");
const [major, minor] = process.versions.node.split(".").map(Number);
const wranglerNode = process.env.WRANGLER_NODE ?? (major > 22 || (major === 22 && minor >= 12) ? process.execPath : undefined);
const noWrangler = !fs.existsSync(WRANGLER) ? "wrangler is not installed in bench/.tools (node scripts/wrangler-state-roundtrip.mjs installs it)" : !wranglerNode ? "wrangler needs Node 22.12+ (set WRANGLER_NODE)"
  : underEmulator("scripts/wrangler-state-roundtrip.mjs starts Node itself (wrangler, and workerbox as process.execPath), which qemu-user without binfmt_misc cannot exec");

test("wrangler itself: D1, KV, R2 and a Durable Object written by wrangler read by workerbox, and the other way", { skip: noWrangler, timeout: scaled(240_000) }, () => {
  const script = path.join(path.dirname(CLI), "..", "scripts", "wrangler-state-roundtrip.mjs");
  const out = execNode([script, `--node=${wranglerNode}`, `--wrangler=${WRANGLER}`], { encoding: "utf8", timeout: 220_000 });
  assert.match(out, /round trip ok/);
});
