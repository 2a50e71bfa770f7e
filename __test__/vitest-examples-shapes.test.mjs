// workerbox/vitest on the shapes Cloudflare's own Vitest examples use: `ctx.exports` / `exports`
// of cloudflare:workers naming the worker's entrypoints and Durable Object classes (guessed from
// its source and configuration, with Cloudflare's warning for a name the guess missed); a service
// binding of the worker to its own named entrypoint; wrangler's module rules (.sql as text,
// .wasm as a WebAssembly.Module); bindings given in Miniflare's option names, array and object
// forms, and an option workerbox cannot make named in an error; miniflare.queueConsumers
// settings over the wrangler file's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runVitest, vitestProject } from "./helpers.mjs";

// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const ADD_WASM = Buffer.from("0061736d0100000001070160027f7f017f030201000707010361646400000a09010700200020016a0b", "hex");


const makeProject = (t, files) => vitestProject(t, "shapes", files);

const config = (options) => `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest(${options})] };\n`;

test("ctx.exports: entrypoints and Durable Object classes of the worker, a self service binding to a named entrypoint, a warning for a name the guess missed", async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({
      name: "shapes",
      main: "src/index.ts",
      compatibility_date: "2026-01-01",
      migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }],
      services: [{ binding: "SELF_NAMED", service: "shapes", entrypoint: "Greeter" }, { binding: "SELF_HANDLER", service: "shapes", entrypoint: "handler" }],
    }),
    "src/more.ts": `import { WorkerEntrypoint } from "cloudflare:workers";\nexport class Reexported extends WorkerEntrypoint { hi(): string { return "re:" + JSON.stringify(this.ctx.props); } }\n`,
    "src/index.ts": [
      `import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";`,
      `export * from "./more";`,
      `export class Greeter extends WorkerEntrypoint { greet(name: string): string { return "hello " + name; } }`,
      `export class Counter extends DurableObject { n = 0; bump(): number { return ++this.n; } }`,
      `export const handler = { fetch: () => new Response("named handler") };`,
      `export default { async fetch(request: Request, env: any, ctx: ExecutionContext) {`,
      `  const url = new URL(request.url);`,
      `  if (url.pathname === "/missing") return new Response(String((ctx.exports as any).Missing));`,
      `  const stub = (ctx.exports as any).Counter.get((ctx.exports as any).Counter.idFromName("a"));`,
      `  return new Response((await (ctx.exports as any).Greeter.greet("x")) + " " + (await stub.bump()));`,
      `} };`,
    ].join("\n"),
    "vitest.config.mjs": config("{}"),
    "test/exports.test.ts": [
      `import { createExecutionContext } from "cloudflare:test";`,
      `import { env, exports } from "cloudflare:workers";`,
      `import { it, expect, vi } from "vitest";`,
      `it("exports of cloudflare:workers", async () => {`,
      `  expect(await (exports as any).Greeter.greet("t")).toBe("hello t");`,
      `  expect(await (exports as any).Reexported.hi()).toBe("re:{}");`,
      `  const stub = (exports as any).Counter.get((exports as any).Counter.idFromName("b"));`,
      `  expect(await stub.bump()).toBe(1);`,
      `  expect(Object.keys(exports).sort()).toEqual(["Counter", "Greeter", "Reexported", "default"]);`,
      `  expect(await (createExecutionContext() as any).exports.Greeter.greet("c")).toBe("hello c");`,
      `});`,
      `it("ctx.exports inside the worker", async () => {`,
      `  expect(await (await exports.default.fetch("http://x/")).text()).toBe("hello x 1");`,
      `  expect(await (await exports.default.fetch("http://x/")).text()).toBe("hello x 2");`,
      `});`,
      `it("a service binding of the worker to its own named entrypoint and handler object", async () => {`,
      `  expect(await (env as any).SELF_NAMED.greet("s")).toBe("hello s");`,
      `  expect(await (await (env as any).SELF_HANDLER.fetch("http://x/")).text()).toBe("named handler");`,
      `});`,
      `it("warns on a name the guess missed", async () => {`,
      `  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});`,
      `  expect(await (await exports.default.fetch("http://x/missing")).text()).toBe("undefined");`,
      `  expect(warn).toHaveBeenCalledWith(expect.stringContaining("Attempted to access 'ctx.exports.Missing', which was not defined for the main Worker."));`,
      `  warn.mockRestore();`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 4, output);
});

test("module rules: .sql as text (and ?raw left to Vite), .wasm and .wasm?module as WebAssembly.Module, a project rule over the defaults", async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "rules", main: "src/index.js", compatibility_date: "2026-01-01", rules: [{ type: "Data", globs: ["**/*.dat"] }] }),
    "src/query.sql": "SELECT 1;\n",
    "src/blob.dat": "abc",
    "src/add.wasm": ADD_WASM,
    "src/index.js": [
      `import sql from "./query.sql";`,
      `import raw from "./query.sql?raw";`,
      `import blob from "./blob.dat";`,
      `import add from "./add.wasm";`,
      `import add2 from "./add.wasm?module";`,
      `export default { fetch() {`,
      `  const sum = new WebAssembly.Instance(add).exports.add(2, 3) + new WebAssembly.Instance(add2).exports.add(1, 1);`,
      `  return Response.json({ sql, same: sql === raw, blob: [...new Uint8Array(blob)], isBuffer: blob instanceof ArrayBuffer, sum, module: add instanceof WebAssembly.Module });`,
      `} };`,
    ].join("\n"),
    "vitest.config.mjs": config("{}"),
    "test/rules.test.js": [
      `import { exports } from "cloudflare:workers";`,
      `import { it, expect } from "vitest";`,
      `it("loads files by the rules", async () => {`,
      `  expect(await (await exports.default.fetch("http://x/")).json()).toEqual({ sql: "SELECT 1;\\n", same: true, blob: [97, 98, 99], isBuffer: true, sum: 7, module: true });`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 1, output);
});

test("Miniflare's binding options (array and object forms) make bindings; queueConsumers settings apply; an unsupported option is named", async (t) => {
  const options = `{ miniflare: { kvNamespaces: ["KV"], r2Buckets: { BUCKET: "b" }, d1Databases: ["DB"], durableObjects: { OBJ: "Thing" }, queueProducers: { Q: "jobs" }, queueConsumers: { jobs: { maxBatchTimeout: 0.05 } }, bindings: { GREETING: "hi" } } }`;
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "mf", main: "src/index.js", compatibility_date: "2026-01-01", kv_namespaces: [{ binding: "RESULTS", id: "r" }], queues: { producers: [{ binding: "Q2", queue: "jobs" }], consumers: [{ queue: "jobs", max_batch_timeout: 30 }] } }),
    "src/index.js": [
      `import { DurableObject } from "cloudflare:workers";`,
      `export class Thing extends DurableObject { hi() { return "thing"; } }`,
      `export default {`,
      `  fetch() { return new Response("ok"); },`,
      `  async queue(batch, env) { for (const m of batch.messages) await env.RESULTS.put("got", String(m.body)); },`,
      `};`,
    ].join("\n"),
    "vitest.config.mjs": config(options),
    "test/mf.test.js": [
      `import { env } from "cloudflare:workers";`,
      `import { it, expect, vi } from "vitest";`,
      `it("makes the bindings", async () => {`,
      `  await env.KV.put("k", "v");`,
      `  expect(await env.KV.get("k")).toBe("v");`,
      `  await env.BUCKET.put("o", "body");`,
      `  expect(await (await env.BUCKET.get("o")).text()).toBe("body");`,
      `  expect((await env.DB.prepare("SELECT 2 AS n").first()).n).toBe(2);`,
      `  expect(await env.OBJ.get(env.OBJ.idFromName("a")).hi()).toBe("thing");`,
      `  expect(env.GREETING).toBe("hi");`,
      `});`,
      `it("delivers with the shorter maxBatchTimeout", async () => {`,
      `  await env.Q.send("m1");`,
      `  await vi.waitUntil(async () => (await env.RESULTS.get("got")) === "m1", { timeout: 3000 });`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);

  const bad = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "bad", main: "src/index.js", compatibility_date: "2026-01-01" }),
    "src/index.js": `export default { fetch() { return new Response("ok"); } };\n`,
    "vitest.config.mjs": config(`{ miniflare: { vectorize: { V: { index_name: "x" } } } }`),
    "test/a.test.js": `import { it } from "vitest";\nit("never runs", () => {});\n`,
  });
  const refused = await runVitest(bad);
  assert.notEqual(refused.code, 0);
  assert.match(refused.output, /vectorize is not supported by workerbox\/vitest/);
});

test("ratelimits (shared by namespace_id, cleared by reset()), pipelines, a Durable Object declared only in `exports`, an auxiliary worker's scheduled() through a service binding, a tail-only auxiliary worker", async (t) => {
  const options = `{ miniflare: { compatibilityFlags: ["service_binding_extra_handlers"], serviceBindings: { AUX: "aux" }, workers: [
    { name: "aux", modules: true, script: "export default { async scheduled(controller) { if (controller.cron === 'fail') throw new Error('no'); } };", compatibilityDate: "2024-01-01" },
    { name: "tail", modules: [{ path: "index.js", type: "ESModule", contents: "export default { tail() {} };" }], compatibilityDate: "2024-01-01" },
  ] } }`;
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({
      name: "more",
      main: "src/index.js",
      compatibility_date: "2026-01-01",
      ratelimits: [{ name: "RL", namespace_id: "1", simple: { limit: 2, period: 60 } }, { name: "RL_ALIAS", namespace_id: "1", simple: { limit: 2, period: 60 } }],
      exports: { Unbound: { type: "durable-object", storage: "sqlite" } },
      pipelines: [{ binding: "PIPE", stream: "s" }],
    }),
    "src/index.js": [
      `import { DurableObject } from "cloudflare:workers";`,
      `class Unbound extends DurableObject { hi() { return "unbound"; } }`,
      // Exported in a way the source guess cannot see: only the configuration names it.
      `const names = { Unbound };`,
      `export const { Unbound: UnboundExport } = names;`,
      `export { Unbound };`,
      `export default { fetch() { return new Response("ok"); } };`,
    ].join("\n"),
    "vitest.config.mjs": config(options),
    "test/more.test.js": [
      `import { reset } from "cloudflare:test";`,
      `import { env, exports } from "cloudflare:workers";`,
      `import { it, expect } from "vitest";`,
      `it("rate limiters", async () => {`,
      `  expect((await env.RL.limit({ key: "k" })).success).toBe(true);`,
      `  expect((await env.RL_ALIAS.limit({ key: "k" })).success).toBe(true);`,
      `  expect((await env.RL.limit({ key: "k" })).success).toBe(false);`,
      `  expect((await env.RL.limit({ key: "other" })).success).toBe(true);`,
      `  await reset();`,
      `  expect((await env.RL.limit({ key: "k" })).success).toBe(true);`,
      `});`,
      `it("a pipeline takes records", async () => {`,
      `  expect(await env.PIPE.send([{ a: 1 }])).toBe(undefined);`,
      `});`,
      `it("a class declared in exports", async () => {`,
      `  expect(await exports.Unbound.get(exports.Unbound.idFromName("a")).hi()).toBe("unbound");`,
      `});`,
      `it("scheduled() through a service binding", async () => {`,
      `  expect(await env.AUX.scheduled({ cron: "* * * * *", scheduledTime: new Date(1000) })).toEqual({ outcome: "ok", noRetry: false });`,
      `  expect((await env.AUX.scheduled({ cron: "fail" })).outcome).toBe("exception");`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 4, output);
});

test("a wrangler file with neither main nor assets: tests run with its bindings; a function in miniflare.serviceBindings answers", async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "nomain", compatibility_date: "2026-01-01", vars: { V: "x" } }),
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({ miniflare: { kvNamespaces: ["KV"], serviceBindings: { ASSETS(request) { return new Response("assets:" + new URL(request.url).pathname); } } } })] };\n`,
    "test/nomain.test.js": [
      `import { env } from "cloudflare:workers";`,
      `import { it, expect } from "vitest";`,
      `it("bindings without a worker", async () => {`,
      `  expect(env.V).toBe("x");`,
      `  await env.KV.put("a", "b");`,
      `  expect(await env.KV.get("a")).toBe("b");`,
      `  expect(await (await env.ASSETS.fetch("http://x/y")).text()).toBe("assets:/y");`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 1, output);
});

test("evictDurableObject(stub, { webSockets: \"close\" }) closes the object's WebSockets; withEnv() swaps the importable env in a test", async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({ name: "ws", main: "src/index.js", compatibility_date: "2026-01-01", vars: { NAME: "base" }, durable_objects: { bindings: [{ name: "OBJ", class_name: "Sockets" }] }, migrations: [{ tag: "v1", new_sqlite_classes: ["Sockets"] }] }),
    "src/index.js": [
      `import { DurableObject } from "cloudflare:workers";`,
      `export class Sockets extends DurableObject {`,
      `  fetch() { const [client, server] = Object.values(new WebSocketPair()); this.ctx.acceptWebSocket(server); return new Response(null, { status: 101, webSocket: client }); }`,
      `}`,
      `export default { fetch() { return new Response("ok"); } };`,
    ].join("\n"),
    "vitest.config.mjs": config("{}"),
    "test/ws.test.js": [
      `import { evictDurableObject } from "cloudflare:test";`,
      `import { env, withEnv } from "cloudflare:workers";`,
      `import { it, expect } from "vitest";`,
      `it("closes on eviction", async () => {`,
      `  const stub = env.OBJ.get(env.OBJ.idFromName("a"));`,
      `  const socket = (await stub.fetch("http://x/", { headers: { Upgrade: "websocket" } })).webSocket;`,
      `  socket.accept();`,
      `  const closed = new Promise((resolve) => socket.addEventListener("close", (event) => resolve(event.code)));`,
      `  await evictDurableObject(stub, { webSockets: "close" });`,
      `  expect(await closed).toBe(1001);`,
      `  await expect(evictDurableObject(stub, { webSockets: "drop" })).rejects.toThrow(/"hibernate" or "close"/);`,
      `});`,
      `it("withEnv", async () => {`,
      `  expect(await withEnv({ NAME: "over" }, async () => { await null; return env.NAME; })).toBe("over");`,
      `  expect(env.NAME).toBe("base");`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});
