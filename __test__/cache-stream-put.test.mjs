// Cache.put() of a response whose body is a stream (an R2 object's body, a clone's branch, a
// ReadableStream) stores the whole body, as workerd's cache does: match() gives it back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, storage } from "../index.js";

test("cache.put() stores a streamed body whole (R2 body, clone branch, ReadableStream)", async () => {
  const worker = await createWorker({
    format: "module",
    compatibilityDate: "2026-01-01",
    bindings: { B: storage() },
    onLog() {},
    script: `
export default { async fetch(req, env) {
  const url = new URL(req.url);
  if (req.method === "PUT") { await env.B.put("k", req.body); return new Response(null, { status: 204 }); }
  const src = url.searchParams.get("src");
  const body = src === "r2" ? (await env.B.get("k")).body : new Response("value").body;
  const response = new Response(body, { headers: { "cache-control": "max-age=3600" } });
  const key = new Request("http://x/" + src + url.searchParams.has("clone"));
  if (url.searchParams.has("clone")) await caches.default.put(key, response.clone()); else await caches.default.put(key, response);
  const hit = await caches.default.match(key);
  return Response.json({ hit: hit ? await hit.text() : null, rest: url.searchParams.has("clone") ? await response.text() : null });
} };`,
  });
  try {
    await dispatch(worker, { url: "http://x/", method: "PUT", body: "value" });
    for (const query of ["src=r2", "src=r2&clone", "src=stream", "src=stream&clone"]) {
      const clone = query.endsWith("clone");
      assert.deepEqual(await (await dispatch(worker, `http://x/?${query}`)).json(), { hit: "value", rest: clone ? "value" : null }, query);
    }
  } finally {
    await worker.dispose();
  }
});
