// bench/starters.mjs: `workerbox dev` beside `wrangler dev` on three starters, in the same run:
// the React Router 7 starter built by Cloudflare's Vite plugin (scripts/starters.mjs builds it;
// both tools serve the configuration the build wrote), the Remix starter built by
// `remix vite:build` (both tools bundle its server.ts with the server build) and the D1 starter
// (a TypeScript worker over D1 with migrations/). For each: time from the command to the first good answer (the
// server-rendered page; the seeded rows) and the RSS of the whole process tree then. Each round
// starts from a fresh copy, so no state or cache of a previous round helps. Prints one JSON object.
//
//   node bench/starters.mjs [--quick] [--node=path/to/node] [--wrangler=path/to/wrangler.js]
//
// wrangler dev does not apply D1 migrations; `wrangler d1 migrations apply DB --local` runs
// first, timed on its own (migrateMs) and in the sum (firstResponseWithMigrationsMs). workerbox
// dev applies them on start, inside its firstResponseMs.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { treeRss, WRANGLER_VERSION, wranglerPath, benchNode, devEnv, freePort, until, stop, median } from "./lib.mjs";
import { copyStarter } from "../scripts/starters.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 5;
const NODE = benchNode();
const log = (line) => console.error(`[starters] ${line}`);

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

async function once(starter, tool, wrangler) {
  const { dir, remove } = await starter.copy();
  try {
    const migrateMs = tool === "wrangler" && starter.migrate ? await runToEnd([wrangler, ...starter.migrate], dir) : undefined;
    const port = await freePort();
    const args = tool === "workerbox"
      ? [path.join(root, "bin", "workerbox.js"), "dev", dir, "--port", String(port), "--host", "127.0.0.1"]
      : [wrangler, "dev", "--port", String(port), "--ip", "127.0.0.1", "--inspector-port", String(await freePort())];
    const start = performance.now();
    const child = spawn(NODE, args, { cwd: dir, stdio: process.env.DEV_BENCH_VERBOSE ? "inherit" : "ignore", env: devEnv() });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    try {
      const firstMs = await until(`http://127.0.0.1:${port}${starter.path}`, starter.ready, start, child);
      return { firstMs, rssMb: treeRss(child.pid) / 2 ** 20, migrateMs };
    } finally {
      await stop(child, exited);
    }
  } finally {
    remove();
  }
}

async function measure(starter, tool, wrangler) {
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await once(starter, tool, wrangler));
  const out = { rounds: ROUNDS, firstResponseMs: median(runs.map((r) => r.firstMs)), rssMb: median(runs.map((r) => r.rssMb)) };
  if (runs[0].migrateMs !== undefined) {
    out.migrateMs = median(runs.map((r) => r.migrateMs));
    out.firstResponseWithMigrationsMs = median(runs.map((r) => r.migrateMs + r.firstMs));
  }
  return out;
}

const result = { bench: "starters", node: execFileSync(NODE, ["--version"], { encoding: "utf8" }).trim(), workerbox: {}, wrangler: {} };
let wrangler = null;
try {
  wrangler = wranglerPath();
  result.wrangler.version = WRANGLER_VERSION;
} catch (error) {
  result.wrangler = { error: `wrangler could not run here: ${error.message}` };
}
for (const [name, starter] of Object.entries(STARTERS)) {
  log(`${name}: workerbox dev`);
  result.workerbox[name] = await measure(starter, "workerbox");
  if (!wrangler) continue;
  log(`${name}: wrangler dev`);
  try {
    result.wrangler[name] = await measure(starter, "wrangler", wrangler);
  } catch (error) {
    result.wrangler[name] = { error: error.message };
  }
}
result.ratio = {};
for (const name of Object.keys(STARTERS)) {
  const wb = result.workerbox[name];
  const wr = result.wrangler[name];
  if (!wr || wr.error) continue;
  result.ratio[name] = {
    firstResponse: +((wr.firstResponseWithMigrationsMs ?? wr.firstResponseMs) / wb.firstResponseMs).toFixed(1),
    rss: +(wr.rssMb / wb.rssMb).toFixed(1),
  };
}
console.log(JSON.stringify(result));
