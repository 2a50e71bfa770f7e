// Helpers the benchmarks share: process-tree RSS, and running `workerbox dev` beside
// `wrangler dev` (where wrangler comes from, ports, polling for the first answer, stopping).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** RSS in bytes of process `root` (default: this one) and every descendant process (workerd, for Miniflare). */
export function treeRss(root = process.pid) {
  return treeProcesses(root).reduce((sum, p) => sum + p.rss, 0);
}

/** The processes of `root`'s tree with their RSS in bytes, from /proc. Elsewhere only this process. */
export function treeProcesses(root = process.pid) {
  // /proc is Linux's: elsewhere only this process's own RSS is known (child processes, such as
  // Miniflare's workerd, are then not counted; said once).
  if (!fs.existsSync("/proc/self/status")) {
    if (!treeRss.warned) console.error(`treeRss: ${process.platform} has no /proc; child processes' RSS is not counted`);
    treeRss.warned = true;
    return root === process.pid ? [{ pid: root, rss: process.memoryUsage.rss() }] : [];
  }
  const children = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {}
  }
  const found = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    try {
      found.push({ pid, rss: Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024 });
    } catch {}
    stack.push(...(children.get(pid) ?? []));
  }
  return found;
}

/**
 * A short name for a process: its program, or for node the script it runs (`vitest.mjs`, `tsc`,
 * `workerd`); "node" where /proc is missing or the process has gone.
 */
export function processName(pid) {
  let argv;
  try {
    argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return "node";
  }
  const program = path.basename(argv[0] ?? "?");
  const node = /^node(\.exe)?$/.test(program) && !argv.includes("-e") && !argv.includes("--eval");
  const script = node ? argv.slice(1).find((a) => !a.startsWith("-")) : undefined;
  return script ? path.basename(script) : program;
}

// ---- `workerbox dev` beside `wrangler dev` (bench/dev.mjs, bench/starters.mjs) ----

/** The wrangler these benches run beside workerbox dev. */
export const WRANGLER_VERSION = "4.164.0";

/**
 * wrangler.js: --wrangler=path from the command line, else bench/.tools/wrangler (installed
 * there from the npm registry on first use; git-ignored). Throws if it cannot be had.
 */
export function wranglerPath() {
  const given = process.argv.find((a) => a.startsWith("--wrangler="))?.slice("--wrangler=".length);
  if (given) return given;
  const prefix = path.join(root, "bench", ".tools", "wrangler");
  const bin = path.join(prefix, "node_modules", "wrangler", "bin", "wrangler.js");
  if (!fs.existsSync(bin)) {
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", "--prefix", prefix, `wrangler@${WRANGLER_VERSION}`], { stdio: "ignore", timeout: 300_000 });
  }
  return bin;
}

/** The Node that runs both dev servers (wrangler needs 22.12+): --node=path, else this one. */
export const benchNode = () => process.argv.find((a) => a.startsWith("--node="))?.slice("--node=".length) ?? process.execPath;

/** Environment for both dev commands: no colors, no telemetry, non-interactive. */
export const devEnv = () => ({ ...process.env, NO_COLOR: "1", WRANGLER_SEND_METRICS: "false", CI: "1" });

/**
 * Code caches for the rounds of a dev bench. workerbox keeps V8's compiled code in its per-user
 * cache folder, keyed by the source, so a "cold" start of a fresh copy would still find what an
 * earlier round (or any earlier run) compiled from the same files. Each round gets a folder of
 * its own (WORKERBOX_CACHE_DIR) holding only the startup snapshot, which any earlier use of this
 * workerbox build leaves: a user who has run workerbox before, but never this project. Made
 * here once, so no round pays for it. `fresh()` gives `{ env, remove }` for one round; `remove()`
 * removes the base. Node's own compile cache (workerbox dev turns it on: the code of workerbox's
 * and esbuild's JavaScript) is the round's too (NODE_COMPILE_CACHE, empty at the round's first
 * start): npm does not make it at install, so a cold start does not find one an earlier round
 * (or run) made; the warm start finds the one its cold start left.
 */
export async function workerboxCaches() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-cache-"));
  const { createWorker } = createRequire(import.meta.url)("../index.js");
  const worker = await createWorker({ script: "export default { fetch() { return new Response('') } }", cacheDir: base });
  await worker.dispose();
  const snapshots = fs.readdirSync(base).filter((name) => name.startsWith("snapshot-"));
  if (snapshots.length === 0) throw new Error(`workerboxCaches: no startup snapshot was written to ${base}`);
  return {
    fresh() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-round-"));
      for (const name of snapshots) fs.copyFileSync(path.join(base, name), path.join(dir, name));
      const compileCache = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-node-cache-"));
      const remove = () => {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.rmSync(compileCache, { recursive: true, force: true });
      };
      return { env: { WORKERBOX_CACHE_DIR: dir, NODE_COMPILE_CACHE: compileCache }, remove };
    },
    remove: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

/** What the JSON says a cold start had: the same for every dev bench. */
export const COLD_MEANS = "a fresh copy of the project and, for workerbox, a per-round WORKERBOX_CACHE_DIR holding only the startup snapshot (no bundle or compiled code of the project anywhere) and an empty per-round NODE_COMPILE_CACHE (no compiled code of workerbox's or esbuild's JavaScript from an earlier round)";

/**
 * `--phases`: workerbox dev's start-up marks (WORKERBOX_DEV_TIMING, lib/project/timing.js) read
 * from a child's stderr. Returns `{ env, collect(child), phases() }`; phases() gives the ms since
 * the process started at each mark of the last start collected.
 */
export function phaseMarks() {
  const on = process.argv.includes("--phases");
  let text = "";
  return {
    on,
    env: on ? { WORKERBOX_DEV_TIMING: "1" } : {},
    collect(child) {
      text = "";
      child.stderr?.on("data", (chunk) => (text += chunk));
    },
    phases() {
      const out = {};
      for (const line of text.split("\n")) {
        const match = /^\[timing\] ([\d.]+) (.*?)(?: \(.*\))?$/.exec(line);
        if (match && !(match[2] in out)) out[match[2]] = +match[1];
      }
      return out;
    },
  };
}

/** Medians of each phase over `list` (objects of phases()). */
export function medianPhases(list) {
  const names = [...new Set(list.flatMap((p) => Object.keys(p)))];
  return Object.fromEntries(names.map((name) => [name, median(list.map((p) => p[name]).filter((v) => v !== undefined))]));
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/**
 * Polls `url` every 5 ms until the answer is ok and `check(body)` holds; resolves to the ms it
 * took from `since` (a performance.now() time). Fails if `child` exits or after `limitMs`.
 */
export async function until(url, check, since, child, limitMs = 60_000) {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the command exited (${child.exitCode ?? child.signalCode}) before answering`);
    try {
      const response = await fetch(url);
      const body = await response.text();
      if (response.ok && check(body)) return performance.now() - since;
    } catch {}
    if (performance.now() - since > limitMs) throw new Error(`no answer from ${url} within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Ends `child` (SIGTERM, then SIGKILL after 5 s) and waits for it. */
export async function stop(child, exited) {
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return +sorted[Math.floor(sorted.length / 2)].toFixed(1);
};
