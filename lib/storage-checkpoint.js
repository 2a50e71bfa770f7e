"use strict";
// Test checkpoints of a worker's storage: `checkpointStorage(bindings)` marks the state of every
// in-memory KV namespace, R2-style bucket, D1 database and Durable Object namespace among a
// worker's bindings, so that a test's writes can be undone afterwards. Each store is an embedded
// SQLite database (src/runtime/store/); a checkpoint is a savepoint held open in it, so taking
// one and rolling back cost a statement per store, whatever the amount of data. workerbox/vitest's
// `isolatedStorage` is built on it (lib/vitest/isolated-storage.js).

const { DurableObjectNamespaceBinding } = require("./durable.js");
const { kBinding } = require("./bindings.js");

const EMBEDDED = new Set(["kv", "storage", "d1"]);

/** The stores of `bindings` a checkpoint covers: [{ name, checkpoint(action) }], each once. */
function checkpointable(bindings, where) {
  if (bindings === null || typeof bindings !== "object") throw new TypeError(`${where}: bindings must be an object of binding name → binding (createWorker's bindings)`);
  const seen = new Set();
  const stores = [];
  for (const [name, binding] of Object.entries(bindings)) {
    if (binding instanceof DurableObjectNamespaceBinding) {
      if (binding.dir !== undefined) throw new Error(`${where}: ${name}: the Durable Object namespace keeps its objects under ${binding.dir}; only storage in memory takes checkpoints`);
      const key = `durable\u0000${binding.className}`;
      if (seen.has(key)) continue;
      seen.add(key);
      stores.push({ name, checkpoint: (action) => binding.checkpoint(action) });
      continue;
    }
    const store = binding?.store;
    if (!EMBEDDED.has(binding?.[kBinding]) || store === null || store === undefined || typeof store.checkpoint !== "function") continue;
    if (seen.has(store)) continue;
    seen.add(store);
    stores.push({
      name,
      checkpoint: async (action) => {
        try {
          store.checkpoint(action);
        } catch (error) {
          throw new Error(`${where}: ${name}: ${error.message}`);
        }
      },
    });
  }
  return stores;
}

/**
 * Marks the state of `bindings`' in-memory stores (kv(), storage(), d1() without `dir`, and
 * durableObject() namespaces without `dir`, bound to a running worker). Resolves to
 * `{ rollback(), release() }`: `rollback()` brings every store back to the marked state (Durable
 * Objects' live instances are dropped, and objects first used since are forgotten) and keeps the
 * mark for another rollback; `release()` drops the mark, keeping the stores as they are.
 * Checkpoints nest: a later one must be released before an earlier one is used. Bindings backed by
 * handlers are not covered; a store kept in a file is an error. Rolling back while calls are
 * running in the worker is not supported: do it between tests.
 */
async function checkpointStorage(bindings) {
  const stores = checkpointable(bindings, "checkpointStorage()");
  const opened = [];
  try {
    for (const store of stores) {
      await store.checkpoint("open");
      opened.push(store);
    }
  } catch (error) {
    for (const store of opened.reverse()) await store.checkpoint("release").catch(() => {});
    throw error;
  }
  let released = false;
  const use = (what) => {
    if (released) throw new Error(`checkpointStorage(): ${what}() after release()`);
  };
  return {
    async rollback() {
      use("rollback");
      for (const store of [...stores].reverse()) await store.checkpoint("rollback");
    },
    async release() {
      use("release");
      released = true;
      for (const store of [...stores].reverse()) await store.checkpoint("release");
    },
  };
}

module.exports = { checkpointStorage };
