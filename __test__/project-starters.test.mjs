// Real starters: the Workers templates of `npm create cloudflare` (the create-cloudflare package,
// a devDependency; their code is not in this repository), made as C3 makes them (placeholders
// filled in) and served with workerbox dev: the OpenAPI template (Hono, chanfana, zod), the
// Durable Object templates (RPC, and with static assets) and the queues template.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startDevServer } from "../lib/project/index.js";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const TEMPLATES = path.join(root, "node_modules", "create-cloudflare", "templates");

/** Template `name` (TypeScript variant) in a temporary folder, as C3 would write it. */
function starter(t, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `workerbox-c3-${name}-`));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(path.join(TEMPLATES, name, "ts"), dir, { recursive: true });
  const config = path.join(dir, "wrangler.jsonc");
  fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace("<WORKER_NAME>", name).replace("<COMPATIBILITY_DATE>", "2026-08-01"));
  // The template's dependencies are devDependencies of this repository.
  fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

async function serve(t, dir) {
  const lines = [];
  const server = await startDevServer(dir, { port: 0, watch: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  return { server, lines, get: (p, init) => fetch(new URL(p, server.url), init) };
}

test("the OpenAPI starter (Hono, chanfana, zod): its schema, listing, validation and creation", async (t) => {
  const { get } = await serve(t, starter(t, "openapi"));
  const schema = await (await get("/openapi.json")).json();
  assert.equal(schema.openapi, "3.1.0");
  assert.ok(schema.paths["/api/tasks"] && schema.paths["/api/tasks/{taskSlug}"], Object.keys(schema.paths).join(", "));
  assert.match(await (await get("/")).text(), /<html|swagger/i, "the docs page");
  const list = await (await get("/api/tasks?page=0")).json();
  assert.equal(list.success, true);
  assert.ok(Array.isArray(list.tasks) && list.tasks.length > 0);
  const task = { name: "clean", slug: "clean", description: "the room", completed: false, due_date: "2026-12-01" };
  const created = await get("/api/tasks", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(task) });
  assert.equal(created.status, 201);
  assert.match(await created.text(), /"slug":"clean"/);
  const invalid = await get("/api/tasks", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: 5 }) });
  assert.equal(invalid.status, 400);
  const problems = await invalid.json();
  assert.equal(problems.success, false);
  assert.ok(problems.errors.some((e) => e.path.join(".") === "body.name"), JSON.stringify(problems.errors));
});

test("the Durable Object starters: RPC to the object, and static assets in front of the worker", async (t) => {
  const plain = await serve(t, starter(t, "hello-world-durable-object"));
  assert.equal(await (await plain.get("/")).text(), "Hello, world!");
  const withAssets = await serve(t, starter(t, "hello-world-durable-object-with-assets"));
  const page = await withAssets.get("/");
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type"), /text\/html/);
  assert.match(await page.text(), /<title>Hello, World!<\/title>/);
  assert.equal(await (await withAssets.get("/greet")).text(), "Hello, world!", "not an asset: the worker, which calls its object");
});

test("the queues starter: a request sends, the same worker's queue() handler receives it", async (t) => {
  const { server, lines, get } = await serve(t, starter(t, "queues"));
  assert.equal(await (await get("/hello?x=1")).text(), "Sent message to the queue");
  await server.project.bindings.MY_QUEUE.flush();
  const processed = lines.find((line) => / processed: /.test(line));
  assert.ok(processed, lines.join("\n"));
  const body = JSON.parse(processed.slice(processed.indexOf("processed: ") + "processed: ".length));
  assert.equal(body.method, "GET");
  assert.match(body.url, /\/hello\?x=1$/);
});
