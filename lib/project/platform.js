"use strict";
// getPlatformProxy(): a project's bindings as Node objects, for framework dev servers that run in
// Node (the shape of wrangler's getPlatformProxy: `{ env, cf, ctx, caches, dispose }`).
// KV namespaces and R2 buckets are the clients `kv().namespace()` and `storage().bucket()` use
// (lib/store-client.js: a small internal worker per binding runs each call), on the very stores
// (and files under .wrangler/state/v3) the dev server's worker uses; D1 is `d1().database()`,
// queues the binding's own send()/sendBatch(), Durable Objects a worker of the project's script.
// Service bindings call their handler or worker directly; vars and secrets are plain values.

const { kBinding } = require("../bindings.js");
const { storeClient } = require("../store-client.js");
const { loadProject } = require("./load.js");

/** A service binding: `fetch()` goes to its handler, worker or object. */
function serviceStub(handler, dispatch) {
  return {
    async fetch(input, init) {
      const request = new Request(input, init);
      if (typeof handler === "function") return handler(request);
      if (typeof handler.dispatch === "function") return dispatch(handler, request);
      return handler.fetch(request);
    },
  };
}

/** A no-op Cache API, as wrangler's getPlatformProxy provides. */
function noopCaches() {
  const cache = { match: async () => undefined, put: async () => undefined, delete: async () => false };
  return { default: cache, open: async () => cache };
}

/** Request.cf values a local request could plausibly carry. */
const CF = Object.freeze({ colo: "LOCAL", country: "XX", city: "Local", continent: "XX", timezone: "UTC", asn: 0, asOrganization: "workerbox", httpProtocol: "HTTP/1.1", tlsVersion: "", clientTcpRtt: 0, requestPriority: "", edgeRequestKeepAliveStatus: 1 });

/**
 * A Durable Object namespace for Node over a namespace binding's host API: ids with toString(),
 * equals() and name, and stubs with fetch() and RPC methods (structured clones both ways).
 */
function durableNamespace(namespace) {
  const idOf = (hex, name) => ({ name, toString: () => hex, equals: (other) => String(other) === hex });
  return {
    idFromName: (name) => idOf(namespace.idFromName(name), String(name)),
    newUniqueId: () => idOf(namespace.newUniqueId(), undefined),
    idFromString: (hex) => idOf(namespace.idFromString(hex), undefined),
    get: (id) => namespace.get(String(id), id?.name ?? null),
    getByName: (name) => namespace.get(namespace.idFromName(name), String(name)),
  };
}

/**
 * Options (wrangler's names): `configPath` (a config file or project folder; default "."),
 * `environment`, `persist` (true: `<root>/.wrangler/state/v3`, false: memory, `{ path }`: that folder, as wrangler's);
 * workerbox's own: `project` (a project from loadProject() or a dev server's `.project`, to share
 * its very stores in this process), `services`.
 * Resolves to `{ env, cf, ctx, caches, dispose, unsupported, warnings }`.
 */
async function getPlatformProxy(options = {}) {
  const { createWorker, dispatch } = require("../api.js");
  let project = options.project;
  if (project === undefined) {
    const persist = options.persist ?? true;
    // As wrangler's getPlatformProxy: persist.path is the state folder itself (no v3 added).
    const persistTo = persist === false ? false : undefined;
    const statePath = typeof persist === "object" && persist !== null ? persist.path : undefined;
    project = await loadProject(options.configPath ?? ".", { env: options.environment, persistTo, statePath, services: options.services });
  }
  const env = {};
  const clients = [];
  const unsupported = [...project.unsupported];
  const durables = {};
  for (const [name, value] of Object.entries(project.bindings)) {
    const kind = value !== null && typeof value === "object" ? value[kBinding] : undefined;
    if (kind === undefined) env[name] = value;
    else if (kind === "kv" || kind === "storage") {
      const made = storeClient(value, kind, name);
      clients.push(made);
      env[name] = made.client;
    } else if (kind === "service") env[name] = serviceStub(value.handler, dispatch);
    else if (kind === "d1" && typeof value.database === "function") env[name] = value.database();
    else if (kind === "queue" && typeof value.send === "function") env[name] = { send: (...args) => value.send(...args), sendBatch: (...args) => value.sendBatch(...args) };
    // Rate limiters and Secrets Store secrets: the same counters and values the worker uses.
    else if (kind === "ratelimit") env[name] = { limit: (options) => value.limit(options) };
    else if (kind === "secrets_store_secret") env[name] = { get: () => value.get() };
    else if (kind.startsWith("durable_object:") && project.options) durables[name] = value;
    else unsupported.push({ key: kind, binding: name, reason: `the platform proxy has no Node-side ${kind} binding yet` });
  }
  // Durable Objects live in a worker of the project's own script, started for the proxy; each
  // namespace is reached through the host API on a binding of its own (lib/durable.js).
  let home = null;
  if (Object.keys(durables).length > 0) {
    const { durableObject } = require("../api.js");
    // A worker of the caller's (the node:test helper's) runs them when given.
    home = options.worker ?? (await createWorker({ ...project.options, pool: false }));
    for (const [name, value] of Object.entries(durables)) {
      env[name] = durableNamespace(durableObject(value.className, { worker: home, dir: value.dir, sql: value.sql, evictAfterMs: value.evictAfterMs, uniqueKey: value.uniqueKey }));
    }
  }
  let disposed = false;
  return {
    env,
    cf: CF,
    ctx: { waitUntil(promise) { Promise.resolve(promise).catch(() => {}); }, passThroughOnException() {}, props: {} },
    caches: noopCaches(),
    unsupported,
    warnings: project.warnings,
    async dispose() {
      if (disposed) return;
      disposed = true;
      await Promise.all(clients.map((made) => made.dispose()));
      if (home && home !== options.worker) await home.dispose();
    },
  };
}

module.exports = { getPlatformProxy };
