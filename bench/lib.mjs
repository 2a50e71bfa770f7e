// Helpers the benchmarks share: process-tree RSS, and running `workerbox dev` beside
// `wrangler dev` (where wrangler comes from, ports, polling for the first answer, stopping).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** RSS in bytes of process `root` (default: this one) and every descendant process (workerd, for Miniflare). */
export function treeRss(root = process.pid) {
  // /proc is Linux's: elsewhere only this process's own RSS is known (child processes, such as
  // Miniflare's workerd, are then not counted; said once).
  if (!fs.existsSync("/proc/self/status")) {
    if (!treeRss.warned) console.error(`treeRss: ${process.platform} has no /proc; child processes' RSS is not counted`);
    treeRss.warned = true;
    return root === process.pid ? process.memoryUsage.rss() : 0;
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
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    try {
      total += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
    } catch {}
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
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
