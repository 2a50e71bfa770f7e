// What Cloudflare's own Vitest examples (workers-sdk's fixtures/vitest-plugin-examples) needed
// beyond the shapes in vitest-examples-shapes.test.mjs, each on a small project of its own:
// createPagesEventContext() as Cloudflare's pool makes it; a `no_nodejs_compat_v2` opt-out
// dropped as that pool drops it; a Durable Object class of an auxiliary worker (`script_name`);
// Cloudflare's pool's RPC errors for a Durable Object's missing members; a fetch() answered by
// `outboundService` carrying the request's URL; a dependency's require() of a built-in the
// worker's flags lack getting unenv's polyfill; the worker's main module imported with
// cloudflare:test (before the test file's body). Underneath, in the runtime: require() of an ES
// module (workerd's require(esm)) and the `url` of a fetch() the host's outbound handler answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnNodeSync, underEmulator, scaled } from "./child-node.mjs";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runVitest, useWorker, vitestProject } from "./helpers.mjs";
import { dispatch } from "../index.js";

// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const ADD_WASM = Buffer.from("0061736d0100000001070160027f7f017f030201000707010361646400000a09010700200020016a0b", "hex");

const makeProject = (t, files) => vitestProject(t, "fixes", files);
const config = (options) => `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest(${options})] };\n`;

test("createPagesEventContext: needs ASSETS; next() with the original request (a clone for the function), a relative rewrite, no next", { timeout: scaled(120_000) }, async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "pages", compatibility_date: "2026-01-01" }),
    "vitest.config.mjs": config(`{ miniflare: { serviceBindings: { ASSETS: () => new Response("asset") } } }`),
    "test/pages.test.js": [
      `import { createPagesEventContext } from "cloudflare:test";`,
      `import { env } from "cloudflare:workers";`,
      `import { it, expect } from "vitest";`,
      `it("reads the body in the function and in next()", async () => {`,
      `  const request = new Request("https://example.com/dir/", { method: "POST", body: "body" });`,
      `  const ctx = createPagesEventContext({ request, next: async (r) => new Response(r.method + " " + r.url + " " + (await r.text())) });`,
      `  expect(await ctx.request.text()).toBe("body");`,
      `  expect(await (await ctx.next()).text()).toBe("POST https://example.com/dir/ body");`,
      `  expect(await (await ctx.next("./new", { method: "PATCH" })).text()).toBe("PATCH https://example.com/dir/new ");`,
      `});`,
      `it("refuses next() without a next function, and a worker without ASSETS", async () => {`,
      `  const ctx = createPagesEventContext({ request: new Request("https://example.com") });`,
      `  await expect(ctx.next()).rejects.toThrow("Cannot call \`EventContext#next()\` without including \`next\` property");`,
      `  const assets = env.ASSETS;`,
      `  delete env.ASSETS;`,
      `  try {`,
      `    expect(() => createPagesEventContext({ request: new Request("https://example.com") })).toThrow("without defining \`ASSETS\` service binding");`,
      `  } finally {`,
      `    env.ASSETS = assets;`,
      `  }`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});

test("no_nodejs_compat_v2 is dropped as Cloudflare's pool drops it: process and Buffer are there", { timeout: scaled(120_000) }, async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "optout", compatibility_date: "2026-01-01", compatibility_flags: ["nodejs_compat", "no_nodejs_compat_v2"] }),
    "vitest.config.mjs": config("{}"),
    "test/optout.test.js": `import { it, expect } from "vitest";\nit("has v2's globals", () => { expect(typeof process).toBe("object"); expect(typeof Buffer).toBe("function"); });\n`,
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 1, output);
});

test("a Durable Object class of an auxiliary worker (script_name, and miniflare.durableObjects' scriptName): its objects, listed; runInDurableObject refuses them", { timeout: scaled(120_000) }, async (t) => {
  const other = `import { DurableObject } from "cloudflare:workers";\nexport class Other extends DurableObject { async fetch() { await this.ctx.storage.put("k", 1); return new Response("other body"); } }\nexport default { fetch: () => new Response("other") };\n`;
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "main", main: "src/index.js", compatibility_date: "2026-01-01", durable_objects: { bindings: [{ name: "OTHER", class_name: "Other", script_name: "other" }] } }),
    "src/index.js": `export default { fetch: () => new Response("main") };\n`,
    "src/other.mjs": other,
    "vitest.config.mjs": config(`{ miniflare: { durableObjects: { ALSO: { className: "Other", scriptName: "other" } }, workers: [{ name: "other", modules: true, scriptPath: "./src/other.mjs", compatibilityDate: "2026-01-01", durableObjects: { OTHER: "Other" } }] } }`),
    "test/other.test.js": [
      `import { listDurableObjectIds, runInDurableObject, runDurableObjectAlarm } from "cloudflare:test";`,
      `import { env } from "cloudflare:workers";`,
      `import { it, expect } from "vitest";`,
      `it("reaches the other worker's objects", async () => {`,
      `  const id = env.OTHER.idFromName("a");`,
      `  expect(await (await env.OTHER.get(id).fetch("http://x/")).text()).toBe("other body");`,
      `  expect(await (await env.ALSO.get(env.ALSO.idFromName("b")).fetch("http://x/")).text()).toBe("other body");`,
      `  await expect(runInDurableObject(env.OTHER.get(id), () => {})).rejects.toThrow("not one of the worker under test's own");`,
      `  await expect(runDurableObjectAlarm(env.OTHER.get(id))).rejects.toThrow(TypeError);`,
      `  const ids = await listDurableObjectIds(env.OTHER);`,
      `  expect(ids.map(String).sort()).toEqual([id.toString(), env.ALSO.idFromName("b").toString()].sort());`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 1, output);
});

test("a Durable Object's missing RPC members fail with Cloudflare's pool's messages; outboundService's answers carry the request's URL", { timeout: scaled(120_000) }, async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "rpc", main: "src/index.js", compatibility_date: "2026-01-01", durable_objects: { bindings: [{ name: "OBJ", class_name: "Obj" }] }, migrations: [{ tag: "v1", new_sqlite_classes: ["Obj"] }] }),
    "src/index.js": `import { DurableObject } from "cloudflare:workers";\nexport class Obj extends DurableObject { field = 1; method() { return 2; } }\nexport default { fetch: () => new Response("ok") };\n`,
    "vitest.config.mjs": config(`{ miniflare: { outboundService: (request) => new Response("out:" + request.url) } }`),
    "test/rpc.test.js": [
      `import { env } from "cloudflare:workers";`,
      `import { it, expect } from "vitest";`,
      `it("names an instance field, and a member neither has", async () => {`,
      `  const stub = env.OBJ.get(env.OBJ.newUniqueId());`,
      `  expect(await stub.method()).toBe(2);`,
      `  await expect(async () => await stub.field).rejects.toThrow('The RPC receiver\\'s prototype does not implement "field", but the receiver instance does.\\nOnly properties and methods defined on the prototype can be accessed over RPC.');`,
      `  await expect(async () => await stub.nothing).rejects.toThrow('The RPC receiver does not implement "nothing".');`,
      `});`,
      `it("fetch() through outboundService", async () => {`,
      `  const response = await fetch("https://example.com/bad?q=1#frag");`,
      `  expect(response.url).toBe("https://example.com/bad?q=1");`,
      `  expect(await response.text()).toMatch(/^out:https:\\/\\/example\\.com\\/bad\\?q=1/);`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});

test("a dependency's require() of a built-in the worker's flags lack gets unenv's polyfill, as wrangler bundles it; its require(\"./x.wasm?module\") gets { default: WebAssembly.Module }", { timeout: scaled(120_000) }, async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "polyfill", compatibility_date: "2025-12-13", compatibility_flags: ["nodejs_compat"] }),
    "node_modules/uses-perf-hooks/package.json": JSON.stringify({ name: "uses-perf-hooks", version: "1.0.0", main: "index.js" }),
    "node_modules/uses-perf-hooks/index.js": `const perf = require("perf_hooks");\nconst prefixed = require("node:perf_hooks");\nexports.now = () => perf.performance.now();\nexports.same = perf === prefixed;\n`,
    "node_modules/uses-wasm/package.json": JSON.stringify({ name: "uses-wasm", version: "1.0.0", main: "index.js" }),
    "node_modules/uses-wasm/add.wasm": ADD_WASM,
    "node_modules/uses-wasm/index.js": `module.exports = (a, b) => { const { default: mod } = require("./add.wasm?module"); return new WebAssembly.Instance(mod).exports.add(a, b); };\n`,
    "vitest.config.mjs": config("{}"),
    "test/polyfill.test.js": `import { now, same } from "uses-perf-hooks";\nimport add from "uses-wasm";\nimport { it, expect } from "vitest";\nit("requires perf_hooks", () => { expect(typeof now()).toBe("number"); expect(same).toBe(true); });\nit("requires .wasm?module", () => { expect(add(2, 40)).toBe(42); });\n`,
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});

test("the worker's main module is imported with cloudflare:test, before the test file's body: a test file it imports registers its suites there, not inside a test", { timeout: scaled(120_000) }, async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "eager", main: "src/index.js", compatibility_date: "2026-01-01", durable_objects: { bindings: [{ name: "OBJ", class_name: "Obj" }] }, migrations: [{ tag: "v1", new_sqlite_classes: ["Obj"] }] }),
    "src/index.js": `import { DurableObject } from "cloudflare:workers";\nimport { rows } from "../test/shared.test.js";\nexport class Obj extends DurableObject { rows() { return rows; } }\nexport default { fetch: () => new Response("ok") };\n`,
    "test/shared.test.js": `import { describe, it, expect } from "vitest";\nexport const rows = [1, 2];\ndescribe("shared", () => { it("runs where it is imported", () => expect(rows.length).toBe(2)); });\n`,
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({})], test: { include: ["test/uses.test.js"] } };\n`,
    "test/uses.test.js": `import { env, runInDurableObject } from "cloudflare:test";\nimport { it, expect } from "vitest";\nit("reaches the object", async () => { expect(await runInDurableObject(env.OBJ.get(env.OBJ.idFromName("a")), (instance) => instance.rows())).toEqual([1, 2]); });\n`,
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.deepEqual(report.testResults[0].assertionResults.map((r) => r.fullName).sort(), ["reaches the object", "shared runs where it is imported"], output);
});

test("runtime: require() of an ES module gives what workerd's require(esm) gives; a top-level await is workerd's error", async (t) => {
  const worker = await useWorker(t, {
    filename: "main.js",
    compatibilityDate: "2026-01-01",
    script: `import cjs from "./lib.cjs"; export default { fetch() { return Response.json(cjs); } };`,
    modules: {
      "lib.cjs": [
        `const withDefault = require("./with-default.mjs");`,
        `const named = require("./named.mjs");`,
        `const exportsKey = require("./exports-key.mjs");`,
        `let tla; try { require("./tla.mjs"); } catch (error) { tla = error.name + ": " + error.message; }`,
        `let thrown; try { require("./throws.mjs"); } catch (error) { thrown = error.message; }`,
        `module.exports = { withDefault, named: named === undefined ? "undefined" : named, exportsKey, tla, thrown, again: require("./with-default.mjs") === withDefault };`,
      ].join("\n"),
      "with-default.mjs": `import { x } from "./named.mjs"; export default { fromDefault: x };`,
      "named.mjs": `export const x = 1;`,
      "exports-key.mjs": `const value = { cjs: true }; export { value as "module.exports" };`,
      "tla.mjs": `await Promise.resolve(); export const y = 2;`,
      "throws.mjs": `throw new Error("boom in module");`,
    },
  });
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), {
    withDefault: { fromDefault: 1 },
    named: "undefined",
    exportsKey: { cjs: true },
    tla: "Error: Top-level await in module is not permitted at this time.",
    thrown: "boom in module",
    again: true,
  });
});

test("types: cloudflare:test's env is ProvidedEnv (the Vitest 3 form's, which projects augment) as well as Cloudflare.Env", { timeout: scaled(120_000), skip: underEmulator("TypeScript 7's tsc is a native binary that tsc.js finds with import.meta.resolve (node_modules holds the x64 one; NODE_PATH does not apply) and execs itself, which qemu-user without binfmt_misc cannot") }, (t) => {
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-vitest-types-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const types = [path.join(root, "node_modules", "@cloudflare", "workers-types", "index.d.ts"), path.join(root, "lib", "vitest", "types.d.ts")];
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: "esnext", moduleResolution: "bundler", target: "es2022", lib: ["esnext"], types: [] }, files: [...types, "env.d.ts", "use.ts"] }));
  fs.writeFileSync(path.join(dir, "env.d.ts"), `type Env = { DB: D1Database };\ndeclare module "cloudflare:test" { interface ProvidedEnv extends Env {} }\ndeclare namespace Cloudflare { interface Env { KV: KVNamespace } }\n`);
  fs.writeFileSync(path.join(dir, "use.ts"), `import { env } from "cloudflare:test";\nexport const db: D1Database = env.DB;\nexport const kv: KVNamespace = env.KV;\n// @ts-expect-error not a binding of either\nexport const nope = env.NOPE;\n`);
  const result = spawnNodeSync([path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", dir], { encoding: "utf8", timeout: 100_000 });
  assert.equal(result.status, 0, result.stdout + result.stderr);
});
