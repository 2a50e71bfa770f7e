"use strict";
// How load.js makes the smaller bindings wrangler simulates from a project's configuration
// (config-local-bindings.js): entries of its BINDING_FACTORIES table. State goes under the
// project's state folder (`<state>/workerbox/…`): Analytics Engine data points as JSON lines in
// `analytics-engine/<dataset>.jsonl`, sent mail as `.eml` files in `email/`. Secrets Store
// secrets are read where wrangler keeps them locally (`wrangler secrets-store secret create
// <store> --name …` without --remote): Miniflare's KV layout under `<state>/secrets-store/`.

const path = require("node:path");
const wranglerState = require("./wrangler-state.js");
const { wranglerKv } = require("./wrangler-kv.js");

const SECRETS_FOLDER = "secrets-store";
const SECRETS_CLASS = "miniflare-secrets-store-KVNamespaceObject";

const LOCAL_BINDING_FACTORIES = {
  ratelimits: {
    factory: "rateLimit",
    list: (b) => b.ratelimits ?? [],
    // Bindings with one namespace_id share counters (in this process), as in production.
    create: (rateLimit, entry) => rateLimit({ limit: entry.limit, period: entry.period, namespace: entry.namespace }),
  },
  analytics_engine_datasets: {
    factory: "analyticsEngine",
    list: (b) => b.analyticsEngine ?? [],
    create: (analyticsEngine, entry, state) => analyticsEngine({ dataset: entry.dataset, ...(state ? { dir: path.join(wranglerState.ownDir(state), "analytics-engine") } : {}) }),
  },
  send_email: {
    factory: "sendEmail",
    list: (b) => b.sendEmail ?? [],
    create: (sendEmail, entry, state) =>
      sendEmail({
        destinationAddress: entry.destinationAddress,
        allowedDestinationAddresses: entry.allowedDestinationAddresses,
        allowedSenderAddresses: entry.allowedSenderAddresses,
        ...(state ? { dir: path.join(wranglerState.ownDir(state), "email") } : {}),
      }),
  },
  secrets_store_secrets: {
    factory: "secretsStoreSecret",
    list: (b) => b.secretsStore ?? [],
    create: (secretsStoreSecret, entry, state) => {
      if (!state) return secretsStoreSecret({ secretName: entry.secretName });
      const { kv } = require("../api.js");
      const store = wranglerKv(kv, state, entry.storeId, SECRETS_FOLDER, SECRETS_CLASS);
      return secretsStoreSecret({ secretName: entry.secretName, get: async () => (await store.handler.get(entry.secretName))?.value?.toString("utf8") ?? null });
    },
  },
  version_metadata: {
    factory: "versionMetadata",
    list: (b) => b.versionMetadata ?? [],
    create: (versionMetadata) => versionMetadata(),
  },
  // The workers a loader loads are made in this process, as the project's own (lib/worker-loader.js).
  worker_loaders: {
    factory: "workerLoader",
    list: (b) => b.workerLoaders ?? [],
    create: (workerLoader) => workerLoader(),
  },
};

module.exports = { LOCAL_BINDING_FACTORIES, SECRETS_FOLDER, SECRETS_CLASS };
