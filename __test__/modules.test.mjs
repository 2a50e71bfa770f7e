// Extra modules a worker imports: ES modules (relative and nested), WebAssembly, text, data and
// JSON, with clear errors for missing modules and syntax errors inside them, and workerd's error
// for a built-in module the worker may not import.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const ADD_WASM = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3, 97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11]);

test("a worker imports ES modules, WebAssembly, text, data and JSON", async (t) => {
  const worker = await useWorker(t, {
    filename: "src/index.js",
    script: `import { greet } from "./lib/greet.js";
      import addModule from "add.wasm";
      import banner from "./banner.txt";
      import raw from "./blob.bin";
      import config from "./config.json";
      const { exports } = new WebAssembly.Instance(addModule);
      export default { fetch() {
        return Response.json({ greeting: greet("you"), sum: exports.add(2, 40), banner, raw: [...new Uint8Array(raw)], config, isModule: addModule instanceof WebAssembly.Module });
      } };`,
    modules: {
      "src/lib/greet.js": `import { PREFIX } from "../constants.js"; export function greet(name) { return PREFIX + name; }`,
      "src/constants.js": `export const PREFIX = "hello ";`,
      "add.wasm": ADD_WASM,
      "src/banner.txt": "== banner ==",
      "src/blob.bin": new Uint8Array([1, 2, 3]),
      "src/config.json": JSON.stringify({ debug: true }),
    },
  });
  assert.equal(worker.format, "module");
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), {
    greeting: "hello you", sum: 42, banner: "== banner ==", raw: [1, 2, 3], config: { debug: true }, isModule: true,
  });
});

test("missing modules and syntax errors in modules are clear errors", async () => {
  await assert.rejects(
    createWorker({ script: `import x from "./nope.js"; export default { fetch() {} }`, filename: "main.js", modules: { "other.js": "export default 1" }, onLog() {} }),
    (e) => e instanceof TypeError && /Cannot resolve module "\.\/nope\.js" imported by "main\.js".*other\.js/.test(e.message),
  );
  await assert.rejects(
    createWorker({ script: `import x from "./bad.js"; export default { fetch() {} }`, modules: { "bad.js": "export const = 1;" }, onLog() {} }),
    (e) => e instanceof SyntaxError && /bad\.js:1:/.test(e.message),
  );
  await assert.rejects(
    createWorker({ script: `import m from "./m.wasm"; export default { fetch() {} }`, modules: { "m.wasm": new Uint8Array([1, 2, 3]) }, onLog() {} }),
    (e) => e instanceof WebAssembly.CompileError || /WebAssembly|wasm/i.test(e.message),
  );
  await assert.rejects(createWorker({ script: "export default {}", modules: { "x.js": 5 }, onLog() {} }), /options\.modules\["x\.js"\] must be a string, bytes/);
  await assert.rejects(createWorker({ script: "export default {}", modules: { "x": { type: "yaml", content: "" } }, onLog() {} }), /options\.modules\["x"\]\.type must be one of/);
});

// workerd's `namedExports` of a CommonJS module (its commonjs-module-test): the named exports are
// exactly the names given, one that module.exports lacks being undefined (checked against workerd).
// Without them, here, the own properties of module.exports (workerd: `default` alone).
test("a CommonJS module's namedExports are its named exports, as workerd's", async (t) => {
  const worker = await useWorker(t, {
    script: `import { foo, bar, default as baz } from "foo";
      import * as ns from "foo";
      import * as plain from "plain";
      export default { fetch() {
        return Response.json({ foo, bar: bar === undefined, same: baz.foo === foo, keys: Object.keys(ns).sort(), hasBar: "bar" in ns, plain: Object.keys(plain).sort() });
      } };`,
    modules: { foo: { type: "commonjs", content: "exports.foo = 1; exports.hidden = 2;", namedExports: ["foo", "bar"] }, plain: { type: "commonjs", content: "exports.a = 1; exports.b = 2;" } },
  });
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), { foo: 1, bar: true, same: true, keys: ["bar", "default", "foo"], hasBar: true, plain: ["a", "b", "default"] });
  await assert.rejects(createWorker({ script: "export default {}", modules: { x: { type: "esm", content: "", namedExports: ["a"] } }, onLog() {} }), /options\.modules\["x"\]\.namedExports is only for a module of type "commonjs"/);
  await assert.rejects(createWorker({ script: "export default {}", modules: { x: { type: "commonjs", content: "", namedExports: "a" } }, onLog() {} }), /options\.modules\["x"\]\.namedExports must be an array of strings/);
});

test("a built-in module the worker may not import: workerd's Error: No such module \"…\". (dynamic import() alone, a static import with what exists after it)", async (t) => {
  const specifiers = ["cloudflare:nope", "workerd:nope", "node:nope", "node:fs"];
  // workerd 2026-04-26, same probe: each rejects with Error and this message.
  const worker = await useWorker(t, {
    compatibilityDate: "2026-04-26",
    script: `export default { async fetch() {
      const out = [];
      for (const s of ${JSON.stringify(specifiers)}) {
        try { await import(s); out.push("imported"); } catch (e) { out.push([e.constructor === Error, e.name, e.message]); }
      }
      return Response.json(out);
    } };`,
  });
  assert.deepEqual(
    await (await dispatch(worker, "http://x/")).json(),
    specifiers.map((s) => [true, "Error", `No such module "${s}".`]),
  );
  for (const [specifier, second, flags] of [
    ["cloudflare:nope", /^workerbox has cloudflare:email, .*cloudflare:sockets, .*cloudflare:workers, cloudflare:workflows, .*workerd:unsafe/, []],
    ["node:nope", /^The worker may import node:_http_agent, /, ["nodejs_compat"]],
    ["node:fs", /^node: modules need the nodejs_compat compatibility flag/, []],
  ]) {
    const error = await createWorker({ script: `import "${specifier}"; export default { fetch() {} };`, compatibilityDate: "2026-04-26", compatibilityFlags: flags, onLog() {} }).then(
      () => assert.fail(`${specifier} imported`),
      (e) => e,
    );
    assert.equal(error.name, "Error", specifier);
    const start = `No such module "${specifier}". `;
    assert.ok(error.message.startsWith(start), error.message);
    assert.match(error.message.slice(start.length), second);
  }
});

test("require() of a built-in module the worker may not import: workerd's Error: No such module \"…\".", async (t) => {
  // workerd 2026-04-26, same probe (a CommonJS module of the worker requiring each, nodejs_compat on).
  const specifiers = ["node:nope", "cloudflare:nope", "workerd:nope"];
  const worker = await useWorker(t, {
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["nodejs_compat"],
    script: `import out from "./probe.cjs"; export default { fetch() { return Response.json(out); } };`,
    modules: {
      "probe.cjs": {
        type: "commonjs",
        content: `module.exports = ${JSON.stringify(specifiers)}.map((s) => { try { require(s); return "required"; } catch (e) { return [e.constructor === Error, e.message]; } });`,
      },
    },
  });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), specifiers.map((s) => [true, `No such module "${s}".`]));
});
