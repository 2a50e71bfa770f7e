// Modules loaded on demand: dynamic import() of the worker's own modules, import.meta, and
// createWorker's `loadModule` host loader (sync or async) for static imports, import() and
// require(), with its errors, its cache, and a dispose while the host never answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

async function json(worker, path = "/") {
  const response = await dispatch(worker, new Request(`http://w${path}`));
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}

test("import() loads the worker's own modules, ES and JSON, once; import.meta has url and main", async (t) => {
  const worker = await useWorker(t, {
    filename: "src/index.js",
    script: `export default { async fetch() {
        const a = await import("./lib/a.js");
        const again = await import("./lib/a.js");
        const { default: config } = await import("./config.json");
        let missing;
        try { await import("./nope.js"); } catch (error) { missing = error.message; }
        return Response.json({ value: a.value(), same: a === again, count: a.count, config, missing, meta: { url: import.meta.url, main: import.meta.main }, inner: a.meta });
      } };`,
    modules: {
      "src/lib/a.js": `export let count = 0; count++; export const value = () => "from a"; export const meta = { url: import.meta.url, main: import.meta.main };`,
      "src/config.json": JSON.stringify({ on: true }),
    },
  });
  const result = await json(worker);
  assert.equal(result.value, "from a");
  assert.equal(result.same, true);
  assert.equal(result.count, 1);
  assert.deepEqual(result.config, { on: true });
  assert.match(result.missing, /Cannot resolve module "\.\/nope\.js"/);
  assert.deepEqual(result.meta, { url: "file:///bundle/src/index.js", main: true });
  assert.deepEqual(result.inner, { url: "file:///bundle/src/lib/a.js", main: false });
});

test("a dynamic import's top-level await settles before its promise; its throw rejects it", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch() {
        const slow = await import("./slow.js");
        let error;
        try { await import("./bad.js"); } catch (e) { error = e.message; }
        return Response.json({ ready: slow.ready, error });
      } };`,
    modules: {
      "slow.js": `export let ready = false; await new Promise((r) => setTimeout(r, 5)); ready = true;`,
      "bad.js": `throw new Error("bad module");`,
    },
  });
  assert.deepEqual(await json(worker), { ready: true, error: "bad module" });
});

test("loadModule answers static imports the modules cannot, relative to the host's names", async (t) => {
  const calls = [];
  const files = {
    "/virtual/pkg/index.js": `import { twice } from "./util.js"; export const greet = (n) => twice("hi " + n);`,
    "/virtual/pkg/util.js": `export const twice = (s) => s + s;`,
  };
  const worker = await useWorker(t, {
    script: `import { greet } from "pkg"; import { greet as again } from "pkg";
      export default { fetch() { return Response.json({ text: greet("x"), same: greet === again }); } };`,
    loadModule(specifier, referrer) {
      calls.push([specifier, referrer]);
      if (specifier === "pkg") return { name: "/virtual/pkg/index.js", content: files["/virtual/pkg/index.js"] };
      if (specifier === "./util.js") return { name: "/virtual/pkg/util.js", type: "esm", content: files["/virtual/pkg/util.js"] };
      return undefined;
    },
  });
  assert.deepEqual(await json(worker), { text: "hi xhi x", same: true });
  // One call per import (cached after), each with the importing module's name.
  assert.deepEqual(calls, [["pkg", "worker.js"], ["./util.js", "/virtual/pkg/index.js"]]);
});

test("an async loadModule serves import() during a request, with import.meta.url a file: URL, and CommonJS require()", async (t) => {
  const kinds = [];
  const worker = await useWorker(t, {
    script: `export default { async fetch() {
        const mod = await import("/srv/lib/mod.mjs");
        const cjs = await import("cjs-pkg");
        return Response.json({ url: mod.url, sum: cjs.default.sum(2, 3), filename: cjs.default.filename, data: cjs.default.data });
      } };`,
    async loadModule(specifier, referrer, { kind }) {
      kinds.push(`${kind}:${specifier}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
      switch (specifier) {
        case "/srv/lib/mod.mjs":
          return { name: "/srv/lib/mod.mjs", content: "export const url = import.meta.url;" };
        case "cjs-pkg":
          return { name: "/srv/node_modules/cjs-pkg/index.js", type: "commonjs", content: `const { add } = require("./add"); const data = require("./data.json"); module.exports = { sum: add, filename: __filename, data };` };
        case "./add":
          assert.equal(referrer, "/srv/node_modules/cjs-pkg/index.js");
          return { name: "/srv/node_modules/cjs-pkg/add.js", type: "commonjs", content: "exports.add = (a, b) => a + b;" };
        case "./data.json":
          return { name: "/srv/node_modules/cjs-pkg/data.json", content: '{"n":1}' };
        default:
          return undefined;
      }
    },
  });
  const result = await json(worker);
  assert.deepEqual(result, { url: "file:///srv/lib/mod.mjs", sum: 5, filename: "/srv/node_modules/cjs-pkg/index.js", data: { n: 1 } });
  assert.deepEqual(kinds, ["import:/srv/lib/mod.mjs", "import:cjs-pkg", "require:./add", "require:./data.json"]);
});

test("loadModule can supply node: modules workerbox does not have", async (t) => {
  const worker = await useWorker(t, {
    compatibilityFlags: ["nodejs_compat"],
    script: `import sea from "node:sea"; import { Buffer } from "node:buffer";
      export default { fetch() { return Response.json({ shim: sea.shim, buffer: Buffer.from("hi").toString("hex") }); } };`,
    loadModule(specifier) {
      if (specifier === "node:sea") return { name: "node:sea", type: "esm", content: "export default { shim: true };" };
    },
  });
  assert.deepEqual(await json(worker), { shim: true, buffer: "6869" });
});

test("loadModule's failures: not found, a throw, a bad answer — each names the module", async (t) => {
  const loadModule = (specifier) => {
    if (specifier === "throws") throw new Error("disk on fire");
    if (specifier === "bad-type") return { type: "python", content: "x" };
    return undefined;
  };
  await assert.rejects(createWorker({ script: `import "missing"; export default {};`, loadModule, onLog() {} }), /Cannot resolve module "missing" imported by "worker\.js": .*loadModule did not find it/);
  await assert.rejects(createWorker({ script: `import "throws"; export default {};`, loadModule, onLog() {} }), /Cannot load module "throws" imported by "worker\.js": Error: disk on fire/);
  await assert.rejects(createWorker({ script: `import "bad-type"; export default {};`, loadModule, onLog() {} }), /Cannot load module "bad-type".*type must be one of/);
  await assert.rejects(createWorker({ script: `export default {};`, loadModule: "nope", onLog() {} }), /options\.loadModule must be a function/);
  // In a request, the failure rejects the import() and the worker keeps serving.
  const worker = await useWorker(t, {
    script: `export default { async fetch() { try { await import("throws"); } catch (e) { return new Response(e.message); } } };`,
    loadModule,
  });
  assert.match(await (await dispatch(worker, new Request("http://w/"))).text(), /disk on fire/);
});

test("disposing a worker whose loadModule never answers ends at once, and nothing is left running", async () => {
  let asked;
  const called = new Promise((resolve) => (asked = resolve));
  const worker = await createWorker({
    script: `export default { async fetch() { await import("never"); return new Response("loaded"); } };`,
    loadModule: () => {
      asked();
      return new Promise(() => {});
    },
    onLog() {},
  });
  const outcome = dispatch(worker, new Request("http://w/")).then(() => "answered", (error) => error);
  await called;
  const started = Date.now();
  await worker.dispose();
  assert.equal((await outcome).code, "ERR_WORKER_DISPOSED");
  assert.ok(Date.now() - started < 5000, `dispose took ${Date.now() - started} ms`);
});

test("a loadModule answer may carry the module's imports resolved ahead: one call links the graph", async (t) => {
  const calls = [];
  const worker = await useWorker(t, {
    script: `import { total } from "graph"; export default { fetch() { return new Response(String(total)); } };`,
    loadModule(specifier, referrer) {
      calls.push(specifier);
      if (specifier !== "graph") return undefined;
      return {
        name: "/g/index.js",
        content: `import { a } from "./a.js"; import { b } from "dep-b"; export const total = a + b;`,
        dependencies: [
          { referrer: "/g/index.js", specifier: "./a.js", name: "/g/a.js", content: `import { b } from "dep-b"; export const a = b * 10;` },
          { referrer: "/g/index.js", specifier: "dep-b", name: "/g/node_modules/b.js", type: "esm", content: "export const b = 4;" },
          { referrer: "/g/a.js", specifier: "dep-b", name: "/g/node_modules/b.js" },
        ],
      };
    },
  });
  assert.equal(await (await dispatch(worker, new Request("http://w/"))).text(), "44");
  assert.deepEqual(calls, ["graph"]);
  await assert.rejects(
    createWorker({ script: `import "bad"; export default {};`, loadModule: () => ({ name: "/x.js", content: "", dependencies: [{ referrer: "/x.js" }] }), onLog() {} }),
    /dependencies\[0\] that has no specifier/,
  );
});
