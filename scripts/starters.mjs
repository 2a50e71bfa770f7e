#!/usr/bin/env node
// The framework starters that __test__/project-frameworks.test.mjs and bench/starters.mjs serve:
// a React Router 7 app (framework mode, server-rendered) and a Vite + React single-page app, both
// built with Cloudflare's Vite plugin, and a Remix v2 app built by Remix's own Vite plugin
// (`remix vite:build`), whose Worker (server.ts, importing the server build) wrangler bundles.
// `npm create cloudflare` would fetch these from GitHub, which CI cannot reach, so their sources
// are our own, in __test__/fixtures/starters/<name>/, shaped like the official templates. This
// script installs the pinned packages they need from the npm registry once per toolchain (Remix
// v2 needs React 18 and Vite 6, so it has its own install), builds each starter, and keeps both
// in the git-ignored .cache/starters/, keyed by a hash of the versions and sources: a later run,
// or the next Node version in the same CI run, finds them ready.
//
//   node scripts/starters.mjs [--warm] [name…]   prepare (all by default); prints the folders
//     --warm   never fail: report a problem and exit 0 (npm's pretest:node step; the tests then
//              report it themselves)
//
// import { prepareStarter, copyStarter } from "./scripts/starters.mjs" for the same from code.
//
// WORKERBOX_STARTERS_NODE names the Node that installs and builds the starters when it is not
// the one running this script: scripts/arm64.mjs sets it to the host's x64 Node, since the arm64
// Node under qemu-user cannot exec another arm64 binary (npm's, esbuild's and Vite's) itself. The
// build output is JavaScript and assets, the same on every platform; the cache key then carries
// that Node's platform and CPU, whose native packages the install holds.
import { execFileSync, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const CACHE = path.join(root, ".cache", "starters");
const SOURCES = path.join(root, "__test__", "fixtures", "starters");

/**
 * The pinned packages, by toolchain: each is installed once into one folder its starters resolve
 * from. `prefix` names its cache folder (`<prefix>-<hash>`).
 */
export const TOOLCHAINS = {
  vite: {
    prefix: "toolchain",
    dependencies: { react: "19.3.1", "react-dom": "19.3.1", "react-router": "7.18.4", isbot: "5.2.3" },
    devDependencies: { "@react-router/dev": "7.18.4", "@cloudflare/vite-plugin": "1.64.0", vite: "8.3.8", "@vitejs/plugin-react": "6.3.0" },
  },
  // Remix v2's last release, with what its Cloudflare template needs to build (wrangler, which
  // its dev proxy loads, only runs `remix vite:dev`, so it is left out).
  remix: {
    prefix: "toolchain-remix",
    dependencies: { "@remix-run/cloudflare": "2.17.5", "@remix-run/react": "2.17.5", react: "18.3.1", "react-dom": "18.3.1", isbot: "5.2.3" },
    devDependencies: { "@remix-run/dev": "2.17.5", vite: "6.4.6" },
  },
};

/**
 * The starters built here (sources under __test__/fixtures/starters/<name>/): their toolchain,
 * the build (`build`: a script of the toolchain's node_modules and its arguments, what the
 * starter's `npm run build`, `command`, runs) and a file the build must have written.
 */
export const STARTERS = {
  "react-router": { toolchain: "vite", command: "vite build", build: ["vite/bin/vite.js", "build"], writes: ".wrangler/deploy/config.json" },
  "vite-react": { toolchain: "vite", command: "vite build", build: ["vite/bin/vite.js", "build"], writes: ".wrangler/deploy/config.json" },
  remix: { toolchain: "remix", command: "remix vite:build", build: ["@remix-run/dev/dist/cli.js", "vite:build"], writes: "build/server/index.js" },
};
export const BUILT = Object.keys(STARTERS);

/** The Node that installs and builds (see WORKERBOX_STARTERS_NODE above), and its platform/CPU. */
const BUILD_NODE = process.env.WORKERBOX_STARTERS_NODE || process.execPath;
let buildTarget;
const buildNodeTarget = () =>
  (buildTarget ??= BUILD_NODE === process.execPath ? [process.platform, process.arch] : execFileSync(BUILD_NODE, ["-p", "process.platform + ' ' + process.arch"], { encoding: "utf8", timeout: 60_000 }).trim().split(" "));

const INSTALL_TIMEOUT_MS = 180_000;
const BUILD_TIMEOUT_MS = 120_000;

const hash = (...parts) => {
  const h = crypto.createHash("sha256");
  for (const part of parts) h.update(part).update("\0");
  return h.digest("hex").slice(0, 12);
};

/** Every file under `dir` (relative path and content), sorted: what a starter's key covers. */
function filesOf(dir) {
  const out = [];
  const walk = (sub) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const rel = path.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else out.push(rel, fs.readFileSync(path.join(dir, rel)));
    }
  };
  walk("");
  return out;
}

/**
 * Runs `command args` in `cwd` (its own process group, so a timeout ends npm's children too);
 * resolves with its output, rejects with the last lines of it on failure or timeout.
 */
function run(command, args, { cwd, timeoutMs, what }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", npm_config_update_notifier: "false" } });
    let output = "";
    const collect = (chunk) => (output = (output + chunk).slice(-20_000));
    child.stdout.setEncoding("utf8").on("data", collect);
    child.stderr.setEncoding("utf8").on("data", collect);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, timeoutMs);
    const tail = () => output.trim().split("\n").slice(-15).join("\n");
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${what}: cannot run ${command}: ${error.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) reject(new Error(`${what}: no result within ${timeoutMs / 1000} s (is the npm registry reachable?)\n${tail()}`));
      else if (code !== 0) reject(new Error(`${what}: ${command} ${args.join(" ")} failed (${signal ?? `exit code ${code}`})\n${tail()}`));
      else resolve(output);
    });
  });
}

/** Moves a finished `tmp` folder to `dir`; if another process got there first, keeps theirs. */
function publish(tmp, dir) {
  try {
    fs.renameSync(tmp, dir);
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, ".ready"))) throw error;
  }
}

/** Removes finished cache folders `<prefix>-<hash>` other than `keep` (older versions). */
function prune(prefix, keep) {
  for (const entry of fs.readdirSync(CACHE)) {
    if (entry !== keep && new RegExp(`^${prefix}-[0-9a-f]{12}$`).test(entry)) fs.rmSync(path.join(CACHE, entry), { recursive: true, force: true });
  }
}

/**
 * Toolchain `id`'s install (`<cache>/<prefix>-<hash>/node_modules`), made on first use; npm is
 * ended after `installTimeoutMs`.
 */
const failedInstalls = new Map(); // one try per toolchain and process: the next caller gets the same error at once

export async function prepareToolchain(id = "vite", { log = () => {}, installTimeoutMs = INSTALL_TIMEOUT_MS } = {}) {
  const { prefix, ...packages } = TOOLCHAINS[id];
  const manifest = { name: id === "vite" ? "workerbox-starters-toolchain" : `workerbox-starters-toolchain-${id}`, private: true, type: "module", ...packages };
  const name = `${prefix}-${hash(JSON.stringify(manifest), ...buildNodeTarget())}`;
  const dir = path.join(CACHE, name);
  if (fs.existsSync(path.join(dir, ".ready"))) return dir;
  if (failedInstalls.has(id)) throw failedInstalls.get(id);
  fs.mkdirSync(CACHE, { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp);
  fs.writeFileSync(path.join(tmp, "package.json"), JSON.stringify(manifest, null, 2));
  log(`installing ${Object.entries({ ...packages.dependencies, ...packages.devDependencies }).map(([n, v]) => `${n}@${v}`).join(", ")} from the npm registry`);
  const started = performance.now();
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  try {
    // Few, quick retries: an unreachable registry fails in seconds, not minutes.
    const flags = ["--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", "--fetch-retries=1", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=3000", "--fetch-timeout=30000"];
    await run(npm, ["install", ...flags], {
      cwd: tmp,
      timeoutMs: installTimeoutMs,
      what: `installing the starters' packages (${id} toolchain) from the npm registry`,
    });
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    failedInstalls.set(id, error);
    throw error;
  }
  log(`installed in ${Math.round((performance.now() - started) / 1000)} s`);
  fs.writeFileSync(path.join(tmp, ".ready"), "");
  publish(tmp, dir);
  prune(prefix, name);
  return dir;
}

/**
 * Starter `name` installed and built: its folder in the cache, with build output (for the
 * Cloudflare Vite plugin's, `.wrangler/deploy/config.json` pointing to the configuration it
 * wrote; for Remix's, build/server/ and build/client/) and a `node_modules` link to its
 * toolchain's install. Treat it as read-only: serve a copyStarter().
 */
export async function prepareStarter(name, { log = () => {}, installTimeoutMs } = {}) {
  const starter = Object.hasOwn(STARTERS, name) ? STARTERS[name] : null;
  if (!starter) throw new Error(`no starter named ${name} (have ${BUILT.join(", ")})`);
  const toolchain = await prepareToolchain(starter.toolchain, { log, installTimeoutMs });
  const source = path.join(SOURCES, name);
  const key = `${name}-${hash(path.basename(toolchain), ...filesOf(source))}`;
  const dir = path.join(CACHE, key);
  if (fs.existsSync(path.join(dir, ".ready"))) return dir;
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.cpSync(source, tmp, { recursive: true });
  fs.symlinkSync(path.join(toolchain, "node_modules"), path.join(tmp, "node_modules"), "dir");
  const [script, ...args] = starter.build;
  log(`building the ${name} starter (${starter.command})`);
  const started = performance.now();
  try {
    await run(BUILD_NODE, [path.join(toolchain, "node_modules", script), ...args], { cwd: tmp, timeoutMs: BUILD_TIMEOUT_MS, what: `building the ${name} starter` });
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
  log(`built in ${Math.round((performance.now() - started) / 1000)} s`);
  if (!fs.existsSync(path.join(tmp, starter.writes))) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new Error(`building the ${name} starter: the build wrote no ${starter.writes}`);
  }
  fs.writeFileSync(path.join(tmp, ".ready"), "");
  publish(tmp, dir);
  prune(name, key);
  return dir;
}

/**
 * A fresh copy of prepared starter `name` in a new temporary folder (its own state, nothing
 * shared but node_modules, linked): `{ dir, remove() }`.
 */
export async function copyStarter(name, options) {
  const prepared = await prepareStarter(name, options);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `workerbox-starter-${name}-`));
  fs.cpSync(prepared, dir, { recursive: true, verbatimSymlinks: true, filter: (file) => !/[/\\](\.ready|\.workerbox)$/.test(file) });
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const warm = args.includes("--warm");
  const names = args.filter((a) => !a.startsWith("--"));
  const log = (line) => console.error(`[starters] ${line}`);
  let failed = false;
  for (const name of names.length ? names : BUILT) {
    try {
      console.log(await prepareStarter(name, { log }));
    } catch (error) {
      failed = true;
      log(`${name}: ${error.message}`);
    }
  }
  if (failed && warm) log("not ready; the tests that serve the starters will say why again");
  process.exitCode = failed && !warm ? 1 : 0;
}
