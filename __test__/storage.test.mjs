// Object storage bindings modelled on R2: put/get/head/delete/list, ranges, conditionals,
// metadata, persistence, and custom handlers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createWorker, dispatch, storage } from "../index.js";
import { useWorker } from "./helpers.mjs";

async function run(t, bindings, body) {
  const worker = await useWorker(t, {
    bindings,
    script: `export default { async fetch(request, env) { return Response.json(await (async () => { ${body} })() ?? null); } }`,
  });
  return (await dispatch(worker, "http://localhost/")).json();
}

test("storage: put, get, head and delete with metadata, etags and bodies", async (t) => {
  const result = await run(t, { FILES: storage() }, `
    const put = await env.FILES.put("docs/a.txt", "hello world", {
      httpMetadata: { contentType: "text/plain", cacheControl: "max-age=60" },
      customMetadata: { owner: "me" },
    });
    const got = await env.FILES.get("docs/a.txt");
    const headers = new Headers();
    got.writeHttpMetadata(headers);
    const head = await env.FILES.head("docs/a.txt");
    const stream = (await env.FILES.get("docs/a.txt")).body;
    let streamed = "";
    for await (const chunk of stream) streamed += new TextDecoder().decode(chunk);
    const json = await (await env.FILES.put("data.json", JSON.stringify({ n: 1 })), env.FILES.get("data.json")).then((o) => o.json());
    const bytes = await env.FILES.put("bin", new Uint8Array([0, 1, 2]));
    await env.FILES.delete(["bin", "data.json"]);
    return {
      put: { key: put.key, size: put.size, etag: put.etag, httpEtag: put.httpEtag, uploaded: put.uploaded instanceof Date },
      text: await got.text(), used: got.bodyUsed, headers: [...headers],
      head: { size: head.size, etag: head.etag, custom: head.customMetadata, type: head.httpMetadata.contentType, hasBody: "body" in head },
      streamed, json, binSize: bytes.size,
      afterDelete: [await env.FILES.get("bin"), await env.FILES.head("data.json"), await env.FILES.get("missing")],
    };`);
  assert.deepEqual(result.put, { key: "docs/a.txt", size: 11, etag: "5eb63bbbe01eeed093cb22bb8f5acdc3", httpEtag: '"5eb63bbbe01eeed093cb22bb8f5acdc3"', uploaded: true });
  assert.equal(result.text, "hello world");
  assert.equal(result.used, true);
  assert.deepEqual(result.headers, [["cache-control", "max-age=60"], ["content-type", "text/plain"]]);
  assert.deepEqual(result.head, { size: 11, etag: "5eb63bbbe01eeed093cb22bb8f5acdc3", custom: { owner: "me" }, type: "text/plain", hasBody: false });
  assert.equal(result.streamed, "hello world");
  assert.deepEqual(result.json, { n: 1 });
  assert.equal(result.binSize, 3);
  assert.deepEqual(result.afterDelete, [null, null, null]);
});

test("storage: looking at .body does not use it; reading it once does, either way", async (t) => {
  const result = await run(t, { FILES: storage() }, `
    await env.FILES.put("f", "payload");
    const looked = await env.FILES.get("f");
    const same = looked.body === looked.body;
    const usedAfterLook = looked.bodyUsed;
    const text = await looked.text();
    let again;
    try { await looked.text(); } catch (error) { again = error.message; }
    const streamed = await env.FILES.get("f");
    const reader = streamed.body.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    reader.releaseLock();
    let afterStream;
    try { await streamed.text(); } catch (error) { afterStream = error.message; }
    return { same, usedAfterLook, text, usedAfterText: looked.bodyUsed, again, first, afterStream };`);
  assert.deepEqual(result, {
    same: true, usedAfterLook: false, text: "payload", usedAfterText: true,
    again: "Body has already been used. It can only be read once.", first: "payload",
    afterStream: "Body has already been used. It can only be read once.",
  });
});

test("storage: ranges and onlyIf conditionals", async (t) => {
  const result = await run(t, { FILES: storage() }, `
    const { etag } = await env.FILES.put("f", "0123456789");
    const range = async (r) => { const o = await env.FILES.get("f", { range: r }); return [await o.text(), o.range]; };
    const conditional = async (onlyIf) => { const o = await env.FILES.get("f", { onlyIf }); return "body" in o ? await o.text() : "no body"; };
    return {
      offset: await range({ offset: 2, length: 3 }),
      from: await range({ offset: 7 }),
      suffix: await range({ suffix: 4 }),
      header: await range(new Headers({ range: "bytes=1-2" })),
      match: await conditional({ etagMatches: etag }),
      mismatch: await conditional({ etagMatches: "nope" }),
      noneMatch: await conditional(new Headers({ "if-none-match": '"' + etag + '"' })),
      before: await conditional({ uploadedBefore: new Date(Date.now() - 60000) }),
      putIfAbsent: await env.FILES.put("f", "other", { onlyIf: { etagDoesNotMatch: "*" } }),
      putIfMatch: (await env.FILES.put("f", "new", { onlyIf: { etagMatches: etag } })).size,
      badRange: await env.FILES.get("f", { range: { suffix: 1, offset: 1 } }).then(() => "no error", (e) => e.name),
    };`);
  assert.deepEqual(result.offset, ["234", { offset: 2, length: 3 }]);
  assert.deepEqual(result.from, ["789", { offset: 7, length: 3 }]);
  assert.deepEqual(result.suffix, ["6789", { offset: 6, length: 4 }]);
  assert.deepEqual(result.header, ["12", { offset: 1, length: 2 }]);
  assert.equal(result.match, "0123456789");
  assert.equal(result.mismatch, "no body");
  assert.equal(result.noneMatch, "no body");
  assert.equal(result.before, "no body");
  assert.equal(result.putIfAbsent, null);
  assert.equal(result.putIfMatch, 3);
  assert.equal(result.badRange, "TypeError");
});

test("storage: list with prefix, delimiter, cursor, limit and include", async (t) => {
  const result = await run(t, { FILES: storage() }, `
    for (const key of ["a/1", "a/2", "a/sub/3", "b/1", "c"]) await env.FILES.put(key, key, { customMetadata: { key }, httpMetadata: { contentType: "text/plain" } });
    const page1 = await env.FILES.list({ limit: 2 });
    const page2 = await env.FILES.list({ limit: 2, cursor: page1.cursor });
    const page3 = await env.FILES.list({ limit: 2, cursor: page2.cursor });
    const folders = await env.FILES.list({ delimiter: "/" });
    const inA = await env.FILES.list({ prefix: "a/", delimiter: "/", include: ["customMetadata"] });
    return {
      pages: [page1, page2, page3].map((p) => [p.objects.map((o) => o.key), p.truncated]),
      folders: [folders.objects.map((o) => o.key), folders.delimitedPrefixes],
      inA: [inA.objects.map((o) => [o.key, o.customMetadata, o.httpMetadata]), inA.delimitedPrefixes],
    };`);
  assert.deepEqual(result.pages, [[["a/1", "a/2"], true], [["a/sub/3", "b/1"], true], [["c"], false]]);
  assert.deepEqual(result.folders, [["c"], ["a/", "b/"]]);
  assert.deepEqual(result.inA, [[["a/1", { key: "a/1" }, {}], ["a/2", { key: "a/2" }, {}]], ["a/sub/"]]);
});

test("storage({ dir }) persists objects across workers", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "workerbox-storage-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = `export default { async fetch(request, env) {
    if (request.method === "PUT") { await env.B.put("k", await request.arrayBuffer(), { customMetadata: { n: "1" } }); return new Response("ok"); }
    const o = await env.B.get("k");
    return Response.json({ text: await o.text(), meta: o.customMetadata, size: o.size });
  } }`;
  const first = await createWorker({ script, bindings: { B: storage({ dir }) }, onLog() {} });
  await dispatch(first, { url: "http://localhost/", method: "PUT", body: "persisted" });
  await first.dispose();
  const second = await useWorker(t, { script, bindings: { B: storage({ dir }) } });
  assert.deepEqual(await (await dispatch(second, "http://localhost/")).json(), { text: "persisted", meta: { n: "1" }, size: 9 });
});

test("storage: custom handlers, their errors, and bad definitions", async (t) => {
  const result = await run(
    t,
    {
      MINE: storage({
        get: (key) => (key === "x" ? { value: "custom", uploaded: 0, customMetadata: { from: "handler" } } : null),
        put: () => {
          throw new Error("read-only store");
        },
        delete() {},
        list: () => [{ key: "x", value: "custom", uploaded: 0 }],
      }),
    },
    `const o = await env.MINE.get("x");
     return { text: await o.text(), meta: o.customMetadata, etag: o.etag, put: await env.MINE.put("y", "v").then(() => "no error", (e) => e.message), listed: (await env.MINE.list()).objects.map((o) => o.key) };`,
  );
  // The handler gave no etag, so the dispatcher computed the MD5 of the value.
  const etag = createHash("md5").update("custom").digest("hex");
  assert.deepEqual(result, { text: "custom", meta: { from: "handler" }, etag, put: "read-only store", listed: ["x"] });
  assert.throws(() => storage({ get() {} }), /storage\(\): handler "put" must be a function/);
});
