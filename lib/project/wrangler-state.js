"use strict";
// A project's local state where `wrangler dev --local` keeps it: `<project>/.wrangler/state/v3`
// (or `<--persist-to>/v3`), laid out as Miniflare lays it out, so a project moves between wrangler
// and workerbox without losing data.
//
// - D1 is shared live: each database is Miniflare's own SQLite file,
//   `d1/miniflare-D1DatabaseObject/<id>.sqlite` (the user's tables directly, as workerbox's D1
//   store keeps them), and the D1 store opens that file.
// - KV is shared live: a namespace is Miniflare's index database
//   (`kv/miniflare-KVNamespaceObject/<id>.sqlite`) and its blob files (`kv/<namespace>/blobs/`),
//   read and written by a handler-backed kv() binding (wrangler-kv.js). KV data workerbox kept
//   in its own format before is moved in on the first start.
// - R2 is shared live: a bucket is Miniflare's index database
//   (`r2/miniflare-R2BucketObject/<id>.sqlite`) and its blob files (`r2/<bucket>/blobs/`), read
//   and written by a handler-backed storage() binding (wrangler-r2.js). R2 data workerbox kept in
//   its own format before is moved in on the first start.
// - Durable Objects are shared live: a namespace has workerd's ids (Miniflare's unique key
//   `<script>-<Class>`) and each object is workerd's own file, `do/<script>-<Class>/<id>.sqlite`,
//   with the alarm also in the namespace's `metadata.sqlite` (src/runtime/store/durable.rs). A
//   class that already has objects in workerbox's own layout (`workerbox/do/<Class>/`) stays
//   there: those ids cannot be turned into workerd's (a name cannot be had back from its id), and
//   the dev log says so.
// - Queues and workflows stay in workerbox's own format under `workerbox/`.
// State from before (`<project>/.workerbox/state`, or a --persist-to folder in the old layout) is
// copied here on the first start, so nothing kept there is lost.

const fs = require("node:fs");
const path = require("node:path");

/** A file-system-safe folder name for a namespace id or bucket name (as load.js always named them). */
function safeName(name) {
  return String(name).replace(/[^\w.-]/g, "_").slice(0, 120) || "_";
}

/**
 * The id Miniflare gives the object named `name` of its internal Durable Object class
 * `uniqueKey` (workerd's idFromName): key = sha256(uniqueKey); the first 16 bytes of
 * HMAC(key, name), then the first 16 of HMAC(key, those bytes), in hex. Its storage file is
 * `<id>.sqlite`.
 */
function miniflareObjectId(uniqueKey, name) {
  // (node:crypto loads here, on first use: it is not needed on every start.)
  const crypto = require("node:crypto");
  const key = crypto.createHash("sha256").update(uniqueKey).digest();
  const nameHmac = crypto.createHmac("sha256", key).update(name).digest().subarray(0, 16);
  const hmac = crypto.createHmac("sha256", key).update(nameHmac).digest().subarray(0, 16);
  return Buffer.concat([nameHmac, hmac]).toString("hex");
}

const D1_CLASS = "miniflare-D1DatabaseObject";

/**
 * The state folder: `<root>/.wrangler/state/v3` by default, `<persistTo>/v3` for a --persist-to
 * folder (relative to the working directory, as wrangler's), null for `persistTo: false`.
 */
function stateRoot(projectRoot, persistTo) {
  if (persistTo === false) return null;
  return persistTo === undefined || persistTo === null ? path.join(projectRoot, ".wrangler", "state", "v3") : path.join(path.resolve(persistTo), "v3");
}

/** The folder of workerbox's own stores (KV, R2, Durable Objects, queues, workflows) in `v3`. */
const ownDir = (v3) => path.join(v3, "workerbox");

/** Wrangler's local database file of a d1_databases entry (its `localId`). */
function d1File(v3, entry) {
  return path.join(v3, "d1", D1_CLASS, `${miniflareObjectId(D1_CLASS, entry.localId ?? entry.databaseId)}.sqlite`);
}

/** Makes the database file if missing (an empty file is an empty SQLite database); its path. */
function ensureD1File(v3, entry) {
  const file = d1File(v3, entry);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "", { flag: "a" });
  }
  return file;
}

/** Copies SQLite file `from` (with its -wal and -shm) to `to`. */
function copyDatabase(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  for (const suffix of ["", "-wal", "-shm"]) if (fs.existsSync(from + suffix)) fs.copyFileSync(from + suffix, to + suffix);
}

/**
 * Copies state kept in workerbox's earlier layout (`legacy`: `<root>/.workerbox/state`, or a
 * --persist-to folder with `kv/`, `d1/`, … directly in it) into `v3`, once: only when `v3`
 * has no `workerbox/` folder yet. Returns what was copied, as lines for the dev log.
 */
function importLegacy(legacy, v3, config) {
  if (!legacy || !fs.existsSync(legacy) || fs.existsSync(ownDir(v3))) return [];
  const names = ["kv", "r2", "d1", "do", "queues", "workflows"].filter((name) => fs.existsSync(path.join(legacy, name)));
  if (names.length === 0) return [];
  const copied = [];
  for (const entry of config.bindings.d1) {
    const from = path.join(legacy, "d1", safeName(entry.databaseId), "d1.sqlite3");
    const to = d1File(v3, entry);
    if (fs.existsSync(from) && !(fs.existsSync(to) && fs.statSync(to).size > 0)) {
      copyDatabase(from, to);
      copied.push(`D1 ${entry.binding}`);
    }
  }
  for (const [kind, list, oldName, newName] of [
    ["kv", config.bindings.kv, (e) => e.id, (e) => e.localId ?? e.id],
    ["r2", config.bindings.r2, (e) => e.bucket, (e) => e.localBucket ?? e.bucket],
  ]) {
    for (const entry of list) {
      const from = path.join(legacy, kind, safeName(oldName(entry)));
      if (!fs.existsSync(from)) continue;
      fs.cpSync(from, path.join(ownDir(v3), kind, safeName(newName(entry))), { recursive: true });
      copied.push(`${kind === "kv" ? "KV" : "R2"} ${entry.binding}`);
    }
  }
  for (const name of ["do", "queues", "workflows"]) {
    if (!names.includes(name)) continue;
    fs.cpSync(path.join(legacy, name), path.join(ownDir(v3), name), { recursive: true });
    copied.push({ do: "Durable Objects", queues: "queues", workflows: "workflows" }[name]);
  }
  fs.mkdirSync(ownDir(v3), { recursive: true });
  return copied.length ? [`copied the state kept in ${legacy} (${copied.join(", ")}) to ${v3}; the old folder is left as it was`] : [];
}

/**
 * Moves a KV namespace kept in workerbox's own format (`workerbox/kv/<id>/kv.sqlite3`: copied
 * from `.workerbox/state`, or written by a version that did not share KV) into the shared
 * namespace `binding`, once; how many keys. Keys expiring within 60 s are left out (KV's
 * shortest expiration).
 */
async function importOwnKv(v3, entry, binding) {
  const id = entry.localId ?? entry.id;
  const own = path.join(ownDir(v3), "kv", safeName(id));
  if (!fs.existsSync(path.join(own, "kv.sqlite3")) || fs.existsSync(path.join(own, MOVED))) return 0;
  const { kv } = require("../bindings.js");
  const from = kv({ dir: own }).namespace();
  const to = binding.namespace();
  let count = 0;
  let cursor;
  do {
    const page = await from.list({ cursor });
    for (const key of page.keys) {
      if (key.expiration !== undefined && key.expiration * 1000 <= Date.now() + 60_000) continue;
      const value = await from.get(key.name, "arrayBuffer");
      if (value === null) continue;
      await to.put(key.name, value, { ...(key.expiration !== undefined ? { expiration: key.expiration } : {}), ...(key.metadata !== undefined ? { metadata: key.metadata } : {}) });
      count++;
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  fs.writeFileSync(path.join(own, MOVED), "This namespace was moved into wrangler's layout (kv/miniflare-KVNamespaceObject) on the first start that shared it (lib/project/wrangler-state.js).\n");
  return count;
}

const MOVED = ".moved-to-wrangler-layout";

/**
 * Moves a bucket kept in workerbox's own format (`workerbox/r2/<bucket>/storage.sqlite3`: copied
 * from `.workerbox/state`, or written by a version that did not share R2) into the shared bucket
 * `binding`, once; how many objects. An object wrangler's layout already holds with a later upload
 * time is kept as it is (an older workerbox version imported wrangler's objects on first start,
 * so its copy of such a key may be stale).
 */
async function importOwnR2(v3, entry, binding) {
  const own = path.join(ownDir(v3), "r2", safeName(entry.localBucket ?? entry.bucket));
  if (!fs.existsSync(path.join(own, "storage.sqlite3")) || fs.existsSync(path.join(own, MOVED))) return 0;
  const { storage } = require("../bindings.js");
  const from = storage({ dir: own }).bucket();
  const to = binding.bucket();
  let count = 0;
  let cursor;
  do {
    const page = await from.list({ cursor, include: ["httpMetadata", "customMetadata"] });
    for (const listed of page.objects) {
      const there = await to.head(listed.key);
      if (there !== null && there.uploaded.getTime() >= listed.uploaded.getTime()) continue;
      const object = await from.get(listed.key);
      if (object === null) continue;
      await to.put(listed.key, await object.arrayBuffer(), { httpMetadata: object.httpMetadata, customMetadata: object.customMetadata });
      count++;
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  fs.writeFileSync(path.join(own, MOVED), "This bucket was moved into wrangler's layout (r2/miniflare-R2BucketObject) on the first start that shared it (lib/project/wrangler-state.js).\n");
  return count;
}

/** Whether folder `dir` holds Durable Object files in workerbox's own layout. */
function hasOwnObjects(dir) {
  try {
    return fs.readdirSync(dir).some((name) => name.endsWith(".sqlite3"));
  } catch {
    return false;
  }
}

/**
 * durableObject() options for a project's class `entry.className`: workerd's ids and files under
 * `do/` (shared with wrangler), unless the class has objects in workerbox's own layout already
 * or the config has no `name` (Miniflare's unique key needs it); then `workerbox/do/`.
 */
function durableOptions(v3, config, entry) {
  const own = path.join(ownDir(v3), "do");
  if (!config.name || hasOwnObjects(path.join(own, entry.className))) return { dir: own };
  return { dir: path.join(v3, "do"), uniqueKey: `${config.name}-${entry.className}` };
}

/** On a store's first start: workerbox's own KV and R2 data into the shared namespaces and buckets; log lines. */
async function importWranglerData(v3, config, bindings) {
  const lines = [];
  for (const entry of config.bindings.kv) {
    const binding = bindings[entry.binding];
    if (binding?.namespace === undefined) continue;
    const count = await importOwnKv(v3, entry, binding);
    if (count) lines.push(`KV ${entry.binding}: moved ${count} key(s) from workerbox's own store (${path.join(ownDir(v3), "kv")}) into wrangler's layout, now shared with wrangler`);
  }
  for (const entry of config.bindings.r2) {
    const binding = bindings[entry.binding];
    if (binding?.bucket === undefined) continue;
    const count = await importOwnR2(v3, entry, binding);
    if (count) lines.push(`R2 ${entry.binding}: moved ${count} object(s) from workerbox's own store (${path.join(ownDir(v3), "r2")}) into wrangler's layout, now shared with wrangler`);
  }
  for (const entry of config.bindings.durableObjects) {
    const binding = bindings[entry.binding];
    if (binding?.className === undefined || binding.uniqueKey !== undefined || entry.scriptName) continue;
    const folder = path.join(ownDir(v3), "do", entry.className);
    if (hasOwnObjects(folder)) {
      lines.push(`Durable Objects ${entry.binding} (${entry.className}): its objects stay in workerbox's own layout (${folder}), not shared with wrangler: their ids cannot be turned into workerd's. Move that folder away to share the class's objects with wrangler from then on (starting empty)`);
    } else if (!config.name) {
      lines.push(`Durable Objects ${entry.binding} (${entry.className}): not shared with wrangler, as the config has no "name" (workerd's ids and files are named after "<name>-<class>")`);
    }
  }
  return lines;
}

module.exports = { stateRoot, ownDir, d1File, ensureD1File, importLegacy, importWranglerData, durableOptions, miniflareObjectId, safeName };
