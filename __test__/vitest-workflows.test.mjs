// workerbox/vitest on what Cloudflare's Vitest examples ask of Workflows and of bindings that run
// only on Cloudflare's network: cloudflare:test's introspectWorkflow / introspectWorkflowInstance
// (sleeps skipped, step results, errors and events mocked, event waits timed out, statuses,
// output and error; `await using` disposal); Workers AI and Vectorize bindings whose methods tests
// mock (calls not mocked fail with Miniflare's "needs to be run remotely"); Images' info() answered
// locally; an `assets` table without `directory` skipped; `new RpcStub()` of cloudflare:workers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runVitest, vitestProject } from "./helpers.mjs";


import { scaled } from "./child-node.mjs";
const makeProject = (t, files) => vitestProject(t, "workflows", files);

// 1x1 PNG (a red pixel).
const PNG = "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082";

test("cloudflare:test's Workflow introspection, remote-only AI / Vectorize / Images bindings, assets without a directory, RpcStub", { timeout: scaled(240_000) }, async (t) => {
  const dir = makeProject(t, {
    "wrangler.jsonc": JSON.stringify({
      name: "flows",
      main: "src/index.ts",
      compatibility_date: "2026-01-01",
      workflows: [{ binding: "FLOW", class_name: "Flow", name: "flow" }],
      ai: { binding: "AI" },
      vectorize: [{ binding: "VECTORS", index_name: "v" }],
      images: { binding: "IMAGES" },
      assets: { binding: "ASSETS" },
    }),
    "src/index.ts": [
      `import { WorkflowEntrypoint } from "cloudflare:workers";`,
      `export class Flow extends WorkflowEntrypoint {`,
      `  async run(event: any, step: any) {`,
      `    await step.sleep("wait", "1 hour");`,
      `    const score = await step.do("score", { retries: { limit: 3, delay: "1 minute" } }, async () => ({ score: 50 }));`,
      `    if (score.score < 10) return { verdict: "ok" };`,
      `    const review = await step.waitForEvent("review", { type: "decision", timeout: "1 day" });`,
      `    return { verdict: review.payload.verdict };`,
      `  }`,
      `}`,
      `export default { async fetch(request: Request, env: any) {`,
      `  const url = new URL(request.url);`,
      `  if (url.pathname === "/ai") return Response.json(await env.AI.run("@cf/model", { text: "x" }));`,
      `  if (url.pathname === "/image") return Response.json(await env.IMAGES.info(request.body));`,
      `  const made = await env.FLOW.createBatch([{}, {}]);`,
      `  return Response.json(made.map((i: any) => i.id));`,
      `} };`,
    ].join("\n"),
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.jsonc" } })] };\n`,
    "test/flows.test.ts": [
      `import { introspectWorkflow, introspectWorkflowInstance } from "cloudflare:test";`,
      `import { env, exports, RpcStub, RpcTarget } from "cloudflare:workers";`,
      `import { it, expect, vi } from "vitest";`,
      `it("one instance: mocked result, no sleeps", async () => {`,
      `  await using instance = await introspectWorkflowInstance(env.FLOW, "one");`,
      `  await instance.modify(async (m) => { await m.disableSleeps(); await m.mockStepResult({ name: "score" }, { score: 1, when: new Date(0) }); });`,
      `  await env.FLOW.create({ id: "one" });`,
      `  expect(await instance.waitForStepResult({ name: "score" })).toEqual({ score: 1, when: new Date(0) });`,
      `  await instance.waitForStatus("complete");`,
      `  expect(await instance.getOutput()).toEqual({ verdict: "ok" });`,
      `});`,
      `it("mocked errors then an event; a timed-out wait's error", async () => {`,
      `  await using a = await introspectWorkflowInstance(env.FLOW, "two");`,
      `  await a.modify(async (m) => { await m.disableSleeps(); await m.disableRetryDelays(); await m.mockStepError({ name: "score" }, new Error("flaky"), 2); await m.mockEvent({ type: "decision", payload: { verdict: "approved" } }); });`,
      `  await env.FLOW.create({ id: "two" });`,
      `  expect(await a.waitForStepResult({ name: "score" })).toEqual({ score: 50 });`,
      `  await a.waitForStatus("complete");`,
      `  expect(await a.getOutput()).toEqual({ verdict: "approved" });`,
      `  await using b = await introspectWorkflowInstance(env.FLOW, "three");`,
      `  await b.modify(async (m) => { await m.disableSleeps(); await m.forceEventTimeout({ name: "review" }); });`,
      `  await env.FLOW.create({ id: "three" });`,
      `  await b.waitForStatus("errored");`,
      `  expect(await b.getError()).toEqual({ name: "Error", message: "Execution timed out after 86400000ms" });`,
      `  await expect(b.waitForStatus("complete")).rejects.toThrow(/is errored/);`,
      `  await expect(b.modify(async (m) => { await m.mockStepResult({ name: "score", index: 0 }, 1); })).rejects.toThrow(/index must be an integer of at least 1/);`,
      `});`,
      `it("every instance the worker creates; dispose ends the runs", async () => {`,
      `  const introspector = await introspectWorkflow(env.FLOW);`,
      `  await introspector.modifyAll(async (m) => { await m.disableSleeps(); });`,
      `  const ids = await (await exports.default.fetch("http://x/batch")).json();`,
      `  const instances = await introspector.get();`,
      `  expect(instances.length).toBe(2);`,
      `  for (const instance of instances) await instance.waitForStatus("waiting");`,
      `  await introspector.dispose();`,
      `  for (const id of ids) expect((await (await env.FLOW.get(id)).status()).status).toBe("terminated");`,
      `  await expect(introspectWorkflow({} as any)).rejects.toThrow(/must be one of env's Workflow bindings/);`,
      `});`,
      `it("AI and Vectorize: mocked methods answer, others need remote bindings; Images info() locally", async () => {`,
      `  await expect(env.VECTORS.query([1], {})).rejects.toThrow("Binding VECTORS needs to be run remotely");`,
      `  await expect(env.AI.run("@cf/model", {})).rejects.toThrow("Binding AI needs to be run remotely");`,
      `  vi.spyOn(env.AI, "run").mockResolvedValue({ data: [1] });`,
      `  expect(await (await exports.default.fetch("http://x/ai")).json()).toEqual({ data: [1] });`,
      `  const png = Uint8Array.from("${PNG}".match(/../g)!.map((h) => parseInt(h, 16)));`,
      `  const info = await (await exports.default.fetch("http://x/image", { method: "POST", body: png })).json();`,
      `  expect(info).toEqual({ format: "image/png", fileSize: png.length, width: 1, height: 1 });`,
      `  expect(env.ASSETS).toBeUndefined();`,
      `});`,
      `it("new RpcStub(target): calls through RPC rules, with pipelining", async () => {`,
      `  class Counter extends RpcTarget { constructor(public n: number) { super(); } add(k: number) { return (this.n += k); } clone() { return new Counter(this.n); } }`,
      `  const stub: any = new RpcStub(new Counter(1));`,
      `  expect(await stub.clone().add(3)).toBe(4);`,
      `  expect(await stub.add(1)).toBe(2);`,
      `  await expect(stub.n).rejects.toThrow('does not implement the method "n"');`,
      `  stub[Symbol.dispose]();`,
      `  await expect(stub.add(1)).rejects.toThrow(/disposed/);`,
      `  expect(() => new RpcStub(1 as any)).toThrow("Failed to construct 'JsRpcStub': constructor parameter 1 is not of type 'JsObject'.");`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 5, output);
});
