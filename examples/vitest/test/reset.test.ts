import { env, reset } from "cloudflare:test";
import { expect, it, vi } from "vitest";
import * as greetings from "./greetings";

vi.mock("./greetings", () => ({ greet: (name: string) => `mocked ${name}` }));

it("reset() deletes the data of every binding", async () => {
  await env.KV.put("key", "value");
  await env.BUCKET.put("file", "body");
  await env.DB.prepare("INSERT INTO notes (text) VALUES ('kept?')").run();
  expect(await env.COUNTER.getByName("reset").increment(4)).toBe(4);
  await reset();
  expect(await env.KV.get("key")).toBeNull();
  expect(await env.BUCKET.get("file")).toBeNull();
  await expect(env.DB.prepare("SELECT * FROM notes").all()).rejects.toThrow(/no such table/);
  expect(await env.COUNTER.getByName("reset").increment()).toBe(1);
});

it("vi.mock replaces a module the test imports", () => {
  expect(greetings.greet("you")).toBe("mocked you");
});
