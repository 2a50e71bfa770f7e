#!/usr/bin/env node
// Runs real published Workers projects' own Vitest suites (written for Cloudflare's
// @cloudflare/vitest-pool-workers) with workerbox/vitest, and prints a pass/fail table. Nothing of
// theirs is kept in this repository: each project is copied from a git mirror (bare git directory
// or work tree, found under --mirrors as `<owner>+<name>/repo`, `<owner>+<name>` or `<name>`) into
// a temporary folder, its import of Cloudflare's pool (the Vitest 4 `cloudflareTest()` form or the
// Vitest 3 `defineWorkersConfig` form from `/config`) becomes `workerbox/vitest`, and its
// dependencies are installed from the npm registry (Vitest pinned to this checkout's; linting,
// docs and type-only packages left out), with workerbox from `npm pack` of this checkout.
// bench/vitest.mjs uses prepareProject() to run the same projects under Cloudflare's pool too.
//
//   node scripts/vitest-projects.mjs --mirrors <dir> [--only a,b] [--keep]
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const own = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const CLOUDFLARE_POOL = "@cloudflare/vitest-pool-workers";
/** Cloudflare's pool for the Vitest 4 form, as bench/vitest.mjs installs it. */
export const CLOUDFLARE_VERSION = "0.23.0";
const RUN_TIMEOUT_MS = 300_000;

/**
 * The projects: the repository, the folder inside it, `vitest run`'s arguments as the project's
 * `test` script gives them, the config form, and what each suite exercises.
 */
export const PROJECTS = {
  "workers-qb": { repo: "G4brym/workers-qb", dir: "", args: ["--root", "tests"], form: "vitest3", covers: "D1 (miniflare d1Databases object form) and SQLite Durable Objects (runInDurableObject) query builder, migrations; typecheck" },
  "chanfana-openapi": { repo: "cloudflare/templates", dir: "chanfana-openapi-template", args: ["--config", "tests/vitest.config.mts"], form: "vitest4", covers: "Hono + chanfana OpenAPI over D1, readD1Migrations/applyD1Migrations in a setup file, SELF" },
  "d1-sessions": { repo: "cloudflare/templates", dir: "d1-starter-sessions-api-template", args: [], form: "vitest4", covers: "D1 Sessions API (withSession, bookmarks), SELF" },
  "to-do-list-kv": { repo: "cloudflare/templates", dir: "to-do-list-kv-template", args: [], form: "vitest3", covers: "KV through a class under test (Remix app), env from cloudflare:test" },
  "workflows-starter": { repo: "cloudflare/templates", dir: "workflows-starter-template", args: [], form: "vitest4", covers: "Workflows introspection (introspectWorkflowInstance, mocked step results)" },
};

/** Their dependencies that are linting, docs, bundling, types, or Cloudflare's pool itself. */
const DROPPED = /^(?:@cloudflare\/vitest-pool-workers|@cloudflare\/vite-plugin|@biomejs\/.*|@changesets\/.*|vitepress|tsup|eslint.*|@eslint\/.*|typescript-eslint|@typescript-eslint\/.*|globals|wrangler|@remix-run\/dev|autoprefixer|postcss|tailwindcss|@tailwindcss\/.*|@vitejs\/.*|vite-tsconfig-paths|react|react-dom)$/;

export function run(argv, cwd, { timeout = 600_000, allowFailure = false, env = {} } = {}) {
  const [command, ...rest] = argv;
  return new Promise((resolve, reject) => {
    execFile(command, rest, { cwd, timeout, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", CI: "1", npm_config_audit: "false", npm_config_fund: "false", ...env } }, (error, stdout, stderr) => {
      if (error && !allowFailure) reject(new Error(`${argv.join(" ")} failed: ${error.message}\n${stderr}`));
      else resolve({ code: error ? (error.code ?? 1) : 0, killed: Boolean(error?.killed), stdout, stderr });
    });
  });
}

/** The mirror of `repo` under `mirrors` (a bare git directory or a work tree). */
function findMirror(mirrors, repo) {
  const [owner, name] = repo.split("/");
  for (const candidate of [path.join(mirrors, `${owner}+${name}`, "repo"), path.join(mirrors, `${owner}+${name}`), path.join(mirrors, name)]) {
    if (fs.existsSync(path.join(candidate, "HEAD")) || fs.existsSync(path.join(candidate, ".git"))) return candidate;
  }
  throw new Error(`no mirror of ${repo} under ${mirrors} (looked for ${owner}+${name}/repo, ${owner}+${name}, ${name})`);
}

/** Copies `dir` of `repo` to `dest`; returns the commit copied. */
async function copyProject(mirrors, { repo, dir }, dest) {
  const from = findMirror(mirrors, repo);
  fs.mkdirSync(dest, { recursive: true });
  const gitDir = fs.existsSync(path.join(from, ".git")) ? path.join(from, ".git") : from;
  const commit = (await run(["git", "--git-dir", gitDir, "rev-parse", "HEAD"], dest)).stdout.trim();
  const archive = path.join(dest, "..", `${path.basename(dest)}.tar`);
  await run(["git", "--git-dir", gitDir, "archive", "-o", archive, dir ? `HEAD:${dir}` : "HEAD"], dest);
  await run(["tar", "xf", archive, "-C", dest], dest);
  fs.rmSync(archive);
  return commit;
}

export function* files(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === ".git") continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(file);
    else yield file;
  }
}

/**
 * Their imports of Cloudflare's pool (and its /config) become workerbox/vitest's, and a tsconfig's
 * `types` entry for its `cloudflare:test` types becomes workerbox/vitest/types.
 */
function swapImports(dir) {
  let changed = 0;
  for (const file of files(dir)) {
    const tsconfig = /(?:^|[\\/])tsconfig[^\\/]*\.json$/.test(file);
    if (!tsconfig && (!/\.(?:[cm]?[jt]s)$/.test(file) || file.endsWith(".d.ts"))) continue;
    const source = fs.readFileSync(file, "utf8");
    const next = tsconfig ? source.replace(/(["'])@cloudflare\/vitest-pool-workers(?:\/types)?\1/g, "$1workerbox/vitest/types$1") : source.replace(/(["'])@cloudflare\/vitest-pool-workers(?:\/config)?\1/g, "$1workerbox/vitest$1");
    if (next !== source) {
      fs.writeFileSync(file, next);
      changed++;
    }
  }
  return changed;
}

/** npm pack of this checkout with the built addon beside index.js (where native.js looks first). */
export async function packWorkerbox(work) {
  const packed = JSON.parse((await run([npm, "pack", "--json", "--pack-destination", work], root)).stdout)[0].filename;
  const unpacked = path.join(work, "unpacked");
  fs.mkdirSync(unpacked);
  await run(["tar", "xzf", path.join(work, packed), "-C", unpacked], work);
  fs.copyFileSync(path.join(root, "workerbox.linux-x64-gnu.node"), path.join(unpacked, "package", "workerbox.linux-x64-gnu.node"));
  const tarball = path.join(work, "workerbox-with-addon.tgz");
  await run(["tar", "czf", tarball, "-C", unpacked, "package"], work);
  fs.rmSync(unpacked, { recursive: true, force: true });
  fs.rmSync(path.join(work, packed));
  return tarball;
}

/**
 * Their package.json for `pool` ("workerbox": Vitest 4 and workerbox from `tarball`;
 * "cloudflare": Cloudflare's pool — 0.23.0 on Vitest 4 for the Vitest 4 form, the project's own
 * version and Vitest 3 for the Vitest 3 form).
 */
function rewriteManifest(dir, project, pool, tarball) {
  const file = path.join(dir, "package.json");
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
  const theirs = { ...pkg.dependencies, ...pkg.devDependencies };
  const dependencies = {};
  for (const [name, version] of Object.entries(theirs)) {
    if (DROPPED.test(name) || /^(?:vitest|vite|@vitest\/.*)$/.test(name)) continue;
    dependencies[name] = version;
  }
  const overrides = {};
  if (pool === "workerbox") {
    dependencies.vitest = own.devDependencies.vitest;
    dependencies.workerbox = `file:${tarball}`;
  } else if (project.form === "vitest4") {
    dependencies.vitest = own.devDependencies.vitest;
    dependencies[CLOUDFLARE_POOL] = CLOUDFLARE_VERSION;
  } else {
    dependencies.vitest = theirs.vitest && !/^(?:workspace|catalog):/.test(theirs.vitest) ? theirs.vitest : "~3.2.0";
    dependencies[CLOUDFLARE_POOL] = theirs[CLOUDFLARE_POOL];
  }
  // Vitest's vite is the one the config loads (a project's older vite beside it is not used here).
  // (vite is Vitest 4's peer, which --legacy-peer-deps does not install by itself.)
  if (pool === "workerbox" || project.form === "vitest4") dependencies.vite = overrides.vite = "8.3.8";
  fs.writeFileSync(file, JSON.stringify({ name: pkg.name, private: true, type: pkg.type, dependencies, overrides }, null, 2));
}

/** Copies, rewrites and installs `name` under `work` for `pool`: { dir, vitest, args, commit }. */
export async function prepareProject(name, { mirrors, work, pool = "workerbox", tarball }) {
  const project = PROJECTS[name];
  if (!project) throw new Error(`unknown project ${name} (have ${Object.keys(PROJECTS).join(", ")})`);
  const dir = path.join(work, `${name}-${pool}`);
  const commit = await copyProject(mirrors, project, dir);
  if (pool === "workerbox") swapImports(dir);
  rewriteManifest(dir, project, pool, tarball);
  await run([npm, "install", "--prefer-offline", "--legacy-peer-deps", "--no-audit", "--no-fund", "--loglevel=error"], dir, { timeout: 900_000 });
  return { dir, vitest: path.join(dir, "node_modules", "vitest", "vitest.mjs"), args: project.args, commit };
}

async function runProject({ dir, vitest, args }, work, name) {
  const outputFile = path.join(work, `report-${name}.json`);
  const started = performance.now();
  const result = await run([process.execPath, vitest, "run", ...args, "--reporter=json", "--reporter=default", `--outputFile.json=${outputFile}`], dir, { timeout: RUN_TIMEOUT_MS, allowFailure: true });
  const seconds = (performance.now() - started) / 1000;
  const report = fs.existsSync(outputFile) ? JSON.parse(fs.readFileSync(outputFile, "utf8")) : null;
  let error = "";
  if (result.code !== 0) {
    const failed = report?.testResults?.flatMap((f) => [...(f.assertionResults ?? []).filter((t) => t.status === "failed").map((t) => `${t.fullName}: ${t.failureMessages?.[0]?.split("\n")[0]}`), ...(f.status === "failed" && f.message ? [f.message.split("\n")[0]] : [])]) ?? [];
    const lines = `${result.stdout}\n${result.stderr}`.split("\n").map((l) => l.trim());
    error = failed[0] ?? lines.find((l) => /Error/.test(l)) ?? `exit ${result.code}`;
  }
  return { passed: report?.numPassedTests ?? 0, failed: report?.numFailedTests ?? 0, skipped: (report?.numPendingTests ?? 0) + (report?.numTodoTests ?? 0), total: report?.numTotalTests ?? 0, ok: result.code === 0, seconds, error };
}

async function main() {
  const argv = process.argv.slice(2);
  let mirrors;
  let only;
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--mirrors") mirrors = argv[++i];
    else if (argv[i] === "--only") only = argv[++i].split(",");
    else if (argv[i] === "--keep") keep = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!mirrors) throw new Error("give --mirrors <folder holding the projects' git mirrors>");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-vitest-projects-"));
  const rows = [];
  try {
    const tarball = await packWorkerbox(work);
    for (const name of only ?? Object.keys(PROJECTS)) {
      let row;
      try {
        const prepared = await prepareProject(name, { mirrors: path.resolve(mirrors), work, tarball });
        row = { name, commit: prepared.commit.slice(0, 10), ...(await runProject(prepared, work, name)) };
      } catch (error) {
        row = { name, commit: "", passed: 0, failed: 0, skipped: 0, total: 0, ok: false, seconds: 0, error: error.message.split("\n")[0] };
      }
      console.error(`${row.ok ? "pass" : "FAIL"} ${name}: ${row.passed}/${row.total} in ${row.seconds.toFixed(1)} s${row.ok ? "" : ` — ${row.error}`}`);
      rows.push(row);
    }
    console.log("| project | repo@commit | form | passed | failed | skipped | total | s | result |");
    console.log("|---|---|---|---|---|---|---|---|---|");
    for (const r of rows) console.log(`| ${r.name} | ${PROJECTS[r.name].repo}@${r.commit} | ${PROJECTS[r.name].form} | ${r.passed} | ${r.failed} | ${r.skipped} | ${r.total} | ${r.seconds.toFixed(1)} | ${r.ok ? "pass" : `FAIL: ${r.error.slice(0, 160)}`} |`);
    console.log(`\n${rows.filter((r) => r.ok).length}/${rows.length} projects pass`);
  } finally {
    if (keep) console.error(`kept ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error.stack ?? error);
    process.exit(1);
  });
}
