// bench/dev.mjs: `workerbox dev` beside `wrangler dev` on the same small TypeScript project, in
// the same run, the two tools alternating round by round: time from the command to the first
// response, time from saving a change to the new code answering, and the RSS of the whole
// process tree once serving. Each round starts twice on one fresh copy of the project: "cold"
// is its first start ever (no bundle or code cache of it), "warm" the usual restart after an
// edit (stop, start again: the caches of the first start are there); workerbox's compiled code
// of a round stays in that round (bench/lib.mjs, workerboxCaches). Prints one JSON object;
// --phases adds the median time since the process started at each of workerbox dev's start-up
// marks (lib/project/timing.js).
//
//   node bench/dev.mjs [--quick] [--phases] [--node=path/to/node] [--wrangler=path/to/wrangler.js]
//
// wrangler comes from --wrangler, else from bench/.tools/wrangler (installed there from the npm
// registry on first use; git-ignored). If it cannot be had, its entry says why.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { treeRss, WRANGLER_VERSION, wranglerPath, benchNode, devEnv, freePort, until, stop, median, workerboxCaches, COLD_MEANS, phaseMarks, medianPhases } from "./lib.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 5;
const NODE = benchNode();
const caches = await workerboxCaches();
const marks = phaseMarks();

function project() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-dev-bench-"));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "dev-bench", main: "src/index.ts", compatibility_date: "2025-06-01" }));
  fs.writeFileSync(path.join(dir, "src", "greeting.ts"), `export const greeting = (name: string): string => "v1 " + name;\n`);
  fs.writeFileSync(path.join(dir, "src", "index.ts"), `import { greeting } from "./greeting";\nexport default { fetch(request: Request): Response { return new Response(greeting(new URL(request.url).pathname)); } };\n`);
  return dir;
}

/** One start of `args` in `dir`: first answer `v<from> /x`, then a save to `v<to>` and its answer. */
async function start(dir, args, from, to, env) {
  const port = await freePort();
  const began = performance.now();
  const phases = args === TOOLS.workerbox && marks.on;
  const child = spawn(NODE, [...args(dir, port)], { cwd: dir, stdio: process.env.DEV_BENCH_VERBOSE ? "inherit" : ["ignore", "pipe", "pipe"], env: { ...devEnv(), ...env, ...(phases ? marks.env : {}) } });
  let output = "";
  for (const stream of [child.stdout, child.stderr]) stream?.on("data", (chunk) => (output = (output + chunk).slice(-1500)));
  if (phases) marks.collect(child);
  let result;
  const exited = new Promise((resolve) => child.on("exit", resolve));
  try {
    const url = `http://127.0.0.1:${port}/x`;
    const firstMs = await until(url, (body) => body === `${from} /x`, began, child);
    const rssMb = treeRss(child.pid) / 2 ** 20;
    // Save a change, then wait for the new code to answer.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const saved = performance.now();
    fs.writeFileSync(path.join(dir, "src", "greeting.ts"), `export const greeting = (name: string): string => "${to} " + name;\n`);
    const reloadMs = await until(url, (body) => body === `${to} /x`, saved, child);
    result = { firstMs, reloadMs, rssMb };
  } catch (error) {
    error.message += `\n${output.trim()}`;
    throw error;
  } finally {
    await stop(child, exited);
  }
  // Read once the process has ended: its stderr is then all in.
  if (phases) result.phases = marks.phases();
  return result;
}

/** A fresh project started twice: cold (its first start) and warm (a restart after an edit). */
async function once(args) {
  const dir = project();
  const cache = args === TOOLS.workerbox ? caches.fresh() : null;
  try {
    const cold = await start(dir, args, "v1", "v2", cache?.env);
    const warm = await start(dir, args, "v2", "v3", cache?.env);
    return { cold, warm };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    cache?.remove();
  }
}

const summary = (runs) => ({
  rounds: runs.length,
  firstResponseMs: median(runs.map((r) => r.firstMs)),
  saveToNewCodeMs: median(runs.map((r) => r.reloadMs)),
  rssMb: median(runs.map((r) => r.rssMb)),
  ...(runs[0]?.phases ? { phases: medianPhases(runs.map((r) => r.phases)) } : {}),
});

const TOOLS = {
  workerbox: (dir, port) => [path.join(root, "bin", "workerbox.js"), "dev", dir, "--port", String(port), "--host", "127.0.0.1", "--no-persist"],
};
const result = { bench: "dev", node: execFileSync(NODE, ["--version"], { encoding: "utf8" }).trim(), load: os.loadavg().map((l) => +l.toFixed(2)), cold: COLD_MEANS };
try {
  const wrangler = wranglerPath();
  TOOLS.wrangler = (dir, port) => [wrangler, "dev", "--port", String(port), "--ip", "127.0.0.1", "--inspector-port", String(port + 1)];
} catch (error) {
  result.wrangler = { error: `wrangler could not run here: ${error.message}` };
}
const runs = Object.fromEntries(Object.keys(TOOLS).map((tool) => [tool, []]));
const failures = [];
for (let i = 0; i < ROUNDS; i++) {
  for (const [tool, args] of Object.entries(TOOLS)) {
    // A round that fails (a port taken meanwhile, a crash) is reported and tried once more.
    for (let attempt = 0; ; attempt++) {
      try {
        runs[tool].push(await once(args));
        break;
      } catch (error) {
        failures.push({ tool, round: i + 1, error: error.message.slice(0, 800) });
        if (attempt === 1) break;
      }
    }
  }
}
if (failures.length) result.failures = failures;
for (const [tool, list] of Object.entries(runs)) {
  result[tool] = { ...(tool === "wrangler" ? { version: WRANGLER_VERSION } : {}), cold: summary(list.map((r) => r.cold)), warm: summary(list.map((r) => r.warm)) };
}
if (TOOLS.wrangler) {
  result.ratio = {};
  for (const kind of ["cold", "warm"]) {
    const wb = result.workerbox[kind];
    const wr = result.wrangler[kind];
    result.ratio[kind] = {
      firstResponse: +(wr.firstResponseMs / wb.firstResponseMs).toFixed(1),
      saveToNewCode: +(wr.saveToNewCodeMs / wb.saveToNewCodeMs).toFixed(1),
      rss: +(wr.rssMb / wb.rssMb).toFixed(1),
    };
  }
}
result.loadAfter = os.loadavg().map((l) => +l.toFixed(2));
caches.remove();
console.log(JSON.stringify(result));
