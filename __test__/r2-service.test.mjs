// An R2 bucket whose backing is a service (`storage({ service, bucket })`, workerd's `r2Bucket`
// naming a service, src/js/89_r2_http.js): the requests the service gets in R2's binding
// protocol (GET with CF-R2-Request; PUT whose body is CF-R2-Metadata-Size bytes of JSON, then the
// value), what the worker sees of the answers (workerd's objects with own properties, null for
// 404/10007, `Error("<action>: <message> (<code>)")` from CF-R2-Error), and the r2_* spans a
// streaming tail gets, with workerd's tags (r2-bucket.c++, r2-multipart.c++, r2-test.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, storage } from "workerbox";

/**
 * A tiny R2 service: records each request's JSON (and a PUT's value) in `seen` and answers per
 * `method`/`object`. Self-contained, so that it runs in Node and, by its source, in a worker.
 */
function r2Server(seen) {
  const OBJECT = { name: "k", version: "v1", size: "5", etag: "e1", uploaded: "1724767257918", storageClass: "Standard" };
  const metaAnswer = (meta, body = "", status = 200, extra = {}) => {
    const json = new TextEncoder().encode(JSON.stringify(meta));
    const all = new Uint8Array(json.byteLength + body.length);
    all.set(json);
    all.set(new TextEncoder().encode(body), json.byteLength);
    return new Response(all, { status, headers: { "cf-r2-metadata-size": String(json.byteLength), ...extra } });
  };
  const error = (status, v4code, message) => new Response(null, { status, headers: { "cf-r2-error": JSON.stringify({ version: 0, v4code, message }) } });
  return async (request) => {
    let json;
    let value = "";
    if (request.method === "GET") {
      json = JSON.parse(request.headers.get("cf-r2-request"));
    } else {
      const bytes = new Uint8Array(await request.arrayBuffer());
      const size = Number(request.headers.get("cf-r2-metadata-size"));
      json = JSON.parse(new TextDecoder().decode(bytes.subarray(0, size)));
      value = new TextDecoder().decode(bytes.subarray(size));
    }
    seen.push({ method: request.method, url: request.url, json, ...(value ? { value } : {}) });
    switch (json.method) {
      case "head":
      case "get":
        if (json.object === "missing") return error(404, 10007, "The specified key does not exist.");
        if (json.object === "broken") return error(500, 10001, "Boom");
        if (json.object === "stale") return metaAnswer({ ...OBJECT, name: "stale" }, "", 412, { "cf-r2-error": JSON.stringify({ version: 0, v4code: 10031, message: "precondition" }) });
        return metaAnswer({ ...OBJECT, name: json.object, httpFields: { contentType: "text/plain", cacheExpiry: "1000" }, customFields: [{ k: "a", v: "b" }], checksums: { 0: "00112233445566778899aabbccddeeff" }, ssec: { algorithm: "aes256", keyMd5: "md5!" } }, json.method === "get" ? "hello" : "");
      case "put":
        if (json.object === "guarded") return error(412, 10032, "precondition");
        return Response.json({ ...OBJECT, name: json.object, size: String(value.length) });
      case "list":
        return metaAnswer({ objects: [{ ...OBJECT, httpFields: { contentType: "a/b" } }], truncated: true, cursor: "c2", delimitedPrefixes: ["p/"] });
      case "delete":
        return new Response();
      case "createMultipartUpload":
        return Response.json({ uploadId: "up1" });
      case "uploadPart":
        return Response.json({ etag: `part${json.partNumber}` });
      case "abortMultipartUpload":
        return new Response();
      case "completeMultipartUpload":
        return Response.json({ ...OBJECT, name: json.object, etag: "multi-2" });
    }
    return error(400, 10000, "unknown method");
  };
}

/** The R2 service as a workerbox worker; `/__seen` answers the requests it recorded. */
async function r2ServiceWorker(t) {
  const script = `const seen = [];
const serve = (${r2Server})(seen);
export default { fetch: (request) => (new URL(request.url).pathname === "/__seen" ? Response.json(seen) : serve(request)) };`;
  const worker = await createWorker({ script, compatibilityDate: "2025-10-01" });
  t.after(() => worker.dispose());
  return { worker, seen: async () => (await dispatch(worker, "http://x/__seen")).json() };
}

async function runWorker(t, code, bindings, extra = {}) {
  const script = `export default { async fetch(request, env) {
    const res = async (f) => { try { return await f(); } catch (e) { return [e.name, e.message]; } };
    const own = (o) => o && { ...o, checksums: o.checksums.toJSON(), uploaded: o.uploaded.toISOString() };
    return Response.json(await (async () => { ${code} })());
  } };`;
  const worker = await createWorker({ script, bindings, compatibilityDate: "2025-10-01", ...extra });
  t.after(() => worker.dispose());
  return worker;
}

test("storage({ service }) speaks R2's binding protocol and gives workerd's objects", { timeout: 60_000 }, async (t) => {
  // The service is a workerbox worker, as in workerd's r2-test.
  const service = await r2ServiceWorker(t);
  const worker = await runWorker(
    t,
    `const got = await env.B.get("k", { range: { offset: 1, length: 3 }, onlyIf: { etagMatches: "e1", uploadedBefore: new Date(5000) } });
    const headers = new Headers();
    got.writeHttpMetadata(headers);
    const upload = await env.B.createMultipartUpload("m", { customMetadata: { x: 1 }, storageClass: "InfrequentAccess" });
    return {
      head: own(await env.B.head("k")),
      keys: Object.keys(got),
      names: [got.constructor.name, Object.prototype.toString.call(got), Object.keys(got.checksums), Object.getOwnPropertyDescriptor(got, "etag")],
      body: await got.text(),
      used: [got.bodyUsed, await got.text().catch((e) => e.name)],
      streamed: await env.B.get("k2").then(async (o) => {
        const chunks = [];
        for await (const chunk of o.body) chunks.push(new TextDecoder().decode(chunk));
        return [o.body instanceof ReadableStream, chunks.join(""), o.bodyUsed];
      }),
      blob: await env.B.get("k3").then(async (o) => { const b = await o.blob(); return [b.type, await b.text()]; }),
      headers: [...headers],
      missing: await env.B.get("missing"),
      broken: await res(() => env.B.head("broken")),
      stale: await env.B.get("stale", { onlyIf: new Headers({ "if-none-match": '"e1", W/"e2"' }) }).then((o) => [o.constructor.name, "body" in o]),
      put: own(await env.B.put("p", "four", { httpMetadata: { contentType: "x/y" }, md5: "00112233445566778899aabbccddeeff", ssecKey: "ab".repeat(32) })),
      guarded: await env.B.put("guarded", new Uint8Array(2)),
      twoHashes: await res(() => env.B.put("p", "x", { md5: "0".repeat(32), sha1: "0".repeat(40) })),
      badKey: await res(() => env.B.get("k", { ssecKey: "XY" })),
      list: await env.B.list({ prefix: "a", limit: 2, include: ["httpMetadata"] }).then((l) => ({ ...l, objects: l.objects.map(own) })),
      deleted: String(await env.B.delete(["x", "y"])),
      upload: [Object.keys(upload), { ...upload }],
      part: await upload.uploadPart(2, "bytes"),
      done: own(await upload.complete([{ partNumber: 2, etag: "part2" }])),
      aborted: String(await upload.abort()),
    };`,
    { B: storage({ service: service.worker, bucket: "bkt" }) },
  );
  const out = await (await dispatch(worker, "http://x/")).json();
  const seen = await service.seen();

  // The requests, as workerd's R2Bucket sends them (capnp JSON: 64-bit numbers as strings).
  for (const s of seen) {
    assert.equal(s.url, "https://fake-host/");
    assert.equal(s.method, ["head", "get", "list"].includes(s.json.method) ? "GET" : "PUT");
  }
  const requests = seen.map((s) => (s.value === undefined ? s.json : [s.json, s.value]));
  assert.deepEqual(requests, [
    { version: 1, method: "get", object: "k", onlyIf: { etagMatches: [{ value: "e1", type: "strong" }], uploadedBefore: "5000" }, range: { offset: "1", length: "3" } },
    { version: 1, method: "createMultipartUpload", object: "m", customFields: [{ k: "x", v: "1" }], storageClass: "InfrequentAccess" },
    { version: 1, method: "head", object: "k" },
    { version: 1, method: "get", object: "k2" },
    { version: 1, method: "get", object: "k3" },
    { version: 1, method: "get", object: "missing" },
    { version: 1, method: "head", object: "broken" },
    { version: 1, method: "get", object: "stale", onlyIf: { etagDoesNotMatch: [{ value: "e1", type: "strong" }, { value: "e2", type: "weak" }] } },
    [{ version: 1, method: "put", object: "p", httpFields: { contentType: "x/y" }, md5: "ABEiM0RVZneImaq7zN3u/w==", ssec: { key: "ab".repeat(32) } }, "four"],
    [{ version: 1, method: "put", object: "guarded" }, "\0\0"],
    { version: 1, method: "list", prefix: "a", limit: 2, include: [0], newRuntime: true },
    { version: 1, method: "delete", objects: ["x", "y"] },
    [{ version: 1, method: "uploadPart", uploadId: "up1", partNumber: 2, object: "m" }, "bytes"],
    { version: 1, method: "completeMultipartUpload", object: "m", uploadId: "up1", parts: [{ etag: "part2", part: 2 }] },
    { version: 1, method: "abortMultipartUpload", object: "m", uploadId: "up1" },
  ]);

  // What the worker sees: workerd's R2Object (own properties), its body, its metadata.
  const head = { key: "k", version: "v1", size: 5, etag: "e1", httpEtag: '"e1"', checksums: { md5: "00112233445566778899aabbccddeeff" }, uploaded: "2024-08-27T14:00:57.918Z", httpMetadata: { contentType: "text/plain", cacheExpiry: "1970-01-01T00:00:01.000Z" }, customMetadata: { a: "b" }, storageClass: "Standard", ssecKeyMd5: "md5!" };
  assert.deepEqual(out.head, head);
  // workerd's GetResult: own read-only properties (listed last-declared first), Checksums too.
  assert.deepEqual(out.keys, ["ssecKeyMd5", "storageClass", "range", "customMetadata", "httpMetadata", "uploaded", "checksums", "httpEtag", "etag", "size", "version", "key"]);
  assert.deepEqual(out.names, ["GetResult", "[object GetResult]", ["sha512", "sha384", "sha256", "sha1", "md5"], { value: "e1", writable: false, enumerable: true, configurable: true }]);
  assert.equal(out.body, "hello");
  // The body streams (the rest of the service's answer after the metadata), readable once.
  assert.deepEqual(out.used, [true, "TypeError"]);
  assert.deepEqual(out.streamed, [true, "hello", true]);
  assert.deepEqual(out.blob, ["text/plain", "hello"]);
  assert.deepEqual(out.headers, [["content-type", "text/plain"], ["expires", "Thu, 01 Jan 1970 00:00:01 GMT"]]);
  assert.equal(out.missing, null);
  assert.deepEqual(out.broken, ["Error", "head: Boom (10001)"]);
  assert.deepEqual(out.stale, ["HeadResult", false]);
  // A put's object has the metadata sent, as workerd gives it.
  assert.deepEqual(out.put, { key: "p", version: "v1", size: 4, etag: "e1", httpEtag: '"e1"', checksums: {}, uploaded: "2024-08-27T14:00:57.918Z", httpMetadata: { contentType: "x/y" }, customMetadata: {}, storageClass: "Standard" });
  assert.equal(out.guarded, null);
  assert.deepEqual(out.twoHashes, ["TypeError", "You cannot specify multiple hashing algorithms."]);
  assert.deepEqual(out.badKey, ["Error", "SSE-C Key has invalid format"]);
  // list(): only what `include` asked for, the cursor of a truncated list, its prefixes.
  assert.deepEqual(out.list, { objects: [{ key: "k", version: "v1", size: 5, etag: "e1", httpEtag: '"e1"', checksums: {}, uploaded: "2024-08-27T14:00:57.918Z", httpMetadata: { contentType: "a/b" }, storageClass: "Standard" }], truncated: true, cursor: "c2", delimitedPrefixes: ["p/"] });
  assert.equal(out.deleted, "undefined");
  assert.deepEqual(out.upload, [["uploadId", "key"], { key: "m", uploadId: "up1" }]);
  assert.deepEqual(out.part, { partNumber: 2, etag: "part2" });
  assert.equal(out.done.etag, "multi-2");
  assert.equal(out.aborted, "undefined");
});

test("storage({ service }): a service-backed bucket's operations are r2_* spans with workerd's tags", { timeout: 60_000 }, async (t) => {
  // The service is a fetch handler in Node.
  const handler = r2Server([]);
  const events = [];
  const worker = await runWorker(
    t,
    `await env.B.put("p", "four", { httpMetadata: { contentType: "x/y", cacheExpiry: new Date(1000) }, customMetadata: { a: "b" } });
    await env.B.get("k", { range: { suffix: 2 } });
    await res(() => env.B.head("broken"));
    await res(() => env.B.put("p", "x", { onlyIf: new Headers({ "if-match": "unquoted" }) }));
    await env.B.list({ cursor: "c", include: ["customMetadata"] });
    const upload = await env.B.createMultipartUpload("m");
    await upload.uploadPart(1, new Uint8Array(3));
    await upload.complete([{ partNumber: 1, etag: "part1" }]);
    await env.B.delete("gone");
    return "done";`,
    { B: storage({ service: handler, bucket: "bkt" }) },
    { streamingTails: [() => (ev) => events.push(ev)], onLog: () => {} },
  );
  assert.equal(await (await dispatch(worker, "http://x/")).json(), "done");
  const deadline = Date.now() + 20_000;
  while (!events.some((e) => e.event.type === "outcome") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const spans = new Map();
  for (const e of events) {
    if (e.event.type === "spanOpen") spans.set(e.event.spanId, { name: e.event.name });
    else if (e.event.type === "attributes") for (const { name, value } of e.event.info) spans.get(e.spanContext.spanId)[name] = value;
    else if (e.event.type === "spanClose") spans.get(e.spanContext.spanId).closed = true;
  }
  const base = (name, operation) => ({ name, "cloudflare.binding.type": "r2", "cloudflare.binding.name": "B", "cloudflare.r2.operation": operation, "cloudflare.r2.bucket": "bkt" });
  const object = (extra = {}) => ({ "cloudflare.r2.response.success": true, "cloudflare.r2.response.etag": "e1", "cloudflare.r2.response.size": 5, "cloudflare.r2.response.uploaded": "2024-08-27T14:00:57.918Z", "cloudflare.r2.response.storage_class": "Standard", "cloudflare.r2.response.custom_metadata": true, ...extra });
  assert.deepEqual(
    [...spans.values()],
    [
      {
        ...base("r2_put", "PutObject"),
        "cloudflare.r2.request.key": "p",
        "cloudflare.r2.request.custom_metadata": true,
        "cloudflare.r2.request.http_metadata.content_type": "x/y",
        "cloudflare.r2.request.http_metadata.cache_expiry": 1000n,
        "cloudflare.r2.request.size": 4n,
        ...object({ "cloudflare.r2.response.size": 4, "cloudflare.r2.response.content_type": "x/y", "cloudflare.r2.response.cache_expiry": "1970-01-01T00:00:01.000Z" }),
        closed: true,
      },
      { ...base("r2_get", "GetObject"), "cloudflare.r2.request.key": "k", "cloudflare.r2.request.range.suffix": 2n, ...object({ "cloudflare.r2.response.checksum.md5": "00112233445566778899aabbccddeeff", "cloudflare.r2.response.ssec_key": true, "cloudflare.r2.response.content_type": "text/plain", "cloudflare.r2.response.cache_expiry": "1970-01-01T00:00:01.000Z" }), closed: true },
      { ...base("r2_head", "HeadObject"), "cloudflare.r2.request.key": "broken", "cloudflare.r2.response.success": false, "error.type": "Boom", "cloudflare.r2.error.message": "Boom", "cloudflare.r2.error.code": 10001n, closed: true },
      // An If-Match header without a quoted etag fails before any request: the span has the key alone.
      { ...base("r2_put", "PutObject"), "cloudflare.r2.request.key": "p", closed: true },
      { ...base("r2_list", "ListObjects"), "cloudflare.r2.request.cursor": "c", "cloudflare.r2.request.include.custom_metadata": true, "cloudflare.r2.response.success": true, "cloudflare.r2.response.cursor": "c2", "cloudflare.r2.response.returned_objects": 1n, "cloudflare.r2.response.delimited_prefixes": 1n, "cloudflare.r2.response.truncated": true, closed: true },
      { ...base("r2_createMultipartUpload", "CreateMultipartUpload"), "cloudflare.r2.request.key": "m", "cloudflare.r2.response.success": true, "cloudflare.r2.response.upload_id": "up1", closed: true },
      { ...base("r2_uploadPart", "UploadPart"), "cloudflare.r2.request.upload_id": "up1", "cloudflare.r2.request.part_number": 1n, "cloudflare.r2.request.key": "m", "cloudflare.r2.request.size": 3n, "cloudflare.r2.response.success": true, "cloudflare.r2.response.etag": "part1", closed: true },
      { ...base("r2_completeMultipartUpload", "CompleteMultipartUpload"), "cloudflare.r2.request.upload_id": "up1", "cloudflare.r2.request.key": "m", "cloudflare.r2.request.uploaded_parts": "1", ...object({ "cloudflare.r2.response.etag": "multi-2" }), closed: true },
      { ...base("r2_delete", "DeleteObject"), "cloudflare.r2.request.keys": "gone", "cloudflare.r2.response.success": true, closed: true },
    ],
  );
});

test("storage({ service }): list's include, Headers options and option errors as workerd sends and gives them", { timeout: 60_000 }, async (t) => {
  const service = await r2ServiceWorker(t);
  const worker = await runWorker(
    t,
    `return [
      (await env.B.list()).objects.length,
      (await env.B.list({ prefix: "a" })).truncated,
      await env.B.get("r", { range: new Headers({ range: "bytes=1-2" }), onlyIf: new Headers({ "if-modified-since": "Thu, 01 Jan 1970 00:00:05 GMT", "if-match": 'W/"x", "y"' }) }).then((o) => o.key),
      await env.B.put("p", null, { onlyIf: { etagDoesNotMatch: "*", secondsGranularity: true, uploadedAfter: new Date(7) }, sha256: "00".repeat(32) }).then((o) => o.size),
      await res(() => env.B.get("r", { range: { offset: 1.5 } })),
      await res(() => env.B.get("r", { range: { suffix: 1, offset: 1 } })),
      await res(() => env.B.put("p", "x", { onlyIf: { etagMatches: '"q"' } })),
      await res(() => env.B.list({ include: ["bogus"] })),
      await res(() => env.B.list({ prefix: 5 })),
      await res(() => env.B.put("p", "x", { md5: "zz" })),
      await res(() => env.B.put("p", 5)),
      await res(() => env.B.put("p", new ReadableStream({ start(c) { c.close(); } }))),
      [Object.prototype.toString.call(env.B), Object.getOwnPropertyNames(env.B.constructor).sort()],
    ];`,
    { B: storage({ service: service.worker }) },
  );
  // Compared with what workerd sends and gives for the same calls.
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), [
    1,
    true,
    "r",
    0,
    ["RangeError", "Invalid range. Starting offset (1.5) must be an integer, not floating point."],
    ["TypeError", "Suffix is incompatible with offset."],
    ["TypeError", 'Conditional ETag should not be wrapped in quotes ("q").'],
    ["RangeError", "Unsupported include value bogus"],
    ["TypeError", "Incorrect type for the 'prefix' field on 'ListOptions': the provided value is not of type 'string'."],
    ["TypeError", "MD5 is 32 hex characters, not 2"],
    ["TypeError", "Failed to execute 'put' on 'R2Bucket': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'."],
    ["TypeError", "Provided readable stream must have a known length (request/response body or readable half of FixedLengthStream)"],
    ["[object R2Bucket]", ["length", "name", "prototype"]],
  ]);
  assert.deepEqual(await service.seen().then((seen) => seen.map((s) => s.json)), [
    { version: 1, method: "list", newRuntime: true },
    { version: 1, method: "list", prefix: "a", include: [], newRuntime: true },
    { version: 1, method: "get", object: "r", onlyIf: { etagMatches: [{ value: "x", type: "weak" }, { value: "y", type: "strong" }], uploadedAfter: "5000", secondsGranularity: true }, rangeHeader: "bytes=1-2" },
    { version: 1, method: "put", object: "p", onlyIf: { etagDoesNotMatch: [{ type: "wildcard" }], uploadedAfter: "7", secondsGranularity: true }, sha256: "00".repeat(32) },
  ]);
});

test("storage({ service }): argument checks", () => {
  assert.throws(() => storage({ service: () => new Response(), bucket: "" }), /options\.bucket must be a non-empty string/);
  assert.throws(() => storage({ bucket: "b" }), /options\.bucket names the bucket of a service-backed storage/);
  assert.throws(() => storage({ service: 42 }), /storage\(\): options\.service must be a workerbox worker/);
});
