// bench/dev.mjs: `workerbox dev` beside `wrangler dev` on the same small TypeScript project, in
// the same run: time from the command to the first response, time from saving a change to the
// new code answering, and the RSS of the whole process tree once serving. Prints one JSON object.
//
//   node bench/dev.mjs [--quick] [--node=path/to/node] [--wrangler=path/to/wrangler.js]
//
// wrangler comes from --wrangler, else from bench/.tools/wrangler (installed there from the npm
// registry on first use; git-ignored). If it cannot be had, its entry says why.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { treeRss, WRANGLER_VERSION, wranglerPath, benchNode, devEnv, freePort, until, stop, median } from "./lib.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 5;
const NODE = benchNode();

function project() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-dev-bench-"));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "dev-bench", main: "src/index.ts", compatibility_date: "2025-06-01" }));
  fs.writeFileSync(path.join(dir, "src", "greeting.ts"), `export const greeting = (name: string): string => "v1 " + name;\n`);
  fs.writeFileSync(path.join(dir, "src", "index.ts"), `import { greeting } from "./greeting";\nexport default { fetch(request: Request): Response { return new Response(greeting(new URL(request.url).pathname)); } };\n`);
  return dir;
}

async function once(command, args) {
  const dir = project();
  const port = await freePort();
  const start = performance.now();
  const child = spawn(NODE, [...args(dir, port)], { cwd: dir, stdio: process.env.DEV_BENCH_VERBOSE ? "inherit" : "ignore", env: devEnv() });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  try {
    const url = `http://127.0.0.1:${port}/x`;
    const firstMs = await until(url, (body) => body === "v1 /x", start, child);
    const rssMb = treeRss(child.pid) / 2 ** 20;
    // Save a change, then wait for the new code to answer.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const saved = performance.now();
    fs.writeFileSync(path.join(dir, "src", "greeting.ts"), `export const greeting = (name: string): string => "v2 " + name;\n`);
    const reloadMs = await until(url, (body) => body === "v2 /x", saved, child);
    return { firstMs, reloadMs, rssMb };
  } finally {
    await stop(child, exited);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(name, args) {
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await once(name, args));
  return { rounds: ROUNDS, firstResponseMs: median(runs.map((r) => r.firstMs)), saveToNewCodeMs: median(runs.map((r) => r.reloadMs)), rssMb: median(runs.map((r) => r.rssMb)) };
}

const result = { bench: "dev", node: execFileSync(NODE, ["--version"], { encoding: "utf8" }).trim() };
result.workerbox = await measure("workerbox", (dir, port) => [path.join(root, "bin", "workerbox.js"), "dev", dir, "--port", String(port), "--host", "127.0.0.1", "--no-persist"]);
try {
  const wrangler = wranglerPath();
  result.wrangler = { version: WRANGLER_VERSION, ...(await measure("wrangler", (dir, port) => [wrangler, "dev", "--port", String(port), "--ip", "127.0.0.1", "--inspector-port", String(port + 1)])) };
  result.ratio = {
    firstResponse: +(result.wrangler.firstResponseMs / result.workerbox.firstResponseMs).toFixed(1),
    saveToNewCode: +(result.wrangler.saveToNewCodeMs / result.workerbox.saveToNewCodeMs).toFixed(1),
    rss: +(result.wrangler.rssMb / result.workerbox.rssMb).toFixed(1),
  };
} catch (error) {
  result.wrangler = { error: `wrangler could not run here: ${error.message}` };
}
console.log(JSON.stringify(result));
