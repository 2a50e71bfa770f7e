// workerbox/vitest with `--coverage`: the coverage a project's tests measure inside workerbox
// isolates — Istanbul's counters in the instrumented code (@vitest/coverage-istanbul) and V8's
// precise coverage taken through the worker inspector (@vitest/coverage-v8,
// lib/vitest/coverage.js) — sums up, per file, to what the same tests give under plain Vitest in
// Node, for code both can run; files' coverage is merged across isolates.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runVitest } from "./helpers.mjs";
import { emulated, scaled } from "./child-node.mjs";
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const MATH = `export function sign(n) {
  if (n > 0) return 1;
  if (n < 0) return -1;
  return 0;
}

export function clamp(n, low, high) {
  return n < low ? low : n > high ? high : n;
}

export function never(a, b) {
  const sum = a + b;
  return sum * 2;
}

export const label = (n) => (n % 2 === 0 ? "even" : "odd");
`;

const WORKER = `import { sign } from "./math.js";
export default { fetch(request) { return new Response(String(sign(Number(new URL(request.url).searchParams.get("n"))))); } };
`;

/** A project whose two test files cover parts of src/math.js (one through the worker). */
function project(t) {
  const dir = fs.mkdtempSync(path.join(root, "examples", ".tmp-vitest-coverage-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "test"));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "math.js"), MATH);
  fs.writeFileSync(path.join(dir, "src", "worker.js"), WORKER);
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "coverage", main: "src/worker.js", compatibility_date: "2026-08-01" }));
  fs.writeFileSync(path.join(dir, "test", "sign.test.js"), `import { it, expect } from "vitest";\nimport { sign } from "../src/math.js";\nit("signs", () => { expect(sign(3)).toBe(1); expect(sign(0)).toBe(0); });\n`);
  fs.writeFileSync(path.join(dir, "test", "clamp.test.js"), `import { it, expect } from "vitest";\nimport { clamp, label } from "../src/math.js";\nit("clamps", () => { expect(clamp(5, 0, 3)).toBe(3); expect(label(2)).toBe("even"); });\n`);
  const coverage = (provider) => `{ enabled: true, provider: ${JSON.stringify(provider)}, include: ["src/math.js"], reporter: ["json-summary", "json"], reportsDirectory: "coverage-" + ${JSON.stringify(provider)} }`;
  const counts = (summary) => Object.fromEntries(Object.entries(summary).map(([metric, value]) => [metric, `${value.covered}/${value.total}`]));

for (const provider of ["istanbul", "v8"]) {
    fs.writeFileSync(path.join(dir, `workers-${provider}.config.mjs`), `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({})], test: { coverage: ${coverage(provider)} } };\n`);
    // Plain Vitest's default pool forks Node processes; under qemu-user (scripts/arm64.mjs) the
    // arm64 Node cannot exec another, so there it runs the files on worker threads instead.
    const pool = emulated() ? `pool: "threads", ` : "";
    fs.writeFileSync(path.join(dir, `node-${provider}.config.mjs`), `export default { test: { ${pool}coverage: ${coverage(provider)} } };\n`);
  }
  return dir;
}

/** The coverage summary (lines, statements, functions, branches) of src/math.js after a run. */
async function summary(dir, config, provider) {
  const reports = path.join(dir, `coverage-${provider}`);
  fs.rmSync(reports, { recursive: true, force: true });
  const { code, report, output } = await runVitest(dir, ["--config", config]);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
  const file = path.join(reports, "coverage-summary.json");
  assert.ok(fs.existsSync(file), `no coverage summary was written:\n${output}`);
  const all = JSON.parse(fs.readFileSync(file, "utf8"));
  const entry = Object.entries(all).find(([name]) => name.endsWith(`${path.sep}math.js`));
  assert.ok(entry, `src/math.js is not in the summary: ${Object.keys(all).join(", ")}`);
  return entry[1];
}

const counts = (summary) => Object.fromEntries(Object.entries(summary).map(([metric, value]) => [metric, `${value.covered}/${value.total}`]));

for (const provider of ["istanbul", "v8"]) {
  test(`--coverage with @vitest/coverage-${provider}: src/math.js's summary equals plain Vitest's in Node`, { timeout: scaled(240_000) }, async (t) => {
    const dir = project(t);
    const inWorkers = await summary(dir, `workers-${provider}.config.mjs`, provider);
    const inNode = await summary(dir, `node-${provider}.config.mjs`, provider);
    t.diagnostic(`src/math.js in workerbox: ${JSON.stringify(counts(inWorkers))}; in Node: ${JSON.stringify(counts(inNode))}`);
    assert.deepEqual(inWorkers, inNode);
    // Both test files count: sign's two branches and clamp/label ran, never() did not.
    assert.ok(inWorkers.functions.covered >= 3 && inWorkers.functions.covered < inWorkers.functions.total, JSON.stringify(inWorkers));
  });
}

test("--coverage counts the worker's code a test reaches through SELF (its main module, run in the isolate), with either provider", { timeout: scaled(240_000) }, async (t) => {
  const dir = project(t);
  fs.rmSync(path.join(dir, "test", "sign.test.js"));
  fs.rmSync(path.join(dir, "test", "clamp.test.js"));
  fs.writeFileSync(path.join(dir, "test", "self.test.js"), `import { it, expect } from "vitest";\nimport { SELF } from "cloudflare:test";\nit("signs through the worker", async () => { expect(await (await SELF.fetch("http://x/?n=-4")).text()).toBe("-1"); });\nit("twice", async () => { expect(await (await SELF.fetch("http://x/?n=5")).text()).toBe("1"); });\n`);
  const found = {};
  for (const provider of ["istanbul", "v8"]) {
    fs.writeFileSync(path.join(dir, `workers-${provider}.config.mjs`), `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({})], test: { coverage: { enabled: true, provider: ${JSON.stringify(provider)}, include: ["src/**"], reporter: ["json-summary"], reportsDirectory: "coverage-${provider}" } } };\n`);
    const { code, report, output } = await runVitest(dir, ["--config", `workers-${provider}.config.mjs`]);
    assert.equal(code, 0, output);
    assert.equal(report.numPassedTests, 2, output);
    const all = JSON.parse(fs.readFileSync(path.join(dir, `coverage-${provider}`, "coverage-summary.json"), "utf8"));
    const of = (name) => counts(Object.entries(all).find(([file]) => file.endsWith(`${path.sep}${name}`))?.[1] ?? {});
    found[provider] = { worker: of("worker.js"), math: of("math.js") };
    t.diagnostic(`${provider}: ${JSON.stringify(found[provider])}`);
    // The worker's fetch() ran: all of it; of src/math.js, sign()'s two signs and nothing else.
    assert.deepEqual(found[provider].worker, { lines: "1/1", functions: "1/1", statements: "1/1", branches: "0/0" });
    assert.deepEqual(found[provider].math, { lines: "3/7", functions: "1/4", statements: "5/10", branches: "3/10" });
  }
  assert.deepEqual(found.istanbul, found.v8);
});
