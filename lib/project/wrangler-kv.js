"use strict";
// KV namespaces kept as Miniflare keeps them, so `workerbox dev` and `wrangler dev --local` /
// `wrangler kv key … --local` share one namespace live: the index is
// `kv/miniflare-KVNamespaceObject/<object id>.sqlite` (table `_mf_entries`: key, blob_id,
// expiration in milliseconds, metadata as JSON text) and each value is the file
// `kv/<namespace id>/blobs/<blob_id>` (blob ids: 32 random bytes then the time in milliseconds,
// in hex, as Miniflare makes them). `wranglerKv()` is a handler-backed `kv()` binding on them;
// the index is read and written through a D1 store opened on its file (lib/d1.js).

const fs = require("node:fs");
const path = require("node:path");
const { miniflareObjectId } = require("./wrangler-state.js");

const KV_CLASS = "miniflare-KVNamespaceObject";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS _mf_entries (
  key TEXT PRIMARY KEY,
  blob_id TEXT NOT NULL,
  expiration INTEGER,
  metadata TEXT
)`,
  "CREATE INDEX IF NOT EXISTS _mf_entries_expiration_idx ON _mf_entries(expiration)",
];

/** A new blob id: 32 random bytes and the 8-byte time in milliseconds, in hex. */
function blobId() {
  return require("node:crypto").randomBytes(32).toString("hex") + BigInt(Date.now()).toString(16).padStart(16, "0");
}

/** Removes blob file `file`, if it is still there. */
function unlink(file) {
  fs.rm(file, { force: true }, () => {});
}

/**
 * Miniflare's SQLite index file `at` (tables made by `schema` if missing) beside its `blobs`
 * folder, opened as a D1 database on first use: a function resolving to it. `at` may be a
 * function giving the file's path, asked then.
 */
function miniflareIndex(at, blobs, schema) {
  let opened = null;
  return () =>
    (opened ??= (async () => {
      const file = typeof at === "function" ? at() : at;
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.mkdirSync(blobs, { recursive: true });
      if (!fs.existsSync(file)) fs.writeFileSync(file, "", { flag: "a" });
      const { d1 } = require("../d1.js");
      const database = d1({ dir: file }).database();
      for (const sql of schema) await database.prepare(sql).run();
      return database;
    })());
}

/**
 * A `kv()` binding (from `kv`, the API's factory) on namespace `namespaceId` of state folder
 * `v3` in Miniflare's layout: what a worker writes, wrangler reads, and the other way round.
 * `folder` and `uniqueKey`: where Miniflare keeps another store built on its KV object (the
 * Secrets Store: "secrets-store", "miniflare-secrets-store-KVNamespaceObject").
 */
function wranglerKv(kv, v3, namespaceId, folder = "kv", uniqueKey = KV_CLASS) {
  // The index's Miniflare object id, made on first use: its HMACs load node:crypto, which a start
  // that never reads the namespace need not pay for.
  const file = () => path.join(v3, folder, uniqueKey, `${miniflareObjectId(uniqueKey, namespaceId)}.sqlite`);
  const blobs = path.join(v3, folder, namespaceId, "blobs");
  const db = miniflareIndex(file, blobs, SCHEMA);
  const live = (row, now = Date.now()) => row !== null && (row.expiration === null || row.expiration > now);

  return kv({
    async get(key) {
      const row = await (await db()).prepare("SELECT blob_id, expiration, metadata FROM _mf_entries WHERE key = ?").bind(key).first();
      if (!live(row)) return null;
      let value;
      try {
        value = await fs.promises.readFile(path.join(blobs, row.blob_id));
      } catch (error) {
        if (error.code === "ENOENT") return null;
        throw error;
      }
      return { value, metadata: row.metadata === null ? null : JSON.parse(row.metadata), expiration: row.expiration === null ? null : Math.floor(row.expiration / 1000) };
    },
    async put(key, bytes, { expiration, metadata } = {}) {
      const database = await db();
      const id = blobId();
      await fs.promises.writeFile(path.join(blobs, id), bytes);
      const old = await database.prepare("SELECT blob_id FROM _mf_entries WHERE key = ?").bind(key).first();
      await database
        .prepare("INSERT OR REPLACE INTO _mf_entries (key, blob_id, expiration, metadata) VALUES (?, ?, ?, ?)")
        .bind(key, id, expiration === undefined || expiration === null ? null : expiration * 1000, metadata === undefined || metadata === null ? null : JSON.stringify(metadata))
        .run();
      if (old !== null && old.blob_id !== id) unlink(path.join(blobs, old.blob_id));
    },
    async delete(key) {
      const database = await db();
      const old = await database.prepare("DELETE FROM _mf_entries WHERE key = ? RETURNING blob_id").bind(key).first();
      if (old !== null) unlink(path.join(blobs, old.blob_id));
    },
    async list({ prefix = "", limit = 1000, cursor } = {}) {
      const after = cursor ? Buffer.from(cursor, "base64url").toString("utf8") : "";
      const { results } = await (await db())
        .prepare("SELECT key, expiration, metadata FROM _mf_entries WHERE key > ? AND substr(key, 1, length(?)) = ? AND (expiration IS NULL OR expiration > ?) ORDER BY key LIMIT ?")
        .bind(after, prefix, prefix, Date.now(), limit + 1)
        .all();
      const page = results.slice(0, limit);
      const keys = page.map((row) => {
        const entry = { name: row.key };
        if (row.expiration !== null) entry.expiration = Math.floor(row.expiration / 1000);
        if (row.metadata !== null) entry.metadata = JSON.parse(row.metadata);
        return entry;
      });
      const complete = results.length <= limit;
      return complete ? { keys, list_complete: true } : { keys, list_complete: false, cursor: Buffer.from(page[page.length - 1].key, "utf8").toString("base64url") };
    },
  });
}

module.exports = { wranglerKv, miniflareIndex, KV_CLASS };
