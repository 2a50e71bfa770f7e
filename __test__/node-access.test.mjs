// Every binding usable from Node: `kv().namespace()` and `storage().bucket()` are the very
// namespace and bucket the workers given the binding see (both ways, embedded in memory, on disk
// and handler-backed), with the worker-side API's validation and errors; a queue takes send() and
// sendBatch() from Node and lists what it holds with pending().
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createWorker, dispatch, kv, storage, queue } from "workerbox";

const WORKER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = url.searchParams.get("key");
    if (url.pathname === "/kv/get") return new Response(await env.KV.get(key) ?? "(none)");
    if (url.pathname === "/kv/put") { await env.KV.put(key, url.searchParams.get("value"), { metadata: { by: "worker" } }); return new Response("ok"); }
    if (url.pathname === "/r2/get") { const o = await env.BUCKET.get(key); return new Response(o === null ? "(none)" : (await o.text()) + "|" + o.httpMetadata.contentType); }
    if (url.pathname === "/r2/put") { await env.BUCKET.put(key, url.searchParams.get("value"), { customMetadata: { by: "worker" } }); return new Response("ok"); }
    if (url.pathname === "/q/send") { await env.Q.send({ from: "worker" }); return new Response("ok"); }
    return new Response("not found", { status: 404 });
  },
};`;

async function worker(t, bindings) {
  const made = await createWorker({ script: WORKER, bindings, onLog() {} });
  t.after(() => made.dispose());
  return (path) => dispatch(made, `http://localhost${path}`).then((r) => r.text());
}

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-node-access-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

for (const where of ["memory", "dir"]) {
  test(`kv(${where === "dir" ? "{ dir }" : ""}).namespace(): the workers' namespace, both ways, with the same errors`, async (t) => {
    const binding = where === "dir" ? kv({ dir: tempDir(t) }) : kv();
    const call = await worker(t, { KV: binding });
    const ns = binding.namespace();
    assert.equal(ns, binding.namespace(), "one client per binding");
    await ns.put("from-node", "hello", { metadata: { by: "node" } });
    assert.equal(await call("/kv/get?key=from-node"), "hello");
    assert.equal(await call("/kv/put?key=from-worker&value=hi"), "ok");
    assert.deepEqual(await ns.getWithMetadata("from-worker"), { value: "hi", metadata: { by: "worker" }, cacheStatus: null });
    await assert.rejects(ns.get("from-node", "json"), { name: "SyntaxError" });
    assert.deepEqual(Buffer.from(await ns.get("from-node", "arrayBuffer")).toString(), "hello");
    const listed = await ns.list({ prefix: "from-" });
    assert.deepEqual(listed.keys.map((k) => [k.name, k.metadata]), [["from-node", { by: "node" }], ["from-worker", { by: "worker" }]]);
    assert.equal(listed.list_complete, true);
    await ns.delete("from-node");
    assert.equal(await call("/kv/get?key=from-node"), "(none)");
    // The worker-side API's validation, as a worker would get it.
    await assert.rejects(ns.put("", "x"), { message: "KV PUT failed: 400 Key names must not be empty." });
    await assert.rejects(ns.put("k", "x", { expirationTtl: 5 }), { message: /^KV PUT failed: 400 Invalid expiration_ttl of 5/ });
  });
}

test("kv({ get, put, delete, list }).namespace() calls the same handlers the worker's calls reach", async (t) => {
  const map = new Map();
  const binding = kv({
    get: (key) => map.get(key) ?? null,
    put: (key, value) => void map.set(key, Buffer.from(value).toString()),
    delete: (key) => void map.delete(key),
    list: ({ prefix }) => ({ keys: [...map.keys()].filter((k) => k.startsWith(prefix)).map((name) => ({ name })), list_complete: true }),
  });
  const call = await worker(t, { KV: binding });
  await binding.namespace().put("a", "from node");
  assert.equal(map.get("a"), "from node");
  assert.equal(await call("/kv/get?key=a"), "from node");
  assert.deepEqual((await binding.namespace().list()).keys, [{ name: "a" }]);
});

test("storage().bucket(): the workers' bucket, both ways, with objects' metadata", async (t) => {
  const binding = storage({ dir: tempDir(t) });
  const call = await worker(t, { BUCKET: binding });
  const bucket = binding.bucket();
  const put = await bucket.put("doc.txt", "from node", { httpMetadata: { contentType: "text/plain" } });
  assert.equal(put.key, "doc.txt");
  assert.equal(put.size, 9);
  assert.equal(await call("/r2/get?key=doc.txt"), "from node|text/plain");
  assert.equal(await call("/r2/put?key=w.txt&value=from%20worker"), "ok");
  const object = await bucket.get("w.txt");
  assert.equal(await object.text(), "from worker");
  assert.deepEqual(object.customMetadata, { by: "worker" });
  assert.ok(object.uploaded instanceof Date);
  assert.equal((await bucket.head("doc.txt")).httpMetadata.contentType, "text/plain");
  assert.deepEqual((await bucket.list()).objects.map((o) => o.key), ["doc.txt", "w.txt"]);
  await bucket.delete(["doc.txt", "w.txt"]);
  assert.equal(await bucket.get("doc.txt"), null);
  assert.equal(await call("/r2/get?key=w.txt"), "(none)");
});

test("queue(): send() and sendBatch() from Node reach the consumer; pending() lists what waits", async (t) => {
  const received = [];
  const q = queue({ name: "jobs", maxBatchTimeout: 0 });
  const consumer = await createWorker({
    script: `export default { async fetch(request, env) { await env.Q.send({ from: "worker" }); return new Response("ok"); }, async queue(batch) { for (const m of batch.messages) console.log(JSON.stringify(m.body)); batch.ackAll(); } };`,
    bindings: { Q: q },
    onLog: (level, message) => received.push(JSON.parse(message)),
  });
  t.after(() => consumer.dispose());
  await q.send({ from: "node" });
  await q.sendBatch([{ body: "text body", contentType: "text" }, { body: { n: 2 } }]);
  await (await dispatch(consumer, "http://localhost/")).text();
  await q.idle();
  assert.deepEqual(received.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), ["text body", { from: "node" }, { from: "worker" }, { n: 2 }].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))));
  assert.deepEqual(q.pending(), []);
  // Delayed messages wait, listed with their state and due time.
  await q.send({ later: true }, { delaySeconds: 60 });
  const [waiting] = q.pending();
  assert.deepEqual({ ...waiting, id: typeof waiting.id, timestamp: waiting.timestamp instanceof Date, due: waiting.due - waiting.timestamp }, { id: "string", timestamp: true, contentType: "json", body: { later: true }, attempts: 0, state: "delayed", due: 60000 });
  // The producer limits a worker has.
  await assert.rejects(q.send("x".repeat(128_001), { contentType: "text" }), { name: "RangeError", message: /at most 128000/ });
  await assert.rejects(q.sendBatch([]), { name: "TypeError" });
});
