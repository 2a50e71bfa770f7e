// workerbox/vitest's `isolatedStorage: true`: each test starts from the storage the file's
// `beforeAll` hooks left, and its writes (KV, R2, D1, Durable Objects) are undone after it. The
// setup file lib/vitest/isolated-storage-setup.mjs (first of the project's setup files) asks the
// pool from inside the isolate, before and after each test; this file answers, with
// checkpointStorage() (lib/storage-checkpoint.js: a savepoint held open in each in-memory store).
"use strict";

const path = require("node:path");
const { checkpointStorage } = require("../storage-checkpoint.js");

/** The setup file that asks for a checkpoint before each test and a rollback after it. */
const ISOLATED_STORAGE_SETUP = path.join(__dirname, "isolated-storage-setup.mjs");

/** `isolatedStorage` of the pool options: a boolean, false when left out. */
function isolatedStorageOption(options) {
  const value = options?.isolatedStorage;
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw new TypeError(`workerbox/vitest: cloudflareTest({ isolatedStorage }) must be a boolean, got ${typeof value}`);
  return value;
}

/**
 * The pool's answer to the runner's `isolated` calls (on its connection, lib/vitest/pool.js) for a
 * runner whose worker (`worker()`) has `bindings`: "open" marks the storage (marks nest), "undo"
 * waits for the worker's ctx.waitUntil() work and rolls back to the latest mark. Each answers with
 * how many marks are left open.
 *
 * An undone mark is kept open as a spare until the next call: the storage is then as it was when
 * the mark was made, so an "open" coming next (the next test's) takes the spare as its mark
 * instead of making one (a savepoint per store and a call into each Durable Object namespace's
 * worker saved twice a test). Any other call first releases the spare, so that the marks below
 * it are used in their own order.
 */
function isolatedStorageHost(bindings, worker) {
  const stack = [];
  let spare = null;
  return async (action) => {
    if (action === "open") {
      stack.push(spare ?? (await checkpointStorage(bindings)));
      spare = null;
      return stack.length;
    }
    if (action === "undo") {
      if (spare !== null) {
        const kept = spare;
        spare = null;
        await kept.release();
      }
      const checkpoint = stack.pop();
      if (checkpoint === undefined) throw new Error("isolatedStorage: no checkpoint to undo");
      // What the test's events left running (ctx.waitUntil()) writes before the undo, not after
      // it into the next test, as Cloudflare's former isolatedStorage waited for it too.
      await worker()?.waitUntilSettled();
      await checkpoint.rollback();
      spare = checkpoint;
      return stack.length;
    }
    throw new Error(`isolatedStorage: unknown action ${action}`);
  };
}

module.exports = { ISOLATED_STORAGE_SETUP, isolatedStorageOption, isolatedStorageHost };
