// A published Workflows starter served by `workerbox dev` and driven by real HTTP requests:
// Cloudflare's `workflows-starter-template` (the cloudflare/templates repository; its code is
// not kept here: it is taken from a git mirror of that repository at test time, from
// $WORKERBOX_TEMPLATES_MIRROR or /work/.mirror/cloudflare+templates/repo, and the test says why
// it skips without one). Its worker starts an instance (POST /api/workflow/start), whose run
// does a step, sleeps 2 s, waits for a "user-approval" event and does a final step, telling a
// Durable Object (RPC) each step's progress, which a WebSocket (/ws) broadcasts. The test polls
// the status (GET /api/workflow/status/:id) until the instance waits, sends the event (POST
// /api/workflow/event/:id), polls until it is complete, and reads the Durable Object's updates.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import WebSocket from "ws";
import { startDevServer } from "../lib/project/index.js";
import { until } from "./dev-processes.mjs";

import { scaled } from "./child-node.mjs";
const MIRROR = process.env.WORKERBOX_TEMPLATES_MIRROR ?? "/work/.mirror/cloudflare+templates/repo";
const TEMPLATE = "workflows-starter-template";

/** The template's worker files, wrangler config and tsconfigs, from the mirror into a temporary folder; null without a mirror. */
function starter(t) {
  let listing;
  try {
    listing = execFileSync("git", ["--git-dir", MIRROR, "ls-tree", "-r", "--name-only", "HEAD", TEMPLATE], { encoding: "utf8" });
  } catch {
    return null;
  }
  const files = listing.split("\n").filter((f) => /^[^/]+\/(worker\/[^/]+\.ts|wrangler\.jsonc|tsconfig[^/]*\.json)$/.test(f));
  if (!files.includes(`${TEMPLATE}/wrangler.jsonc`)) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-workflows-starter-"));
  for (const file of files) {
    const to = path.join(dir, file.slice(TEMPLATE.length + 1));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, execFileSync("git", ["--git-dir", MIRROR, "show", `HEAD:${file}`]));
  }
  // The React front end (vite build) is not part of this test: a page stands in for ./dist.
  fs.mkdirSync(path.join(dir, "dist"));
  fs.writeFileSync(path.join(dir, "dist", "index.html"), "<!doctype html><title>starter</title>");
  return dir;
}


test("the workflows starter template: start an instance, poll it to waiting, send its event, poll it to complete; the Durable Object's updates over a WebSocket", { timeout: scaled(120_000) }, async (t) => {
  const dir = starter(t);
  if (dir === null) {
    t.skip(`no git mirror of cloudflare/templates with ${TEMPLATE} at ${MIRROR} (set WORKERBOX_TEMPLATES_MIRROR)`);
    console.log(`# skipped: no git mirror of cloudflare/templates at ${MIRROR}`);
    return;
  }
  const lines = [];
  const server = await startDevServer(dir, { port: 0, watch: false, persistTo: false, log: (line) => lines.push(line) }).catch((error) => {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    throw error;
  });
  let socket = null;
  // Node runs after-hooks in the order they were added: the socket goes before the server closes.
  t.after(async () => {
    socket?.terminate();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
  const get = (p, init) => fetch(new URL(p, server.url), init);

  // The page (assets) and an unknown API route.
  assert.equal(await (await get("/")).text(), "<!doctype html><title>starter</title>");
  assert.deepEqual(await (await get("/api/nothing")).json(), { error: "Not Found" });

  const started = await get("/api/workflow/start", { method: "POST" });
  assert.equal(started.status, 200);
  const { instanceId, message } = await started.json();
  assert.equal(message, "Workflow started successfully");
  assert.match(instanceId, /^[0-9a-f-]{36}$/);

  // The Durable Object that the run tells about its steps (RPC from the workflow), over a WebSocket.
  const updates = [];
  socket = new WebSocket(new URL(`/ws?instanceId=${instanceId}`, server.url.replace(/^http/, "ws")));
  socket.on("message", (data) => updates.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  await until("the first state message", () => updates.length > 0, 10_000);
  assert.equal(updates[0].type, "workflow_update");

  const status = async () => (await get(`/api/workflow/status/${instanceId}`)).json();
  // A step of 1 s and a sleep of 2 s, then the instance waits for its event.
  const waiting = await until("the instance to wait for its approval", async () => {
    const s = await status();
    return s.status === "waiting" && s;
  }, 30_000);
  assert.equal(waiting.error, undefined);
  await until("the Durable Object hearing of the wait", () => updates.some((u) => u.currentStep === "wait for approval"), 10_000);

  const sent = await get(`/api/workflow/event/${instanceId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ approved: true, comment: "ok" }) });
  assert.deepEqual(await sent.json(), { success: true, message: "Event sent successfully" });
  const complete = await until("the instance to complete", async () => {
    const s = await status();
    assert.notEqual(s.status, "errored", JSON.stringify(s));
    return s.status === "complete" && s;
  }, 30_000);
  // Its run returns nothing, and the worker answers with Response.json(status).
  assert.equal(complete.output ?? null, null);
  assert.equal(complete.error ?? null, null);

  // Every step reported completed to the Durable Object, and it said the workflow is.
  const last = await until("the final update", () => updates.find((u) => u.workflowStatus === "completed"), 10_000);
  assert.deepEqual(last.stepStatuses, { "process data": "completed", "wait 2 seconds": "completed", "wait for approval": "completed", final: "completed" });
  // The final step's console.log went to the dev log.
  assert.ok(lines.some((l) => /Results:/.test(l) && /approved/.test(l)), lines.join("\n"));
  // An unknown instance: the worker's own error answer.
  const unknown = await get("/api/workflow/status/no-such-instance");
  assert.equal(unknown.status, 500);
});
