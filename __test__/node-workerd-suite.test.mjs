// node: modules as workerd's own tests of them (scripts/workerd-tests.mjs) want them: v8, vm and
// wasi check their arguments before ERR_METHOD_NOT_IMPLEMENTED; tty's WriteStream, domain.create,
// dgram and node:constants as workerd has them; util.format's %s; util.MIMEType; File's
// enumerable attributes; crypto.getRandomValues unbound; the legacy _stream_* named exports;
// EventEmitter's captureRejections; process.env and env at the top level; process.getBuiltinModule
// under new_module_registry; createRequire's values; AsyncLocalStorage.bind tied to its request;
// timers/promises' setInterval after an abort. Each expected value was printed by the workerd
// binary (Miniflare 4.20260426.0) for the same code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const NODE = { compatibilityFlags: ["nodejs_compat"], compatibilityDate: "2026-04-01" };

test("v8, vm, wasi, tty, domain, dgram, constants, util.format %s, MIMEType, File, getRandomValues, stream aliases, captureRejections", async (t) => {
  const body = `
    const res = (f) => { try { const v = f(); return v === undefined ? "ok" : v; } catch (e) { return [e?.name, e?.code ?? null]; } };
    const v8 = (await import("node:v8")).default, vm = (await import("node:vm")).default, wasi = await import("node:wasi"), tty = (await import("node:tty")).default;
    const domain = (await import("node:domain")).default, dgram = (await import("node:dgram")).default, constants = (await import("node:constants")).default;
    const util = await import("node:util"), { Stream, Writable } = await import("node:stream");
    const w = new tty.WriteStream(1);
    const ctx = vm.createContext({ a: 1 });
    const mt = new util.MIMEType('TeXt/PlAiN; ChArsEt="utf-8"');
    mt.params.set("boundary", "foo");
    mt.params.set("charset", "other");
    const r = new Stream(); r.listenerCount = undefined;
    const ee = new (await import("node:events")).EventEmitter({ captureRejections: true });
    const captured = new Promise((resolve) => ee.on("error", (e) => resolve(e.message)));
    ee.on("go", async () => { throw new Error("rejected"); });
    ee.emit("go");
    return {
      v8: [v8.getCppHeapStatistics().detail_level, res(() => v8.getCppHeapStatistics("x")), res(() => v8.writeHeapSnapshot(1)), res(() => v8.setHeapSnapshotNearHeapLimit(0)), res(() => v8.queryObjects(Object, { format: "x" })), res(() => v8.getHeapSnapshot())],
      vm: [vm.isContext(ctx), Object.getPrototypeOf(ctx), "a" in ctx, res(() => vm.isContext([])), res(() => new vm.Script("1", { lineOffset: "x" })), res(() => vm.runInContext("1", {})), res(() => vm.createContext({}, { microtaskMode: "x" })), res(() => vm.compileFunction("1", [1])), res(() => vm.measureMemory({ mode: "x" })), res(() => vm.runInThisContext("1", { timeout: -1 }))],
      wasi: [res(() => new wasi.WASI()), res(() => new wasi.WASI({ version: "x" })), res(() => new wasi.WASI({ version: "preview1", env: [] })), res(() => new wasi.WASI({ version: "preview1", stdin: -1 })), wasi.WASI.prototype.getImportObject.call({})],
      tty: [w.columns, w.rows, w.isTTY, w.getColorDepth(), w.cursorTo(1, 1), w.getWindowSize()],
      domain: [domain.create instanceof domain.Domain, typeof domain.createDomain],
      dgram: [res(() => dgram.createSocket([])), res(() => dgram.createSocket({ type: "udp4" }, null))],
      constants: [Object.isFrozen(constants), res(() => { "use strict"; constants.O_RDONLY = 5; })],
      format: [util.format("%s", { a: [1, 2, 3] }), util.format("%s", { toString() { return "Foo"; } }), util.format("%s", new (class Foo { toString() { return "Bar"; } })()), util.format("%s", () => 5), util.format("%s", new Error("e")).split("\\n")[0]],
      file: Object.keys(File.prototype),
      random: [res(() => { const g = crypto.getRandomValues; return g(new Uint8Array(2)); }), (await import("node:crypto")).getRandomValues(new Uint8Array(3)).length],
      aliases: [(await import("node:_stream_writable")).Writable === Writable, typeof (await import("node:_stream_readable")).Readable],
      listenerCount: res(() => r.emit("x")),
      captured: await captured,
      mime: [String(mt), mt.essence, [...mt.params.keys()], JSON.stringify(mt), String(new util.MIMEParams()), res(() => new util.MIMEType("bad"))],
    };`;
  const NI = ["Error", "ERR_METHOD_NOT_IMPLEMENTED"];
  const TYPE = ["TypeError", "ERR_INVALID_ARG_TYPE"];
  const VALUE = ["TypeError", "ERR_INVALID_ARG_VALUE"];
  const RANGE = ["RangeError", "ERR_OUT_OF_RANGE"];
  assert.deepEqual(await evalInWorker(t, body, NODE), {
    v8: ["detailed", VALUE, TYPE, RANGE, VALUE, NI],
    vm: [true, null, false, false, TYPE, TYPE, VALUE, TYPE, VALUE, RANGE],
    wasi: [NI, VALUE, TYPE, RANGE, {}],
    tty: [0, 0, true, 8, false, [0, 0]],
    domain: [true, "function"],
    dgram: [TYPE, TYPE],
    constants: [false, ["TypeError", null]],
    format: ["{ a: [Array] }", "Foo", "Bar", "() => 5", "Error: e"],
    file: ["name", "lastModified"],
    random: [["TypeError", null], 3],
    aliases: [true, "function"],
    listenerCount: false,
    captured: "rejected",
    mime: ["text/plain;charset=utf-8; boundary=foo", "text/plain", ["charset", "boundary"], '"text/plain;charset=utf-8; boundary=foo"', "", ["TypeError", null]],
  });
});

test("process.env and env are filled before the top level runs (nodejs_compat_populate_process_env); bytes are a data binding", async (t) => {
  const worker = await useWorker(t, {
    compatibilityDate: "2000-01-01",
    compatibilityFlags: ["nodejs_compat", "nodejs_compat_v2", "enable_nodejs_process_v2", "nodejs_compat_populate_process_env"],
    bindings: { FOO: "BAR", OBJ: { a: 1 }, NON: new TextEncoder().encode("abcdef") },
    script: `import { env } from "cloudflare:workers";
      const top = { ...process.env }; const topEnv = env.FOO;
      export default { fetch(request, env) { return Response.json({ top, topEnv, now: { ...process.env }, data: [env.NON instanceof ArrayBuffer, new TextDecoder().decode(env.NON)] }); } };`,
  });
  assert.deepEqual(await (await dispatch(worker, "http://w/")).json(), {
    top: { FOO: "BAR", OBJ: '{"a":1}' }, topEnv: "BAR", now: { FOO: "BAR", OBJ: '{"a":1}' }, data: [true, "abcdef"],
  });
});

test("process.getBuiltinModule gives the module namespace under new_module_registry, the exports otherwise", async (t) => {
  const body = `const a = process.getBuiltinModule("node:assert");
    return [typeof a, Object.prototype.toString.call(a), a === (await import("node:assert")), process.getBuiltinModule("node:nope") === undefined];`;
  const flags = ["nodejs_compat_v2", "experimental"];
  assert.deepEqual(await evalInWorker(t, body, { compatibilityDate: "2000-01-01", compatibilityFlags: [...flags, "new_module_registry"], unsafeExperimental: true }), ["object", "[object Module]", true, true]);
  assert.deepEqual(await evalInWorker(t, body, { compatibilityDate: "2000-01-01", compatibilityFlags: flags, unsafeExperimental: true }), ["function", "[object Function]", false, true]);
});

test("createRequire's require gives a module's value at any date (a node: module's namespace before 2026-01-22); a query or fragment is refused", async (t) => {
  const worker = await useWorker(t, {
    compatibilityDate: "2000-01-01",
    compatibilityFlags: ["nodejs_compat_v2", "disable_top_level_await_in_require"],
    script: `import { createRequire } from "node:module"; import a from "a";
      const res = (f) => { try { return f(); } catch (e) { return e.message; } };
      export default { async fetch() { const r = createRequire("/"); return Response.json({ viaCreate: r("baz"), viaCjs: a, text: r("t"), namespace: r("node:assert") === (await import("node:assert")),
        stalled: [res(() => r("tla")), res(() => r("tla"))],
        query: res(() => createRequire("file://x?a")), path: res(() => createRequire("relative")).startsWith("The argument must be a file URL object") }); } };`,
    modules: { a: { type: "commonjs", content: "module.exports = { inner: require('baz') };" }, baz: { type: "commonjs", content: "module.exports = 3;" }, t: { type: "text", content: "4" },
      tla: { type: "esm", content: "await new Promise(() => {});" } },
  });
  const stalled = "Top-level await in module is not permitted at this time.";
  assert.deepEqual(await (await dispatch(worker, "http://w/")).json(), {
    viaCreate: 3,
    viaCjs: { inner: { default: 3 } },
    text: "4",
    namespace: true,
    stalled: [stalled, stalled],
    query: "The specifier must not have query string parameters or hash fragments.",
    path: true,
  });
});

test("AsyncLocalStorage.bind made in a request throws in another (bind_asynclocalstorage_snapshot_to_request)", async (t) => {
  const worker = await useWorker(t, {
    ...NODE,
    script: `import { AsyncLocalStorage } from "node:async_hooks";
      let bound;
      export default { fetch() { try { bound ??= AsyncLocalStorage.bind(() => "ran"); return new Response(bound()); } catch (e) { return new Response(e.message, { status: 500 }); } } };`,
  });
  const first = await dispatch(worker, "http://w/");
  assert.deepEqual([first.status, await first.text()], [200, "ran"]);
  const second = await dispatch(worker, "http://w/");
  assert.deepEqual([second.status, await second.text()], [500, "Cannot call this AsyncLocalStorage bound function outside of the request in which it was created."]);
});

test("timers/promises setInterval hands out the ticks that came while the loop was busy, an abort notwithstanding", { timeout: scaled(20_000) }, async (t) => {
  const body = `const { setInterval, setTimeout } = await import("node:timers/promises");
    const controller = new AbortController();
    let count = 0;
    try {
      for await (const _ of setInterval(10, "x", { signal: controller.signal })) {
        count++;
        await setTimeout(40);
        if (count === 2) controller.abort();
      }
    } catch (e) { return [count >= 3, e.name]; }
    return "no abort";`;
  assert.deepEqual(await evalInWorker(t, body, NODE), [true, "AbortError"]);
});

test("util.inspect shows proxies without running their traps; node:stream's adapters, Duplex destroy, object-mode encoding and write order; transcode's bound; File's lastModified", async (t) => {
  const body = `
    const util = (await import("node:util")).default;
    const { Duplex, Writable, Readable } = await import("node:stream");
    const { Buffer, transcode } = await import("node:buffer");
    const res = (f) => { try { const v = f(); return v === undefined ? "ok" : v; } catch (e) { return [e?.name, e?.code ?? null]; } };
    const r = Proxy.revocable({}, {}); r.revoke();
    const trap = new Proxy({ a: 1 }, { get() { throw new Error("trap"); }, ownKeys() { throw new Error("trap"); }, getPrototypeOf() { throw new Error("trap"); } });
    const proxies = [util.inspect(new Proxy({ a: 1 }, {})), util.inspect(new Proxy([1, 2], {}), { showProxy: true }), util.inspect(r.proxy), util.inspect(new Proxy(new Proxy({}, {}), {})), util.inspect(trap), util.format("%s", trap), util.inspect({ [util.inspect.custom]() { return "custom"; } })];
    const destroyed = await new Promise((resolve) => { const d = new Duplex({ read() {}, write(c, e, cb) { cb(); } }); d.cork(); d.write("foo", (err) => resolve(err?.code)); d.destroy(); });
    const encoding = await new Promise((resolve) => { const w = new Writable({ objectMode: true, write(chunk, enc, cb) { resolve(String(enc)); cb(); } }); w.end(new Uint8Array([1])); });
    const buf = Buffer.from("hello");
    const same = await new Promise((resolve) => Readable.fromWeb(new ReadableStream({ start(c) { c.enqueue(buf); c.close(); } })).once("data", (chunk) => resolve(chunk === buf)));
    const taken = await Promise.race([Writable.toWeb(new Writable({ write() {} })).getWriter().write(new Uint8Array([1])).then(() => "resolved"), new Promise((r) => setTimeout(() => r("pending"), 200))]);
    const order = [];
    await new Promise((resolve) => {
      const w = new Writable({ construct(cb) { Promise.resolve().then(() => cb()); }, write(chunk, enc, cb) { order.push(String(chunk)); cb(); } });
      w.write("a");
      Promise.resolve().then(() => Promise.resolve()).then(() => w.write("b"));
      setTimeout(() => { w.end("c"); resolve(); }, 20);
    });
    return { proxies, destroyed, encoding, same, taken, order,
      transcode: [transcode(Buffer.alloc(67108864), "latin1", "utf16le").length, res(() => transcode(Buffer.alloc(67108865), "latin1", "utf16le"))],
      file: res(() => new File([], "", { lastModified: 3n })) };`;
  assert.deepEqual(await evalInWorker(t, body, { ...NODE, limits: { memoryMb: 1024 } }), {
    proxies: ["Proxy({ a: 1 })", "Proxy [ [ 1, 2 ], {} ]", "<Revoked Proxy>", "Proxy(Proxy({}))", "Proxy({ a: 1 })", "Proxy({ a: 1 })", "custom"],
    destroyed: "ERR_STREAM_DESTROYED",
    encoding: "undefined",
    same: true,
    taken: "resolved",
    order: ["a", "b", "c"],
    transcode: [134217728, ["Error", null]],
    file: ["TypeError", null],
  });
});

test("a node: module required and then patched keeps its named exports for import (require_returns_default_export)", async (t) => {
  const body = `const { createRequire } = await import("node:module");
    const required = createRequire("/")("node:timers/promises");
    const original = required.setTimeout;
    required.setTimeout = async function patched() {};
    const { setTimeout: named, default: def } = await import("node:timers/promises");
    const out = [named === original, def === required, def.setTimeout.name];
    required.setTimeout = original;
    return out;`;
  assert.deepEqual(await evalInWorker(t, body, { compatibilityDate: "2026-04-01", compatibilityFlags: ["nodejs_compat", "require_returns_default_export"] }), [true, true, "patched"]);
});

test("util.inspect: getters (the getters option), a class's prototype accessors with showHidden, a function's kind as Node names it", async (t) => {
  const body = `const util = (await import("node:util")).default;
    class X { constructor() { this._y = 123; } get y() { return this._y; } method() {} }
    const fn = (() => function* () {})();
    Object.setPrototypeOf(fn, Object.getPrototypeOf(async () => {}));
    return [
      util.inspect(new X(), { getters: true, showHidden: true }), util.inspect(new X(), { showHidden: true }), util.inspect(new X()),
      util.inspect({ get a() { return { b: 1 }; }, get n() { return null; }, set s(v) {} }, { getters: true }),
      util.inspect({ get a() { throw new Error("no"); } }, { getters: true }),
      util.inspect(async function* abc() {}), util.inspect(fn), util.inspect(() => {}), util.inspect(function named() {}),
      util.format("%o", new X()).split("\\n")[0],
    ];`;
  assert.deepEqual(await evalInWorker(t, body, NODE), [
    "X { _y: 123, [y]: [Getter: 123] }",
    "X { _y: 123, [y]: [Getter] }",
    "X { _y: 123 }",
    "{ a: [Getter] { b: 1 }, n: [Getter: null], s: [Setter] }",
    "{ a: [Getter: <Inspection threw (no)>] }",
    "[AsyncGeneratorFunction: abc]",
    "[GeneratorFunction (anonymous)] AsyncFunction",
    "[Function (anonymous)]",
    "[Function: named]",
    "X { _y: 123, [y]: [Getter] }",
  ]);
});

test("util.inspect: an error inside an object shows its stack (in brackets without frames), laid out as Node lays it out, compact: true too", async (t) => {
  const body = `const util = (await import("node:util")).default;
    const err = new Error("foo\\nbar"); err.stack = "Error: foo\\nbar\\n    at f (x.js:1:1)";
    const long = new Error("foo"); long.stack = "Error: foo\\n    at aVeryLongFunctionNameThatGoesOnAndOn (some/long/path/to/a/file.js:100:20)\\n    at g (y.js:2:2)";
    const bare = new Error("x"); bare.stack = "Error: x";
    return [util.inspect({ e: bare }), util.inspect({ e: err }), util.inspect({ err, nested: { err } }, { compact: true }), util.inspect({ long }, { compact: true }), util.inspect([err])];`;
  assert.deepEqual(await evalInWorker(t, body, NODE), [
    "{ e: [Error: x] }",
    "{\n  e: Error: foo\n  bar\n      at f (x.js:1:1)\n}",
    "{ err: Error: foo\n   bar\n       at f (x.js:1:1),\n  nested: { err: Error: foo\n      bar\n          at f (x.js:1:1) } }",
    "{ long:\n   Error: foo\n       at aVeryLongFunctionNameThatGoesOnAndOn (some/long/path/to/a/file.js:100:20)\n       at g (y.js:2:2) }",
    "[\n  Error: foo\n  bar\n      at f (x.js:1:1)\n]",
  ]);
});

test("util.inspect: an error's own properties after its stack, sparse arrays' empty items, a null-prototype object named by what made it; format's %o/%O quote strings", async (t) => {
  const body = `const util = (await import("node:util")).default;
    const err = new Error("foo\\nbar"); err.stack = "Error: foo\\nbar\\n    at f (x.js:1:1)"; err.foo = "bar";
    const coded = Object.assign(new Error("x"), { code: "E_X" }); coded.stack = "Error: x\\n    at g (y.js:2:2)";
    class Foobar extends Array {}
    const arr = new Foobar(5); arr.aaa = true;
    const sparse = [1, , , 4]; sparse[9] = 10;
    return [util.inspect(err, { compact: true, breakLength: 5 }), util.inspect(coded), util.inspect(arr), util.inspect(sparse), util.inspect(Object.setPrototypeOf(new (class Foo {})(), null)), util.inspect(Object.create(null)),
      util.format("%o", "foo"), util.format("%O", "foo"), util.format("%O", [1, "a"])];`;
  assert.deepEqual(await evalInWorker(t, body, NODE), [
    "{ Error: foo\nbar\n    at f (x.js:1:1)\n  foo: 'bar' }",
    "Error: x\n    at g (y.js:2:2) {\n  code: 'E_X'\n}",
    "Foobar(5) [ <5 empty items>, aaa: true ]",
    "[ 1, <2 empty items>, 4, <5 empty items>, 10 ]",
    "[Foo: null prototype] {}",
    "[Object: null prototype] {}",
    "'foo'", "'foo'", "[ 1, 'a' ]",
  ]);
});
