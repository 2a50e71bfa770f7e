// A project with the smaller bindings wrangler simulates — ratelimits, analytics_engine_datasets,
// send_email, version_metadata — served by `workerbox dev` and driven by real requests: rate
// limited answers, data points and .eml files under the project's state folder (the dev log names
// each file), the version metadata's shape; and wrangler's checks of these keys.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startDevServer, readConfig } from "workerbox/project";
import { analyticsEngine } from "../index.js";

import { scaled } from "./child-node.mjs";
function project(t, config, worker) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-local-bindings-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "app", main: "worker.js", compatibility_date: "2025-06-01", ...config }, null, 2));
  if (worker) fs.writeFileSync(path.join(dir, "worker.js"), worker);
  return dir;
}

const WORKER = `import { EmailMessage } from "cloudflare:email";
export default { async fetch(request, env) {
  const url = new URL(request.url);
  if (url.pathname === "/api") {
    const ip = request.headers.get("x-client") ?? "anon";
    const { success } = await env.LIMITER.limit({ key: ip });
    if (!success) return new Response("slow down", { status: 429 });
    env.EVENTS.writeDataPoint({ indexes: [ip], blobs: [url.pathname], doubles: [1] });
    return new Response("ok");
  }
  if (url.pathname === "/contact") {
    const raw = "From: site@example.com\\r\\nTo: owner@example.com\\r\\nMessage-ID: <c1@example.com>\\r\\nSubject: contact\\r\\n\\r\\n" + (await request.text());
    const { messageId } = await env.MAIL.send(new EmailMessage("site@example.com", "owner@example.com", raw));
    return new Response(messageId);
  }
  if (url.pathname === "/version") return Response.json(env.VERSION);
  return new Response("not found", { status: 404 });
} };`;

test("workerbox dev: rate limits, data points and sent mail under the state folder, version metadata", { timeout: scaled(120_000) }, async (t) => {
  const dir = project(t, {
    ratelimits: [{ name: "LIMITER", namespace_id: "1001", simple: { limit: 2, period: 60 } }],
    analytics_engine_datasets: [{ binding: "EVENTS", dataset: "api_calls" }],
    send_email: [{ name: "MAIL", destination_address: "owner@example.com" }],
    version_metadata: { binding: "VERSION" },
  }, WORKER);
  const lines = [];
  const server = await startDevServer(dir, { port: 0, watch: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  assert.deepEqual(lines.filter((line) => line.includes("▲")), [], "no key is reported as unsupported");

  const call = (client) => fetch(`${server.url}api`, { headers: { "x-client": client } });
  assert.deepEqual(await Promise.all([call("a"), call("a")].map(async (r) => (await r).status)), [200, 200]);
  assert.equal((await call("a")).status, 429);
  assert.equal((await call("b")).status, 200, "another key has its own count");

  const state = path.join(dir, ".wrangler", "state", "v3", "workerbox");
  const reader = analyticsEngine({ dataset: "api_calls", dir: path.join(state, "analytics-engine") });
  let points = [];
  for (const deadline = Date.now() + 3000; points.length < 3 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) points = await reader.dataPoints();
  assert.deepEqual(points.map((p) => [p.dataset, p.index1, p.blobs, p.doubles]), [["api_calls", "a", ["/api"], [1]], ["api_calls", "a", ["/api"], [1]], ["api_calls", "b", ["/api"], [1]]]);

  const sent = await fetch(`${server.url}contact`, { method: "POST", body: "hello there" });
  assert.equal(sent.status, 200);
  assert.match(await sent.text(), /^<[A-Za-z0-9]{36}@example\.com>$/);
  const mailDir = path.join(state, "email");
  const [eml] = fs.readdirSync(mailDir);
  assert.match(eml, /\.eml$/);
  assert.ok(fs.readFileSync(path.join(mailDir, eml), "utf8").endsWith("\r\n\r\nhello there"));
  assert.ok(lines.some((line) => line.includes("send_email binding called with the following message:") && line.includes(path.join(mailDir, eml))), lines.join("\n"));

  const version = await (await fetch(`${server.url}version`)).json();
  assert.deepEqual(Object.keys(version), ["id", "tag", "timestamp"]);
  assert.match(version.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(version.tag, "");
  assert.ok(!Number.isNaN(Date.parse(version.timestamp)));
});

test("the keys are checked as wrangler checks them, each problem named with its key", (t) => {
  const dir = project(t, {
    ratelimits: [{ name: "A", namespace_id: "1", simple: { limit: 5, period: 30 } }, { name: "B", simple: { limit: 0, period: 60 } }],
    send_email: [{ name: "M", destination_address: "a@b", allowed_destination_addresses: ["a@b"] }],
    secrets_store_secrets: [{ binding: "S", store_id: "x" }],
    analytics_engine_datasets: [{ binding: "bad name" }],
  }, "export default {};");
  let error;
  try {
    readConfig(dir);
  } catch (e) {
    error = e;
  }
  assert.ok(error, "readConfig threw");
  const text = error.message;
  for (const expected of [
    "ratelimits[0].simple.period: must be either 10 or 60, got 30",
    "ratelimits[1].namespace_id: is required",
    "ratelimits[1].simple.limit: must be a number above 0, got 0",
    'send_email[0]: has both "destination_address" and "allowed_destination_addresses"',
    "secrets_store_secrets[0].secret_name: is required",
    'analytics_engine_datasets[0].binding: "bad name" is not a valid binding name',
  ]) assert.ok(text.includes(expected), `${expected}\nnot in:\n${text}`);
});

test("an analytics_engine_datasets entry without dataset is named after its binding; in memory without state", async () => {
  const { loadProject } = await import("workerbox/project");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-local-bindings-"));
  try {
    fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "x", main: "w.js", compatibility_date: "2025-06-01", analytics_engine_datasets: [{ binding: "AE" }] }));
    fs.writeFileSync(path.join(dir, "w.js"), "export default { fetch() { return new Response('x'); } };");
    const loaded = await loadProject(dir, { persistTo: false });
    assert.equal(loaded.bindings.AE.dataset, "AE");
    assert.equal(loaded.bindings.AE.file, null);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("getPlatformProxy: rate limiters and Secrets Store secrets from Node; Analytics Engine and send_email are listed as not available there", async (t) => {
  const { getPlatformProxy } = await import("workerbox/project");
  const dir = project(t, {
    ratelimits: [{ name: "LIMITER", namespace_id: `proxy-${process.pid}`, simple: { limit: 1, period: 10 } }],
    secrets_store_secrets: [{ binding: "SECRET", store_id: "s", secret_name: "NONE" }],
    analytics_engine_datasets: [{ binding: "AE" }],
    send_email: [{ name: "MAIL" }],
    version_metadata: { binding: "VERSION" },
  }, "export default { fetch() { return new Response('x'); } };");
  const proxy = await getPlatformProxy({ configPath: path.join(dir, "wrangler.jsonc"), persist: false });
  t.after(() => proxy.dispose());
  assert.deepEqual(await proxy.env.LIMITER.limit({ key: "k" }), { success: true });
  assert.deepEqual(await proxy.env.LIMITER.limit({ key: "k" }), { success: false });
  await assert.rejects(proxy.env.SECRET.get(), { message: 'Secret "NONE" not found' });
  assert.equal(typeof proxy.env.VERSION.id, "string");
  assert.equal(proxy.env.AE, undefined);
  assert.equal(proxy.env.MAIL, undefined);
});
