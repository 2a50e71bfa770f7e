"use strict";
// cloudflare.config.ts: a worker described in wrangler's experimental TypeScript configuration
// (`defineWorker` and `bindings` from `wrangler/experimental-config`, or from
// `@cloudflare/vite-plugin/experimental-config`) instead of a wrangler file. The file is bundled
// with esbuild (its TypeScript, its local imports; packages stay Node's own) and evaluated; an
// `import * as entrypoint from "./src/index.ts" with { type: "cf-worker" }` names the entry module
// without loading it, as wrangler's loader does. Its default export (a definition, a value, a
// promise, or a function of `{ mode }`) becomes the wrangler configuration object it stands for,
// which lib/project/config.js then checks exactly as it checks a wrangler file; messages name
// the file and the key as cloudflare.config.ts writes it (`env.MY_KV`, `compatibilityDate`).
// Only cloudflare.config.ts is read: wrangler's tooling file (wrangler.config.ts) is not.

const fs = require("node:fs");
const path = require("node:path");
const { builtinModules } = require("node:module");
const { pathToFileURL } = require("node:url");
const { readConfigObject, ConfigError } = require("./config.js");

const NEW_CONFIG_FILE = "cloudflare.config.ts";
/** Where `defineWorker()`/`defineSettings()` keep what was written (a global symbol, shared across copies). */
const DEFINITION = Symbol.for("@cloudflare/config:definition");
const CF_WORKER = "cf-worker";
const SKIP = Symbol("resolving a package");

/** The worker keys cloudflare.config.ts has (wrangler's schema is strict: any other is an error). */
const WORKER_KEYS = ["type", "name", "entrypoint", "compatibilityDate", "compatibilityFlags", "env", "exports", "triggers", "assets", "limits", "tailConsumers", "domains", "workersDev", "previewUrls", "logpush", "observability", "placement", "firstPartyWorker", "cache", "unsafe"];

/**
 * Each binding type of `bindings.*()`: the options it takes, and `add(name, options, out)` putting
 * the wrangler entry it stands for into `out` (see convert()). A type marked `unsupported` is
 * warned about and left out.
 */
const BINDINGS = {
  text: { options: ["value"], add: (name, b, out) => (typeof b.value === "string" ? out.vars(name, b.value) : out.error(`env.${name}.value`, "must be a string (bindings.text(value))")) },
  json: { options: ["value"], add: (name, b, out) => out.vars(name, b.value) },
  secret: { options: [], add: (name, b, out) => out.secret(name) },
  kv: { options: ["id", "remote"], add: (name, b, out) => out.push(["kv_namespaces"], name, { binding: name, id: b.id }, { id: "id" }) },
  r2: { options: ["name", "jurisdiction", "remote", "localDev"], add: (name, b, out) => out.push(["r2_buckets"], name, { binding: name, bucket_name: b.name, jurisdiction: b.jurisdiction }, { bucket_name: "name", jurisdiction: "jurisdiction" }) },
  d1: { options: ["id", "name", "remote"], add: (name, b, out) => out.push(["d1_databases"], name, { binding: name, database_id: b.id, database_name: b.name }, { database_id: "id", database_name: "name" }) },
  "durable-object": {
    options: ["workerName", "exportName"],
    // The worker's own class: no script_name (workerbox and Miniflare bind the worker's own objects then).
    add: (name, b, out) => out.push(["durable_objects", "bindings"], name, { name, class_name: b.exportName, script_name: b.workerName === out.workerName ? undefined : b.workerName }, { class_name: "exportName", script_name: "workerName" }),
  },
  queue: { options: ["name", "deliveryDelay", "remote"], add: (name, b, out) => out.push(["queues", "producers"], name, { binding: name, queue: b.name, delivery_delay: b.deliveryDelay }, { queue: "name", delivery_delay: "deliveryDelay" }) },
  worker: { options: ["workerName", "exportName", "props", "remote"], add: (name, b, out) => out.push(["services"], name, { binding: name, service: b.workerName, entrypoint: b.exportName, props: b.props }, { service: "workerName", entrypoint: "exportName", props: "props" }) },
  hyperdrive: { options: ["id", "localConnectionString"], add: (name, b, out) => out.push(["hyperdrive"], name, { binding: name, id: b.id, localConnectionString: b.localConnectionString }) },
  "rate-limit": { options: ["namespace", "simple"], add: (name, b, out) => out.push(["ratelimits"], name, { name, namespace_id: b.namespace, simple: b.simple }, { namespace_id: "namespace" }) },
  "analytics-engine-dataset": { options: ["name"], add: (name, b, out) => out.push(["analytics_engine_datasets"], name, { binding: name, dataset: b.name }, { dataset: "name" }) },
  "send-email": {
    options: ["destinationAddress", "allowedDestinationAddresses", "allowedSenderAddresses", "remote"],
    add: (name, b, out) => out.push(["send_email"], name, { name, destination_address: b.destinationAddress, allowed_destination_addresses: b.allowedDestinationAddresses, allowed_sender_addresses: b.allowedSenderAddresses }),
  },
  "secrets-store-secret": { options: ["storeId", "secretName"], add: (name, b, out) => out.push(["secrets_store_secrets"], name, { binding: name, store_id: b.storeId, secret_name: b.secretName }) },
  "version-metadata": { options: [], add: (name, b, out) => out.one("version_metadata", name, { binding: name }) },
  "worker-loader": { options: [], add: (name, b, out) => out.push(["worker_loaders"], name, { binding: name }) },
  assets: { options: [], add: (name, b, out) => out.assetsBinding(name) },
  // Made in the test isolate by workerbox/vitest (lib/vitest/remote-bindings.mjs); warned about elsewhere.
  ai: { options: ["remote"], add: (name, b, out) => out.one("ai", name, { binding: name }) },
  images: { options: ["remote"], add: (name, b, out) => out.one("images", name, { binding: name }) },
  vectorize: { options: ["name", "remote"], add: (name, b, out) => out.push(["vectorize"], name, { binding: name, index_name: b.name }, { index_name: "name" }) },
  pipeline: { options: ["name", "remote"], add: (name, b, out) => out.push(["pipelines"], name, { binding: name, stream: b.name }, { stream: "name" }) },
  browser: { options: ["remote"], add: (name, b, out) => out.one("browser", name, { binding: name }) },
  "dispatch-namespace": { options: ["namespace", "outbound", "remote"], add: (name, b, out) => out.push(["dispatch_namespaces"], name, { binding: name, namespace: b.namespace }) },
  "mtls-certificate": { options: ["id", "remote"], add: (name, b, out) => out.push(["mtls_certificates"], name, { binding: name, certificate_id: b.id }) },
};
/** Binding types cloudflare.config.ts has that workerbox does not provide. */
const UNSUPPORTED_BINDINGS = ["agent-memory", "ai-search", "ai-search-namespace", "artifacts", "flagship", "logfwdr", "media", "stream", "vpc-network", "vpc-service", "web-search"];

/** A problem in the file: a ConfigError naming it and the key. */
function fail(file, key, message) {
  return new ConfigError([{ file, key, message }]);
}

const describe = (value) => (value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`);
const camel = (key) => key.replace(/_(\w)/g, (_, ch) => ch.toUpperCase());

/** The config module, bundled and evaluated; cached until one of its own files changes. */
const modules = new Map();

async function importConfig(file) {
  const cached = modules.get(file);
  if (cached && cached.inputs.every(([input, mtime]) => fs.existsSync(input) && fs.statSync(input).mtimeMs === mtime)) return cached.module;
  const esbuild = require("esbuild");
  const url = pathToFileURL(file).href;
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [file],
      absWorkingDir: path.dirname(file),
      bundle: true,
      write: false,
      metafile: true,
      platform: "node",
      format: "esm",
      target: `node${process.versions.node.split(".")[0]}`,
      logLevel: "silent",
      // Evaluated from a data: URL: the file's own location for import.meta.
      define: { "import.meta.url": JSON.stringify(url), "import.meta.filename": JSON.stringify(file), "import.meta.dirname": JSON.stringify(path.dirname(file)) },
      plugins: [configPlugin()],
    });
  } catch (error) {
    const first = error.errors?.[0];
    const where = first?.location ? `${first.location.file}:${first.location.line}:${first.location.column}: ` : "";
    throw fail(file, undefined, `cannot be loaded: ${where}${first?.text ?? error.message}`);
  }
  let module;
  try {
    module = await import(`data:text/javascript;base64,${Buffer.from(result.outputFiles[0].text).toString("base64")}`);
  } catch (error) {
    throw Object.assign(fail(file, undefined, `evaluating it failed: ${error.message}`), { cause: error });
  }
  const inputs = Object.keys(result.metafile.inputs)
    .filter((input) => !input.includes(":"))
    .map((input) => path.resolve(path.dirname(file), input))
    .map((input) => [input, fs.statSync(input).mtimeMs]);
  modules.set(file, { module, inputs });
  return module;
}

/**
 * esbuild plugin: `with { type: "cf-worker" }` imports become the entry module's path (relative ones
 * from the importing file; the module is not loaded), and packages are left to Node, by their
 * resolved file URL (the bundle runs from a data: URL, where a bare name cannot be resolved).
 */
function configPlugin() {
  return {
    name: "workerbox:cloudflare-config",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.with?.type === CF_WORKER) {
          const relative = args.path.startsWith("./") || args.path.startsWith("../");
          return { path: relative ? path.resolve(args.resolveDir, args.path) : args.path, namespace: CF_WORKER };
        }
        if (args.pluginData === SKIP || args.kind === "entry-point" || args.path.startsWith(".") || path.isAbsolute(args.path)) return undefined;
        if (args.path.startsWith("node:") || builtinModules.includes(args.path)) return { path: args.path, external: true };
        const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: SKIP, with: args.with });
        if (resolved.errors.length > 0) return { errors: resolved.errors.map((e) => ({ ...e, text: `${e.text} (is it installed? \`npm install --save-dev ${args.path.split("/").slice(0, args.path.startsWith("@") ? 2 : 1).join("/")}\`)` })) };
        if (resolved.external) return { path: resolved.path, external: true };
        return { path: pathToFileURL(resolved.path).href, external: true };
      });
      build.onLoad({ filter: /.*/, namespace: CF_WORKER }, (args) => ({ contents: `export default ${JSON.stringify(args.path)};`, loader: "js" }));
    },
  };
}

/** An export as written: a definition, a value, a promise, or a function of `ctx`, resolved. */
async function resolveExport(value, ctx) {
  let type;
  if (value !== null && typeof value === "object" && DEFINITION in value) ({ config: value, type } = value[DEFINITION]);
  const resolved = typeof value === "function" ? await value(ctx) : await value;
  return type !== undefined && resolved !== null && typeof resolved === "object" ? { ...resolved, type } : resolved;
}

/**
 * The wrangler configuration object `worker` (the resolved default export) stands for:
 * `{ raw, rename(keyPath), warnings, secrets }`; `secrets` are the names of `bindings.secret()`s.
 * Throws a ConfigError for what cloudflare.config.ts itself does not allow.
 */
function convert(worker, file) {
  const problems = [];
  const warnings = [];
  const raw = {};
  /** wrangler key path prefix (joined with \0) → [the key as written, its sub-keys' names]. */
  const names = new Map();
  const name = (keyPath, written, sub = {}) => names.set(keyPath.join("\0"), [written, sub]);
  const error = (key, message) => problems.push({ file, key, message });
  const warn = (key, message) => warnings.push({ file, key, message, text: `${file}: ${key}: ${message}` });
  const secrets = [];
  let assetsBinding;
  const out = {
    workerName: worker.name,
    error,
    vars(binding, value) {
      raw.vars ??= {};
      raw.vars[binding] = value;
      name(["vars", binding], `env.${binding}`);
    },
    secret: (binding) => secrets.push(binding),
    push(keyPath, binding, entry, sub) {
      let list = raw;
      for (const key of keyPath.slice(0, -1)) list = list[key] ??= {};
      const array = (list[keyPath.at(-1)] ??= []);
      array.push(Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)));
      name([...keyPath, array.length - 1], `env.${binding}`, sub);
    },
    one(key, binding, entry) {
      if (raw[key] !== undefined) return error(`env.${binding}`, `a second ${key} binding: ${key} bindings can only be defined once`);
      raw[key] = entry;
      name([key], `env.${binding}`);
    },
    assetsBinding(binding) {
      if (assetsBinding !== undefined) return error(`env.${binding}`, `a second assets binding (env.${assetsBinding} is one): assets bindings can only be defined once`);
      assetsBinding = binding;
    },
  };

  // domains, workersDev, previewUrls, logpush, observability, placement, firstPartyWorker and
  // cache matter only when deploying: read and left.
  for (const key of Object.keys(worker)) {
    if (!WORKER_KEYS.includes(key)) error(key, `is not a key of a worker in ${NEW_CONFIG_FILE} (known: ${WORKER_KEYS.filter((k) => k !== "type").join(", ")})`);
  }
  if (typeof worker.name !== "string" || worker.name === "") error("name", `is required: the worker's name (got ${describe(worker.name)})`);
  else raw.name = worker.name;
  name(["name"], "name");
  if (typeof worker.compatibilityDate !== "string") error("compatibilityDate", `is required: a date such as "2025-12-02" (got ${describe(worker.compatibilityDate)})`);
  else raw.compatibility_date = worker.compatibilityDate;
  name(["compatibility_date"], "compatibilityDate");
  if (worker.compatibilityFlags !== undefined) raw.compatibility_flags = worker.compatibilityFlags;
  name(["compatibility_flags"], "compatibilityFlags");
  // `entrypoint`: a path (relative to this file), or the `cf-worker` import's namespace ({ default: path }).
  const entrypoint = worker.entrypoint !== null && typeof worker.entrypoint === "object" ? worker.entrypoint.default : worker.entrypoint;
  if (entrypoint !== undefined && typeof entrypoint !== "string") error("entrypoint", `must be a path, or \`import * as entrypoint from "./src/index.ts" with { type: "cf-worker" }\` (got ${describe(worker.entrypoint)})`);
  else if (entrypoint !== undefined) raw.main = entrypoint;
  name(["main"], "entrypoint");

  if (worker.env !== undefined && (worker.env === null || typeof worker.env !== "object" || Array.isArray(worker.env))) error("env", `must be an object of bindings (got ${describe(worker.env)})`);
  for (const [binding, value] of Object.entries(worker.env ?? {})) {
    const type = value?.type;
    const key = `env.${binding}`;
    if (value === null || typeof value !== "object" || typeof type !== "string") {
      error(key, `must be a binding made by bindings.*() (such as bindings.kv({ id })), got ${describe(value)}`);
      continue;
    }
    if (type.startsWith("unsafe:")) {
      warn(key, `unsafe bindings (${type}) are not supported by workerbox; ignored`);
      continue;
    }
    if (UNSUPPORTED_BINDINGS.includes(type)) {
      warn(key, `${type} bindings are not supported by workerbox; ignored`);
      continue;
    }
    const kind = BINDINGS[type];
    if (!kind) {
      error(key, `${JSON.stringify(type)} is not a binding type of ${NEW_CONFIG_FILE}`);
      continue;
    }
    const unknown = Object.keys(value).filter((k) => k !== "type" && !kind.options.includes(k));
    if (unknown.length > 0) {
      error(`${key}.${unknown[0]}`, `is not an option of a ${type} binding (${kind.options.length ? `known: ${kind.options.join(", ")}` : "it takes none"})`);
      continue;
    }
    kind.add(binding, value, out);
  }

  // Static assets: their folder is named by the tooling file (wrangler.config.ts), not read here.
  if (worker.assets !== undefined || assetsBinding !== undefined) {
    warn(assetsBinding === undefined ? "assets" : `env.${assetsBinding}`, `${NEW_CONFIG_FILE} names no folder of assets (wrangler's tooling file, wrangler.config.ts, does; workerbox does not read it): running without assets`);
  }

  // Durable Object classes the worker exports: what wrangler's migrations would say, as one step.
  const migration = { tag: NEW_CONFIG_FILE, new_classes: [], new_sqlite_classes: [], deleted_classes: [], renamed_classes: [] };
  for (const [exportName, value] of Object.entries(worker.exports ?? {})) {
    const key = `exports.${exportName}`;
    if (value?.type === "worker") continue;
    if (value?.type !== "durable-object") {
      error(key, `must be exports.durableObject({ … }) or exports.worker() (got ${describe(value?.type ?? value)})`);
      continue;
    }
    const state = value.state ?? "created";
    if (state === "created") {
      if (value.storage !== "sqlite" && value.storage !== "legacy-kv") error(`${key}.storage`, `must be "sqlite" or "legacy-kv" (got ${describe(value.storage)})`);
      else (value.storage === "sqlite" ? migration.new_sqlite_classes : migration.new_classes).push(exportName);
      if (value.container !== undefined) warn(`${key}.container`, "containers are not supported by workerbox; ignored");
    } else if (state === "deleted") migration.deleted_classes.push(exportName);
    else if (state === "renamed") migration.renamed_classes.push({ from: exportName, to: value.renamedTo });
    else warn(key, `a Durable Object in state "${state}" (a transfer between workers) is not supported by workerbox; ignored`);
  }
  if (Object.values(migration).some((v) => Array.isArray(v) && v.length > 0)) {
    raw.migrations = [migration];
    name(["migrations"], "exports");
  }

  if (worker.triggers !== undefined && !Array.isArray(worker.triggers)) error("triggers", `must be an array of triggers.*() (got ${describe(worker.triggers)})`);
  (Array.isArray(worker.triggers) ? worker.triggers : []).forEach((trigger, i) => {
    if (trigger?.type === "scheduled") {
      raw.triggers ??= { crons: [] };
      raw.triggers.crons.push(trigger.schedule);
      name(["triggers", "crons", raw.triggers.crons.length - 1], `triggers[${i}].schedule`);
    } else if (trigger?.type === "queue") {
      raw.queues ??= {};
      const consumers = (raw.queues.consumers ??= []);
      const entry = { queue: trigger.name, dead_letter_queue: trigger.deadLetterQueue, max_batch_size: trigger.maxBatchSize, max_batch_timeout: trigger.maxBatchTimeout, max_concurrency: trigger.maxConcurrency ?? undefined, max_retries: trigger.maxRetries, retry_delay: trigger.retryDelay };
      consumers.push(Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)));
      name(["queues", "consumers", consumers.length - 1], `triggers[${i}]`, { queue: "name" });
      if (trigger.visibilityTimeoutMs !== undefined) warn(`triggers[${i}].visibilityTimeoutMs`, "not supported by workerbox; ignored");
    } else if (!["fetch", "email", "connect"].includes(trigger?.type)) {
      error(`triggers[${i}]`, `must be made by triggers.*() (scheduled, queue, fetch, email, connect), got ${describe(trigger?.type ?? trigger)}`);
    }
    // fetch (routes), email and connect triggers matter only when deploying.
  });

  if (worker.limits !== undefined) {
    raw.limits = worker.limits?.cpuMs === undefined ? {} : { cpu_ms: worker.limits.cpuMs };
    name(["limits"], "limits", { cpu_ms: "cpuMs" });
  }
  (Array.isArray(worker.tailConsumers) ? worker.tailConsumers : []).forEach((consumer, i) => {
    // { streaming: true }: a streaming tail worker (wrangler's streaming_tail_consumers).
    const key = consumer?.streaming ? "streaming_tail_consumers" : "tail_consumers";
    raw[key] ??= [];
    raw[key].push({ service: consumer?.workerName });
    name([key, raw[key].length - 1], `tailConsumers[${i}]`, { service: "workerName" });
  });
  if (worker.unsafe !== undefined) warn("unsafe", "not supported by workerbox; ignored");

  if (problems.length > 0) throw new ConfigError(problems);
  /** A wrangler key path's name as this file writes it (the longest named prefix, then its sub-key). */
  const rename = (keyPath) => {
    for (let n = keyPath.length; n > 0; n--) {
      const found = names.get(keyPath.slice(0, n).join("\0"));
      if (!found) continue;
      const [written, sub] = found;
      const rest = keyPath.slice(n);
      if (rest.length === 0 || ["binding", "name"].includes(rest[0])) return written;
      const first = sub[rest[0]] ?? camel(String(rest[0]));
      return `${written}.${[first, ...rest.slice(1)].join(".")}`;
    }
    return keyPath.length === 0 ? undefined : keyPath.map((p) => (typeof p === "number" ? `[${p}]` : camel(p))).join(".").replace(/\.\[/g, "[");
  };
  return { raw, rename, warnings, secrets };
}

/**
 * Reads a cloudflare.config.ts: the same normalised configuration readConfig() gives for a wrangler
 * file (with `newConfig: true`, and `raw`: the wrangler object it stands for). `mode`: what config
 * functions get as `ctx.mode` (Vite's mode under Vitest). Other options as readConfig()'s.
 */
async function readCloudflareConfig(file, { mode, requireMain = true, requireWorker = true, requireAssetsDirectory = true } = {}) {
  file = path.resolve(file);
  if (!fs.existsSync(file)) throw fail(file, undefined, "no such file");
  const module = await importConfig(file);
  if (!("default" in module)) throw fail(file, undefined, `has no default export: export default defineWorker({ … }) (from "wrangler/experimental-config")`);
  let worker;
  try {
    worker = await resolveExport(module.default, { mode });
  } catch (error) {
    throw Object.assign(fail(file, "default", `the config function failed: ${error.message}`), { cause: error });
  }
  if (worker === null || typeof worker !== "object" || worker.type !== "worker") throw fail(file, "default", `must be a worker: export default defineWorker({ … }) (got ${describe(worker?.type ?? worker)})`);
  const { raw, rename, warnings, secrets } = convert(worker, file);
  const config = readConfigObject(file, raw, { rename, requireMain, requireWorker, requireAssetsDirectory });
  for (const secret of secrets) {
    if (config.secrets[secret] === undefined) warnings.push({ file, key: `env.${secret}`, message: "bindings.secret(): not set in .dev.vars or .env; env." + secret + " is undefined" });
  }
  for (const w of warnings) w.text ??= `${file}: ${w.key}: ${w.message}`;
  return { ...config, warnings: [...warnings, ...config.warnings], newConfig: true, raw };
}

/** The default path of the file (`experimental: { newConfig: true }`): cloudflare.config.ts in `root`. */
function cloudflareConfigPath(root, option) {
  const relative = option !== null && typeof option === "object" && typeof option.configPath === "string" ? option.configPath : NEW_CONFIG_FILE;
  return path.resolve(root, relative);
}

/**
 * The cloudflare.config.ts a loadProject() target names, or undefined: a JavaScript or TypeScript
 * file (wrangler files are TOML or JSON), or a folder holding cloudflare.config.ts and no wrangler file.
 */
function cloudflareConfigTarget(target, wranglerFiles) {
  const resolved = path.resolve(target ?? ".");
  let stat;
  try {
    stat = fs.statSync(resolved);
  } catch {
    return undefined;
  }
  if (stat.isFile()) return /\.[cm]?[jt]s$/.test(resolved) ? resolved : undefined;
  const file = path.join(resolved, NEW_CONFIG_FILE);
  return fs.existsSync(file) && !wranglerFiles.some((name) => fs.existsSync(path.join(resolved, name))) ? file : undefined;
}

/**
 * A project's configuration, whichever form it has: the cloudflare.config.ts `target` names
 * (cloudflareConfigTarget()), with `env` as its functions' ctx.mode (as wrangler passes --env),
 * else its wrangler file (readConfig(), `env` its `env.<name>` section). loadProject() and
 * `workerbox dev` read through this.
 */
async function readProjectConfig(target, { env, requireMain = true } = {}) {
  const { readConfig, CONFIG_FILES } = require("./config.js");
  const newConfig = cloudflareConfigTarget(target, CONFIG_FILES);
  return newConfig ? readCloudflareConfig(newConfig, { mode: env, requireMain }) : readConfig(target, { env, requireMain });
}

module.exports = { readCloudflareConfig, readProjectConfig, cloudflareConfigPath, cloudflareConfigTarget, NEW_CONFIG_FILE };
