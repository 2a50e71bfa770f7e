// R2 multipart uploads (src/runtime/store/multipart.rs, src/js/85_r2_multipart.js,
// lib/r2-multipart.js, lib/store-client.js, lib/project/wrangler-r2.js): createMultipartUpload()
// and resumeMultipartUpload() on a worker's env.BUCKET and on Node's storage().bucket(), in
// memory and in a folder; the completed object (R2's multipart etag, size, metadata, ranged
// reads across part boundaries); R2's errors; and uploads shared with Miniflare's layout, started
// in one tool and completed in the other.
import { test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createWorker, dispatch, storage } from "workerbox";

const require = (await import("node:module")).createRequire(import.meta.url);
const { wranglerR2 } = require("../lib/project/wrangler-r2.js");

const MIB = 1024 * 1024;
const md5 = (bytes) => crypto.createHash("md5").update(bytes).digest();
/** R2's etag of a multipart object made of `parts` (byte arrays). */
const multipartEtag = (parts) => `${crypto.createHash("md5").update(Buffer.concat(parts.map(md5))).digest("hex")}-${parts.length}`;

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-r2-multipart-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function worker(t, script, bindings) {
  const made = await createWorker({ script, bindings, onLog() {} });
  t.after(() => made.dispose());
  return made;
}

// A worker that uploads a 5 MiB part and a 3-byte one, completes, and reads the object back.
const UPLOAD_WORKER = `export default {
  async fetch(request, env) {
    const upload = await env.BUCKET.createMultipartUpload("big.bin", {
      httpMetadata: { contentType: "application/x-parts", cacheControl: "no-store" },
      customMetadata: { by: "worker", n: 2 },
    });
    const started = Date.now();
    const first = await upload.uploadPart(1, new Uint8Array(5 * 1024 * 1024).fill(7));
    const second = await upload.uploadPart(2, new Uint8Array([1, 2, 3]));
    const uploadMs = Date.now() - started;
    const object = await upload.complete([first, second]);
    const across = await env.BUCKET.get("big.bin", { range: { offset: 5 * 1024 * 1024 - 2, length: 4 } });
    const suffix = await env.BUCKET.get("big.bin", { range: { suffix: 4 } });
    const head = await env.BUCKET.head("big.bin");
    return Response.json({
      own: Object.keys(upload), tag: Object.prototype.toString.call(upload), key: upload.key, uploadId: upload.uploadId,
      first, second, uploadMs,
      object: { key: object.key, size: object.size, etag: object.etag, httpEtag: object.httpEtag, httpMetadata: object.httpMetadata, customMetadata: object.customMetadata, checksums: object.checksums },
      head: { size: head.size, etag: head.etag, version: head.version === object.version },
      across: [...new Uint8Array(await across.arrayBuffer())], range: across.range,
      suffix: [...new Uint8Array(await suffix.arrayBuffer())],
      listed: (await env.BUCKET.list()).objects.map((o) => [o.key, o.size, o.etag]),
    });
  },
};`;

for (const persisted of [false, true]) {
  test(`worker-side: a 5 MiB part and a last small one make one object (${persisted ? "storage({ dir })" : "in memory"})`, { timeout: 60_000 }, async (t) => {
    const BUCKET = persisted ? storage({ dir: tempDir(t) }) : storage();
    const started = Date.now();
    const answer = await (await dispatch(await worker(t, UPLOAD_WORKER, { BUCKET }), "http://localhost/")).json();
    const elapsedMs = Date.now() - started;
    const parts = [new Uint8Array(5 * MIB).fill(7), new Uint8Array([1, 2, 3])];
    // As workerd lists them (and Miniflare shows): uploadId, then key.
    assert.deepEqual(answer.own, ["uploadId", "key"]);
    assert.equal(answer.tag, "[object R2MultipartUpload]");
    assert.equal(answer.key, "big.bin");
    assert.match(answer.uploadId, /^[0-9a-f]{64}$/);
    assert.equal(answer.first.partNumber, 1);
    assert.equal(answer.second.partNumber, 2);
    assert.equal(typeof answer.first.etag, "string");
    assert.notEqual(answer.first.etag, answer.second.etag);
    assert.deepEqual(answer.object, {
      key: "big.bin",
      size: 5 * MIB + 3,
      etag: multipartEtag(parts),
      httpEtag: `"${multipartEtag(parts)}"`,
      httpMetadata: { contentType: "application/x-parts", cacheControl: "no-store" },
      customMetadata: { by: "worker", n: "2" },
      checksums: {},
    });
    assert.deepEqual(answer.head, { size: 5 * MIB + 3, etag: multipartEtag(parts), version: true });
    assert.deepEqual(answer.across, [7, 7, 1, 2], "a range across the parts' boundary");
    assert.deepEqual(answer.range, { offset: 5 * MIB - 2, length: 4 });
    assert.deepEqual(answer.suffix, [7, 1, 2, 3]);
    assert.deepEqual(answer.listed, [["big.bin", 5 * MIB + 3, multipartEtag(parts)]]);
    // Bounded: two parts (5 MiB + 3 bytes) stored, joined and read back well within seconds.
    assert.ok(answer.uploadMs < 10_000, `uploading the parts took ${answer.uploadMs} ms`);
    assert.ok(elapsedMs < 30_000, `the whole request took ${elapsedMs} ms`);
    console.log(`# ${persisted ? "dir" : "memory"}: parts uploaded in ${answer.uploadMs} ms, request ${elapsedMs} ms`);
  });
}

test("persisted: an upload started by one worker is resumed and completed by the next, from another binding on the folder", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const first = await createWorker({
    script: `export default { async fetch(request, env) {
      const upload = await env.BUCKET.createMultipartUpload("resumed", { customMetadata: { from: "first" } });
      const part = await upload.uploadPart(1, "only part");
      return Response.json({ uploadId: upload.uploadId, part });
    } };`,
    bindings: { BUCKET: storage({ dir }) },
  });
  const { uploadId, part } = await (await dispatch(first, "http://localhost/")).json();
  await first.dispose();
  const second = await worker(t, `export default { async fetch(request, env) {
      const { uploadId, part } = JSON.parse(new URL(request.url).searchParams.get("upload"));
      const upload = env.BUCKET.resumeMultipartUpload("resumed", uploadId);
      const object = await upload.complete([part]);
      return Response.json({ key: upload.key, size: object.size, etag: object.etag, custom: object.customMetadata, text: await (await env.BUCKET.get("resumed")).text() });
    } };`, { BUCKET: storage({ dir }) });
  const answer = await (await dispatch(second, `http://localhost/?upload=${encodeURIComponent(JSON.stringify({ uploadId, part }))}`)).json();
  assert.deepEqual(answer, { key: "resumed", size: 9, etag: multipartEtag([Buffer.from("only part")]), custom: { from: "first" }, text: "only part" });
});

for (const persisted of [false, true]) {
  test(`Node-side bucket(): create, upload, complete; a worker reads the object (${persisted ? "storage({ dir })" : "in memory"})`, { timeout: 60_000 }, async (t) => {
    const BUCKET = persisted ? storage({ dir: tempDir(t) }) : storage();
    const bucket = BUCKET.bucket();
    const upload = await bucket.createMultipartUpload("from-node", { httpMetadata: { contentType: "text/plain" }, customMetadata: { side: "node" } });
    assert.deepEqual(Object.keys(upload), ["key", "uploadId"]);
    const parts = [Buffer.alloc(5 * MIB, "a"), Buffer.from("bc")];
    const one = await upload.uploadPart(1, parts[0]);
    const two = await bucket.resumeMultipartUpload("from-node", upload.uploadId).uploadPart(2, new Blob([parts[1]]));
    assert.deepEqual(Object.keys(one), ["partNumber", "etag"]);
    const object = await upload.complete([one, two]);
    assert.equal(object.size, 5 * MIB + 2);
    assert.equal(object.etag, multipartEtag(parts));
    assert.deepEqual(object.customMetadata, { side: "node" });
    const read = await worker(t, `export default { async fetch(request, env) {
      const o = await env.BUCKET.get("from-node", { range: { offset: 5 * 1024 * 1024 - 1 } });
      return Response.json({ text: await o.text(), type: o.httpMetadata.contentType, etag: o.etag });
    } };`, { BUCKET });
    assert.deepEqual(await (await dispatch(read, "http://localhost/")).json(), { text: "abc", type: "text/plain", etag: multipartEtag(parts) });
    // Aborting a finished upload is allowed and changes nothing.
    await upload.abort();
    assert.equal((await bucket.head("from-node")).size, 5 * MIB + 2);
  });
}

// Each error case, run in a worker so the errors are the worker's own (class and message). The
// same worker under Miniflare (workerd) gives the same answers, except for an upload id that
// never existed: Miniflare's complete() and abort() answer "We encountered an internal error"
// (10001) there, where workerbox answers R2's NoSuchUpload (10024), as uploadPart() does.
const ERRORS_WORKER = `
const MIB = 1024 * 1024;
async function error(promise) {
  try { await promise; return "resolved"; } catch (e) { return e.constructor.name + ": " + e.message; }
}
export default {
  async fetch(request, env) {
    const B = env.BUCKET;
    const out = {};
    out.unknownPart = await error(B.resumeMultipartUpload("k", "no-such-upload").uploadPart(1, "x"));
    out.unknownComplete = await error(B.resumeMultipartUpload("k", "no-such-upload").complete([]));
    out.unknownAbort = await error(B.resumeMultipartUpload("k", "no-such-upload").abort());

    const aborted = await B.createMultipartUpload("k");
    await aborted.uploadPart(1, "x");
    out.abort = String(await aborted.abort());
    out.abortAgain = await error(aborted.abort());
    out.abortedPart = await error(aborted.uploadPart(2, "x"));
    out.abortedComplete = await error(aborted.complete([]));

    const done = await B.createMultipartUpload("k");
    const only = await done.uploadPart(1, "x");
    await done.complete([only]);
    out.completedPart = await error(done.uploadPart(2, "x"));
    out.completedComplete = await error(done.complete([only]));
    out.wrongKey = await error(B.resumeMultipartUpload("other", done.uploadId).uploadPart(1, "x"));

    const up = await B.createMultipartUpload("k2");
    out.partZero = await error(up.uploadPart(0, "x"));
    out.partTooBig = await error(up.uploadPart(10001, "x"));
    out.completePartZero = await error(up.complete([{ partNumber: 0, etag: "e" }]));
    out.partNaN = await error(up.uploadPart(NaN, "x"));
    out.badValue = await error(up.uploadPart(1, 42));
    out.noValue = await error(up.uploadPart(1));
    const small1 = await up.uploadPart(1, "small");
    const small2 = await up.uploadPart(2, "small");
    out.tooSmall = await error(up.complete([small1, small2]));
    out.badEtag = await error(up.complete([{ partNumber: 1, etag: small1.etag + "x" }]));
    out.missingPart = await error(up.complete([{ partNumber: 3, etag: small1.etag }]));
    out.noEtag = await error(up.complete([{ partNumber: 1 }]));
    out.duplicate = await error(up.complete([small1, small1]));
    const big1 = await up.uploadPart(1, new Uint8Array(5 * MIB));
    const big2 = await up.uploadPart(2, new Uint8Array(5 * MIB + 1));
    const last = await up.uploadPart(3, "last");
    out.unequalSizes = await error(up.complete([big1, big2, last]));
    out.outOfOrder = await error(up.complete([big2, big1]));
    const fine = await up.complete([big1, last]);
    out.completedFromOneAndThree = fine.size;
    out.partsDropped = await error(up.uploadPart(2, "x"));
    out.noParts = await error(B.createMultipartUpload("k3").then((u) => u.complete()));
    out.noKey = await error(B.createMultipartUpload());
    out.noUploadId = await error((async () => B.resumeMultipartUpload("k"))());
    return Response.json(out);
  },
};`;

const NO_SUCH_UPLOAD = "The specified multipart upload does not exist. (10024)";

for (const persisted of [false, true]) {
  test(`R2's errors, with R2's messages and codes (${persisted ? "storage({ dir })" : "in memory"})`, { timeout: 60_000 }, async (t) => {
    const BUCKET = persisted ? storage({ dir: tempDir(t) }) : storage();
    const out = await (await dispatch(await worker(t, ERRORS_WORKER, { BUCKET }), "http://localhost/")).json();
    assert.deepEqual(out, {
      unknownPart: `Error: uploadPart: ${NO_SUCH_UPLOAD}`,
      unknownComplete: `Error: completeMultipartUpload: ${NO_SUCH_UPLOAD}`,
      unknownAbort: `Error: abortMultipartUpload: ${NO_SUCH_UPLOAD}`,
      abort: "undefined",
      abortAgain: "resolved",
      abortedPart: `Error: uploadPart: ${NO_SUCH_UPLOAD}`,
      abortedComplete: `Error: completeMultipartUpload: ${NO_SUCH_UPLOAD}`,
      completedPart: `Error: uploadPart: ${NO_SUCH_UPLOAD}`,
      completedComplete: `Error: completeMultipartUpload: ${NO_SUCH_UPLOAD}`,
      wrongKey: `Error: uploadPart: ${NO_SUCH_UPLOAD}`,
      partZero: "TypeError: Part number must be between 1 and 10000 (inclusive). Actual value was: 0",
      partTooBig: "TypeError: Part number must be between 1 and 10000 (inclusive). Actual value was: 10001",
      completePartZero: "TypeError: Part number must be between 1 and 10000 (inclusive). Actual value was: 0",
      partNaN: "TypeError: Part number must be between 1 and 10000 (inclusive). Actual value was: 0",
      badValue: "TypeError: Failed to execute 'uploadPart' on 'R2MultipartUpload': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.",
      noValue: "TypeError: Failed to execute 'uploadPart' on 'R2MultipartUpload': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.",
      tooSmall: "Error: completeMultipartUpload: Your proposed upload is smaller than the minimum allowed object size. (10011)",
      badEtag: "Error: completeMultipartUpload: One or more of the specified parts could not be found. (10025)",
      missingPart: "Error: completeMultipartUpload: One or more of the specified parts could not be found. (10025)",
      noEtag: "Error: completeMultipartUpload: One or more of the specified parts could not be found. (10025)",
      duplicate: "Error: completeMultipartUpload: We encountered an internal error. Please try again. (10001)",
      unequalSizes: "Error: completeMultipartUpload: There was a problem with the multipart upload. (10048)",
      outOfOrder: "Error: completeMultipartUpload: There was a problem with the multipart upload. (10048)",
      completedFromOneAndThree: 5 * MIB + 4,
      partsDropped: `Error: uploadPart: ${NO_SUCH_UPLOAD}`,
      noParts: "TypeError: Failed to execute 'complete' on 'R2MultipartUpload': parameter 1 is not of type 'Array'.",
      noKey: "TypeError: Failed to execute 'createMultipartUpload' on 'R2Bucket': parameter 1 is not of type 'string'.",
      noUploadId: "TypeError: Failed to execute 'resumeMultipartUpload' on 'R2Bucket': parameter 2 is not of type 'string'.",
    });
  });
}

test("Node-side bucket() rejects with the worker's errors", async (t) => {
  const bucket = storage().bucket();
  await assert.rejects(bucket.resumeMultipartUpload("k", "nope").uploadPart(1, "x"), { name: "Error", message: `uploadPart: ${NO_SUCH_UPLOAD}` });
  const upload = await bucket.createMultipartUpload("k");
  await assert.rejects(upload.uploadPart(0, "x"), { name: "TypeError", message: /Part number must be between 1 and 10000/ });
  await assert.rejects(upload.complete([{ partNumber: 1, etag: "nope" }]), { message: /\(10025\)$/ });
});

test("a bucket of your own get/put/delete/list handlers says it cannot take multipart uploads", async (t) => {
  const objects = new Map();
  const BUCKET = storage({
    get: (key) => objects.get(key) ?? null,
    put: (key, value, options) => void objects.set(key, { value, ...options }),
    delete: (key) => void objects.delete(key),
    list: () => [...objects].map(([key, o]) => ({ key, ...o })),
  });
  await assert.rejects(BUCKET.bucket().createMultipartUpload("k"), { message: /R2 createMultipartUpload: this bucket is a storage\(\{ get, put, delete, list \}\) of your handlers/ });
});

// wrangler's shared state: Miniflare's own tables and blobs, so uploads cross over.
const noWorkerd = process.platform === "linux" && !process.report.getReport().header.glibcVersionRuntime ? "workerd (Miniflare) needs glibc" : false;
if (noWorkerd) console.log(`# skipping the Miniflare round trips: ${noWorkerd}`);

test("wrangler's shared state: an upload started in workerbox completes in Miniflare, and the other way round", { skip: noWorkerd, timeout: 120_000 }, async (t) => {
  const { Miniflare } = await import("miniflare");
  const v3 = path.join(tempDir(t), ".wrangler", "state", "v3");
  const bucket = wranglerR2(storage, v3, "bucket1").bucket();
  const mf = new Miniflare({ modules: true, script: "export default { fetch() { return new Response(null, { status: 404 }) } }", r2Buckets: { R2: "bucket1" }, defaultPersistRoot: v3 });
  t.after(() => mf.dispose());
  const theirs = await mf.getR2Bucket("R2");

  // workerbox starts (one 5 MiB part), Miniflare adds the last part and completes.
  // (Miniflare's proxy takes views of whole ArrayBuffers only.)
  const parts = [new Uint8Array(5 * MIB).fill(1), new Uint8Array([2, 3])];
  const ours = await bucket.createMultipartUpload("wb-first", { httpMetadata: { contentType: "x/wb" }, customMetadata: { started: "workerbox" } });
  const one = await ours.uploadPart(1, parts[0]);
  const resumed = theirs.resumeMultipartUpload("wb-first", ours.uploadId);
  const two = await resumed.uploadPart(2, parts[1]);
  const completed = await resumed.complete([one, two]);
  assert.equal(completed.etag, multipartEtag(parts));
  const back = await bucket.get("wb-first", { range: { offset: 5 * MIB - 1 } });
  assert.deepEqual([...new Uint8Array(await back.arrayBuffer())], [1, 2, 3]);
  assert.equal(back.etag, multipartEtag(parts));
  assert.equal(back.httpMetadata.contentType, "x/wb");
  assert.deepEqual(back.customMetadata, { started: "workerbox" });

  // Miniflare starts, workerbox adds a part, completes, and Miniflare reads the object.
  const started = await theirs.createMultipartUpload("mf-first", { customMetadata: { started: "miniflare" } });
  const first = await started.uploadPart(1, parts[0]);
  const mine = bucket.resumeMultipartUpload("mf-first", started.uploadId);
  const second = await mine.uploadPart(2, parts[1]);
  const object = await mine.complete([first, second]);
  assert.equal(object.etag, multipartEtag(parts));
  const seen = await theirs.get("mf-first");
  assert.equal(seen.etag, multipartEtag(parts));
  assert.equal(seen.size, 5 * MIB + 2);
  assert.deepEqual(seen.customMetadata, { started: "miniflare" });
  assert.deepEqual([...new Uint8Array(await seen.arrayBuffer()).subarray(5 * MIB - 1)], [1, 2, 3]);

  // One side's errors are the other's: an upload Miniflare aborted is gone for workerbox too.
  const dropped = await theirs.createMultipartUpload("dropped");
  await dropped.abort();
  await assert.rejects(bucket.resumeMultipartUpload("dropped", dropped.uploadId).uploadPart(1, "x"), { message: `uploadPart: ${NO_SUCH_UPLOAD}` });
  // Replacing a multipart object with a plain put frees its part blobs.
  const blobs = path.join(v3, "r2", "bucket1", "blobs");
  const before = fs.readdirSync(blobs).length;
  await bucket.put("mf-first", "plain now");
  assert.equal(await (await theirs.get("mf-first")).text(), "plain now");
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(fs.readdirSync(blobs).length, before - 1, "two part blobs freed, one body blob added");
});
