// Runner isolates of the Vitest integration: each is a workerbox worker running
// lib/vitest/runner.mjs with the bindings of the project's wrangler configuration (fresh in-memory
// storage, so per test file), its auxiliary workers, a service binding back to the pool (snapshots,
// Durable Object helpers, Workflow introspection), and the WebSocket Vitest talks over. (Starting
// the next file's runner ahead was measured and dropped: on two cores it slowed whole runs by
// 15–25%.)
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { createLoader, resolveBare, unenvPolyfills } = require("./loader.js");
const { startAuxiliaryWorkers } = require("./auxiliary.js");
const { guessExports } = require("./exports.js");
const { addMiniflareBindings } = require("./miniflare-options.js");
const { makeRateLimiters, makePipelines } = require("./local-bindings.js");
const { workflowHost } = require("./workflow-host.js");
const { isolatedStorageHost, isolatedStorageOption } = require("./isolated-storage.js");
const { coverageHost, coverageWorkerOptions } = require("./coverage.js");
const { inspectorOption } = require("./inspect.js");
const { runnerStarted, runnerEnded } = require("./idle-gc.js");

const RUNNER = path.join(__dirname, "runner.mjs");
/** Node's globals for the runner's own modules (see lib/vitest/loader.js). */
const NODE_GLOBALS = path.join(__dirname, "node-globals.mjs");
/**
 * The runner worker's main module: it re-exports runner.mjs, which (with everything it imports)
 * the host loader gives, so that it is a trusted module — it imports node: modules and has
 * Node's globals whatever the project's compatibility date and flags.
 */
const ENTRY = `export * from ${JSON.stringify(RUNNER)};\nexport { default } from ${JSON.stringify(RUNNER)};\n`;
const HOST_BINDING = "__WORKERBOX_VITEST_HOST";
/** How long a missing main module is waited for (a globalSetup's build may be writing it). */
const MAIN_WAIT_MS = 10_000;

/**
 * The runner's way back to Node (a service binding): snapshot files, and test files that inline
 * snapshots rewrite, are read and written here — only under the project's root.
 */
function hostService(root, bindings, reset, worker) {
  const fsp = fs.promises;
  const workflows = workflowHost(bindings);
  const coverage = coverageHost(worker);
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/coverage/")) return coverage(url.pathname.slice("/coverage/".length));
    if (url.pathname.startsWith("/durable/")) return durableCall(url, bindings);
    if (url.pathname.startsWith("/workflow/")) return workflows(request, url.pathname.slice("/workflow/".length));
    if (url.pathname === "/reset") {
      reset();
      return Response.json(true);
    }
    const file = path.resolve(url.searchParams.get("path") ?? "");
    if (url.pathname !== "/snapshot" || (file !== root && !file.startsWith(root + path.sep))) {
      return new Response(`not a path under the project root: ${file}`, { status: 403 });
    }
    switch (request.method) {
      case "GET":
        return fs.existsSync(file) ? new Response(await fsp.readFile(file)) : new Response(null, { status: 404 });
      case "POST":
        await fsp.mkdir(file, { recursive: true });
        return new Response(null, { status: 204 });
      case "PUT":
        await fsp.writeFile(file, Buffer.from(await request.arrayBuffer()));
        return new Response(null, { status: 204 });
      case "DELETE":
        await fsp.rm(file, { force: true });
        return new Response(null, { status: 204 });
      default:
        return new Response(null, { status: 405 });
    }
  };
}

/** cloudflare:test's Durable Object helpers that need the namespace in Node (lib/durable.js). */
async function durableCall(url, bindings) {
  const params = url.searchParams;
  const namespaces = Object.entries(bindings).filter(([, b]) => typeof b?.ids === "function" && typeof b?.evict === "function" && typeof b?.className === "string");
  const found = params.has("binding") ? namespaces.find(([name]) => name === params.get("binding")) : namespaces.find(([, b]) => b.className === params.get("className"));
  if (!found) return new Response(`no Durable Object binding for ${params}`, { status: 404 });
  const namespace = found[1];
  if (url.pathname === "/durable/ids") return Response.json(await namespace.ids());
  if (url.pathname === "/durable/evict") return Response.json(await namespace.evict(params.get("id")));
  if (url.pathname === "/durable/evict-all") return Response.json(await namespace.evict());
  return new Response(`unknown call ${url.pathname}`, { status: 404 });
}

/**
 * What the isolate gets from the project: bindings, compatibility settings and the main module,
 * from the wrangler configuration (`wrangler.configPath`, else one in the root, if any), with
 * `miniflare.bindings` over its vars and `main` over its main.
 */
async function projectSettings(options, root, warn, log, mode) {
  // experimental.newConfig: the worker is described by a cloudflare.config.ts instead.
  const newConfig = newConfigPath(options, root);
  const extra = options.miniflare ?? {};
  // Auxiliary workers first: the main worker's service bindings name them.
  const auxiliary = await startAuxiliaryWorkers(extra.workers, root, log);
  const configPath = newConfig ?? (options.wrangler?.configPath ? path.resolve(root, options.wrangler.configPath) : ["wrangler.jsonc", "wrangler.json", "wrangler.toml"].map((f) => path.join(root, f)).find((f) => fs.existsSync(f)));
  let bindings = {};
  /** The wrangler file's `define`: globals in the isolate, as Cloudflare's pool sets them. */
  let defines = {};
  let compatibilityDate;
  let compatibilityFlags = [];
  /** The worker's own Durable Object classes (bindings and migrations): ctx.exports namespaces. */
  const durableClasses = new Set();
  let selfName = extra.name;
  /** What cloudflare:test's reset() clears in Node (rate limiters). */
  const resetters = [];
  /** Queues by name: a miniflare.queueProducers binding to a queue of the wrangler file shares it. */
  const queues = new Map();
  /** Workers AI, Vectorize and Images: made in the isolate (lib/vitest/remote-bindings.mjs). */
  const remoteOnly = [];
  let main = options.main ? await mainFile(options.main, path.resolve(root, options.main), root, "cloudflareTest({ main })") : undefined;
  if (configPath) {
    const project = await loadTestProject(configPath, options, extra, auxiliary, newConfig && { mode }).catch(async (error) => {
      await auxiliary.dispose();
      throw error;
    });
    // A Durable Object class of an auxiliary worker (`script_name` naming one of miniflare.workers):
    // that worker's objects, as Miniflare binds them.
    for (const object of project.config.bindings?.durableObjects ?? []) {
      const home = object.scriptName && object.scriptName !== project.config.name ? auxiliary.services[object.scriptName] : undefined;
      if (home === undefined) continue;
      project.bindings[object.binding] = require("../../index.js").durableObject(object.className, { worker: home, ...auxiliarySql(extra.workers, object.scriptName, object.className) });
      project.unsupported = project.unsupported.filter((item) => !(item.key === "durable_objects.bindings" && item.binding === object.binding));
    }
    for (const item of project.unsupported) warn(`${item.key}: ${item.binding} is not available in workerbox tests (${item.reason})`);
    bindings = project.bindings;
    defines = project.config.define ?? {};
    for (const producer of project.config.bindings?.queues?.producers ?? []) if (bindings[producer.binding]) queues.set(producer.queue, bindings[producer.binding]);
    compatibilityDate = project.config.compatibilityDate;
    compatibilityFlags = project.config.compatibilityFlags ?? [];
    selfName ??= project.config.name;
    // A service binding naming the worker itself (its own named entrypoints): to this worker.
    const { selfService } = require("../bindings.js");
    for (const entry of project.config.bindings?.services ?? []) {
      if (entry.service === project.config.name && auxiliary.services[entry.service] === undefined) bindings[entry.binding] = selfService(entry.entrypoint);
    }
    for (const object of project.config.bindings?.durableObjects ?? []) if (!object.scriptName) durableClasses.add(object.className);
    for (const m of project.config.migrations ?? []) for (const name of [...m.newClasses, ...m.newSqliteClasses, ...m.renamedClasses.map((r) => r.to)]) durableClasses.add(name);
    const raw = project.config.raw ?? rawConfig(configPath);
    for (const name of declaredDurableExports(raw)) durableClasses.add(name);
    // Rate limiters (`ratelimits`), counted in Node; cloudflare:test's reset() clears them.
    const limiters = makeRateLimiters(raw.ratelimits, require("../../index.js"));
    Object.assign(bindings, limiters.bindings, makePipelines(raw.pipelines, require("../../index.js")));
    resetters.push(limiters.reset);
    remoteOnly.push(...remoteOnlyBindings(raw));
    if (project.config.main !== undefined) main ??= await mainFile(project.config.main, project.config.mainFile, root, `${path.basename(configPath)}: ${newConfig ? "entrypoint" : "main"}`);
  }
  if (options.remoteBindings) warn("remoteBindings is ignored: workerbox runs every binding locally");
  // Bindings in Miniflare's option names (kvNamespaces, d1Databases, …), over the wrangler file's.
  const { selfService } = require("../bindings.js");
  addMiniflareBindings(bindings, extra, { where: "cloudflareTest: miniflare", api: require("../../index.js"), services: (name) => auxiliary.services[name], selfName, selfService, durableClasses, queues });
  compatibilityDate = extra.compatibilityDate ?? compatibilityDate;
  // The project's own flags, as they are: what the runner itself needs of Node's modules and
  // globals it gets as a trusted module (startRunner), not through the user's flags.
  // miniflare.compatibilityFlags add to the wrangler file's, as Miniflare's mergeWorkerOptions
  // (which Cloudflare's pool uses) joins arrays.
  compatibilityFlags = [...new Set([...compatibilityFlags, ...(extra.compatibilityFlags ?? [])])];
  // An opt-out of nodejs_compat_v2 is dropped, as Cloudflare's pool drops it (its runner needs
  // v2): tests written for that pool expect v2's globals (`process`, `Buffer`) then.
  compatibilityFlags = compatibilityFlags.filter((flag) => flag !== "no_nodejs_compat_v2");
  const outbound = typeof extra.outboundService === "function" ? extra.outboundService : undefined;
  return { bindings, compatibilityDate, compatibilityFlags, main, outbound, auxiliary, durableClasses: [...durableClasses], remoteOnly, defines, reset: () => resetters.forEach((reset) => reset()) };
}

/**
 * `experimental.newConfig` (true, or `{ configPath }` relative to the root): the path of the
 * cloudflare.config.ts to read, or undefined when the option is off. Checked as Cloudflare's pool
 * checks it: not with `wrangler`, and the file must exist.
 */
function newConfigPath(options, root) {
  const option = options.experimental?.newConfig;
  if (option === undefined || option === false) return undefined;
  const where = "cloudflareTest({ experimental: { newConfig } })";
  const { cloudflareConfigPath, NEW_CONFIG_FILE } = require("../project/config-cloudflare.js");
  const valid = option === true || (option !== null && typeof option === "object" && !Array.isArray(option) && Object.keys(option).every((k) => k === "configPath") && (option.configPath === undefined || typeof option.configPath === "string"));
  if (!valid) throw new TypeError(`${where}: must be true, or { configPath: "<path to ${NEW_CONFIG_FILE}>" } (got ${JSON.stringify(option)})`);
  if (options.wrangler !== undefined) throw new TypeError(`${where}: \`wrangler\` cannot be used together with \`experimental.newConfig\`; configure the worker in ${NEW_CONFIG_FILE} instead`);
  const file = cloudflareConfigPath(root, option);
  if (!fs.existsSync(file)) throw new Error(`${where} is on but there is no ${path.basename(file)} at ${file}`);
  return file;
}

/**
 * The project of the wrangler file (or of the cloudflare.config.ts, when `newConfig` is
 * `{ mode }`: Vite's mode, config functions' ctx.mode), for tests: in-memory storage, no bundle,
 * and `miniflare.queueConsumers` settings (such as a shorter maxBatchTimeout) over its consumers'.
 */
async function loadTestProject(configPath, options, extra, auxiliary, newConfig) {
  const { readConfig } = require("../project/config.js");
  const { readCloudflareConfig } = require("../project/config-cloudflare.js");
  const { projectFromConfig } = require("../project/load.js");
  // An `assets` table without `directory` (another tool serves the assets) is skipped, as Cloudflare's pool does.
  const settings = { env: options.wrangler?.environment, requireMain: false, requireWorker: false, requireAssetsDirectory: false };
  const config = newConfig ? await readCloudflareConfig(configPath, { ...settings, mode: newConfig.mode }) : readConfig(configPath, settings);
  const overrides = Array.isArray(extra.queueConsumers) ? {} : (extra.queueConsumers ?? {});
  for (const consumer of config.bindings.queues.consumers) {
    const override = overrides[consumer.queue];
    if (override === null || typeof override !== "object") continue;
    for (const key of ["maxBatchSize", "maxBatchTimeout", "maxRetries", "retryDelay", "deadLetterQueue"]) if (override[key] !== undefined) consumer[key] = override[key];
  }
  return projectFromConfig(config, { persistTo: false, build: false, migrate: false, services: auxiliary.services });
}

/** `{ sql: false }` when auxiliary worker `name` declares class `className` with `useSQLite: false`, else {}. */
function auxiliarySql(workers, name, className) {
  const entry = (Array.isArray(workers) ? workers : []).find((w) => w?.name === name);
  const declared = Object.values(entry?.durableObjects ?? {}).find((d) => (typeof d === "string" ? d : d?.className) === className);
  return declared?.useSQLite === false ? { sql: false } : {};
}

/** The wrangler file as written (for keys lib/project does not read), or {}. */
function rawConfig(configPath) {
  try {
    const text = fs.readFileSync(configPath, "utf8");
    return (configPath.endsWith(".toml") ? require("smol-toml").parse(text) : require("jsonc-parser").parse(text)) ?? {};
  } catch {
    return {};
  }
}

/** The wrangler file's `ai`, `vectorize` and `images` bindings: `[{ name, kind }]`. */
function remoteOnlyBindings(raw) {
  const list = [];
  if (typeof raw.ai?.binding === "string") list.push({ name: raw.ai.binding, kind: "ai" });
  for (const entry of Array.isArray(raw.vectorize) ? raw.vectorize : []) if (typeof entry?.binding === "string") list.push({ name: entry.binding, kind: "vectorize" });
  if (typeof raw.images?.binding === "string") list.push({ name: raw.images.binding, kind: "images" });
  return list;
}

/** Classes the wrangler file's declarative `exports` table names as Durable Objects. */
function declaredDurableExports(raw) {
  return Object.entries(raw.exports ?? {}).filter(([, value]) => value?.type === "durable-object").map(([name]) => name);
}

/**
 * The worker's main module: `resolved` (the path as wrangler resolves it), or for a `main` that
 * starts with "/" and is not a file there, the file under the Vite project's root, as Vite and
 * Cloudflare's pool read it (`main = "/worker.ts"` in a test wrangler.toml).
 */
async function mainFile(main, resolved, root, where) {
  const rooted = main.startsWith("/") ? path.join(root, main) : null;
  // A globalSetup may still be building it (a watching build that signals before it writes).
  for (const deadline = Date.now() + MAIN_WAIT_MS; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (fs.existsSync(resolved)) return resolved;
    if (rooted && fs.existsSync(rooted)) return rooted;
    if (Date.now() >= deadline) break;
  }
  throw new Error(`workerbox/vitest: ${where}: ${resolved} does not exist${rooted ? ` (nor ${rooted}, under the Vite root)` : ""}`);
}

/**
 * Starts a runner for `project`: { worker, socket (not yet accepted), auxiliary, startMs }.
 * `distPath` is the running Vitest's dist folder (the pool worker's options): its runtime is the
 * one the isolate loads, never one resolved again from the project or from workerbox.
 */
async function startRunner(project, options, distPath) {
  // Counted from here (lib/vitest/idle-gc.js collects only with no runner starting or alive).
  runnerStarted();
  try {
    return await startCounted(project, options, distPath);
  } catch (error) {
    runnerEnded();
    throw error;
  }
}

/** startRunner's work. */
async function startCounted(project, options, distPath) {
  const started = performance.now();
  const root = project.config.root;
  const warn = (text) => project.vitest.logger.warn(`[workerbox] ${text}`);
  const log = (level, message) => (level === "error" || level === "warn" ? process.stderr : process.stdout).write(`${message}\n`);
  const vitestWorker = distPath ? path.join(distPath, "worker.js") : resolveBare("vitest/worker", root, "import");
  // Vitest's module evaluator (not an export of the package): beside its worker entry, which
  // imports it as ./module-evaluator.js.
  const moduleEvaluator = vitestWorker && path.join(path.dirname(vitestWorker), "module-evaluator.js");
  if (!vitestWorker || !fs.existsSync(vitestWorker) || !fs.existsSync(moduleEvaluator)) throw new Error(`workerbox/vitest: Vitest is not installed in ${root} (it is a peer dependency: npm install --save-dev vitest)`);
  // Vite's mode (Vitest's "test" unless --mode): cloudflare.config.ts functions get it as ctx.mode.
  const settings = await projectSettings(options, root, warn, log, project.vite?.config?.mode);
  const phases = { settingsMs: performance.now() - started };
  const { createWorker, dispatch, service } = require("../../index.js");
  // Only the pool's own upgrade request starts Vitest in the runner.
  const token = require("node:crypto").randomUUID();
  // Compiled code of Vitest's runtime, the startup snapshot and what the runtime's files import
  // (lib/vitest/loader.js), kept for later runs.
  const cacheDir = path.join(root, "node_modules", ".cache", "workerbox");
  pruneOnce(cacheDir, project.vitest);
  const stats = process.env.WORKERBOX_VITEST_STATS ? { codeCache: require("../../index.js").codeCacheStats() } : null;
  let worker = null;
  const coverage = coverageWorkerOptions(project);
  try {
    worker = await createWorker({
      script: ENTRY,
      filename: path.join(__dirname, "runner-entry.mjs"),
      format: "module",
      allowEval: true,
      trustLoadedModules: true,
      unsafeExperimental: true,
      bindings: { ...settings.bindings, [HOST_BINDING]: service(hostService(path.resolve(root), settings.bindings, settings.reset, () => worker)), __WORKERBOX_VITEST_TOKEN: token },
      compatibilityDate: settings.compatibilityDate,
      compatibilityFlags: settings.compatibilityFlags,
      ...(settings.outbound ? { outbound: settings.outbound } : {}),
      loadModule: timed(createLoader({ aliases: { "workerbox-vitest:worker": vitestWorker, "workerbox-vitest:module-evaluator": moduleEvaluator, ...coverage.aliases }, cacheDir, globals: NODE_GLOBALS, polyfill: unenvPolyfills(settings.compatibilityDate, settings.compatibilityFlags) }), stats && phases),
      // V8 coverage: the inspector, for a session of the pool's (lib/vitest/coverage.js); with
      // --inspect, on Vitest's inspector port (lib/vitest/inspect.js).
      ...coverage.options,
      ...(inspectorOption(project) ? { inspector: inspectorOption(project) } : {}),
      // No bound on a binding call's wait either (Cloudflare's pool has none): a test may wait on a
      // Workflow's retry delays through the pool (cloudflare:test's waitForStepResult()).
      limits: { cpuMs: 0, wallMs: 0, waitUntilMs: 0, memoryMb: 1024, bindingMs: 0 },
      cacheDir,
      onLog: log,
    });
    phases.createMs = performance.now() - started - phases.settingsMs;
    // service_binding_extra_handlers: exports.default.scheduled()/queue() run the handlers as
    // a service binding's would (lib/vitest/runner.mjs).
    const extraHandlers = settings.compatibilityFlags.includes("service_binding_extra_handlers");
    const exports = await guessExports(settings.main, { durableClasses: settings.durableClasses, additional: options.additionalExports, vitestFile: vitestWorker, root, warn });
    const header = JSON.stringify({ cwd: root, main: settings.main, token, stats: stats !== null, extraHandlers, exports, remoteOnly: settings.remoteOnly, isolatedStorage: isolatedStorageOption(options), defines: settings.defines });
    const response = await dispatch(worker, { url: "http://workerbox-vitest/", headers: { upgrade: "websocket", "x-workerbox-vitest": header } });
    if (response.status !== 101 || !response.webSocket) throw new Error(`workerbox/vitest: the runner did not accept the connection (${response.status}: ${await response.text()})`);
    if (stats) {
      phases.upgradeMs = performance.now() - started - phases.settingsMs - phases.createMs;
      // Of which the import of Vitest's runtime inside the isolate (module loads included).
      phases.importMs = Number(response.headers.get("x-workerbox-vitest-import-ms"));
      // Process-wide counts over this start-up (another runner starting meanwhile adds to them).
      const now = require("../../index.js").codeCacheStats();
      phases.codeCache = { hits: now.hits - stats.codeCache.hits, misses: now.misses - stats.codeCache.misses };
    }
    // The calls the runner makes on its connection (lib/vitest/pool.js answers them): one round
    // trip each, lighter than a request through the host binding (isolatedStorage asks twice a test).
    const calls = { isolated: isolatedStorageHost(settings.bindings, () => worker) };
    return { worker, socket: response.webSocket, calls, auxiliary: settings.auxiliary, stores: madeStores(settings.bindings, options), startMs: performance.now() - started, phases };
  } catch (error) {
    await worker?.dispose();
    await settings.auxiliary.dispose();
    throw error;
  }
}

/** Appends `entry` to the WORKERBOX_VITEST_STATS file (bench/vitest.mjs, the pool's tests), when set. */
function recordStat(entry) {
  if (process.env.WORKERBOX_VITEST_STATS) fs.appendFileSync(process.env.WORKERBOX_VITEST_STATS, `${JSON.stringify(entry)}\n`);
}

/** The cache folders this process has pruned (or will, shortly). */
const pruned = new Set();

/**
 * Keeps a runner cache folder under its size budget as `workerbox dev` keeps its own (each edit of
 * a test or a module it imports adds entries): once per folder and process, two seconds after the
 * first runner (off the path of the first files) or when Vitest closes, whichever comes first.
 */
function pruneOnce(cacheDir, vitest) {
  if (pruned.has(cacheDir)) return;
  pruned.add(cacheDir);
  let done = false;
  const prune = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    require("../project/code-cache.js").pruneCodeCache(cacheDir);
  };
  const timer = setTimeout(prune, 2000);
  timer.unref();
  if (typeof vitest?.onClose === "function") vitest.onClose(prune);
}

/** `load`, counting its calls and the time until each answer in `phases` (when measuring). */
function timed(load, phases) {
  if (!phases) return load;
  phases.loads = 0;
  phases.loadMs = 0;
  return async (...args) => {
    const t = performance.now();
    try {
      return await load(...args);
    } finally {
      phases.loads++;
      phases.loadMs += performance.now() - t;
    }
  };
}

/**
 * The embedded stores (KV, R2, D1: native SQLite databases) this runner's file made: not one the
 * user handed in through `miniflare.bindings`, which may outlive the file.
 */
function madeStores(bindings, options) {
  const given = new Set(Object.values(options.miniflare?.bindings ?? {}));
  return Object.values(bindings)
    .filter((binding) => !given.has(binding) && typeof binding?.store?.close === "function")
    .map((binding) => binding.store);
}

/**
 * Ends a runner: its isolate, its auxiliary workers, and then the in-memory stores its file made
 * (closed now, so that their memory is given back at once: a store's JS handle would keep it
 * until Node's garbage collector runs, which does not know its size).
 */
async function disposeRunner(runner) {
  try {
    await runner.worker.dispose();
    await runner.auxiliary.dispose();
  } finally {
    for (const store of runner.stores ?? []) store.close();
    // With no runner left, one collection of Node's heap 200 ms later (lib/vitest/idle-gc.js).
    runnerEnded();
  }
}

module.exports = { startRunner, disposeRunner, recordStat, HOST_BINDING };
