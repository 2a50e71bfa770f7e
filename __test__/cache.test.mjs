// The Cache API: caches.default and caches.open(), honouring Cache-Control, backed by an
// in-memory store or a host handler.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

test("caches.default and caches.open: put, match, delete, and what is not cached", async (t) => {
  const result = await evalInWorker(t, `
    const cache = caches.default;
    await cache.put("https://example.test/a", new Response("cached body", { headers: { "cache-control": "max-age=60", "x-a": "1" } }));
    const hit = await cache.match("https://example.test/a");
    const miss = await cache.match("https://example.test/b");
    await cache.put(new Request("https://example.test/private"), new Response("p", { headers: { "cache-control": "private" } }));
    await cache.put("https://example.test/cookie", new Response("c", { headers: { "set-cookie": "a=1", "cache-control": "max-age=60" } }));
    const named = await caches.open("mine");
    await named.put("https://example.test/a", new Response("named body", { headers: { "cache-control": "s-maxage=30" } }));
    const errors = [];
    for (const f of [
      () => cache.put(new Request("https://example.test/", { method: "POST", body: "x" }), new Response("x")),
      () => cache.put("https://example.test/206", new Response("x", { status: 206 })),
      () => cache.put("https://example.test/vary", new Response("x", { headers: { vary: "*" } })),
    ]) {
      errors.push(await f().then(() => "no error", (e) => e.name));
    }
    const out = {
      hit: [hit.status, await hit.text(), hit.headers.get("x-a"), hit.headers.get("cf-cache-status")],
      miss: miss === undefined,
      private: (await cache.match("https://example.test/private")) === undefined,
      cookie: (await cache.match("https://example.test/cookie")) === undefined,
      named: await (await named.match("https://example.test/a")).text(),
      separate: await (await cache.match("https://example.test/a")).text(),
      postMatch: (await cache.match(new Request("https://example.test/a", { method: "POST", body: "x" }))) === undefined,
      errors,
    };
    out.deleted = [await cache.delete("https://example.test/a"), await cache.delete("https://example.test/a"), (await cache.match("https://example.test/a")) === undefined];
    return out;`);
  assert.deepEqual(result, {
    hit: [200, "cached body", "1", "HIT"], miss: true, private: true, cookie: true, named: "named body", separate: "cached body",
    postMatch: true, errors: ["TypeError", "TypeError", "TypeError"], deleted: [true, false, true],
  });
});

test("cached entries expire with the clock", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch(request) {
      if (request.method === "PUT") { await caches.default.put("https://x.test/k", new Response("v", { headers: { "cache-control": "max-age=10" } })); return new Response("put"); }
      const found = await caches.default.match("https://x.test/k");
      return new Response(found ? await found.text() : "miss");
    } }`,
  });
  await dispatch(worker, { url: "http://localhost/", method: "PUT" });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "v");
  const realNow = Date.now;
  Date.now = () => realNow() + 11_000;
  try {
    assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "miss");
  } finally {
    Date.now = realNow;
  }
});

test("a host cache handler receives the entries; bad handlers are a TypeError", async (t) => {
  const store = new Map();
  const worker = await useWorker(t, {
    cache: {
      match: async (cache, url) => store.get(`${cache} ${url}`) ?? null,
      put: (cache, url, entry) => void store.set(`${cache} ${url}`, entry),
      delete: (cache, url) => store.delete(`${cache} ${url}`),
    },
    script: `export default { async fetch() {
      await caches.default.put("https://x.test/", new Response("from handler", { headers: { "cache-control": "max-age=60" } }));
      return new Response(await (await caches.default.match("https://x.test/")).text());
    } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "from handler");
  const entry = store.get("default https://x.test/");
  assert.equal(entry.status, 200);
  assert.equal(Buffer.from(entry.body).toString(), "from handler");
  assert.ok(entry.expires > Date.now() + 50_000);
  await assert.rejects(createWorker({ script: "export default { fetch() {} }", cache: { match() {} }, onLog() {} }), /options\.cache must be an object with match/);
});
