import { env } from "cloudflare:test";
import { expect, it } from "vitest";

// Each test file gets its own storage: what fetch.test.ts wrote is not here.
it("starts with empty KV and freshly migrated D1", async () => {
  expect(await env.KV.get("count")).toBeNull();
  const { results } = await env.DB.prepare("SELECT text FROM notes").all();
  expect(results).toEqual([{ text: "first note" }]);
});

it("runs in a Workers isolate", () => {
  expect(navigator.userAgent).toBe("Cloudflare-Workers");
  expect(typeof WebSocketPair).toBe("function");
});
