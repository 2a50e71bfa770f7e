// workerd's in-memory cache binding (memoryCache()): read(key, fallback) fills once and returns
// copies, the limits (keys, value size, total size) with least-recently-read eviction, expiration,
// concurrent reads sharing one fallback, workerd's errors, ids shared between workers, delete()
// only under memory_cache_delete, and the Node side (stats(), reset(), option checks).
import { test } from "node:test";
import assert from "node:assert/strict";
import { memoryCache } from "../index.js";
import { evalInWorker } from "./helpers.mjs";

const limits = (maxKeys, maxValueSize, maxTotalValueSize) => ({ limits: { maxKeys, maxValueSize, maxTotalValueSize } });

test("read() fills from the fallback once and returns a copy of the value", async (t) => {
  const out = await evalInWorker(t, `
    let calls = 0;
    const original = { list: [1, 2], when: new Date(0) };
    const a = await env.CACHE.read("k", async (key) => { calls++; return { value: original }; });
    const b = await env.CACHE.read("k", () => { throw new Error("not called"); });
    const miss = await env.CACHE.read("other");
    return { calls, same: a === original, copies: a !== b, a: JSON.stringify(a), b: JSON.stringify(b), date: b.when instanceof Date, miss: miss === undefined,
      tag: Object.prototype.toString.call(env.CACHE), hasDelete: typeof env.CACHE.delete };`, { bindings: { CACHE: memoryCache(limits(10, 1024, 4096)) } });
  assert.deepEqual(out, { calls: 1, same: false, copies: true, a: '{"list":[1,2],"when":"1970-01-01T00:00:00.000Z"}', b: '{"list":[1,2],"when":"1970-01-01T00:00:00.000Z"}', date: true, miss: true, tag: "[object MemoryCache]", hasDelete: "undefined" });
});

test("limits: values over maxValueSize are returned but not kept; keys and total size evict the least recently read", async (t) => {
  const binding = memoryCache(limits(2, 500, 600));
  const out = await evalInWorker(t, `
    const fill = (key, value) => env.CACHE.read(key, () => ({ value }));
    const got = [];
    // A 495-character string serializes to 500 bytes (kept); 500 characters to 505 (not kept).
    got.push((await fill("a", "x".repeat(495))).length, (await env.CACHE.read("a"))?.length);
    got.push((await fill("b", "x".repeat(500))).length, await env.CACHE.read("b"));
    // 104 bytes more would make 604 > 600: "a" goes.
    await fill("c", "y".repeat(100));
    got.push(await env.CACHE.read("a"), (await env.CACHE.read("c")).length);
    await fill("d", "d");
    await env.CACHE.read("c");            // c is now the most recently read
    await fill("e", "e");                 // two keys at most: d goes
    got.push(await env.CACHE.read("d"), (await env.CACHE.read("c")).length, await env.CACHE.read("e"));
    return got;`, { bindings: { CACHE: binding } });
  assert.deepEqual(out, [495, 495, 500, null, null, 100, null, 100, "e"]);
  assert.deepEqual(binding.stats(), { keys: 2, bytes: 104 + 5 });
  binding.reset();
  assert.deepEqual(binding.stats(), { keys: 0, bytes: 0 });
});

test("expiration, and workerd's errors for keys, values and expirations", async (t) => {
  const out = await evalInWorker(t, `
    const errors = [];
    const attempt = async (f) => { try { await f(); errors.push("ok"); } catch (e) { errors.push(e.constructor.name + " " + e.name + ": " + e.message); } };
    await attempt(() => env.CACHE.read("a".repeat(2049)));
    await attempt(() => env.CACHE.read("ä".repeat(1024), () => ({ value: 1 })));
    await attempt(() => env.CACHE.read("ä".repeat(1025)));
    await attempt(() => env.CACHE.read(5));
    await attempt(() => env.CACHE.read("s", () => ({ value: Symbol("s") })));
    await attempt(() => env.CACHE.read("f", () => ({ value: () => {} })));
    await attempt(() => env.CACHE.read("n", () => ({ value: 1, expiration: NaN })));
    await attempt(() => env.CACHE.read("t", () => { throw new TypeError("from the fallback"); }));
    const first = await env.CACHE.read("exp", () => ({ value: "soon", expiration: Date.now() + 50 }));
    const before = await env.CACHE.read("exp");
    await scheduler.wait(120);
    const after = await env.CACHE.read("exp");
    return { errors, first, before, after: after === undefined };`, { bindings: { CACHE: memoryCache(limits(10, 1024, 4096)) } });
  assert.deepEqual(out, {
    errors: [
      "RangeError RangeError: Key too large.",
      "ok",
      "RangeError RangeError: Key too large.",
      "TypeError TypeError: Failed to execute 'read' on 'MemoryCache': parameter 1 is not of type 'string'.",
      "DOMException DataCloneError: failed to serialize symbol",
      "DOMException DataCloneError: failed to serialize function",
      "TypeError TypeError: Expiration time must not be NaN.",
      "TypeError TypeError: from the fallback",
    ],
    first: "soon",
    before: "soon",
    after: true,
  });
});

test("concurrent reads of a key share one fallback; after a failed one the next read runs its own", async (t) => {
  const out = await evalInWorker(t, `
    let calls = 0;
    const slow = () => new Promise((resolve) => setTimeout(() => { calls++; resolve({ value: "v" + calls }); }, 20));
    const shared = await Promise.all([env.CACHE.read("k", slow), env.CACHE.read("k", slow), env.CACHE.read("k", slow)]);
    const chained = await Promise.allSettled([
      env.CACHE.read("f", () => { throw new Error("first fails"); }),
      env.CACHE.read("f", () => ({ value: "second" })),
    ]);
    // A long fallback for one key does not hold up another key.
    const raced = await Promise.race([
      env.CACHE.read("long", () => new Promise((r) => setTimeout(() => r({ value: "long" }), 300))),
      env.CACHE.read("short", () => ({ value: "short" })),
    ]);
    return { calls, shared, chained: chained.map((r) => r.status === "fulfilled" ? r.value : r.reason.message), raced };`, { bindings: { CACHE: memoryCache(limits(10, 1024, 4096)) } });
  assert.deepEqual(out, { calls: 1, shared: ["v1", "v1", "v1"], chained: ["first fails", "second"], raced: "short" });
});

test("bindings with one id share entries across workers; delete() under memory_cache_delete", async (t) => {
  const id = `shared-${process.pid}-${Date.now()}`;
  const written = await evalInWorker(t, `return env.CACHE.read("k", () => ({ value: "from the first worker" }));`, { bindings: { CACHE: memoryCache({ id, ...limits(4, 1024, 4096) }) } });
  const read = await evalInWorker(t, `
    const before = await env.CACHE.read("k");
    env.CACHE.delete("k");
    const after = await env.CACHE.read("k");
    let tooLong;
    try { env.CACHE.delete("a".repeat(2049)); } catch (e) { tooLong = e.name + ": " + e.message; }
    return { before, after: after === undefined, tooLong };`, {
    bindings: { CACHE: memoryCache({ id, ...limits(4, 1024, 4096) }) },
    compatibilityFlags: ["memory_cache_delete"],
    unsafeExperimental: true,
  });
  assert.equal(written, "from the first worker");
  assert.deepEqual(read, { before: "from the first worker", after: true, tooLong: "RangeError: Key too large." });
});

test("memoryCache() checks its options and names the bad one", () => {
  assert.throws(() => memoryCache(5), /memoryCache\(\): options must be an object/);
  assert.throws(() => memoryCache({ limits: { maxKeys: -1 } }), /limits\.maxKeys must be a whole number of 0 or more, got -1/);
  assert.throws(() => memoryCache({ limits: { maxEntries: 3 } }), /unknown limit "maxEntries"/);
  assert.throws(() => memoryCache({ id: "" }), /id must be a non-empty string/);
  assert.deepEqual(memoryCache().limits, { maxKeys: 1000, maxValueSize: 1024 * 1024, maxTotalValueSize: 64 * 1024 * 1024 });
});
