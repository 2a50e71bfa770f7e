"use strict";
// R2 buckets kept as Miniflare keeps them, so `workerbox dev` and `wrangler dev --local` /
// `wrangler r2 object … --local` share one bucket live: the index is
// `r2/miniflare-R2BucketObject/<object id>.sqlite` (table `_mf_objects`: key, blob_id, version,
// size, MD5 etag, upload time in milliseconds, checksums, HTTP and custom metadata as JSON text;
// a multipart upload Miniflare completed has no blob_id, its body being the blobs of its rows in
// `_mf_multipart_parts`, in part order) and each body is the file `r2/<bucket>/blobs/<blob_id>`.
// `wranglerR2()` is a handler-backed `storage()` binding on them (the index read and written
// through a D1 store opened on its file, lib/d1.js). workerbox's R2Bucket has no multipart
// uploads of its own, so it only reads the ones wrangler made (and replaces or deletes them).

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const { miniflareObjectId } = require("./wrangler-state.js");
const { miniflareIndex } = require("./wrangler-kv.js");

const R2_CLASS = "miniflare-R2BucketObject";

// Miniflare's own schema (its R2 bucket object makes the same tables when it opens the file).
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS _mf_objects (
    key TEXT PRIMARY KEY,
    blob_id TEXT,
    version TEXT NOT NULL,
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,
    uploaded INTEGER NOT NULL,
    checksums TEXT NOT NULL,
    http_metadata TEXT NOT NULL,
    custom_metadata TEXT NOT NULL
)`,
  `CREATE TABLE IF NOT EXISTS _mf_multipart_uploads (
    upload_id TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    http_metadata TEXT NOT NULL,
    custom_metadata TEXT NOT NULL,
    state TINYINT DEFAULT 0 NOT NULL
)`,
  `CREATE TABLE IF NOT EXISTS _mf_multipart_parts (
    upload_id TEXT NOT NULL REFERENCES _mf_multipart_uploads(upload_id),
    part_number INTEGER NOT NULL,
    blob_id TEXT NOT NULL,
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,
    checksum_md5 TEXT NOT NULL,
    object_key TEXT REFERENCES _mf_objects(key) DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (upload_id, part_number)
)`,
];

/** A new blob id: 32 random bytes and the 8-byte time in milliseconds, in hex (Miniflare's form). */
function blobId() {
  return crypto.randomBytes(32).toString("hex") + BigInt(Date.now()).toString(16).padStart(16, "0");
}

/** The index database file of bucket `bucketName` in state folder `v3`. */
function r2IndexFile(v3, bucketName) {
  return path.join(v3, "r2", R2_CLASS, `${miniflareObjectId(R2_CLASS, bucketName)}.sqlite`);
}

/** An object row as the storage() handler contract reads it (value filled in by the caller). */
function fromRow(row, value) {
  return {
    value,
    size: row.size,
    etag: row.etag,
    version: row.version,
    uploaded: row.uploaded,
    httpMetadata: JSON.parse(row.http_metadata),
    customMetadata: JSON.parse(row.custom_metadata),
  };
}

/**
 * A `storage()` binding (from `storage`, the API's factory) on bucket `bucketName` of state
 * folder `v3` in Miniflare's layout: what a worker writes, wrangler reads, and the other way round.
 */
function wranglerR2(storage, v3, bucketName) {
  const file = r2IndexFile(v3, bucketName);
  const blobs = path.join(v3, "r2", bucketName, "blobs");
  const db = miniflareIndex(file, blobs, SCHEMA);
  const blob = (id) => fs.promises.readFile(path.join(blobs, id));
  const unlink = (id) => fs.rm(path.join(blobs, id), { force: true }, () => {});

  /** Removes `key`'s row (and its multipart parts' rows); the blob ids it freed. */
  async function drop(database, key, row) {
    if (row === null) return [];
    if (row.blob_id !== null) return [row.blob_id];
    const { results } = await database.prepare("DELETE FROM _mf_multipart_parts WHERE object_key = ? RETURNING blob_id").bind(key).all();
    return results.map((part) => part.blob_id);
  }

  return storage({
    async get(key) {
      const database = await db();
      const row = await database.prepare("SELECT * FROM _mf_objects WHERE key = ?").bind(key).first();
      if (row === null) return null;
      let value;
      try {
        if (row.blob_id !== null) {
          value = await blob(row.blob_id);
        } else {
          // A multipart upload wrangler completed: its parts, in order, are the body.
          const { results } = await database.prepare("SELECT blob_id FROM _mf_multipart_parts WHERE object_key = ? ORDER BY part_number").bind(key).all();
          value = Buffer.concat(await Promise.all(results.map((part) => blob(part.blob_id))));
        }
      } catch (error) {
        if (error.code === "ENOENT") return null;
        throw error;
      }
      return fromRow(row, value);
    },
    async put(key, bytes, { httpMetadata = {}, customMetadata = {} } = {}) {
      const database = await db();
      const id = blobId();
      await fs.promises.writeFile(path.join(blobs, id), bytes);
      const etag = crypto.createHash("md5").update(bytes).digest("hex");
      const row = {
        key,
        blob_id: id,
        version: crypto.randomBytes(16).toString("hex"),
        size: bytes.byteLength,
        etag,
        uploaded: Date.now(),
        checksums: JSON.stringify({ md5: etag }),
        http_metadata: JSON.stringify(httpMetadata ?? {}),
        custom_metadata: JSON.stringify(customMetadata ?? {}),
      };
      const old = await database.prepare("SELECT blob_id FROM _mf_objects WHERE key = ?").bind(key).first();
      const freed = await drop(database, key, old);
      await database
        .prepare("INSERT OR REPLACE INTO _mf_objects (key, blob_id, version, size, etag, uploaded, checksums, http_metadata, custom_metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(row.key, row.blob_id, row.version, row.size, row.etag, row.uploaded, row.checksums, row.http_metadata, row.custom_metadata)
        .run();
      for (const freedId of freed) if (freedId !== id) unlink(freedId);
      return fromRow(row, bytes);
    },
    async delete(key) {
      const database = await db();
      const old = await database.prepare("DELETE FROM _mf_objects WHERE key = ? RETURNING blob_id").bind(key).first();
      for (const id of await drop(database, key, old)) unlink(id);
    },
    async list() {
      const { results } = await (await db()).prepare("SELECT * FROM _mf_objects ORDER BY key").all();
      return results.map((row) => ({ key: row.key, ...fromRow(row, undefined) }));
    },
  });
}

module.exports = { wranglerR2, r2IndexFile, R2_CLASS };
