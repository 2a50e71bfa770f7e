// bench/vitest.mjs: workerbox/vitest beside Cloudflare's integration (@cloudflare/vitest-pool-
// workers) on the same Vitest projects, in the same run, with the same Vitest version: wall time
// of `vitest run` (median), peak RSS of its process tree, and workerbox's per-file start-up (the
// pool worker's isolate, runner and connection). Vitest's own cost is measured too, on one
// trivial test file in Node (the default pool). Prints one JSON object.
//
//   node bench/vitest.mjs [--quick] [--workerbox-only] [--node=path/to/node] [--mirrors=dir]
//
// Besides this repository's examples, real projects' own suites (scripts/vitest-projects.mjs:
// workers-qb, cloudflare/templates) are measured when their git mirrors are found (--mirrors,
// default /work/.mirror): each is installed twice in a temporary folder, once with workerbox/vitest
// (Vitest 4) and once with Cloudflare's pool as the project uses it — 0.23.0 on Vitest 4 for the
// `cloudflareTest()` form, the project's own version on Vitest 3 for the `defineWorkersConfig`
// form — and the JSON gets `projects.<name>`: each side's wall time, peak RSS and test counts.
//
// --workerbox-only skips Cloudflare's integration (and Vitest alone): for iterating on workerbox.
//
// Cloudflare's integration (and the Vitest it runs with) is installed into bench/.tools/vitest
// from the npm registry on first use (git-ignored); it needs Node 22+. If it cannot be had, its
// entry says why.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { treeRss } from "./lib.mjs";
import { PROJECTS as REAL_PROJECTS, prepareProject, packWorkerbox } from "../scripts/vitest-projects.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const quick = process.argv.includes("--quick");
const workerboxOnly = process.argv.includes("--workerbox-only");
const ROUNDS = quick ? 2 : 5;
const VITEST_VERSION = JSON.parse(fs.readFileSync(path.join(root, "node_modules", "vitest", "package.json"), "utf8")).version;
const CLOUDFLARE_VERSION = "0.23.0";
const NODE = process.argv.find((a) => a.startsWith("--node="))?.slice("--node=".length) ?? process.execPath;
const TOOLS = path.join(root, "bench", ".tools", "vitest");
/** The projects measured: examples of this repository (their configs import workerbox/vitest). */
const PROJECTS = ["vitest", "vitest-hono"];

function cloudflareTools() {
  const pool = path.join(TOOLS, "node_modules", "@cloudflare", "vitest-pool-workers", "package.json");
  if (!fs.existsSync(pool)) {
    fs.mkdirSync(TOOLS, { recursive: true });
    fs.writeFileSync(path.join(TOOLS, "package.json"), JSON.stringify({ private: true }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefix", TOOLS, `vitest@${VITEST_VERSION}`, `@cloudflare/vitest-pool-workers@${CLOUDFLARE_VERSION}`], { stdio: "ignore", timeout: 600_000 });
  }
  return path.join(TOOLS, "node_modules", "vitest", "vitest.mjs");
}

/** A copy of example `name` under bench/.tools/vitest (so it finds Cloudflare's packages) using them. */
function cloudflareCopy(name) {
  const dir = path.join(TOOLS, "projects", name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(root, "examples", name), dir, { recursive: true, filter: (source) => !source.includes(`${path.sep}node_modules`) });
  const config = path.join(dir, "vitest.config.mts");
  fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace('"workerbox/vitest"', '"@cloudflare/vitest-pool-workers"'));
  return dir;
}

/** A project with one trivial test in Node: what Vitest itself costs. */
function baselineProject() {
  const dir = fs.mkdtempSync(path.join(root, "examples", ".tmp-vitest-baseline-"));
  fs.writeFileSync(path.join(dir, "vitest.config.mjs"), "export default {};\n");
  fs.writeFileSync(path.join(dir, "one.test.js"), `import { it, expect } from "vitest";\nit("adds", () => expect(1 + 1).toBe(2));\n`);
  return dir;
}

/** Runs `vitest run` once: { ms, peakRssMb, passed, failed, startMs[] }. */
function runOnce(vitest, cwd, args = []) {
  const stats = path.join(os.tmpdir(), `workerbox-vitest-stats-${process.pid}-${Date.now()}.jsonl`);
  const report = path.join(os.tmpdir(), `workerbox-vitest-report-${process.pid}-${Date.now()}.json`);
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(NODE, [vitest, "run", ...args, "--reporter=json", `--outputFile=${report}`], {
      cwd,
      stdio: ["ignore", "ignore", process.env.VITEST_BENCH_VERBOSE ? "inherit" : "ignore"],
      env: { ...process.env, NO_COLOR: "1", CI: "1", WORKERBOX_VITEST_STATS: stats, VITE_CONFIG_NATIVE_IGNORE_WARNING: "true", WRANGLER_SEND_METRICS: "false" },
    });
    let peak = 0;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, treeRss(child.pid));
      } catch {}
    }, 20);
    const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      const ms = performance.now() - start;
      clearInterval(sampler);
      clearTimeout(timer);
      const result = fs.existsSync(report) ? JSON.parse(fs.readFileSync(report, "utf8")) : null;
      const startMs = fs.existsSync(stats) ? fs.readFileSync(stats, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line).startMs) : [];
      fs.rmSync(report, { force: true });
      fs.rmSync(stats, { force: true });
      if (!result) return reject(new Error(`vitest exited (${code ?? signal}) without a report in ${cwd}`));
      resolve({ ms, peakRssMb: peak / 2 ** 20, passed: result.numPassedTests, failed: result.numFailedTests, startMs });
    });
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.floor((sorted.length - 1) / 2)];
};
const round = (n) => (n === null ? null : Math.round(n * 10) / 10);

async function measure(vitest, cwd, args = []) {
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await runOnce(vitest, cwd, args));
  const starts = runs.flatMap((r) => r.startMs);
  return {
    wallMs: round(median(runs.map((r) => r.ms))),
    peakRssMb: round(Math.max(...runs.map((r) => r.peakRssMb))),
    tests: { passed: runs[0].passed, failed: runs[0].failed },
    ...(starts.length ? { perFileStartMs: { p50: round(median(starts)), max: round(Math.max(...starts)) } } : {}),
  };
}

const localVitest = path.join(root, "node_modules", "vitest", "vitest.mjs");
// Per engine, per project (the shape bench/all.mjs reads: workerbox.<project>, cloudflare.<project>).
const out = { bench: "vitest", node: execFileSync(NODE, ["--version"]).toString().trim(), vitest: VITEST_VERSION, rounds: ROUNDS, workerbox: {}, cloudflare: { version: CLOUDFLARE_VERSION }, ratios: {} };
let cloudflareVitest = null;
if (workerboxOnly) {
  out.cloudflare.error = "skipped (--workerbox-only)";
} else {
  const baseline = baselineProject();
  try {
    out.vitestAlone = await measure(localVitest, baseline);
  } finally {
    fs.rmSync(baseline, { recursive: true, force: true });
  }
  try {
    cloudflareVitest = cloudflareTools();
  } catch (error) {
    out.cloudflare.error = `could not install @cloudflare/vitest-pool-workers@${CLOUDFLARE_VERSION}: ${error.message}`;
  }
}
for (const name of PROJECTS) {
  out.workerbox[name] = await measure(localVitest, path.join(root, "examples", name));
  if (!cloudflareVitest) continue;
  try {
    out.cloudflare[name] = await measure(cloudflareVitest, cloudflareCopy(name));
    out.ratios[name] = { wall: round(out.cloudflare[name].wallMs / out.workerbox[name].wallMs), rss: round(out.cloudflare[name].peakRssMb / out.workerbox[name].peakRssMb) };
  } catch (error) {
    out.cloudflare[name] = { error: error.message };
  }
}
// Real projects' suites, each side installed as its users install it.
const mirrors = process.argv.find((a) => a.startsWith("--mirrors="))?.slice("--mirrors=".length) ?? "/work/.mirror";
if (fs.existsSync(mirrors)) {
  out.projects = {};
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-projects-"));
  try {
    const tarball = await packWorkerbox(work);
    for (const [name, project] of Object.entries(REAL_PROJECTS)) {
      const entry = (out.projects[name] = { repo: project.repo, form: project.form });
      try {
        const mine = await prepareProject(name, { mirrors, work, tarball });
        entry.commit = mine.commit;
        entry.workerbox = { vitest: "4", ...(await measure(mine.vitest, mine.dir, mine.args)) };
      } catch (error) {
        entry.workerbox = { error: error.message.split("\n")[0] };
      }
      if (workerboxOnly) continue;
      try {
        const theirs = await prepareProject(name, { mirrors, work, pool: "cloudflare" });
        const installed = (pkg) => JSON.parse(fs.readFileSync(path.join(theirs.dir, "node_modules", pkg, "package.json"), "utf8")).version;
        entry.cloudflare = { version: installed("@cloudflare/vitest-pool-workers"), vitest: installed("vitest"), ...(await measure(theirs.vitest, theirs.dir, theirs.args)) };
      } catch (error) {
        entry.cloudflare = { error: error.message.split("\n")[0] };
      }
      if (entry.workerbox.wallMs && entry.cloudflare.wallMs) entry.ratios = { wall: round(entry.cloudflare.wallMs / entry.workerbox.wallMs), rss: round(entry.cloudflare.peakRssMb / entry.workerbox.peakRssMb) };
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
} else {
  out.projects = { error: `no git mirrors at ${mirrors} (give --mirrors=dir): real projects not measured` };
}
console.log(JSON.stringify(out, null, 2));
