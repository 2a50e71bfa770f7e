// workerbox/vitest in every node_modules layout package managers make: a small Workers project
// (__test__/fixtures/vitest-layouts: SELF, a unit-style call of the worker, KV, vi.fn, an inline
// snapshot, two test files) installs workerbox from `npm pack` of this checkout, with Vitest and
// Vite from the npm registry, and its suite passes under
//   - npm (flat, hoisted folders),
//   - pnpm (symlinks into node_modules/.pnpm), with shamefully-hoist, and with node-linker=hoisted,
//   - Yarn 1 (its node_modules linker),
//   - npm workspaces, the worker importing a linked workspace package,
//   - npm link: workerbox a symlink to a folder with its own dependencies and its own Vitest, as a
//     development checkout has.
// Each layout is checked to be what it claims (symlinks where the manager makes them). pnpm and
// Yarn run through npx at pinned versions; npm's, pnpm's and Yarn's own caches make later runs
// fast (the first run downloads ~45 packages per manager).
//
// The packed tarball gets the built addon (workerbox.linux-x64-gnu.node) added beside index.js,
// where native.js looks first: published, it comes from the platform package
// (npm/linux-x64-gnu, covered by pack.test.mjs), which pnpm's strict layout would only let
// workerbox see as its own dependency.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { nodeCommand, scaled } from "./child-node.mjs";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const FIXTURE = path.join(root, "__test__", "fixtures", "vitest-layouts");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const PNPM = [npx, "--yes", "pnpm@9.15.9"];
const YARN = [npx, "--yes", "yarn@1.22.22"];
/** The versions installed (Vite pinned too: Vitest's range would take the newest). */
const VITEST = "4.1.12";
const VITE = "8.3.8";
const INSTALL_TIMEOUT_MS = 150_000;

let work;
let tarball;

function run(argv, cwd, timeout = INSTALL_TIMEOUT_MS, env = {}) {
  const [command, ...args] = argv;
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd, timeout, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false", NO_COLOR: "1", FORCE_COLOR: "0", CI: "1", ...env } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${argv.join(" ")} (in ${cwd}) failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-layouts-"));
  const packed = JSON.parse(await run([npm, "pack", "--json", "--pack-destination", work], root))[0].filename;
  const unpacked = path.join(work, "unpacked");
  fs.mkdirSync(unpacked);
  await run(["tar", "xzf", path.join(work, packed), "-C", unpacked], work);
  const addon = `workerbox.linux-${process.arch}-gnu.node`; // arm64 under npm run test:arm64
  fs.copyFileSync(path.join(root, addon), path.join(unpacked, "package", addon));
  tarball = path.join(work, "workerbox-with-addon.tgz");
  await run(["tar", "czf", tarball, "-C", unpacked, "package"], work);
});

after(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** package.json of the project: its devDependencies, and Vite pinned for every manager. */
function manifest(devDependencies, extra = {}) {
  return { name: "layout-example", private: true, type: "module", devDependencies, overrides: { vite: VITE }, resolutions: { vite: VITE }, pnpm: { overrides: { vite: VITE } }, ...extra };
}

/** A copy of the fixture project at `dir` with `pkg` as its package.json. */
function project(dir, pkg) {
  fs.cpSync(FIXTURE, dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  return dir;
}

function isLink(file) {
  return fs.lstatSync(file).isSymbolicLink();
}

/** Runs the project's suite with the Vitest installed for it; asserts all 5 tests pass. */
async function passes(dir) {
  // The Vitest the project resolves (in a workspace, the root's).
  const vitest = path.join(path.dirname(createRequire(path.join(dir, "package.json")).resolve("vitest/package.json")), "vitest.mjs");
  const outputFile = path.join(dir, "report.json");
  let output;
  try {
    output = await run(nodeCommand([vitest, "run", "--reporter=json", "--reporter=default", `--outputFile.json=${outputFile}`]).flat(), dir, scaled(90_000));
  } catch (error) {
    assert.fail(error.message);
  }
  const report = JSON.parse(fs.readFileSync(outputFile, "utf8"));
  assert.equal(report.numFailedTests, 0, output);
  assert.equal(report.numPassedTests, 5, output);
  assert.deepEqual(report.testResults.map((r) => path.basename(r.name)).sort(), ["greet.spec.ts", "index.spec.ts"], output);
}

const withWorkerbox = () => ({ vite: VITE, vitest: VITEST, workerbox: `file:${tarball}` });

test("npm: node_modules as plain folders", { timeout: scaled(240_000) }, async () => {
  const dir = project(path.join(work, "npm"), manifest(withWorkerbox()));
  await run([npm, "install", "--prefer-offline"], dir);
  assert.equal(isLink(path.join(dir, "node_modules", "vitest")), false);
  await passes(dir);
});

test("pnpm: node_modules entries are symlinks into node_modules/.pnpm", { timeout: scaled(240_000) }, async () => {
  const dir = project(path.join(work, "pnpm"), manifest(withWorkerbox()));
  await run([...PNPM, "install", "--prefer-offline"], dir);
  assert.equal(isLink(path.join(dir, "node_modules", "vitest")), true);
  assert.equal(isLink(path.join(dir, "node_modules", "workerbox")), true);
  await passes(dir);
});

test("pnpm with shamefully-hoist: Vitest's own dependencies hoisted, still symlinks", { timeout: scaled(240_000) }, async () => {
  const dir = project(path.join(work, "pnpm-shamefully-hoist"), manifest(withWorkerbox()));
  fs.writeFileSync(path.join(dir, ".npmrc"), "shamefully-hoist=true\n");
  await run([...PNPM, "install", "--prefer-offline"], dir);
  assert.equal(isLink(path.join(dir, "node_modules", "@vitest", "spy")), true);
  await passes(dir);
});

test("pnpm with node-linker=hoisted: plain folders, as npm makes them", { timeout: scaled(240_000) }, async () => {
  const dir = project(path.join(work, "pnpm-hoisted"), manifest(withWorkerbox()));
  fs.writeFileSync(path.join(dir, ".npmrc"), "node-linker=hoisted\n");
  await run([...PNPM, "install", "--prefer-offline"], dir);
  assert.equal(isLink(path.join(dir, "node_modules", "vitest")), false);
  await passes(dir);
});

test("Yarn 1: its node_modules linker", { timeout: scaled(240_000) }, async () => {
  const dir = project(path.join(work, "yarn"), manifest(withWorkerbox()));
  // A cache folder of this run's own: Yarn 1 keeps a file: tarball it has seen once under its
  // name and version and installed that copy again (an earlier build, another platform's addon),
  // even after `yarn cache clean workerbox`.
  await run([...YARN, "install", "--non-interactive", "--no-progress", "--cache-folder", path.join(work, "yarn-cache")], dir);
  assert.ok(fs.existsSync(path.join(dir, "yarn.lock")));
  await passes(dir);
});

test("npm workspaces: the worker imports a linked workspace package; Vitest and workerbox hoisted to the workspace root", { timeout: scaled(240_000) }, async () => {
  const dir = path.join(work, "workspaces");
  fs.mkdirSync(path.join(dir, "packages", "shared"), { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "workspace-root", private: true, workspaces: ["packages/*"], overrides: { vite: VITE } }));
  fs.writeFileSync(path.join(dir, "packages", "shared", "package.json"), JSON.stringify({ name: "@layout/shared", version: "1.0.0", type: "module", exports: "./index.js" }));
  fs.writeFileSync(path.join(dir, "packages", "shared", "index.js"), `export const punctuation = "!";\n`);
  const app = project(path.join(dir, "packages", "app"), manifest(withWorkerbox(), { dependencies: { "@layout/shared": "1.0.0" } }));
  const greet = path.join(app, "src", "greet.ts");
  fs.writeFileSync(greet, `import { punctuation } from "@layout/shared";\n${fs.readFileSync(greet, "utf8").replace("${name}!", "${name}${punctuation}")}`);
  await run([npm, "install", "--prefer-offline"], dir);
  assert.equal(isLink(path.join(dir, "node_modules", "@layout", "shared")), true);
  assert.ok(fs.existsSync(path.join(dir, "node_modules", "vitest")));
  await passes(app);
});

test("npm link: workerbox is a symlink to a folder with its own dependencies and its own Vitest", { timeout: scaled(240_000) }, async () => {
  const dir = path.join(work, "link");
  const checkout = path.join(dir, "workerbox");
  fs.mkdirSync(checkout, { recursive: true });
  await run(["tar", "xzf", tarball, "-C", checkout, "--strip-components=1"], dir);
  await run([npm, "install", "--prefer-offline", "--omit=dev"], checkout);
  await run([npm, "install", "--prefer-offline", "--no-save", `vitest@${VITEST}`, `vite@${VITE}`], checkout);
  const app = project(path.join(dir, "app"), manifest({ vite: VITE, vitest: VITEST }));
  await run([npm, "install", "--prefer-offline"], app);
  // `npm link <folder>` links it into a global prefix and node_modules/workerbox to that.
  const prefix = path.join(dir, "global");
  fs.mkdirSync(path.join(prefix, "lib"), { recursive: true });
  fs.mkdirSync(path.join(prefix, "bin"), { recursive: true });
  await run([npm, "link", checkout], app, INSTALL_TIMEOUT_MS, { NPM_CONFIG_PREFIX: prefix });
  assert.equal(isLink(path.join(app, "node_modules", "workerbox")), true);
  assert.equal(fs.realpathSync(path.join(app, "node_modules", "workerbox")), fs.realpathSync(checkout));
  assert.ok(fs.existsSync(path.join(checkout, "node_modules", "vitest")), "the linked folder has its own Vitest");
  await passes(app);
});
