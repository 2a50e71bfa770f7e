// Bindings answered by host JS handlers: KV (embedded in-memory and on-disk stores, and user
// handlers), service bindings (a function or another worker), handler errors and timeouts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createWorker, dispatch, kv, service } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { spawnNodeSync } from "./child-node.mjs";

/** Runs `body` (inside an async function with `env`) in a worker with `bindings`; returns its JSON. */
async function run(t, bindings, body, extra = {}) {
  const worker = await useWorker(t, {
    bindings,
    script: `export default { async fetch(request, env) { return Response.json(await (async () => { ${body} })() ?? null); } }`,
    ...extra,
  });
  const res = await dispatch(worker, "http://localhost/");
  return res.json();
}

test("KV: get/put/delete with text, json, arrayBuffer and stream values, and metadata", async (t) => {
  const result = await run(t, { CACHE: kv() }, `
    await env.CACHE.put("text", "hello");
    await env.CACHE.put("json", JSON.stringify({ a: [1, 2] }), { metadata: { owner: "me" } });
    await env.CACHE.put("bytes", new Uint8Array([1, 2, 255]));
    await env.CACHE.put("streamed", new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("from ")); c.enqueue(new TextEncoder().encode("a stream")); c.close(); } }));
    const stream = await env.CACHE.get("text", { type: "stream" });
    let streamed = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStreamLike())) streamed += chunk;
    const out = {
      text: await env.CACHE.get("text"),
      json: await env.CACHE.get("json", "json"),
      withMeta: await env.CACHE.getWithMetadata("json", { type: "json" }),
      noMeta: await env.CACHE.getWithMetadata("text"),
      bytes: [...new Uint8Array(await env.CACHE.get("bytes", "arrayBuffer"))],
      fromStream: await env.CACHE.get("streamed"),
      streamed,
      missing: await env.CACHE.get("nope"),
      missingMeta: await env.CACHE.getWithMetadata("nope"),
    };
    await env.CACHE.delete("text");
    out.deleted = await env.CACHE.get("text");
    return out;
  `.replace("new TextDecoderStreamLike()", "new TransformStream({ transform(chunk, c) { c.enqueue(new TextDecoder().decode(chunk)); } })"));
  assert.equal(result.text, "hello");
  assert.deepEqual(result.json, { a: [1, 2] });
  assert.deepEqual(result.withMeta, { value: { a: [1, 2] }, metadata: { owner: "me" }, cacheStatus: null });
  assert.deepEqual(result.noMeta, { value: "hello", metadata: null, cacheStatus: null });
  assert.deepEqual(result.bytes, [1, 2, 255]);
  assert.equal(result.fromStream, "from a stream");
  assert.equal(result.streamed, "hello");
  assert.equal(result.missing, null);
  assert.deepEqual(result.missingMeta, { value: null, metadata: null, cacheStatus: null });
  assert.equal(result.deleted, null);
});

test("KV: list with prefix, limit and cursor", async (t) => {
  const result = await run(t, { CACHE: kv() }, `
    for (const k of ["b", "a", "user:2", "user:1", "user:3"]) await env.CACHE.put(k, k, { metadata: { k } });
    const first = await env.CACHE.list({ prefix: "user:", limit: 2 });
    const second = await env.CACHE.list({ prefix: "user:", limit: 2, cursor: first.cursor });
    const all = await env.CACHE.list();
    return { first, second, all: all.keys.map((k) => k.name), complete: all.list_complete };`);
  assert.deepEqual(result.first.keys, [{ name: "user:1", metadata: { k: "user:1" } }, { name: "user:2", metadata: { k: "user:2" } }]);
  assert.equal(result.first.list_complete, false);
  assert.equal(typeof result.first.cursor, "string");
  assert.deepEqual(result.second.keys.map((k) => k.name), ["user:3"]);
  assert.equal(result.second.list_complete, true);
  assert.deepEqual(result.all, ["a", "b", "user:1", "user:2", "user:3"]);
  assert.equal(result.complete, true);
});

test("KV: production's validation errors", async (t) => {
  const result = await run(t, { CACHE: kv() }, `
    const attempts = {
      emptyKey: () => env.CACHE.get(""),
      dotKey: () => env.CACHE.put("..", "x"),
      longKey: () => env.CACHE.get("k".repeat(513)),
      shortTtl: () => env.CACHE.put("k", "v", { expirationTtl: 10 }),
      pastExpiration: () => env.CACHE.put("k", "v", { expiration: 1000 }),
      bigMetadata: () => env.CACHE.put("k", "v", { metadata: "m".repeat(2000) }),
      badType: () => env.CACHE.get("k", "xml"),
      badLimit: () => env.CACHE.list({ limit: 5000 }),
      badCacheTtl: () => env.CACHE.get("k", { cacheTtl: 5 }),
      badValue: () => env.CACHE.put("k", 42),
    };
    const out = {};
    for (const [name, attempt] of Object.entries(attempts)) {
      try { await attempt(); out[name] = "no error"; } catch (e) { out[name] = e.message; }
    }
    return out;`);
  assert.match(result.emptyKey, /KV GET failed: 400 Key names must not be empty/);
  assert.match(result.dotKey, /Illegal key name "\.\."/);
  assert.match(result.longKey, /414 UTF-8 encoded length of 513 exceeds key length limit of 512/);
  assert.match(result.shortTtl, /Invalid expiration_ttl of 10\. Expiration TTL must be at least 60/);
  assert.match(result.pastExpiration, /Invalid expiration of 1000/);
  assert.match(result.bigMetadata, /413 Metadata length of \d+ exceeds limit of 1024/);
  assert.match(result.badType, /Unknown response type "xml"/);
  assert.match(result.badLimit, /Invalid key_count_limit of 5000/);
  assert.match(result.badCacheTtl, /Invalid cache_ttl of 5/);
  assert.match(result.badValue, /must be a string, ArrayBuffer/);
});

test("KV: expiration honours the clock", async (t) => {
  const store = kv();
  const worker = await useWorker(t, {
    bindings: { CACHE: store },
    script: `export default { async fetch(request, env) {
      if (request.method === "PUT") { await env.CACHE.put("k", "v", { expirationTtl: 60 }); return new Response("put"); }
      const listed = await env.CACHE.list();
      return Response.json({ value: await env.CACHE.get("k"), keys: listed.keys });
    } }`,
  });
  await dispatch(worker, { url: "http://localhost/", method: "PUT" });
  const fresh = await (await dispatch(worker, "http://localhost/")).json();
  assert.equal(fresh.value, "v");
  assert.ok(fresh.keys[0].expiration > Date.now() / 1000 + 50);
  // Move the handler's clock past the expiration.
  const realNow = Date.now;
  Date.now = () => realNow() + 61_000;
  try {
    assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), { value: null, keys: [] });
  } finally {
    Date.now = realNow;
  }
});

test("KV: kv({ dir }) persists to disk and survives a new worker", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "workerbox-kv-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = `export default { async fetch(request, env) {
    if (request.method === "POST") { await env.FILES.put("greeting", await request.text(), { metadata: { v: 1 } }); await env.FILES.put("gone", "x"); await env.FILES.delete("gone"); return new Response("stored"); }
    return Response.json({ ...(await env.FILES.getWithMetadata("greeting")), gone: await env.FILES.get("gone") });
  } }`;
  const first = await createWorker({ script, bindings: { FILES: kv({ dir }) }, onLog() {} });
  await dispatch(first, { url: "http://localhost/", method: "POST", body: "hello disk" });
  await first.dispose();
  const second = await useWorker(t, { script, bindings: { FILES: kv({ dir }) } });
  assert.deepEqual(await (await dispatch(second, "http://localhost/")).json(), { value: "hello disk", metadata: { v: 1 }, cacheStatus: null, gone: null });
});

test("KV: user handlers may be sync or async; their errors reject inside the worker", async (t) => {
  const seen = [];
  const custom = kv({
    get: (key) => (key === "sync" ? "sync value" : null),
    put: async (key, value, options) => {
      seen.push([key, Buffer.from(value).toString(), options.metadata]);
      if (key === "bad") throw new RangeError("disk full");
    },
    delete: () => {
      throw new Error("no deletes here");
    },
    list: async () => ({ keys: [{ name: "x" }], list_complete: true }),
  });
  const result = await run(t, { MY_KV: custom }, `
    const out = { sync: await env.MY_KV.get("sync"), missing: await env.MY_KV.get("other") };
    await env.MY_KV.put("ok", "value", { metadata: { a: 1 } });
    out.put = await env.MY_KV.put("bad", "v").then(() => "no error", (e) => e.name + ": " + e.message);
    out.delete = await env.MY_KV.delete("k").then(() => "no error", (e) => e.message);
    out.list = (await env.MY_KV.list()).keys;
    return out;`);
  assert.deepEqual(result, { sync: "sync value", missing: null, put: "RangeError: disk full", delete: "no deletes here", list: [{ name: "x" }] });
  assert.deepEqual(seen[0], ["ok", "value", { a: 1 }]);
});

test("a handler that never settles is bounded by limits.bindingMs", async (t) => {
  const result = await run(
    t,
    { SLOW: kv({ get: () => new Promise(() => {}), put() {}, delete() {}, list() {} }) },
    `return await env.SLOW.get("k").then(() => "answered", (e) => e.message);`,
    { limits: { bindingMs: 50 } },
  );
  assert.match(result, /timed out.*limits\.bindingMs/);
});

test("service bindings call a host handler or another worker, bodies and headers included", async (t) => {
  const backend = await useWorker(t, {
    script: `export default { async fetch(request) { return new Response("backend saw " + request.method + " " + await request.text(), { headers: { "x-from": "backend" } }) } }`,
  });
  const result = await run(
    t,
    {
      AUTH: service(async (request) => {
        const headers = new Headers({ "set-cookie": "a=1" });
        headers.append("set-cookie", "b=2");
        return new Response(`auth ${request.headers.get("authorization")} ${new URL(request.url).pathname}`, { status: 202, headers });
      }),
      BACKEND: backend,
      BROKEN: service(() => {
        throw new TypeError("handler crashed");
      }),
    },
    `
    const auth = await env.AUTH.fetch("https://auth.internal/check", { headers: { authorization: "Bearer t" } });
    const backend = await env.BACKEND.fetch(new Request("http://backend/", { method: "PUT", body: "data" }));
    const broken = await env.BROKEN.fetch("http://x/").then(() => "no error", (e) => e.name + ": " + e.message);
    return {
      auth: [auth.status, await auth.text(), auth.headers.getSetCookie()],
      backend: [await backend.text(), backend.headers.get("x-from")],
      broken,
    };`,
  );
  assert.deepEqual(result.auth, [202, "auth Bearer t /check", ["a=1", "b=2"]]);
  assert.deepEqual(result.backend, ["backend saw PUT data", "backend"]);
  assert.equal(result.broken, "TypeError: handler crashed");
});

test("bad binding definitions are a TypeError naming the binding", async () => {
  const script = `export default { fetch() { return new Response("") } }`;
  await assert.rejects(createWorker({ script, bindings: { FN: () => 1 }, onLog() {} }), /options\.bindings\.FN is a function.*service\(fn\)/);
  await assert.rejects(createWorker({ script, bindings: { MAP: new Map() }, onLog() {} }), /options\.bindings\.MAP is a Map/);
  await assert.rejects(
    createWorker({ script, bindings: { MY_KV: { get: async () => null, put() {} } }, onLog() {} }),
    (e) => e instanceof TypeError && /options\.bindings\.MY_KV\.get is a function.*kv\(\{ get, put, delete, list \}\)/.test(e.message),
  );
  await assert.rejects(createWorker({ script, bindings: { NESTED: { a: [1, { when: new Map() }] } }, onLog() {} }), /options\.bindings\.NESTED\.a\[1\]\.when is a Map/);
  assert.throws(() => kv({ get() {} }), /kv\(\): handler "put" must be a function/);
  assert.throws(() => kv({ dir: 5 }), /options\.dir/);
  assert.throws(() => service("http://x"), /service\(\): pass a function/);
});

test("idle workers with bindings do not keep Node alive", async () => {
  const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
  const code = `
    const { createWorker, dispatch, kv } = require(${JSON.stringify(path.join(root, "index.js"))});
    (async () => {
      const w = await createWorker({ script: "export default { async fetch(r, env) { await env.K.put('a', 'b'); return new Response(await env.K.get('a')) } }", bindings: { K: kv() }, onLog() {} });
      console.log(await (await dispatch(w, "http://localhost/")).text());
    })();`;
  const result = spawnNodeSync(["-e", code], { encoding: "utf8", timeout: 20000 });
  assert.equal(result.error, undefined);
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout.trim(), "b");
});
