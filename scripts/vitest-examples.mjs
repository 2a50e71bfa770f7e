#!/usr/bin/env node
// Runs Cloudflare's own Vitest example projects (workers-sdk's fixtures/vitest-plugin-examples,
// formerly fixtures/vitest-pool-workers-examples) with workerbox/vitest instead of Cloudflare's
// pool, and prints a pass/fail table per project. Nothing of theirs is kept in this repository:
// the examples are copied from a workers-sdk checkout (a work tree or a bare git directory) into a
// temporary folder, their import of `@cloudflare/vitest-plugin` (or `@cloudflare/vitest-pool-workers`)
// becomes `workerbox/vitest`, their dependencies are installed from the npm registry with
// workerbox from `npm pack` of this checkout (the built addon added), and each Vitest config runs
// on its own.
//
// A dependency the npm registry does not have but whose source is public (`@msw/cloudflare`, from
// github.com/mswjs/cloudflare) is built from a git mirror of it with esbuild, packed, and installed
// from that tarball; without a mirror it is left out, and the projects that import it fail on that.
//
//   node scripts/vitest-examples.mjs --from <workers-sdk checkout or git dir> [--mirrors <dir>] [--only a,b] [--keep]
//     --mirrors  where git mirrors of such dependencies are (`<owner>+<name>/repo`); default: the
//                folder holding --from's, when --from is such a mirror (`…/cloudflare+workers-sdk/repo`)
//     --only     run these projects (folder names) only
//     --keep     leave the temporary folder (its path is printed)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { files, packWorkerbox, run } from "./vitest-projects.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const EXAMPLE_DIRS = ["fixtures/vitest-plugin-examples", "fixtures/vitest-pool-workers-examples"];
const CLOUDFLARE_PACKAGES = ["@cloudflare/vitest-plugin", "@cloudflare/vitest-pool-workers"];
/** What replaces the examples' workspace and catalog versions. */
const own = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
// wrangler: some projects' globalSetup builds an auxiliary worker with `wrangler build`, so it is
// the newest wrangler 4 whose CLI runs on this Node (wranglerForThisNode()).
// Other `catalog:` versions (msw, …) are the monorepo's own catalog's (pnpm-workspace.yaml).
const PINNED = { vitest: own.devDependencies.vitest, vite: "8.3.8", typescript: "5.9.3", miniflare: own.devDependencies.miniflare, wrangler: "^4" };
/** Dependencies the registry lacks, built from their source: the mirror to find and how to build. */
const FROM_SOURCE = { "@msw/cloudflare": { repo: "mswjs/cloudflare", entry: "src/index.ts", outfile: "build/index.mjs" } };
/** Their dependencies that are only types, or Cloudflare's pool itself. */
const DROPPED = new Set(["@cloudflare/workers-types", "@types/node", ...CLOUDFLARE_PACKAGES]);
const RUN_TIMEOUT_MS = 180_000;

function parseArgs(argv) {
  const args = { from: undefined, mirrors: undefined, only: undefined, keep: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--from") args.from = argv[++i];
    else if (argv[i] === "--mirrors") args.mirrors = argv[++i];
    else if (argv[i] === "--only") args.only = new Set(argv[++i].split(","));
    else if (argv[i] === "--keep") args.keep = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!args.from) throw new Error("give --from <workers-sdk checkout or git dir>");
  const mirror = /^(.*)[\\/][^\\/]+\+[^\\/]+[\\/]repo[\\/]?$/.exec(path.resolve(args.from));
  args.mirrors = args.mirrors ? path.resolve(args.mirrors) : mirror?.[1];
  return args;
}

/** A file of the workers-sdk checkout (work tree or git dir), or undefined. */
async function sourceFile(from, file, cwd) {
  if (fs.existsSync(path.join(from, file))) return fs.readFileSync(path.join(from, file), "utf8");
  const shown = await run(["git", "--git-dir", from, "show", `HEAD:${file}`], cwd, { allowFailure: true });
  return shown.code === 0 ? shown.stdout : undefined;
}

/** The newest wrangler 4 whose `engines.node` (">=x.y.z") this Node meets, or undefined. */
async function wranglerForThisNode(cwd) {
  const listed = await run([npm, "view", "wrangler@^4", "version", "engines.node", "--json"], cwd, { allowFailure: true });
  if (listed.code !== 0) return undefined;
  const parse = (v) => v.split(/[.-]/).slice(0, 3).map(Number);
  const atLeast = (a, b) => a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] >= b[2];
  const node = parse(process.versions.node);
  const fits = JSON.parse(listed.stdout)
    .filter((e) => /^\d+\.\d+\.\d+$/.test(e.version) && /^>=\s*\d+(\.\d+){0,2}$/.test(e["engines.node"] ?? ""))
    .filter((e) => atLeast(node, [...parse(e["engines.node"].replace(/^>=\s*/, "")), 0, 0].slice(0, 3)))
    .map((e) => e.version)
    .sort((a, b) => {
      const [x, y] = [parse(a), parse(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
  return fits.at(-1);
}

/**
 * A project whose cloudflare.config.ts imports `wrangler/experimental-config` (new-config) while
 * the wrangler installed for the others (one whose CLI runs on this Node) predates that module:
 * that project gets the module of the checkout's own wrangler version in its own node_modules —
 * the registry's files of that version, as a package holding only that subpath (it imports
 * nothing; its CLI needs a newer Node and is not what the project uses).
 */
async function experimentalConfigHelpers(examples, from, work) {
  const installed = JSON.parse(fs.readFileSync(path.join(examples, "node_modules", "wrangler", "package.json"), "utf8"));
  if (installed.exports?.["./experimental-config"]) return;
  const users = fs.readdirSync(examples).filter((dir) => fs.existsSync(path.join(examples, dir, "cloudflare.config.ts")) && fs.readFileSync(path.join(examples, dir, "cloudflare.config.ts"), "utf8").includes("wrangler/experimental-config"));
  if (users.length === 0) return;
  const version = JSON.parse((await sourceFile(from, "packages/wrangler/package.json", work)) ?? "{}").version;
  if (!version) return console.error(`wrangler ${installed.version} has no wrangler/experimental-config, and the checkout names no wrangler version: ${users.join(", ")} cannot load it`);
  const dir = path.join(work, "wrangler-experimental-config");
  fs.mkdirSync(dir, { recursive: true });
  const packed = await run([npm, "pack", "--silent", `wrangler@${version}`, "--pack-destination", dir], dir);
  const files = ["package/wrangler-dist/experimental-config.mjs", "package/wrangler-dist/experimental-config.d.mts"];
  await run(["tar", "xzf", path.join(dir, packed.stdout.trim().split("\n").at(-1)), "-C", dir, ...files], dir);
  for (const user of users) {
    const target = path.join(examples, user, "node_modules", "wrangler");
    fs.mkdirSync(path.join(target, "wrangler-dist"), { recursive: true });
    for (const file of files) fs.copyFileSync(path.join(dir, file), path.join(target, file.replace(/^package\//, "")));
    const exports = { "./experimental-config": { types: "./wrangler-dist/experimental-config.d.mts", import: "./wrangler-dist/experimental-config.mjs" } };
    fs.writeFileSync(path.join(target, "package.json"), JSON.stringify({ name: "wrangler", version, type: "commonjs", exports }, null, 2));
  }
  console.error(`wrangler ${installed.version} (the newest whose CLI runs on Node ${process.versions.node}) has no wrangler/experimental-config: ${users.join(", ")} get that module of wrangler ${version}`);
}

/** The mirror of `repo` under `mirrors` (a bare git dir, or a work tree), or undefined. */
function findMirror(mirrors, repo) {
  if (!mirrors) return undefined;
  const [owner, name] = repo.split("/");
  return [path.join(mirrors, `${owner}+${name}`, "repo"), path.join(mirrors, `${owner}+${name}`)].find((dir) => fs.existsSync(dir));
}

/**
 * Builds a dependency the registry lacks from its mirror (FROM_SOURCE): its entry compiled with
 * esbuild (its own dependencies left as imports), its package.json without scripts and dev
 * dependencies, packed. Returns `{ tarball, commit }`.
 */
async function buildFromSource(name, mirror, work) {
  const { repo, entry, outfile } = FROM_SOURCE[name];
  const dir = path.join(work, "from-source", name.replace("/", "+"));
  fs.mkdirSync(dir, { recursive: true });
  const isWorkTree = fs.existsSync(path.join(mirror, "package.json"));
  let commit = "work tree";
  if (isWorkTree) {
    for (const item of ["package.json", path.dirname(entry)]) fs.cpSync(path.join(mirror, item), path.join(dir, item), { recursive: true });
  } else {
    const archive = path.join(dir, "source.tar");
    await run(["git", "--git-dir", mirror, "archive", "-o", archive, "HEAD", "package.json", path.dirname(entry)], dir);
    await run(["tar", "xf", archive, "-C", dir], dir);
    fs.rmSync(archive);
    commit = (await run(["git", "--git-dir", mirror, "log", "-1", "--format=%h %cs", "HEAD"], dir)).stdout.trim();
  }
  const esbuild = await import("esbuild");
  await esbuild.build({ entryPoints: [path.join(dir, entry)], outfile: path.join(dir, outfile), bundle: true, packages: "external", format: "esm", platform: "neutral", target: "es2022", sourcemap: true, logLevel: "error" });
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  delete pkg.devDependencies;
  delete pkg.scripts;
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  fs.rmSync(path.join(dir, path.dirname(entry)), { recursive: true });
  const packed = await run([npm, "pack", "--silent", "--pack-destination", path.join(work, "from-source")], dir);
  return { tarball: path.join(work, "from-source", packed.stdout.trim().split("\n").at(-1)), commit: `github.com/${repo} ${commit}` };
}

/** Copies the examples (and the monorepo's vitest.shared.ts their configs extend) under `dest`. */
async function copyExamples(from, dest) {
  const isWorkTree = EXAMPLE_DIRS.some((dir) => fs.existsSync(path.join(from, dir)));
  if (isWorkTree) {
    const dir = EXAMPLE_DIRS.find((d) => fs.existsSync(path.join(from, d)));
    fs.cpSync(path.join(from, dir), path.join(dest, dir), { recursive: true, filter: (file) => !file.includes(`${path.sep}node_modules`) });
    if (fs.existsSync(path.join(from, "vitest.shared.ts"))) fs.copyFileSync(path.join(from, "vitest.shared.ts"), path.join(dest, "vitest.shared.ts"));
    if (fs.existsSync(path.join(from, "pnpm-workspace.yaml"))) fs.copyFileSync(path.join(from, "pnpm-workspace.yaml"), path.join(dest, "pnpm-workspace.yaml"));
    return path.join(dest, dir);
  }
  for (const dir of EXAMPLE_DIRS) {
    const listed = await run(["git", "--git-dir", from, "ls-tree", "--name-only", "HEAD", dir], dest, { allowFailure: true });
    if (listed.code !== 0 || listed.stdout.trim() === "") continue;
    const archive = path.join(dest, "examples.tar");
    await run(["git", "--git-dir", from, "archive", "-o", archive, "HEAD", dir, "vitest.shared.ts"], dest);
    await run(["tar", "xf", archive, "-C", dest], dest);
    fs.rmSync(archive);
    const workspace = await run(["git", "--git-dir", from, "show", "HEAD:pnpm-workspace.yaml"], dest, { allowFailure: true });
    if (workspace.code === 0) fs.writeFileSync(path.join(dest, "pnpm-workspace.yaml"), workspace.stdout);
    return path.join(dest, dir);
  }
  throw new Error(`${from} has none of ${EXAMPLE_DIRS.join(", ")}`);
}

/** Their imports of Cloudflare's pool become workerbox/vitest's (one import changed per config). */
function swapImports(examples) {
  let changed = 0;
  for (const file of files(examples)) {
    if (!/\.(?:[cm]?[jt]s)$/.test(file) || file.endsWith(".d.ts")) continue;
    const source = fs.readFileSync(file, "utf8");
    let next = source;
    for (const name of CLOUDFLARE_PACKAGES) next = next.replace(new RegExp(`(["'])${name.replace("/", "\\/")}(?:/config)?\\1`, "g"), `$1workerbox/vitest$1`);
    if (next !== source) {
      fs.writeFileSync(file, next);
      changed++;
    }
  }
  return changed;
}

/** The default catalog of the monorepo's pnpm-workspace.yaml (`catalog:` block): name → version. */
function readCatalog(examples) {
  const file = [path.join(examples, "..", "..", "pnpm-workspace.yaml"), path.join(examples, "..", "pnpm-workspace.yaml")].find((f) => fs.existsSync(f));
  const catalog = {};
  if (!file) return catalog;
  let inside = false;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (/^catalog:\s*$/.test(line)) inside = true;
    else if (/^\S/.test(line)) inside = false;
    else if (inside) {
      const match = /^\s+"?([^"\s:]+)"?:\s*"?([^"\s#]+)"?/.exec(line);
      if (match) catalog[match[1]] = match[2];
    }
  }
  return catalog;
}

/** Their package.json with workspace/catalog versions replaced and workerbox added. */
function rewriteManifest(examples, tarball) {
  const catalog = readCatalog(examples);
  const file = path.join(examples, "package.json");
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
  const devDependencies = {};
  for (const [name, version] of Object.entries(pkg.devDependencies ?? {})) {
    if (DROPPED.has(name)) continue;
    if (PINNED[name]) devDependencies[name] = PINNED[name];
    else if (/^catalog:(?:default)?$/.test(version) && catalog[name]) devDependencies[name] = catalog[name];
    else if (/^(?:workspace|catalog):/.test(version)) continue;
    else devDependencies[name] = version;
  }
  devDependencies.workerbox = `file:${tarball}`;
  const next = { name: pkg.name, private: true, type: pkg.type, devDependencies, overrides: { vite: PINNED.vite } };
  fs.writeFileSync(file, JSON.stringify(next, null, 2));
  return next;
}

/** The Vitest configs to run: each project's vitest*.config*.ts (misc has several). */
function configs(examples, only) {
  const found = [];
  for (const entry of fs.readdirSync(examples, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || entry.name === "node_modules" || (only && !only.has(entry.name))) continue;
    const dir = path.join(examples, entry.name);
    for (const name of fs.readdirSync(dir).sort()) {
      if (/^vitest\..*config\.[cm]?ts$/.test(name) || /^vitest\.config\.[cm]?ts$/.test(name)) found.push({ project: entry.name, dir, config: path.join(dir, name) });
    }
  }
  return found;
}

/** The first line of the first failure message (or the run's most telling error line). */
function firstFailure(report, output) {
  for (const file of report?.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status === "failed" && test.failureMessages?.length) return test.failureMessages[0].split("\n")[0];
    }
    if (file.status === "failed" && file.message) return file.message.split("\n")[0];
  }
  const lines = output.replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim());
  // The cause beats the pool's "Failed to start" wrapper; a named error beats a bare one.
  return lines.find((l) => l.startsWith("Caused by:")) ?? lines.find((l) => /^(?:\w+Error|Error)(?: \[\w+\])?: /.test(l) && !l.includes("[vitest-pool]")) ?? lines.find((l) => /Error|error:/.test(l));
}

async function runConfig(vitest, { dir, config }, work, index) {
  const outputFile = path.join(work, `report-${index}.json`);
  const started = performance.now();
  // As `npm test` runs it: the installed binaries (wrangler, which some globalSetup calls) on PATH.
  const bin = path.join(vitest, "..", "..", ".bin");
  const result = await run([process.execPath, vitest, "run", "--root", dir, "--config", config, "--reporter=json", "--reporter=default", `--outputFile.json=${outputFile}`], dir, { timeout: RUN_TIMEOUT_MS, allowFailure: true, env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` } });
  const seconds = (performance.now() - started) / 1000;
  const report = fs.existsSync(outputFile) ? JSON.parse(fs.readFileSync(outputFile, "utf8")) : null;
  const output = `${result.stdout}\n${result.stderr}`;
  // Vitest's own stop, before any pool starts: the config's include matches no file.
  // (Vitest says so also when a globalSetup failed first: that is an error, not this.)
  const noFiles = /No test files found/.test(output) && !/Unhandled Error/.test(output) ? output.replace(/\x1b\[[0-9;]*m/g, "").match(/include: (.*)/)?.[1].trim() ?? "?" : undefined;
  return {
    noFiles,
    passed: report?.numPassedTests ?? 0,
    failed: report?.numFailedTests ?? 0,
    skipped: (report?.numPendingTests ?? 0) + (report?.numTodoTests ?? 0),
    total: report?.numTotalTests ?? 0,
    failedFiles: report?.numFailedTestSuites ?? 0,
    ok: result.code === 0,
    timedOut: result.killed,
    seconds,
    error: result.code === 0 ? "" : noFiles !== undefined ? `no test files (Vitest's own stop, whatever the pool: include ${noFiles})` : (result.killed ? `timed out after ${RUN_TIMEOUT_MS / 1000} s` : (firstFailure(report, output) ?? `exit ${result.code}`)),
  };
}

function table(rows) {
  const header = ["project (config)", "passed", "failed", "skipped", "total", "s", "result / first failure"];
  const lines = rows.map((r) => [r.name, String(r.passed), String(r.failed), String(r.skipped), String(r.total), r.seconds.toFixed(1), r.ok ? "pass" : `FAIL: ${(r.error ?? "").slice(0, 140)}`]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (i === 6 ? 0 : l[i].length))));
  const format = (cells) => `| ${cells.map((c, i) => (i === 6 ? c : c.padEnd(widths[i]))).join(" | ")} |`;
  return [format(header), `|${widths.map((w, i) => "-".repeat(i === 6 ? 24 : w + 2)).join("|")}|`, ...lines.map(format)].join("\n");
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-vitest-examples-"));
  try {
    const examples = await copyExamples(path.resolve(args.from), work);
    const swapped = swapImports(examples);
    PINNED.wrangler = (await wranglerForThisNode(work)) ?? PINNED.wrangler;
    const tarball = await packWorkerbox(work);
    const pkg = rewriteManifest(examples, tarball);
    // What the registry lacks: built from its source when a mirror of it is at hand.
    for (const name of Object.keys(FROM_SOURCE)) {
      if (!(name in pkg.devDependencies)) continue;
      const view = await run([npm, "view", name, "version"], work, { allowFailure: true });
      if (view.code === 0 && view.stdout.trim() !== "") continue;
      const mirror = findMirror(args.mirrors, FROM_SOURCE[name].repo);
      if (!mirror) {
        console.error(`${name} is not in the npm registry, and there is no mirror of github.com/${FROM_SOURCE[name].repo} under ${args.mirrors ?? "(no --mirrors)"}: left out`);
        continue;
      }
      const built = await buildFromSource(name, mirror, work);
      pkg.devDependencies[name] = `file:${built.tarball}`;
      console.error(`${name} is not in the npm registry: built from ${built.commit} with esbuild`);
    }
    fs.writeFileSync(path.join(examples, "package.json"), JSON.stringify(pkg, null, 2));
    console.error(`examples in ${examples}: imports changed in ${swapped} files; installing ${Object.keys(pkg.devDependencies).length} packages…`);
    const installStarted = performance.now();
    // The monorepo installs with pnpm, which does not hold peer ranges against each other as npm
    // does. A package the registry does not have is left out (and named): the projects that
    // import it fail on that.
    const missing = [];
    for (;;) {
      const result = await run([npm, "install", "--prefer-offline", "--legacy-peer-deps", "--no-audit", "--no-fund", "--loglevel=error"], examples, { timeout: 900_000, allowFailure: true });
      if (result.code === 0) break;
      const notFound = /'(@?[^@'\s]+)@[^'\s]*' (?:is not in this registry|could not be found)/.exec(result.stderr);
      const name = notFound && decodeURIComponent(notFound[1]);
      if (!name || !(name in pkg.devDependencies) || missing.length > 10) throw new Error(`npm install failed:\n${result.stderr}`);
      missing.push(name);
      delete pkg.devDependencies[name];
      fs.writeFileSync(path.join(examples, "package.json"), JSON.stringify(pkg, null, 2));
    }
    if (missing.length > 0) console.error(`not in the registry, left out: ${missing.join(", ")}`);
    console.error(`installed in ${((performance.now() - installStarted) / 1000).toFixed(0)} s`);
    await experimentalConfigHelpers(examples, path.resolve(args.from), work);
    const vitest = path.join(examples, "node_modules", "vitest", "vitest.mjs");
    const rows = [];
    const list = configs(examples, args.only);
    for (const [index, entry] of list.entries()) {
      const name = path.basename(entry.config) === "vitest.config.ts" ? entry.project : `${entry.project} (${path.basename(entry.config)})`;
      const row = { name, ...(await runConfig(vitest, entry, work, index)) };
      console.error(`${row.ok ? "pass" : "FAIL"} ${name}: ${row.passed}/${row.total} in ${row.seconds.toFixed(1)} s${row.ok ? "" : ` — ${row.error}`}`);
      rows.push(row);
    }
    const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
    console.log(table(rows));
    const empty = rows.filter((r) => r.noFiles !== undefined).length;
    console.log(`\n${rows.filter((r) => r.ok).length}/${rows.length} configs pass${empty ? ` (${empty} with no test files)` : ""}; tests: ${sum("passed")} passed, ${sum("failed")} failed, ${sum("skipped")} skipped of ${sum("total")}`);
  } finally {
    if (args.keep) console.error(`kept ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error.stack ?? error);
  process.exit(1);
});
