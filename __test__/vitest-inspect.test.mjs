// workerbox/vitest with `--inspect` / `--inspect-brk` (lib/vitest/inspect.js): the test isolate is
// listed on Vitest's inspector port and a DevTools client attached to it evaluates code there;
// with --inspect-brk the test file stops at its first line until the client resumes it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { runVitest, freePort } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const WebSocket = createRequire(import.meta.url)("ws");

function project(t, testSource) {
  const dir = fs.mkdtempSync(path.join(root, "examples", ".tmp-vitest-inspect-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "test"));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "inspected", compatibility_date: "2026-08-01" }));
  fs.writeFileSync(path.join(dir, "vitest.config.mjs"), `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({})] };\n`);
  fs.writeFileSync(path.join(dir, "test", "inspected.test.js"), testSource);
  return dir;
}

/** The first target listed on the inspector port (polled until `deadline`). */
async function target(port, deadline) {
  while (Date.now() < deadline) {
    const list = await fetch(`http://127.0.0.1:${port}/json/list`).then((r) => r.json()).catch(() => []);
    if (list.length > 0) return list[0];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing was listed on the inspector port ${port}`);
}

/** A DevTools client: `post(method, params)`, `event(method)` (the next such notification). */
async function client(url, t) {
  const ws = new WebSocket(url);
  t.after(() => ws.close());
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  let next = 1;
  const replies = new Map();
  const seen = [];
  const waiters = [];
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (message.id !== undefined) return replies.get(message.id)?.(message);
    seen.push(message);
    for (const waiter of [...waiters]) if (waiter.method === message.method) (waiters.splice(waiters.indexOf(waiter), 1), waiter.resolve(message.params));
  });
  return {
    post: (method, params = {}) => new Promise((resolve) => {
      const id = next++;
      replies.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    }),
    events: (method) => seen.filter((m) => m.method === method).map((m) => m.params),
    event: (method) => {
      const earlier = seen.find((m) => m.method === method);
      if (earlier) return Promise.resolve(earlier.params);
      return new Promise((resolve) => waiters.push({ method, resolve }));
    },
  };
}

test("--inspect: the test isolate is listed on Vitest's inspector port and a client evaluates code in it", { timeout: scaled(120_000) }, async (t) => {
  const dir = project(t, `import { it, expect } from "vitest";\nit("waits for the debugger to look", async () => {\n  globalThis.inspectedValue = 42;\n  await new Promise((resolve) => setTimeout(resolve, ${scaled(3000)}));\n  expect(1).toBe(1);\n}, ${scaled(3000) + 10_000});\n`);
  const port = await freePort();
  const run = runVitest(dir, [`--inspect=127.0.0.1:${port}`, "--no-file-parallelism"]);
  const listed = await target(port, Date.now() + scaled(30_000));
  assert.match(listed.title, /workerbox\/vitest/);
  const session = await client(listed.webSocketDebuggerUrl, t);
  await session.post("Runtime.enable");
  let value;
  for (const deadline = Date.now() + scaled(5000); value !== 42 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    value = (await session.post("Runtime.evaluate", { expression: "globalThis.inspectedValue", returnByValue: true })).result?.result?.value;
  }
  assert.equal(value, 42);
  const { code, report, output } = await run;
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 1, output);
});

test("--inspect-brk: the test file stops at its first line until the debugger resumes it", { timeout: scaled(120_000) }, async (t) => {
  const dir = project(t, `import { it, expect } from "vitest";\nit("runs once resumed", () => {\n  expect(2 + 2).toBe(4);\n});\n`);
  const port = await freePort();
  const run = runVitest(dir, [`--inspect-brk=127.0.0.1:${port}`, "--no-file-parallelism"]);
  const listed = await target(port, Date.now() + scaled(30_000));
  const session = await client(listed.webSocketDebuggerUrl, t);
  const paused = session.event("Debugger.paused");
  await session.post("Debugger.enable");
  let timer;
  const stopped = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("the test file did not stop")), 30_000)));
  const { callFrames } = await Promise.race([paused, stopped]).finally(() => clearTimeout(timer));
  // A frame names its script by id; Debugger.scriptParsed (sent on enable) gives the script's URL.
  const script = session.events("Debugger.scriptParsed").find((parsed) => parsed.scriptId === callFrames[0].location.scriptId);
  assert.match(script?.url ?? "", /inspected\.test\.js$/);
  assert.equal(callFrames[0].location.lineNumber, 0);
  // Still held: the run has not finished while paused.
  const early = await Promise.race([run.then(() => "finished"), new Promise((resolve) => setTimeout(() => resolve("held"), 500))]);
  assert.equal(early, "held");
  await session.post("Debugger.resume");
  const { code, report, output } = await run;
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 1, output);
});
