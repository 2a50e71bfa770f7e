// Workflows introspection from workerbox/test (the Node side of cloudflare:test's
// introspectWorkflow / introspectWorkflowInstance): sleeps and retry delays skipped, step results,
// errors and timeouts mocked per attempt, events mocked (again after a restart), event waits
// timed out at once, waits for a step's result and an instance's status, output and error as
// Cloudflare's introspector gives them, sessions over instances a worker creates, dispose()
// ending runs, and the errors for bad input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch, service, workflow } from "../index.js";
import { introspectWorkflow, introspectWorkflowInstance } from "../lib/test/index.js";
import { useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
/** Counts the real step callbacks that ran, by step name (seen from Node through a service binding). */
function counter() {
  const counts = {};
  const binding = service((request) => {
    const key = decodeURIComponent(new URL(request.url).pathname.slice(1));
    counts[key] = (counts[key] ?? 0) + 1;
    return new Response(String(counts[key]));
  });
  return { counts, binding };
}

// A moderation flow: a day-long sleep, a scored step, then approval, rejection or a human's decision.
const SCRIPT = `import { WorkflowEntrypoint } from "cloudflare:workers";
export class Moderator extends WorkflowEntrypoint {
  async run(event, step) {
    await step.sleep("cool down", "1 day");
    const scan = await step.do("scan", { retries: { limit: 3, delay: "10 seconds", backoff: "exponential" } }, async (ctx) => {
      await this.env.COUNT.fetch("http://count/scan");
      return { score: event.payload.score ?? 50, attempt: ctx.attempt };
    });
    if (scan.score < 10) return await step.do("approve", async () => ({ status: "approved", attempt: scan.attempt }));
    if (scan.score > 90) return await step.do("reject", async () => ({ status: "rejected" }));
    const review = await step.waitForEvent("human review", { type: "decision", timeout: "1 day" });
    return await step.do("apply", async () => ({ status: "moderated", decision: review.payload.action }));
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/batch") return Response.json((await env.MOD.createBatch([{}, { id: "b2" }, {}])).map((i) => i.id));
    const made = await env.MOD.create({ id: url.searchParams.get("id") ?? undefined, params: { score: Number(url.searchParams.get("score") ?? 50) } });
    return Response.json(made.id);
  },
};`;

async function setup(t) {
  const wf = workflow({ className: "Moderator" });
  t.after(() => wf.close());
  const count = counter();
  const worker = await useWorker(t, { bindings: { MOD: wf, COUNT: count.binding }, script: SCRIPT });
  const create = async (query) => (await dispatch(worker, `http://localhost/${query}`)).json();
  return { wf, counts: count.counts, create };
}

test("introspectWorkflowInstance(): sleeps skipped and a step's result mocked; the real callback never runs", { timeout: scaled(30_000) }, async (t) => {
  const { wf, counts, create } = await setup(t);
  const instance = await introspectWorkflowInstance(wf, "i1");
  t.after(() => instance.dispose());
  await instance.modify(async (m) => {
    await m.disableSleeps();
    await m.mockStepResult({ name: "scan" }, { score: 0, attempt: "mocked" });
  });
  await create("?id=i1&score=50");
  assert.deepEqual(await instance.waitForStepResult({ name: "scan" }), { score: 0, attempt: "mocked" });
  assert.deepEqual(await instance.waitForStepResult({ name: "approve" }), { status: "approved", attempt: "mocked" });
  await instance.waitForStatus("complete");
  assert.deepEqual(await instance.getOutput(), { status: "approved", attempt: "mocked" });
  assert.equal(counts.scan, undefined);
  await assert.rejects(instance.getError(), /is complete, so it has no error/);
});

test("mockStepError(step, error, times) fails the first attempts; disableRetryDelays() retries at once; the real step then runs", { timeout: scaled(30_000) }, async (t) => {
  const { wf, counts, create } = await setup(t);
  const instance = await introspectWorkflowInstance(wf, "i2");
  t.after(() => instance.dispose());
  await instance.modify(async (m) => {
    await m.disableSleeps();
    await m.disableRetryDelays();
    await m.mockStepError({ name: "scan" }, new TypeError("flaky"), 2);
  });
  const started = Date.now();
  await create("?id=i2&score=5");
  assert.deepEqual(await instance.waitForStepResult({ name: "scan" }), { score: 5, attempt: 3 });
  await instance.waitForStatus("complete");
  assert.ok(Date.now() - started < 10_000, "no 10 s + 20 s retry delays");
  assert.equal(counts.scan, 1);
});

test("a step that fails for good: waitForStepResult() rejects with its error; getError() as Cloudflare's introspector gives it", { timeout: scaled(30_000) }, async (t) => {
  const { wf, create } = await setup(t);
  const instance = await introspectWorkflowInstance(wf, "i3");
  t.after(() => instance.dispose());
  await instance.modify(async (m) => {
    await m.disableSleeps();
    await m.disableRetryDelays([{ name: "scan" }]);
    await m.forceStepTimeout({ name: "scan" });
  });
  await create("?id=i3");
  await assert.rejects(instance.waitForStepResult({ name: "scan" }), { name: "WorkflowTimeoutError", message: "Execution timed out after 600000ms" });
  await instance.waitForStatus("errored");
  // The status keeps the error's own name; getError() gives it as it crosses RPC in Cloudflare's.
  assert.deepEqual((await wf.get("i3").then((h) => h.status())).error, { name: "WorkflowTimeoutError", message: "Execution timed out after 600000ms" });
  assert.deepEqual(await instance.getError(), { name: "Error", message: "Execution timed out after 600000ms" });
  await assert.rejects(instance.waitForStatus("complete"), /is errored, which it will not leave for complete/);
  await assert.rejects(instance.getOutput(), /is errored, so it has no output/);
});

test("mockEvent() answers the wait (again after restart()); forceEventTimeout() times the wait out at once", { timeout: scaled(30_000) }, async (t) => {
  const { wf, create } = await setup(t);
  const decided = await introspectWorkflowInstance(wf, "e1");
  t.after(() => decided.dispose());
  await decided.modify(async (m) => {
    await m.disableSleeps();
    await m.mockEvent({ type: "decision", payload: { action: "approve" } });
  });
  await create("?id=e1&score=50");
  await decided.waitForStatus("complete");
  assert.deepEqual(await decided.getOutput(), { status: "moderated", decision: "approve" });
  await (await wf.get("e1")).restart();
  await decided.waitForStatus("complete");
  assert.deepEqual(await decided.getOutput(), { status: "moderated", decision: "approve" });

  const timedOut = await introspectWorkflowInstance(wf, "e2");
  t.after(() => timedOut.dispose());
  await timedOut.modify(async (m) => {
    await m.disableSleeps();
    await m.forceEventTimeout({ name: "human review" });
  });
  await create("?id=e2&score=50");
  await timedOut.waitForStatus("errored");
  assert.deepEqual(await timedOut.getError(), { name: "Error", message: "Execution timed out after 86400000ms" });
});

test("introspectWorkflow(): modifyAll() reaches every instance a worker creates until dispose(), which ends their runs", { timeout: scaled(30_000) }, async (t) => {
  const { wf, counts, create } = await setup(t);
  const introspector = await introspectWorkflow(wf);
  await introspector.modifyAll(async (m) => {
    await m.disableSleeps();
    await m.mockStepResult({ name: "scan" }, { score: 99 });
  });
  const ids = await create("batch");
  const instances = await introspector.get();
  assert.deepEqual(instances.map((i) => i.id), ids);
  assert.equal(ids[1], "b2");
  for (const instance of instances) {
    await instance.waitForStatus("complete");
    assert.deepEqual(await instance.getOutput(), { status: "rejected" });
  }
  await introspector.dispose();
  // A second session, its instance left waiting for a decision: dispose() ends its run.
  const second = await introspectWorkflow(wf);
  await second.modifyAll(async (m) => {
    await m.disableSleeps();
    await m.mockStepResult({ name: "scan", index: 1 }, { score: 50 });
  });
  const waiting = await create("?id=w1");
  const [w1] = await second.get();
  await w1.waitForStatus("waiting");
  await second[Symbol.asyncDispose]();
  assert.equal((await (await wf.get(waiting)).status()).status, "terminated");
  // After dispose(), new instances run as written: the real day-long sleep holds this one.
  await create("?id=after");
  await wf.waitForStatus("after", "waiting");
  assert.deepEqual((await second.get()).map((i) => i.id), ["w1"]);
  assert.equal(counts.scan, undefined);
});

test("pause and terminate seen through waitForStatus(); a mocked result set twice, bad steps and bad bindings are refused", { timeout: scaled(30_000) }, async (t) => {
  const { wf, create } = await setup(t);
  const instance = await introspectWorkflowInstance(wf, "p1");
  t.after(() => instance.dispose());
  await instance.modify(async (m) => {
    await m.disableSleeps([{ name: "cool down" }]);
    await m.mockStepResult({ name: "scan" }, { score: 50 });
  });
  await create("?id=p1");
  await instance.waitForStepResult({ name: "scan" });
  const handle = await wf.get("p1");
  await handle.pause();
  await instance.waitForStatus("paused");
  await handle.terminate();
  await instance.waitForStatus("terminated");

  await assert.rejects(instance.modify((m) => m.mockStepResult({ name: "scan" }, 1)), /Trying to mock step 'scan' multiple times/);
  await assert.rejects(instance.modify((m) => m.mockStepError({ name: "scan" }, new Error("x"))), /Trying to mock error on step 'scan' after mocking its result/);
  await assert.rejects(instance.modify((m) => m.disableSleeps([{ name: "x", index: 0 }])), /index must be an integer of at least 1/);
  await assert.rejects(instance.modify((m) => m.mockStepResult("scan", 1)), /the step must be an object \{ name: string, index\?: number \}/);
  await assert.rejects(instance.modify((m) => m.mockStepError({ name: "x" }, new Error("x"), 0)), /times must be an integer of at least 1/);
  await assert.rejects(introspectWorkflow({}), /must be a Workflow binding/);
  await assert.rejects(introspectWorkflowInstance(wf, ""), /instance id must be a non-empty string/);
  const never = await introspectWorkflowInstance(wf, "never");
  await assert.rejects(never.waitForStatus("complete", { timeoutMs: 200 }), /timed out after 200 ms waiting for instance never to be created/);
});

test("waitForStepResult() resolves when the step is done, while the run goes on with a slow step", { timeout: scaled(30_000) }, async (t) => {
  const wf = workflow({ className: "TwoSteps" });
  t.after(() => wf.close());
  await useWorker(t, {
    bindings: { TWO: wf },
    script: `import { WorkflowEntrypoint } from "cloudflare:workers";
      export class TwoSteps extends WorkflowEntrypoint {
        async run(event, step) {
          await step.do("quick", async () => "quick done");
          await step.do("slow", async () => { await scheduler.wait(3000); return "slow done"; });
        }
      }
      export default { fetch: () => new Response("") };`,
  });
  const instance = await introspectWorkflowInstance(wf, "two");
  t.after(() => instance.dispose());
  const started = Date.now();
  await wf.create({ id: "two" });
  assert.equal(await instance.waitForStepResult({ name: "quick" }), "quick done");
  assert.ok(Date.now() - started < 2500, `took ${Date.now() - started} ms`);
  assert.equal((await (await wf.get("two")).status()).status, "running");
});
