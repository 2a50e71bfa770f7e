// A worker described by a cloudflare.config.ts (wrangler's experimental config) instead of a wrangler
// file: lib/project/config-cloudflare.js reads it (esbuild, `with { type: "cf-worker" }`
// entrypoints, definitions as values, promises or functions of { mode }) into the configuration a
// wrangler file gives, with errors and warnings naming the file and the key as it writes them;
// workerbox/vitest takes it with `cloudflareTest({ experimental: { newConfig } })`, and
// loadProject() and `workerbox dev` take the file, or a folder holding it, as their target.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { runVitest, vitestProject } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const require = createRequire(import.meta.url);
const { readCloudflareConfig } = require("../lib/project/config-cloudflare.js");
const { loadProject } = require("../lib/project/load.js");
const { dispatch } = require("../index.js");

/**
 * What `defineWorker`/`bindings` of wrangler/experimental-config make (the worker's config under
 * the global definition symbol, and tagged binding objects): a package in node_modules, ESM with
 * only an "import" condition, as wrangler's subpath is.
 */
const HELPERS = {
  "node_modules/fake-config/package.json": JSON.stringify({ name: "fake-config", type: "module", exports: { ".": { import: "./index.js" } } }),
  "node_modules/fake-config/index.js": `export const defineWorker = (config) => ({ [Symbol.for("@cloudflare/config:definition")]: { config, type: "worker" } });
export const bindings = new Proxy({}, { get: (_, name) => (options) => ({ type: name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()), ...(name === "text" || name === "json" ? { value: options } : options) }) });
export const triggers = { scheduled: (o) => ({ type: "scheduled", ...o }), queue: (o) => ({ type: "queue", ...o }), fetch: (o) => ({ type: "fetch", ...o }) };
export const exports = { durableObject: (o) => ({ type: "durable-object", ...o }), worker: () => ({ type: "worker" }) };
`,
};

const WORKER = `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  increment() {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS hits (n INTEGER)");
    this.ctx.storage.sql.exec("INSERT INTO hits VALUES (1)");
    return this.ctx.storage.sql.exec("SELECT count(*) AS n FROM hits").one().n;
  }
}
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/kv") {
      await env.MY_KV.put("key", "value");
      return new Response(await env.MY_KV.get("key"));
    }
    return new Response(env.MY_TEXT);
  },
};
`;

const CONFIG = `import { bindings, defineWorker, exports, triggers } from "fake-config";
import { LIMIT } from "./limits.ts";
import * as entrypoint from "./src/index.ts" with { type: "cf-worker" };

const batch: number = LIMIT;
export default defineWorker(async (ctx: { mode?: string }) => ({
  name: "new-config",
  entrypoint,
  compatibilityDate: "2025-12-02",
  compatibilityFlags: ["nodejs_compat"],
  env: {
    MY_TEXT: bindings.text(\`mode \${ctx.mode}\`),
    SETTINGS: bindings.json({ retries: 3 }),
    MY_KV: bindings.kv({ id: "kv-id" }),
    BUCKET: bindings.r2({ name: "bucket" }),
    DB: bindings.d1({ id: "db-id", name: "db" }),
    COUNTER: bindings.durableObject({ workerName: "new-config", exportName: "Counter" }),
    QUEUE: bindings.queue({ name: "jobs" }),
    OTHER: bindings.worker({ workerName: "other", exportName: "Api" }),
    AI: bindings.ai({}),
  },
  exports: { Counter: exports.durableObject({ storage: "sqlite" }), Api: exports.worker() },
  triggers: [triggers.scheduled({ schedule: "*/5 * * * *" }), triggers.queue({ name: "jobs", maxBatchSize: batch }), triggers.fetch({ pattern: "example.com/*" })],
  observability: { enabled: true },
}));
`;

/** CONFIG without the service binding to a worker that is not there, nor the AI binding. */
const CONFIG_LOCAL = CONFIG.split("\n").filter((line) => !/^\s*(OTHER|AI): /.test(line)).join("\n");

function project(t, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-new-config-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries({ ...HELPERS, "src/index.ts": WORKER, "limits.ts": "export const LIMIT = 7;\n", ...files })) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

test("a cloudflare.config.ts reads as the wrangler file it stands for: bindings, exports, triggers, ctx.mode, the cf-worker entrypoint", async (t) => {
  const dir = project(t, { "cloudflare.config.ts": CONFIG });
  const config = await readCloudflareConfig(path.join(dir, "cloudflare.config.ts"), { mode: "test" });
  assert.equal(config.name, "new-config");
  assert.equal(config.mainFile, path.join(dir, "src", "index.ts"));
  assert.equal(config.compatibilityDate, "2025-12-02");
  assert.deepEqual(config.compatibilityFlags, ["nodejs_compat"]);
  assert.deepEqual(config.bindings.vars, { MY_TEXT: "mode test", SETTINGS: { retries: 3 } });
  assert.deepEqual(config.bindings.kv, [{ binding: "MY_KV", id: "kv-id", localId: "kv-id" }]);
  assert.deepEqual(config.bindings.r2, [{ binding: "BUCKET", bucket: "bucket", localBucket: "bucket" }]);
  assert.equal(config.bindings.d1[0].databaseId, "db-id");
  assert.deepEqual(config.bindings.durableObjects.map((o) => [o.binding, o.className, o.scriptName]), [["COUNTER", "Counter", undefined]]);
  assert.deepEqual(config.migrations.map((m) => m.newSqliteClasses), [["Counter"]]);
  assert.deepEqual(config.bindings.queues.producers, [{ binding: "QUEUE", queue: "jobs", deliveryDelay: undefined }]);
  assert.deepEqual(config.bindings.queues.consumers.map((c) => [c.queue, c.maxBatchSize]), [["jobs", 7]]);
  assert.deepEqual(config.bindings.services.map((s) => [s.binding, s.service, s.entrypoint]), [["OTHER", "other", "Api"]]);
  assert.deepEqual(config.crons, ["*/5 * * * *"]);
  // Warnings name the key as cloudflare.config.ts writes it.
  assert.deepEqual(config.warnings.map((w) => w.key), ["env.AI"]);
  assert.match(config.warnings[0].text, /cloudflare\.config\.ts: env\.AI: not supported by workerbox; ignored/);
  // Another mode, and an edit of a file the config imports, are seen on the next read.
  fs.writeFileSync(path.join(dir, "limits.ts"), "export const LIMIT = 9;\n");
  const again = await readCloudflareConfig(path.join(dir, "cloudflare.config.ts"), { mode: "production" });
  assert.equal(again.bindings.vars.MY_TEXT, "mode production");
  assert.equal(again.bindings.queues.consumers[0].maxBatchSize, 9);
});

test("cloudflare.config.ts errors name the file and the key as it writes them", async (t) => {
  const cases = [
    [`export default defineWorker({ name: "w", compatibilityDate: "2025-12-02", enviroment: {} });`, /cloudflare\.config\.ts: enviroment: is not a key of a worker in cloudflare\.config\.ts \(known: name, entrypoint/],
    [`export default defineWorker({ name: "w" });`, /cloudflare\.config\.ts: compatibilityDate: is required/],
    [`export default defineWorker({ name: "w", compatibilityDate: "2025-12-02", env: { K: bindings.kv({ namespace: "x" }) } });`, /cloudflare\.config\.ts: env\.K\.namespace: is not an option of a kv binding \(known: id, remote\)/],
    [`export default defineWorker({ name: "w", compatibilityDate: "2025-12-02", env: { K: { type: "telepathy" } } });`, /cloudflare\.config\.ts: env\.K: "telepathy" is not a binding type of cloudflare\.config\.ts/],
    [`export default defineWorker({ name: "w", compatibilityDate: "2025-12-02", env: { K: "text" } });`, /cloudflare\.config\.ts: env\.K: must be a binding made by bindings\.\*\(\)/],
    [`export default defineWorker({ name: "w", compatibilityDate: "2025-12-02", compatibilityFlags: ["no_such_flag"] });`, /cloudflare\.config\.ts: compatibilityFlags: .*no_such_flag/],
    [`export default defineWorker({ name: "w", compatibilityDate: "2025-12-02", env: { "my-kv": bindings.kv({}) } });`, /cloudflare\.config\.ts: env\.my-kv: "my-kv" is not a valid binding name/],
    [`export default defineWorker(() => { throw new Error("no secret"); });`, /cloudflare\.config\.ts: default: the config function failed: no secret/],
    [`export const settings = {};`, /cloudflare\.config\.ts: has no default export/],
    [`export default { type: "settings" };`, /cloudflare\.config\.ts: default: must be a worker/],
    [`import { x } from "not-installed-anywhere";\nexport default x;`, /cloudflare\.config\.ts: cannot be loaded: cloudflare\.config\.ts:2:\d+: Could not resolve "not-installed-anywhere" \(is it installed\?/],
  ];
  for (const [body, expected] of cases) {
    const dir = project(t, { "cloudflare.config.ts": `import { bindings, defineWorker } from "fake-config";\n${body}\n` });
    await assert.rejects(readCloudflareConfig(path.join(dir, "cloudflare.config.ts"), { requireMain: false, requireWorker: false }), (error) => {
      assert.equal(error.name, "ConfigError");
      assert.match(error.message, expected);
      return true;
    });
  }
});

test("loadProject() takes a cloudflare.config.ts: the worker runs with its bindings", { timeout: scaled(60_000) }, async (t) => {
  const dir = project(t, { "cloudflare.config.ts": CONFIG_LOCAL });
  const loaded = await loadProject(path.join(dir, "cloudflare.config.ts"), { persistTo: false });
  t.after(() => loaded.dispose());
  const { createWorker } = require("../index.js");
  const worker = await createWorker(loaded.options);
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://w/")).text(), "mode undefined");
  assert.equal(await (await dispatch(worker, "http://w/kv")).text(), "value");
  // The folder, holding cloudflare.config.ts and no wrangler file, is read the same; `env` is ctx.mode.
  const byFolder = await loadProject(dir, { persistTo: false, env: "staging" });
  t.after(() => byFolder.dispose());
  assert.equal(byFolder.config.bindings.vars.MY_TEXT, "mode staging");
});

test("workerbox dev (startDevServers) serves the worker of a folder's cloudflare.config.ts", { timeout: scaled(60_000) }, async (t) => {
  const dir = project(t, { "cloudflare.config.ts": CONFIG_LOCAL });
  const { startDevServers } = require("../lib/project/multi.js");
  const registryDir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-new-config-registry-"));
  t.after(() => fs.rmSync(registryDir, { recursive: true, force: true }));
  const group = await startDevServers([dir], { port: 0, host: "127.0.0.1", watch: false, persistTo: false, log: () => {}, registryDir });
  t.after(() => group.close());
  assert.equal(await (await fetch(new URL("/kv", group.url))).text(), "value");
  assert.equal(await (await fetch(group.url)).text(), "mode undefined");
});

test("cloudflareTest({ experimental: { newConfig: true } }): the tests get the worker of cloudflare.config.ts (bindings, SELF, ctx.mode 'test')", { timeout: scaled(120_000) }, async (t) => {
  const dir = vitestProject(t, "new-config", {
    ...HELPERS,
    "src/index.ts": WORKER,
    "limits.ts": "export const LIMIT = 7;\n",
    "cloudflare.config.ts": CONFIG_LOCAL,
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({ experimental: { newConfig: true } })] };\n`,
    "test/index.test.ts": `import { env, SELF, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { it, expect } from "vitest";
import worker from "../src/index";

it("has the bindings of cloudflare.config.ts", async () => {
  expect(env.MY_TEXT).toBe("mode test");
  expect(env.SETTINGS).toEqual({ retries: 3 });
  expect(await (await SELF.fetch("https://example.com/kv")).text()).toBe("value");
  expect(await env.MY_KV.get("key")).toBe("value");
  const stub = env.COUNTER.get(env.COUNTER.idFromName("x"));
  expect(await stub.increment()).toBe(1);
});

it("unit-tests the handler", async () => {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request("https://example.com"), env, ctx);
  await waitOnExecutionContext(ctx);
  expect(await response.text()).toBe("mode test");
});
`,
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});

test("cloudflareTest({ experimental: { newConfig } }) refuses `wrangler` beside it and a missing file, by name", { timeout: scaled(120_000) }, async (t) => {
  for (const [options, expected] of [
    [`{ experimental: { newConfig: true }, wrangler: { configPath: "./wrangler.jsonc" } }`, /`wrangler` cannot be used together with `experimental\.newConfig`/],
    [`{ experimental: { newConfig: { configPath: "./worker.config.ts" } } }`, /experimental: \{ newConfig \} \}\) is on but there is no worker\.config\.ts at .*worker\.config\.ts/],
  ]) {
    const dir = vitestProject(t, "new-config-bad", {
      "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest(${options})] };\n`,
      "test/a.test.js": `import { it } from "vitest";\nit("runs", () => {});\n`,
    });
    const { code, output } = await runVitest(dir);
    assert.notEqual(code, 0);
    assert.match(output, expected);
  }
});
