// workerbox/vitest takes @cloudflare/vitest-pool-workers' Vitest 3 configuration form
// (lib/vitest/config-v3.js): `defineWorkersConfig({ test: { poolOptions: { workers } } })` and
// `defineWorkersProject`, imported from workerbox/vitest or workerbox/vitest/config, with the
// pool options as an object or a function of `{ inject }`, Miniflare's binding options in both
// their list and object forms, and that pool's default of isolatedStorage on. Also: a wrangler
// `assets.directory` a build has not made yet does not stop the tests; the wrangler file's `define`
// applies. (The experimental cloudflare.config.ts form: vitest-new-config.test.mjs.)
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runVitest } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const WORKER = `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  increment() {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS hits (n INTEGER)");
    this.ctx.storage.sql.exec("INSERT INTO hits VALUES (1)");
    return this.ctx.storage.sql.exec("SELECT count(*) AS n FROM hits").one().n;
  }
}
export default { fetch: (request, env) => new Response(env.GREETING) };
`;

const TESTS = `import { env, SELF, runInDurableObject } from "cloudflare:test";
import { it, expect } from "vitest";

it("has the wrangler file's and miniflare's bindings", async () => {
  expect(await (await SELF.fetch("http://w/")).text()).toBe("hello from the pool options");
  await env.DB.exec("CREATE TABLE notes (text TEXT)");
  await env.DB.prepare("INSERT INTO notes VALUES ('a')").run();
  await env.BUCKET.put("k", "v");
  await env.CACHE.put("k", "v");
  expect((await env.DB.prepare("SELECT count(*) AS n FROM notes").first()).n).toBe(1);
  const stub = env.COUNTER.get(env.COUNTER.idFromName("x"));
  expect(await stub.increment()).toBe(1);
  await runInDurableObject(stub, (instance, state) => {
    expect(state.storage.sql.exec("SELECT count(*) AS n FROM hits").one().n).toBe(1);
  });
});

it("has the wrangler file's define replacements as globals (one value for every use), the Vite config's over them", () => {
  expect(WRANGLER_THING).toBe("thing");
  expect(WRANGLER_NESTED.THING).toEqual([1, 2]);
  expect(WRANGLER_NESTED.THING).toBe(WRANGLER_NESTED.THING);
  expect(OVERRIDDEN).toBe("from vite");
});

it("starts from empty storage again (isolatedStorage defaults to on in this form)", async () => {
  expect((await env.DB.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'notes'").first()).n).toBe(0);
  expect(await env.BUCKET.get("k")).toBe(null);
  expect(await env.CACHE.get("k")).toBe(null);
  expect(await env.COUNTER.get(env.COUNTER.idFromName("x")).increment()).toBe(1);
});
`;

function project(t, config) {
  const dir = fs.mkdtempSync(path.join(root, "examples", ".tmp-vitest-config-v3-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "test"));
  fs.writeFileSync(
    path.join(dir, "wrangler.jsonc"),
    JSON.stringify({
      name: "config-v3",
      main: "worker.js",
      compatibility_date: "2026-08-01",
      // Made by a build that has not run: the tests run without these assets.
      assets: { directory: "./dist" },
      define: { WRANGLER_THING: JSON.stringify("thing"), "WRANGLER_NESTED.THING": "[1,2]", OVERRIDDEN: JSON.stringify("from wrangler") },
      durable_objects: { bindings: [{ name: "COUNTER", class_name: "Counter" }] },
      migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }],
    }),
  );
  fs.writeFileSync(path.join(dir, "worker.js"), WORKER);
  fs.writeFileSync(path.join(dir, "vitest.config.mjs"), config);
  fs.writeFileSync(path.join(dir, "test", "v3.test.js"), TESTS);
  return dir;
}

test("defineWorkersConfig (workerbox/vitest/config): test.poolOptions.workers with miniflare's list and object binding forms, isolatedStorage on by default", { timeout: scaled(120_000) }, async (t) => {
  const dir = project(
    t,
    `import { defineWorkersConfig } from "workerbox/vitest/config";
export default defineWorkersConfig({
  define: { OVERRIDDEN: JSON.stringify("from vite") },
  test: {
    include: ["test/**/*.test.js"],
    poolOptions: {
      workers: {
        wrangler: { configPath: "./wrangler.jsonc" },
        miniflare: { d1Databases: { DB: "00000000-0000-0000-0000-000000000000" }, r2Buckets: ["BUCKET"], kvNamespaces: ["CACHE"], bindings: { GREETING: "hello from the pool options" } },
      },
    },
  },
});
`,
  );
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 3, output);
});

test("defineWorkersProject with pool options as a function of { inject }, in a function config", { timeout: scaled(120_000) }, async (t) => {
  const dir = project(
    t,
    `import { defineWorkersProject } from "workerbox/vitest";
export default defineWorkersProject(async () => ({
  define: { OVERRIDDEN: JSON.stringify("from vite") },
  test: {
    globalSetup: ["./setup.mjs"],
    poolOptions: {
      workers: ({ inject }) => ({
        miniflare: { d1Databases: ["DB"], r2Buckets: { BUCKET: "b" }, kvNamespaces: { CACHE: "c" }, bindings: { GREETING: inject("greeting") } },
      }),
    },
  },
}));
`,
  );
  fs.writeFileSync(path.join(dir, "setup.mjs"), `export default ({ provide }) => provide("greeting", "hello from the pool options");\n`);
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 3, output);
});

test("defineWorkersConfig refuses what is not a configuration, naming the option", async () => {
  const { defineWorkersConfig } = await import("../lib/vitest/index.js");
  assert.throws(() => defineWorkersConfig(42), /defineWorkersConfig\(\) takes a Vitest configuration object/);
  assert.throws(() => defineWorkersConfig({ test: { poolOptions: { workers: "x" } } }), /poolOptions: \{ workers \} \} \}\) must be an object or a function, got string/);
  const config = defineWorkersConfig({ test: { pool: "x", poolOptions: { workers: {} }, include: ["a"] } });
  assert.deepEqual(config.test, { include: ["a"] });
  assert.equal(config.plugins[0].name, "workerbox:vitest");
});
