// node:zlib under nodejs_compat, checked against Node's own node:zlib. Compressed bytes may
// differ between zlib implementations, so what crosses is round trips: the worker's output is
// decompressed by Node, Node's by the worker; results that do not depend on the encoder
// (round-tripped text, crc32, errors for bad input) are compared as JSON with Node's.
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
  errors: `async (z, B) => {
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
    };
  }`,
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

test("node:zlib gives Node's results: round trips, crc32, constants, errors", { timeout: scaled(30_000) }, async (t) => {
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
  // A decompression bomb: the output stops at maxOutputLength (128 MiB by default).
  bomb: (z, B, input) => {
    const bomb = B.from(input.bomb, "base64");
    const fail = (f) => { try { return "no error: " + f().length; } catch (e) { return e.code; } };
    return { small: fail(() => z.gunzipSync(bomb, { maxOutputLength: 1 << 20 })), standard: fail(() => z.gunzipSync(bomb)), brotli: fail(() => z.brotliDecompressSync(B.from(input.brotliBomb, "base64"), { maxOutputLength: 1 << 20 })) };
  },
};`;

test("node:zlib output crosses between the worker and Node; streams; bombs stop at maxOutputLength", { timeout: 60_000 }, async (t) => {
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
  assert.deepEqual(bomb, { small: "ERR_BUFFER_TOO_LARGE", standard: "ERR_BUFFER_TOO_LARGE", brotli: "ERR_BUFFER_TOO_LARGE" });
});
