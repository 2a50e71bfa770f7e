// Secrets Store secret bindings (secretsStoreSecret(), wrangler's `secrets_store_secrets`):
// get() from a value or a function, Miniflare's not-found error, and — for projects — the values
// wrangler keeps locally, written here by Miniflare itself (what `wrangler secrets-store secret
// create` without --remote runs) and read by workerbox dev.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { secretsStoreSecret } from "../index.js";
import { startDevServer } from "workerbox/project";
import { evalInWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
test("get() resolves to the value, or rejects as Miniflare does when there is none", async (t) => {
  let rotated = "first";
  const out = await evalInWorker(t, `const out = [];
    for (const name of ["KEY", "DYNAMIC", "DYNAMIC", "MISSING"]) {
      try { out.push(await env[name].get()); } catch (e) { out.push(e.name + ": " + e.message); }
    }
    out.push(String(env.KEY));
    return out;`, {
    bindings: {
      KEY: secretsStoreSecret({ value: "hunter2" }),
      DYNAMIC: secretsStoreSecret({ get: () => { const value = rotated; rotated = "second"; return value; } }),
      MISSING: secretsStoreSecret({ secretName: "API_KEY" }),
    },
  });
  // Miniflare 4.20260426.0 rejects a missing secret with: Error: Secret "API_KEY" not found
  assert.deepEqual(out, ["hunter2", "first", "second", 'Error: Secret "API_KEY" not found', "[object SecretsStoreSecret]"]);
  assert.equal(await secretsStoreSecret({ value: "v" }).get(), "v");
});

test("secretsStoreSecret() options are checked", () => {
  assert.throws(() => secretsStoreSecret(), /options must be \{ value \} or \{ get: \(\) => value \}/);
  assert.throws(() => secretsStoreSecret({ value: 5 }), { name: "TypeError", message: "secretsStoreSecret(): value must be a string" });
  assert.throws(() => secretsStoreSecret({ value: "a", get: () => "b" }), /give value or get, not both/);
});

test("workerbox dev reads the secret wrangler's local Secrets Store keeps (written by Miniflare)", { timeout: scaled(120_000) }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-secrets-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // What `wrangler secrets-store secret create store1 --name API_KEY` does locally: Miniflare's
  // admin API on the project's state folder.
  const { Miniflare } = await import("miniflare");
  const mf = new Miniflare({
    script: 'addEventListener("fetch", (e) => e.respondWith(new Response(null, { status: 404 })))',
    defaultPersistRoot: path.join(dir, ".wrangler", "state", "v3"),
    secretsStoreSecrets: { SECRET: { store_id: "store1", secret_name: "API_KEY" } },
  });
  try {
    const admin = await mf.getSecretsStoreSecretAPI("SECRET");
    await admin().create("from-wrangler");
  } finally {
    await mf.dispose();
  }
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({
    name: "secrets", main: "worker.js", compatibility_date: "2025-06-01",
    secrets_store_secrets: [{ binding: "API_KEY", store_id: "store1", secret_name: "API_KEY" }, { binding: "OTHER", store_id: "store1", secret_name: "NOPE" }],
  }));
  fs.writeFileSync(path.join(dir, "worker.js"), `export default { async fetch(request, env) {
    const name = new URL(request.url).pathname.slice(1);
    try { return new Response(await env[name].get()); } catch (e) { return new Response(e.message, { status: 500 }); }
  } };`);
  const server = await startDevServer(dir, { port: 0, watch: false, log() {} });
  t.after(() => server.close());
  const found = await fetch(`${server.url}API_KEY`);
  assert.equal(await found.text(), "from-wrangler");
  const missing = await fetch(`${server.url}OTHER`);
  assert.equal(missing.status, 500);
  assert.equal(await missing.text(), 'Secret "NOPE" not found');
});
