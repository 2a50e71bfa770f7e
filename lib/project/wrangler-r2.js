"use strict";
// R2 buckets kept as Miniflare keeps them, so `workerbox dev` and `wrangler dev --local` /
// `wrangler r2 object … --local` share one bucket live: the index is
// `r2/miniflare-R2BucketObject/<object id>.sqlite` (table `_mf_objects`: key, blob_id, version,
// size, MD5 etag, upload time in milliseconds, checksums, HTTP and custom metadata as JSON text;
// a multipart upload Miniflare completed has no blob_id, its body being the blobs of its rows in
// `_mf_multipart_parts`, in part order) and each body is the file `r2/<bucket>/blobs/<blob_id>`.
// `wranglerR2()` is a handler-backed `storage()` binding on them (the index read and written
// through a D1 store opened on its file, lib/d1.js). Multipart uploads are kept as Miniflare
// keeps them (`_mf_multipart_uploads`, a blob per part in `_mf_multipart_parts`, the completed
// object a row without blob_id), so an upload started in one tool can be completed in the other.

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const { miniflareObjectId } = require("./wrangler-state.js");
const { miniflareIndex } = require("./wrangler-kv.js");
const { R2MultipartError, multipartEtag, checkCompletion } = require("../r2-multipart.js");

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

/** An opaque id as Miniflare makes upload ids and part etags: 128 random bytes, base64url. */
function opaqueId() {
  return crypto.randomBytes(128).toString("base64url");
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
    // Miniflare's: those a put was given (SHA-1…SHA-512, hex); the MD5 is the etag.
    checksums: JSON.parse(row.checksums || "{}"),
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

  /** The state of upload `uploadId` of `key` (0 in progress, 1 completed, 2 aborted), or null. */
  async function uploadRow(database, key, uploadId) {
    return database.prepare("SELECT http_metadata, custom_metadata, state FROM _mf_multipart_uploads WHERE upload_id = ? AND key = ?").bind(uploadId, key).first();
  }

  const multipart = {
    async create(key, { httpMetadata, customMetadata }) {
      const uploadId = opaqueId();
      await (await db())
        .prepare("INSERT INTO _mf_multipart_uploads (upload_id, key, http_metadata, custom_metadata) VALUES (?, ?, ?, ?)")
        .bind(uploadId, key, JSON.stringify(httpMetadata ?? {}), JSON.stringify(customMetadata ?? {}))
        .run();
      return uploadId;
    },
    async uploadPart(key, uploadId, partNumber, bytes) {
      const database = await db();
      if ((await uploadRow(database, key, uploadId))?.state !== 0) throw new R2MultipartError("NoSuchUpload");
      const id = blobId();
      await fs.promises.writeFile(path.join(blobs, id), bytes);
      const etag = opaqueId();
      const md5 = crypto.createHash("md5").update(bytes).digest("hex");
      const old = await database.prepare("SELECT blob_id FROM _mf_multipart_parts WHERE upload_id = ? AND part_number = ?").bind(uploadId, partNumber).first();
      await database
        .prepare("INSERT OR REPLACE INTO _mf_multipart_parts (upload_id, part_number, blob_id, size, etag, checksum_md5) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(uploadId, partNumber, id, bytes.byteLength, etag, md5)
        .run();
      if (old !== null) unlink(old.blob_id);
      return etag;
    },
    async complete(key, uploadId, selected) {
      const database = await db();
      const upload = await uploadRow(database, key, uploadId);
      if (upload === null || upload.state !== 0) throw new R2MultipartError("NoSuchUpload");
      const { results } = await database.prepare("SELECT part_number, size, etag, checksum_md5 FROM _mf_multipart_parts WHERE upload_id = ?").bind(uploadId).all();
      const parts = checkCompletion(selected, new Map(results.map((row) => [row.part_number, row])));
      const old = await database.prepare("SELECT blob_id FROM _mf_objects WHERE key = ?").bind(key).first();
      const freed = await drop(database, key, old);
      const row = {
        key,
        blob_id: null,
        version: crypto.randomBytes(16).toString("hex"),
        size: parts.reduce((sum, part) => sum + part.size, 0),
        etag: multipartEtag(parts.map((part) => part.checksum_md5)),
        uploaded: Date.now(),
        checksums: "{}",
        http_metadata: upload.http_metadata,
        custom_metadata: upload.custom_metadata,
      };
      await database
        .prepare("INSERT OR REPLACE INTO _mf_objects (key, blob_id, version, size, etag, uploaded, checksums, http_metadata, custom_metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(row.key, row.blob_id, row.version, row.size, row.etag, row.uploaded, row.checksums, row.http_metadata, row.custom_metadata)
        .run();
      for (const part of parts) await database.prepare("UPDATE _mf_multipart_parts SET object_key = ? WHERE upload_id = ? AND part_number = ?").bind(key, uploadId, part.partNumber).run();
      const unused = await database.prepare("DELETE FROM _mf_multipart_parts WHERE upload_id = ? AND object_key IS NULL RETURNING blob_id").bind(uploadId).all();
      await database.prepare("UPDATE _mf_multipart_uploads SET state = 1 WHERE upload_id = ?").bind(uploadId).run();
      for (const id of [...freed, ...unused.results.map((part) => part.blob_id)]) unlink(id);
      return fromRow(row, undefined);
    },
    async abort(key, uploadId) {
      const database = await db();
      const upload = await uploadRow(database, key, uploadId);
      if (upload === null) throw new R2MultipartError("NoSuchUpload");
      if (upload.state !== 0) return;
      const { results } = await database.prepare("DELETE FROM _mf_multipart_parts WHERE upload_id = ? RETURNING blob_id").bind(uploadId).all();
      await database.prepare("UPDATE _mf_multipart_uploads SET state = 2 WHERE upload_id = ?").bind(uploadId).run();
      for (const part of results) unlink(part.blob_id);
    },
  };

  return storage({
    multipart,
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
    async put(key, bytes, { httpMetadata = {}, customMetadata = {}, checksums = {} } = {}) {
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
        checksums: JSON.stringify({ ...checksums, md5: etag }),
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
