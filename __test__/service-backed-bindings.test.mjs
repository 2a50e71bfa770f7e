// Bindings whose backing is a service spoken to in workerd's HTTP protocol (`kv({ service })`,
// `queue({ service })`, `analyticsEngine({ service })`, createWorker's `cache: { service }`), as
// workerd's KV, queue, Analytics Engine bindings and cacheApiOutbound speak to a service; and a
// service binding's fetch as workerd gives it (immutable headers, the URL, a chunked body, the
// `cache` option's flags). The wire shapes asserted are those of workerd's kv.c++, queue.c++,
// server.c++ (writeLogfwdr) and cache.c++; the answers are what workerd's own tests
// (kv-test, queue-test, analytics-engine-test, cache-test, http-test) expect.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, kv, queue, analyticsEngine, service } from "../index.js";

/** A worker answering `/run` with the JSON its `run(env)` resolves to (errors as [name, message]). */
async function runner(t, run, bindings, options = {}) {
  const script = `export default { async fetch(request, env) {
    const res = async (f) => { try { return await f(); } catch (e) { return [e.name, e.message]; } };
    return Response.json(await (${run})(env, res));
  } };`;
  const worker = await createWorker({ script, format: "module", bindings, compatibilityDate: "2025-10-01", ...options });
  t.after(() => worker.dispose());
  const response = await dispatch(worker, { url: "http://x/run" });
  return response.json();
}

/** A fetch handler recording each request it gets (method, URL, headers, body text). */
function recorder(answer) {
  const seen = [];
  const handler = async (request) => {
    const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
    seen.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body });
    return answer(request, body);
  };
  return { seen, handler };
}

test("kv({ service }) speaks KV's HTTP protocol to its service", { timeout: 60000 }, async (t) => {
  const { seen, handler } = recorder((request, body) => {
    const { pathname } = new URL(request.url);
    const headers = { "CF-Cache-Status": "HIT", "CF-KV-Metadata": '{"m":1}' };
    if (pathname === "/missing") return new Response(null, { status: 404 });
    if (pathname === "/broken") return new Response(null, { status: 500 });
    if (pathname === "/bulk/get") {
      const { keys } = JSON.parse(body);
      return new Response(JSON.stringify(Object.fromEntries(keys.map((k) => [k, `v-${k}`]))));
    }
    if (pathname === "/") return new Response(JSON.stringify({ keys: [{ name: "a", metadata: '{"x":2}' }], list_complete: true }), { headers });
    return new Response(`value${pathname}`, { headers });
  });
  const out = await runner(
    t,
    `async (env, res) => [
      await env.KV.get("k1"),
      await env.KV.getWithMetadata("k1", { cacheTtl: 30 }),
      await env.KV.get("missing"),
      await res(() => env.KV.get("broken")),
      [...(await env.KV.get(["a", "b"]))],
      await env.KV.list({ prefix: "p", limit: 5 }),
      await env.KV.put("k2", "v", { expiration: 10, metadata: { y: 3 } }),
      await env.KV.delete("k3"),
      await res(() => env.KV.get("")),
      typeof env.KV.deleteBulk,
    ]`,
    { KV: kv({ service: handler }) },
  );
  assert.deepEqual(out, [
    "value/k1",
    { value: "value/k1", metadata: { m: 1 }, cacheStatus: "HIT" },
    null,
    ["Error", "KV GET failed: 500 Internal Server Error"],
    [["a", "v-a"], ["b", "v-b"]],
    { keys: [{ name: "a", metadata: { x: 2 } }], list_complete: true, cacheStatus: "HIT" },
    null,
    null,
    ["TypeError", "Key name cannot be empty."],
    "undefined",
  ]);
  const line = (r) => `${r.method} ${r.url}`;
  assert.deepEqual(seen.map(line), [
    "GET https://fake-host/k1?urlencoded=true",
    "GET https://fake-host/k1?urlencoded=true&cache_ttl=30",
    "GET https://fake-host/missing?urlencoded=true",
    "GET https://fake-host/broken?urlencoded=true",
    "POST https://fake-host/bulk/get",
    "GET https://fake-host/?key_count_limit=5&prefix=p",
    // The expiration is the service's to refuse (workerd checks none of it).
    "PUT https://fake-host/k2?urlencoded=true&expiration=10",
    "DELETE https://fake-host/k3?urlencoded=true",
  ]);
  assert.equal(seen[4].body, '{"keys":["a","b"]}');
  assert.equal(seen[6].body, "v");
  assert.equal(seen[6].headers["cf-kv-metadata"], '{"y":3}');
  assert.equal(seen[6].headers["content-type"], "text/plain;charset=UTF-8");
});

test("kv({ service }).deleteBulk() (experimental) calls the service's delete() over RPC", { timeout: 60000 }, async (t) => {
  const backend = await createWorker({
    script: `import { WorkerEntrypoint } from "cloudflare:workers";
      export default class extends WorkerEntrypoint {
        fetch() { return new Response("x"); }
        async delete(keys) { if ([keys].flat().includes("bad")) throw new Error("KV DELETE failed: 500 nope"); }
      }`,
    format: "module",
    compatibilityDate: "2025-10-01",
  });
  t.after(() => backend.dispose());
  const out = await runner(t, `async (env, res) => [await env.KV.deleteBulk(["a", "b"]) ?? "done", await env.KV.deleteBulk("one") ?? "done", await res(() => env.KV.deleteBulk(["a", "bad"]))]`, { KV: kv({ service: backend }) }, { compatibilityFlags: ["experimental"], unsafeExperimental: true });
  assert.deepEqual(out, ["done", "done", ["Error", "KV DELETE failed: 500 nope"]]);
});

test("queue({ service }) speaks the queue HTTP protocol; errors follow queue_expose_error_codes", { timeout: 60000 }, async (t) => {
  const metrics = { backlogCount: 3, backlogBytes: 30, oldestMessageTimestamp: 1000 };
  const { seen, handler } = recorder((request, body) => {
    if (body.includes("fail")) return new Response("", { status: 503, headers: { "CF-Queues-Error-Code": "10503", "CF-Queues-Error-Cause": "down" } });
    if (new URL(request.url).pathname === "/metrics") return Response.json({ ...metrics, oldestMessageTimestamp: 0 });
    return Response.json({ metadata: { metrics } });
  });
  const run = `async (env, res) => {
    const sent = await env.Q.send("abc", { contentType: "text", delaySeconds: 2 });
    const batch = await env.Q.sendBatch([{ body: "d", contentType: "text" }, { body: { j: 1 } }], { delaySeconds: 1 });
    const m = await env.Q.metrics();
    return [sent.metadata.metrics.oldestMessageTimestamp instanceof Date, sent.metadata.metrics.backlogCount, batch.metadata.metrics.backlogBytes,
      m.oldestMessageTimestamp === undefined, m.backlogCount, await res(() => env.Q.send("fail", { contentType: "text" }))];
  }`;
  const on = await runner(t, run, { Q: queue({ service: handler }) }, { compatibilityFlags: ["queue_expose_error_codes"] });
  assert.deepEqual(on, [true, 3, 30, true, 3, ["Error", "down (10503)"]]);
  assert.deepEqual(seen.slice(0, 3).map((r) => `${r.method} ${r.url}`), ["POST https://fake-host/message", "POST https://fake-host/batch", "GET https://fake-host/metrics"]);
  assert.equal(seen[0].headers["x-msg-fmt"], "text");
  assert.equal(seen[0].headers["x-msg-delay-secs"], "2");
  assert.equal(seen[0].body, "abc");
  assert.equal(seen[1].headers["cf-queue-batch-count"], "2");
  assert.equal(seen[1].headers["x-msg-delay-secs"], "1");
  assert.deepEqual(JSON.parse(seen[1].body), { messages: [{ body: "ZA==", contentType: "text" }, { body: btoa('{"j":1}'), contentType: "json" }] });
  const off = await runner(t, run, { Q: queue({ service: handler }) }, { compatibilityFlags: ["no_queue_expose_error_codes"] });
  assert.deepEqual(off.at(-1), ["Error", "Queue send failed: Service Unavailable"]);
});

test("analyticsEngine({ service }) POSTs each data point as workerd's event JSON", { timeout: 60000 }, async (t) => {
  let resolve;
  const got = new Promise((r) => (resolve = r));
  const out = await runner(t, `async (env) => {
    const returned = env.AE.writeDataPoint({ blobs: ["B"], doubles: [25], indexes: ["i"] }) ?? "returned";
    // The write is not waited for (as in workerd); the request stays a moment so it is sent.
    await scheduler.wait(200);
    return returned;
  }`, {
    AE: analyticsEngine({ dataset: "ds", service: async (request) => (resolve({ method: request.method, url: request.url, event: await request.json() }), new Response("")) }),
  });
  assert.equal(out, "returned");
  const { method, url, event } = await got;
  assert.equal(`${method} ${url}`, "POST https://fake-host/");
  assert.deepEqual([event.dataset, event.index1, event.blob1, event.double1, event.double2, event.schemaVersion, typeof event.timestamp], [[100, 115], [105], [66], 25, 0, "0", "string"]);
});

test("createWorker's cache: { service } is the Cache API over HTTP (GET only-if-cached, PUT, PURGE)", { timeout: 60000 }, async (t) => {
  const { seen, handler } = recorder((request) => {
    const { pathname } = new URL(request.url);
    if (request.method === "GET") return pathname === "/hit" ? new Response("cached", { headers: { "CF-Cache-Status": "HIT" } }) : new Response(null, { status: 504, headers: { "CF-Cache-Status": "MISS" } });
    if (request.method === "PURGE") return new Response(null, { status: pathname === "/there" ? 200 : 404 });
    return new Response(null, { status: 204 });
  });
  const out = await runner(
    t,
    `async () => {
      const c = caches.default;
      const hit = await c.match("https://e.com/hit");
      await c.put("https://e.com/p", new Response("body", { headers: { "cache-control": "max-age=60", "x-a": "1" } }));
      // What is not to be cached still goes: the cache service decides (as workerd sends it).
      await c.put("https://e.com/ns", new Response("x", { headers: { "cache-control": "no-store" } }));
      return [await hit.text(), hit.headers.get("cf-cache-status"), await c.match("https://e.com/miss") ?? "miss", await c.delete("https://e.com/there"), await c.delete("https://e.com/gone")];
    }`,
    {},
    { cache: { service: service(handler) } },
  );
  assert.deepEqual(out, ["cached", "HIT", "miss", true, false]);
  assert.deepEqual(seen.map((r) => `${r.method} ${r.url}`), ["GET https://e.com/hit", "PUT https://e.com/p", "PUT https://e.com/ns", "GET https://e.com/miss", "PURGE https://e.com/there", "PURGE https://e.com/gone"]);
  assert.equal(seen[0].headers["cache-control"], "only-if-cached");
  assert.match(seen[1].body, /^HTTP\/1\.1 200 OK\r\n(.*\r\n)*x-a: 1\r\n(.*\r\n)*\r\nbody$/);
  assert.match(seen[1].body, /\r\nContent-Length: 4\r\n/i);
  assert.match(seen[2].body, /^HTTP\/1\.1 200 OK\r\n(.*\r\n)*cache-control: no-store\r\n(.*\r\n)*\r\nx$/);
});

test("a service binding's response and the cache option are workerd's", { timeout: 60000 }, async (t) => {
  const backend = await createWorker({ script: `export default { fetch: (r) => r.headers.has("x-echo") ? Response.json(Object.fromEntries(r.headers)) : new Response(null, { status: 404 }) };`, format: "module" });
  t.after(() => backend.dispose());
  const run = `async (env, res) => {
    const r = await env.S.fetch("http://placeholder/nf#frag");
    const stream = new IdentityTransformStream(); const w = stream.writable.getWriter(); w.write(new Uint8Array([1])); w.close();
    const echoed = await (await env.S.fetch("http://p/", { method: "POST", body: stream.readable, headers: { "x-echo": "1" } })).json();
    return [r.url, r.type, await res(() => r.headers.set("a", "b")), echoed["transfer-encoding"] ?? null, "cache" in Request.prototype,
      await res(() => new Request("http://a", { cache: "reload" }).cache), await res(() => new Request("http://a", { cache: "no-cache" }).cache),
      await res(() => env.S.fetch("http://p/", { cache: "no-store", cf: { cacheTtl: 300 } }))];
  }`;
  const off = await runner(t, run, { S: backend }, { compatibilityFlags: ["cache_option_disabled"] });
  const notImplemented = ["Error", "The 'cache' field on 'RequestInitializerDict' is not implemented."];
  assert.deepEqual(off, ["http://placeholder/nf", "default", ["TypeError", "Can't modify immutable headers."], "chunked", false, notImplemented, notImplemented, notImplemented]);
  const on = await runner(t, run, { S: backend }, { compatibilityFlags: ["cache_option_enabled", "cache_no_cache_enabled"] });
  assert.deepEqual(on.slice(4), [true, ["TypeError", "Unsupported cache mode: reload"], "no-cache", ["TypeError", "CacheTtl: 300, is not compatible with cache: no-store header."]]);
  // Before capture_async_api_throws too, the cf conflict rejects (found when the request is sent).
  const early = await runner(t, `async (env) => { const p = env.S.fetch("http://p/", { cache: "no-store", cf: { cacheTtl: 0 } }); return p.then(() => "sent", (e) => ["rejected", e.message]); }`, { S: backend }, { compatibilityDate: "2024-01-01", compatibilityFlags: ["cache_option_enabled", "do_not_capture_async_api_throws"] });
  assert.deepEqual(early, ["rejected", "CacheTtl: 0, is not compatible with cache: no-store header."]);
});

test("a header value crosses from worker to worker as it was, to Node as its UTF-8 bytes; an empty body is readable with 0 bytes left", { timeout: 60000 }, async (t) => {
  const backend = await createWorker({ script: `export default { fetch: () => new Response("", { headers: { "x-m": "z🤓", "x-l": "b\\u00c3\\u00a5r" } }) };`, format: "module" });
  t.after(() => backend.dispose());
  const out = await runner(
    t,
    `async (env) => {
      const { inspect } = await import("node:util");
      const r = await env.S.fetch("http://p/");
      return [r.headers.get("x-m"), r.headers.get("x-l"), inspect(r.body).includes("[state]: 'readable'"), inspect(new Response("").body).includes("[length]: 0n"), await r.text()];
    }`,
    { S: backend },
    { compatibilityFlags: ["nodejs_compat"] },
  );
  // From worker to worker a header's text is kept (workerd's headers are UTF-8 both ways).
  assert.deepEqual(out, ["z🤓", "b\u00c3\u00a5r", true, true, ""]);
  // Node gets what an HTTP client gets from workerd: the bytes, one character each.
  const response = await dispatch(backend, { url: "http://p/" });
  assert.equal(response.headers.get("x-m"), Buffer.from("z🤓", "utf8").toString("latin1"));
});

test("kv({ service }).put() takes a stream already partly read (what is left of it is sent)", { timeout: 60000 }, async (t) => {
  const { seen, handler } = recorder(() => new Response(""));
  const out = await runner(
    t,
    `async (env) => {
      const rs = new ReadableStream({ type: "bytes", start(c) { c.enqueue(new TextEncoder().encode("hello")); c.enqueue(new TextEncoder().encode("world")); c.close(); } });
      const reader = rs.getReader({ mode: "byob" });
      await reader.read(new Uint8Array(5));
      reader.releaseLock();
      await env.KV.put("key", rs);
      return "put";
    }`,
    { KV: kv({ service: handler }) },
  );
  assert.equal(out, "put");
  assert.deepEqual([seen[0].method, seen[0].body], ["PUT", "world"]);
});
