// bench/starters.mjs: `workerbox dev` beside `wrangler dev` on three starters, in the same run,
// the two tools alternating round by round: the React Router 7 starter built by Cloudflare's
// Vite plugin (scripts/starters.mjs builds it; both tools serve the configuration the build
// wrote), the Remix starter built by `remix vite:build` (both tools bundle its server.ts with the
// server build) and the D1 starter (a TypeScript worker over D1 with migrations/). For each: time
// from the command to the first good answer (the server-rendered page; the seeded rows) and the
// RSS of the whole process tree then. Each round starts a fresh copy twice: the first start
// ("cold": the top-level numbers, no cache of that copy exists) and a restart of the same copy
// ("warm": the usual restart, under `warm`, with whatever caches the first start left, for both
// tools). workerbox's compiled code of a round stays in that round (bench/lib.mjs,
// workerboxCaches): a cold start finds none from earlier rounds. Prints one JSON object;
// --phases adds the median time since the process started at each of workerbox dev's start-up
// marks (lib/project/timing.js).
//
//   node bench/starters.mjs [--quick] [--phases] [--only=react-router,remix,d1] [--workerbox-only] [--node=path/to/node] [--wrangler=path/to/wrangler.js]
//
// --workerbox-only skips wrangler: for iterating on workerbox (no ratios then).
//
// wrangler dev does not apply D1 migrations; `wrangler d1 migrations apply DB --local` runs
// before the cold start, timed on its own (migrateMs) and in the sum
// (firstResponseWithMigrationsMs). workerbox dev applies them on start, inside its
// firstResponseMs. On the warm start both find them applied.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { treeRss, WRANGLER_VERSION, wranglerPath, benchNode, devEnv, freePort, until, stop, median, workerboxCaches, COLD_MEANS, phaseMarks, medianPhases } from "./lib.mjs";
import { copyStarter } from "../scripts/starters.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 5;
const NODE = benchNode();
const log = (line) => console.error(`[starters] ${line}`);
const caches = await workerboxCaches();
const marks = phaseMarks();

const STARTERS = {
  "react-router": {
    copy: async () => copyStarter("react-router", { log }),
    path: "/",
    ready: (body) => body.includes("<h1>Hello from the Worker</h1>"),
  },
  remix: {
    copy: async () => copyStarter("remix", { log }),
    path: "/",
    ready: (body) => body.includes("<h1>Hello from Remix on Workers</h1>"),
  },
  d1: {
    copy: async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-d1-"));
      fs.cpSync(path.join(root, "__test__", "fixtures", "starters", "d1"), dir, { recursive: true });
      return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
    },
    path: "/api/comments",
    ready: (body) => body.startsWith("[") && JSON.parse(body).length === 3,
    migrate: ["d1", "migrations", "apply", "DB", "--local"],
  },
};

/** Runs `node args` in `cwd` to the end; resolves to the ms it took. */
function runToEnd(args, cwd) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { cwd, stdio: ["ignore", "ignore", "pipe"], env: devEnv() });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-2000)));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`${args.slice(1).join(" ")} failed (${code}): ${stderr.trim().split("\n").at(-1)}`));
    });
  });
}

/** One start of `tool` in `dir`, to the first good answer. */
async function serve(starter, tool, wrangler, dir, env) {
  const port = await freePort();
  const args = tool === "workerbox"
    ? [path.join(root, "bin", "workerbox.js"), "dev", dir, "--port", String(port), "--host", "127.0.0.1"]
    : [wrangler, "dev", "--port", String(port), "--ip", "127.0.0.1", "--inspector-port", String(await freePort())];
  const start = performance.now();
  const phases = tool === "workerbox" && marks.on;
  const stdio = process.env.DEV_BENCH_VERBOSE ? "inherit" : ["ignore", "ignore", phases ? "pipe" : "ignore"];
  const child = spawn(NODE, args, { cwd: dir, stdio, env: { ...devEnv(), ...env, ...(phases ? marks.env : {}) } });
  if (phases) marks.collect(child);
  const exited = new Promise((resolve) => child.on("exit", resolve));
  let result;
  try {
    const firstMs = await until(`http://127.0.0.1:${port}${starter.path}`, starter.ready, start, child);
    result = { firstMs, rssMb: treeRss(child.pid) / 2 ** 20 };
  } finally {
    await stop(child, exited);
  }
  // Read once the process has ended: its stderr is then all in.
  if (phases) result.phases = marks.phases();
  return result;
}

/** A fresh copy started twice: cold, then warm. */
async function once(starter, tool, wrangler) {
  const { dir, remove } = await starter.copy();
  const cache = tool === "workerbox" ? caches.fresh() : null;
  try {
    const migrateMs = tool === "wrangler" && starter.migrate ? await runToEnd([wrangler, ...starter.migrate], dir) : undefined;
    const cold = await serve(starter, tool, wrangler, dir, cache?.env);
    const warm = await serve(starter, tool, wrangler, dir, cache?.env);
    return { ...cold, migrateMs, warm };
  } finally {
    remove();
    cache?.remove();
  }
}

function summary(runs) {
  const out = {
    rounds: runs.length,
    firstResponseMs: median(runs.map((r) => r.firstMs)),
    rssMb: median(runs.map((r) => r.rssMb)),
    warm: { firstResponseMs: median(runs.map((r) => r.warm.firstMs)), rssMb: median(runs.map((r) => r.warm.rssMb)) },
  };
  if (runs[0].phases) {
    out.phases = medianPhases(runs.map((r) => r.phases));
    out.warm.phases = medianPhases(runs.map((r) => r.warm.phases));
  }
  if (runs[0].migrateMs !== undefined) {
    out.migrateMs = median(runs.map((r) => r.migrateMs));
    out.firstResponseWithMigrationsMs = median(runs.map((r) => r.migrateMs + r.firstMs));
  }
  return out;
}

const result = { bench: "starters", node: execFileSync(NODE, ["--version"], { encoding: "utf8" }).trim(), load: os.loadavg().map((l) => +l.toFixed(2)), cold: COLD_MEANS, workerbox: {}, wrangler: {} };
let wrangler = null;
if (process.argv.includes("--workerbox-only")) result.wrangler = { skipped: "--workerbox-only" };
else {
  try {
    wrangler = wranglerPath();
    result.wrangler.version = WRANGLER_VERSION;
  } catch (error) {
    result.wrangler = { error: `wrangler could not run here: ${error.message}` };
  }
}
const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");
for (const [name, starter] of Object.entries(STARTERS)) {
  if (only && !only.includes(name)) continue;
  const runs = { workerbox: [], wrangler: [] };
  let wranglerError = null;
  for (let i = 0; i < ROUNDS; i++) {
    log(`${name}: round ${i + 1}: workerbox dev`);
    runs.workerbox.push(await once(starter, "workerbox"));
    if (!wrangler || wranglerError) continue;
    log(`${name}: round ${i + 1}: wrangler dev`);
    try {
      runs.wrangler.push(await once(starter, "wrangler", wrangler));
    } catch (error) {
      wranglerError = error.message;
    }
  }
  result.workerbox[name] = summary(runs.workerbox);
  if (wranglerError) result.wrangler[name] = { error: wranglerError };
  else if (runs.wrangler.length) result.wrangler[name] = summary(runs.wrangler);
}
result.ratio = {};
for (const name of Object.keys(result.workerbox)) {
  const wb = result.workerbox[name];
  const wr = result.wrangler[name];
  if (!wr || wr.error) continue;
  result.ratio[name] = {
    firstResponse: +((wr.firstResponseWithMigrationsMs ?? wr.firstResponseMs) / wb.firstResponseMs).toFixed(1),
    warmFirstResponse: +(wr.warm.firstResponseMs / wb.warm.firstResponseMs).toFixed(1),
    rss: +(wr.rssMb / wb.rssMb).toFixed(1),
  };
}
result.loadAfter = os.loadavg().map((l) => +l.toFixed(2));
caches.remove();
console.log(JSON.stringify(result));
