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
 * The pool's answer to the runner's `/isolated/<action>` requests for a runner whose worker
 * (`worker()`) has `bindings`: "open" marks the storage (checkpoints nest), "undo" waits for the
 * worker's ctx.waitUntil() work, rolls back to the latest mark and drops it.
 */
function isolatedStorageHost(bindings, worker) {
  const stack = [];
  return async (action) => {
    if (action === "open") {
      stack.push(await checkpointStorage(bindings));
      return Response.json(stack.length);
    }
    if (action === "undo") {
      const checkpoint = stack.pop();
      if (checkpoint === undefined) return new Response("isolatedStorage: no checkpoint to undo", { status: 409 });
      // What the test's events left running (ctx.waitUntil()) writes before the undo, not after
      // it into the next test, as Cloudflare's former isolatedStorage waited for it too.
      await worker()?.waitUntilSettled();
      await checkpoint.rollback();
      await checkpoint.release();
      return Response.json(stack.length);
    }
    return new Response(`isolatedStorage: unknown action ${action}`, { status: 404 });
  };
}

module.exports = { ISOLATED_STORAGE_SETUP, isolatedStorageOption, isolatedStorageHost };
