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
      await caches.default.put("https://x.test/no", new Response("not kept", { headers: { "cache-control": "no-store" } }));
      return new Response(await (await caches.default.match("https://x.test/")).text());
    } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "from handler");
  const entry = store.get("default https://x.test/");
  assert.equal(entry.status, 200);
  assert.equal(Buffer.from(entry.body).toString(), "from handler");
  assert.ok(entry.expires > Date.now() + 50_000);
  // A response not to be cached never reaches the handler.
  assert.deepEqual([...store.keys()], ["default https://x.test/"]);
  await assert.rejects(createWorker({ script: "export default { fetch() {} }", cache: { match() {} }, onLog() {} }), /options\.cache must be an object with match/);
});

test("match() follows HTTP: If-None-Match and If-Modified-Since give 304, Range gives 206 or 416, Vary must match", async (t) => {
  const result = await evalInWorker(t, `
    const cache = caches.default;
    const url = "https://example.test/doc";
    await cache.put(url, new Response("0123456789", { headers: { "cache-control": "max-age=60", etag: '"v1"', "last-modified": "Wed, 21 Oct 2026 07:28:00 GMT", "content-type": "text/plain" } }));
    const shape = async (request) => {
      const r = await cache.match(request);
      return r === undefined ? null : { status: r.status, range: r.headers.get("content-range"), etag: r.headers.get("etag"), type: r.headers.get("content-type"), body: await r.text() };
    };
    const withHeaders = (headers) => new Request(url, { headers });
    await cache.put(new Request("https://example.test/lang", { headers: { "accept-language": "fr" } }),
      new Response("bonjour", { headers: { "cache-control": "max-age=60", vary: "Accept-Language" } }));
    return {
      etagMatch: await shape(withHeaders({ "if-none-match": 'W/"v1", "other"' })),
      etagStar: (await shape(withHeaders({ "if-none-match": "*" }))).status,
      etagMiss: (await shape(withHeaders({ "if-none-match": '"v2"' }))).status,
      notModifiedSince: (await shape(withHeaders({ "if-modified-since": "Thu, 22 Oct 2026 00:00:00 GMT" }))).status,
      modifiedSince: (await shape(withHeaders({ "if-modified-since": "Tue, 20 Oct 2026 00:00:00 GMT" }))).status,
      range: await shape(withHeaders({ range: "bytes=2-4" })),
      openRange: await shape(withHeaders({ range: "bytes=7-" })),
      suffix: await shape(withHeaders({ range: "bytes=-3" })),
      unsatisfiable: await shape(withHeaders({ range: "bytes=50-60" })),
      several: (await shape(withHeaders({ range: "bytes=0-1,3-4" }))).status,
      varyHit: await shape(new Request("https://example.test/lang", { headers: { "accept-language": "fr" } })),
      varyMiss: await shape(new Request("https://example.test/lang", { headers: { "accept-language": "de" } })),
      varyAbsent: await shape("https://example.test/lang"),
    };`);
  assert.deepEqual(result.etagMatch, { status: 304, range: null, etag: '"v1"', type: null, body: "" });
  assert.equal(result.etagStar, 304);
  assert.equal(result.etagMiss, 200);
  assert.equal(result.notModifiedSince, 304);
  assert.equal(result.modifiedSince, 200);
  assert.deepEqual(result.range, { status: 206, range: "bytes 2-4/10", etag: '"v1"', type: "text/plain", body: "234" });
  assert.deepEqual(result.openRange, { status: 206, range: "bytes 7-9/10", etag: '"v1"', type: "text/plain", body: "789" });
  assert.deepEqual(result.suffix, { status: 206, range: "bytes 7-9/10", etag: '"v1"', type: "text/plain", body: "789" });
  assert.deepEqual(result.unsatisfiable, { status: 416, range: "bytes */10", etag: '"v1"', type: "text/plain", body: "" });
  assert.equal(result.several, 200);
  assert.equal(result.varyHit.body, "bonjour");
  assert.equal(result.varyMiss, null);
  assert.equal(result.varyAbsent, null);
});

test("exported JWKs list their members in workerd's order", async (t) => {
  // Before enable_fast_jsg_struct (2025-12-03), which lists every member (compat-behaviour-more.test.mjs).
  const result = await evalInWorker(t, `
    const hmac = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256", length: 256 }, true, ["sign", "verify"]);
    const ec = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
    const rsa = await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"]);
    return {
      hmac: Object.keys(await crypto.subtle.exportKey("jwk", hmac)),
      ecPrivate: Object.keys(await crypto.subtle.exportKey("jwk", ec.privateKey)),
      rsaPublic: Object.keys(await crypto.subtle.exportKey("jwk", rsa.publicKey)),
    };`, { compatibilityDate: "2025-12-02" });
  assert.deepEqual(result.hmac, ["kty", "key_ops", "alg", "ext", "k"]);
  assert.deepEqual(result.ecPrivate, ["kty", "key_ops", "ext", "crv", "x", "y", "d"]);
  assert.deepEqual(result.rsaPublic, ["kty", "key_ops", "alg", "ext", "n", "e"]);
});
