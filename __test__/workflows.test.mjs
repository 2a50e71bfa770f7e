// Workflows: WorkflowEntrypoint runs with step.do (cached results, retries with each backoff,
// timeouts, NonRetryableError), step.sleep / sleepUntil and step.waitForEvent on a clock the test
// moves; the binding's create / createBatch / get and the instance operations (status, pause,
// resume, terminate, restart, sendEvent) from a worker and from Node; production's validation
// errors; instances on disk resumed by a new worker after the first is disposed mid-sleep; and a
// wrangler project with `workflows` served by `workerbox dev`, driven by HTTP requests, and the
// config checks (required keys; script_name of another worker reported as not supported yet).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createWorker, dispatch, service, workflow } from "../index.js";
import { useWorker, runChild } from "./helpers.mjs";
import { fileURLToPath } from "node:url";

import { scaled } from "./child-node.mjs";
/** A module worker exporting `classes`, whose fetch() runs `body` with `env` and answers its JSON result. */
function script(classes, body = "return null;") {
  return `import { WorkflowEntrypoint } from "cloudflare:workers";
  import { NonRetryableError } from "cloudflare:workflows";
  ${classes}
  export default {
    async fetch(request, env, ctx) {
      try { return Response.json(await (async () => { ${body} })() ?? null); }
      catch (e) { return Response.json({ error: e.name + ": " + e.message }); }
    },
  }`;
}

async function call(worker, url = "http://localhost/") {
  return (await dispatch(worker, url)).json();
}

/** A service binding that counts the calls it gets by path (a step's side effect seen from Node). */
function counter() {
  const counts = {};
  const binding = service((request) => {
    const key = new URL(request.url).pathname.slice(1);
    counts[key] = (counts[key] ?? 0) + 1;
    return new Response(String(counts[key]));
  });
  return { counts, binding };
}

const tempDir = (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "workerbox-workflows-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

test("a run completes: steps, event fields, output and status from the worker and from Node", async (t) => {
  const wf = workflow({ className: "Greeter", clock: "manual" });
  t.after(() => wf.close());
  const worker = await useWorker(t, {
    bindings: { GREETER: wf },
    script: script(
      `export class Greeter extends WorkflowEntrypoint {
        async run(event, step) {
          const a = await step.do("first", async () => ({ hello: event.payload.name }));
          const b = await step.do("second", { retries: { limit: 1, delay: "1 second" }, timeout: 1000 }, async (ctx) => ctx);
          return { a, b, id: event.instanceId, ts: event.timestamp instanceof Date, env: typeof this.env.GREETER.create, ctx: typeof this.ctx.waitUntil };
        }
      }`,
      `if (new URL(request.url).pathname === "/status") return (await env.GREETER.get("one")).status();
       const instance = await env.GREETER.create({ id: "one", params: { name: "Ada" } });
       return { id: instance.id, tag: Object.prototype.toString.call(env.GREETER) };`,
    ),
  });
  assert.deepEqual(await call(worker), { id: "one", tag: "[object Workflow]" });
  const status = await wf.waitForStatus("one", "complete");
  assert.equal(status.status, "complete");
  assert.equal(status.error, undefined);
  assert.deepEqual(status.output, {
    a: { hello: "Ada" },
    b: { attempt: 1, step: { name: "second", count: 1 }, config: { retries: { limit: 1, delay: "1 second", backoff: "exponential" }, timeout: 1000 } },
    id: "one",
    ts: true,
    env: "function",
    ctx: "function",
  });
  const fromWorker = await call(worker, "http://localhost/status");
  assert.equal(fromWorker.status, "complete");
  assert.deepEqual(fromWorker.output, status.output);
  assert.deepEqual(await wf.ids(), ["one"]);
});

test("an instance sleeping when its worker is disposed resumes in a new worker on the same dir; finished steps do not run again", async (t) => {
  const dir = tempDir(t);
  const { counts, binding } = counter();
  const classes = `export class Slow extends WorkflowEntrypoint {
    async run(event, step) {
      const first = await step.do("first", async () => (await this.env.COUNT.fetch("http://c/first")).text());
      await step.sleep("a day", "1 day");
      const again = await step.do("first", async () => (await this.env.COUNT.fetch("http://c/first-again")).text());
      const second = await step.do("second", async () => (await this.env.COUNT.fetch("http://c/second")).text());
      return { first, again, second };
    }
  }`;
  const wf1 = workflow({ className: "Slow", dir, clock: "manual" });
  const worker1 = await createWorker({ bindings: { SLOW: wf1, COUNT: binding }, script: script(classes, `await env.SLOW.create({ id: "sleepy" }); return null;`) });
  await call(worker1);
  await wf1.waitForStatus("sleepy", "waiting");
  const [sleep] = wf1.timers();
  assert.equal(sleep.kind, "sleep");
  assert.ok(Math.abs(sleep.at - (wf1.now() + 86_400_000)) < 5_000, "the sleep ends a day from now");
  await worker1.dispose();
  wf1.close();

  const wf2 = workflow({ className: "Slow", dir, clock: "manual" });
  t.after(() => wf2.close());
  await useWorker(t, { bindings: { SLOW: wf2, COUNT: binding }, script: script(classes) });
  await wf2.waitForStatus("sleepy", "waiting");
  const timer = await wf2.runNextTimer();
  assert.equal(timer.at, sleep.at, "the resumed sleep keeps its stored deadline");
  const done = await wf2.waitForStatus("sleepy", "complete");
  assert.deepEqual(done.output, { first: "1", again: "1", second: "1" });
  assert.deepEqual(counts, { first: 1, "first-again": 1, second: 1 }, "the step finished before the restart ran once");
});

test("the real clock: short sleeps and retry delays pass in real time; advance() moves a long sleep's end nearer", async (t) => {
  const wf = workflow({ className: "Timed" });
  t.after(() => wf.close());
  await useWorker(t, {
    bindings: { TIMED: wf },
    script: script(`export class Timed extends WorkflowEntrypoint {
      async run(event, step) {
        const started = Date.now();
        await step.sleep("short", 60);
        const value = await step.do("retry once", { retries: { limit: 1, delay: 40, backoff: "constant" } }, async (ctx) => {
          if (ctx.attempt === 1) throw new Error("first");
          return ctx.attempt;
        });
        await step.sleepUntil("until", new Date(Date.now() + 30));
        if (event.payload.long) await step.sleep("long", "1 hour");
        return { value, waited: Date.now() - started >= 100 };
      }
    }`),
  });
  await wf.create({ id: "r", params: {} });
  assert.deepEqual((await wf.waitForStatus("r", "complete", { timeoutMs: 5000 })).output, { value: 2, waited: true });
  await wf.create({ id: "long", params: { long: true } });
  const timer = await wf.nextTimer((t) => t.instance === "long" && t.step === "sleep:1:long");
  assert.equal(timer.kind, "sleep");
  wf.advance(3_600_000);
  assert.equal((await wf.waitForStatus("long", "complete", { timeoutMs: 5000 })).output.value, 2);
});

const FAILING = `export class Flaky extends WorkflowEntrypoint {
  async run(event, step) {
    return step.do("flaky", event.payload.config, async (ctx) => {
      await this.env.COUNT.fetch("http://c/attempt");
      if (event.payload.fatal) throw new NonRetryableError("give up now");
      if (ctx.attempt < event.payload.succeedAt) throw new Error("attempt " + ctx.attempt + " failed");
      return "ok on " + ctx.attempt;
    });
  }
}`;

for (const [backoff, delays] of [
  ["constant", [1000, 1000, 1000]],
  ["linear", [1000, 2000, 3000]],
  ["exponential", [1000, 2000, 4000]],
]) {
  test(`step.do retries with ${backoff} backoff, then the instance errors with the step's error`, async (t) => {
    const { counts, binding } = counter();
    const wf = workflow({ className: "Flaky", clock: "manual" });
    t.after(() => wf.close());
    await useWorker(t, { bindings: { FLAKY: wf, COUNT: binding }, script: script(FAILING) });
    await wf.create({ id: "f", params: { config: { retries: { limit: 3, delay: 1000, backoff } }, succeedAt: 99 } });
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const timer = await wf.runNextTimer();
      assert.equal(timer.kind, "retry");
      seen.push(timer.delay);
    }
    assert.deepEqual(seen, delays);
    const status = await wf.waitForStatus("f", "errored");
    assert.deepEqual(status.error, { name: "Error", message: "attempt 4 failed" });
    assert.equal(counts.attempt, 4, "the first attempt and three retries");
  });
}

test("a step that succeeds on a retry returns its value; the default config is limit 5, 10 s, exponential", async (t) => {
  const { counts, binding } = counter();
  const wf = workflow({ className: "Flaky", clock: "manual" });
  t.after(() => wf.close());
  await useWorker(t, { bindings: { FLAKY: wf, COUNT: binding }, script: script(FAILING) });
  await wf.create({ id: "g", params: { succeedAt: 3 } });
  assert.deepEqual([(await wf.runNextTimer()).delay, (await wf.runNextTimer()).delay], [10_000, 20_000]);
  assert.equal((await wf.waitForStatus("g", "complete")).output, "ok on 3");
  assert.equal(counts.attempt, 3);
});

test("a step waiting for its retry when the worker is disposed retries at the stored time, with the next attempt number, in the next worker", async (t) => {
  const dir = tempDir(t);
  const { counts, binding } = counter();
  const wf1 = workflow({ className: "Flaky", dir, clock: "manual" });
  const worker1 = await createWorker({ bindings: { FLAKY: wf1, COUNT: binding }, script: script(FAILING) });
  await wf1.create({ id: "later", params: { config: { retries: { limit: 2, delay: "1 hour" } }, succeedAt: 2 } });
  const retry = await wf1.nextTimer("retry");
  await worker1.dispose();
  wf1.close();
  assert.equal(counts.attempt, 1);

  const wf2 = workflow({ className: "Flaky", dir, clock: "manual" });
  t.after(() => wf2.close());
  await useWorker(t, { bindings: { FLAKY: wf2, COUNT: binding }, script: script(FAILING) });
  const again = await wf2.runNextTimer("retry");
  assert.deepEqual([again.at, again.attempt], [retry.at, 2]);
  assert.equal((await wf2.waitForStatus("later", "complete")).output, "ok on 2");
  assert.equal(counts.attempt, 2);
});

test("NonRetryableError ends the instance at once, with its name and message", async (t) => {
  const { counts, binding } = counter();
  const wf = workflow({ className: "Flaky", clock: "manual" });
  t.after(() => wf.close());
  await useWorker(t, { bindings: { FLAKY: wf, COUNT: binding }, script: script(FAILING) });
  await wf.create({ id: "n", params: { fatal: true } });
  const status = await wf.waitForStatus("n", "errored");
  assert.deepEqual(status.error, { name: "NonRetryableError", message: "give up now" });
  assert.equal(counts.attempt, 1);
  assert.deepEqual(wf.timers(), []);

  // Before workflows_preserve_non_retryable_error_message (2026-05-14), production reports it as a WorkflowFatalError.
  const old = workflow({ className: "Flaky", clock: "manual" });
  t.after(() => old.close());
  await useWorker(t, { compatibilityDate: "2026-01-01", bindings: { FLAKY: old, COUNT: binding }, script: script(FAILING) });
  await old.create({ id: "n", params: { fatal: true } });
  assert.deepEqual((await old.waitForStatus("n", "errored")).error, {
    name: "WorkflowFatalError",
    message: "The execution of the Workflow instance was terminated, as a step threw an NonRetryableError and it was not handled",
  });
});

test("a step over its timeout fails with WorkflowTimeoutError (and is retried like any failure)", async (t) => {
  const wf = workflow({ className: "Hang", clock: "manual" });
  t.after(() => wf.close());
  await useWorker(t, {
    bindings: { HANG: wf },
    script: script(`export class Hang extends WorkflowEntrypoint {
      async run(event, step) {
        return step.do("hang", { timeout: "5 seconds", retries: { limit: 1, delay: 10, backoff: "constant" } }, (ctx) => ctx.attempt === 2 ? "second try" : new Promise(() => {}));
      }
    }`),
  });
  await wf.create({ id: "h" });
  const timeout = await wf.runNextTimer("timeout");
  assert.equal(timeout.kind, "timeout");
  assert.equal((await wf.runNextTimer()).kind, "retry");
  assert.equal((await wf.waitForStatus("h", "complete")).output, "second try");

  const wf2 = workflow({ className: "Hang", clock: "manual" });
  t.after(() => wf2.close());
  await useWorker(t, {
    bindings: { HANG: wf2 },
    script: script(`export class Hang extends WorkflowEntrypoint {
      async run(event, step) { return step.do("hang", { timeout: 1000, retries: { limit: 0, delay: 0 } }, () => new Promise(() => {})); }
    }`),
  });
  await wf2.create({ id: "h2" });
  await wf2.runNextTimer("timeout");
  assert.deepEqual((await wf2.waitForStatus("h2", "errored")).error, { name: "WorkflowTimeoutError", message: "Execution timed out after 1000ms" });
});

const WAITER = `export class Waiter extends WorkflowEntrypoint {
  async run(event, step) {
    await step.do("before", async () => 1);
    try {
      const got = await step.waitForEvent("approval", { type: "approve", timeout: event.payload.timeout ?? "1 hour" });
      return { type: got.type, payload: got.payload, at: got.timestamp instanceof Date };
    } catch (e) {
      if (event.payload.rethrow) throw e;
      return { caught: e.name + ": " + e.message };
    }
  }
}`;

test("waitForEvent: an event sent while waiting, one sent before the wait, and a timeout", async (t) => {
  const wf = workflow({ className: "Waiter", clock: "manual" });
  t.after(() => wf.close());
  const worker = await useWorker(t, {
    bindings: { WAIT: wf },
    script: script(WAITER, `const url = new URL(request.url);
      const instance = await env.WAIT.get(url.searchParams.get("id"));
      await instance.sendEvent({ type: "approve", payload: { by: "worker" } });
      return null;`),
  });
  await wf.create({ id: "w1", params: {} });
  await wf.waitForStatus("w1", "waiting");
  assert.equal(wf.timers()[0].kind, "waitForEvent");
  await call(worker, "http://localhost/?id=w1");
  assert.deepEqual((await wf.waitForStatus("w1", "complete")).output, { type: "approve", payload: { by: "worker" }, at: true });

  // An event may arrive before the instance waits for it: it is kept.
  const early = await wf.createBatch([{ id: "w2", params: {} }]);
  await early[0].sendEvent({ type: "other", payload: 0 });
  await early[0].sendEvent({ type: "approve", payload: "early" });
  const out = (await wf.waitForStatus("w2", "complete")).output;
  assert.equal(out.payload, "early");

  await wf.create({ id: "w3", params: { timeout: "10 minutes" } });
  await wf.waitForStatus("w3", "waiting");
  const timer = await wf.runNextTimer();
  assert.equal(timer.kind, "waitForEvent");
  assert.deepEqual((await wf.waitForStatus("w3", "complete")).output, { caught: "WorkflowTimeoutError: Execution timed out after 600000ms" });

  await wf.create({ id: "w4", params: { timeout: 5000, rethrow: true } });
  await wf.waitForStatus("w4", "waiting");
  await wf.runNextTimer();
  assert.equal((await wf.waitForStatus("w4", "errored")).error.name, "WorkflowTimeoutError");
});

test("pause, resume, terminate and restart; the statuses they go through", async (t) => {
  const { counts, binding } = counter();
  const wf = workflow({ className: "Steps", clock: "manual" });
  t.after(() => wf.close());
  await useWorker(t, {
    bindings: { STEPS: wf, COUNT: binding },
    script: script(`export class Steps extends WorkflowEntrypoint {
      async run(event, step) {
        await step.do("one", () => this.env.COUNT.fetch("http://c/one").then((r) => r.text()));
        await step.sleep("nap", "10 minutes");
        await step.do("two", () => this.env.COUNT.fetch("http://c/two").then((r) => r.text()));
        return "done";
      }
    }`),
  });
  const p = await wf.create({ id: "p" });
  await wf.waitForStatus("p", "waiting");
  await p.pause();
  assert.equal((await p.status()).status, "paused");
  await wf.runNextTimer();
  // The sleep ended while paused: the next step waits for resume().
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal((await p.status()).status, "paused");
  assert.equal(counts.two, undefined);
  await p.resume();
  assert.equal((await wf.waitForStatus("p", "complete")).output, "done");
  assert.equal(counts.two, 1);
  await assert.rejects(p.terminate(), /^Error: WorkflowError: \(instance\.cannot_terminate\) Cannot terminate instance since its on a finite state$/);
  // pause() and resume() of a finished instance change nothing (as in Miniflare).
  await p.pause();
  await p.resume();
  assert.equal((await p.status()).status, "complete");

  const x = await wf.create({ id: "x" });
  await wf.waitForStatus("x", "waiting");
  await x.terminate();
  assert.deepEqual(await x.status(), { status: "terminated", error: undefined, output: undefined });
  assert.deepEqual(wf.timers(), []);

  // restart() forgets the steps: "one" runs again.
  const before = counts.one;
  await x.restart();
  await wf.waitForStatus("x", "waiting");
  assert.equal(counts.one, before + 1);
  await wf.runNextTimer();
  assert.equal((await wf.waitForStatus("x", "complete")).output, "done");

});

test("an instance paused while a step runs is waitingForPause until the step ends, then paused until resume()", async (t) => {
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  let entered;
  const inStep = new Promise((resolve) => (entered = resolve));
  const wf = workflow({ className: "Gated", clock: "manual" });
  t.after(() => wf.close());
  await useWorker(t, {
    bindings: { GATED: wf, GATE: service(async () => (entered(), await gate, new Response("open"))) },
    script: script(`export class Gated extends WorkflowEntrypoint {
      async run(event, step) {
        const first = await step.do("gated", () => this.env.GATE.fetch("http://g/").then((r) => r.text()));
        const second = await step.do("after", async () => "second");
        return [first, second];
      }
    }`),
  });
  const q = await wf.create({ id: "q" });
  await inStep;
  assert.equal((await q.status()).status, "running");
  await q.pause();
  assert.equal((await q.status()).status, "waitingForPause");
  release();
  await wf.waitForStatus("q", "paused");
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal((await q.status()).status, "paused", "the next step waits");
  await q.resume();
  assert.deepEqual((await wf.waitForStatus("q", "complete")).output, ["open", "second"]);
});

test("validation: instance ids, duplicates, payload size, step names, batches, unknown instances", async (t) => {
  const wf = workflow({ className: "Named", clock: "manual" });
  t.after(() => wf.close());
  const worker = await useWorker(t, {
    bindings: { WF: wf },
    script: script(
      `export class Named extends WorkflowEntrypoint {
        async run(event, step) { return step.do("x".repeat(event.payload.length), async () => "ran"); }
      }`,
      `const tries = {
         badId: () => env.WF.create({ id: "-starts-with-dash" }),
         longId: () => env.WF.create({ id: "a".repeat(101) }),
         okId: () => env.WF.create({ id: "a".repeat(100), params: { length: 256 } }).then((i) => i.id.length),
         dup: () => env.WF.create({ id: "a".repeat(100) }),
         dupBatch: () => env.WF.createBatch([{ id: "b1" }, { id: "b1" }]),
         emptyBatch: () => env.WF.createBatch([]),
         big: () => env.WF.create({ params: { s: "x".repeat(1 << 20) } }),
         notFound: () => env.WF.get("nope"),
         longStep: () => env.WF.create({ id: "long-step", params: { length: 257 } }).then((i) => i.id),
         batch: () => env.WF.createBatch([{ id: "c1", params: { length: 1 } }, { params: { length: 2 } }]).then((l) => l.map((i) => typeof i.id)),
       };
       const out = {};
       for (const [name, fn] of Object.entries(tries)) {
         try { out[name] = { ok: await fn() }; } catch (e) { out[name] = { error: e.message }; }
       }
       return out;`,
    ),
  });
  const out = await call(worker);
  assert.deepEqual(out.badId, { error: "WorkflowError: Workflow instance has invalid id" });
  assert.deepEqual(out.longId, { error: "WorkflowError: Workflow instance has invalid id" });
  assert.deepEqual(out.okId, { ok: 100 });
  assert.match(out.dup.error, /instance\.already_exists/);
  assert.match(out.dupBatch.error, /given twice/);
  assert.match(out.emptyBatch.error, /batchCreate should have at least 1 instance/);
  assert.match(out.big.error, /limit is 1048576 bytes/);
  assert.match(out.notFound.error, /instance\.not_found/);
  assert.deepEqual(out.longStep, { ok: "long-step" });
  assert.deepEqual(out.batch, { ok: ["string", "string"] });
  assert.equal((await wf.waitForStatus("a".repeat(100), "complete")).output, "ran");
  assert.equal((await wf.waitForStatus("c1", "complete")).output, "ran");
  const long = await wf.waitForStatus("long-step", "errored");
  assert.equal(long.error.name, "WorkflowFatalError");
  assert.match(long.error.message, /exceeds max length \(256 chars\)/);
  await assert.rejects(wf.create({ id: "bad id" }), /^Error: WorkflowError: Workflow instance has invalid id$/);
  await assert.rejects(wf.get("missing"), /instance\.not_found/);
  assert.throws(() => workflow({ className: "X", nope: 1 }), /unknown option "nope"/);
  assert.throws(() => workflow({}), /className/);
});

test("a wrangler project with `workflows`, served by workerbox dev, driven by HTTP; instances resume after the server restarts", async (t) => {
  const { startDevServer } = await import("../lib/project/index.js");
  const dir = tempDir(t);
  writeFileSync(
    path.join(dir, "wrangler.jsonc"),
    `{ "name": "wf-app", "main": "src/index.js", "compatibility_date": "2026-01-01",
       // A Workflow bound as env.ORDERS
       "workflows": [{ "name": "orders", "binding": "ORDERS", "class_name": "OrderFlow" }] }`,
  );
  const { mkdirSync } = await import("node:fs");
  mkdirSync(path.join(dir, "src"));
  writeFileSync(
    path.join(dir, "src/index.js"),
    `import { WorkflowEntrypoint } from "cloudflare:workers";
    export class OrderFlow extends WorkflowEntrypoint {
      async run(event, step) {
        const total = await step.do("price", async () => event.payload.items * 10);
        const ok = await step.waitForEvent("payment", { type: "paid", timeout: "1 day" });
        return { total, paidBy: ok.payload.by };
      }
    }
    export default {
      async fetch(request, env) {
        const url = new URL(request.url);
        if (url.pathname === "/create") return Response.json({ id: (await env.ORDERS.create({ id: url.searchParams.get("id"), params: { items: 3 } })).id });
        const instance = await env.ORDERS.get(url.searchParams.get("id"));
        if (url.pathname === "/pay") { await instance.sendEvent({ type: "paid", payload: { by: "card" } }); return new Response("ok"); }
        return Response.json(await instance.status());
      },
    };`,
  );
  const waitFor = async (base, id, wanted) => {
    // Polled over HTTP, as a user would; 20 s allows for a loaded machine.
    for (const end = Date.now() + 20_000; Date.now() < end; ) {
      const status = await (await fetch(`${base}/status?id=${id}`)).json();
      if (status.status === wanted) return status;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`instance ${id} never became ${wanted}`);
  };
  let server = await startDevServer(dir, { port: 0, color: false, watch: false, log: () => {} });
  try {
    assert.deepEqual(await (await fetch(`${server.url}create?id=order-1`)).json(), { id: "order-1" });
    await waitFor(server.url.replace(/\/$/, ""), "order-1", "waiting");
  } finally {
    await server.close();
  }
  server = await startDevServer(dir, { port: 0, color: false, watch: false, log: () => {} });
  t.after(() => server.close());
  const base = server.url.replace(/\/$/, "");
  await waitFor(base, "order-1", "waiting");
  // A reload (an edit) replaces the worker: the instance moves to the new one.
  await server.reload();
  await waitFor(base, "order-1", "waiting");
  assert.equal(await (await fetch(`${base}/pay?id=order-1`)).text(), "ok");
  const done = await waitFor(base, "order-1", "complete");
  assert.deepEqual(done.output, { total: 30, paidBy: "card" });
});

test("wrangler config: workflows entries are checked; a class in another worker (script_name) is reported as not supported yet", async () => {
  const { loadProject, readConfig } = await import("../lib/project/index.js");
  const dir = mkdtempSync(path.join(tmpdir(), "workerbox-workflows-config-"));
  try {
    writeFileSync(path.join(dir, "index.js"), `import { WorkflowEntrypoint } from "cloudflare:workers";\nexport class Mine extends WorkflowEntrypoint { async run() {} }\nexport default { fetch() { return new Response("ok"); } };`);
    const write = (workflows) => writeFileSync(path.join(dir, "wrangler.json"), JSON.stringify({ name: "app", main: "index.js", compatibility_date: "2026-01-01", workflows }));
    write([{ name: "mine", binding: "MINE" }]);
    assert.throws(() => readConfig(dir), /workflows\[0\]\.class_name/);
    write([
      { name: "mine", binding: "MINE", class_name: "Mine" },
      { name: "theirs", binding: "THEIRS", class_name: "Theirs", script_name: "other-worker" },
    ]);
    const config = readConfig(dir);
    assert.deepEqual(config.bindings.workflows.map((w) => [w.binding, w.name, w.className, w.scriptName]), [
      ["MINE", "mine", "Mine", undefined],
      ["THEIRS", "theirs", "Theirs", "other-worker"],
    ]);
    const project = await loadProject(dir, { persistTo: false });
    assert.equal(project.bindings.MINE.className, "Mine");
    assert.equal(project.bindings.THEIRS, undefined);
    const [unsupported] = project.unsupported;
    assert.equal(unsupported.binding, "THEIRS");
    assert.match(unsupported.reason, /worker "other-worker" \(script_name\), which is not supported yet/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a sleep, a retry delay and a step longer than limits.bindingMs: each step call is asked again until done, the run completes", { timeout: scaled(30_000) }, async (t) => {
  const wf = workflow({ className: "Slow" });
  t.after(() => wf.close());
  const worker = await useWorker(t, {
    limits: { bindingMs: 200 },
    bindings: { SLOW: wf },
    script: script(
      `export class Slow extends WorkflowEntrypoint {
        async run(event, step) {
          await step.sleep("nap", 700);
          const slow = await step.do("slow", async () => { await scheduler.wait(700); return "slow done"; });
          const flaky = await step.do("flaky", { retries: { limit: 1, delay: 700, backoff: "constant" } }, async (ctx) => {
            if (ctx.attempt === 1) throw new Error("first attempt fails");
            return ctx.attempt;
          });
          return { slow, flaky };
        }
      }`,
      `await env.SLOW.create({ id: "s1" }); return "made";`,
    ),
  });
  assert.equal(await call(worker), "made");
  const started = Date.now();
  const { status, output, error } = await wf.waitForStatus("s1", ["complete", "errored"], { timeoutMs: 20_000 });
  assert.deepEqual({ status, output, error }, { status: "complete", output: { slow: "slow done", flaky: 2 }, error: undefined });
  assert.ok(Date.now() - started >= 1500, "the waits were real");
});

test("an instance ended while its run begins an event wait (an introspection session's end) has that wait cancelled: nothing holds Node's event loop open", { timeout: scaled(60_000) }, async () => {
  // In a child: a run past a skipped sleep, beginning an event wait, its step call on a lease of
  // 5 minutes (limits.bindingMs: 600 000); the instance ended by disposing the introspection
  // session that saw it made, as soon as it is "waiting" (the wait is registered after that status
  // is written), then the worker disposed; the binding is not closed. The child must exit on its
  // own: before the fix the wait began after the end and stayed, and its lease held the process.
  const index = JSON.stringify(fileURLToPath(new URL("../index.js", import.meta.url)));
  const introspection = JSON.stringify(fileURLToPath(new URL("../lib/test/index.js", import.meta.url)));
  const worker = script(`export class Waits extends WorkflowEntrypoint { async run(event, step) { await step.sleep("cool down", "1 day"); await step.waitForEvent("approval", { type: "approval", timeout: "1 day" }); } }`, `await env.WF.create({ id: "w" }); return "made";`);
  const source = `const { createWorker, dispatch, workflow } = require(${index});
    const { introspectWorkflow } = require(${introspection});
    (async () => {
      const wf = workflow({ className: "Waits" });
      const worker = await createWorker({ limits: { bindingMs: 600000 }, bindings: { WF: wf }, script: ${JSON.stringify(worker)} });
      const session = await introspectWorkflow(wf);
      await session.modifyAll((m) => m.disableSleeps());
      const made = await (await dispatch(worker, "http://localhost/")).json();
      const [instance] = await session.get();
      await instance.waitForStatus("waiting");
      await session.dispose();
      const after = (await (await wf.get("w")).status()).status;
      await worker.dispose();
      process.stdout.write(JSON.stringify({ made, after }));
    })();`;
  const result = await runChild(source, {}, 40_000);
  assert.equal(result.signal, null, `the child was killed after ${result.lived} ms: something held its event loop open\n${result.stderr}`);
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual({ made: result.made, after: result.after }, { made: "made", after: "terminated" });
});
