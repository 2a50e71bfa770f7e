// `workerbox dev` as a child process for the tests that drive separate dev servers: a test's temp
// folder whose after-hook stops the test's dev processes before removing it, `dev()` (resolves
// once the server printed its "ready on" URL), `writeWorker()` (a small wrangler project), and
// `until()` (polls a check, bounded).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLI, scaled, spawnNode } from "./child-node.mjs";

/** Each test's running dev processes (Node runs after-hooks in the order they were added). */
const running = new WeakMap();

/** Stops every dev process `t` started. */
export const stopAll = (t) => Promise.all((running.get(t) ?? []).map((stop) => stop()));

/** A temp folder for test `t`, removed after the test's dev processes have stopped. */
export function tempRoot(t, prefix) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(async () => {
    await stopAll(t);
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
  return root;
}

/**
 * Runs `workerbox dev` with `args` (on port 0, `--no-persist` unless `persist`) and the file
 * registry at `registry`; resolves once it printed its "ready on" URL, within 60 s (times WORKERBOX_TEST_TIME_SCALE).
 */
export async function dev(t, args, registry, { persist = false } = {}) {
  const child = spawnNode([CLI, "dev", ...args, "--port", "0", ...(persist ? [] : ["--no-persist"])], { env: { ...process.env, WORKERBOX_REGISTRY: registry, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  if (!running.has(t)) running.set(t, []);
  running.get(t).push(stop);
  t.after(stop);
  const deadline = Date.now() + scaled(60_000);
  while (!/ready on (http:\/\/\S+)/.test(out)) {
    if (child.exitCode !== null) throw new Error(`workerbox dev exited (${child.exitCode}):\n${out}`);
    if (Date.now() > deadline) throw new Error(`workerbox dev did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: out.match(/ready on (http:\/\/\S+)/)[1], output: () => out, exited, stop };
}

/** A worker project `root/name`: `src/index.js` holding `source`, and its wrangler.jsonc (`config` added). */
export function writeWorker(root, name, source, config = {}) {
  const dir = path.join(root, name);
  fs.mkdirSync(path.join(dir, "src"), { recursive: true });
  fs.writeFileSync(path.join(dir, "src", "index.js"), source);
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name, main: "src/index.js", compatibility_date: "2025-06-01", ...config }, null, 2));
  return dir;
}

/** Polls `check()` every `everyMs` until it gives a truthy value (returned), or fails after `ms` (times WORKERBOX_TEST_TIME_SCALE). */
export async function until(what, check, ms = 30_000, everyMs = 100) {
  const deadline = Date.now() + scaled(ms);
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
