import { SELF } from "cloudflare:test";
import { expect, it } from "vitest";

it("matches a file snapshot (read and written by the pool in Node)", async () => {
  const response = await SELF.fetch("https://example.com/notes");
  expect({ status: response.status, notes: await response.json() }).toMatchSnapshot();
});

it("matches an inline snapshot", async () => {
  const response = await SELF.fetch("https://example.com/base64?text=snap");
  expect(await response.text()).toMatchInlineSnapshot(`"c25hcA=="`);
});
