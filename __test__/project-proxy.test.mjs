// getPlatformProxy(): env with KV, R2, services, vars and secrets backed by the very stores the
// dev server's worker uses (in this process and through .wrangler/state/v3 across processes),
// cf/ctx/caches, unsupported bindings listed, dispose().
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getPlatformProxy, startDevServer, loadProject } from "workerbox/project";
import { createWorker, dispatch } from "workerbox";
import { runChild } from "./helpers.mjs";

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "proxy-app");

function copy(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-proxy-"));
  fs.cpSync(FIXTURE, dir, { recursive: true });
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function proxyFor(t, options) {
  const proxy = await getPlatformProxy(options);
  t.after(() => proxy.dispose());
  return proxy;
}

test("env: vars, secrets, KV, R2, D1, queues, services and Durable Objects", async (t) => {
  const dir = copy(t);
  const api = (request) => new Response(`api got ${request.method} ${new URL(request.url).pathname}`);
  const proxy = await proxyFor(t, { configPath: dir, persist: false, services: { "api-worker": api } });
  assert.deepEqual(Object.keys(proxy.env).sort(), ["API", "CACHE", "DB", "FILES", "JOBS", "LIMITS", "MODE", "ROOMS", "TOKEN"]);
  assert.equal(proxy.env.MODE, "development");
  assert.deepEqual(proxy.env.LIMITS, { max: 5 });
  assert.equal(proxy.env.TOKEN, "secret-token");
  assert.deepEqual(proxy.unsupported, []);
  assert.equal(await (await proxy.env.API.fetch("http://api/items", { method: "POST", body: "x" })).text(), "api got POST /items");
  assert.equal(typeof proxy.cf.colo, "string");
  proxy.ctx.waitUntil(Promise.reject(new Error("ignored, as in workerd's local proxy")));
  proxy.ctx.passThroughOnException();
  assert.equal(await proxy.caches.default.match("http://x/"), undefined);
  assert.equal(await (await proxy.caches.open("named")).delete("http://x/"), false);
});

test("Durable Objects: stubs from Node run the project's class, storage persisted in wrangler's files under .wrangler/state/v3/do", async (t) => {
  const dir = copy(t);
  const proxy = await proxyFor(t, { configPath: dir });
  const { ROOMS } = proxy.env;
  const lobby = ROOMS.getByName("lobby");
  assert.deepEqual(await lobby.join("ada"), ["ada"]);
  assert.deepEqual(await ROOMS.get(ROOMS.idFromName("lobby")).join("lin"), ["ada", "lin"]);
  assert.equal(await (await lobby.fetch("http://room/state")).text(), "/state: 2 in lobby");
  assert.equal(ROOMS.idFromName("lobby").toString(), lobby.id);
  assert.ok(ROOMS.idFromName("lobby").equals(ROOMS.idFromString(lobby.id)));
  assert.throws(() => ROOMS.idFromString("nope"), /64 hex digits/);
  await proxy.dispose();
  // A second proxy (a new worker) finds the same object's storage on disk.
  const again = await proxyFor(t, { configPath: dir });
  assert.deepEqual(await again.env.ROOMS.getByName("lobby").join("max"), ["ada", "lin", "max"]);
  assert.ok(fs.existsSync(path.join(dir, ".wrangler", "state", "v3", "do", "proxy-app-Room", `${lobby.id}.sqlite`)));
});

test("D1 and queue producers: the same database and queue a worker of the project uses", async (t) => {
  const dir = copy(t);
  const project = await loadProject(dir, { persistTo: false });
  const { env } = await proxyFor(t, { project });
  await env.DB.exec("CREATE TABLE notes (text TEXT)");
  await env.DB.prepare("INSERT INTO notes VALUES (?)").bind("from node").run();
  const worker = await createWorker({ script: `export default { async fetch(request, env) {
    await env.JOBS.send({ from: "worker" });
    return Response.json((await env.DB.prepare("SELECT text FROM notes").all()).results);
  } }`, bindings: { DB: project.bindings.DB, JOBS: project.bindings.JOBS }, onLog() {} });
  t.after(() => worker.dispose());
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), [{ text: "from node" }]);
  await env.JOBS.send({ from: "node" });
  await env.JOBS.sendBatch([{ body: "plain", contentType: "text" }, { body: new Uint8Array([1]), contentType: "bytes" }]);
  assert.equal(project.bindings.JOBS.backlog, 4);
  await assert.rejects(env.JOBS.send("x".repeat(200_000), { contentType: "text" }), /at most 128000/);
  await assert.rejects(env.JOBS.send(1, { contentType: "xml" }), /unsupported content type "xml"/);
});

test("KV: get in every type, metadata, list, delete, bulk get", async (t) => {
  const { env } = await proxyFor(t, { configPath: copy(t), persist: false });
  assert.equal(await env.CACHE.get("missing"), null);
  await env.CACHE.put("doc", JSON.stringify({ a: 1 }), { metadata: { owner: "me" } });
  await env.CACHE.put("bytes", new Uint8Array([1, 2, 3]));
  await env.CACHE.put("streamed", new Blob(["from a blob"]).stream());
  assert.equal(await env.CACHE.get("doc"), '{"a":1}');
  assert.deepEqual(await env.CACHE.get("doc", "json"), { a: 1 });
  assert.deepEqual(await env.CACHE.get("doc", { type: "json" }), { a: 1 });
  assert.deepEqual(new Uint8Array(await env.CACHE.get("bytes", "arrayBuffer")), new Uint8Array([1, 2, 3]));
  assert.equal(await new Response(await env.CACHE.get("streamed", "stream")).text(), "from a blob");
  assert.deepEqual(await env.CACHE.getWithMetadata("doc", "json"), { value: { a: 1 }, metadata: { owner: "me" }, cacheStatus: null });
  assert.deepEqual(await env.CACHE.get(["doc", "nope"]), new Map([["doc", '{"a":1}'], ["nope", null]]));
  const listed = await env.CACHE.list({ prefix: "d" });
  assert.deepEqual(listed.keys.map((k) => k.name), ["doc"]);
  assert.equal(listed.list_complete, true);
  await env.CACHE.delete("doc");
  assert.equal(await env.CACHE.get("doc"), null);
  await assert.rejects(env.CACHE.get("bytes", "yaml"), /unknown type "yaml"/);
});

test("R2: put with metadata, get (whole, range, failed condition), head, list with delimiter, delete, multipart upload", async (t) => {
  const { env } = await proxyFor(t, { configPath: copy(t), persist: false });
  const put = await env.FILES.put("docs/a.txt", "hello r2", { httpMetadata: { contentType: "text/plain" }, customMetadata: { by: "test" } });
  assert.equal(put.key, "docs/a.txt");
  assert.equal(put.size, 8);
  assert.ok(put.uploaded instanceof Date);
  const object = await env.FILES.get("docs/a.txt");
  assert.equal(await object.text(), "hello r2");
  assert.deepEqual(object.httpMetadata, { contentType: "text/plain" });
  assert.deepEqual(object.customMetadata, { by: "test" });
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  assert.equal(headers.get("content-type"), "text/plain");
  assert.equal(await (await env.FILES.get("docs/a.txt", { range: { offset: 6, length: 2 } })).text(), "r2");
  const skipped = await env.FILES.get("docs/a.txt", { onlyIf: { etagMatches: "not-the-etag" } });
  assert.equal(skipped.key, "docs/a.txt");
  assert.equal("text" in skipped, false);
  assert.equal((await env.FILES.head("docs/a.txt")).etag, put.etag);
  await env.FILES.put("docs/b.txt", new Uint8Array([98]));
  await env.FILES.put("top.txt", "t");
  const listed = await env.FILES.list({ delimiter: "/" });
  assert.deepEqual(listed.objects.map((o) => o.key), ["top.txt"]);
  assert.deepEqual(listed.delimitedPrefixes, ["docs/"]);
  await env.FILES.delete(["docs/a.txt", "docs/b.txt"]);
  assert.equal(await env.FILES.head("docs/a.txt"), null);
  // Multipart uploads (one part may be under 5 MiB: it is the last).
  const upload = await env.FILES.createMultipartUpload("big", { customMetadata: { parts: "1" } });
  const part = await upload.uploadPart(1, "one part");
  const completed = await upload.complete([part]);
  assert.match(completed.etag, /^[0-9a-f]{32}-1$/);
  assert.equal(await (await env.FILES.get("big")).text(), "one part");
  assert.deepEqual((await env.FILES.head("big")).customMetadata, { parts: "1" });
});

test("the proxy and the dev server share one store in this process", async (t) => {
  const dir = copy(t);
  const server = await startDevServer(dir, { port: 0, persistTo: false, watch: false, log() {} });
  t.after(() => server.close());
  const { env } = await proxyFor(t, { project: server.project });
  await env.CACHE.put("from-node", "written by the proxy");
  await env.FILES.put("report.txt", "a report");
  assert.deepEqual(await (await fetch(server.url)).json(), { cache: "written by the proxy", file: "a report" });
});

test("persisted state under .wrangler/state/v3 is shared with a worker loaded separately", async (t) => {
  const dir = copy(t);
  const proxy = await getPlatformProxy({ configPath: dir });
  await proxy.env.CACHE.put("from-node", "persisted");
  await proxy.env.FILES.put("report.txt", "persisted file");
  await proxy.dispose();
  await proxy.dispose(); // twice is harmless
  // KV in wrangler's layout: the value files of namespace "cache".
  assert.equal(fs.readdirSync(path.join(dir, ".wrangler", "state", "v3", "kv", "cache", "blobs")).length, 1);
  const project = await loadProject(dir);
  const worker = await createWorker({ ...project.options, onLog() {} });
  t.after(() => worker.dispose());
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), { cache: "persisted", file: "persisted file" });
});

test("queue messages sent through a proxy in another process reach this process's consumer", async (t) => {
  const dir = copy(t);
  const project = await loadProject(dir);
  const received = [];
  const consumer = await createWorker({
    script: `export default { async queue(batch) { for (const m of batch.messages) { console.log(JSON.stringify(m.body)); m.ack(); } } }`,
    bindings: { JOBS: project.bindings.JOBS },
    onLog: (level, line) => received.push(JSON.parse(line)),
  });
  t.after(() => consumer.dispose());
  const child = await runChild(
    `const { getPlatformProxy } = require(${JSON.stringify(fileURLToPath(new URL("../lib/project/index.js", import.meta.url)))});
     (async () => {
       const proxy = await getPlatformProxy({ configPath: ${JSON.stringify(dir)} });
       await proxy.env.JOBS.send({ from: "the other process", n: 1 });
       await proxy.env.JOBS.sendBatch([{ body: { n: 2 } }, { body: { n: 3 } }]);
       await proxy.dispose();
       process.stdout.write(JSON.stringify({ sent: 3 }));
     })();`,
    {},
    30_000,
  );
  assert.equal(child.status, 0, child.stderr);
  const deadline = Date.now() + 15_000;
  while (received.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.deepEqual(received.map((m) => m.n).sort(), [1, 2, 3]);
  await project.bindings.JOBS.idle();
  assert.equal(project.bindings.JOBS.backlog, 0);
});
