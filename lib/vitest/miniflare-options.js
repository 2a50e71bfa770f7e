// Bindings given in Miniflare's option names (`cloudflareTest({ miniflare: { kvNamespaces,
// r2Buckets, d1Databases, durableObjects, queueProducers, serviceBindings, hyperdrives,
// bindings, ratelimits, analyticsEngineDatasets, email, secretsStoreSecrets, versionMetadata, workerLoaders } })`, and the same keys of each `miniflare.workers` entry), as Cloudflare's pool
// takes them: each a list of binding names or an object keyed by binding name. They are added
// over the wrangler file's. An option that would make a binding workerbox cannot make is named
// in an error, never ignored.
"use strict";

const { hyperdrive } = require("../hyperdrive.js");

/** Options that configure the worker, not its bindings (taken elsewhere, or without effect here). */
const NOT_BINDINGS = new Set([
  "name", "main", "script", "scriptPath", "modules", "modulesRoot", "modulesRules", "rootPath", "compatibilityDate", "compatibilityFlags",
  "workers", "outboundService", "fetchMock", "routes", "unsafeEphemeralDurableObjects", "unsafeEvalBinding", "unsafeDirectSockets",
  "cf", "log", "verbose", "host", "port", "inspectorPort", "upstream", "liveReload", "kvPersist", "r2Persist", "d1Persist",
  "cachePersist", "durableObjectsPersist", "defaultPersistRoot", "cache", "cacheWarnUsage", "handleRuntimeStdio", "stripCfConnectingIp",
  "queueConsumers", "durableObjectsPersist", "assets", "unsafeBindings",
]);
/** The binding options made here. */
const MADE = ["kvNamespaces", "r2Buckets", "d1Databases", "durableObjects", "queueProducers", "serviceBindings", "hyperdrives", "bindings", "textBlobBindings", "dataBlobBindings", "wasmBindings", "ratelimits", "analyticsEngineDatasets", "email", "secretsStoreSecrets", "versionMetadata", "workerLoaders"];

/** `[bindingName, value]` pairs from a list of names or an object keyed by binding name. */
function entries(value, key, where) {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.map((name) => [String(name), String(name)]);
  if (value !== null && typeof value === "object") return Object.entries(value);
  throw new TypeError(`${where}: ${key} must be a list of binding names or an object keyed by binding name`);
}

/**
 * Adds the bindings `options` names to `bindings`. `services(name)`: the worker a service
 * binding names (or undefined); `self`: the binding for a service naming this worker itself, or
 * a Durable Object class it exports (`selfService(entrypoint)`, `durableClasses` to add to).
 * Queue producers share one queue per queue name (`queues`: Map, shared across workers).
 */
function addMiniflareBindings(bindings, options, { where, api, services = () => undefined, selfName, selfService, durableClasses, queues = new Map() }) {
  if (options === undefined || options === null) return;
  const fs = require("node:fs");
  const unknown = Object.keys(options).filter((key) => !NOT_BINDINGS.has(key) && !MADE.includes(key));
  if (unknown.length > 0) {
    throw new TypeError(`${where}: ${unknown.join(", ")} ${unknown.length > 1 ? "are" : "is"} not supported by workerbox/vitest (supported binding options: ${MADE.join(", ")}); configure the binding in the wrangler file, or leave it out`);
  }
  for (const [name] of entries(options.kvNamespaces, "kvNamespaces", where)) bindings[name] = api.kv();
  for (const [name] of entries(options.r2Buckets, "r2Buckets", where)) bindings[name] = api.storage();
  for (const [name] of entries(options.d1Databases, "d1Databases", where)) bindings[name] = api.d1();
  for (const [name, value] of entries(options.durableObjects, "durableObjects", where)) {
    const spec = typeof value === "string" ? { className: value } : value;
    if (typeof spec?.className !== "string") throw new TypeError(`${where}: durableObjects.${name} must be a class name or { className }`);
    const sql = spec.useSQLite === false ? { sql: false } : {};
    if (spec.scriptName !== undefined && spec.scriptName !== selfName) {
      // A class of an auxiliary worker (miniflare.workers): that worker's objects, with their storage.
      const home = services(spec.scriptName);
      if (home === undefined) throw new TypeError(`${where}: durableObjects.${name}: scriptName "${spec.scriptName}" is not one of miniflare.workers (list the worker that defines ${spec.className} there)`);
      bindings[name] = api.durableObject(spec.className, { worker: home, ...sql });
      continue;
    }
    durableClasses?.add(spec.className);
    bindings[name] = api.durableObject(spec.className, sql);
  }
  for (const [name, value] of entries(options.queueProducers, "queueProducers", where)) {
    const queueName = typeof value === "string" ? value : value?.queueName;
    if (typeof queueName !== "string") throw new TypeError(`${where}: queueProducers.${name} must be a queue name or { queueName }`);
    if (!queues.has(queueName)) {
      // Its consumer (the worker given the binding) with queueConsumers' settings for it.
      const consumer = Array.isArray(options.queueConsumers) ? {} : (options.queueConsumers?.[queueName] ?? {});
      const settings = {};
      for (const key of ["maxBatchSize", "maxBatchTimeout", "maxRetries", "retryDelay"]) if (consumer[key] !== undefined) settings[key] = consumer[key];
      queues.set(queueName, api.queue({ name: queueName, ...settings, ...(value?.deliveryDelay !== undefined ? { deliveryDelay: value.deliveryDelay } : {}) }));
    }
    bindings[name] = queues.get(queueName);
  }
  for (const [name, target] of Object.entries(options.serviceBindings ?? {})) {
    const serviceName = typeof target === "string" ? target : target !== null && typeof target === "object" && typeof target.name === "string" ? target.name : undefined;
    const entrypoint = typeof target === "object" && target !== null ? target.entrypoint : undefined;
    if (serviceName !== undefined && serviceName === selfName && selfService) {
      bindings[name] = selfService(entrypoint);
      continue;
    }
    if (serviceName !== undefined) {
      const worker = services(serviceName);
      if (worker === undefined) throw new Error(`${where}: serviceBindings.${name} names "${serviceName}", which is not one of miniflare.workers (list it there, before the workers that bind to it)`);
      bindings[name] = entrypoint ? api.service(worker, { entrypoint }) : api.service(worker);
    } else if (typeof target === "function" || (target !== null && typeof target === "object" && typeof target.fetch === "function")) {
      bindings[name] = api.service(target);
    } else {
      throw new TypeError(`${where}: serviceBindings.${name} must be a worker name, { name, entrypoint } or a function (request) => Response`);
    }
  }
  for (const [name, url] of Object.entries(options.hyperdrives ?? {})) bindings[name] = hyperdrive(String(url), `${where}: hyperdrives.${name}`);
  addSimulatedBindings(bindings, options, where, api);
  Object.assign(bindings, options.bindings ?? {});
  for (const [name, file] of Object.entries(options.textBlobBindings ?? {})) bindings[name] = fs.readFileSync(file, "utf8");
  for (const key of ["dataBlobBindings", "wasmBindings"]) {
    if (options[key] !== undefined && Object.keys(options[key]).length > 0) throw new TypeError(`${where}: ${key} is not supported by workerbox/vitest (import the file as a module instead)`);
  }
}

/**
 * The bindings wrangler simulates, in Miniflare's option names: `ratelimits: { NAME: {
 * namespace_id?, simple: { limit, period } } }`, `analyticsEngineDatasets: { NAME: { dataset } }`,
 * `email: { send_email: [{ name, destination_address?, allowed_destination_addresses?,
 * allowed_sender_addresses? }] }`, `secretsStoreSecrets: { NAME: { store_id, secret_name } }`
 * (no value: get() rejects as not found), `versionMetadata: "NAME"`, `workerLoaders: { NAME: {} }`.
 * All in memory.
 */
function addSimulatedBindings(bindings, options, where, api) {
  const table = (key) => {
    const value = options[key];
    if (value === undefined) return [];
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new TypeError(`${where}: ${key} must be an object keyed by binding name`);
    return Object.entries(value);
  };
  for (const [name, spec] of table("ratelimits")) {
    try {
      bindings[name] = api.rateLimit({ limit: spec?.simple?.limit, period: spec?.simple?.period ?? 60, namespace: spec?.namespace_id === undefined ? undefined : String(spec.namespace_id) });
    } catch (error) {
      throw new TypeError(`${where}: ratelimits.${name}: ${error.message.replace(/^rateLimit\(\): /, "")}`);
    }
  }
  for (const [name, spec] of table("analyticsEngineDatasets")) bindings[name] = api.analyticsEngine({ dataset: typeof spec?.dataset === "string" && spec.dataset !== "" ? spec.dataset : name });
  if (options.email !== undefined) {
    const list = options.email?.send_email;
    if (!Array.isArray(list)) throw new TypeError(`${where}: email must be { send_email: [{ name, destination_address?, allowed_destination_addresses? }] }`);
    for (const spec of list) {
      if (typeof spec?.name !== "string") throw new TypeError(`${where}: email.send_email: each entry needs a name`);
      try {
        bindings[spec.name] = api.sendEmail({ destinationAddress: spec.destination_address, allowedDestinationAddresses: spec.allowed_destination_addresses, allowedSenderAddresses: spec.allowed_sender_addresses });
      } catch (error) {
        throw new TypeError(`${where}: email.send_email ${spec.name}: ${error.message.replace(/^sendEmail\(\): /, "")}`);
      }
    }
  }
  for (const [name, spec] of table("secretsStoreSecrets")) {
    if (typeof spec?.secret_name !== "string") throw new TypeError(`${where}: secretsStoreSecrets.${name} must be { store_id, secret_name }`);
    bindings[name] = api.secretsStoreSecret({ secretName: spec.secret_name });
  }
  if (options.versionMetadata !== undefined) {
    if (typeof options.versionMetadata !== "string") throw new TypeError(`${where}: versionMetadata must be the binding's name`);
    bindings[options.versionMetadata] = api.versionMetadata();
  }
  for (const [name] of table("workerLoaders")) bindings[name] = api.workerLoader();
}

module.exports = { addMiniflareBindings };
