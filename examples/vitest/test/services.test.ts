import { SELF } from "cloudflare:test";
import { expect, it } from "vitest";

it("reaches an auxiliary worker through a service binding, with its own storage", async () => {
  expect(await (await SELF.fetch("https://example.com/greet?name=ada")).text()).toBe("Welcome, ada (visit 1)");
  expect(await (await SELF.fetch("https://example.com/greet?name=ada")).text()).toBe("Welcome, ada (visit 2)");
});

it("calls the auxiliary worker's RPC methods", async () => {
  expect(await (await SELF.fetch("https://example.com/shout?text=hey")).text()).toBe("HEY!");
});
