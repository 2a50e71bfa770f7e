// The embedded SQLite stores behind kv(), kv({ dir }), storage() and storage({ dir }): bindings
// shared between workers, two bindings (and two processes) on one folder, awkward keys, pooled
// workers getting their caller's stores, and no acknowledged write lost when a writer is killed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { clearPool, createWorker, dispatch, kv, poolStats, storage } from "../index.js";
import { useWorker, waitFor } from "./helpers.mjs";
import { spawnNode } from "./child-node.mjs";

const INDEX = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), "index.js");

/**
 * A worker that runs the calls it is sent, `[binding, method, ...args]` each, in order, and
 * answers their results as JSON. `listAll` pages through a KV namespace or bucket to the end.
 */
const RPC = `export default { async fetch(request, env) {
  const out = [];
  for (const [binding, method, ...args] of await request.json()) {
    const target = env[binding];
    let result;
    if (method === "listAll") {
      const names = [];
      let cursor;
      for (;;) {
        const page = await target.list({ cursor, ...args[0] });
        for (const item of page.keys ?? page.objects) names.push(item.name ?? item.key);
        if (page.list_complete === true || page.truncated === false) break;
        cursor = page.cursor;
      }
      result = names;
    } else {
      result = await target[method](...args);
      if (result && typeof result.text === "function") result = { key: result.key, text: await result.text(), customMetadata: result.customMetadata };
      else if (result && typeof result === "object" && "etag" in result) result = { key: result.key, size: result.size };
    }
    out.push(result ?? null);
  }
  return Response.json(out);
} }`;

async function rpc(worker, calls) {
  const response = await dispatch(worker, { url: "http://localhost/", method: "POST", body: JSON.stringify(calls) });
  if (response.status !== 200) throw new Error(`the worker answered ${response.status}: ${await response.text()}`);
  return response.json();
}

function tempDir(t, name) {
  const dir = mkdtempSync(path.join(tmpdir(), `workerbox-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const sorted = (names) => [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

test("two kv({ dir }) and storage({ dir }) bindings on one folder see each other's writes, and so does a reopen", async (t) => {
  const dir = tempDir(t, "shared-dir");
  const first = await useWorker(t, { script: RPC, bindings: { KV: kv({ dir }), FILES: storage({ dir }) } });
  const second = await useWorker(t, { script: RPC, bindings: { KV: kv({ dir }), FILES: storage({ dir }) } });
  const expected = [];
  for (let i = 0; i < 20; i++) {
    expected.push(`first-${i}`, `second-${i}`);
    await Promise.all([
      rpc(first, [["KV", "put", `first-${i}`, `one ${i}`], ["FILES", "put", `first-${i}`, `one ${i}`]]),
      rpc(second, [["KV", "put", `second-${i}`, `two ${i}`], ["FILES", "put", `second-${i}`, `two ${i}`]]),
    ]);
  }
  // The same key written through both bindings: the later write wins for both.
  await rpc(first, [["KV", "put", "both", "from first"]]);
  await rpc(second, [["KV", "put", "both", "from second"]]);
  expected.push("both");
  for (const worker of [first, second]) {
    const [keys, objects, both, fromOther] = await rpc(worker, [["KV", "listAll", {}], ["FILES", "listAll", {}], ["KV", "get", "both"], ["FILES", "get", "second-7"]]);
    assert.deepEqual(keys, sorted(expected));
    assert.deepEqual(objects, sorted(expected.filter((k) => k !== "both")));
    assert.equal(both, "from second");
    assert.equal(fromOther.text, "two 7");
  }
  await first.dispose();
  await second.dispose();
  assert.ok(existsSync(path.join(dir, "kv.sqlite3")) && existsSync(path.join(dir, "storage.sqlite3")));
  const reopened = await useWorker(t, { script: RPC, bindings: { KV: kv({ dir }), FILES: storage({ dir }) } });
  const [keys, objects, value] = await rpc(reopened, [["KV", "listAll", {}], ["FILES", "listAll", {}], ["KV", "get", "first-19"]]);
  assert.deepEqual(keys, sorted(expected));
  assert.equal(objects.length, 40);
  assert.equal(value, "one 19");
});

test("one kv() binding given to two workers is one namespace", async (t) => {
  // No spares of other tests' scripts: the spare waited for below is this script's.
  await clearPool();
  const shared = kv();
  const [a, b] = await Promise.all([useWorker(t, { script: RPC, bindings: { KV: shared } }), useWorker(t, { script: RPC, bindings: { KV: shared } })]);
  await rpc(a, [["KV", "put", "k", "written by a"]]);
  assert.deepEqual(await rpc(b, [["KV", "get", "k"]]), ["written by a"]);
  // A fresh kv() is another namespace, also for a worker handed out warm from the pool (a spare
  // of the same script, booted with no stores, gets its caller's at hand-off).
  await waitFor(() => poolStats().ready > 0, 10_000);
  const hits = poolStats().hits;
  const other = await useWorker(t, { script: RPC, bindings: { KV: kv() } });
  assert.equal(poolStats().hits, hits + 1, "the worker came from the pool");
  assert.deepEqual(await rpc(other, [["KV", "get", "k"], ["KV", "listAll", {}]]), [null, []]);
  await rpc(other, [["KV", "put", "k", "written by the spare"]]);
  assert.deepEqual(await rpc(a, [["KV", "get", "k"]]), ["written by a"]);
  await clearPool();
});

test("awkward keys round-trip through put, get and list, and survive a reopen", async (t) => {
  const dir = tempDir(t, "awkward");
  const kvKeys = ["__proto__", "constructor", "toString", "../x", "..\\y", "a\u0000b", "😀 emoji", "k".repeat(512), "é/ü", " "];
  // R2 allows an empty key and keys up to 1024 bytes; KV refuses "" and keys over 512 bytes.
  const objectKeys = [...kvKeys, "", "o".repeat(1024)];
  const write = await useWorker(t, { script: RPC, bindings: { KV: kv({ dir }), FILES: storage({ dir }) } });
  await rpc(write, [...kvKeys.map((key, i) => ["KV", "put", key, `kv value ${i}`, { metadata: { key } }]), ...objectKeys.map((key, i) => ["FILES", "put", key, `object ${i}`, { customMetadata: { i: String(i) } }])]);
  await write.dispose();
  const read = await useWorker(t, { script: RPC, bindings: { KV: kv({ dir }), FILES: storage({ dir }) } });
  const answers = await rpc(read, [
    ...kvKeys.map((key) => ["KV", "getWithMetadata", key]),
    ...objectKeys.map((key) => ["FILES", "get", key]),
    ["KV", "listAll", {}],
    ["FILES", "listAll", {}],
    ["KV", "listAll", { prefix: "__" }],
  ]);
  const kvAnswers = answers.slice(0, kvKeys.length);
  const objectAnswers = answers.slice(kvKeys.length, kvKeys.length + objectKeys.length);
  const [kvListed, objectsListed, prefixed] = answers.slice(kvKeys.length + objectKeys.length);
  kvKeys.forEach((key, i) => assert.deepEqual(kvAnswers[i], { value: `kv value ${i}`, metadata: { key }, cacheStatus: null }, `KV key ${JSON.stringify(key)}`));
  objectKeys.forEach((key, i) => assert.deepEqual(objectAnswers[i], { key, text: `object ${i}`, customMetadata: { i: String(i) } }, `object key ${JSON.stringify(key)}`));
  assert.deepEqual(kvListed, sorted(kvKeys));
  assert.deepEqual(objectsListed, sorted(objectKeys));
  assert.deepEqual(prefixed, ["__proto__"]);
  // The worker still refuses what production refuses, before any store sees it.
  const [refused] = await rpc(await useWorker(t, { script: `export default { async fetch(r, env) { return Response.json([await env.KV.put("", "x").then(() => "stored", (e) => e.message)]) } }`, bindings: { KV: kv({ dir }) } }), []);
  assert.match(refused, /Key names must not be empty/);
});

test("a folder that cannot hold the store is an error naming it", (t) => {
  const dir = tempDir(t, "not-a-folder");
  const file = path.join(dir, "file");
  writeFileSync(file, "a plain file where a folder is expected");
  assert.throws(() => kv({ dir: file }), (e) => e.message.startsWith(`kv(): the SQLite database ${path.join(file, "kv.sqlite3")} could not be opened: its folder ${file} cannot be made or found: `));
  assert.throws(() => storage({ dir: path.join(file, "below") }), /storage\(\): the SQLite database .*below.storage\.sqlite3 could not be opened: its folder .*below cannot be made or found: /);
  // A file that is not a database: SQLite's own words.
  const garbage = path.join(dir, "garbage");
  mkdirSync(garbage);
  writeFileSync(path.join(garbage, "kv.sqlite3"), "this is not a SQLite database, not even close ".repeat(100));
  assert.throws(() => kv({ dir: garbage }), (e) => e.message.startsWith(`kv(): the SQLite database ${path.join(garbage, "kv.sqlite3")} could not be `) && /not a database/.test(e.message));
});

/** Runs `code` in a child Node process that has `createWorker`, `dispatch`, `kv`, `storage` in scope. */
function child(code, { onLine } = {}) {
  const source = `const { createWorker, dispatch, kv, storage } = require(${JSON.stringify(INDEX)});
    const RPC = ${JSON.stringify(RPC)};
    const rpc = async (worker, calls) => (await dispatch(worker, { url: "http://localhost/", method: "POST", body: JSON.stringify(calls) })).json();
    (async () => { ${code} })().catch((error) => { console.error(error); process.exit(1); });`;
  const process_ = spawnNode(["-e", source], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let pending = "";
  process_.stdout.on("data", (chunk) => {
    stdout += chunk;
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const line of lines) onLine?.(line);
  });
  process_.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => process_.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { process: process_, exited };
}

test("two processes writing to one folder at once lose no write", async (t) => {
  const dir = tempDir(t, "two-processes");
  const writer = (name) =>
    child(`
      const worker = await createWorker({ script: RPC, bindings: { KV: kv({ dir: ${JSON.stringify(dir)} }), FILES: storage({ dir: ${JSON.stringify(dir)} }) }, onLog() {} });
      for (let i = 0; i < 60; i++) await rpc(worker, [["KV", "put", "${name}-" + i, "${name} " + i], ["FILES", "put", "${name}-" + i, "${name} " + i]]);
      await worker.dispose();
      console.log("done");`);
  const results = await Promise.all([writer("left"), writer("right")].map((c) => c.exited));
  for (const result of results) assert.deepEqual([result.code, result.stdout.trim()], [0, "done"], result.stderr);
  const reader = await useWorker(t, { script: RPC, bindings: { KV: kv({ dir }), FILES: storage({ dir }) } });
  const [keys, objects, left, right] = await rpc(reader, [["KV", "listAll", {}], ["FILES", "listAll", {}], ["KV", "get", "left-59"], ["FILES", "get", "right-0"]]);
  const expected = sorted([...Array(60).keys()].flatMap((i) => [`left-${i}`, `right-${i}`]));
  assert.deepEqual(keys, expected);
  assert.deepEqual(objects, expected);
  assert.equal(left, "left 59");
  assert.equal(right.text, "right 0");
});

test("a writer killed with SIGKILL mid-write loses none of the writes it had acknowledged", async (t) => {
  const dir = tempDir(t, "crash");
  const acknowledged = [];
  // Three writers in turn, each killed while writing in a loop; each starts on the files the last
  // one left (WAL included). Values of 64 KB make each commit span many pages, so a kill likely
  // lands inside one.
  for (let round = 0; round < 3; round++) {
    let enough;
    const ready = new Promise((resolve) => (enough = resolve));
    let seen = 0;
    const writer = child(
      `const worker = await createWorker({ script: RPC, bindings: { KV: kv({ dir: ${JSON.stringify(dir)} }), FILES: storage({ dir: ${JSON.stringify(dir)} }) }, onLog() {} });
       const value = (i) => String(i).padEnd(65536, ".");
       for (let i = ${round * 100_000}; ; i++) {
         await rpc(worker, [["KV", "put", "key-" + i, value(i)], ["FILES", "put", "key-" + i, value(i)]]);
         console.log("key-" + i);
       }`,
      {
        onLine: (line) => {
          acknowledged.push(line);
          if (++seen === 30) enough();
        },
      },
    );
    const timeout = setTimeout(() => enough(), 30_000);
    await Promise.race([ready, writer.exited]);
    clearTimeout(timeout);
    writer.process.kill("SIGKILL");
    const result = await writer.exited;
    assert.equal(result.signal, "SIGKILL", `writer ${round} ended on its own: ${result.stderr}`);
    assert.ok(seen >= 30, `writer ${round} had only ${seen} writes acknowledged: ${result.stderr}`);
  }
  const reader = await useWorker(t, { script: RPC, bindings: { KV: kv({ dir }), FILES: storage({ dir }) } });
  const [keys, objects] = await rpc(reader, [["KV", "listAll", {}], ["FILES", "listAll", {}]]);
  for (const key of acknowledged) {
    assert.ok(keys.includes(key), `acknowledged KV write ${key} was lost`);
    assert.ok(objects.includes(key), `acknowledged object write ${key} was lost`);
  }
  // Consistent: every key present has its whole value, in both stores.
  const values = await rpc(reader, [...keys.map((key) => ["KV", "get", key]), ...objects.map((key) => ["FILES", "get", key])]);
  const expected = [...keys, ...objects].map((key) => key.slice(4).padEnd(65536, "."));
  values.forEach((value, i) => assert.equal(typeof value === "string" ? value : value.text, expected[i]));
});
