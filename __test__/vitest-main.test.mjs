// workerbox/vitest reads a test wrangler file's `main = "/worker.ts"` as Vite and Cloudflare's
// pool do: relative to the Vite project's root when no such file exists at that absolute path
// (wrangler itself, and so `workerbox dev`, take it as a file-system path).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runVitest, vitestProject } from "./helpers.mjs";
import { readConfig } from "../index.js";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));


const project = (t, files) => vitestProject(t, "main", files);

const TEST = [
  `import { SELF, env } from "cloudflare:test";`,
  `import { it, expect } from "vitest";`,
  `it("reaches the worker named by a root-relative main", async () => {`,
  `  expect(await (await SELF.fetch("http://x/")).text()).toBe("from /worker.ts: " + env.WHO);`,
  `});`,
].join("\n");

test('main = "/worker.ts" in a test wrangler.toml (in a subfolder, named by configPath) is the worker.ts at the Vite root', async (t) => {
  const dir = project(t, {
    "worker.ts": `export default { fetch(_request: Request, env: { WHO: string }) { return new Response("from /worker.ts: " + env.WHO); } };\n`,
    "test/wrangler.toml": `name = "rooted"\nmain = "/worker.ts"\ncompatibility_date = "2026-08-01"\n[vars]\nWHO = "toml"\n`,
    "test/index.test.ts": TEST,
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({ wrangler: { configPath: "./test/wrangler.toml" } })] };\n`,
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 1, output);
});

test("cloudflareTest({ main: \"/worker.ts\" }) is read the same way; a main found nowhere names both places", async (t) => {
  const dir = project(t, {
    "worker.ts": `export default { fetch(_request: Request, env: { WHO: string }) { return new Response("from /worker.ts: " + env.WHO); } };\n`,
    "wrangler.jsonc": JSON.stringify({ name: "rooted", compatibility_date: "2026-08-01", vars: { WHO: "jsonc" }, main: "/worker.ts" }),
    "test/index.test.ts": TEST,
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({ main: "/worker.ts" })] };\n`,
  });
  const passing = await runVitest(dir);
  assert.equal(passing.code, 0, passing.output);
  assert.equal(passing.report.numPassedTests, 1, passing.output);
  fs.writeFileSync(path.join(dir, "vitest.config.mjs"), `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({ main: "/missing.ts" })] };\n`);
  const failing = await runVitest(dir);
  assert.notEqual(failing.code, 0);
  assert.match(failing.output, new RegExp(`cloudflareTest\\(\\{ main \\}\\): /missing\\.ts does not exist \\(nor ${path.join(dir, "missing.ts").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, under the Vite root\\)`));
});

test('wrangler (and so workerbox dev) takes main = "/worker.ts" as a file-system path: the configuration names the missing file', (t) => {
  const dir = project(t, {
    "worker.ts": `export default { fetch() { return new Response("x"); } };\n`,
    "wrangler.toml": `name = "rooted"\nmain = "/worker.ts"\ncompatibility_date = "2026-08-01"\n`,
  });
  assert.throws(() => readConfig(dir), /\/worker\.ts does not exist/);
});
