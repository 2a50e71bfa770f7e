// bench/vitest.mjs: workerbox/vitest beside Cloudflare's integration (@cloudflare/vitest-pool-
// workers) on the same Vitest projects, in the same run, with the same Vitest version: wall time
// of `vitest run` (median), peak RSS of its process tree, and workerbox's per-file start-up (what
// Vitest waits for a pool worker: its isolate, runner and connection, or under 1 ms when the
// runner was started during the file before, lib/vitest/spare.js). Vitest's own cost is measured too, on one
// trivial test file in Node (the default pool). Prints one JSON object.
//
//   node bench/vitest.mjs [--quick] [--rounds=N] [--only=name,…] [--workerbox-only] [--node=path/to/node] [--mirrors=dir]
//
// The sides of each project run in alternating rounds (median of 5, of 2 with --quick, or N), so
// that the load of a shared machine falls on both alike; the JSON gives the load average at the
// start and the end. --only=workers-qb,examples/vitest limits the run to those projects.
//
// Besides this repository's examples, real projects' own suites (scripts/vitest-projects.mjs:
// workers-qb, cloudflare/templates) are measured when their git mirrors are found (--mirrors,
// default /work/.mirror): each is installed twice in a temporary folder, once with workerbox/vitest
// (Vitest 4) and once with Cloudflare's pool as the project uses it — 0.23.0 on Vitest 4 for the
// `cloudflareTest()` form, the project's own version on Vitest 3 for the `defineWorkersConfig`
// form — and the JSON gets `projects.<name>`: each side's wall time, peak RSS and test counts.
// A Vitest 3 form project is also run under Cloudflare's 0.23.0 on Vitest 4 (`cloudflareVitest4`,
// its config moved to the `cloudflareTest()` form by a shim), so that one pair runs the same
// Vitest major on both sides (`ratiosVitest4`).
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
import { treeProcesses, processName } from "./lib.mjs";
import { PROJECTS as REAL_PROJECTS, prepareProject, packWorkerbox, files } from "../scripts/vitest-projects.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const quick = process.argv.includes("--quick");
const workerboxOnly = process.argv.includes("--workerbox-only");
const ROUNDS = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice("--rounds=".length) ?? (quick ? 2 : 5));
/** --only=a,b: only these real projects and examples (examples/vitest, examples/vitest-hono). */
const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");
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

/** Runs `vitest run` once: { ms, peakRssMb, peakBy, passed, failed, startMs[] }. */
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
    // What each process of the tree had at the peak, by name (Vitest's own process, its
    // typecheck's tsc, Miniflare's workerd): MB.
    let peakBy = {};
    const sampler = setInterval(() => {
      try {
        const processes = treeProcesses(child.pid);
        const total = processes.reduce((sum, p) => sum + p.rss, 0);
        if (total <= peak) return;
        peak = total;
        // Named only at a new peak: the sampler reads no command lines otherwise.
        peakBy = {};
        for (const p of processes) {
          const name = processName(p.pid);
          peakBy[name] = round((peakBy[name] ?? 0) + p.rss / 2 ** 20);
        }
      } catch {}
    }, 20);
    const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      const ms = performance.now() - start;
      clearInterval(sampler);
      clearTimeout(timer);
      const result = fs.existsSync(report) ? JSON.parse(fs.readFileSync(report, "utf8")) : null;
      const startMs = fs.existsSync(stats) ? fs.readFileSync(stats, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line).startMs).filter((ms) => ms !== undefined) : [];
      fs.rmSync(report, { force: true });
      fs.rmSync(stats, { force: true });
      if (!result) return reject(new Error(`vitest exited (${code ?? signal}) without a report in ${cwd}`));
      resolve({ ms, peakRssMb: peak / 2 ** 20, peakBy, passed: result.numPassedTests, failed: result.numFailedTests, startMs });
    });
  });
}

/**
 * Cloudflare's pool on Vitest 4 for a project written in the Vitest 3 form (`defineWorkersConfig`
 * from `@cloudflare/vitest-pool-workers/config`, which 0.23.0 no longer has): installed as a
 * Vitest 4 project, with that import pointed at a shim that makes the same change workerbox's
 * config-v3.js makes (and Cloudflare's migration guide asks for): `test.poolOptions.workers`
 * becomes a `cloudflareTest()` plugin. So both pools run the suite on the same Vitest major.
 */
async function prepareCloudflareVitest4(name, { mirrors, work }) {
  const project = REAL_PROJECTS[name];
  const form = project.form;
  project.form = "vitest4";
  const folder = path.join(work, "cloudflare-vitest4");
  fs.mkdirSync(folder, { recursive: true });
  let prepared;
  try {
    prepared = await prepareProject(name, { mirrors, work: folder, pool: "cloudflare" });
  } finally {
    project.form = form;
  }
  const shim = path.join(prepared.dir, "cloudflare-v3-shim.mjs");
  fs.writeFileSync(
    shim,
    // (A dynamic import: Vite bundles a CommonJS project's config as CommonJS, and the pool is ESM only.)
    `const convert = async (config = {}) => {
  const { cloudflareTest } = await import("@cloudflare/vitest-pool-workers");
  const { pool, poolOptions, ...test } = config.test ?? {};
  return { ...config, test, plugins: [...(config.plugins ?? []), cloudflareTest(poolOptions?.workers ?? {})] };
};
const define = (config) => (typeof config === "function" ? async (env) => convert(await config(env)) : Promise.resolve(config).then(convert));
export const defineWorkersConfig = define;
export const defineWorkersProject = define;
`,
  );
  for (const file of files(prepared.dir)) {
    const source = fs.readFileSync(file, "utf8");
    // Its `cloudflare:test` types moved to /types in the Vitest 4 versions (typechecked suites need them).
    if (/(?:^|[\\/])tsconfig[^\\/]*\.json$/.test(file)) {
      fs.writeFileSync(file, source.replace(/(["'])@cloudflare\/vitest-pool-workers\1/g, "$1@cloudflare/vitest-pool-workers/types$1"));
      continue;
    }
    if (!/\.(?:[cm]?[jt]s)$/.test(file) || file.endsWith(".d.ts") || file === shim) continue;
    let relative = path.relative(path.dirname(file), shim).split(path.sep).join("/");
    if (!relative.startsWith(".")) relative = `./${relative}`;
    const next = source.replace(/(["'])@cloudflare\/vitest-pool-workers\/config\1/g, `$1${relative}$1`);
    if (next !== source) fs.writeFileSync(file, next);
  }
  return prepared;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.floor((sorted.length - 1) / 2)];
};
const round = (n) => (n === null ? null : Math.round(n * 10) / 10);

/** The median of `runs` of one side: { wallMs, peakRssMb, peakRssBy, tests, perFileStartMs }. */
function summary(runs) {
  const starts = runs.flatMap((r) => r.startMs);
  return {
    wallMs: round(median(runs.map((r) => r.ms))),
    peakRssMb: round(Math.max(...runs.map((r) => r.peakRssMb))),
    // The processes at that highest peak.
    peakRssBy: runs.reduce((a, b) => (b.peakRssMb > a.peakRssMb ? b : a)).peakBy,
    tests: { passed: runs[0].passed, failed: runs[0].failed },
    ...(starts.length ? { perFileStartMs: { p50: round(median(starts)), max: round(Math.max(...starts)) } } : {}),
  };
}

async function measure(vitest, cwd, args = []) {
  return (await measureAlternating({ only: { vitest, cwd, args } })).only;
}

/**
 * Each side of `sides` ({ name: { vitest, cwd, args } }) run ROUNDS times, alternating (the
 * first side of a round rotates), so that the load of the machine falls on every side alike:
 * { name: summary or { error } }.
 */
async function measureAlternating(sides) {
  const names = Object.keys(sides);
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  const errors = {};
  for (let i = 0; i < ROUNDS; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length];
      if (errors[name]) continue;
      const { vitest, cwd, args } = sides[name];
      try {
        runs[name].push(await runOnce(vitest, cwd, args));
      } catch (error) {
        errors[name] = error.message.split("\n")[0];
      }
    }
  }
  return Object.fromEntries(names.map((name) => [name, errors[name] ? { error: errors[name] } : summary(runs[name])]));
}

const ratio = (theirs, mine) => (mine?.wallMs && theirs?.wallMs ? { wall: round(theirs.wallMs / mine.wallMs), rss: round(theirs.peakRssMb / mine.peakRssMb) } : undefined);
const localVitest = path.join(root, "node_modules", "vitest", "vitest.mjs");
// Per engine, per project (the shape bench/all.mjs reads: workerbox.<project>, cloudflare.<project>).
const out = { bench: "vitest", node: execFileSync(NODE, ["--version"]).toString().trim(), vitest: VITEST_VERSION, rounds: ROUNDS, loadAverage: { start: os.loadavg().map((n) => round(n)) }, workerbox: {}, cloudflare: { version: CLOUDFLARE_VERSION }, ratios: {} };
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
for (const name of only ? PROJECTS.filter((p) => only.includes(`examples/${p}`)) : PROJECTS) {
  const sides = { workerbox: { vitest: localVitest, cwd: path.join(root, "examples", name) } };
  if (cloudflareVitest) sides.cloudflare = { vitest: cloudflareVitest, cwd: cloudflareCopy(name) };
  const measured = await measureAlternating(sides);
  out.workerbox[name] = measured.workerbox;
  if (!cloudflareVitest) continue;
  out.cloudflare[name] = measured.cloudflare;
  out.ratios[name] = ratio(measured.cloudflare, measured.workerbox);
}
// Real projects' suites, each side installed as its users install it.
const mirrors = process.argv.find((a) => a.startsWith("--mirrors="))?.slice("--mirrors=".length) ?? "/work/.mirror";
if (fs.existsSync(mirrors)) {
  out.projects = {};
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-projects-"));
  try {
    const tarball = await packWorkerbox(work);
    for (const [name, project] of Object.entries(REAL_PROJECTS)) {
      if (only && !only.includes(name)) continue;
      const entry = (out.projects[name] = { repo: project.repo, form: project.form });
      const sides = {};
      const installed = (dir, pkg) => JSON.parse(fs.readFileSync(path.join(dir, "node_modules", pkg, "package.json"), "utf8")).version;
      try {
        const mine = await prepareProject(name, { mirrors, work, tarball });
        entry.commit = mine.commit;
        sides.workerbox = { vitest: mine.vitest, cwd: mine.dir, args: mine.args, about: { vitest: installed(mine.dir, "vitest") } };
      } catch (error) {
        entry.workerbox = { error: error.message.split("\n")[0] };
      }
      if (!workerboxOnly) {
        try {
          const theirs = await prepareProject(name, { mirrors, work, pool: "cloudflare" });
          sides.cloudflare = { vitest: theirs.vitest, cwd: theirs.dir, args: theirs.args, about: { version: installed(theirs.dir, "@cloudflare/vitest-pool-workers"), vitest: installed(theirs.dir, "vitest") } };
        } catch (error) {
          entry.cloudflare = { error: error.message.split("\n")[0] };
        }
        // A Vitest 3 form project: Cloudflare's pool on Vitest 4 too (the same major as workerbox's).
        if (project.form === "vitest3") {
          try {
            const theirs = await prepareCloudflareVitest4(name, { mirrors, work });
            sides.cloudflareVitest4 = { vitest: theirs.vitest, cwd: theirs.dir, args: theirs.args, about: { version: installed(theirs.dir, "@cloudflare/vitest-pool-workers"), vitest: installed(theirs.dir, "vitest") } };
          } catch (error) {
            entry.cloudflareVitest4 = { error: error.message.split("\n")[0] };
          }
        }
      }
      const measured = await measureAlternating(sides);
      for (const [side, result] of Object.entries(measured)) entry[side] = { ...sides[side].about, ...result };
      entry.ratios = ratio(entry.cloudflare, entry.workerbox);
      if (entry.cloudflareVitest4) entry.ratiosVitest4 = ratio(entry.cloudflareVitest4, entry.workerbox);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
} else {
  out.projects = { error: `no git mirrors at ${mirrors} (give --mirrors=dir): real projects not measured` };
}
out.loadAverage.end = os.loadavg().map((n) => round(n));
console.log(JSON.stringify(out, null, 2));
