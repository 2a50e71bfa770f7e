import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import app from "../src/index";

const as = (session: string, init: RequestInit = {}) => ({ ...init, headers: { "x-session": session, "content-type": "application/json", ...init.headers } });

describe("the todos API", () => {
  it("describes itself, with Vite's import.meta.env", async () => {
    expect(await (await SELF.fetch("https://api.example/")).json()).toEqual({ name: "todos", mode: "test" });
  });

  it("adds, lists and completes todos per session", async () => {
    const created = await SELF.fetch("https://api.example/todos", as("s1", { method: "POST", body: JSON.stringify({ title: " write tests " }) }));
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ id: 1, title: "write tests", done: false });
    await SELF.fetch("https://api.example/todos", as("s1", { method: "POST", body: JSON.stringify({ title: "ship" }) }));
    const done = await SELF.fetch("https://api.example/todos/2", as("s1", { method: "PATCH" }));
    expect(await done.json()).toMatchObject({ id: 2, done: true });
    expect(await (await SELF.fetch("https://api.example/todos", as("s1"))).json()).toHaveLength(2);
    expect(await (await SELF.fetch("https://api.example/todos", as("s2"))).json()).toEqual([]);
    expect(JSON.parse((await env.SESSIONS.get("s1")) ?? "[]")).toHaveLength(2);
  });

  it("validates input", async () => {
    const response = await SELF.fetch("https://api.example/todos", as("s1", { method: "POST", body: "{}" }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "title is required" });
    expect((await SELF.fetch("https://api.example/todos/9", as("s1", { method: "PATCH" }))).status).toBe(404);
  });

  it("calls the app as a unit too (app.request)", async () => {
    const response = await app.request("/todos", { headers: { "x-session": "unit" } }, env);
    expect(await response.json()).toEqual([]);
  });
});

describe("the upstream", () => {
  it("is answered by the pool's outboundService", async () => {
    expect(await (await SELF.fetch("https://api.example/avatar/ada")).json()).toEqual({ user: "ada", url: "https://img.example/ada.png" });
    expect((await SELF.fetch("https://api.example/avatar/ghost")).status).toBe(404);
  });
});
