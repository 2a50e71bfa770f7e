// enable_streams_nodejs_v24_compat (a flag with no date): node:stream as Node 24 has it where
// workerd's flag changes it, and without the flag as workerd's (Node 22's) streams. The expected
// values were printed by workerd (Miniflare 4.20260426.0's binary) from the same worker code, with
// and without the flag; with it they are also what Node 24 itself prints.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

const BODY = `
  const { Readable, Writable, Transform, PassThrough } = await import("node:stream");
  const out = {};
  const tick = () => new Promise((r) => setTimeout(r, 5));
  // 1, 2: unknown default encodings
  for (const [name, C] of [["readable", Readable], ["writable", Writable]]) {
    try { new C({ defaultEncoding: "nope" }); out[name + "Encoding"] = "ok"; } catch (e) { out[name + "Encoding"] = e.code + ": " + e.message; }
  }
  // 3: write() callback argument; end(cb) argument when finished / pending / errored
  const seen = [];
  const show = (v) => v === undefined ? "undefined" : v === null ? "null" : v.code ?? v.message;
  const w = new Writable({ write(chunk, enc, cb) { cb(); } });
  w.write("a", (...args) => seen.push(["write", args.length, show(args[0])]));
  w.end((...args) => seen.push(["end", args.length, show(args[0])]));
  await tick();
  w.end((...args) => seen.push(["end after finish", args.length, args[0] === undefined ? "undefined" : args[0] === null ? "null" : args[0].code]));
  await tick();
  const errored = new Writable({ write(chunk, enc, cb) { cb(new Error("boom")); } });
  errored.on("error", () => {});
  errored.write("x");
  await tick();
  errored.end((...args) => seen.push(["end errored", args.length, args[0] === undefined ? "undefined" : args[0] === null ? "null" : args[0].message]));
  await tick();
  out.callbacks = seen;
  // 4: write()'s return value when _write empties the buffer synchronously (highWaterMark 1)
  const sync = new Writable({ highWaterMark: 1, write(chunk, enc, cb) { cb(); } });
  out.syncWriteReturns = [sync.write("ab"), sync.write("c")];
  // 5: a transform that pushes null in its transform
  const order = [];
  const t = new Transform({ transform(chunk, enc, cb) { this.push(chunk); this.push(null); cb(); } });
  t.on("data", (d) => order.push("data " + d));
  t.on("end", () => order.push("end"));
  t.write("q", () => order.push("write cb"));
  order.push("after write");
  await tick();
  out.pushNullOrder = order;
  // 6: pipe into a destination whose write throws
  const src = new Readable({ read() {} });
  const dest = new Writable({ write(chunk, enc, cb) { cb(); } });
  dest.write = () => { throw new Error("write threw"); };
  let destError = null;
  dest.on("error", (e) => (destError = e.message));
  src.pipe(dest);
  let thrown = null;
  try { src.push("z"); await tick(); } catch (e) { thrown = e.message; }
  out.pipeThrow = { destError, destroyed: dest.destroyed, thrown };
  // 7: the states' layout (own keys, accessors on the prototype) and the default high water marks
  const ws = new Writable()._writableState, rs = new Readable()._readableState;
  const accessors = (state) => Object.entries(Object.getOwnPropertyDescriptors(Object.getPrototypeOf(state))).filter(([, d]) => d.get);
  out.layout = {
    writableKeys: Object.keys(ws),
    writableJson: JSON.stringify(ws),
    enumerableFlags: accessors(ws).filter(([, d]) => d.enumerable).map(([k]) => k),
    // workerd's readable state also has its own bufferIndex (Node 24 buffers in an array; workerbox keeps readable-stream's BufferList).
    readableKeys: Object.keys(rs).filter((k) => k !== "bufferIndex"),
    readableAccessors: ["flowing", "errored", "defaultEncoding", "decoder", "encoding", "paused"].map((k) => [k, accessors(rs).some(([name]) => name === k), rs[k]]),
    highWaterMarks: [ws.highWaterMark, rs.highWaterMark, new Writable({ objectMode: true })._writableState.highWaterMark],
  };
  return out;`;

async function run(t, flags) {
  const logs = [];
  const script = `export default { async fetch() { const r = await (async () => { ${BODY} })(); return Response.json(r); } }`;
  const worker = await useWorker(t, { script, compatibilityDate: "2025-10-01", compatibilityFlags: ["nodejs_compat", ...flags], onLog: (level, message) => logs.push(message) });
  return { result: await (await dispatch(worker, "http://localhost/")).json(), logs };
}

const FLAGS = ["objectMode", "finalCalled", "needDrain", "ending", "ended", "finished", "destroyed", "decodeStrings", "writing", "sync", "bufferProcessing", "constructed", "prefinished", "errorEmitted", "emitClose", "autoDestroy", "closed", "closeEmitted", "allBuffers", "allNoop"];
// The WritableState's flags are enumerable accessors without the flag, non-enumerable with it.
const layout = (enumerableFlags) => ({
  writableKeys: ["highWaterMark", "length", "corked", "onwrite", "writelen", "bufferedIndex", "pendingcb"],
  writableJson: '{"highWaterMark":65536,"length":0,"corked":0,"writelen":0,"bufferedIndex":0,"pendingcb":0}',
  enumerableFlags,
  readableKeys: ["highWaterMark", "buffer", "length", "pipes", "awaitDrainWriters"],
  readableAccessors: [["flowing", true, null], ["errored", true, null], ["defaultEncoding", true, "utf8"], ["decoder", true, null], ["encoding", true, null], ["paused", true, false]],
  highWaterMarks: [65536, 65536, 16],
});
const common = { pushNullOrder: ["data q", "after write", "end", "write cb"] };
const callbacks = (write) => [["write", 1, write], ["end", 1, "null"], ["end after finish", 1, "ERR_STREAM_ALREADY_FINISHED"], ["end errored", 1, "Cannot call end after a stream was destroyed"]];

test("without enable_streams_nodejs_v24_compat node:stream behaves as workerd's", async (t) => {
  const { result, logs } = await run(t, []);
  assert.deepEqual(result, {
    readableEncoding: "ok",
    writableEncoding: "ok",
    callbacks: callbacks("undefined"),
    syncWriteReturns: [false, false],
    ...common,
    pipeThrow: { destError: null, destroyed: false, thrown: null },
    layout: layout(FLAGS),
  });
  // The destination's throwing write() is not caught: it is the worker's uncaught error.
  assert.ok(logs.some((line) => /Uncaught Error: write threw/.test(line)), logs.join("\n"));
});

test("with enable_streams_nodejs_v24_compat node:stream behaves as Node 24's", async (t) => {
  const { result, logs } = await run(t, ["enable_streams_nodejs_v24_compat"]);
  assert.deepEqual(result, {
    readableEncoding: "ERR_UNKNOWN_ENCODING: Unknown encoding: nope",
    writableEncoding: "ERR_UNKNOWN_ENCODING: Unknown encoding: nope",
    callbacks: callbacks("null"),
    syncWriteReturns: [true, true],
    ...common,
    pipeThrow: { destError: "write threw", destroyed: true, thrown: null },
    layout: layout([]),
  });
  assert.ok(!logs.some((line) => /write threw/.test(line)), logs.join("\n"));
});
