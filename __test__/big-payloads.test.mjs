// Big but legitimate payloads at the default limits (memoryMb 128): request bodies (production
// accepts up to 100 MB), fetch() responses, and KV values (production's limit is 25 MiB) read
// whole with arrayBuffer() and hashed. A body's bytes count once against memoryMb, not once per
// copy (docs/security.md, "What memoryMb covers"). bench/limits.mjs runs the same script on
// workerd for comparison and reports times and memory; these tests assert outcomes only.
import { test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import http from "node:http";
import { kv } from "../index.js";
import { useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const MB = 1048576;
const SCRIPT = `export default { async fetch(req, env) {
  const u = new URL(req.url);
  let buf;
  if (u.pathname === "/body") buf = await req.arrayBuffer();
  else if (u.pathname === "/fetch") buf = await (await fetch(u.searchParams.get("from"))).arrayBuffer();
  else buf = await env.KV.get(u.searchParams.get("key"), "arrayBuffer");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buf));
  return new Response(buf.byteLength + " " + [...digest].map((b) => b.toString(16).padStart(2, "0")).join(""));
} }`;

const payloads = new Map();
function payload(mb) {
  if (!payloads.has(mb)) {
    const bytes = Buffer.alloc(mb * MB);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) & 255;
    payloads.set(mb, { bytes, expected: `${bytes.length} ${crypto.createHash("sha256").update(bytes).digest("hex")}` });
  }
  return payloads.get(mb);
}

test("request bodies of 10, 50 and 95 MB are read whole and hashed at the default memory limit", { timeout: scaled(120_000) }, async (t) => {
  const worker = await useWorker(t, { script: SCRIPT, onLog() {} });
  for (const mb of [10, 50, 95]) {
    const { bytes, expected } = payload(mb);
    // As a Request (the body streamed in), as { url, body } (handed over whole), and with a
    // Content-Length (read into one buffer as it comes).
    const inputs = [
      new Request("http://localhost/body", { method: "POST", body: bytes }),
      { url: "http://localhost/body", method: "POST", body: bytes },
      new Request("http://localhost/body", { method: "POST", body: bytes, headers: { "content-length": String(bytes.length) } }),
    ];
    for (const input of inputs) {
      assert.equal(await (await worker.dispatch(input)).text(), expected, `${mb} MB`);
    }
  }
});

test("fetch() responses of 10, 50 and 95 MB are read whole and hashed at the default memory limit", { timeout: scaled(120_000) }, async (t) => {
  const server = http.createServer((req, res) => {
    const { bytes } = payload(Number(req.url.slice(1)));
    res.writeHead(200, { "content-length": bytes.length });
    res.end(bytes);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const worker = await useWorker(t, { script: SCRIPT, onLog() {} });
  for (const mb of [10, 50, 95]) {
    const from = `http://127.0.0.1:${server.address().port}/${mb}`;
    assert.equal(await (await worker.dispatch(`http://localhost/fetch?from=${encodeURIComponent(from)}`)).text(), payload(mb).expected, `${mb} MB`);
  }
});

test("KV values up to 25 MiB (and 95 MB from a handler-backed namespace) are read whole and hashed at the default memory limit", { timeout: scaled(120_000) }, async (t) => {
  const namespace = kv();
  await namespace.namespace().put("ten", payload(10).bytes);
  await namespace.namespace().put("max", payload(25).bytes);
  const handlerBacked = kv({ get: async (key) => payload(Number(key)).bytes, put() {}, delete() {}, list: () => ({ keys: [], list_complete: true }) });
  const worker = await useWorker(t, { script: SCRIPT, bindings: { KV: namespace }, onLog() {} });
  assert.equal(await (await worker.dispatch("http://localhost/kv?key=ten")).text(), payload(10).expected);
  assert.equal(await (await worker.dispatch("http://localhost/kv?key=max")).text(), payload(25).expected);
  const big = await useWorker(t, { script: SCRIPT, bindings: { KV: handlerBacked }, onLog() {} });
  for (const mb of [50, 95]) assert.equal(await (await big.dispatch(`http://localhost/kv?key=${mb}`)).text(), payload(mb).expected, `${mb} MB`);
});

test("a body handed out without a copy is still the reader's own: clones, user bodies and KV values do not share bytes", async (t) => {
  const worker = await useWorker(t, {
    onLog() {},
    bindings: { KV: kv() },
    script: `export default { async fetch(req, env) {
      const copy = req.clone();
      const a = new Uint8Array(await req.arrayBuffer());
      a[0] = 255;
      const b = new Uint8Array(await copy.arrayBuffer());
      const mine = new Uint8Array([1, 2, 3]);
      const response = new Response(mine);
      const c = new Uint8Array(await response.arrayBuffer());
      c[0] = 9;
      await env.KV.put("k", new Uint8Array([5, 6]));
      const d = new Uint8Array(await env.KV.get("k", "arrayBuffer"));
      d[0] = 0;
      const e = new Uint8Array(await env.KV.get("k", "arrayBuffer"));
      return Response.json({ a: [...a], b: [...b], mine: [...mine], c: [...c], e: [...e] });
    } }`,
  });
  const body = Buffer.alloc(200_000, 1);
  const result = await (await worker.dispatch(new Request("http://localhost/", { method: "POST", body }))).json();
  assert.equal(result.a.length, 200_000);
  assert.equal(result.a[0], 255);
  assert.equal(result.b[0], 1, "the clone's bytes are its own");
  assert.deepEqual(result.mine, [1, 2, 3]);
  assert.deepEqual(result.c, [9, 2, 3]);
  assert.deepEqual(result.e, [5, 6]);
});
