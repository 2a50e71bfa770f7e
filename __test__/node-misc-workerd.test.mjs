// node:buffer, assert, util, querystring, events, console, perf_hooks, module, url and process as
// workerd has them where they differ from Node or from what workerbox did before (workerd's own
// tests of those modules, scripts/workerd-tests.mjs): each expected value was printed by the
// workerd binary for the same code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const NODE = { compatibilityFlags: ["nodejs_compat"], compatibilityDate: "2026-04-01" };
const code = (f) => `(() => { try { const r = (${f})(); return ["ok", r]; } catch (e) { return [e.name, e.code ?? null, e.message]; } })()`;

test("node:buffer checks arguments as workerd does: from, alloc, byteLength, compare, copy, concat, write, fill, toString", { timeout: scaled(60_000) }, async (t) => {
  const r = await evalInWorker(t, `
    const { Buffer, SlowBuffer, kMaxLength } = await import("node:buffer");
    return {
      kMaxLength,
      fromBigint: ${code(`() => Buffer.from(5n)`)},
      fromOutside: ${code(`() => Buffer.from(new ArrayBuffer(5), 6)`)},
      fromLength: ${code(`() => Buffer.from(new ArrayBuffer(5), 3, 6)`)},
      fromBoxed: ${code(`() => Buffer.from(new String("hi")).toString()`)},
      allocNaN: ${code(`() => Buffer.alloc(NaN)`)},
      allocString: ${code(`() => Buffer.alloc("5")`)},
      allocHuge: ${code(`() => Buffer.alloc(2 ** 32)`)},
      callNaN: ${code(`() => Buffer(NaN)`)},
      callOutside: ${code(`() => Buffer(new ArrayBuffer(5), 6)`)},
      callSize: ${code(`() => [...Buffer(2)]`)},
      slowNaN: ${code(`() => SlowBuffer(NaN)`)},
      allocEncoding: ${code(`() => Buffer.alloc(40, "x", 20)`)},
      instance: Buffer.alloc(1) instanceof Buffer && Buffer.prototype.constructor === Buffer && Buffer.name === "Buffer",
      allocArray: ${code(`() => [...Buffer.alloc(3, [1, 2])]`)},
      allocView: ${code(`() => [...Buffer.alloc(3, new Uint8Array([7]))]`)},
      fillEmpty: ${code(`() => Buffer.alloc(3).fill(Buffer.alloc(0))`)},
      byteLength: ${code(`() => Buffer.byteLength({})`)},
      byteLengthUnknown: ${code(`() => Buffer.byteLength("x", "nope")`)},
      compare: ${code(`() => Buffer.compare(Buffer.alloc(1), "abc")`)},
      compareStart: ${code(`() => Buffer.alloc(3).compare(Buffer.alloc(3), -1)`)},
      copyNegative: ${code(`() => Buffer.alloc(5).copy(Buffer.alloc(5), -1)`)},
      copyHuge: ${code(`() => Buffer.alloc(1).copy(Buffer.alloc(1), 0, 0x100000000, 0x100000001)`)},
      copyPastEnd: ${code(`() => Buffer.alloc(1).copy(Buffer.alloc(1), 0, 2048, 2048)`)},
      concat: ${code(`() => Buffer.concat([42])`)},
      writeOffset: ${code(`() => Buffer.alloc(4).write("a", -1)`)},
      writeStringOffset: ${code(`() => Buffer.from("abc").write("o", "1", "ascii")`)},
      fromUnknown: ${code(`() => Buffer.from("x", "nope")`)},
      toStringNull: ${code(`() => Buffer.from("abc").toString(null, 1, 2)`)},
      emptyIndex: [Buffer.from("abc").indexOf(""), Buffer.from("abc").indexOf("", 5), Buffer.from("abc").lastIndexOf(""), Buffer.from("abc").includes("", 9)],
      slices: [Buffer.from("abcd").utf8Slice(2, 3), Buffer.from("abcd").utf8Slice(1, 0), Buffer.from("abc").hexSlice()],
      latin1Write: ${code(`() => Buffer.from("abc").latin1Write("zz", 1)`)},
      aliases: Buffer.prototype.readUint8 === Buffer.prototype.readUInt8 && Buffer.prototype.writeBigUint64LE === Buffer.prototype.writeBigUInt64LE,
      nanFloat: [...(() => { const b = Buffer.alloc(4); b.writeFloatBE(NaN); return b; })()],
      inspect: (await import("node:util")).inspect(Object.assign(Buffer.from("12"), { prop: 1 })),
      long: (await import("node:util")).inspect(Buffer.alloc(60)),
    };`, NODE);
  assert.equal(r.kMaxLength, 2147483647);
  assert.deepEqual(r.fromBigint.slice(0, 2), ["TypeError", "ERR_INVALID_ARG_TYPE"]);
  assert.deepEqual(r.fromOutside, ["RangeError", "ERR_BUFFER_OUT_OF_BOUNDS", '"offset" is outside of buffer bounds']);
  assert.deepEqual(r.fromLength, ["RangeError", "ERR_BUFFER_OUT_OF_BOUNDS", '"length" is outside of buffer bounds']);
  assert.deepEqual(r.fromBoxed, ["ok", "hi"]);
  assert.deepEqual(r.allocNaN, ["RangeError", "ERR_INVALID_ARG_VALUE", "The argument 'size' is invalid. Received NaN"]);
  assert.deepEqual(r.allocString, ["TypeError", "ERR_INVALID_ARG_TYPE", `The "size" argument must be of type number. Received type string ('5')`]);
  assert.deepEqual(r.allocHuge.slice(0, 2), ["RangeError", "ERR_OUT_OF_RANGE"]);
  assert.deepEqual(r.callNaN, r.allocNaN);
  assert.deepEqual(r.callOutside, ["RangeError", "ERR_BUFFER_OUT_OF_BOUNDS", '"offset" is outside of buffer bounds']);
  assert.deepEqual(r.callSize, ["ok", [0, 0]]);
  assert.deepEqual(r.slowNaN, r.allocNaN);
  assert.deepEqual(r.allocEncoding.slice(0, 2), ["TypeError", "ERR_INVALID_ARG_TYPE"]);
  assert.equal(r.instance, true);
  assert.deepEqual(r.allocArray, ["ok", [0, 0, 0]]);
  assert.deepEqual(r.allocView, ["ok", [7, 7, 7]]);
  assert.deepEqual(r.fillEmpty, ["TypeError", "ERR_INVALID_ARG_VALUE", "The argument 'value' is invalid. Received 'zero-length'"]);
  assert.deepEqual(r.byteLength.slice(0, 2), ["TypeError", "ERR_INVALID_ARG_TYPE"]);
  assert.deepEqual(r.byteLengthUnknown, ["ok", 1]);
  assert.deepEqual(r.compare.slice(0, 2), ["TypeError", "ERR_INVALID_ARG_TYPE"]);
  assert.deepEqual(r.compareStart, ["RangeError", "ERR_OUT_OF_RANGE", 'The value of "targetStart" is out of range. It must be >= 0 && <= 2147483647. Received -1']);
  assert.deepEqual(r.copyNegative, ["RangeError", "ERR_OUT_OF_RANGE", 'The value of "targetStart" is out of range. It must be >= 0. Received -1']);
  assert.deepEqual(r.copyHuge, ["RangeError", "ERR_OUT_OF_RANGE", 'The value of "sourceStart" is out of range. It must be < 4294967296. Received 4294967296']);
  assert.deepEqual(r.copyPastEnd, ["ok", 0]);
  assert.deepEqual(r.concat, ["TypeError", "ERR_INVALID_ARG_TYPE", 'The "list" argument must be an (Buffer|Uint8Array)[]. Received type number (42)']);
  assert.deepEqual(r.writeOffset.slice(0, 2), ["RangeError", "ERR_OUT_OF_RANGE"]);
  assert.deepEqual(r.writeStringOffset.slice(0, 2), ["TypeError", "ERR_INVALID_ARG_TYPE"]);
  assert.deepEqual(r.fromUnknown, ["TypeError", "ERR_UNKNOWN_ENCODING", "Unknown encoding: nope"]);
  assert.deepEqual(r.toStringNull, ["TypeError", "ERR_UNKNOWN_ENCODING", "Unknown encoding: null"]);
  assert.deepEqual(r.emptyIndex, [0, 3, 3, true]);
  assert.deepEqual(r.slices, ["c", "", "616263"]);
  assert.deepEqual(r.latin1Write, ["RangeError", "ERR_OUT_OF_RANGE", 'The value of "length" is out of range. It must be >= 0 && <= 2. Received 3']);
  assert.equal(r.aliases, true);
  assert.deepEqual(r.nanFloat, [0x7f, 0xc0, 0, 0]);
  assert.equal(r.inspect, "<Buffer 31 32, prop: 1>");
  assert.equal(r.long, `<Buffer ${"00 ".repeat(50)}... 10 more bytes>`);
});

test("node:buffer transcode as workerd's: windows-1252 input, '?' for what latin1/ascii cannot hold, its errors", async (t) => {
  const r = await evalInWorker(t, `
    const { Buffer, transcode } = await import("node:buffer");
    const m = (f) => { try { return [...f()]; } catch (e) { return [e.name, e.code ?? null, e.message]; } };
    return [
      m(() => transcode(Buffer.from("a"), "b", "utf8")),
      m(() => transcode(Buffer.from([0x48, 0x80]), "utf8", "utf16le")),
      m(() => transcode(Buffer.from([0x48, 0x80]), "utf8", "latin1")),
      m(() => transcode(Buffer.from([0x41, 0, 0x42]), "utf16le", "utf8")),
      m(() => transcode(Buffer.from([0xe9, 0x80]), "ascii", "utf8")),
      m(() => transcode(Buffer.from("a😀b"), "utf8", "latin1")),
      m(() => transcode(Buffer.from([0x3d, 0xd8]), "utf16le", "utf8")),
      m(() => transcode(Buffer.from("těst ☕"), "utf8", "ascii")),
    ];`, NODE);
  assert.deepEqual(r, [
    ["TypeError", "ERR_UNKNOWN_ENCODING", "Unknown encoding: b"],
    ["Error", null, "Unable to transcode buffer"],
    [72, 63],
    ["Error", null, "UTF-16le input size should be multiple of 2"],
    [195, 169, 226, 130, 172],
    [97, 63, 98],
    ["Error", null, "Expected UTF8 length mismatch"],
    [0x74, 0x3f, 0x73, 0x74, 0x20, 0x3f],
  ]);
});

test("node:assert is strict as workerd's: equal is strictEqual, deepEqual deepStrictEqual, with workerd's messages", async (t) => {
  const r = await evalInWorker(t, `
    const assert = (await import("node:assert")).default;
    const m = (f) => { try { f(); return "ok"; } catch (e) { return [e.message, e.operator, e.generatedMessage]; } };
    return {
      equal: m(() => assert.equal(1, "1")),
      notEqual: m(() => assert.notEqual(1, "1")),
      notEqualSame: m(() => assert.notEqual(1, 1)),
      strictEqual: m(() => assert.strictEqual(1, 2)),
      sameShape: m(() => assert.equal({ a: 1 }, { a: 1 })),
      deepEqual: m(() => assert.deepEqual({ a: 1 }, { a: "1" })),
      deepLong: m(() => assert.deepStrictEqual([1, 2], [1, 2, 3])),
      notDeep: m(() => assert.notDeepEqual({ a: 1 }, { a: 1 })),
      given: m(() => assert.equal(1, 2, "boom")),
    };`, NODE);
  assert.deepEqual(r.equal, ["Values are not strictly equal:\n\n\n[Diff] Actual / Expected\n\n\n-   1\n+   '1'\n", "strictEqual", false]);
  assert.equal(r.notEqual, "ok");
  assert.deepEqual(r.notEqualSame, ["Expected actual to be strictly unequal to expected", "notStrictEqual", false]);
  assert.deepEqual(r.strictEqual, ["Values are not strictly equal:\n\n\n[Diff] Actual / Expected\n\n\n-   1\n+   2\n", "strictEqual", false]);
  assert.deepEqual(r.sameShape, ["Values have the same structure but are not reference-equal:\n\n    { a: 1 }\n", "strictEqual", false]);
  assert.deepEqual(r.deepEqual, ["Expected values to be strictly deep-equal:\n+ actual - expected\n\n+ { a: 1 }\n- { a: '1' }\n       ^", "deepStrictEqual", true]);
  assert.deepEqual(r.deepLong, ["Expected values to be strictly deep-equal:\n+ actual - expected\n\n+ [ 1, 2 ]\n- [ 1, 2, 3 ]\n        ^", "deepStrictEqual", true]);
  assert.deepEqual(r.notDeep, ["Expected actual to not be deeply strictly equal to expected", "notDeepStrictEqual", false]);
  assert.deepEqual(r.given, ["boom", "strictEqual", false]);
});

test("node:test's mock: restore() goes back to the original, constructions record `this`, Node's argument errors", async (t) => {
  const r = await evalInWorker(t, `
    const { mock } = await import("node:test");
    const m = (f) => { try { f(); return "ok"; } catch (e) { return [e.code, e.message]; } };
    const fn = mock.fn((a, b) => a + b, (a, b) => a - b);
    const before = fn(9, 1);
    fn.mock.restore();
    class A { static task(x) { return x; } }
    class C extends A {}
    mock.method(C, "task");
    C.task.mock.restore();
    class K { constructor(v) { this.v = v; } }
    const ctor = mock.fn(K);
    const made = new ctor(3);
    return {
      calls: [before, fn(9, 1), fn.mock.callCount()],
      ownAfterRestore: Object.getOwnPropertyDescriptor(C, "task") !== undefined,
      construct: [ctor.mock.calls[0].this === made, ctor.mock.calls[0].target === K],
      missing: m(() => mock.method({ abc: 0 }, "nope")),
      notMethod: m(() => mock.method({ abc: 0 }, "abc")),
      badName: m(() => mock.method({}, {})),
      times: m(() => mock.fn({ times: null })),
      timesZero: m(() => mock.fn(() => {}, { times: 0 })),
      getterFalse: m(() => mock.getter({}, "x", { getter: false })),
    };`, NODE);
  assert.deepEqual(r.calls, [8, 10, 2]);
  assert.equal(r.ownAfterRestore, true);
  assert.deepEqual(r.construct, [true, true]);
  assert.deepEqual(r.missing, ["ERR_INVALID_ARG_VALUE", "The argument 'methodName' must be a method. Received undefined"]);
  assert.deepEqual(r.notMethod, ["ERR_INVALID_ARG_VALUE", "The argument 'methodName' must be a method. Received 0"]);
  assert.deepEqual(r.badName, ["ERR_INVALID_ARG_TYPE", 'The "methodName" argument must be one of type string or symbol. Received an instance of Object']);
  assert.equal(r.times[0], "ERR_INVALID_ARG_TYPE");
  assert.equal(r.timesZero[0], "ERR_OUT_OF_RANGE");
  assert.deepEqual(r.getterFalse, ["ERR_INVALID_ARG_VALUE", "The property 'options.getter' cannot be false. Received false"]);
});

test("node:querystring parses as Node: null prototype, multi-character separators, maxKeys counting separators, custom decoders", async (t) => {
  const r = await evalInWorker(t, `
    const qs = (await import("node:querystring")).default;
    const plain = (o) => ({ proto: Object.getPrototypeOf(o) === null, entries: Object.entries(o) });
    return {
      proto: plain(qs.parse("__proto__=1&a=2&a=3")),
      multi: plain(qs.parse("foo=>bar&&bar=>baz", "&&", "=>")),
      plus: plain(qs.parse("+=&a+b=c%20d&&=")),
      maxKeys: Object.keys(qs.parse("&a", null, null, { maxKeys: 1 })).length,
      unlimited: Object.keys(qs.parse("a=1&b=2&c=3", null, null, { maxKeys: 0 })).length,
      decoder: plain(qs.parse("a=a", null, null, { decodeURIComponent: (s) => s + s })),
      failing: plain(qs.parse("a=%zz", null, null, { decodeURIComponent: () => { throw new Error("x"); } })),
      stringify: [qs.stringify({ foo: 2n, n: NaN, b: true, d: new Date(0), a: ["1", 2] }), qs.stringify({ a: 1 }, ";", ":")],
    };`, NODE);
  assert.deepEqual(r.proto, { proto: true, entries: [["__proto__", "1"], ["a", ["2", "3"]]] });
  assert.deepEqual(r.multi, { proto: true, entries: [["foo", "bar"], ["bar", "baz"]] });
  assert.deepEqual(r.plus, { proto: true, entries: [[" ", ""], ["a b", "c d"], ["", ""]] });
  assert.equal(r.maxKeys, 0);
  assert.equal(r.unlimited, 3);
  assert.deepEqual(r.decoder.entries, [["aa", "aa"]]);
  assert.deepEqual(r.failing.entries, [["a", "%zz"]]);
  assert.deepEqual(r.stringify, ["foo=2&n=&b=true&d=&a=1&a=2", "a:1"]);
});

test("node:events, node:console, node:perf_hooks and node:module members workerd has", async (t) => {
  const r = await evalInWorker(t, `
    const events = (await import("node:events")).default;
    const consoleModule = (await import("node:console")).default;
    const { performance } = await import("node:perf_hooks");
    const { isBuiltin, builtinModules } = await import("node:module");
    const m = (f) => { try { f(); return "ok"; } catch (e) { return [e.code, e.message]; } };
    const et = new EventTarget();
    events.setMaxListeners(5, et);
    return {
      events: [events.usingDomains, events.getMaxListeners(new events()), events.getMaxListeners(et), events.getEventListeners(et, "x").length, typeof events.EventEmitterAsyncResource],
      console: [consoleModule === console, m(() => console.createTask()), m(() => console.context()), consoleModule._times instanceof Map],
      perf: [typeof performance.timerify, performance.eventLoopUtilization().utilization, performance.markResourceTiming(), performance.nodeTiming.name,
        performance.nodeTiming.uvMetricsInfo.loopCount, performance.eventCounts.size, "detail" in performance.mark("m").toJSON(),
        performance instanceof EventTarget, (() => { let seen = 0; performance.addEventListener("x", () => seen++); performance.dispatchEvent(new Event("x")); return seen; })()],
      module: [isBuiltin("fs"), isBuiltin("node:test"), isBuiltin("test"), isBuiltin("worker"), builtinModules.length, builtinModules.includes("http")],
    };`, NODE);
  assert.deepEqual(r.events, [false, 10, 5, 0, "function"]);
  assert.deepEqual(r.console, [true, ["ERR_METHOD_NOT_IMPLEMENTED", "The Console.createTask method is not implemented"], ["ERR_METHOD_NOT_IMPLEMENTED", "The Console.context method is not implemented"], true]);
  assert.deepEqual(r.perf, ["function", 0, null, "node", 0, 0, false, true, 1]);
  assert.deepEqual(r.module, [true, true, false, false, 68, true]);
});

test("node:util: getCallSites, isDeepStrictEqual of boxed values of another type, callbackify of an async function, stripVTControlCharacters of OSC links", async (t) => {
  const r = await evalInWorker(t, `
    const util = (await import("node:util")).default;
    function inner() { return util.getCallSites(); }
    const sites = inner();
    const m = (f) => { try { f(); return "ok"; } catch (e) { return e.message; } };
    const booleanish = new Boolean(true);
    Object.setPrototypeOf(booleanish, String.prototype);
    Object.defineProperty(booleanish, Symbol.toStringTag, { value: "String" });
    return {
      site: [sites[0].functionName, typeof sites[0].lineNumber, sites[0].column === sites[0].columnNumber],
      frames: [util.getCallSites(1).length, m(() => util.getCallSites(0)), typeof util.getCallSite],
      boxed: [util.isDeepStrictEqual(booleanish, new String("true")), util.isDeepStrictEqual(Object(1n), Object(1n)), util.isDeepStrictEqual(new Number(1), new Number(2))],
      callbackify: Object.getPrototypeOf(util.callbackify(async () => 1)) === Function.prototype,
      separators: [util.inspect(1234567.891234, { numericSeparator: true }), util.inspect(-1234567n, { numericSeparator: true }), util.inspect({ a: 1e21, b: 12345 }, { numericSeparator: true }),
        (() => { util.inspect.defaultOptions.numericSeparator = true; try { return util.format("%d %s %i", 118059162071741130342, 1234, -0.5); } finally { util.inspect.defaultOptions.numericSeparator = false; } })(),
        util.format("%i", -0.5)],
      strip: ["\\u0007", "\\u001B\\\\", "\\u009C"].map((st) => util.stripVTControlCharacters("\\u001B]8;;mailto:a@b.c" + st + "mail\\u001B]8;;" + st)),
    };`, NODE);
  assert.deepEqual(r.site, ["inner", "number", true]);
  assert.deepEqual(r.frames, [1, "Frame count should be between 1 and 200 inclusive.", "function"]);
  assert.deepEqual(r.boxed, [false, true, false]);
  assert.equal(r.callbackify, true);
  // Node's own output for the same calls.
  assert.deepEqual(r.separators, ["1_234_567.891_234", "-1_234_567n", "{ a: 1e+21, b: 12_345 }", "118_059_162_071_741_140_000 1_234 0", "-0"]);
  assert.deepEqual(r.strip, ["mail", "mail", "mail"]);
});

test("node:url: fileURLToPath and pathToFileURL with { windows: true }, domainTo* without an argument", async (t) => {
  const r = await evalInWorker(t, `
    const url = await import("node:url");
    const m = (f) => { try { return f(); } catch (e) { return [e.code, e.message]; } };
    return [
      url.fileURLToPath("file:///C:/dir/foo%20bar", { windows: true }),
      url.fileURLToPath("file://nas/My%20Docs/File.doc", { windows: true }),
      m(() => url.fileURLToPath("file:///foo", { windows: true })),
      url.fileURLToPath("file:///C:/foo", { windows: false }),
      url.pathToFileURL("C:\\\\foo#bar", { windows: true }).href,
      url.pathToFileURL("test\\\\", { windows: false }).href.endsWith("%5C"),
      m(() => url.domainToASCII()),
      url.domainToASCII(undefined),
      m(() => url.pathToFileURL("\\\\\\\\host", { windows: true })),
      m(() => url.pathToFileURL("\\\\\\\\\\\\no-server", { windows: true }))[0],
      m(() => url.format(new URL("http://a.example/"), 1))[0],
    ];`, NODE);
  assert.deepEqual(r, [
    "C:\\dir\\foo bar",
    "\\\\nas\\My Docs\\File.doc",
    ["ERR_INVALID_FILE_URL_PATH", "File URL path must be absolute"],
    "/C:/foo",
    "file:///C:/foo%23bar",
    true,
    ["ERR_MISSING_ARGS", 'The "domain" argument must be specified'],
    "undefined",
    ["ERR_INVALID_ARG_VALUE", `The argument 'path' Missing UNC resource path. Received "\\\\\\\\host"`],
    "ERR_INVALID_ARG_VALUE",
    "ERR_INVALID_ARG_TYPE",
  ]);
});

test("process: each request starts in /bundle whatever the top level or another request chdir()ed to; chdir's errors; loadEnvFile", async (t) => {
  const script = `import process from "node:process";
    import { writeFileSync } from "node:fs";
    process.chdir("/tmp");
    const top = process.cwd();
    const m = (f) => { try { f(); return process.cwd(); } catch (e) { return [e.code, e.message]; } };
    export default { async fetch(request) {
      const start = process.cwd();
      if (new URL(request.url).pathname === "/move") process.chdir("/dev");
      writeFileSync("/tmp/x.env", "A=1\\nexport B='two'\\n");
      process.loadEnvFile("/tmp/x.env");
      return Response.json({ top, start, after: process.cwd(), env: [process.env.A, process.env.B],
        errors: [m(() => process.chdir("/nope")), m(() => process.chdir("/tmp/x.env")), m(() => process.chdir("")), m(() => process.chdir("a".repeat(4097)))[0]] });
    } }`;
  const worker = await useWorker(t, { script, compatibilityFlags: ["nodejs_compat", "enable_nodejs_fs_module"], compatibilityDate: "2026-04-01" });
  const first = await (await dispatch(worker, "http://localhost/move")).json();
  const second = await (await dispatch(worker, "http://localhost/")).json();
  assert.deepEqual([first.top, first.start, first.after, second.start], ["/tmp", "/bundle", "/dev", "/bundle"]);
  assert.deepEqual(first.env, ["1", "two"]);
  assert.deepEqual(second.errors, [
    ["ENOENT", "no such file or directory, chdir 'nope'"],
    ["ENOTDIR", "not a directory, chdir 'tmp/x.env'"],
    ["ENOENT", "no such file or directory"],
    "ENAMETOOLONG",
  ]);
});

test("EventTarget refuses what workerd does not support (capture, passive, handler objects without handleEvent, returnValue writes) and lets a listener's exception out of a script's own target, unless pedantic_wpt", async (t) => {
  const body = `
    const m = (f) => { try { f(); return "ok"; } catch (e) { return e.message; } };
    const et = new EventTarget();
    return [
      m(() => et.addEventListener("x", () => {}, { capture: true })),
      m(() => et.addEventListener("x", () => {}, true)),
      m(() => et.addEventListener("x", () => {}, { passive: true })),
      m(() => et.removeEventListener("x", () => {}, { capture: true })),
      m(() => et.addEventListener("x", {})),
      m(() => { new Event("x").returnValue = false; }),
      m(() => new Event("x", 1)),
      m(() => new ExtendableEvent("x")),
      typeof ExtendableEvent,
      (() => { let after = 0; const t = new EventTarget(); t.addEventListener("x", () => { throw new Error("boom"); }); t.addEventListener("x", () => after++); return [m(() => t.dispatchEvent(new Event("x"))), after]; })(),
    ];`;
  assert.deepEqual(await evalInWorker(t, body, { compatibilityDate: "2026-04-01" }), [
    "addEventListener(): options.capture must be false.",
    "addEventListener(): useCapture must be false.",
    "addEventListener(): options.passive must be false.",
    "removeEventListener(): options.capture must be false.",
    "Incorrect type for the 'handleEvent' field on 'HandlerObject': the provided value is not of type 'function'.",
    "Cannot assign to read only property 'returnValue' of object '#<Event>'",
    "Failed to construct 'Event': constructor parameter 2 is not of type 'Init'.",
    "Illegal constructor",
    "function",
    ["boom", 0],
  ]);
  const pedantic = await evalInWorker(t, body, { compatibilityDate: "2026-04-01", compatibilityFlags: ["pedantic_wpt"] });
  assert.deepEqual(pedantic.slice(0, 6), ["ok", "ok", "ok", "ok", "ok", "ok"]);
  assert.deepEqual(pedantic[9], ["ok", 1]); // the standard: reported, and the next listener runs
});
