// workerbox/vitest: a drop-in for @cloudflare/vitest-pool-workers (Vitest 4). `cloudflareTest()`
// is the Vite plugin that makes a project's tests run inside workerbox isolates (the pool in
// ./pool.js) and serves the `cloudflare:test` module (./cloudflare-test.mjs); `readD1Migrations()`
// reads a migrations folder for `applyD1Migrations()` inside the tests.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { cloudflarePool } = require("./pool.js");
const { readD1Migrations } = require("../d1.js");
const { moduleRulesPlugin } = require("./module-rules.js");
const { ISOLATED_STORAGE_SETUP } = require("./isolated-storage.js");
const { parseOnCallingThread } = require("./parse-memory.js");

const TEST_MODULE = "\0workerbox:cloudflare-test";
const TEST_MODULE_FILE = path.join(__dirname, "cloudflare-test.mjs");
const SNAPSHOT_ENVIRONMENT = path.join(__dirname, "snapshot.mjs");
/** Resolution as wrangler bundles for Workers: these conditions and fields, never Node's. */
const CONDITIONS = ["workerd", "worker", "module", "browser"];
const MAIN_FIELDS = ["browser", "module", "jsnext:main", "jsnext"];

function include(list, items) {
  for (const item of items) if (!list.includes(item)) list.push(item);
}

/** The Vite plugin: `plugins: [cloudflareTest({ wrangler: { configPath } })]`. */
function cloudflareTest(options = {}) {
  /** The running Vitest's dist folder (from configureVitest). */
  let distPath;
  let root = process.cwd();
  /** Vite's mode: what a cloudflare.config.ts function gets as ctx.mode (experimental.newConfig). */
  let mode;
  // Wrangler's module rules (Text, Data, CompiledWasm), with the wrangler file's own `rules`.
  const rules = moduleRulesPlugin(() => projectRules(options, root), () => root);
  return {
    name: "workerbox:vitest",
    // Before Vite's own plugins: a `.wasm` the rules load is not Vite's asset.
    enforce: "pre",
    configResolved(config) {
      root = config.root;
      mode = config.mode;
    },
    configureVitest(context) {
      distPath = context.vitest.distPath;
      // Vite's parses of the tests' modules on the calling thread: their memory is given back then
      // (lib/vitest/parse-memory.js).
      parseOnCallingThread();
      // The runners' threads give their freed memory back as they go: glibc otherwise keeps the
      // free top of each thread's arena, 0.5–3.5 MB apiece, for the rest of the run (the addon's
      // trimFreedMemoryEagerly(); docs/benchmarks.md, the Vitest section).
      require("../load-native.js").trimFreedMemoryEagerly();
      context.project.config.poolRunner = cloudflarePool(options);
      context.project.config.pool = "workerbox";
      context.project.config.snapshotEnvironment = SNAPSHOT_ENVIRONMENT;
      // isolatedStorage's hooks (registered only with the option on), before the project's own.
      context.project.config.setupFiles = [ISOLATED_STORAGE_SETUP, ...(context.project.config.setupFiles ?? []).filter((file) => file !== ISOLATED_STORAGE_SETUP)];
    },
    config(config) {
      config.resolve ??= {};
      config.resolve.conditions ??= [];
      config.resolve.mainFields ??= [];
      config.ssr ??= {};
      config.test ??= {};
      config.test.server ??= {};
      config.test.server.deps ??= {};
      // Every dependency goes through Vite, so that it is resolved for Workers and evaluated in
      // the isolate by Vitest's module runner.
      config.test.server.deps.inline = true;
      config.resolve.conditions = config.resolve.conditions.filter((c) => c !== "node");
      include(config.resolve.conditions, CONDITIONS);
      include(config.resolve.mainFields, MAIN_FIELDS);
      config.ssr.target = "webworker";
      // Tests are transformed by Vite's server-side environment, whose own conditions would pick
      // packages' Node builds.
      config.ssr.resolve ??= {};
      config.ssr.resolve.conditions = [...new Set([...(config.ssr.resolve.conditions ?? []).filter((c) => c !== "node"), ...CONDITIONS, "development|production"])];
      config.ssr.resolve.externalConditions = [...new Set([...(config.ssr.resolve.externalConditions ?? []).filter((c) => c !== "node"), ...CONDITIONS])];
    },
    resolveId(id, importer) {
      if (id === "cloudflare:test") return TEST_MODULE;
      // The snapshot environment's Vitest is the running one (its dist folder), not one resolved
      // from workerbox's own location (another copy under npm link, pnpm or a workspace).
      if (id === "vitest/runtime" && importer === SNAPSHOT_ENVIRONMENT && distPath) return path.join(distPath, "runtime.js");
      if (id === "vitest" && importer === ISOLATED_STORAGE_SETUP && distPath) return path.join(distPath, "index.js");
    },
    async load(id) {
      if (id === TEST_MODULE) {
        const source = fs.readFileSync(TEST_MODULE_FILE, "utf8");
        // As Cloudflare's pool: the worker's main module is imported with cloudflare:test, so it
        // runs before the test file's body (a test file it imports registers its suites then,
        // not inside a test), and Vitest re-runs the tests when it changes.
        const main = await mainModule(options, root, mode);
        return main ? `${source}\nimport ${JSON.stringify(main)};\n` : source;
      }
      return rules.load(id);
    },
  };
}

/**
 * A Pages project's ASSETS binding for `miniflare.serviceBindings` (as Cloudflare's pool's):
 * `directory`'s files served as Pages serves them (a 404.html for missing files, else the
 * single-page application's index.html).
 */
async function buildPagesASSETSBinding(directory) {
  const { createAssetHandler } = require("../project/assets.js");
  const notFoundHandling = fs.existsSync(path.join(directory, "404.html")) ? "404-page" : "single-page-application";
  const assets = createAssetHandler({ directory: path.resolve(directory), notFoundHandling });
  return (request) => assets.fetch(request);
}

/** The `rules` of the project's wrangler file (none without one, or when it cannot be read). */
function projectRules(options, root) {
  return projectConfig(options, root)?.rules ?? [];
}

/**
 * The worker's main module file (`main` of cloudflareTest(), else of the wrangler file; one that
 * starts with "/" and is no file there, under the Vite root), or undefined when there is none yet
 * (a globalSetup may still be building it: the pool waits for it then).
 */
async function mainModule(options, root, mode) {
  if (typeof options === "function") return undefined;
  const config = options.experimental?.newConfig ? await newProjectConfig(options, root, mode) : projectConfig(options, root);
  const main = typeof options.main === "string" ? options.main : config?.main;
  if (typeof main !== "string") return undefined;
  const resolved = typeof options.main === "string" ? path.resolve(root, main) : config.mainFile;
  for (const file of [resolved, main.startsWith("/") ? path.join(root, main) : null]) if (file && fs.existsSync(file)) return file;
  return undefined;
}

/** The project's cloudflare.config.ts (experimental.newConfig) as read, or undefined when it cannot be (the pool reports why). */
async function newProjectConfig(options, root, mode) {
  const { readCloudflareConfig, cloudflareConfigPath } = require("../project/config-cloudflare.js");
  try {
    return await readCloudflareConfig(cloudflareConfigPath(root, options.experimental.newConfig), { mode, requireMain: false, requireWorker: false, requireAssetsDirectory: false });
  } catch {
    return undefined;
  }
}

/** The project's wrangler file as read (undefined without one, or when it cannot be read: the pool reports that). */
function projectConfig(options, root) {
  const { readConfig, CONFIG_FILES } = require("../project/config.js");
  // A worker in cloudflare.config.ts (experimental.newConfig) has no wrangler file, nor its `rules`.
  if (typeof options !== "function" && options.experimental?.newConfig) return undefined;
  // Pool options given as a function are known only when the pool starts: the root's file then.
  const wrangler = typeof options === "function" ? undefined : options.wrangler;
  const configPath = wrangler?.configPath ? path.resolve(root, wrangler.configPath) : CONFIG_FILES.map((f) => path.join(root, f)).find((f) => fs.existsSync(f));
  if (!configPath) return undefined;
  try {
    return readConfig(configPath, { env: wrangler?.environment, requireMain: false, requireWorker: false, requireAssetsDirectory: false });
  } catch {
    return undefined;
  }
}

// The Vitest 3 form (@cloudflare/vitest-pool-workers/config): defineWorkersConfig, defineWorkersProject.
const { defineWorkersConfig, defineWorkersProject } = require("./config-v3.js");

module.exports = { cloudflareTest, cloudflarePool, readD1Migrations, buildPagesASSETSBinding, defineWorkersConfig, defineWorkersProject };
