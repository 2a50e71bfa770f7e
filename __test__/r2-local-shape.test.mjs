// The objects and answers of a bucket workerbox keeps (storage() in memory, with `dir`, with
// handlers; src/js/88_r2_store.js answering src/js/89_r2_http.js's R2Bucket): workerd's
// HeadResult/GetResult with own read-only properties, Checksums of ArrayBuffers, storage class,
// range, list()'s include, and R2's errors, compared with the same probe on Miniflare (workerd's
// R2 client talking to Miniflare's R2 server, what `wrangler dev` gives).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createWorker, dispatch, storage } from "../index.js";

const PROBE = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "r2", "shape-probe.js"), "utf8");
const COMPAT = "2025-01-01";

function tempDir(t) {
  const dir = mkdtempSync(path.join(tmpdir(), "wb-r2-shape-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A bucket of plain handlers over a Map (what storage({ get, put, delete, list }) is given). */
function handlerBucket() {
  const objects = new Map();
  let n = 0;
  return storage({
    get: (key) => objects.get(key) ?? null,
    put: (key, value, options) => {
      const object = { value: Buffer.from(value), ...options, uploaded: Date.now(), version: String(++n).padStart(32, "0") };
      objects.set(key, object);
      return object;
    },
    delete: (key) => void objects.delete(key),
    list: () => [...objects].map(([key, object]) => ({ key, ...object })),
  });
}

async function runProbe(t, bucket, script = PROBE) {
  const worker = await createWorker({ script, bindings: { BUCKET: bucket }, compatibilityDate: COMPAT });
  t.after(() => worker.dispose());
  const response = await dispatch(worker, "http://localhost/");
  return JSON.parse(await new Response(response.body).text());
}

/** A probe's answer without what differs between runs (versions' lengths, handler versions). */
function comparable(answer, drop = []) {
  const out = structuredClone(answer);
  const walk = (v) => {
    if (v === null || typeof v !== "object") return;
    if (!Array.isArray(v)) delete v.versionLength;
    for (const x of Object.values(v)) walk(x);
  };
  walk(out);
  for (const key of drop) delete out[key];
  return out;
}

test("a storage() bucket's objects are workerd's: classes, own properties, checksums, storage class, range", { timeout: 60_000 }, async (t) => {
  const out = await runProbe(t, storage());
  const order = ["ssecKeyMd5", "storageClass", "range", "customMetadata", "httpMetadata", "uploaded", "checksums", "httpEtag", "etag", "size", "version", "key"];
  for (const name of ["put", "head", "get", "failedMatch", "multipart"]) {
    assert.deepEqual(out[name].own, order, name);
    assert.deepEqual(out[name].keys, order, name);
    assert.equal(out[name].writable, false, name);
  }
  assert.equal(out.put.ctor, "HeadResult");
  assert.equal(out.get.ctor, "GetResult");
  assert.equal(out.get.tag, "[object GetResult]");
  assert.deepEqual(out.head.protoMethods, ["constructor", "writeHttpMetadata"]);
  assert.deepEqual(out.get.protoMethods, ["arrayBuffer", "blob", "body", "bodyUsed", "bytes", "constructor", "json", "text"]);
  // MD5 computed on put, SHA-256 as given (checked), both ArrayBuffers; toJSON() as hex.
  assert.deepEqual(out.put.checksums, {
    tag: "[object Checksums]",
    own: ["sha512", "sha384", "sha256", "sha1", "md5"],
    json: { md5: "5eb63bbbe01eeed093cb22bb8f5acdc3", sha256: "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9" },
    md5: "[object ArrayBuffer]",
    sha256: "[object ArrayBuffer]",
  });
  assert.deepEqual(out.get.checksums, out.put.checksums);
  assert.deepEqual(out.sha1, { md5: "5eb63bbbe01eeed093cb22bb8f5acdc3", sha1: "2aae6c35c94fcfb415dbe95f408b9ce91ee846ed" });
  assert.deepEqual(out.multipart.checksums.json, {});
  assert.equal(out.multipart.etag, "a675974b8fb9bfea1d5007ce26896811-1");
  assert.equal(out.put.storageClass, "Standard");
  assert.equal(out.storageClassIA, "InfrequentAccess");
  assert.equal(out.storageClassIAHead, "InfrequentAccess");
  assert.equal(out.put.uploaded, "[object Date]");
  assert.deepEqual(out.get.httpMetadata, { contentType: "text/plain", cacheExpiry: "Date:2023-11-14T22:13:20.000Z" });
  assert.deepEqual(out.writeHttpMetadata, [["content-type", "text/plain"], ["expires", "Tue, 14 Nov 2023 22:13:20 GMT"]]);
  assert.deepEqual(out.head.range, { offset: 0, length: 11 });
  assert.equal(out.put.range, undefined);
  assert.deepEqual(out.range_offLen, { range: { offset: 2, length: 3 }, text: "llo" });
  assert.deepEqual(out["rangeHeader_bytes=-4"], { range: { offset: 7, length: 4 }, text: "orld" });
  assert.deepEqual(out["rangeHeader_bytes=0-1,3-4"], { range: { offset: 0, length: 11 }, text: "hello world" });
  assert.deepEqual(out.range_past, { error: "Error: get: The requested range is not satisfiable (10039)" });
  assert.equal(out.ssec.ssecKeyMd5.length, 32);
});

test("a storage() bucket's conditions, lists and errors are R2's", { timeout: 60_000 }, async (t) => {
  const out = await runProbe(t, storage());
  // If-Match compares strongly (a weak etag fails it), If-None-Match weakly.
  assert.equal(out.weakMatch.ctor, "HeadResult");
  assert.equal(out.weakNoneMatch.ctor, "HeadResult");
  assert.equal(out.strongMatch, "GetResult");
  // uploadedBefore the very millisecond of the upload does not hold; uploadedAfter fails a missing object.
  assert.equal(out.uploadedBeforeSame, "HeadResult");
  assert.equal(out.uploadedAfterMissing, null);
  assert.equal(out.putIfAbsent, null);
  assert.equal(out.putIfAbsentNew, "new");
  assert.equal(out.putIfMatchMissing, null);
  assert.match(out.badSha.error, /^Error: put: The SHA-256 checksum you specified did not match what we received\.\nYou provided a SHA-256 checksum with value: 0{64}\nActual SHA-256 was: b94d27b9\w+ \(10037\)$/);
  assert.equal(out.longKey.error, "Error: put: The specified object name is not valid. (10020)");
  assert.equal(out.bigMeta.error, "Error: put: Your metadata headers exceed the maximum allowed metadata size. (10012)");
  assert.equal(out.listLimit0.error, "Error: list: MaxKeys params must be positive integer <= 1000. (10022)");
  assert.equal(out.unsizedStream.error, "TypeError: Provided readable stream must have a known length (request/response body or readable half of FixedLengthStream)");
  assert.equal(out.sizedStream, 2);
  // list(): metadata only as `include` asks.
  assert.deepEqual(out.listIncludeHttp[0], ["a/1.txt", { contentType: "text/plain", cacheExpiry: "Date:2023-11-14T22:13:20.000Z" }, {}]);
  assert.deepEqual(out.listInclude[0], ["a/1.txt", { contentType: "text/plain", cacheExpiry: "Date:2023-11-14T22:13:20.000Z" }, { x: "1" }, null]);
  assert.deepEqual(out.list.first.httpMetadata, {});
  assert.deepEqual(out.list.keys, ["objects", "truncated", "delimitedPrefixes"]);
  assert.deepEqual(out.listDelimiter, { names: ["b", "ia", "new", "z", "z1"], delimitedPrefixes: ["a/"], truncated: false });
  assert.deepEqual(out.listLimit, { names: ["a/1.txt", "a/2.txt"], truncated: true, cursorType: "string" });
  assert.deepEqual(out.listCursor, { names: ["a/sub/3", "b"], truncated: true });
});

test("storage() in memory, with dir and with handlers answer the probe alike", { timeout: 60_000 }, async (t) => {
  const memory = comparable(await runProbe(t, storage()));
  const dir = comparable(await runProbe(t, storage({ dir: tempDir(t) })));
  assert.deepEqual(dir, memory);
  // A bucket of plain handlers has no multipart uploads (it says so); all else is the same.
  const handlers = comparable(await runProbe(t, handlerBucket()), ["multipart", "multipartHead", "afterDelete"]);
  assert.match((await runProbe(t, handlerBucket())).multipart.error, /multipart/);
  assert.deepEqual(handlers, comparable(memory, ["multipart", "multipartHead", "afterDelete"]));
});

test("storage({ dir }) keeps checksums, storage class (a multipart upload's too) and SSE-C key MD5 for the next worker", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const write = `export default { async fetch(request, env) {
    await env.BUCKET.put("k", "hello world", { sha512: await crypto.subtle.digest("SHA-512", new TextEncoder().encode("hello world")), storageClass: "InfrequentAccess", ssecKey: new Uint8Array(32).fill(7) });
    const upload = await env.BUCKET.createMultipartUpload("mp", { storageClass: "InfrequentAccess" });
    await upload.complete([await upload.uploadPart(1, "only part")]);
    return new Response("ok");
  } }`;
  const read = `export default { async fetch(request, env) {
    const o = await env.BUCKET.get("k");
    return Response.json({ checksums: o.checksums, storageClass: o.storageClass, ssecKeyMd5: o.ssecKeyMd5, text: await o.text(), multipart: (await env.BUCKET.head("mp")).storageClass });
  } }`;
  await runProbe(t, storage({ dir }), write.replace('new Response("ok")', 'Response.json("ok")'));
  const got = await runProbe(t, storage({ dir }), read);
  assert.equal(got.storageClass, "InfrequentAccess");
  assert.equal(got.multipart, "InfrequentAccess");
  assert.equal(got.text, "hello world");
  assert.deepEqual(Object.keys(got.checksums), ["md5", "sha512"]);
  assert.match(got.checksums.sha512, /^309ecc489c12d6eb4cc40f50c902f2b4d0ed77ee511a7c7a9bcd3ca86d4cd86f/);
  assert.match(got.ssecKeyMd5, /^[0-9a-f]{32}$/);
});

test("Node's bucket() sees the same objects", { timeout: 60_000 }, async (t) => {
  const FILES = storage();
  const bucket = FILES.bucket();
  const put = await bucket.put("n", "node side", { httpMetadata: { contentType: "text/plain" }, storageClass: "InfrequentAccess" });
  assert.equal(put.storageClass, "InfrequentAccess");
  const got = await bucket.get("n", { range: { offset: 5 } });
  assert.deepEqual(got.range, { offset: 5, length: 4 });
  assert.equal(await got.text(), "side");
  await assert.rejects(bucket.get("n", { range: { offset: 50 } }), { message: "get: The requested range is not satisfiable (10039)" });
  const head = await bucket.head("n");
  assert.deepEqual(head.httpMetadata, { contentType: "text/plain" });
  assert.ok(head.checksums.md5 instanceof ArrayBuffer);
  assert.deepEqual(head.checksums.toJSON(), { md5: "4bf92e48668ef30c30abbd415ea559b2" });
});

const noWorkerd = process.platform === "linux" && !process.report.getReport().header.glibcVersionRuntime ? "workerd (Miniflare) needs glibc" : false;
if (noWorkerd) console.log(`# skipping the Miniflare comparison: ${noWorkerd}`);

test("storage() answers the probe as Miniflare (workerd's R2 client and Miniflare's R2 server) does", { skip: noWorkerd, timeout: 120_000 }, async (t) => {
  const { Miniflare } = await import("miniflare");
  const mf = new Miniflare({ modules: true, script: PROBE, r2Buckets: ["BUCKET"], compatibilityDate: COMPAT });
  t.after(() => mf.dispose());
  const theirs = comparable(await (await mf.dispatchFetch("http://localhost/")).json());
  const ours = comparable(await runProbe(t, storage()));
  // Deliberate differences: R2 gives "Standard" (or the class put() was given) where Miniflare's
  // server sends no storage class (workerd shows ""), and keeps an SSE-C key's MD5 it ignores.
  const walk = (v) => {
    if (v === null || typeof v !== "object") return;
    if (v.storageClass !== undefined) v.storageClass = "<class>";
    for (const x of Object.values(v)) walk(x);
  };
  walk(theirs);
  walk(ours);
  for (const key of ["storageClassIA", "storageClassIAHead", "ssec"]) {
    delete theirs[key];
    delete ours[key];
  }
  assert.deepEqual(ours, theirs);
});

test("wrangler's shared state: SHA checksums put on one side are the other's", { skip: noWorkerd, timeout: 120_000 }, async (t) => {
  const { Miniflare } = await import("miniflare");
  const require = (await import("node:module")).createRequire(import.meta.url);
  const { wranglerR2 } = require("../lib/project/wrangler-r2.js");
  const v3 = path.join(tempDir(t), ".wrangler", "state", "v3");
  const SHA1_HELLO = "2aae6c35c94fcfb415dbe95f408b9ce91ee846ed";
  const SHA256_HELLO = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";
  const script = (put, read) => `export default { async fetch(request, env) {
    await env.R2.put(${JSON.stringify(put.key)}, "hello world", ${JSON.stringify(put.options)});
    const o = await env.R2.head(${JSON.stringify(read)});
    return Response.json(o && { checksums: o.checksums, etag: o.etag, size: o.size });
  } }`;
  const ours = await createWorker({ script: script({ key: "wb", options: { sha256: SHA256_HELLO } }, "wb"), bindings: { R2: wranglerR2(storage, v3, "bucket1") }, compatibilityDate: COMPAT });
  t.after(() => ours.dispose());
  assert.deepEqual(await (await dispatch(ours, "http://localhost/")).json(), { checksums: { md5: "5eb63bbbe01eeed093cb22bb8f5acdc3", sha256: SHA256_HELLO }, etag: "5eb63bbbe01eeed093cb22bb8f5acdc3", size: 11 });
  const mf = new Miniflare({ modules: true, script: script({ key: "mf", options: { sha1: SHA1_HELLO } }, "wb"), r2Buckets: { R2: "bucket1" }, defaultPersistRoot: v3, compatibilityDate: COMPAT });
  t.after(() => mf.dispose());
  // Miniflare reads the SHA-256 workerbox put…
  assert.deepEqual(await (await mf.dispatchFetch("http://localhost/")).json(), { checksums: { md5: "5eb63bbbe01eeed093cb22bb8f5acdc3", sha256: SHA256_HELLO }, etag: "5eb63bbbe01eeed093cb22bb8f5acdc3", size: 11 });
  // …and workerbox the SHA-1 Miniflare put.
  const reader = await createWorker({ script: `export default { async fetch(request, env) { const o = await env.R2.get("mf"); return Response.json({ checksums: o.checksums, text: await o.text() }); } }`, bindings: { R2: wranglerR2(storage, v3, "bucket1") }, compatibilityDate: COMPAT });
  t.after(() => reader.dispose());
  assert.deepEqual(await (await dispatch(reader, "http://localhost/")).json(), { checksums: { md5: "5eb63bbbe01eeed093cb22bb8f5acdc3", sha1: SHA1_HELLO }, text: "hello world" });
});
