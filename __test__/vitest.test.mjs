// workerbox/vitest: Vitest (the pinned devDependency) runs the example project in examples/vitest
// with its tests inside workerbox isolates, and a project with a failing test reports the
// failure (message, diff, source location) and console output as Vitest does; the runner's
// host module loader (lib/vitest/loader.js) caches files and keeps import hints in cacheDir; Vite's
// async parses run on the calling thread under the pool (lib/vitest/parse-memory.js), with no
// runner left for 200 ms the pool has V8 reduce Node's heap (lib/vitest/idle-gc.js), the addon's
// trimFreedMemoryEagerly() (which the pool calls) applies on glibc only, and a file's runner is
// started while the file before it runs (lib/vitest/spare.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runVitest, vitestProject } from "./helpers.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));


test("the example project's tests pass inside workerbox isolates: SELF, KV, D1 migrations, R2, Durable Objects, cron, queue, fake timers, snapshots, reset(), vi.mock, MSW, an auxiliary worker, per-file storage", async () => {
  const { code, report, output } = await runVitest(path.join(root, "examples", "vitest"));
  assert.equal(code, 0, output);
  assert.equal(report.numFailedTests, 0, output);
  assert.equal(report.numPassedTests, 24, output);
  const files = report.testResults.map((r) => path.basename(r.name)).sort();
  assert.deepEqual(files, ["durable.test.ts", "fetch.test.ts", "handlers.test.ts", "isolation.test.ts", "mocks.test.ts", "reset.test.ts", "services.test.ts", "snapshot.test.ts"]);
});

test("a Hono API's tests pass: routes, validation, KV per session, import.meta.env, and an upstream answered by outboundService", async () => {
  const { code, report, output } = await runVitest(path.join(root, "examples", "vitest-hono"));
  assert.equal(code, 0, output);
  assert.equal(report.numFailedTests, 0, output);
  assert.equal(report.numPassedTests, 5, output);
});

test("a failing test is reported with its diff and source line; console output reaches Vitest; SELF reaches a WorkerEntrypoint's RPC methods", async (t) => {
  const dir = fs.mkdtempSync(path.join(root, "examples", ".tmp-vitest-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "test"));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "failing", main: "worker.js", compatibility_date: "2026-08-01" }));
  fs.writeFileSync(path.join(dir, "worker.js"), `import { WorkerEntrypoint } from "cloudflare:workers";\nexport default class extends WorkerEntrypoint { fetch() { throw new RangeError("worker broke"); } add(a, b) { return a + b; } };`);
  fs.writeFileSync(path.join(dir, "vitest.config.mjs"), `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({})] };\n`);
  fs.writeFileSync(
    path.join(dir, "test", "fail.test.js"),
    [
      `import { SELF } from "cloudflare:test";`,
      `import { it, expect } from "vitest";`,
      `it("compares", () => {`,
      `  console.log("logged from the isolate");`,
      `  expect({ answer: 41 }).toEqual({ answer: 42 });`,
      `});`,
      `it("sees the worker's error, and calls its RPC methods", async () => {`,
      `  await expect(SELF.fetch("https://x/")).rejects.toThrow("worker broke");`,
      `  expect(await SELF.add(2, 3)).toBe(5);`,
      `});`,
    ].join("\n"),
  );
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 1, output);
  assert.equal(report.numPassedTests, 1, output);
  assert.equal(report.numFailedTests, 1, output);
  const failed = report.testResults[0].assertionResults.find((r) => r.status === "failed");
  assert.equal(failed.title, "compares");
  assert.match(failed.failureMessages.join("\n"), /expected \{ answer: 41 \} to deeply equal \{ answer: 42 \}/);
  assert.match(output, /fail\.test\.js:5:\d+/, "the failure points at the assertion's line");
  assert.match(output, /logged from the isolate/);
});

test("the runner's module loader reads each file once per process, sees changed files, and keeps what files import in cacheDir as hints only", async (t) => {
  const { createRequire } = await import("node:module");
  const { createLoader } = createRequire(import.meta.url)("../lib/vitest/loader.js");
  const { createWorker, dispatch } = await import("../index.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-vitest-loader-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pkg = path.join(dir, "node_modules", "pkg");
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "pkg", type: "module", exports: { ".": "./a.js", "./c": "./c.js" } }));
  fs.writeFileSync(path.join(pkg, "a.js"), `import { b } from "./b.js";\nexport const a = "a" + b;\n`);
  fs.writeFileSync(path.join(pkg, "b.js"), `export const b = "b";\n`);
  const main = path.join(dir, "main.js");
  const cacheDir = path.join(dir, "cache");
  const load = createLoader({ cacheDir });
  const first = await load("pkg", main, { kind: "import" });
  assert.equal(first.name, path.join(pkg, "a.js"));
  assert.deepEqual(first.dependencies.map((d) => [d.specifier, d.name, String(d.content)]), [["./b.js", path.join(pkg, "b.js"), `export const b = "b";\n`]]);
  const saved = JSON.parse(fs.readFileSync(path.join(cacheDir, "vitest-imports.json"), "utf8"));
  assert.deepEqual(saved.files[path.join(pkg, "a.js")][2], ["./b.js"]);
  // A file whose size changed is read again.
  fs.writeFileSync(path.join(pkg, "b.js"), `export const b = "B!";\n`);
  const second = await load("pkg", main, { kind: "import" });
  assert.equal(String(second.dependencies[0].content), `export const b = "B!";\n`);
  // Saved imports that are wrong (c.js imports b.js; they say nothing) only cost a round trip:
  // the isolate asks for what it lacks when it links the module.
  fs.writeFileSync(path.join(pkg, "c.js"), `import { b } from "./b.js";\nexport const c = "c" + b;\n`);
  const stat = fs.statSync(path.join(pkg, "c.js"));
  const lying = path.join(dir, "lying");
  fs.mkdirSync(lying);
  fs.writeFileSync(path.join(lying, "vitest-imports.json"), JSON.stringify({ version: 1, files: { [path.join(pkg, "c.js")]: [stat.mtimeMs, stat.size, []] } }));
  const calls = [];
  const lyingLoad = createLoader({ cacheDir: lying });
  const worker = await createWorker({
    script: `import { c } from "pkg/c";\nexport default { fetch() { return new Response(c); } };`,
    filename: main,
    format: "module",
    loadModule: (specifier, referrer, options) => (calls.push(specifier), lyingLoad(specifier, referrer, options)),
    onLog() {},
  });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://x/")).text(), "cB!");
  assert.deepEqual(calls, ["pkg/c", "./b.js"]);
});

test("rolldown's async parse (Vite's ssrTransform) runs on the calling thread under the pool, with the same results and errors", async () => {
  const { createRequire } = await import("node:module");
  const require = createRequire(import.meta.url);
  const { parseOnCallingThread } = require("../lib/vitest/parse-memory.js");
  // rolldown loads its binding as Vite does, into Node's require cache, where the pool looks.
  const { parseAstAsync } = await import("rolldown/parseAst");
  const file = Object.keys(require.cache).find((f) => /[\\/]rolldown-binding\.[^\\/]+\.node$/.test(f));
  assert.ok(file, "rolldown's binding is in the require cache");
  const binding = require.cache[file].exports;
  const before = await binding.parse("a.js", "export const a = 1 + 2;");
  const original = binding.parse;
  try {
    assert.equal(parseOnCallingThread({ ...require.cache, "/x/other.node": { exports: { parse: () => 0, parseSync: () => 0 } } }), 1);
    assert.notEqual(binding.parse, original);
    assert.equal(parseOnCallingThread(), 0, "a binding is changed once");
    assert.equal((await parseAstAsync("let b = 2;")).body[0].type, "VariableDeclaration", "rolldown's parseAstAsync answers through it");
    const after = binding.parse("a.js", "export const a = 1 + 2;");
    assert.ok(after instanceof Promise);
    assert.deepEqual((await after).program, before.program);
    const broken = await binding.parse("a.js", "export const = ;");
    assert.ok(broken.errors.length > 0, "a syntax error is in the result, as before");
    await assert.rejects(binding.parse(), /./, "bad arguments reject");
  } finally {
    binding.parse = original;
  }
});

test("trimFreedMemoryEagerly() sets glibc's trim threshold where the process runs on glibc, and is a no-op elsewhere", async () => {
  const { createRequire } = await import("node:module");
  const native = createRequire(import.meta.url)("../native.js");
  const glibc = process.platform === "linux" && Boolean(process.report.getReport().header.glibcVersionRuntime);
  assert.equal(native.trimFreedMemoryEagerly(), glibc);
  assert.equal(native.trimFreedMemoryEagerly(), glibc, "calling it again changes nothing");
});

test("with no runner left for 200 ms, the pool runs one memory-reducing collection of Node's heap, and the process stays responsive", { timeout: 30_000 }, async () => {
  const { createRequire } = await import("node:module");
  const v8 = await import("node:v8");
  const { runnerStarted, runnerEnded, IDLE_MS } = createRequire(import.meta.url)("../lib/vitest/idle-gc.js");
  const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size;
  // Grow the young generation as carrying modules does: objects that survive a few scavenges.
  let kept = [];
  for (let i = 0; i < 300; i++) {
    const batch = Array.from({ length: 2000 }, (_, j) => ({ text: `${"x".repeat(20)}${j}`, j }));
    if (i % 5 === 0) kept.push(batch);
  }
  kept = null;
  const grown = newSpace();
  assert.ok(grown >= 4 << 20, `the young generation grew (${grown} bytes)`);
  runnerStarted();
  runnerEnded();
  // A runner starting within the second puts the collection off until it ends too.
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS / 2));
  runnerStarted();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  // (V8 may still resize the young generation a little on its own, as Node 26's does: only the
  // memory-reducing collection halves it.)
  assert.ok(newSpace() > grown / 2, `no collection while a runner lives (${grown} -> ${newSpace()} bytes)`);
  runnerEnded();
  const ticks = [];
  const ticker = setInterval(() => ticks.push(Date.now()), 50);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS + 1000));
  clearInterval(ticker);
  assert.ok(newSpace() < grown / 2, `the young generation shrank (${grown} -> ${newSpace()} bytes)`);
  assert.ok(ticks.length >= 10, `timers kept firing around the collection (${ticks.length})`);
});

test("one file at a time, each file's runner is started while the file before it runs, and each still starts from nothing; none is started during the last file", { timeout: 120_000 }, async (t) => {
  const dir = vitestProject(t, "ahead", {
    "wrangler.jsonc": JSON.stringify({ name: "ahead", main: "worker.js", compatibility_date: "2026-08-01", kv_namespaces: [{ binding: "KV", id: "kv" }] }),
    "worker.js": `export default { fetch() { return new Response("ok"); } };`,
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({})], test: { maxWorkers: 1 } };\n`,
    ...Object.fromEntries(
      ["a", "b", "c", "d"].map((name) => [
        `test/${name}.test.js`,
        [
          `import { env } from "cloudflare:test";`,
          `import { it, expect } from "vitest";`,
          `it("starts from an empty store and a fresh isolate", async () => {`,
          `  expect(await env.KV.list()).toEqual(expect.objectContaining({ keys: [] }));`,
          `  expect(globalThis.touched).toBeUndefined();`,
          `  globalThis.touched = ${JSON.stringify(name)};`,
          `  await env.KV.put("written-by", ${JSON.stringify(name)});`,
          `  expect(await env.KV.get("written-by")).toBe(${JSON.stringify(name)});`,
          `});`,
        ].join("\n"),
      ]),
    ),
  });
  const stats = path.join(dir, "stats.jsonl");
  const { code, report, output } = await runVitest(dir, [], { WORKERBOX_VITEST_STATS: stats });
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 4, output);
  const lines = fs.readFileSync(stats, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  const starts = lines.filter((line) => line.startMs !== undefined);
  assert.deepEqual(starts.map((line) => line.startedAhead), [false, true, true, true], output);
  assert.deepEqual(lines.filter((line) => line.unusedSpare), [], "no runner was started during the last file");
});

test("a runner started ahead is taken by the next file, not made while the last file runs, disposed when no file takes it, and a failed one is started again", async () => {
  const { createRequire } = await import("node:module");
  const { runnerFor, fileEnded, SPARE_IDLE_MS } = createRequire(import.meta.url)("../lib/vitest/spare.js");
  const disposed = [];
  let made = 0;
  const start = async () => {
    const id = made++;
    return { id, worker: { dispose: async () => disposed.push(id) }, auxiliary: { dispose: async () => {} }, stores: [] };
  };
  const closers = [];
  const state = { paths: ["a", "b", "c"], queued: [] };
  const project = { config: {}, vitest: { state: { getPaths: () => state.paths, getFilepaths: () => state.queued }, onClose: (fn) => closers.push(fn) } };
  const options = {};
  const first = await runnerFor(project, options, start);
  assert.equal(first.id, 0);
  assert.equal(made, 2, "a spare is made while the first of three files runs");
  state.queued.push("a");
  const second = await runnerFor(project, options, start);
  fileEnded(project, options);
  assert.equal(second.id, 1);
  assert.equal(second.startedAhead, true);
  assert.equal(made, 3, "and while the second runs (the third is still waiting)");
  state.queued.push("b");
  const third = await runnerFor(project, options, start);
  fileEnded(project, options);
  assert.equal(third.id, 2);
  assert.equal(made, 3, "none while the last file runs");
  fileEnded(project, options);
  await new Promise((resolve) => setTimeout(resolve, SPARE_IDLE_MS * 3));
  assert.deepEqual(disposed, [], "no spare was left to dispose");

  // A rerun (watch mode) whose state says more files come, then none does: the spare goes.
  state.queued = [];
  const again = await runnerFor(project, options, start);
  assert.equal(made, 5);
  fileEnded(project, options);
  await new Promise((resolve) => setTimeout(resolve, SPARE_IDLE_MS * 3));
  assert.deepEqual(disposed, [4], "the unused spare was disposed");
  assert.equal(again.id, 3);

  // A spare that failed to start: the next file starts its own (which reports the failure).
  let failing = true;
  const flaky = async () => {
    if (failing) {
      failing = false;
      made++;
      throw new Error("no runner");
    }
    return start();
  };
  const fresh = { config: {}, vitest: { state: { getPaths: () => ["x", "y", "z"], getFilepaths: () => [] }, onClose: (fn) => closers.push(fn) } };
  await assert.rejects(runnerFor(fresh, options, flaky), /no runner/);
  const before = made;
  const recovered = await runnerFor(fresh, options, start);
  assert.equal(recovered.startedAhead, undefined);
  assert.ok(made > before);
  // Vitest closing disposes what is left.
  await Promise.all(closers.map((close) => close()));
  assert.ok(disposed.length >= 2, `disposed: ${disposed}`);
});

test("the runners' code cache folder is kept under its size budget, least recently used entries first", { timeout: 120_000 }, async (t) => {
  const { createRequire } = await import("node:module");
  const { MAX_BYTES } = createRequire(import.meta.url)("../lib/project/code-cache.js");
  const dir = vitestProject(t, "prune", {
    "wrangler.jsonc": JSON.stringify({ name: "prune", main: "worker.js", compatibility_date: "2026-08-01" }),
    "worker.js": `export default { fetch() { return new Response("ok"); } };`,
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({})] };\n`,
    "test/a.test.js": `import { it, expect } from "vitest";\nit("runs", () => expect(1).toBe(1));\n`,
  });
  const cache = path.join(dir, "node_modules", ".cache", "workerbox");
  fs.mkdirSync(cache, { recursive: true });
  // Old entries over the budget (sparse files: their size without the disk space), used long ago.
  const stale = 5;
  const size = Math.ceil(MAX_BYTES / 4);
  const past = new Date(Date.now() - 86_400_000);
  for (let i = 0; i < stale; i++) {
    const file = path.join(cache, `stale${i}.v8cache`);
    fs.writeFileSync(file, "");
    fs.truncateSync(file, size);
    fs.utimesSync(file, new Date(past.getTime() + i * 1000), new Date(past.getTime() + i * 1000));
  }
  const { code, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  const left = fs.readdirSync(cache).filter((name) => name.endsWith(".v8cache"));
  const bytes = left.reduce((sum, name) => sum + fs.statSync(path.join(cache, name)).size, 0);
  assert.ok(bytes <= MAX_BYTES, `${bytes} bytes left`);
  // The oldest went first; the run's own entries (made just now) stayed.
  assert.ok(!left.includes("stale0.v8cache"));
  assert.ok(left.includes(`stale${stale - 1}.v8cache`), left.join(", "));
  assert.ok(left.some((name) => !name.startsWith("stale")), "the run's own entries are kept");
});
