// node:zlib under nodejs_compat, checked against Node's own node:zlib where workerd agrees with
// Node, and against values probed on workerd where it does not (one-shot errors, zstd). zlib's
// compressed bytes are Node's and workerd's own (workerbox runs Node's zlib: the last test); the
// other cases cross as round trips: the worker's output is decompressed by Node, Node's by the
// worker; results that do not depend on the encoder (round-tripped text, crc32, constants) are
// compared as JSON with Node's.
import { test } from "node:test";
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const TEXT = "Lorem ipsum dolor sit amet, ✓ consectetur adipiscing elit. ".repeat(500);

// Each case: (zlib, Buffer, input) => JSON-able result; the same source runs on both sides.
const CASES = {
  roundTrips: `async (z, B) => {
    const text = ${JSON.stringify(TEXT)};
    const promisify = (f) => (...args) => new Promise((resolve, reject) => f(...args, (e, v) => (e ? reject(e) : resolve(v))));
    const out = {};
    for (const [c, d] of [["gzip", "gunzip"], ["deflate", "inflate"], ["deflateRaw", "inflateRaw"], ["brotliCompress", "brotliDecompress"], ["gzip", "unzip"], ["deflate", "unzip"]]) {
      const packed = z[c + "Sync"](text);
      out[c + "/" + d] = [z[d + "Sync"](packed).toString() === text, packed.length < text.length / 5, (await promisify(z[d])(await promisify(z[c])(B.from(text)))).toString() === text];
    }
    out.levels = [0, 1, 9].map((level) => z.inflateSync(z.deflateSync(text, { level })).toString() === text);
    out.brotliQuality = z.brotliDecompressSync(z.brotliCompressSync(text, { params: { [z.constants.BROTLI_PARAM_QUALITY]: 4 } })).toString() === text;
    out.empty = [z.gunzipSync(z.gzipSync("")).length, z.inflateRawSync(z.deflateRawSync(B.alloc(0))).length, z.brotliDecompressSync(z.brotliCompressSync("")).length];
    out.typed = z.inflateSync(z.deflateSync(new Uint16Array([1, 2, 3]))).toString("hex");
    out.isBuffer = B.isBuffer(z.gzipSync("x"));
    return out;
  }`,
  crc32: `(z, B) => [z.crc32("hello"), z.crc32(B.from("world"), 123), z.crc32(""), z.crc32(new Uint8Array(1000).fill(7))]`,
  constants: `(z) => [z.constants.Z_OK, z.constants.Z_DATA_ERROR, z.constants.Z_BEST_COMPRESSION, z.constants.BROTLI_PARAM_QUALITY, z.constants.BROTLI_MAX_QUALITY, z.Z_SYNC_FLUSH, z.codes.Z_BUF_ERROR, z.codes["-3"]]`,
};

const CASE_NAMES = Object.keys(CASES);
const casesSource = `const CASES = { ${CASE_NAMES.map((name) => `${JSON.stringify(name)}: async (...args) => (${CASES[name]})(...args)`).join(",\n")} };`;

function workerScript(extra = "") {
  return `import z from "node:zlib";
import { Buffer as B } from "node:buffer";
import { pipeline, Readable, Writable, Transform } from "node:stream";
${casesSource}
${extra}
export default { async fetch(request) {
  const { name, input } = await request.json();
  try { return Response.json({ value: await (CASES[name] ?? EXTRA[name])(z, B, input) }); } catch (error) { return Response.json({ error: String(error.stack) }); }
} }`;
}

async function call(worker, name, input) {
  return (await dispatch(worker, new Request("http://localhost/", { method: "POST", body: JSON.stringify({ name, input }) }))).json();
}

test("node:zlib gives Node's results: round trips, crc32, constants", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, { script: workerScript("const EXTRA = {};"), compatibilityFlags: ["nodejs_compat"] });
  const { CASES: nodeCases } = await import("data:text/javascript;base64," + Buffer.from(`${casesSource}\nexport { CASES };`).toString("base64"));
  const { Buffer: B } = await import("node:buffer");
  for (const name of CASE_NAMES) {
    const fromWorker = await call(worker, name);
    const fromNode = JSON.parse(JSON.stringify(await nodeCases[name](zlib, B).then((value) => ({ value }), (error) => ({ error: error.message }))));
    assert.deepEqual(fromWorker, fromNode, name);
  }
});

const EXTRA = `const EXTRA = {
  // The worker compresses; Node decompresses.
  compress: (z, B, input) => ({
    gzip: z.gzipSync(input.text, { level: 9 }).toString("base64"),
    deflate: z.deflateSync(input.text, { level: 1 }).toString("base64"),
    raw: z.deflateRawSync(input.text).toString("base64"),
    brotli: z.brotliCompressSync(input.text).toString("base64"),
  }),
  // Node compressed; the worker decompresses.
  decompress: (z, B, input) => ({
    gunzip: z.gunzipSync(B.from(input.gzip, "base64")).toString(),
    inflate: z.inflateSync(B.from(input.deflate, "base64")).toString(),
    raw: z.inflateRawSync(B.from(input.raw, "base64")).toString(),
    brotli: z.brotliDecompressSync(B.from(input.brotli, "base64")).toString(),
    unzipGzip: z.unzipSync(B.from(input.gzip, "base64")).toString(),
    unzipDeflate: z.unzipSync(B.from(input.deflate, "base64")).toString(),
  }),
  // Streams: a gzip stream fed in pieces, and a gunzip stream fed Node's bytes a few at a time.
  streams: async (z, B, input) => {
    const collect = (stream) => new Promise((resolve, reject) => {
      const chunks = [];
      pipeline(stream, new Writable({ write(chunk, _e, cb) { chunks.push(chunk); cb(); } }), (error) => (error ? reject(error) : resolve(B.concat(chunks))));
    });
    const pieces = (buffer, size) => Array.from({ length: Math.ceil(buffer.length / size) }, (_, i) => buffer.subarray(i * size, (i + 1) * size));
    const gzip = z.createGzip();
    const zipped = collect(gzip);
    for (const piece of pieces(B.from(input.text), 1000)) gzip.write(piece);
    gzip.end();
    const gunzip = z.createGunzip();
    const unzipped = collect(gunzip);
    for (const piece of pieces(B.from(input.gzip, "base64"), 7)) gunzip.write(piece);
    gunzip.end();
    const brotli = Readable.from([B.from(input.text)]).pipe(z.createBrotliCompress());
    const flushing = z.createDeflate();
    const flushed = [];
    flushing.on("data", (d) => flushed.push(d));
    flushing.write("first part, ");
    await new Promise((resolve) => flushing.flush(resolve));
    const beforeEnd = B.concat(flushed).toString("base64");
    flushing.end("second part");
    await new Promise((resolve) => flushing.on("end", resolve));
    const broken = z.createInflate();
    const failed = collect(broken).then(() => "no error", (e) => e.code);
    broken.end(B.from("not zlib data"));
    return { beforeEnd, afterEnd: B.concat(flushed).toString("base64"), gzip: (await zipped).toString("base64"), gunzip: (await unzipped).toString(), brotli: (await collect(brotli)).toString("base64"), failed: await failed, isTransform: gzip instanceof Transform };
  },
  // Errors and extras as workerd gives them (the expected values were probed on workerd 1.20260426.1).
  workerdErrors: async (z, B) => {
    const fail = (f) => { try { return ["no error", f()]; } catch (e) { return [e.name, e.code, e.errno, e.message]; } };
    const plain = B.from("hello world, not compressed");
    const failAsync = (f) => new Promise((resolve) => f((e) => resolve(e ? [e.code, e.message] : "no error")));
    return {
      inflate: fail(() => z.inflateSync(plain)),
      gunzip: fail(() => z.gunzipSync(plain)),
      unzip: fail(() => z.unzipSync(plain)),
      truncatedGzip: fail(() => z.gunzipSync(z.gzipSync("hello").subarray(0, 8))),
      truncatedDeflate: fail(() => z.inflateSync(z.deflateSync("hello hello hello").subarray(0, 6))),
      truncatedBrotli: fail(() => z.brotliDecompressSync(z.brotliCompressSync("hello world hello").subarray(0, 5))),
      tooLarge: fail(() => z.gunzipSync(z.gzipSync(B.alloc(100000)), { maxOutputLength: 1000 })),
      level: fail(() => z.deflateSync("x", { level: 42 })).slice(0, 2),
      callback: await failAsync((cb) => z.inflate(plain, cb)),
      inflateTrailing: fail(() => z.inflateSync(B.concat([z.deflateSync("a"), B.from("junk")])).toString()),
      gunzipTrailing: fail(() => z.gunzipSync(B.concat([z.gzipSync("a"), B.from("junk")])).toString()),
      gunzipTwoMembers: fail(() => z.gunzipSync(B.concat([z.gzipSync("a"), z.gzipSync("b")])).toString()),
      gunzipZeros: fail(() => z.gunzipSync(B.concat([z.gzipSync("a"), B.alloc(10)])).toString()),
      brotliTrailing: fail(() => z.brotliDecompressSync(B.concat([z.brotliCompressSync("a"), B.from("junk")])).toString()),
      streamBad: await new Promise((resolve) => { const s = z.createInflate(); s.on('error', (e) => resolve([e.name, e.code, e.errno, e.message])); s.end(plain); }),
      streamTruncated: await new Promise((resolve) => { const s = z.createGunzip(); s.on('error', (e) => resolve([e.name, e.code, e.errno, e.message])); s.on('data', () => {}); s.end(z.gzipSync("hello").subarray(0, 8)); }),
      zstdBad: fail(() => z.zstdDecompressSync(plain)),
      zstdTruncated: fail(() => z.zstdDecompressSync(z.zstdCompressSync("hello hello hello hello").subarray(0, 8))),
      zstdTooLarge: fail(() => z.zstdDecompressSync(z.zstdCompressSync(B.alloc(100000)), { maxOutputLength: 1000 })),
      dictMissing: fail(() => z.inflateSync(z.deflateSync("hello", { dictionary: B.from("hello") }))),
      dictBad: fail(() => z.inflateSync(z.deflateSync("hello", { dictionary: B.from("hello") }), { dictionary: B.from("other") })),
      dictOk: fail(() => z.inflateSync(z.deflateSync("hello", { dictionary: B.from("hello") }), { dictionary: B.from("hello") }).toString()),
      rawDict: fail(() => z.inflateRawSync(z.deflateRawSync("hello", { dictionary: B.from("hello") }), { dictionary: B.from("hello") }).toString()),
      notBuffer: fail(() => z.deflateSync(42)),
      infoKeys: Object.keys(z.deflateSync("x", { info: true })),
      zstdInfo: fail(() => z.zstdDecompressSync(z.zstdCompressSync("hi", { info: true }).buffer).toString()),
      zstdParam: fail(() => z.createZstdCompress({ params: { 999: 1 } })).slice(0, 4),
      zstdEmpty: z.zstdCompressSync("").length > 0,
    };
  },
  // The module's functions and classes, in order (its constants left out).
  keys: (z) => Object.keys(z).filter((k) => !/^(Z_|BROTLI_|ZSTD_|DEFLATE$|INFLATE$|GZIP$|GUNZIP$|UNZIP$|DEFLATERAW$|INFLATERAW$|ZLIB_)/.test(k)),
  // zstd, dictionaries, params(), flush kinds and the native handle.
  extras: async (z, B) => {
    const text = "zstd and zlib extras ".repeat(200);
    const collect = (stream, chunks = []) => new Promise((resolve, reject) => { stream.on("data", (c) => chunks.push(c)); stream.on("end", () => resolve(B.concat(chunks))); stream.on("error", reject); });
    const zs = z.createZstdCompress();
    const packed = collect(zs);
    zs.write(text.slice(0, 100));
    await new Promise((resolve) => zs.flush(resolve));
    zs.end(text.slice(100));
    const zstdStream = z.zstdDecompressSync(await packed).toString() === text;
    const zd = z.createZstdDecompress();
    const unpacked = collect(zd);
    const frame = z.zstdCompressSync(text);
    for (let i = 0; i < frame.length; i += 3) zd.write(frame.subarray(i, i + 3));
    zd.end();
    const zstdPieces = (await unpacked).toString() === text;
    const dictionary = B.from("zstd and zlib extras ");
    const withDict = z.deflateSync(text, { dictionary });
    const dictSmaller = withDict.length <= z.deflateSync(text).length;
    const d = z.createDeflate({ level: 1 });
    const paramsOut = collect(d);
    d.write(text.slice(0, 1000));
    await new Promise((resolve) => d.params(9, z.constants.Z_DEFAULT_STRATEGY, resolve));
    d.end(text.slice(1000));
    const afterParams = z.inflateSync(await paramsOut).toString() === text;
    const strategies = [1, 2, 3, 4].map((strategy) => z.inflateSync(z.deflateSync(text, { strategy })).toString() === text);
    const small = z.inflateRawSync(z.deflateRawSync(text, { windowBits: 9, memLevel: 1 }), { windowBits: 9 }).toString() === text;
    const g = z.createGzip();
    const full = collect(g);
    g.write("part one ");
    await new Promise((resolve) => g.flush(z.constants.Z_FULL_FLUSH, resolve));
    g.end("part two");
    const fullFlush = z.gunzipSync(await full).toString();
    const handle = z.createDeflateRaw({ level: 0 })._handle;
    const info = z.gzipSync("abc", { info: true });
    return { zstdStream, zstdPieces, dictSmaller, afterParams, strategies, small, fullFlush, handle: ["writeSync", "write", "params", "reset", "close", "initialize"].map((m) => typeof handle[m]), info: [B.isBuffer(info.buffer), info.engine instanceof z.Gzip, z.gunzipSync(info.buffer).toString()] };
  },
  // A decompression bomb: the output stops at maxOutputLength (128 MiB by default).
  bomb: (z, B, input) => {
    const bomb = B.from(input.bomb, "base64");
    const fail = (f) => { try { return "no error: " + f().length; } catch (e) { return e.code ?? e.message; } };
    const failStream = (stream) => new Promise((resolve) => { stream.on("error", (e) => resolve(e.code)); stream.on("data", () => {}); stream.on("end", () => resolve("no error")); stream.end(bomb); });
    return { small: fail(() => z.gunzipSync(bomb, { maxOutputLength: 1 << 20 })), standard: fail(() => z.gunzipSync(bomb)), brotli: fail(() => z.brotliDecompressSync(B.from(input.brotliBomb, "base64"), { maxOutputLength: 1 << 20 })), info: fail(() => z.gunzipSync(bomb, { info: true, maxOutputLength: 1 << 20 })) };
  },
};`;

test("node:zlib output crosses between the worker and Node; streams; bombs stop at maxOutputLength", { timeout: scaled(60_000) }, async (t) => {
  const worker = await useWorker(t, { script: workerScript(EXTRA), compatibilityFlags: ["nodejs_compat"], limits: { memoryMb: 256 } });
  const text = TEXT;
  const compressed = (await call(worker, "compress", { text })).value;
  assert.equal(zlib.gunzipSync(Buffer.from(compressed.gzip, "base64")).toString(), text);
  assert.equal(zlib.inflateSync(Buffer.from(compressed.deflate, "base64")).toString(), text);
  assert.equal(zlib.inflateRawSync(Buffer.from(compressed.raw, "base64")).toString(), text);
  assert.equal(zlib.brotliDecompressSync(Buffer.from(compressed.brotli, "base64")).toString(), text);

  const input = {
    text,
    gzip: zlib.gzipSync(text).toString("base64"),
    deflate: zlib.deflateSync(text).toString("base64"),
    raw: zlib.deflateRawSync(text).toString("base64"),
    brotli: zlib.brotliCompressSync(text).toString("base64"),
  };
  const { value: decompressed, error } = await call(worker, "decompress", input);
  assert.equal(error, undefined);
  assert.deepEqual(decompressed, { gunzip: text, inflate: text, raw: text, brotli: text, unzipGzip: text, unzipDeflate: text });

  const { value: streamed, error: streamError } = await call(worker, "streams", input);
  assert.equal(streamError, undefined);
  assert.equal(zlib.gunzipSync(Buffer.from(streamed.gzip, "base64")).toString(), text);
  assert.equal(zlib.brotliDecompressSync(Buffer.from(streamed.brotli, "base64")).toString(), text);
  assert.equal(streamed.gunzip, text);
  assert.equal(streamed.failed, "Z_DATA_ERROR");
  assert.equal(streamed.isTransform, true);
  // A flushed deflate stream is readable up to the flush before the stream ends.
  assert.equal(zlib.inflateSync(Buffer.from(streamed.beforeEnd, "base64"), { finishFlush: zlib.constants.Z_SYNC_FLUSH }).toString(), "first part, ");
  assert.equal(zlib.inflateSync(Buffer.from(streamed.afterEnd, "base64")).toString(), "first part, second part");

  const zeros = Buffer.alloc(160 * 1024 * 1024);
  const bombs = { bomb: zlib.gzipSync(zeros, { level: 1 }).toString("base64"), brotliBomb: zlib.brotliCompressSync(zeros.subarray(0, 16 << 20), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }).toString("base64") };
  const { value: bomb, error: bombError } = await call(worker, "bomb", bombs);
  assert.equal(bombError, undefined);
  // workerd's one-shot calls throw "Memory limit exceeded" (the output never reaches the worker's
  // heap); the engine path (option info) is Node's, ERR_BUFFER_TOO_LARGE.
  assert.deepEqual(bomb, { small: "Memory limit exceeded", standard: "Memory limit exceeded", brotli: "Memory limit exceeded", info: "ERR_BUFFER_TOO_LARGE" });
});

test("node:zlib errors, zstd, dictionaries and params behave as on workerd", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, { script: workerScript(EXTRA), compatibilityFlags: ["nodejs_compat"] });
  const { value: errors, error } = await call(worker, "workerdErrors");
  assert.equal(error, undefined);
  // Probed on workerd 1.20260426.1 with the same code.
  assert.deepEqual(errors, {
    inflate: ["Error", null, null, "incorrect header check"],
    gunzip: ["Error", null, null, "incorrect header check"],
    unzip: ["Error", null, null, "incorrect header check"],
    truncatedGzip: ["Error", null, null, "unexpected end of file"],
    truncatedDeflate: ["Error", null, null, "unexpected end of file"],
    truncatedBrotli: ["Error", null, null, "Unexpected end of file"],
    tooLarge: ["RangeError", null, null, "Memory limit exceeded"],
    level: ["RangeError", null],
    callback: [null, "incorrect header check"],
    inflateTrailing: ["no error", "a"],
    gunzipTrailing: ["Error", null, null, "incorrect header check"],
    gunzipTwoMembers: ["no error", "ab"],
    gunzipZeros: ["no error", "a"],
    brotliTrailing: ["no error", "a"],
    streamBad: ["Error", "Z_DATA_ERROR", -3, "incorrect header check"],
    streamTruncated: ["Error", "Z_BUF_ERROR", -5, "unexpected end of file"],
    zstdBad: ["Error", null, null, "Zstd decompression failed: Unknown frame descriptor"],
    zstdTruncated: ["Error", null, null, "unexpected end of file"],
    zstdTooLarge: ["RangeError", null, null, "Memory limit exceeded"],
    dictMissing: ["Error", null, null, "Missing dictionary"],
    dictBad: ["Error", null, null, "Bad dictionary"],
    dictOk: ["no error", "hello"],
    rawDict: ["no error", "hello"],
    notBuffer: ["TypeError", null, null, "Failed to execute 'zlibSync' on 'ZlibUtil': parameter 1 is not of type 'string or ArrayBuffer or ArrayBufferView'."],
    infoKeys: ["engine", "buffer"],
    zstdInfo: ["no error", "hi"],
    zstdParam: ["RangeError", "ERR_ZSTD_INVALID_PARAM", null, "999 is not a valid Zstd parameter"],
    zstdEmpty: true,
  });
  const { value: extras, error: extrasError } = await call(worker, "extras");
  assert.equal(extrasError, undefined);
  assert.deepEqual(extras, {
    zstdStream: true,
    zstdPieces: true,
    dictSmaller: true,
    afterParams: true,
    strategies: [true, true, true, true],
    small: true,
    fullFlush: "part one part two",
    handle: ["function", "function", "function", "function", "function", "function"],
    info: [true, true, "abc"],
  });
  // workerd's node:zlib members, in its order (probed on workerd 1.20260426.1).
  assert.deepEqual((await call(worker, "keys")).value, ["crc32", "codes", "constants", "Gzip", "Gunzip", "Deflate", "DeflateRaw", "Inflate", "InflateRaw", "Unzip", "BrotliCompress", "BrotliDecompress", "ZstdCompress", "ZstdDecompress", "createGzip", "createGunzip", "createDeflate", "createDeflateRaw", "createInflate", "createInflateRaw", "createUnzip", "createBrotliCompress", "createBrotliDecompress", "createZstdCompress", "createZstdDecompress", "inflate", "inflateSync", "deflate", "deflateSync", "inflateRaw", "inflateRawSync", "deflateRaw", "deflateRawSync", "gzip", "gzipSync", "gunzip", "gunzipSync", "unzip", "unzipSync", "brotliDecompress", "brotliDecompressSync", "brotliCompress", "brotliCompressSync", "zstdCompress", "zstdCompressSync", "zstdDecompress", "zstdDecompressSync"]);
});

test("node:zlib's and CompressionStream's compressed bytes are workerd's (Node's zlib), at every level", { timeout: scaled(30_000) }, async (t) => {
  // Varied text (a fixed pseudo-random sequence of words), where zlib forks differ in what they find.
  function makeText() {
    let s = "";
    let x = 12345;
    for (let i = 0; i < 4000; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      s += ["alpha", "beta", "gamma", "delta", " ", "\n", String(x % 1000)][x % 7];
    }
    return s;
  }
  const worker = await useWorker(t, {
    script: `import zlib from "node:zlib"; import { Buffer } from "node:buffer";
    export default { async fetch() {
      const s = (${makeText})();
      const out = {};
      for (let level = 0; level <= 9; level++) out[level] = zlib.deflateRawSync(Buffer.from(s), { level }).toString("hex");
      out.gzip = zlib.gzipSync("water, water, everywhere, nor any drop to drink").toString("base64");
      const cs = new CompressionStream("deflate-raw");
      const w = cs.writable.getWriter(); w.write(new TextEncoder().encode(s)); w.close();
      out.stream = Buffer.from(await new Response(cs.readable).arrayBuffer()).toString("hex");
      return Response.json(out);
    } }`,
    compatibilityDate: "2025-06-01",
    compatibilityFlags: ["nodejs_compat"],
  });
  const got = await (await dispatch(worker, "http://localhost/")).json();
  const s = makeText();
  // Node's zlib gives what workerd gave for the same code (its deflateRawSync at each level, and
  // workerd's zlib test's gzip of that line, OS byte 3).
  for (let level = 0; level <= 9; level++) assert.equal(got[level], zlib.deflateRawSync(Buffer.from(s), { level }).toString("hex"), `level ${level}`);
  assert.equal(got.gzip, "H4sIAAAAAAAAAytPLEkt0lEoh1CpZalFleUZqUWpOgp5+UUKiXmVCilF+QUKJfkKKUWZedkAqpLyPC8AAAA=");
  assert.equal(got.stream, got[6]);
  // Lengths workerd printed for levels 1, 6 and 9.
  assert.deepEqual([got[1].length / 2, got[6].length / 2, got[9].length / 2], [3951, 3308, 3237]);
});
