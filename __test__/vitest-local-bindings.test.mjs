// workerbox/vitest with the smaller bindings wrangler simulates: from the wrangler file
// (ratelimits, analytics_engine_datasets, send_email, secrets_store_secrets, version_metadata) and
// from Miniflare's option names (ratelimits, analyticsEngineDatasets, email.send_email,
// secretsStoreSecrets, versionMetadata), used by a test file as Cloudflare's pool runs it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runVitest, vitestProject } from "./helpers.mjs";


import { scaled } from "./child-node.mjs";
const makeProject = (t, files) => vitestProject(t, "local", files);

test("the wrangler file's and Miniflare's options make the bindings a test uses", { timeout: scaled(240_000) }, async (t) => {
  const options = `{ miniflare: {
    ratelimits: { MF_LIMIT: { simple: { limit: 1, period: 10 } } },
    analyticsEngineDatasets: { MF_AE: { dataset: "mf" } },
    email: { send_email: [{ name: "MF_MAIL", destination_address: "only@example.com" }] },
    secretsStoreSecrets: { MF_SECRET: { store_id: "s", secret_name: "MF" } },
    versionMetadata: "MF_VERSION",
  } }`;
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({
      name: "local",
      main: "src/index.js",
      compatibility_date: "2026-01-01",
      ratelimits: [{ name: "LIMIT", namespace_id: "9", simple: { limit: 2, period: 60 } }],
      analytics_engine_datasets: [{ binding: "AE", dataset: "events" }],
      send_email: [{ name: "MAIL", allowed_destination_addresses: ["a@example.com"] }],
      secrets_store_secrets: [{ binding: "SECRET", store_id: "s", secret_name: "KEY" }],
      version_metadata: { binding: "VERSION" },
    }),
    "src/index.js": `export default { fetch() { return new Response("ok"); } };\n`,
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest(${options})] };\n`,
    "test/local.test.js": [
      `import { env } from "cloudflare:workers";`,
      `import { EmailMessage } from "cloudflare:email";`,
      `import { it, expect } from "vitest";`,
      `it("wrangler file bindings", async () => {`,
      `  expect((await env.LIMIT.limit({ key: "k" })).success).toBe(true);`,
      `  expect((await env.LIMIT.limit({ key: "k" })).success).toBe(true);`,
      `  expect((await env.LIMIT.limit({ key: "k" })).success).toBe(false);`,
      `  expect(env.AE.writeDataPoint({ blobs: ["x"] })).toBe(undefined);`,
      `  expect(() => env.AE.writeDataPoint({ indexes: ["a", "b"] })).toThrow("writeDataPoint(): Maximum of 1 indexes supported.");`,
      `  const raw = "From: me@example.com\\r\\nMessage-ID: <m@example.com>\\r\\n\\r\\nhi";`,
      `  expect((await env.MAIL.send(new EmailMessage("me@example.com", "a@example.com", raw))).messageId).toMatch(/@example\\.com>$/);`,
      `  await expect(env.MAIL.send(new EmailMessage("me@example.com", "b@example.com", raw))).rejects.toThrow("email to b@example.com not allowed");`,
      `  await expect(env.SECRET.get()).rejects.toThrow('Secret "KEY" not found');`,
      `  expect(Object.keys(env.VERSION)).toEqual(["id", "tag", "timestamp"]);`,
      `});`,
      `it("Miniflare option bindings", async () => {`,
      `  expect((await env.MF_LIMIT.limit({ key: "k" })).success).toBe(true);`,
      `  expect((await env.MF_LIMIT.limit({ key: "k" })).success).toBe(false);`,
      `  env.MF_AE.writeDataPoint({ doubles: [1] });`,
      `  const raw = "From: me@example.com\\r\\nMessage-ID: <m@example.com>\\r\\n\\r\\nhi";`,
      `  await expect(env.MF_MAIL.send(new EmailMessage("me@example.com", "x@example.com", raw))).rejects.toThrow("email to x@example.com not allowed");`,
      `  await expect(env.MF_SECRET.get()).rejects.toThrow('Secret "MF" not found');`,
      `  expect(typeof env.MF_VERSION.id).toBe("string");`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});
