"use strict";
// The V8 code cache of `workerbox dev` on disk: workers the dev server creates keep their
// compiled code (createWorker's `cacheDir`, see src/runtime/code_cache.rs: entries keyed by the
// source's hash, V8's version and flags, and the CPU architecture) in the per-user cache
// folder, beside the startup snapshot they are tied to, so a restart compiles nothing it
// compiled before. Every reload adds entries (a new bundle is a new source), so the folder is
// kept under a size budget: the entries used longest ago (by access time where the file system
// keeps it, else by modification time) go first.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

/** The budget for `*.v8cache` files in the folder. */
const MAX_BYTES = 128 << 20;
/** A prune brings the folder down to this share of the budget, so it does not run on every start. */
const AFTER_PRUNE = 0.75;

/**
 * The per-user cache folder (as src/runtime/isolate/snapshot.rs finds it: `WORKERBOX_CACHE_DIR`,
 * `$XDG_CACHE_HOME/workerbox` or `~/.cache/workerbox`), or null when `WORKERBOX_CACHE_DIR` is set
 * empty (keep nothing on disk) or there is no home folder.
 */
function userCacheDir() {
  const own = process.env.WORKERBOX_CACHE_DIR;
  if (own !== undefined) return own === "" ? null : path.resolve(own);
  const base = process.env.XDG_CACHE_HOME || (os.homedir() ? path.join(os.homedir(), ".cache") : null);
  return base ? path.join(base, "workerbox") : null;
}

/**
 * Removes the least recently used `*.v8cache` files of `dir` while they take more than
 * `maxBytes`, down to `AFTER_PRUNE` of it. Returns `{ files, bytes, removed, removedBytes }`.
 * Never throws (a folder that cannot be read or a file already gone is skipped).
 */
function pruneCodeCache(dir, { maxBytes = MAX_BYTES } = {}) {
  let names = [];
  try {
    names = fs.readdirSync(dir).filter((name) => name.endsWith(".v8cache"));
  } catch {
    return { files: 0, bytes: 0, removed: 0, removedBytes: 0 };
  }
  const entries = [];
  let bytes = 0;
  for (const name of names) {
    try {
      const s = fs.statSync(path.join(dir, name));
      entries.push({ file: path.join(dir, name), size: s.size, used: Math.max(s.atimeMs, s.mtimeMs) });
      bytes += s.size;
    } catch {
      // removed meanwhile
    }
  }
  const outcome = { files: entries.length, bytes, removed: 0, removedBytes: 0 };
  if (bytes <= maxBytes) return outcome;
  entries.sort((a, b) => a.used - b.used);
  for (const entry of entries) {
    if (bytes <= maxBytes * AFTER_PRUNE) break;
    try {
      fs.rmSync(entry.file, { force: true });
      bytes -= entry.size;
      outcome.removed++;
      outcome.removedBytes += entry.size;
    } catch {
      // another process's
    }
  }
  return outcome;
}

module.exports = { userCacheDir, pruneCodeCache, MAX_BYTES };
