// workerbox/vitest runs a project's tests whatever its compatibility date and flags: the runner
// (Vitest's runtime inside the isolate) gets Node's modules and globals as trusted host modules,
// while the project's own code — its worker and its tests — sees exactly what its flags give,
// the same as a plain createWorker() with that configuration (workerd's rules). Experimental
// flags are accepted in the pool, as Cloudflare's pool runs workerd with --experimental.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runVitest } from "./helpers.mjs";
import { createWorker, dispatch } from "../index.js";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** What the worker's code sees: Node's globals, and which node: modules it may import. */
const PROBE = `
async function importable(name) {
  try {
    await import(name);
    return true;
  } catch (error) {
    if (!/No such module|Cannot resolve module/.test(error.message)) throw error;
    return false;
  }
}
export async function probe() {
  return {
    process: typeof process,
    Buffer: typeof Buffer,
    global: typeof global,
    setImmediate: typeof setImmediate,
    processInGlobalThis: "process" in globalThis,
    "node:buffer": await importable("node:buffer"),
    "node:vm": await importable("node:vm"),
    "node:fs": await importable("node:fs"),
    processVersions: (await importable("node:process")) ? typeof (await import("node:process")).default.versions : "no node:process",
  };
}
`;


/** What a plain worker with this date and flags sees (the engine's own rules, as workerd's). */
async function plainWorkerSees(compatibilityDate, compatibilityFlags) {
  const worker = await createWorker({
    script: `${PROBE}\nexport default { async fetch() { return Response.json(await probe()); } };`,
    format: "module",
    compatibilityDate,
    compatibilityFlags,
    onLog() {},
  });
  try {
    return await (await dispatch(worker, "http://x/")).json();
  } finally {
    await worker.dispose();
  }
}

/**
 * A project (in examples/, where `workerbox/vitest` resolves to this checkout) whose worker and
 * test file both report what they see; the test asserts it equals `expected`.
 */
function makeProject(t, { date, flags, expected, extraTest = "", pluginOptions = {} }) {
  const dir = fs.mkdtempSync(path.join(root, "examples", ".tmp-vitest-compat-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.mkdirSync(path.join(dir, "test"));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "compat", main: "src/worker.js", compatibility_date: date, compatibility_flags: flags }));
  fs.writeFileSync(path.join(dir, "src", "probe.js"), PROBE);
  fs.writeFileSync(path.join(dir, "src", "worker.js"), `import { probe } from "./probe.js";\nexport default { async fetch() { return Response.json(await probe()); } };\n`);
  fs.writeFileSync(path.join(dir, "vitest.config.mjs"), `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest(${JSON.stringify(pluginOptions)})] };\n`);
  fs.writeFileSync(
    path.join(dir, "test", "compat.test.js"),
    [
      `import { SELF } from "cloudflare:test";`,
      `import { it, expect } from "vitest";`,
      `import { probe } from "../src/probe.js";`,
      `const expected = ${JSON.stringify(expected)};`,
      `it("the worker sees its own flags", async () => {`,
      `  expect(await (await SELF.fetch("http://x/")).json()).toEqual(expected);`,
      `});`,
      `it("the test file sees them too", async () => {`,
      `  expect(await probe()).toEqual(expected);`,
      `  expect(typeof process).toBe(expected.process);`,
      `});`,
      extraTest,
    ].join("\n"),
  );
  return dir;
}

async function checkProject(t, date, flags, expected, extraTest = "", extraTests = 0) {
  // The expectation is workerd's rule, and the engine agrees for a plain worker.
  assert.deepEqual(await plainWorkerSees(date, flags), expected);
  const dir = makeProject(t, { date, flags, expected, extraTest });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numFailedTests, 0, output);
  assert.equal(report.numPassedTests, 2 + extraTests, output);
}

test("without nodejs_compat, the runner starts and the project's code has no process, Buffer or node: modules", async (t) => {
  await checkProject(t, "2025-06-01", [], {
    process: "undefined",
    Buffer: "undefined",
    global: "undefined",
    setImmediate: "undefined",
    processInGlobalThis: false,
    "node:buffer": false,
    "node:vm": false,
    "node:fs": false,
    processVersions: "no node:process",
  });
});

test("nodejs_compat at 2024-01-01 (v1): node:buffer but no globals, no node:vm or node:fs, the older process object", async (t) => {
  await checkProject(t, "2024-01-01", ["nodejs_compat"], {
    process: "undefined",
    Buffer: "undefined",
    global: "undefined",
    setImmediate: "undefined",
    processInGlobalThis: false,
    "node:buffer": true,
    "node:vm": false,
    "node:fs": false,
    processVersions: "undefined",
  });
});

test("nodejs_compat at 2026-08-01: the globals, node:vm and node:fs, the fuller process", async (t) => {
  await checkProject(t, "2026-08-01", ["nodejs_compat"], {
    process: "object",
    Buffer: "function",
    global: "object",
    setImmediate: "function",
    processInGlobalThis: true,
    "node:buffer": true,
    "node:vm": true,
    "node:fs": true,
    processVersions: "object",
  });
});

test("an experimental flag in the project's wrangler file is accepted by the pool (service_binding_extra_handlers, as Cloudflare's rpc example)", async (t) => {
  const expected = { process: "object", Buffer: "function", global: "object", setImmediate: "function", processInGlobalThis: true, "node:buffer": true, "node:vm": true, "node:fs": true, processVersions: "object" };
  const dir = makeProject(t, { date: "2026-08-01", flags: ["nodejs_compat", "service_binding_extra_handlers"], expected });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});

test("createWorker: experimental flags are refused unless unsafeExperimental: true, and the refusal names that option", async () => {
  await assert.rejects(
    createWorker({ script: "export default { fetch() { return new Response('x'); } };", format: "module", compatibilityDate: "2026-08-01", compatibilityFlags: ["service_binding_extra_handlers"] }),
    (error) => error instanceof TypeError && /"service_binding_extra_handlers" is experimental/.test(error.message) && /unsafeExperimental: true/.test(error.message),
  );
  await assert.rejects(createWorker({ script: "export default {};", unsafeExperimental: "yes" }), /unsafeExperimental must be a boolean/);
  const worker = await createWorker({ script: "export default { fetch() { return new Response('ok'); } };", format: "module", compatibilityDate: "2026-08-01", compatibilityFlags: ["service_binding_extra_handlers"], unsafeExperimental: true, onLog() {} });
  try {
    assert.equal(await (await dispatch(worker, "http://x/")).text(), "ok");
  } finally {
    await worker.dispose();
  }
});

test("createWorker({ trustLoadedModules }): the modules loadModule gives import node: modules whatever the flags; the worker's own code still may not, before or after them", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-trusted-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const helper = path.join(dir, "helper.mjs");
  fs.writeFileSync(helper, `import vm from "node:vm";\nimport { Buffer } from "node:buffer";\nexport const fromHelper = typeof vm.runInThisContext + " " + Buffer.from("hi").toString("hex");\n`);
  const helperCjs = path.join(dir, "helper.cjs");
  fs.writeFileSync(helperCjs, `module.exports = require("node:path").join("a", "b");\n`);
  const loadModule = (specifier) => {
    if (specifier === "helper") return { name: helper, type: "esm", content: fs.readFileSync(helper, "utf8") };
    if (specifier === "helper-cjs") return { name: helperCjs, type: "commonjs", content: fs.readFileSync(helperCjs, "utf8") };
    return undefined;
  };
  const script = `
    export default {
      async fetch() {
        const tryImport = (name) => import(name).then(() => "imported", (error) => error.message);
        const before = await tryImport("node:vm");
        const { fromHelper } = await import("helper");
        const fromCjs = (await import("helper-cjs")).default;
        const after = await tryImport("node:vm");
        return Response.json({ before, fromHelper, fromCjs, after, process: typeof process });
      },
    };`;
  await assert.rejects(createWorker({ script, format: "module", trustLoadedModules: true }), /trustLoadedModules applies only with loadModule/);
  const worker = await createWorker({ script, format: "module", compatibilityDate: "2025-06-01", loadModule, trustLoadedModules: true, allowEval: true, onLog() {} });
  t.after(() => worker.dispose());
  const seen = await (await dispatch(worker, "http://x/")).json();
  assert.equal(seen.fromHelper, "function 6869");
  assert.equal(seen.fromCjs, "a/b");
  assert.equal(seen.process, "undefined");
  assert.match(seen.before, /node:vm/);
  assert.notEqual(seen.before, "imported");
  // The node:vm the trusted module loaded is not handed to the worker's own import.
  assert.equal(seen.after, seen.before);
  // Without trustLoadedModules the same loaded module may not import node:vm.
  const untrusted = await createWorker({ script, format: "module", compatibilityDate: "2025-06-01", loadModule, onLog() {} });
  t.after(() => untrusted.dispose());
  await assert.rejects(dispatch(untrusted, "http://x/"), /No such module "node:vm"\. node: modules need the nodejs_compat compatibility flag .*imported by "[^"]*helper\.mjs"/);
});

test("a project whose wrangler file names an experimental flag loads, and its createWorker options carry unsafeExperimental (as wrangler dev runs workerd with --experimental)", async (t) => {
  const { loadProject } = await import("../index.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-experimental-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "worker.js"), `export default { fetch() { return new Response("experimental ok"); } };\n`);
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "x", main: "worker.js", compatibility_date: "2026-08-01", compatibility_flags: ["service_binding_extra_handlers"] }));
  const project = await loadProject(dir, { persistTo: false });
  assert.equal(project.options.unsafeExperimental, true);
  const worker = await createWorker({ ...project.options, onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://x/")).text(), "experimental ok");
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "x", main: "worker.js", compatibility_date: "2026-08-01", compatibility_flags: ["nodejs_compat"] }));
  assert.equal((await loadProject(dir, { persistTo: false })).options.unsafeExperimental, undefined);
});

test("miniflare.compatibilityFlags add to the wrangler file's flags (as Miniflare merges them), so nodejs_compat stays", async (t) => {
  const expected = { process: "object", Buffer: "function", global: "object", setImmediate: "function", processInGlobalThis: true, "node:buffer": true, "node:vm": true, "node:fs": true, processVersions: "object" };
  const dir = makeProject(t, { date: "2026-08-01", flags: ["nodejs_compat"], expected, pluginOptions: { miniflare: { compatibilityFlags: ["service_binding_extra_handlers"] } } });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});

test("service_binding_extra_handlers: exports.default.scheduled() and .queue() run the handlers and resolve to their outcome, as in Cloudflare's examples", async (t) => {
  const dir = fs.mkdtempSync(path.join(root, "examples", ".tmp-vitest-compat-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "test"));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "extra", main: "worker.js", compatibility_date: "2026-08-01", compatibility_flags: ["nodejs_compat", "service_binding_extra_handlers"], kv_namespaces: [{ binding: "KV", id: "kv" }] }));
  fs.writeFileSync(
    path.join(dir, "worker.js"),
    [
      `export default {`,
      `  async scheduled(controller, env, ctx) {`,
      `    if (controller.cron === "fail") throw new Error("scheduled broke");`,
      `    ctx.waitUntil(env.KV.put("cron", controller.cron + "@" + controller.scheduledTime));`,
      `  },`,
      `  async queue(batch, env) {`,
      `    for (const message of batch.messages) {`,
      `      if (message.body.ok) message.ack(); else message.retry();`,
      `    }`,
      `    await env.KV.put("queue", batch.queue + ":" + batch.messages.length);`,
      `  },`,
      `};`,
    ].join("\n"),
  );
  fs.writeFileSync(path.join(dir, "vitest.config.mjs"), `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({})] };\n`);
  fs.writeFileSync(
    path.join(dir, "test", "extra.test.js"),
    [
      `import { env, exports } from "cloudflare:workers";`,
      `import { it, expect } from "vitest";`,
      `it("scheduled", async () => {`,
      `  expect(await exports.default.scheduled({ scheduledTime: new Date(1000), cron: "30 * * * *" })).toEqual({ outcome: "ok", noRetry: false });`,
      `  expect(await env.KV.get("cron")).toBe("30 * * * *@1000");`,
      `  expect((await exports.default.scheduled({ cron: "fail" })).outcome).toBe("exception");`,
      `});`,
      `it("queue", async () => {`,
      `  const result = await exports.default.queue("jobs", [{ id: "a", timestamp: new Date(1000), attempts: 1, body: { ok: true } }, { id: "b", timestamp: new Date(2000), attempts: 1, body: { ok: false } }]);`,
      `  expect(result).toEqual({ outcome: "ok", retryBatch: { retry: false }, ackAll: false, retryMessages: [{ msgId: "b" }], explicitAcks: ["a"] });`,
      `  expect(await env.KV.get("queue")).toBe("jobs:2");`,
      `});`,
    ].join("\n"),
  );
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});
