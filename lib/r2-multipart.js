"use strict";
// R2 multipart uploads on a handler-backed `storage()` bucket (the embedded stores answer in
// Rust, src/runtime/store/multipart.rs): R2's errors (codes and messages; a worker sees
// `"<action>: <message> (<code>)"`, as workerd shows them), the checks `complete()` makes, the
// multipart etag, and `callMultipart()`, which answers a worker's multipart call through a
// bucket's optional `multipart` hooks (wrangler's shared state has them, lib/project/wrangler-r2.js).
// A bucket of plain get/put/delete/list handlers has none and says so.


const MIN_PART_SIZE = 5 * 1024 * 1024;

const R2_ERRORS = {
  NoSuchUpload: [10024, "The specified multipart upload does not exist."],
  InvalidPart: [10025, "One or more of the specified parts could not be found."],
  EntityTooSmall: [10011, "Your proposed upload is smaller than the minimum allowed object size."],
  BadUpload: [10048, "There was a problem with the multipart upload."],
  Internal: [10001, "We encountered an internal error. Please try again."],
};

/** An R2 error thrown by a multipart hook: the worker's call rejects with its message. */
class R2MultipartError extends Error {
  constructor(kind, action = "") {
    const [code, message] = R2_ERRORS[kind];
    super(action ? `${action}: ${message} (${code})` : message);
    this.kind = kind;
    this.code = code;
  }
}

/** R2's etag of a multipart object: the MD5 of the parts' MD5s (hex) as bytes, then `-<count>`. */
function multipartEtag(partMd5s) {
  // (node:crypto loads on first use, not with the runtime: ~3-5 ms of a start.)
  const hash = require("node:crypto").createHash("md5");
  for (const md5 of partMd5s) hash.update(Buffer.from(md5, "hex"));
  return `${hash.digest("hex")}-${partMd5s.length}`;
}

/**
 * The parts `complete(selected)` makes an object of, in part order, checked as R2 checks them:
 * `selected` is [{ partNumber, etag }] as the worker gave it, `uploaded` a Map from part number
 * to { size, etag, … }. Throws an R2MultipartError (without action) when they do not fit.
 */
function checkCompletion(selected, uploaded) {
  const numbers = new Set();
  for (const { partNumber } of selected) {
    if (numbers.has(partNumber)) throw new R2MultipartError("Internal");
    numbers.add(partNumber);
  }
  const parts = selected.map(({ partNumber, etag }) => {
    const part = uploaded.get(partNumber);
    if (part === undefined || part.etag !== etag) throw new R2MultipartError("InvalidPart");
    return { ...part, partNumber };
  });
  if (parts.slice(0, -1).some((part) => part.size < MIN_PART_SIZE)) throw new R2MultipartError("EntityTooSmall");
  parts.sort((a, b) => a.partNumber - b.partNumber);
  const others = parts.slice(0, -1);
  const first = others[0]?.size;
  if (others.some((part) => part.size !== first || part.size < MIN_PART_SIZE)) throw new R2MultipartError("BadUpload");
  if (others.length > 0 && parts[parts.length - 1].size > first) throw new R2MultipartError("BadUpload");
  return parts;
}

const ACTIONS = {
  createMultipartUpload: "create",
  uploadPart: "uploadPart",
  completeMultipartUpload: "complete",
  abortMultipartUpload: "abort",
};

/**
 * Answers a worker's multipart call `method` on a handler-backed bucket through `handler.multipart`
 * ({ create(key, { httpMetadata, customMetadata }) → uploadId, uploadPart(key, uploadId,
 * partNumber, bytes) → etag, complete(key, uploadId, parts) → stored object (as `get` gives one,
 * without value), abort(key, uploadId) }); `objectMeta` turns the object into the worker's
 * fields. Undefined for a method that is not a multipart one.
 */
async function callMultipart(handler, method, args, bytes, objectMeta) {
  if (!(method in ACTIONS)) return undefined;
  const hooks = handler.multipart;
  if (hooks === undefined || hooks === null) {
    throw new Error(`R2 ${method}: this bucket is a storage({ get, put, delete, list }) of your handlers, which take whole objects: multipart uploads need storage() or storage({ dir }) (or wrangler's shared state)`);
  }
  try {
    switch (method) {
      case "createMultipartUpload": {
        const uploadId = await hooks.create(args.key, { httpMetadata: args.httpMetadata ?? {}, customMetadata: args.customMetadata ?? {} });
        return { json: JSON.stringify({ uploadId }) };
      }
      case "uploadPart": {
        const etag = await hooks.uploadPart(args.key, args.uploadId, args.partNumber, bytes ?? Buffer.alloc(0));
        return { json: JSON.stringify({ partNumber: args.partNumber, etag }) };
      }
      case "completeMultipartUpload": {
        const object = await hooks.complete(args.key, args.uploadId, args.parts);
        return { json: JSON.stringify(objectMeta(args.key, object)) };
      }
      case "abortMultipartUpload":
        await hooks.abort(args.key, args.uploadId);
        return { json: "null" };
    }
  } catch (error) {
    if (error instanceof R2MultipartError && !error.message.startsWith(`${method}:`)) throw new R2MultipartError(error.kind, method);
    throw error;
  }
}

module.exports = { MIN_PART_SIZE, R2MultipartError, multipartEtag, checkCompletion, callMultipart };
