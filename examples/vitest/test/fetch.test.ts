import { SELF, env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index";

describe("fetch", () => {
  it("answers through SELF, with the configuration's vars", async () => {
    const response = await SELF.fetch("https://example.com/hi");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("hello from /hi");
  });

  it("counts in KV, writing after the response (waitUntil)", async () => {
    const ctx = createExecutionContext();
    const response = await worker.fetch(new Request("https://example.com/count"), env, ctx);
    expect(await response.json()).toEqual({ count: 1 });
    await waitOnExecutionContext(ctx);
    expect(await env.KV.get("count")).toBe("1");
    expect(await (await SELF.fetch("https://example.com/count")).json()).toEqual({ count: 2 });
  });

  it("keeps notes in D1 (migrated before the file ran)", async () => {
    const added = await SELF.fetch("https://example.com/notes", { method: "POST", body: JSON.stringify({ text: "second" }) });
    expect(await added.json()).toEqual(["first note", "second"]);
  });

  it("stores files in R2", async () => {
    const put = await SELF.fetch("https://example.com/files?key=a.txt", { method: "PUT", body: "file body" });
    expect(put.status).toBe(204);
    expect(await (await SELF.fetch("https://example.com/files?key=a.txt")).text()).toBe("file body");
    expect((await SELF.fetch("https://example.com/files?key=missing")).status).toBe(404);
  });

  it("answers through exports.default, as Cloudflare's newer examples call it", async () => {
    const response = await exports.default.fetch("https://example.com/exports");
    expect(await response.text()).toBe("hello from /exports");
  });

  it("uses node:buffer (nodejs_compat)", async () => {
    expect(await (await SELF.fetch("https://example.com/base64?text=hi")).text()).toBe("aGk=");
  });
});
