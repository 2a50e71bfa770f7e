// Module loading as workerd's new-module-registry-test and node-compat-v2-test check it (issue 44,
// modules cluster): bundle module names normalized as workerd's new registry does (trimmed, no
// escape from /bundle, percent-escapes decoded, query and fragment dropped, a URL name kept), a
// bundle module named "node:fs" standing in for the built-in, a one-byte specifier read as UTF-8
// bytes, CommonJS __filename/__dirname and require() of a file:///bundle/ URL, workerd's words for
// require() of a module with top-level await, a dynamically imported module's top level running
// outside the request, source phase imports (`import source`, `import.source()`) of Wasm, and
// process.getBuiltinModule / cloudflare:workers' `cache`. Expected values: what workerd
// (2026-04-26 binary) printed for the same worker and modules.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const ADD_WASM = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3, 97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11]);

const MAIN = `
import fsAlias from "node:fs";
import * as workers from "cloudflare:workers";
import { createRequire } from "node:module";
export default { async fetch() {
  const out = {};
  const res = async (f) => { try { return await f(); } catch (e) { return e.name + ": " + e.message; } };
  out.fsAlias = fsAlias;
  out.cache = typeof workers.cache;
  out.sockets = process.getBuiltinModule("cloudflare:sockets") === await import("cloudflare:sockets");
  out.names = await res(async () => [(await import("abc")).default, (await import("outside")).default, (await import("https://example.com/mod")).default, (await import("should/be/ok")).default, (await import("\\xE9\\x83\\xA8")).default]);
  out.cjs = await res(async () => (await import("dir/cjs")).default);
  const require = createRequire(import.meta.url);
  out.requireUrl = await res(() => require(import.meta.resolve("dir/cjs")));
  out.tla = await res(() => require("tla"));
  out.topIo = await res(() => import("io"));
  out.sourceStatic = await res(async () => { const m = await import("uses-source"); return m.default instanceof WebAssembly.Module; });
  out.sourceDynamic = await res(async () => (await import.source("add.wasm")) instanceof WebAssembly.Module);
  out.sourceNotWasm = await res(() => import.source("abc"));
  out.sourceNotWasmStatic = await res(() => import("bad-source"));
  return Response.json(out);
} };`;

const MODULES = {
  "node:fs": "export default 'alias'",
  "add.wasm": ADD_WASM,
  "/%61bc?q#f": "export default import.meta.url",
  "  ..//outside  ": "export default 'out'",
  "https://example.com/mod": "export default 'url'",
  "file:///bundl%65/should/b%65/ok": "export default 'ok'",
  "部": "export default 'utf8'",
  "dir/cjs": { type: "commonjs", content: "module.exports = { f: __filename, d: __dirname }" },
  tla: "await 0; export default 1",
  io: "setTimeout(() => {}, 1); export default 1",
  "uses-source": "import source m from 'add.wasm'; export default m",
  "bad-source": "import source m from 'abc'; export default m",
};
for (const name of Object.keys(MODULES)) if (typeof MODULES[name] === "string") MODULES[name] = { type: "esm", content: MODULES[name] };

test("new_module_registry: names, aliases, CommonJS, top-level await and I/O, source phase imports as workerd's", { timeout: 60_000 }, async (t) => {
  const worker = await useWorker(t, { script: MAIN, filename: "w", modules: MODULES, compatibilityDate: "2025-10-01", compatibilityFlags: ["nodejs_compat", "new_module_registry"] });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), {
    fsAlias: "alias",
    cache: "object",
    sockets: true,
    names: ["file:///bundle/abc", "out", "url", "ok", "utf8"],
    cjs: { f: "cjs", d: "/bundle/dir" },
    requireUrl: { f: "cjs", d: "/bundle/dir" },
    tla: "Error: Top-level await is not supported in this context for module: file:///bundle/tla",
    topIo: "Error: Disallowed operation called within global scope. Asynchronous I/O (ex: fetch() or connect()), setting a timeout, and generating random values are not allowed within global scope. To fix this error, perform this operation within a handler. https://developers.cloudflare.com/workers/runtime-apis/handlers/",
    sourceStatic: true,
    sourceDynamic: true,
    sourceNotWasm: "SyntaxError: Source phase import not available for module: file:///bundle/abc",
    sourceNotWasmStatic: "SyntaxError: Source phase import not available for module: abc",
  });
});

test("source phase imports and the node: alias without new_module_registry", { timeout: 60_000 }, async (t) => {
  const worker = await useWorker(t, {
    script: `import source m from "add.wasm"; import fs from "node:fs";
      export default { async fetch() {
        let e; try { await import.source("./a.js"); } catch (x) { e = x.name + ": " + x.message; }
        const { exports } = await WebAssembly.instantiate(m);
        return Response.json([m instanceof WebAssembly.Module, exports.add(1, 2), (await import.source("add.wasm")) instanceof WebAssembly.Module, e, fs, typeof process.getBuiltinModule("node:fs")]);
      } };`,
    modules: { "a.js": "export default 5", "add.wasm": ADD_WASM, "node:fs": { type: "esm", content: "export default 'mine'" } },
    compatibilityDate: "2025-10-01",
    compatibilityFlags: ["nodejs_compat"],
  });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), [true, 3, true, "SyntaxError: Source phase import not available for module: a.js", "mine", "object"]);
});

test("mainModule: the module the script wraps has import.meta.main too", { timeout: 60_000 }, async (t) => {
  const worker = await useWorker(t, {
    script: `import inner from "inner"; export default { fetch() { return Response.json([import.meta.main, inner]); } };`,
    modules: { inner: { type: "esm", content: "export default import.meta.main" } },
    mainModule: "inner",
  });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), [true, true]);
  await assert.rejects(createWorker({ script: "export default {}", modules: {}, mainModule: "nope", onLog() {} }), /options\.mainModule must name one of options\.modules, got "nope"/);
});

// typescript_strip_types (experimental; workerd's new-module-registry-ts-test): the ES modules,
// the script included, lose their TypeScript types; what cannot be stripped fails createWorker.
test("typescript_strip_types strips the types of the worker's ES modules", { timeout: 60_000 }, async (t) => {
  const options = { compatibilityFlags: ["typescript_strip_types"], unsafeExperimental: true };
  const worker = await useWorker(t, {
    ...options,
    script: `import { add, PI } from "helper"; const n: number = add(2, 3); export default { fetch(): Response { return Response.json([n, PI, (globalThis as any).x ?? null]); } };`,
    modules: { helper: { type: "esm", content: "export function add(a: number, b: number): number { return a + b; }\nexport const PI: number = 3.14159;" } },
  });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), [5, 3.14159, null]);
  await assert.rejects(createWorker({ ...options, script: "export default {};", modules: { bad: { type: "esm", content: "let x: = 1;" } }, onLog() {} }), /typescript_strip_types could not strip the types of bad:1:7: Unexpected "="/);
  // Without the flag, types are a syntax error, as in workerd.
  await assert.rejects(createWorker({ script: "const n: number = 1; export default {};", onLog() {} }), SyntaxError);
});
