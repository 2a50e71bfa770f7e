"use strict";
// loadProject(): turns a project's checked configuration (config.js) and its bundle (bundle.js)
// into createWorker() options with real bindings — vars and secrets, KV namespaces and R2
// buckets as embedded stores persisted where wrangler keeps local state (`.wrangler/state/v3`, see
// wrangler-state.js: D1, KV, R2 and Durable Objects in wrangler's own files, queues and workflows
// under its `workerbox/`), service bindings, the assets
// binding — and lists every binding workerbox cannot provide yet. Binding kinds go through one
// table of factories (BINDING_FACTORIES) so D1, queues and Durable Objects are wired as soon as
// index.js exports their factories.

const fs = require("node:fs");
const path = require("node:path");
const { ConfigError } = require("./config.js");
const { bundle, incrementalBundles, mapError } = require("./bundle.js");
const { identityMapper } = require("../sourcemap.js");
const { bundleCache } = require("./bundle-cache.js");
const { createAssetHandler } = require("./assets.js");
const wranglerState = require("./wrangler-state.js");
const { wranglerKv } = require("./wrangler-kv.js");
const { LOCAL_BINDING_FACTORIES } = require("./local-bindings.js");
const { mark } = require("./timing.js");

const { safeName, ownDir } = wranglerState;

/**
 * Each binding kind of the config: the workerbox factory it needs (an export of index.js), and
 * how one config entry becomes a binding with it. `state` is the persistence folder (or null: in
 * memory). A kind whose factory index.js does not export is reported as unsupported.
 */
const BINDING_FACTORIES = {
  kv_namespaces: {
    factory: "kv",
    list: (b) => b.kv,
    // Shared with wrangler: Miniflare's own index and blob files (wrangler-kv.js).
    create: (kv, entry, state) => {
      if (!state) return kv();
      const id = entry.localId ?? entry.id;
      return wranglerKv(kv, state, id);
    },
  },
  r2_buckets: {
    factory: "storage",
    list: (b) => b.r2,
    create: (storage, entry, state) => (state ? require("./wrangler-r2.js").wranglerR2(storage, state, entry.localBucket ?? entry.bucket) : storage()),
  },
  d1_databases: {
    factory: "d1",
    list: (b) => b.d1,
    // wrangler's own database file (d1/miniflare-D1DatabaseObject/<id>.sqlite), shared with it.
    create: (d1, entry, state) => d1(state ? { dir: wranglerState.ensureD1File(state, entry) } : {}),
  },
  "queues.producers": {
    factory: "queue",
    list: (b) => b.queues.producers,
    // A queue this project also consumes gets the consumer's settings; the worker given the
    // binding is then its consumer (queue()'s default), as when producer and consumer are one worker.
    create: (queue, entry, state, config, made) => {
      const consumer = config.bindings.queues.consumers.find((c) => c.queue === entry.queue);
      const dir = (name) => (state ? { dir: path.join(ownDir(state), "queues", safeName(name)) } : {});
      const options = { name: entry.queue, ...dir(entry.queue), deliveryDelay: entry.deliveryDelay };
      if (consumer) {
        for (const key of ["maxBatchSize", "maxBatchTimeout", "maxRetries", "retryDelay"]) if (consumer[key] !== undefined) options[key] = consumer[key];
        if (consumer.deadLetterQueue) {
          made.deadLetters ??= new Map();
          if (!made.deadLetters.has(consumer.deadLetterQueue)) made.deadLetters.set(consumer.deadLetterQueue, queue({ name: consumer.deadLetterQueue, ...dir(consumer.deadLetterQueue) }));
          options.deadLetterQueue = made.deadLetters.get(consumer.deadLetterQueue);
        }
      }
      return queue(options);
    },
  },
  "durable_objects.bindings": {
    factory: "durableObject",
    list: (b) => b.durableObjects,
    create: (durableObject, entry, state, config, made) => {
      // Another worker's class: that worker's namespace, when it runs beside this one (lib/project/multi.js).
      if (entry.scriptName && entry.scriptName !== config.name && made.peers) return made.peers.durableObject(entry, config);
      if (entry.scriptName) throw new Error(`class ${entry.className} lives in worker ${JSON.stringify(entry.scriptName)} (script_name); loadProject runs only this worker's own classes`);
      // A class created by a new_classes migration (and never by new_sqlite_classes) has
      // workerd's KV-only storage: no ctx.storage.sql.
      const sqlite = config.migrations.some((m) => m.newSqliteClasses.includes(entry.className));
      const kvOnly = !sqlite && config.migrations.some((m) => m.newClasses.includes(entry.className));
      // One SQLite file per object, workerd's: <state>/do/<name>-<ClassName>/<id>.sqlite (wrangler-state.js).
      return durableObject(entry.className, { ...(state ? wranglerState.durableOptions(state, config, entry) : {}), ...(kvOnly ? { sql: false } : {}) });
    },
  },
  workflows: {
    factory: "workflow",
    list: (b) => b.workflows ?? [],
    create: (workflow, entry, state, config, made) => {
      // A class of another worker: that worker's workflow, when it runs beside this one (lib/project/multi.js).
      if (entry.scriptName && entry.scriptName !== config.name && made.peers) return made.peers.workflow(entry, config);
      if (entry.scriptName && entry.scriptName !== config.name) throw new Error(`class ${entry.className} lives in worker ${JSON.stringify(entry.scriptName)} (script_name), which is not supported yet: loadProject runs only this worker's own Workflow classes`);
      // Instances on disk: <state>/workerbox/workflows/<name>/d1.sqlite3, resumed when the project starts again.
      return workflow({ className: entry.className, name: entry.name, ...(state ? { dir: path.join(ownDir(state), "workflows", safeName(entry.name)) } : {}) });
    },
  },
  // ratelimits, analytics_engine_datasets, send_email, secrets_store_secrets, version_metadata.
  ...LOCAL_BINDING_FACTORIES,
};

/**
 * Builds every binding of the config. Returns `{ bindings, unsupported, warnings }`;
 * `services` maps service names to a Worker, a function or an object with fetch().
 */
function buildBindings(config, { state, services = {}, peers, api, storeCache }) {
  const bindings = {};
  const unsupported = [];
  const warnings = [];
  // Bindings made along the way that several entries share (dead-letter queues).
  const made = { peers };
  for (const [key, kind] of Object.entries(BINDING_FACTORIES)) {
    const entries = kind.list(config.bindings);
    if (entries.length === 0) continue;
    const factory = api[kind.factory];
    for (const entry of entries) {
      if (typeof factory !== "function") {
        unsupported.push({ key, binding: entry.binding, reason: `workerbox has no ${kind.factory}() binding yet` });
        continue;
      }
      try {
        // A store made for the same entry before (a reload in the dev server) is reused, so
        // in-memory data survives and files are not opened twice.
        const cacheKey = `${key}:${state}:${JSON.stringify(entry)}`;
        const peer = peers && entry.scriptName && entry.scriptName !== config.name;
        const binding = (peer ? undefined : storeCache?.get(cacheKey)) ?? kind.create(factory, entry, state, config, made);
        if (!peer) storeCache?.set(cacheKey, binding);
        bindings[entry.binding] = binding;
      } catch (error) {
        unsupported.push({ key, binding: entry.binding, reason: `${kind.factory}() failed: ${error.message}` });
      }
    }
  }
  for (const consumer of config.bindings.queues.consumers) {
    if (typeof api.queue === "function" && config.bindings.queues.producers.some((p) => p.queue === consumer.queue)) continue;
    const reason = typeof api.queue === "function" ? `no producer binding in this project sends to queue "${consumer.queue}" (only queues this worker also produces to are delivered here)` : "workerbox has no queue() binding yet";
    unsupported.push({ key: "queues.consumers", binding: consumer.queue, reason });
  }
  for (const entry of config.bindings.services) {
    // A worker of the same dev server or of another one (lib/project/multi.js), found at call time.
    if (services[entry.service] === undefined && peers && entry.service !== config.name) {
      bindings[entry.binding] = peers.service(entry, config);
      continue;
    }
    const target = services[entry.service];
    const namedEntrypoint = entry.entrypoint && target !== undefined && typeof target.dispatch === "function";
    if (entry.entrypoint && !namedEntrypoint && target !== undefined) {
      warnings.push(`services: ${entry.binding}: entrypoint ${JSON.stringify(entry.entrypoint)} needs a workerbox worker as the service; requests go to the handler given`);
    }
    if (target === undefined) {
      warnings.push(`services: ${entry.binding}: no worker named ${JSON.stringify(entry.service)} is running here; its requests answer 503 (pass it in loadProject's options.services)`);
      const message = `workerbox: service ${JSON.stringify(entry.service)} (binding ${entry.binding}) is not running locally\n`;
      bindings[entry.binding] = api.service(() => new Response(message, { status: 503, headers: { "content-type": "text/plain; charset=utf-8" } }));
    } else {
      bindings[entry.binding] = namedEntrypoint ? api.service(target, { entrypoint: entry.entrypoint }) : api.service(target);
    }
  }
  const classes = new Set(config.migrations.flatMap((m) => [...m.newClasses, ...m.newSqliteClasses, ...m.renamedClasses.map((r) => r.to)]));
  for (const m of config.migrations) for (const c of m.deletedClasses) classes.delete(c);
  for (const object of config.bindings.durableObjects) {
    if (!object.scriptName && !classes.has(object.className)) {
      warnings.push(`durable_objects: ${object.binding}: class ${object.className} is not created by any entry of migrations (add it to new_sqlite_classes)`);
    }
  }
  for (const { key, binding, reason } of unsupported) warnings.push(`${key}: ${binding}: unsupported (${reason}); env.${binding} is left out`);
  return { bindings, unsupported, warnings };
}

/**
 * Reads a project (a folder with wrangler.jsonc / .json / .toml, or the config file itself),
 * bundles its worker and builds its bindings. Options:
 * - `env`: the `env.<name>` section to use;
 * - `persistTo`: folder for local state, as wrangler's --persist-to: state lives in `<persistTo>/v3`
 *   (default `<root>/.wrangler/state/v3`, where wrangler keeps it), or `false` for memory;
 * - `statePath`: the state folder itself (getPlatformProxy's `persist.path`), instead of persistTo;
 * - `services`: `{ serviceName: Worker | (request) => Response | { fetch } }` for service bindings;
 * - `vars`: extra plain bindings, over the config's vars and secrets;
 * - `onLog`: the worker's console lines (stacks in them mapped to the original files);
 * - `build`: false skips the first bundle (`options` stays null until `rebuild()`), and main
 *   need not exist yet;
 * - `storeCache`: a Map that keeps the stores made, to reuse them when loading again;
 * - `peers`: other workers' bindings (services, script_name Durable Objects and Workflows), as
 *   lib/project/multi.js makes them for several workers served together;
 * - `incremental`: true keeps an esbuild context open between rebuilds (faster ones; the
 *   caller ends it with `dispose()`);
 * - `cache`: true keeps the last bundle under `.wrangler/tmp/workerbox-bundle/` and starts from
 *   it when none of its inputs changed (bundle-cache.js; `project.cache` says how the last
 *   build fared: hit, miss or corrupt, with why).
 * Returns the project: `options` for createWorker(), `warnings`, `unsupported`, `assets`,
 * `crons`, `inputs` (files the bundle read), `rebuild()` (bundles again, same bindings) and
 * `dispose()`.
 */
async function loadProject(target, options = {}) {
  if (options === null || typeof options !== "object") throw new TypeError("loadProject: options must be an object");
  // Without the first bundle, main need not exist yet (workerbox/vitest resolves it itself).
  // A wrangler file, or a cloudflare.config.ts (wrangler's experimental config: config-cloudflare.js).
  const { readProjectConfig } = require("./config-cloudflare.js");
  return projectFromConfig(await readProjectConfig(target, { env: options.env, requireMain: options.build !== false }), options);
}

/** Whether `flags` name one of workerd's experimental compatibility flags. */
function hasExperimentalFlag(flags) {
  if (!flags?.length) return false;
  const experimental = new Set(require("../compat-flags.json").flags.filter((f) => f.experimental).flatMap((f) => [f.enable, f.disable].filter(Boolean)));
  return flags.some((flag) => experimental.has(flag));
}

/**
 * loadProject() for a configuration already read (the dev server reads it first for `build`).
 * `bundleFirst` (the dev server's, with `build: false`): the first bundle starts before the
 * runtime loads and the bindings are made, so esbuild works meanwhile; the first rebuild() takes it.
 */
async function projectFromConfig(config, options) {
  // `incremental`: rebuilds reuse one esbuild context (the dev server's; it calls dispose()).
  const incremental = options.incremental ? incrementalBundles() : undefined;
  const cache = options.cache ? bundleCache(config, { env: options.env }) : undefined;
  let early = options.bundleFirst && config.mainFile ? bundle(config, { incremental, cache, deferMap: options.deferMap }) : null;
  // Awaited by the first rebuild(), which reports a failure; until then it is not unhandled.
  early?.catch(() => {});
  try {
    return await loadWith(config, options, { incremental, cache, early: () => {
      const taken = early;
      early = null;
      return taken;
    } });
  } catch (error) {
    // An esbuild context the early bundle made must not outlive the failed load.
    await early?.catch(() => {});
    await incremental?.dispose();
    throw error;
  }
}

async function loadWith(config, options, { incremental, cache, early }) {
  const api = require("../api.js");
  mark("dev: runtime loaded");
  // State lives beside the user's config, also when a build's configuration is used, where
  // wrangler keeps it; state kept in workerbox's earlier layout is copied there on first start.
  const projectRoot = config.projectRoot ?? config.root;
  const state = options.statePath !== undefined && options.persistTo !== false ? path.resolve(options.statePath) : wranglerState.stateRoot(projectRoot, options.persistTo);
  const stateNotes = [];
  if (state) {
    const legacy = options.statePath !== undefined ? null : options.persistTo === undefined ? path.join(projectRoot, ".workerbox", "state") : path.resolve(options.persistTo);
    stateNotes.push(...wranglerState.importLegacy(legacy, state, config));
    fs.mkdirSync(wranglerState.ownDir(state), { recursive: true });
  }
  const { bindings, unsupported, warnings } = buildBindings(config, { state, services: options.services, peers: options.peers, api, storeCache: options.storeCache });
  // On a store's first start: workerbox's own KV and R2 data moved into wrangler's layout (shared
  // with wrangler from then on); a note for Durable Object classes that stay in workerbox's own.
  if (state) stateNotes.push(...(await wranglerState.importWranglerData(state, config, bindings)));
  const vars = { ...config.bindings.vars, ...config.secrets, ...(options.vars ?? {}) };
  for (const name of Object.keys(vars)) {
    if (bindings[name] !== undefined) warnings.push(`vars: ${name} is also a binding name; the binding wins`);
    else bindings[name] = vars[name];
  }
  // Local D1 migrations: the pending files of each database's migrations_dir, applied in order and
  // recorded in its migrations table (wrangler's d1_migrations), unless `migrate: false`.
  const migrations = [];
  if (options.migrate !== false) {
    for (const entry of config.bindings.d1) {
      const binding = bindings[entry.binding];
      if (binding === undefined || !fs.existsSync(entry.migrationsDir)) continue;
      try {
        const applied = await api.applyD1Migrations(binding, await api.readD1Migrations(entry.migrationsDir), entry.migrationsTable ?? "d1_migrations");
        migrations.push({ binding: entry.binding, dir: entry.migrationsDir, applied });
      } catch (error) {
        throw new Error(`d1_databases: ${entry.binding}: applying the migrations in ${entry.migrationsDir} failed: ${error.message}`, { cause: error });
      }
    }
  }
  // The worker's date and flags decide how navigation requests meet not_found_handling.
  const assets = config.assets ? createAssetHandler({ ...config.assets, compatibilityDate: config.compatibilityDate, compatibilityFlags: config.compatibilityFlags }) : null;
  if (assets && config.assets.binding) bindings[config.assets.binding] = api.service((request) => assets.fetch(request));
  // Lines of _redirects / _headers that were skipped, as wrangler warns of them.
  if (assets) warnings.push(...assets.problems);

  let built0 = false; // the first build was made (only it may defer its source map)
  let mapping = null; // the source map being made for a build that deferred it
  let disposed = false;
  /**
   * Makes the source map of a build that deferred it: the incremental context's first build
   * (the same script, with the map), which the bundle cache then saves. Resolves to whether its
   * script differs from the one served (it should not: the caller then reloads).
   */
  const completeMap = () => {
    const later = project.mapper;
    if (!later.pending) return Promise.resolve(false);
    // A project disposed meanwhile (a config reload replaced it) starts no esbuild context.
    if (disposed) {
      later.set(identityMapper);
      return Promise.resolve(false);
    }
    mapping ??= bundle(config, { incremental, cache, lookup: false }).then((built) => {
      // A script that differs (an edit came meanwhile; its reload follows) has a map of its own:
      // the one served stays unmapped until then.
      const same = built.script === project.options?.script;
      later.set(same ? built.mapper : identityMapper);
      if (same && built.sourceMap) project.options.sourceMap = built.sourceMap;
      return !same;
    }, (error) => {
      // The map could not be made (a file changed into an error meanwhile): stacks stay unmapped.
      later.set(identityMapper);
      throw error;
    });
    return mapping;
  };
  /**
   * The worker's log lines while its source map is being made: a line naming the bundle waits
   * for the map (which it starts), and the lines after it wait behind it, so the order stays.
   */
  const heldLog = (built, onLog) => {
    let held = null;
    return (level, message) => {
      if (held === null && (built.mapper.pending === false || typeof message !== "string" || !message.includes(built.filename))) return onLog(level, built.mapper.mapStack(message));
      if (held === null) {
        held = [];
        project.sourceMapReady().then(() => {
          const lines = held;
          held = null;
          for (const [l, m] of lines) onLog(l, built.mapper.mapStack(m));
        });
      }
      held.push([level, message]);
    };
  };

  const project = {
    name: config.name,
    root: config.root,
    projectRoot: config.projectRoot ?? config.root,
    configFile: config.file,
    redirectedFrom: config.redirectedFrom,
    env: config.env,
    config,
    stateDir: state,
    stateNotes,
    warnings: [...config.warnings.map((w) => w.text), ...warnings],
    notes: config.notes?.map((n) => n.text) ?? [],
    unsupported,
    bindings,
    migrations,
    assets,
    crons: config.crons,
    options: null,
    inputs: [],
    mapper: { mapStack: (t) => t, mapLocation: () => null },
    /** Ends what `incremental` keeps open (esbuild's context); rebuild() still works after. */
    async dispose() {
      disposed = true;
      await early()?.catch(() => {});
      await mapping?.catch(() => {});
      await incremental?.dispose();
      await cache?.pending;
    },
    /** Resolves when the cache's disk writes of the last build are done. */
    async settled() {
      await cache?.pending;
      return cache?.lastSave;
    },
    /**
     * After a build the cache answered, or one made without its source map (`deferMap`): makes
     * the esbuild context now (so the next reload is an incremental one; its build gives the
     * map, and saves the bundle cache) and says whether esbuild's bundle differs from the one
     * served.
     */
    async warm() {
      if (project.mapper.pending) return completeMap();
      if (!incremental || incremental.context || !project.options || project.cache?.status !== "hit") return false;
      const built = await bundle(config, { incremental, cache, lookup: false });
      return built.script !== project.options.script;
    },
    /** Resolves once the source map of the bundle served is there (made now if need be). */
    async sourceMapReady() {
      if (project.mapper.pending) await completeMap().catch(() => {});
    },
    /** mapError(), once the source map is there (an error before it waits for it). */
    async mappedError(error) {
      await project.sourceMapReady();
      return project.mapError(error);
    },
    async rebuild() {
      if (!config.mainFile) {
        project.options = null;
        return null;
      }
      // A source map being made (the context's first build) ends before the next build.
      await mapping?.catch(() => {});
      const first = early();
      const built = await (first ?? bundle(config, { incremental, cache, deferMap: options.deferMap && !built0 }));
      built0 = true;
      mapping = null;
      checkExports(config, built.exports);
      project.cache = built.cache ?? null;
      project.inputs = built.inputs;
      project.mapper = built.mapper;
      for (const w of built.warnings) if (!project.warnings.includes(w)) project.warnings.push(w);
      const onLog = options.onLog;
      project.options = {
        script: built.script,
        filename: built.filename,
        modules: built.modules,
        ...(built.sourceMap ? { sourceMap: built.sourceMap } : {}),
        bindings,
        compatibilityDate: config.compatibilityDate,
        compatibilityFlags: config.compatibilityFlags,
        // An experimental flag runs as under wrangler dev (Miniflare runs workerd with --experimental).
        ...(hasExperimentalFlag(config.compatibilityFlags) ? { unsafeExperimental: true } : {}),
        ...(config.cpuMs !== undefined ? { limits: { cpuMs: config.cpuMs } } : {}),
        ...(onLog ? { onLog: built.mapper.pending ? heldLog(built, onLog) : (level, message) => onLog(level, built.mapper.mapStack(message)) } : {}),
      };
      return project.options;
    },
    /** Maps an error thrown by this project's worker back to the original sources. */
    mapError(error) {
      return mapError(error, project.mapper);
    },
  };
  if (options.build !== false) {
    try {
      await project.rebuild();
    } catch (error) {
      await project.dispose();
      throw error;
    }
  }
  return project;
}

/**
 * A Durable Object binding of this worker's own class needs the class among the bundle's exports
 * (workerd refuses to start without it): a ConfigError naming the binding, the class and where
 * the config names it.
 */
function checkExports(config, exports) {
  if (exports === undefined) return;
  const missing = config.bindings.durableObjects.filter((object) => !object.scriptName && !exports.includes(object.className));
  if (missing.length === 0) return;
  const main = path.relative(config.root, config.mainFile);
  const has = exports.length ? `it exports ${exports.join(", ")}` : "it exports nothing";
  throw new ConfigError(missing.map((object) => ({
    ...(object.at ?? { file: config.file, key: "durable_objects" }),
    message: `Durable Object binding ${object.binding}: class ${object.className} is not exported by ${main} (${has}); export the class, or set script_name if another worker defines it`,
  })));
}

/** Starts the project's worker; errors name the original source lines. */
async function startWorker(project, extra = {}) {
  const { createWorker } = require("../api.js");
  if (!project.options) throw new Error(`${project.configFile}: the project has no worker (no main), only assets`);
  try {
    return await createWorker({ ...project.options, ...extra });
  } catch (error) {
    throw await project.mappedError(error);
  }
}

module.exports = { loadProject, projectFromConfig, startWorker, BINDING_FACTORIES };
