// nodejs_compat's node: modules, each case run twice — inside a worker and in this Node process —
// and the JSON of the two results compared: the worker's modules must give what Node gives.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, durableObject } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const IMPORTS = `
import { Buffer as B, isUtf8, isAscii, transcode } from "node:buffer";
import EventEmitter, { once } from "node:events";
import { StringDecoder } from "node:string_decoder";
import path from "node:path";
import posix from "node:path/posix";
import qs from "node:querystring";
import { Readable, Writable, Transform, PassThrough, pipeline, finished } from "node:stream";
import * as streamPromises from "node:stream/promises";
import * as consumers from "node:stream/consumers";
import * as timers from "node:timers";
import * as timersPromises from "node:timers/promises";
import dc from "node:diagnostics_channel";
import util, { promisify, callbackify, inspect, format, types, isDeepStrictEqual } from "node:util";
import assert from "node:assert";
import strictAssert from "node:assert/strict";
import url, { fileURLToPath, pathToFileURL } from "node:url";
`;

// Each case: [name, body of an async function returning JSON-able data].
const CASES = [
  ["Buffer encodings", `
    const text = "héllo wörld ✓ 𝄞";
    const out = {};
    for (const enc of ["utf8", "hex", "base64", "base64url", "latin1", "ascii", "utf16le", "ucs2", "binary"]) out[enc] = B.from(text).toString(enc);
    out.fromBase64 = [...B.from("aGVsbG8/Pz4+", "base64")];
    out.fromBase64url = [...B.from("aGVsbG8_Pz4-", "base64url")];
    out.fromHex = [...B.from("00ff10zz", "hex")];
    out.fromLatin1 = [...B.from("ÿé", "latin1")];
    out.byteLength = [B.byteLength(text), B.byteLength("aGk=", "base64"), B.byteLength("abcd", "hex")];
    return out;`],
  ["Buffer reads, writes and comparisons", `
    const b = B.alloc(16);
    b.writeUInt32LE(0xdeadbeef, 0); b.writeInt16BE(-2, 4); b.writeDoubleLE(Math.PI, 6); b.writeUInt8(7, 14);
    const c = B.from([1, 2, 3]);
    return {
      bytes: [...b], u32: b.readUInt32LE(0), i16: b.readInt16BE(4), dbl: b.readDoubleLE(6),
      big: B.from([1,2,3,4,5,6,7,8]).readBigUInt64BE(0).toString(),
      compare: [B.compare(c, B.from([1, 2, 4])), c.compare(B.from([1, 2])), c.equals(B.from([1, 2, 3]))],
      concat: [...B.concat([c, B.from("hi")], 4)], index: [B.from("abcabc").indexOf("ca"), B.from("abcabc").lastIndexOf("b"), B.from("abc").includes("bc")],
      json: c.toJSON(), sub: [...B.from("hello").subarray(1, 3)], fill: B.alloc(5, "ab").toString(),
      isBuffer: [B.isBuffer(c), B.isBuffer(new Uint8Array(1))], isEncoding: [B.isEncoding("utf8"), B.isEncoding("nope")],
      swap: [...B.from([1, 2, 3, 4]).swap16()], utf8: [isUtf8(B.from("✓")), isUtf8(B.from([0xff])), isAscii(B.from("abc")), isAscii(B.from("é"))],
      transcode: [...transcode(B.from("hé"), "utf8", "latin1")],
      inspectable: typeof B.prototype[Symbol.for("nodejs.util.inspect.custom")],
    };`],
  ["path", `
    return {
      join: path.join("/a/b", "../c", "./d.txt"), resolve: path.resolve("/a", "b", "../c"), normalize: path.normalize("/a//b/../c/."),
      relative: path.relative("/a/b/c", "/a/d"), parse: path.parse("/home/u/file.tar.gz"), format: path.format({ dir: "/x", name: "y", ext: ".z" }),
      ext: [path.extname("a.b.c"), path.extname(".hidden"), path.extname("noext")], base: [path.basename("/a/b.js", ".js"), path.dirname("/a/b/c")],
      abs: [path.isAbsolute("/a"), path.isAbsolute("a")], sep: path.sep, delimiter: path.delimiter, posix: posix.join("a", "b"), same: path.posix === posix,
    };`],
  ["querystring", `
    return {
      parse: { ...qs.parse("a=1&a=2&b=x%20y&c=&d&e=%E2%9C%93&f=a+b") },
      stringify: qs.stringify({ a: [1, 2], b: "x y", c: "", d: "✓!'()*", e: true }),
      custom: qs.stringify({ a: 1, b: 2 }, ";", ":"), parseCustom: { ...qs.parse("a:1;b:2", ";", ":") },
      escape: qs.escape("a b&c=d/✓!'()*~"), unescape: qs.unescape("a%20b%zz%E2%9C%93"),
    };`],
  ["string_decoder", `
    const out = [];
    const utf8 = new StringDecoder("utf8");
    const euro = B.from("€𝄞");
    for (const byte of euro) out.push(utf8.write(B.from([byte])));
    out.push(utf8.end());
    const broken = new StringDecoder("utf8");
    out.push(broken.write(B.from([0xe2, 0x82])), broken.end());
    const utf16 = new StringDecoder("utf16le");
    const bytes16 = B.from("a€", "utf16le");
    out.push(utf16.write(bytes16.subarray(0, 3)), utf16.write(bytes16.subarray(3)), utf16.end());
    const b64 = new StringDecoder("base64");
    out.push(b64.write(B.from("hell")), b64.end(B.from("o")));
    const hex = new StringDecoder("hex");
    out.push(hex.write(B.from([1, 255])));
    return out;`],
  ["events", `
    const e = new EventEmitter();
    const order = [];
    e.on("x", (v) => order.push("a" + v));
    e.prependListener("x", (v) => order.push("b" + v));
    e.once("x", (v) => order.push("c" + v));
    e.emit("x", 1); e.emit("x", 2);
    let thrown;
    try { e.emit("error", new Error("boom")); } catch (error) { thrown = error.message; }
    let unhandled;
    try { e.emit("error", "plain"); } catch (error) { unhandled = error.message; }
    setTimeout(() => e.emit("later", 1, 2), 1);
    const args = await once(e, "later");
    return { order, count: e.listenerCount("x"), names: e.eventNames(), thrown, unhandled, args, max: EventEmitter.defaultMaxListeners,
      isClass: typeof EventEmitter.EventEmitter, hasOn: typeof EventEmitter.on, raw: e.rawListeners("x").length };`],
  ["stream pipeline, transforms, finished and consumers", `
    const seen = [];
    await streamPromises.pipeline(
      Readable.from(["ab", "cd", "ef"]),
      new Transform({ transform(chunk, encoding, callback) { callback(null, String(chunk).toUpperCase()); } }),
      new Writable({ write(chunk, encoding, callback) { seen.push(String(chunk)); callback(); } }),
    );
    const objects = [];
    for await (const item of Readable.from([{ a: 1 }, { b: 2 }])) objects.push(item);
    const pass = new PassThrough();
    const text = consumers.text(pass);
    pass.write("x"); pass.end("y");
    const failed = await new Promise((resolve) => {
      const r = new Readable({ read() { this.destroy(new Error("broken")); } });
      finished(r, (error) => resolve(error?.message));
      r.resume();
    });
    const cb = await new Promise((resolve) => pipeline(Readable.from(["q"]), new PassThrough(), (error) => resolve(error ?? "ok")));
    return { seen, objects, text: await text, failed, cb, json: await consumers.json(Readable.from(['{"k":', '[1]}'])) };`],
  ["timers", `
    const order = [];
    const t = timers.setTimeout(() => order.push("timeout"), 1);
    const hadRef = t.hasRef(); t.unref();
    timers.setImmediate(() => order.push("immediate"));
    const refreshed = timers.setTimeout(() => order.push("refreshed"), 1);
    refreshed.refresh();
    const cleared = timers.setTimeout(() => order.push("never"), 1);
    timers.clearTimeout(cleared);
    const value = await timersPromises.setTimeout(5, "value");
    let aborted;
    const controller = new AbortController();
    const pending = timersPromises.setTimeout(1000, null, { signal: controller.signal }).catch((error) => (aborted = [error.name, error.code]));
    controller.abort();
    await pending;
    const ticks = [];
    for await (const tick of timersPromises.setInterval(1, "t")) { ticks.push(tick); if (ticks.length === 3) break; }
    return { order: order.sort(), hadRef, value, aborted, ticks };`],
  ["diagnostics_channel", `
    const got = [];
    const onMessage = (message, name) => got.push([message, name]);
    dc.subscribe("wb:test", onMessage);
    const channel = dc.channel("wb:test");
    const before = [channel.hasSubscribers, dc.hasSubscribers("wb:test"), dc.hasSubscribers("none")];
    channel.publish({ n: 1 });
    dc.unsubscribe("wb:test", onMessage);
    channel.publish({ n: 2 });
    const traced = [];
    const tc = dc.tracingChannel("wb:trace");
    tc.subscribe({ start: (c) => traced.push("start " + c.x), end: (c) => traced.push("end " + c.result), asyncStart() {}, asyncEnd: (c) => traced.push("asyncEnd " + c.result), error: (c) => traced.push("error " + c.error.message) });
    tc.traceSync(() => 42, { x: 1 });
    await tc.tracePromise(async () => 7, { x: 2 });
    try { tc.traceSync(() => { throw new Error("bad"); }, { x: 3 }); } catch {}
    return { got, before, after: channel.hasSubscribers, traced };`],
  ["util.inspect and util.format of common values", `
    class Point { constructor() { this.x = 1; this.y = 2; } }
    const circular = { name: "loop" }; circular.self = circular;
    const values = [
      "text", 42, -0, 12n, true, null, undefined, Symbol("s"), [1, 2, 3], [], {}, { a: 1, "b-c": "it's", [Symbol("k")]: 2 },
      { nested: { deeper: { deepest: { gone: 1 } } } }, { a: { b: { c: {} } } }, new Map([["k", { v: 1 }]]), new Set([1, "two"]),
      new Point(), Object.create(null), [undefined, null, NaN], Array.from({ length: 30 }, (_, i) => i * 7), Array.from({ length: 120 }, (_, i) => i),
      ["apple", "banana", "cherry", "date", "elderberry", "fig", "grape", "honeydew"],
      { long: "x".repeat(50), other: "y".repeat(30) }, new Uint8Array([1, 2, 3]), B.from("hi"), new Date(0), /re/gi, circular,
      { fn() {}, arrow: () => 1, klass: Point }, [[1, [2, [3, [4]]]]], new Boolean(false), new String("boxed"),
      { quote: 'say "hi"', both: "it" + String.fromCharCode(39) + 's "x"', control: "a" + String.fromCharCode(10) + "b" + String.fromCharCode(9, 27) + "c" },
    ];
    return {
      inspected: values.map((v) => inspect(v)),
      deep: inspect({ a: { b: { c: { d: { e: 1 } } } } }, { depth: 0 }),
      infinite: inspect({ a: { b: { c: { d: { e: 1 } } } } }, { depth: Infinity }),
      formatted: [format("%s is %d years and %i, %f %j %O %%", "Bob", 42.5, 42.5, "1.5", { a: 1 }, [1]), format("a", "b", 3, { c: 1 }), format("%s", 12n), format(1, 2)],
      custom: inspect({ [inspect.custom]: () => "CUSTOM" }),
    };`],
  ["util helpers and types", `
    const readFile = (name, callback) => setTimeout(() => (name === "bad" ? callback(new Error("no " + name)) : callback(null, "content of " + name)), 1);
    const read = promisify(readFile);
    let rejected;
    try { await read("bad"); } catch (error) { rejected = error.message; }
    const cb = await new Promise((resolve) => callbackify(async (x) => x * 2)(21, (error, value) => resolve([error, value])));
    const cbError = await new Promise((resolve) => callbackify(async () => { throw new Error("nope"); })((error) => resolve(error.message)));
    function Base() {} Base.prototype.hello = function () { return "hello"; };
    function Derived() {} util.inherits(Derived, Base);
    return {
      read: await read("a.txt"), rejected, cb, cbError, inherits: [new Derived().hello(), Derived.super_ === Base],
      types: [types.isDate(new Date()), types.isDate({}), types.isRegExp(/x/), types.isPromise(Promise.resolve()), types.isMap(new Map()), types.isSet(new Set()),
        types.isProxy(new Proxy({}, {})), types.isProxy({}), types.isTypedArray(new Uint8Array()), types.isUint8Array(new Uint8Array()), types.isUint8Array(new Int8Array()),
        types.isAsyncFunction(async () => {}), types.isGeneratorFunction(function* () {}), types.isNativeError(new TypeError()), types.isBoxedPrimitive(new Number(1)),
        types.isArrayBuffer(new ArrayBuffer(1)), types.isAnyArrayBuffer(new ArrayBuffer(1)), types.isMapIterator(new Map().keys()), types.isDataView(new DataView(new ArrayBuffer(1)))],
      deepEqual: [isDeepStrictEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), isDeepStrictEqual({ a: 1 }, { a: "1" }), isDeepStrictEqual(new Map([[{ k: 1 }, 2]]), new Map([[{ k: 1 }, 2]])),
        isDeepStrictEqual(new Set([1, { x: 1 }]), new Set([{ x: 1 }, 1])), isDeepStrictEqual([1, 2], [2, 1]), isDeepStrictEqual(new Date(1), new Date(1)), isDeepStrictEqual(NaN, NaN),
        isDeepStrictEqual(Object.create(null), {}), isDeepStrictEqual(new Uint8Array([1]), new Uint8Array([1])), isDeepStrictEqual(new Error("a"), new Error("a")), isDeepStrictEqual(new Error("a"), new Error("b"))],
      strip: util.stripVTControlCharacters(String.fromCharCode(27) + "[31mred" + String.fromCharCode(27) + "[39m"), usv: util.toUSVString("a" + String.fromCharCode(0xd800) + "b"),
    };`],
  ["assert", `
    const caught = (fn) => { try { fn(); return "no throw"; } catch (error) { return [error.name, error.code, error.message, error.operator, error.generatedMessage]; } };
    // node:assert follows workerd where workerd differs from Node (always strict, its own
    // messages; __test__/node-misc-workerd.test.mjs): only the error's kind is compared for those.
    const failed = (fn) => { try { fn(); return "no throw"; } catch (error) { return [error.name, error.code]; } };
    return [
      failed(() => assert.strictEqual(1, 2)), caught(() => assert.strictEqual("a", "a")), caught(() => assert.notEqual(1, 2)),
      caught(() => assert.deepStrictEqual({ a: [1] }, { a: [1] })), failed(() => assert.deepStrictEqual({ a: 1 }, { a: "1" })[0]),
      caught(() => assert.ok(0, "custom message")), caught(() => assert(true)), caught(() => assert.throws(() => { throw new TypeError("bad"); }, TypeError)),
      caught(() => assert.throws(() => { throw new TypeError("bad"); }, /bad/)), caught(() => assert.throws(() => { throw new TypeError("bad"); }, { name: "TypeError", message: "bad" })),
      caught(() => assert.throws(() => {})), caught(() => assert.doesNotThrow(() => {})), caught(() => assert.match("abc", /b/)), failed(() => assert.notStrictEqual(1, 1)[0]),
      failed(() => strictAssert.equal(1, "1")[0]), caught(() => assert.fail("boom")), caught(() => assert.ifError(null)), await assert.rejects(Promise.reject(new Error("r")), /r/).then(() => "rejected as expected"),
      await assert.doesNotReject(Promise.resolve(1)).then(() => "resolved as expected"), typeof assert.AssertionError, strictAssert === assert.strict,
    ];`],
  ["url", `
    const parsed = ["http://user:pw@Example.com:8080/p/a/t/h?query=string&a=1#hash", "/relative/path?x=1#frag", "https://example.com", "mailto:someone@example.com", "?only=query", "//host.example/x"];
    return {
      parse: parsed.map((u) => ({ ...url.parse(u) })), parseQuery: url.parse("http://x.com/?a=1&a=2&b=3", true).query,
      resolve: [url.resolve("/one/two/three", "four"), url.resolve("http://example.com/", "/one"), url.resolve("http://example.com/one", "/two"), url.resolve("http://example.com/a/b", "../c")],
      format: [url.format({ protocol: "https", hostname: "example.com", pathname: "/some/path", query: { page: 1, format: "json" } }), url.format(new URL("https://a:b@測試.example/x?y#z"), { auth: false, unicode: true, fragment: false })],
      files: [fileURLToPath("file:///tmp/a%20b.txt"), pathToFileURL("/tmp/a b#c.txt").href], domains: [url.domainToASCII("español.com"), url.domainToUnicode("xn--espaol-zwa.com"), url.domainToASCII("xn--iñvalid.com")],
      http: url.urlToHttpOptions(new URL("https://a:b@example.com:8443/p?q=1#h")),
    };`],
];

// The worker follows current Node (24+, what users run). Older Nodes running these tests print two
// things differently, which are rewritten to today's form before comparing: symbol keys in
// brackets (`[Symbol(k)]: 2`, before 24) and deep-equality diffs without a final newline (before 22).
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
function asCurrentNode(value) {
  if (typeof value === "string") {
    let text = value;
    if (NODE_MAJOR < 24) text = text.replace(/\[(Symbol\([^)]*\))\]: /g, "$1: ");
    if (NODE_MAJOR < 22 && /^Expected values to be (strictly|loosely) deep-equal:\n\+ actual - expected\n/.test(text) && !text.endsWith("\n")) text += "\n";
    return text;
  }
  if (Array.isArray(value)) return value.map(asCurrentNode);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asCurrentNode(v)]));
  return value;
}

function moduleSource(wrap) {
  const functions = CASES.map(([, body], i) => `async function case${i}() { ${body} }`).join("\n");
  return `${IMPORTS}\n${functions}\nconst cases = [${CASES.map((_, i) => `case${i}`).join(", ")}];\n${wrap}`;
}

test("node: modules give the same results inside a worker as in Node", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, {
    script: moduleSource(`export default { async fetch(request) {
      const i = Number(new URL(request.url).searchParams.get("case"));
      try { return Response.json({ value: await cases[i]() }); } catch (error) { return Response.json({ error: String(error.stack) }); }
    } }`),
    compatibilityFlags: ["nodejs_compat"],
  });
  const url = "data:text/javascript;base64," + Buffer.from(moduleSource("export { cases };").replaceAll("from \"node:path/posix\"", "from \"node:path/posix\"")).toString("base64");
  const { cases } = await import(url);
  for (let i = 0; i < CASES.length; i++) {
    const inWorker = await (await dispatch(worker, `http://localhost/?case=${i}`)).json();
    const inNode = asCurrentNode(JSON.parse(JSON.stringify({ value: await cases[i]() })));
    assert.deepEqual(inWorker, inNode, CASES[i][0]);
  }
});

test("nodejs_compat_v2 globals: Buffer, process, global, setImmediate; absent without nodejs_compat", async (t) => {
  const probe = `export default { fetch() { return Response.json({
    buffer: typeof Buffer === "function" && Buffer.from("hi").toString("hex"),
    process: typeof process === "object" && [process.platform, typeof process.nextTick, typeof process.env, process.version],
    global: typeof global === "object" && global === globalThis,
    immediate: typeof setImmediate,
  }) } }`;
  const on = await useWorker(t, { script: probe, compatibilityFlags: ["nodejs_compat"] });
  assert.deepEqual(await (await dispatch(on, "http://localhost/")).json(), { buffer: "6869", process: ["linux", "function", "object", "v22.19.0"], global: true, immediate: "function" });
  const off = await useWorker(t, { script: probe, compatibilityDate: "2024-01-01" });
  assert.deepEqual(await (await dispatch(off, "http://localhost/")).json(), { buffer: false, process: false, global: false, immediate: "undefined" });
});

test("process.env holds the worker's text and JSON vars only with nodejs_compat_populate_process_env (implied from 2025-04-01)", async (t) => {
  const script = `import process from "node:process";
    export default { fetch() { return Response.json({ ...process.env }) } }`;
  const bindings = { GREETING: "hi", CONFIG: { a: [1] } };
  // Before 2025-04-01 nodejs_compat does not imply the flag; from then it does, unless turned off.
  const plain = await useWorker(t, { script, bindings, compatibilityDate: "2025-03-31", compatibilityFlags: ["nodejs_compat"] });
  assert.deepEqual(await (await dispatch(plain, "http://localhost/")).json(), {});
  const off = await useWorker(t, { script, bindings, compatibilityFlags: ["nodejs_compat", "nodejs_compat_do_not_populate_process_env"] });
  assert.deepEqual(await (await dispatch(off, "http://localhost/")).json(), {});
  const filled = await useWorker(t, { script, bindings, compatibilityDate: "2025-03-31", compatibilityFlags: ["nodejs_compat", "nodejs_compat_populate_process_env"] });
  assert.deepEqual(await (await dispatch(filled, "http://localhost/")).json(), { GREETING: "hi", CONFIG: '{"a":[1]}' });
  const byDate = await useWorker(t, { script, bindings, compatibilityDate: "2025-04-01", compatibilityFlags: ["nodejs_compat"] });
  assert.deepEqual(await (await dispatch(byDate, "http://localhost/")).json(), { GREETING: "hi", CONFIG: '{"a":[1]}' });
});

test("process.getBuiltinModule and require-only internals", async (t) => {
  const script = `import process from "node:process";
    export default { async fetch() {
      return Response.json({
        path: typeof process.getBuiltinModule("node:path").join,
        missing: process.getBuiltinModule("node:nope") === undefined,
        internal: process.getBuiltinModule("node:internal/abort_controller") === undefined,
      });
    } }`;
  const worker = await useWorker(t, { script, compatibilityFlags: ["nodejs_compat"] });
  const result = await (await dispatch(worker, "http://localhost/")).json();
  assert.equal(result.path, "function");
  assert.equal(result.missing, true);
  assert.equal(result.internal, true);
  await assert.rejects(
    createWorker({ compatibilityFlags: ["nodejs_compat"], script: `import x from "node:internal/abort_controller"; export default { fetch() {} }`, onLog() {} }),
    /No such module "node:internal\/abort_controller"/,
  );
});

test("CommonJS modules: require, module, exports, __filename; node: modules with nodejs_compat; errors", async (t) => {
  const modules = {
    "lib/math.cjs": `const { join } = require("node:path");
      const helper = require("./helper");
      exports.add = (a, b) => helper.twice(a + b) / 2;
      exports.where = join(__dirname, "x") + " " + __filename;
      exports.data = require("../data.json");
      exports.text = require("../notes.txt");
      exports.buffer = require("buffer").Buffer.from("hi").toString("hex");`,
    "lib/helper.js": { type: "commonjs", content: `module.exports = { twice: (n) => n * 2, loaded: typeof module.loaded };` },
    "data.json": { type: "json", content: `{ "answer": 42 }` },
    "notes.txt": { type: "text", content: "plain notes" },
    "value.cjs": `module.exports = "just a string";`,
    "broken.cjs": `require("./missing");`,
    "esm.js": `export const x = 1; export default { x: 2 };`,
    "needs-esm.cjs": `module.exports = require("./esm.js").x;`,
  };
  const script = `import math, { add, where } from "./lib/math.cjs";
    import value from "./value.cjs";
    export default { async fetch() {
      return Response.json({ add: add(2, 3), same: math.add === add, where, data: math.data, text: math.text, buffer: math.buffer, value });
    } }`;
  const worker = await useWorker(t, { script, modules, compatibilityFlags: ["nodejs_compat"] });
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), {
    add: 5, same: true, where: "/lib/x /lib/math.cjs", data: { answer: 42 }, text: "plain notes", buffer: "6869", value: "just a string",
  });
  // A require that cannot be satisfied fails the import with the module named.
  await assert.rejects(
    createWorker({ script: `import "./broken.cjs"; export default { fetch() {} }`, modules, onLog() {} }),
    /Cannot find module '\.\/missing' required by broken\.cjs/,
  );
  // require() of an ES module runs it and gives its default export (export_commonjs_default, on at
  // today's date), as workerd's require(esm).
  const esm = await useWorker(t, { script: `import x from "./needs-esm.cjs"; export default { fetch() { return new Response(String(x)); } }`, modules });
  assert.equal(await (await dispatch(esm, "http://localhost/")).text(), "2");
  // Without nodejs_compat, node: modules cannot be required: workerd's error.
  await assert.rejects(
    createWorker({ script: `import "./lib/math.cjs"; export default { fetch() {} }`, modules, compatibilityDate: "2024-01-01", onLog() {} }),
    (error) => error.name === "Error" && error.message === 'No such module "node:path".',
  );
});

// workerd's process.exit (its process-exit-test): at the top level it is ignored (workerd logs a
// warning); in a request the request fails with workerd's message and its JavaScript stops at
// once (no `finally` runs), while the isolate and the other requests go on; in a Durable Object
// the instance is reset (its stub fails from then on, a new stub reaches a new instance).
test("process.exit: ignored at the top level, ends only its request's JavaScript, resets a Durable Object", { timeout: scaled(60_000) }, async (t) => {
  const script = `import { DurableObject } from "cloudflare:workers";
    process.exit(9999);
    let finallyRan = false;
    let served = 0;
    let created = 0;
    export class Obj extends DurableObject {
      constructor(ctx, env) { super(ctx, env); created++; }
      fetch() { process.exit(5); throw new Error("not reached"); }
    }
    export default { async fetch(request, env) {
      served++;
      const { pathname } = new URL(request.url);
      if (pathname === "/exit") { try { process.exit(123); } finally { finallyRan = true; } }
      if (pathname === "/timer") { await new Promise((r) => setTimeout(() => { process.exit(7); r(); }, 5)); return new Response("not reached"); }
      if (pathname === "/slow") { await new Promise((r) => setTimeout(r, 300)); return new Response("slow done"); }
      if (pathname === "/do") {
        const errors = [];
        const message = (p) => p.then(() => "resolved", (e) => e.message);
        let stub = env.OBJ.get(env.OBJ.idFromName("a"));
        errors.push(await message(stub.fetch("http://o/")), await message(stub.fetch("http://o/")));
        const afterFirst = created;
        stub = env.OBJ.get(env.OBJ.idFromName("a"));
        errors.push(await message(stub.fetch("http://o/")));
        return Response.json({ errors, afterFirst, created });
      }
      return Response.json({ finallyRan, served });
    } };`;
  const logs = [];
  const worker = await useWorker(t, { script, compatibilityFlags: ["nodejs_compat"], bindings: { OBJ: durableObject("Obj") }, onLog: (level, text) => logs.push(`${level} ${text}`) });
  const slow = dispatch(worker, "http://localhost/slow");
  const failed = await dispatch(worker, "http://localhost/exit").then((r) => r.text(), (e) => e.message);
  assert.match(failed, /^The Node\.js process\.exit\(123\) API was called\. Canceling the request\.$/);
  // The request in flight meanwhile, and the isolate (its module state), are untouched.
  assert.equal(await (await slow).text(), "slow done");
  // From a timer's callback too; the termination is no uncaught error in the log.
  assert.equal(await dispatch(worker, "http://localhost/timer").then((r) => r.text(), (e) => e.message), "The Node.js process.exit(7) API was called. Canceling the request.");
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), { finallyRan: false, served: 4 });
  assert.deepEqual(logs.filter((line) => line.startsWith("error")), []);
  const message = "The Node.js process.exit(5) API was called. Canceling the request.";
  assert.deepEqual(await (await dispatch(worker, "http://localhost/do")).json(), { errors: [message, message, message], afterFirst: 1, created: 2 });
});
