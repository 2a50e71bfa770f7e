import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { cloudflareTest, readD1Migrations } from "workerbox/vitest";

export default defineConfig(async () => {
  // The migrations go to the tests as a binding; test/apply-migrations.ts applies them.
  const migrations = await readD1Migrations(fileURLToPath(new URL("./migrations", import.meta.url)));
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.jsonc" },
        miniflare: {
          bindings: { TEST_MIGRATIONS: migrations },
          // An auxiliary worker, reached through the GREETER service binding.
          workers: [{ name: "greeter", modules: true, scriptPath: "./auxiliary/greeter.js", compatibilityDate: "2026-08-01", bindings: { SALUTATION: "Welcome" }, kvNamespaces: ["VISITS"] }],
        },
      }),
    ],
    test: { setupFiles: ["./test/apply-migrations.ts"] },
  };
});
