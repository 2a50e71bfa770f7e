// Web APIs inside the isolate behave as the standards (and production Workers) say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

test("Headers: normalisation, sorted combined iteration, set-cookie kept apart, validation", async (t) => {
  const result = await evalInWorker(t, `
    const h = new Headers({ "X-B": " 2 \\t", "x-a": "1" });
    h.append("X-A", "3");
    h.append("Set-Cookie", "s=1");
    h.append("set-cookie", "t=2");
    const errors = [];
    for (const f of [() => h.append("bad name", "x"), () => h.set("x", "a\\nb"), () => new Headers([["only-one"]])]) {
      try { f(); errors.push("no error"); } catch (e) { errors.push(e.name); }
    }
    return { entries: [...h], get: h.get("x-a"), cookies: h.getSetCookie(), has: h.has("X-b"), missing: h.get("nope"), errors };`);
  assert.deepEqual(result.entries, [["set-cookie", "s=1"], ["set-cookie", "t=2"], ["x-a", "1, 3"], ["x-b", "2"]]);
  assert.equal(result.get, "1, 3");
  assert.deepEqual(result.cookies, ["s=1", "t=2"]);
  assert.equal(result.has, true);
  assert.equal(result.missing, null);
  assert.deepEqual(result.errors, ["TypeError", "TypeError", "TypeError"]);
});

test("the incoming request's headers are immutable", async (t) => {
  const result = await evalInWorker(t, `try { request.headers.set("x", "1"); return "mutable"; } catch (e) { return e.name + ": " + e.message; }`);
  assert.match(result, /^TypeError: .*immutable/i);
});

test("URL and URLSearchParams follow the WHATWG URL standard", async (t) => {
  const result = await evalInWorker(t, `
    const u = new URL("../b/c?x=1&y=2#frag", "https://user:pw@Example.COM:443/a/z");
    const parts = { href: u.href, origin: u.origin, host: u.host, pathname: u.pathname, search: u.search, hash: u.hash, username: u.username };
    u.searchParams.append("z", "a b&c");
    u.pathname = "/new path";
    u.port = "8443";
    u.hash = "";
    const p = new URLSearchParams("?b=2&a=1&b=1");
    p.sort();
    let invalid;
    try { new URL("no scheme"); } catch (e) { invalid = e.name; }
    return {
      parts, after: u.href, sorted: p.toString(), all: p.getAll("b"), canParse: [URL.canParse("http://x"), URL.canParse("x")],
      invalid, idn: new URL("http://bücher.example/").host, json: JSON.stringify({ u: new URL("http://a/b") }),
    };`);
  assert.deepEqual(result.parts, {
    href: "https://user:pw@example.com/b/c?x=1&y=2#frag", origin: "https://example.com", host: "example.com",
    pathname: "/b/c", search: "?x=1&y=2", hash: "#frag", username: "user",
  });
  assert.equal(result.after, "https://user:pw@example.com:8443/new%20path?x=1&y=2&z=a+b%26c");
  assert.equal(result.sorted, "a=1&b=2&b=1");
  assert.deepEqual(result.all, ["2", "1"]);
  assert.deepEqual(result.canParse, [true, false]);
  assert.equal(result.invalid, "TypeError");
  assert.equal(result.idn, "xn--bcher-kva.example");
  assert.equal(result.json, '{"u":"http://a/b"}');
});

test("TextEncoder and TextDecoder, including fatal, BOM, legacy encodings and streaming", async (t) => {
  const result = await evalInWorker(t, `
    const bytes = new TextEncoder().encode("hé€😀");
    const into = new Uint8Array(4);
    const r = new TextEncoder().encodeInto("hé€", into);
    let fatal;
    try { new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff])); } catch (e) { fatal = e.name; }
    const streaming = new TextDecoder();
    const euro = [0xe2, 0x82, 0xac];
    const streamed = streaming.decode(new Uint8Array(euro.slice(0, 1)), { stream: true }) + streaming.decode(new Uint8Array(euro.slice(1)));
    let badLabel;
    try { new TextDecoder("no-such-encoding"); } catch (e) { badLabel = e.name; }
    return {
      bytes: [...bytes], read: r.read, written: r.written,
      lossy: new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0x62])),
      fatal, streamed, badLabel,
      bom: new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])),
      keepBom: new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])).length,
      latin: new TextDecoder("latin1").decode(new Uint8Array([0x80, 0xe9])),
      latinName: new TextDecoder("latin1").encoding,
      utf16: new TextDecoder("utf-16le").decode(new Uint8Array([0x41, 0x00, 0x3d, 0xd8, 0x00, 0xde])),
      sjis: new TextDecoder("shift_jis").decode(new Uint8Array([0x82, 0xa0])),
    };`);
  assert.deepEqual(result.bytes, [...Buffer.from("hé€😀")]);
  assert.deepEqual([result.read, result.written], [2, 3]);
  assert.equal(result.lossy, "a\ufffdb");
  assert.equal(result.fatal, "TypeError");
  assert.equal(result.streamed, "€");
  assert.equal(result.badLabel, "RangeError");
  assert.equal(result.bom, "A");
  assert.equal(result.keepBom, 2);
  assert.equal(result.latin, "€é");
  assert.equal(result.latinName, "windows-1252");
  assert.equal(result.utf16, "A😀");
  assert.equal(result.sjis, "あ");
});

test("atob and btoa use forgiving base64 and throw InvalidCharacterError", async (t) => {
  const result = await evalInWorker(t, `
    const errors = [];
    for (const f of [() => atob("a"), () => btoa("€")]) {
      try { f(); errors.push("no error"); } catch (e) { errors.push(e.name + "/" + (e instanceof DOMException)); }
    }
    return { b: btoa("hi\\xff"), a: atob(" aG\\nn/ "), padded: atob("aGk="), nopad: atob("aGk"), errors };`);
  assert.deepEqual(result, { b: "aGn/", a: "hi\xff", padded: "hi", nopad: "hi", errors: ["InvalidCharacterError/true", "InvalidCharacterError/true"] });
});

test("Request: construction, validation, bodies and clone", async (t) => {
  const result = await evalInWorker(t, `
    const r = new Request("https://example.test/p", { method: "post", headers: { "x-a": "1" }, body: "payload" });
    const c = r.clone();
    const text = await r.text();
    let reused;
    try { await r.text(); } catch (e) { reused = e.name; }
    const errors = [];
    for (const f of [() => new Request("/relative"), () => new Request("http://x/", { method: "GET", body: "b" }), () => new Request("http://x/", { method: "CONNECT" })]) {
      try { f(); errors.push("no error"); } catch (e) { errors.push(e.name); }
    }
    return {
      method: r.method, url: r.url, header: r.headers.get("x-a"), text, used: r.bodyUsed, reused,
      cloneText: await c.json().catch((e) => e.name), contentType: c.headers.get("content-type"),
      incoming: [request.method, request.url, request.bodyUsed], errors,
      copy: new Request(new Request("http://a/", { method: "PUT", body: "z" })).method,
    };`);
  assert.equal(result.method, "POST");
  assert.equal(result.url, "https://example.test/p");
  assert.equal(result.header, "1");
  assert.equal(result.text, "payload");
  assert.equal(result.used, true);
  assert.equal(result.reused, "TypeError");
  assert.equal(result.cloneText, "SyntaxError");
  assert.equal(result.contentType, "text/plain;charset=UTF-8");
  assert.deepEqual(result.incoming, ["GET", "http://localhost/", false]);
  assert.deepEqual(result.errors, ["TypeError", "TypeError", "TypeError"]);
  assert.equal(result.copy, "PUT");
});

test("Response with a null body status (204, 205, 304): a zero-length buffer body is no body; another body is refused, as workerd does", async (t) => {
  // Compared with workerd 1.2026 (node_modules/workerd): same bodies, statuses and messages.
  const result = await evalInWorker(t, `
    const bodies = { empty: () => "", u8: () => new Uint8Array(0), ab: () => new ArrayBuffer(0), blob: () => new Blob([]), params: () => new URLSearchParams(), text: () => "x", stream: () => new ReadableStream(), form: () => new FormData() };
    const out = {};
    for (const status of [204, 205, 304]) for (const [name, body] of Object.entries(bodies)) {
      try {
        const r = new Response(body(), { status });
        out[status + " " + name] = [r.body === null, r.headers.get("content-type"), await r.text()];
      } catch (e) { out[status + " " + name] = e.name + ": " + e.message; }
    }
    return out;
  `);
  const refused = "TypeError: Response with null body status (101, 204, 205, or 304) cannot have a body.";
  for (const status of [204, 205, 304]) {
    for (const name of ["empty", "u8", "ab", "blob", "params"]) assert.deepEqual(result[`${status} ${name}`], [true, null, ""], `${status} ${name}`);
    for (const name of ["text", "stream", "form"]) assert.equal(result[`${status} ${name}`], refused, `${status} ${name}`);
  }
});

test("Response: statuses, statics, clone and body mixins", async (t) => {
  const result = await evalInWorker(t, `
    const errors = [];
    for (const f of [() => new Response("x", { status: 99 }), () => new Response("x", { status: 204 }), () => Response.redirect("http://a/", 200), () => Response.redirect("nope")]) {
      try { f(); errors.push("no error"); } catch (e) { errors.push(e.name); }
    }
    const original = new Response(new Uint8Array([104, 105]), { status: 299, statusText: "Fine" });
    const copy = original.clone();
    const json = Response.json({ a: 1 }, { headers: { "x-y": "z" } });
    return {
      errors, ok: original.ok, text: await original.text(), copy: [...new Uint8Array(await copy.arrayBuffer())],
      statusText: copy.statusText, json: await json.json(), jsonType: json.headers.get("content-type"),
      redirect: [Response.redirect("http://a/b").status, Response.redirect("http://a/b").headers.get("location")],
      error: [Response.error().type, Response.error().status],
      bytes: (await new Response("ab").bytes()).constructor.name,
    };`);
  assert.deepEqual(result.errors, ["RangeError", "TypeError", "RangeError", "TypeError"]);
  assert.equal(result.ok, true);
  assert.equal(result.text, "hi");
  assert.deepEqual(result.copy, [104, 105]);
  assert.equal(result.statusText, "Fine");
  assert.deepEqual(result.json, { a: 1 });
  assert.equal(result.jsonType, "application/json");
  assert.deepEqual(result.redirect, [302, "http://a/b"]);
  assert.deepEqual(result.error, ["error", 0]);
  assert.equal(result.bytes, "Uint8Array");
});

test("AbortController and AbortSignal: abort, reason, events, timeout and any", async (t) => {
  const result = await evalInWorker(t, `
    const controller = new AbortController();
    const events = [];
    controller.signal.addEventListener("abort", () => events.push("listener"));
    controller.signal.onabort = () => events.push("onabort");
    const combined = AbortSignal.any([controller.signal, new AbortController().signal]);
    controller.abort("because");
    controller.abort("again");
    let thrown;
    try { controller.signal.throwIfAborted(); } catch (e) { thrown = e; }
    const defaultReason = (() => { const c = new AbortController(); c.abort(); return c.signal.reason; })();
    const timed = AbortSignal.timeout(5);
    await new Promise((r) => setTimeout(r, 30));
    let illegal;
    try { new AbortSignal(); } catch (e) { illegal = e.name; }
    return {
      aborted: controller.signal.aborted, reason: controller.signal.reason, events, thrown,
      combined: [combined.aborted, combined.reason],
      defaultReason: [defaultReason.name, defaultReason instanceof DOMException],
      timeout: [timed.aborted, timed.reason.name],
      already: AbortSignal.abort("x").reason,
      requestSignal: [new Request("http://a/").signal.aborted, new Request("http://a/", { signal: controller.signal }).signal.aborted],
      waited: await scheduler.wait(1).then(() => "waited"),
      illegal,
    };`);
  assert.deepEqual(result, {
    aborted: true, reason: "because", events: ["listener", "onabort"], thrown: "because",
    combined: [true, "because"], defaultReason: ["AbortError", true], timeout: [true, "TimeoutError"],
    already: "x", requestSignal: [false, true], waited: "waited", illegal: "TypeError",
  });
});

test("crypto.getRandomValues and crypto.randomUUID", async (t) => {
  const result = await evalInWorker(t, `
    const a = crypto.getRandomValues(new Uint8Array(32));
    const b = crypto.getRandomValues(new Uint32Array(4));
    const errors = [];
    for (const f of [() => crypto.getRandomValues(new Float64Array(2)), () => crypto.getRandomValues(new Uint8Array(70000))]) {
      try { f(); errors.push("no error"); } catch (e) { errors.push(e.name); }
    }
    const uuids = [crypto.randomUUID(), crypto.randomUUID()];
    return { nonZero: a.some((x) => x !== 0) && b.some((x) => x !== 0), distinct: a.join() !== crypto.getRandomValues(new Uint8Array(32)).join(), errors, uuids, ua: navigator.userAgent };`);
  assert.equal(result.nonZero, true);
  assert.equal(result.distinct, true);
  assert.deepEqual(result.errors, ["TypeMismatchError", "QuotaExceededError"]);
  for (const uuid of result.uuids) assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(result.uuids[0], result.uuids[1]);
  assert.equal(result.ua, "Cloudflare-Workers");
});

test("bodies can be ReadableStreams: new Response(stream), request.body, clone via tee", async (t) => {
  const result = await evalInWorker(t, `
    const encoder = new TextEncoder();
    const streamed = new Response(new ReadableStream({ start(c) { c.enqueue(encoder.encode("chunk1 ")); c.enqueue(encoder.encode("chunk2")); c.close(); } }));
    const copy = streamed.clone();
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    writer.write(encoder.encode("piped")).then(() => writer.close());
    const fromTransform = await new Response(readable).text();
    let bodyChunks = 0;
    for await (const chunk of new Response("abc").body) bodyChunks += chunk.byteLength;
    const reader = new Request("http://a/", { method: "POST", body: "xyz" }).body.getReader();
    const first = await reader.read();
    const used = new Response("q");
    used.body.getReader();
    return {
      text: await streamed.text(), copy: await copy.text(), fromTransform, bodyChunks,
      first: new TextDecoder().decode(first.value), empty: new Response(null).body,
      // bodyUsed is the stream's [[disturbed]]: a reader alone does not make it true (WPT
      // response-stream-disturbed-6), but the locked body still cannot be read again.
      lockedIsUsed: used.bodyUsed, reread: await used.text().then(() => "no error", (e) => e.name),
    };`);
  assert.deepEqual(result, {
    text: "chunk1 chunk2", copy: "chunk1 chunk2", fromTransform: "piped", bodyChunks: 3,
    first: "xyz", empty: null, lockedIsUsed: false, reread: "TypeError",
  });
});

test("a handler may answer with a streamed Response", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch() {
      const { readable, writable } = new TransformStream();
      const writer = writable.getWriter();
      (async () => { for (const part of ["a", "b", "c"]) { await new Promise((r) => setTimeout(r, 2)); await writer.write(new TextEncoder().encode(part)); } await writer.close(); })();
      return new Response(readable, { headers: { "content-type": "text/plain" } });
    } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "abc");
});

test("TextEncoderStream and TextDecoderStream, with characters split across chunks", async (t) => {
  const result = await evalInWorker(t, `
    const bytes = new TextEncoder().encode("h€llo 😀");
    const chunks = [bytes.slice(0, 2), bytes.slice(2, 3), bytes.slice(3, 9), bytes.slice(9)];
    let decoded = "";
    const source = new ReadableStream({ start(c) { for (const chunk of chunks) c.enqueue(chunk); c.close(); } });
    for await (const text of source.pipeThrough(new TextDecoderStream())) decoded += text;
    const encodedChunks = [];
    const strings = new ReadableStream({ start(c) { c.enqueue("a\\ud83d"); c.enqueue("\\ude00b"); c.close(); } });
    for await (const chunk of strings.pipeThrough(new TextEncoderStream())) encodedChunks.push(...chunk);
    return { decoded, encoded: new TextDecoder().decode(new Uint8Array(encodedChunks)), encoding: new TextDecoderStream("latin1").encoding };`);
  assert.deepEqual(result, { decoded: "h€llo 😀", encoded: "a😀b", encoding: "windows-1252" });
});

test("structuredClone copies deeply through V8's serializer and refuses functions", async (t) => {
  const result = await evalInWorker(t, `
    const original = { map: new Map([["k", { n: 1 }]]), set: new Set([1, 2]), date: new Date(0), re: /x+/gi, bytes: new Uint8Array([1, 2]), error: new RangeError("boom"), nested: { list: [1, { deep: true }] } };
    original.self = original;
    const copy = structuredClone(original);
    copy.nested.list[1].deep = false;
    let refused;
    try { structuredClone({ f() {} }); } catch (e) { refused = [e.name, e instanceof DOMException]; }
    return {
      distinct: copy !== original && copy.map !== original.map, cycle: copy.self === copy,
      map: copy.map.get("k").n, set: [...copy.set], date: copy.date.getTime(), re: [copy.re.source, copy.re.flags],
      bytes: [...copy.bytes], bytesCopied: copy.bytes.buffer !== original.bytes.buffer,
      error: [copy.error instanceof RangeError, copy.error.message], untouched: original.nested.list[1].deep, refused,
    };`);
  assert.deepEqual(result, {
    distinct: true, cycle: true, map: 1, set: [1, 2], date: 0, re: ["x+", "gi"], bytes: [1, 2], bytesCopied: true,
    error: [true, "boom"], untouched: true, refused: ["DataCloneError", true],
  });
});

test("Blob, File and FormData, and bodies made from and read as them", async (t) => {
  const result = await evalInWorker(t, `
    const blob = new Blob(["héllo ", new Uint8Array([119, 111]), new Blob(["rld"])], { type: "Text/Plain" });
    const file = new File(["data"], "a.txt", { type: "text/plain", lastModified: 42 });
    const form = new FormData();
    form.append("name", "value\\nline");
    form.append("upload", file);
    form.append("raw", new Blob(["xy"]));
    form.set("name", "replaced");
    const multipart = new Response(form);
    const roundTrip = await multipart.clone().formData();
    const uploaded = roundTrip.get("upload");
    const urlencoded = await new Request("http://a/", { method: "POST", body: new URLSearchParams({ q: "1 2" }) }).formData();
    const blobBody = new Response(blob);
    let notForm;
    try { await new Response("{}", { headers: { "content-type": "application/json" } }).formData(); } catch (e) { notForm = e.name; }
    return {
      blob: [blob.size, blob.type, await blob.text(), await blob.slice(1, 3).text(), await blob.slice(-3).text()],
      file: [file.name, file.lastModified, file.type, file instanceof Blob],
      entries: [...form.keys()], raw: [form.get("raw").name, form.get("raw") instanceof File],
      multipartType: multipart.headers.get("content-type").startsWith("multipart/form-data; boundary="),
      roundTrip: [roundTrip.get("name"), uploaded.name, uploaded.type, await uploaded.text(), roundTrip.get("raw").name],
      urlencoded: urlencoded.get("q"),
      blobBody: [blobBody.headers.get("content-type"), await (await blobBody.blob()).text()],
      notForm,
    };`);
  assert.deepEqual(result, {
    blob: [12, "text/plain", "héllo world", "é", "rld"],
    file: ["a.txt", 42, "text/plain", true],
    entries: ["name", "upload", "raw"], raw: ["raw", true],
    multipartType: true,
    roundTrip: ["replaced", "a.txt", "text/plain", "data", "raw"],
    urlencoded: "1 2",
    blobBody: ["text/plain", "héllo world"],
    notForm: "TypeError",
  });
});

test("a worker parses a multipart upload sent from Node's FormData", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch(request) {
      const form = await request.formData();
      const file = form.get("file");
      return Response.json({ field: form.get("field"), file: [file.name, file.type, await file.text()] });
    } }`,
  });
  const form = new FormData();
  form.append("field", "from node");
  form.append("file", new Blob(["file body"], { type: "text/csv" }), "data.csv");
  const res = await dispatch(worker, { url: "http://localhost/", method: "POST", body: form });
  assert.deepEqual(await res.json(), { field: "from node", file: ["data.csv", "text/csv", "file body"] });
});

test("CompressionStream and DecompressionStream round-trip gzip, deflate and deflate-raw", async (t) => {
  const result = await evalInWorker(t, `
    const text = "workerbox ".repeat(200);
    const out = {};
    for (const format of ["gzip", "deflate", "deflate-raw"]) {
      const compressed = new Uint8Array(await new Response(new Response(text).body.pipeThrough(new CompressionStream(format))).arrayBuffer());
      const restored = await new Response(new Response(compressed).body.pipeThrough(new DecompressionStream(format))).text();
      out[format] = [compressed.length < text.length, restored === text, format === "gzip" ? [compressed[0], compressed[1]] : null];
    }
    let unsupported;
    try { new CompressionStream("brotli"); } catch (e) { unsupported = e.name; }
    const corrupt = await new Response(new Response(new Uint8Array([1, 2, 3, 4])).body.pipeThrough(new DecompressionStream("gzip"))).text().then(() => "no error", (e) => e.name);
    return { out, unsupported, corrupt };`);
  assert.deepEqual(result, {
    out: { gzip: [true, true, [0x1f, 0x8b]], deflate: [true, true, null], "deflate-raw": [true, true, null] },
    unsupported: "TypeError",
    corrupt: "TypeError",
  });
});

test("a worker's gzip output decompresses with Node's zlib", async (t) => {
  const { gunzipSync } = await import("node:zlib");
  const worker = await useWorker(t, {
    script: `export default { fetch() { return new Response(new Response("compressed in the worker").body.pipeThrough(new CompressionStream("gzip"))); } }`,
  });
  const bytes = Buffer.from(await (await dispatch(worker, "http://localhost/")).arrayBuffer());
  assert.equal(gunzipSync(bytes).toString(), "compressed in the worker");
});

test("URLPattern: construction, test and exec with named groups, wildcards and base URLs", async (t) => {
  const result = await evalInWorker(t, `
    const pattern = new URLPattern({ pathname: "/books/:id(\\\\d+)/:rest*" });
    const match = pattern.exec("https://example.test/books/42/a/b?x=1");
    const byString = new URLPattern("https://*.example.test/api/:version/*");
    const relative = new URLPattern("/items/:name", "https://shop.test");
    const caseless = new URLPattern({ pathname: "/Hello" }, { ignoreCase: true });
    let invalid;
    try { new URLPattern({ pathname: "/(unclosed" }); } catch (e) { invalid = e.name; }
    return {
      pathname: pattern.pathname, protocol: pattern.protocol, hasRegExpGroups: pattern.hasRegExpGroups,
      groups: match.pathname.groups, input: match.pathname.input, inputs: match.inputs,
      noMatch: pattern.test("https://example.test/books/abc"),
      string: [byString.test("https://api.example.test/api/v2/users"), byString.exec("https://api.example.test/api/v2/users").hostname.groups, byString.test("https://example.org/api/v2/x")],
      relative: [relative.test("https://shop.test/items/shoe"), relative.exec("/items/hat", "https://shop.test").pathname.groups.name],
      caseless: caseless.test({ pathname: "/hello" }),
      invalid,
    };`);
  assert.deepEqual(result, {
    pathname: "/books/:id(\\d+)/:rest*", protocol: "*", hasRegExpGroups: true,
    groups: { id: "42", rest: "a/b" }, input: "/books/42/a/b", inputs: ["https://example.test/books/42/a/b?x=1"],
    noMatch: false,
    string: [true, { 0: "api" }, false],
    relative: [true, "hat"],
    caseless: true,
    invalid: "TypeError",
  });
});
